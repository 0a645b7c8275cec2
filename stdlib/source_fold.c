/* source_fold.c: the values a printout of IR as Mist source knows, and
 * J of a known function folded to its transform (source.c has the
 * overview).
 *
 * A derivative's graphs call J on function values: grad(f)'s graph on
 * its captured f, a transform on the global functions it calls and on
 * the rules.  When the printout is of a function value, many of those
 * values are known: the root's captured values, constants, the current
 * value of a module's global.  J of a known function is then folded:
 * its value, the closure of the transform graph, is printed as the name
 * of that graph's def, and the graph joins the printout (at top level),
 * its own captured values known in turn.  So the printout holds the
 * derived program itself, not a call that makes it at run time.  A
 * captured value of such a graph is printed in place as a literal or a
 * def's name where it has one, else by name with a comment. */
#include <string.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "stdlib/source_int.h"
#include "lang/gc.h"

Known *src_known(Src *s, const IrNode *x) {
  int i = ir_map_int(&s->known, x, -1);
  return i < 0 ? NULL : &s->kv[i];
}

static void set_known(Src *s, IrNode *x, Value v, bool subst) {
  if (s->nkv == s->capkv) {
    s->capkv = s->capkv ? 2 * s->capkv : 32;
    s->kv = lang_realloc(s->kv, s->capkv * sizeof *s->kv);
  }
  s->kv[s->nkv] = (Known){v, subst};
  ir_map_set_int(&s->known, x, s->nkv++);
}

static bool same_value(Value a, Value b) {
  if (a.tag != b.tag) return false;
  switch (a.tag) {
  case V_OBJ: return a.o == b.o;
  case V_INT: return a.i == b.i;
  case V_FLOAT: return memcmp(&a.f, &b.f, sizeof a.f) == 0;
  case V_BOOL: return a.b == b.b;
  default: return true;
  }
}

/* Whether const_text writes v as a literal that makes it again. */
static bool literal(Value v, int depth) {
  if (depth > 32) return false;
  switch (v.tag) {
  case V_NONE: case V_BOOL: case V_INT: case V_FLOAT: return true;
  case V_OBJ:
    switch (v.o->kind) {
    case O_STR: case O_RANGE: return true;
    case O_TUPLE:
    case O_LIST:
      for (size_t i = 0; i < AS_SEQ(v)->len; i++)
        if (!literal(AS_SEQ(v)->items[i], depth + 1)) return false;
      return true;
    case O_DICT:
      for (size_t i = 0; i < AS_DICT(v)->len; i++)
        if (!literal(AS_DICT(v)->entries[i].value, depth + 1)) return false;
      return true;
    default: return false;
    }
  default: return false;
  }
}

/* What x is known to be when the printout runs. */
static bool value_of(Src *s, IrNode *x, Value *v) {
  x = src_resolve(x);
  if (x->kind == IR_CONST) {
    *v = x->value;
    return !v_is_obj(x->value, O_GRAPH);
  }
  Known *k = src_known(s, x);
  if (k) {
    *v = k->v;
    return true;
  }
  ObjModule *m = x->kind == IR_APPLY ? x->graph->module : NULL;
  Value slot;
  if (m && m->names && src_is_prim(x, IR_P_GLOBAL) && src_const_str(x->in[1]) &&
      lang_dict_get(m->names, AS_STR(x->in[1]->value), &slot) && slot.tag == V_INT && slot.i >= 0 &&
      (size_t)slot.i < m->nslots && m->slots[slot.i].tag != V_UNBOUND) {
    *v = m->slots[slot.i];   /* a global as it is now */
    return true;
  }
  return false;
}

/* A captured value of a printed def (node x): in place where it can be. */
static void know_captured(Src *s, IrNode *x, Value v, int depth) {
  if (x->kind == IR_CONST || src_known(s, x)) return;
  bool fn = v_is_obj(v, O_FUNC) || v_is_obj(v, O_BUILTIN);
  set_known(s, x, v, fn ? src_materialize(s, v, depth + 1) : literal(v, 0));
}

/* Whether function value v can be printed as a name that means it,
 * adding its graph to the printout where it must be. */
bool src_materialize(Src *s, Value v, int depth) {
  if (src_value_name(s, v)) return true;
  if (!v_is_obj(v, O_FUNC) || depth > 64) return false;
  ObjFunc *f = AS_FUNC(v);
  IrGraph *h = f->graph;
  if (ir_map_int(&s->mat, f, -1) >= 0) return true;
  if (src_top_def(h)) return true;   /* a global of its module, by name */
  if (h->flags & IRG_MODULE) return false;
  /* its def must be at top level, and one def is one closure */
  if (h->parent && src_ginfo(s, h->parent)) return false;
  ir_free_vars(h);
  if (f->nenv < h->nfv || lang_func_ndefaults(f) < h->ndefaults) return false;
  for (int i = 0; i < h->nfv; i++) {
    Known *k = src_known(s, h->fv[i]);
    if (k && !same_value(k->v, f->env[i])) return false;
  }
  ir_map_set_int(&s->mat, f, 1);
  if (h == s->root) return true;
  for (int i = 0; i < h->nfv; i++) know_captured(s, h->fv[i], f->env[i], depth);
  for (int i = 0; i < h->ndefaults; i++)
    if (h->defaults[i]) know_captured(s, h->defaults[i], f->x->defaults[f->x->ndefaults - h->ndefaults + i], depth);
  src_add_graph(s, h);
  return true;
}

/* Whether node n is only ever called (a callee), never passed on as a
 * value: only then may its J be folded, since a value passed on may
 * reach code that needs the transform's record of what it transforms
 * (grad inside a function being differentiated), which a def printed
 * and run again does not have; there J stays a call. */
static bool only_called(Src *s, IrNode *n) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++)
      for (int j = 1; j < g->nodes[i]->nin; j++)
        if (src_resolve(g->nodes[i]->in[j]) == n) return false;
    if (g->ret && src_resolve(g->ret) == n) return false;
    for (int d = 0; d < g->ndefaults; d++)
      if (g->defaults[d] && src_resolve(g->defaults[d]) == n) return false;
  }
  return true;
}

/* Fold every J of a known function in the printout, until none is
 * left: the graphs folding adds may hold more. */
void src_fold(Src *s) {
  /* what a transformation's graph captured (grad(f)'s f, in a graph
   * that only holds it) is written in place where it has a name or a
   * literal: f there is no name of the program's */
  IrGraph *p = s->root->parent;
  bool made = p && p->flags == 0 && !p->nnodes;
  for (int i = 0; i < s->nenv && i < s->root->nfv; i++) {
    Value v = s->env[i];
    bool named = src_value_name(s, v) || (v_is_obj(v, O_FUNC) && src_top_def(AS_FUNC(v)->graph));
    set_known(s, s->root->fv[i], v, made && (named || literal(v, 0)));
  }
  if (!s->vm->ad) return;
  for (bool more = true; more;) {
    more = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      IrGraph *g = s->gs[gx].g;
      for (int i = 0; i < g->nnodes; i++) {
        IrNode *n = g->nodes[i];
        Value v, jv;
        bool masked = src_is_prim(n, IR_P_JMASK);
        if (!(src_is_prim(n, IR_P_J) || masked) || src_known(s, n) || !value_of(s, n->in[1], &v) ||
            !v_is_obj(v, O_FUNC) || !only_called(s, n))
          continue;
        /* grad's J(f) for its argnums only (jmask): that transform */
        Value mask = masked && n->in[2]->kind == IR_CONST ? n->in[2]->value : v_none();
        if (masked && mask.tag != V_INT) continue;
        if (masked ? !s->vm->ad->Jmask(s->vm, v, mask.i, false, &jv) : !s->vm->ad->J(s->vm, v, &jv)) {
          lang_error_clear(s->vm);   /* left as a call of J, which raises it when run */
          continue;
        }
        if (!src_materialize(s, jv, 0)) continue;
        set_known(s, n, jv, true);
        s->derived = more = true;
      }
    }
  }
}
