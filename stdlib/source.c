/* source.c: IR graphs printed back as Mist source that parses, runs
 * and gives the same results (docs/ir.md, "As Mist source"), so graphs
 * that no parser made -- derivatives above all -- can be read and run.
 *
 * The printout of a function F is one `def F(...)`.  Each scheduled
 * application is one statement `name = EXPR`, in schedule order, with a
 * primitive written as the operator or call it means and one without a
 * spelling as a call of its builtin (`_gadd`: autodiff/names.c), a
 * value that is a builtin (the continuation kid) by that builtin's name.
 * Every node gets one identifier,
 * unique in the whole printout (its source variable's name, `acc_2` for
 * a repeat, `t1`, `t2`... for nameless nodes), so a name never means
 * two things; the only exception is a parameter of a def, which keeps
 * its source name where that is safe, so keyword calls still work.
 *
 * Control flow is structured back: switch(c, @a, @b)() ending a graph
 * is an if/else (or elif) with both branches in place; a join is
 * printed after its if, its parameters assigned in the branches; a
 * graph calling itself is a `while` loop entered where it is called,
 * with continue and break (the code after it following the while), so
 * loops run in constant stack as in the IR.  A value computed only to
 * be passed on to such a parameter is assigned to it directly where
 * that is safe (out of SSA: `s = s + x`).  Every other graph is a
 * nested def, placed just before the first statement that needs it,
 * where every node it uses as a free variable is assigned (closures
 * capture values).  Small shapes are folded back too: a lazy
 * `(a() if c else b())`, `assert c, m`, `a, b = x`, a slice in its
 * subscript, a format in its f-string, a condition in its `if`, the
 * output in its `return`; each only where moving it past what lies
 * between cannot change what runs.
 *
 * Printed as a function value (std_print_source_value), the printout
 * also knows the values the function captured, so J of a function
 * whose value is known is folded into the function's transform, printed
 * as a top-level def beside the root: show_source(grad(f)) is the whole
 * derived program (source_fold.c).  Globals of another module (the
 * rules' ad_rules) are read through that module, imported at the top.
 *
 * This file holds the pipeline (print_root) and the analysis, which
 * runs once over the printout: uses, then each node's role (its own
 * statement, or printed inside another's), then how each graph is
 * printed (structure), dead parameters and coalescing.  The known
 * values are found and J folded before it (source_fold.c), names are
 * given after it (source_names.c), and the printer then walks the
 * graphs from the root (source_emit.c).  The four share the printout's
 * tables through source_int.h.  Apart from making the transforms it
 * folds in, the printout only reads the graphs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "stdlib/source.h"
#include "stdlib/source_int.h"
#include "lang/gc.h"

/* ---- the printout's graphs and nodes ---- */

GInfo *src_ginfo(Src *s, const IrGraph *g) {
  int i = g ? ir_map_int(&s->gmap, g, -1) : -1;
  return i < 0 ? NULL : &s->gs[i];
}

Info *src_info(Src *s, IrNode *x) {
  int i = ir_map_int(&s->nmap, x, -1);
  if (i >= 0) return s->infos[i];
  if (s->ninfos == s->capinfos) {
    s->capinfos = s->capinfos ? 2 * s->capinfos : 64;
    s->infos = lang_realloc(s->infos, s->capinfos * sizeof *s->infos);
  }
  Info *in = lang_alloc(sizeof *in);
  s->infos[s->ninfos] = in;
  in->node = x;
  in->pos = -1;
  in->outer = x->kind != IR_CONST && !src_ginfo(s, x->graph);
  ir_map_set_int(&s->nmap, x, s->ninfos++);
  return in;
}

int src_prim_of(const IrNode *n) { return ir_node_prim(n); }

/* n applies primitive p with its table's arity. */
bool src_is_prim(const IrNode *n, IrPrim p) {
  if (src_prim_of(n) != (int)p) return false;
  return ir_prims[p].arity < 0 || n->nin == ir_prims[p].arity + 1;
}

/* The graph a constant holds: a graph, or a closure that captured
 * nothing (a transformation may put one in), which is the same. */
IrGraph *src_graph_const(const IrNode *x) {
  if (x->kind == IR_CONST && v_is_obj(x->value, O_FUNC) && AS_FUNC(x->value)->nenv == 0 &&
      lang_func_ndefaults(AS_FUNC(x->value)) == 0)
    return AS_FUNC(x->value)->graph;
  return ir_node_graph(x);
}

IrGraph *src_const_graph(Src *s, const IrNode *x) {
  IrGraph *h = src_graph_const(x);
  return h && src_ginfo(s, h) ? h : NULL;
}

bool src_const_int(const IrNode *x, int64_t *v) {
  if (x->kind != IR_CONST || x->value.tag != V_INT) return false;
  *v = x->value.i;
  return true;
}

bool src_const_str(const IrNode *x) { return x->kind == IR_CONST && v_is_obj(x->value, O_STR); }

/* check_bound(x, name) and set_global(name, x) are x. */
IrNode *src_resolve(IrNode *x) {
  for (;;) {
    if (src_is_prim(x, IR_P_CHECK_BOUND)) x = x->in[1];
    else if (src_is_prim(x, IR_P_SET_GLOBAL)) x = x->in[2];
    else return x;
  }
}

/* Whether a graph referred to by constant is printed with root: any but
 * a module's own graph and its top-level defs, which are called by name
 * (as globals).  So nested graphs, synthetic ones, lambdas bound at top
 * level and the graphs a transformation made are printed. */
static bool belongs(IrGraph *root, IrGraph *h) {
  if (!h || (h->flags & IRG_MODULE)) return false;
  bool top_def = h->parent && (h->parent->flags & IRG_MODULE) && (h->flags & IRG_FUNCTION) &&
                 src_is_ident(h->name->data);
  return !top_def || ir_is_ancestor(root, h);
}

/* A top-level def of a module: printed by name, as that module's global. */
bool src_top_def(const IrGraph *h) {
  return h->parent && (h->parent->flags & IRG_MODULE) && (h->flags & IRG_FUNCTION) && src_is_ident(h->name->data);
}

bool src_call_like(const IrNode *n) {
  int p = src_prim_of(n);
  return p < 0 || p == IR_P_CALL_KW || p == IR_P_CALL_METHOD;
}

void src_add_graph(Src *s, IrGraph *g) {
  if (src_ginfo(s, g)) return;
  s->gs = lang_realloc(s->gs, (s->ngraphs + 1) * sizeof *s->gs);
  memset(&s->gs[s->ngraphs], 0, sizeof *s->gs);
  s->gs[s->ngraphs].g = g;
  ir_map_set_int(&s->gmap, g, s->ngraphs++);
  for (int i = 0; i < g->nnodes; i++)
    for (int j = 0; j < g->nodes[i]->nin; j++) {
      IrNode *x = g->nodes[i]->in[j];
      IrGraph *h = src_graph_const(x);
      if (belongs(s->root, h) && !(x->kind == IR_CONST && src_value_name(s, x->value))) src_add_graph(s, h);
      else if (!h && x->kind == IR_CONST && v_is_obj(x->value, O_FUNC)) src_materialize(s, x->value, 0);
    }
  if (g->ret && belongs(s->root, src_graph_const(g->ret)) && !src_value_name(s, g->ret->value.tag == V_OBJ && g->ret->kind == IR_CONST ? g->ret->value : v_none()))
    src_add_graph(s, src_graph_const(g->ret));
  for (int d = 0; d < g->ndefaults; d++) {
    IrGraph *h = g->defaults[d] ? src_graph_const(g->defaults[d]) : NULL;
    if (h && h->parent && ir_is_ancestor(h->parent, g)) src_add_graph(s, h);
  }
}

/* ---- the analysis ---- */

static void add_use(Src *s, IrNode *x, IrNode *user, int pos, IrGraph *where) {
  if (!x) return;
  if (x->kind == IR_CONST) {
    GInfo *gi = src_ginfo(s, src_graph_const(x));
    if (gi) gi->refs++;
    return;
  }
  Info *in = src_info(s, x);
  in->uses = lang_realloc(in->uses, (in->nuses + 1) * sizeof *in->uses);
  in->uses[in->nuses++] = (Use){user, pos, where};
}

static void count_uses(Src *s) {
  for (int gi = 0; gi < s->ngraphs; gi++) {
    IrGraph *g = s->gs[gi].g;
    GInfo *pg = src_ginfo(s, g->parent);
    if (pg) pg->nchildren++;
    for (int i = 0; i < g->nparams; i++) src_info(s, g->params[i]);
    for (int i = 0; i < g->nnodes; i++) src_info(s, g->nodes[i])->pos = i;
  }
  for (int gi = 0; gi < s->ngraphs; gi++) {
    IrGraph *g = s->gs[gi].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *n = g->nodes[i];
      bool folded = src_known(s, n) != NULL;
      for (int j = 0; j < n->nin; j++) {
        if (!folded) add_use(s, n->in[j], n, j, g);
        else if (n->in[j]->kind != IR_CONST) src_info(s, n->in[j])->fed = true;
      }
    }
    add_use(s, g->ret, NULL, 0, g);
    for (int d = 0; d < g->ndefaults; d++) add_use(s, g->defaults[d], NULL, -1, g);
  }
  /* a folded J is its value; what only it read is not needed */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    if (in->outer || n->kind != IR_APPLY) continue;
    int p = src_prim_of(n);
    if (src_known(s, n)) in->role = R_KNOWN;
    else if (in->fed && in->nuses == 0 && p >= 0 && (ir_prims[p].flags & P_PURE)) in->role = R_DROP;
  }
}

static bool index_use(const Use *u) {
  return u->user && u->pos == 2 && (src_is_prim(u->user, IR_P_GETITEM) || src_is_prim(u->user, IR_P_SETITEM));
}

/* A graph that may be printed in place of its one use: a branch with no
 * parameters and no defs of its own. */
static bool placeable(Src *s, const IrNode *x, IrGraph *owner) {
  IrGraph *h = src_const_graph(s, x);
  if (!h) return false;
  GInfo *gi = src_ginfo(s, h);
  return gi->refs == 1 && h->nparams == 0 && h->ndefaults == 0 && !(h->flags & IRG_FUNCTION) &&
         h->parent == owner && !gi->in_place && !gi->trivial;
}

/* A branch that only returns a value: written as that value. */
static bool returns_only(Src *s, const IrNode *x, IrGraph *owner) {
  if (!placeable(s, x, owner)) return false;
  IrGraph *h = src_const_graph(s, x);
  return h->nnodes == 0 && src_ginfo(s, h)->nchildren == 0;
}

/* What a condition may be written as in place: any one expression that
 * binds tighter than a conditional. */
static bool cond_spelled(const IrNode *c) {
  int p = src_prim_of(c);
  if (p < 0) return true;
  switch (p) {
  case IR_P_SWITCH: case IR_P_UNPACK: case IR_P_SETITEM: case IR_P_SLICE: case IR_P_IMPORT:
  case IR_P_ASSERT_FAIL: case IR_P_SET_GLOBAL: case IR_P_CHECK_BOUND: case IR_P_FORMAT:
  case IR_P_CONCAT_STR: case IR_P_ITER_SEQ:
    return false;
  default: return p < IR_NPRIMS && (ir_prims[p].arity < 0 || c->nin == ir_prims[p].arity + 1);
  }
}

static void find_roles(Src *s) {
  /* aliases, slices and tuples of indices */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (in->outer || in->node->kind != IR_APPLY) continue;
    if (src_is_prim(in->node, IR_P_CHECK_BOUND)) in->role = R_ALIAS;
    IrNode *x = in->node->nin == 2 ? in->node->in[1] : NULL;
    if (src_is_prim(in->node, IR_P_NEG) && x->kind == IR_CONST &&
        ((x->value.tag == V_INT && x->value.i != INT64_MIN) || x->value.tag == V_FLOAT))
      in->role = R_NEG;   /* cannot fail: written where it is used */
    if (src_is_prim(in->node, IR_P_MAKE_TUPLE) && in->node->nin > 1 && in->nuses > 0) {
      bool all = true;
      for (int u = 0; u < in->nuses; u++) all &= index_use(&in->uses[u]);
      if (all) in->role = R_INDEX;   /* it cannot fail: written in its [] */
    }
  }
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (in->outer || !src_is_prim(in->node, IR_P_SLICE) || in->nuses == 0) continue;
    bool all = true;
    for (int u = 0; u < in->nuses; u++) {
      Use *us = &in->uses[u];
      all &= index_use(us) || (us->user && src_info(s, us->user)->role == R_INDEX);
    }
    if (all) in->role = R_INDEX;
  }
  /* unpacks read item by item */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    int64_t cnt;
    if (in->outer || !src_is_prim(n, IR_P_UNPACK) || !src_const_int(n->in[2], &cnt) || cnt < 1 || cnt > 4096)
      continue;
    in->targets = lang_alloc((size_t)cnt * sizeof *in->targets);
    in->tnames = lang_alloc((size_t)cnt * sizeof *in->tnames);
    for (int u = 0; u < in->nuses; u++) {
      Use *us = &in->uses[u];
      int64_t i;
      Info *gi = us->user ? src_info(s, us->user) : NULL;
      if (gi && us->pos == 1 && src_is_prim(us->user, IR_P_GETITEM) && src_const_int(us->user->in[2], &i) &&
          i >= 0 && i < cnt && !in->targets[i] && us->user->graph == n->graph && gi->role == R_STMT) {
        in->targets[i] = us->user;
        gi->role = R_TARGET;
      } else {
        in->need_tuple = true;
      }
    }
  }
  /* switches called at once, their conditions, tail ifs, asserts */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 1; i < g->nnodes; i++) {
      IrNode *sw = g->nodes[i - 1], *call = g->nodes[i];
      Info *si = src_info(s, sw), *ci = src_info(s, call);
      if (!src_is_prim(sw, IR_P_SWITCH) || si->role != R_STMT || si->nuses != 1 ||
          si->uses[0].user != call || si->uses[0].pos != 0 || ci->role != R_STMT)
        continue;
      si->role = R_SWITCH;
      if (i >= 2) {
        IrNode *c = g->nodes[i - 2];
        Info *cinfo = src_info(s, c);
        if (sw->in[1] == c && cinfo->role == R_STMT && cinfo->nuses == 1 && cond_spelled(c))
          cinfo->role = R_COND;
      }
      if (call->nin != 1) continue;
      IrNode *a = sw->in[2], *b = sw->in[3];
      if (i == g->nnodes - 1 && g->ret == call && ci->nuses == 1 && placeable(s, a, g) &&
          placeable(s, b, g) && src_const_graph(s, a) != src_const_graph(s, b)) {
        s->gs[gx].tail = call;
        ci->tail = true;
        src_ginfo(s, src_const_graph(s, a))->in_place = true;
        src_ginfo(s, src_const_graph(s, b))->in_place = true;
        src_ginfo(s, src_const_graph(s, a))->mode = M_BRANCH;
        src_ginfo(s, src_const_graph(s, b))->mode = M_BRANCH;
        continue;
      }
      if (ci->nuses == 0 && returns_only(s, a, g) && placeable(s, b, g)) {
        /* an assert: switch(c, @ok, @fail)() whose value is dropped,
         * @ok returning None, @fail ending in assert_fail */
        IrGraph *ok = src_const_graph(s, a), *fail = src_const_graph(s, b);
        IrNode *af = fail->nnodes ? fail->nodes[fail->nnodes - 1] : NULL;
        bool none = !ok->ret || (ok->ret->kind == IR_CONST && ok->ret->value.tag == V_NONE);
        if (none && af && src_is_prim(af, IR_P_ASSERT_FAIL) && fail->ret == af && src_info(s, af)->nuses == 1 &&
            src_ginfo(s, fail)->nchildren == 0) {
          ci->assert_form = true;
          src_info(s, af)->role = R_ASSERT;
          src_ginfo(s, ok)->trivial = true;
          src_ginfo(s, fail)->in_place = true;
          continue;
        }
      }
      if (returns_only(s, a, g)) src_ginfo(s, src_const_graph(s, a))->trivial = true;
      if (returns_only(s, b, g)) src_ginfo(s, src_const_graph(s, b))->trivial = true;
    }
  }
  /* formats in their f-string */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *c = g->nodes[i];
      if (src_prim_of(c) != IR_P_CONCAT_STR || src_info(s, c)->role != R_STMT) continue;
      for (int k = i - 1; k >= 0; k--) {
        IrNode *f = g->nodes[k];
        Info *fi = src_info(s, f);
        if (fi->role != R_STMT || fi->nuses != 1) break;
        IrNode *u = fi->uses[0].user;
        if (src_is_prim(f, IR_P_FORMAT) && u == c) {
          fi->role = R_FIELD;
        } else if ((src_is_prim(f, IR_P_REPR) || src_is_prim(f, IR_P_STR)) && u && u->in[1] == f &&
                   src_info(s, u)->role == R_FIELD && fi->uses[0].pos == 1) {
          fi->role = R_CONV;
        } else {
          break;
        }
      }
    }
  }
  /* a, b = x, y; and return EXPR for an output computed last */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 1; i < g->nnodes; i++) {
      IrNode *t = g->nodes[i - 1], *u = g->nodes[i];
      Info *ti = src_info(s, t), *ui = src_info(s, u);
      if (src_is_prim(t, IR_P_MAKE_TUPLE) && t->nin > 1 && ti->role == R_STMT && ti->nuses == 1 &&
          ti->uses[0].user == u && ti->uses[0].pos == 1 && ui->targets && ui->role == R_STMT)
        ti->role = R_TUPLE;
    }
    IrNode *r = g->ret;
    Info *ri = r && g->nnodes && g->nodes[g->nnodes - 1] == r ? src_info(s, r) : NULL;
    if (ri && ri->role == R_STMT && ri->nuses == 1 && !s->gs[gx].tail && !ri->targets && !ri->assert_form &&
        !src_is_prim(r, IR_P_SETITEM) && !src_is_prim(r, IR_P_IMPORT) && !src_is_prim(r, IR_P_ASSERT_FAIL) &&
        !src_is_prim(r, IR_P_SET_GLOBAL) && !src_is_prim(r, IR_P_SLICE))
      ri->role = R_RETURN;
  }
  /* global reads used once soon after, with nothing but pure
   * primitives between (which cannot change a global) */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *x = g->nodes[i];
      Info *xi = src_info(s, x);
      if (!src_is_prim(x, IR_P_GLOBAL) || !src_const_str(x->in[1]) || !src_is_ident(AS_STR(x->in[1]->value)->data) ||
          xi->role != R_STMT || xi->nuses != 1 || !xi->uses[0].user)
        continue;
      IrNode *u = xi->uses[0].user;
      Info *ui = src_info(s, u);
      if (u->graph != g || (ui->role != R_STMT && ui->role != R_RETURN) || ui->pos <= i) continue;
      bool pure = true;
      for (int k = i + 1; k < ui->pos && pure; k++) {
        int p = src_prim_of(g->nodes[k]);
        pure = p >= 0 && (ir_prims[p].flags & P_PURE);
      }
      if (pure) xi->role = R_GLOBAL;
    }
  }
}

/* ---- structure: joins after their if, loops as while ----
 *
 * A synthetic graph called only in tail position, from code printed in
 * place, need not be a def: a join (the code after an if) is printed
 * after the if/else, each branch assigning its parameters and falling
 * through; a loop (a graph calling itself) as `while True:` where it is
 * entered, its calls of itself `continue`, and the code after it, when
 * only the loop calls that, after the while, reached by `break`.  A loop
 * may also be entered by a call whose value is used (a comprehension):
 * then each `return v` in it is `x = v` and `break`.  Loops then run in
 * constant stack, as in the IR.  Each call site must be where falling
 * through (or break, continue) gets there: the site's graph and the
 * graphs around it up to the target's place must all be printed in
 * place.  Candidates start optimistic and are made defs until every
 * site checks (a fixpoint). */


IrGraph *src_jump_target(Src *s, IrNode *call) {
  if (call->kind != IR_APPLY || src_info(s, call)->role != R_RETURN || src_prim_of(call) >= 0) return NULL;
  IrGraph *h = src_const_graph(s, call->in[0]);
  return h && call->nin - 1 == h->nparams ? h : NULL;
}

/* Whether control leaving the end of x's body, or a break or continue
 * in it, reaches `top` (x's graph or one around it) through code printed
 * in place.  fall: by falling through, to top's if (which must not
 * host a join of its own below top); else within top's while body. */
static bool reaches(Src *s, IrGraph *x, IrGraph *top, bool fall) {
  for (IrGraph *y = x; y; y = y->parent) {
    GInfo *gy = src_ginfo(s, y);
    if (!gy || y == top) return false;
    int m = gy->mode;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return false;
    if (y->parent == top) return !fall || m == M_BRANCH;
    if (fall && m == M_BRANCH && src_ginfo(s, y->parent) && src_ginfo(s, y->parent)->join) return false;
  }
  return false;
}


/* The loop whose while a `return` printed in place in graph y is in, or
 * NULL where it returns from a def. */
IrGraph *src_owner_loop(Src *s, IrGraph *y) {
  for (; y; y = y->parent) {
    int m = src_ginfo(s, y) ? src_ginfo(s, y)->mode : M_DEF;
    if (m == M_LOOP) return y;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return NULL;
  }
  return NULL;
}

/* The loop entered for its value that a `return` in graph y gives the
 * value of (through loops entered in tail position), or NULL. */
static IrGraph *value_owner(Src *s, IrGraph *y) {
  IrGraph *l = src_owner_loop(s, y);
  while (l && !src_ginfo(s, l)->entry_value) l = src_owner_loop(s, l->parent);
  return l;
}

/* A loop entered for its value: each `return` of that value is
 * `name = value` and `break`, which must leave this very while. */
static bool returns_ok(Src *s, IrGraph *l) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *y = s->gs[gx].g;
    if (!ir_is_ancestor(l, y) || s->gs[gx].tail || src_jump_of(s, y->ret)) continue;
    if (value_owner(s, y) == l && src_owner_loop(s, y) != l) return false;
  }
  return true;
}

static bool tail_site(Src *s, IrNode *call) {
  return call->graph->ret == call && src_info(s, call)->role == R_RETURN;
}

static bool site_ok(Src *s, GInfo *h, IrNode *call) {
  IrGraph *x = call->graph;
  switch (h->mode) {
  case M_LOOP:
    if (!ir_is_ancestor(h->g, x))   /* the entry */
      return x == h->g->parent && (call != h->entry_value || (!h->exit && returns_ok(s, h->g)));
    return tail_site(s, call) && reaches(s, x, h->g, false);   /* continue */
  case M_EXIT:
    return tail_site(s, call) && src_ginfo(s, h->loop)->mode == M_LOOP && !src_ginfo(s, h->loop)->entry_value &&
           reaches(s, x, h->loop, false);   /* break */
  case M_JOIN:
    return tail_site(s, call) && src_ginfo(s, h->g->parent)->join == h->g && reaches(s, x, h->g->parent, true);
  default: return true;
  }
}

static void structure(Src *s) {
  /* the calls of graphs of the printout, with all their arguments */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *x = s->gs[gx].g;
    for (int i = 0; i < x->nnodes; i++) {
      IrNode *c = x->nodes[i];
      IrGraph *h = src_prim_of(c) < 0 ? src_const_graph(s, c->in[0]) : NULL;
      int r = src_info(s, c)->role;
      if (!h || c->nin - 1 != h->nparams || (r != R_RETURN && r != R_STMT)) continue;
      if (r == R_RETURN && c != x->ret) continue;
      GInfo *gh = src_ginfo(s, h);
      gh->sites = lang_realloc(gh->sites, (gh->nsites + 1) * sizeof *gh->sites);
      gh->sites[gh->nsites++] = c;
    }
  }
  /* candidates: synthetic graphs only called, from the end of a graph;
   * loops first (they call themselves), then the code after each loop,
   * then joins */
  for (int pass = 0; pass < 3; pass++)
    for (int gx = 0; gx < s->ngraphs; gx++) {
      GInfo *gh = &s->gs[gx];
      IrGraph *h = gh->g, *p = h->parent;
      if (gh->mode != M_DEF || h == s->root || gh->in_place || gh->trivial || !gh->nsites ||
          gh->nsites != gh->refs || h->ndefaults || (h->flags & (IRG_FUNCTION | IRG_MODULE)) || !src_ginfo(s, p))
        continue;
      int outside = 0;
      IrNode *entry = NULL;
      for (int i = 0; i < gh->nsites; i++)
        if (!ir_is_ancestor(h, gh->sites[i]->graph)) {
          outside++;
          entry = gh->sites[i];
        }
      if (pass == 0 && outside == 1 && gh->nsites > 1) {
        gh->mode = M_LOOP;
        if (!tail_site(s, entry)) gh->entry_value = entry;
      } else if (pass == 1) {
        /* called only in a loop that is its sibling */
        IrGraph *loop = NULL;
        for (IrGraph *y = gh->sites[0]->graph; y && !loop; y = y->parent)
          if (y->parent == p && src_ginfo(s, y) && src_ginfo(s, y)->mode == M_LOOP && !src_ginfo(s, y)->exit &&
              !src_ginfo(s, y)->entry_value)
            loop = y;
        bool all = loop != NULL;
        for (int i = 0; all && i < gh->nsites; i++) all = ir_is_ancestor(loop, gh->sites[i]->graph);
        if (all) {
          gh->mode = M_EXIT;
          gh->loop = loop;
          src_ginfo(s, loop)->exit = h;
        }
      } else if (pass == 2 && outside == gh->nsites && src_ginfo(s, p)->tail && !src_ginfo(s, p)->join) {
        gh->mode = M_JOIN;
        src_ginfo(s, p)->join = h;
      }
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      GInfo *gh = &s->gs[gx];
      if (gh->mode != M_JOIN && gh->mode != M_LOOP && gh->mode != M_EXIT) continue;
      bool ok = true;
      for (int i = 0; ok && i < gh->nsites; i++) ok = site_ok(s, gh, gh->sites[i]);
      if (ok) continue;
      if (gh->mode == M_JOIN) src_ginfo(s, gh->g->parent)->join = NULL;
      if (gh->mode == M_LOOP && gh->exit) {
        src_ginfo(s, gh->exit)->mode = M_DEF;   /* break needs the while */
        src_ginfo(s, gh->exit)->loop = NULL;
        gh->exit = NULL;
      }
      if (gh->mode == M_EXIT) {
        src_ginfo(s, gh->loop)->exit = NULL;
        gh->loop = NULL;
      }
      gh->mode = M_DEF;
      changed = true;
    }
  }
  for (int gx = 0; gx < s->ngraphs; gx++) {
    if (s->gs[gx].mode >= M_JOIN) s->gs[gx].in_place = true;
    if (s->gs[gx].mode == M_LOOP && s->gs[gx].entry_value) src_info(s, s->gs[gx].entry_value)->value_entry = true;
  }
}

/* The call of an in-place join or loop that ends graph x, or NULL. */
IrGraph *src_jump_of(Src *s, IrNode *call) {
  IrGraph *h = call ? src_jump_target(s, call) : NULL;
  return h && src_ginfo(s, h)->mode >= M_JOIN ? h : NULL;
}

/* Parameters of joins and loops that nothing reads but jumps passing
 * them on to parameters nothing reads: they are never assigned. */
static void find_dead(Src *s) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *h = s->gs[gx].g;
    if (s->gs[gx].mode < M_JOIN) continue;
    for (int i = 0; i < h->nparams; i++) {
      Info *pi = src_info(s, h->params[i]);
      pi->dead = true;
      for (int u = 0; u < pi->nuses && pi->dead; u++) {
        Use *us = &pi->uses[u];
        pi->dead = us->user && us->pos >= 1 && src_jump_of(s, us->user) && us->user->graph->ret == us->user;
      }
    }
  }
  /* a parameter passed on to a live one is live */
  for (bool changed = true; changed;) {
    changed = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      IrNode *c = s->gs[gx].g->ret;
      IrGraph *h = src_jump_of(s, c);
      if (!h) continue;
      for (int i = 0; i < h->nparams; i++) {
        IrNode *a = src_resolve(c->in[i + 1]);
        if (a->kind != IR_PARAM || src_info(s, h->params[i])->dead || !src_info(s, a)->dead) continue;
        src_info(s, a)->dead = false;
        changed = true;
      }
    }
  }
}

/* Where n is printed in its graph's schedule: its own statement, or the
 * statement it is printed inside; past the end when a nested graph
 * reads it. */
static int printed_pos(Src *s, IrNode *n) {
  Info *in = src_info(s, n);
  if (in->role == R_STMT || in->role == R_RETURN || in->role == R_TARGET || !in->nuses) return in->pos;
  int at = in->pos;
  for (int u = 0; u < in->nuses; u++) {
    Use *us = &in->uses[u];
    if (!us->user || us->user->graph != n->graph) return 1 << 30;
    int q = printed_pos(s, us->user);
    if (q > at) at = q;
  }
  return at;
}

/* Whether a use of a loop's parameter, at graph u (position upos there,
 * -1 for its end), reads the old value only before node x (in graph gx)
 * assigns the new one, or on another path. */
static bool before_or_apart(Src *s, IrGraph *u, int upos, IrNode *x) {
  IrGraph *gx = x->graph;
  /* an item of an unpack is assigned where the unpack is */
  int xpos = src_info(s, x)->role == R_TARGET ? src_info(s, x->in[1])->pos : src_info(s, x)->pos;
  if (u == gx) return upos >= 0 && upos <= xpos;
  if (ir_is_ancestor(u, gx)) return true;   /* printed before the branch holding x */
  /* u and gx under different branches of one if */
  for (IrGraph *t = u->parent; t; t = t->parent) {
    if (!ir_is_ancestor(t, gx)) continue;
    IrGraph *cu = u, *cx = gx;
    while (cu->parent != t) cu = cu->parent;
    if (cx == t) return false;
    while (cx->parent != t) cx = cx->parent;
    if (cu == cx || !src_ginfo(s, cu) || !src_ginfo(s, cx)) return false;
    int mu = src_ginfo(s, cu)->mode, mx = src_ginfo(s, cx)->mode;
    IrGraph *join = src_ginfo(s, t)->join;
    /* the branches of t run apart, and before t's join; x's path goes
     * on to continue the loop, never into the join; a loop runs before
     * the code after it */
    return (mu == M_BRANCH && (mx == M_BRANCH || cx == join)) || (cu == join && mx == M_BRANCH) ||
           (mu == M_LOOP && src_ginfo(s, cu)->exit == cx);
  }
  return false;
}

/* Out of SSA, for the common case: a value computed only to be passed
 * to a parameter of a join or loop, in the statement just before the
 * jump's graph ends, is assigned to that parameter directly (`s = s + x`
 * rather than `s_3 = s + x` and `s = s_3`).  For a loop's parameter,
 * only where nothing reads its old value after. */
static void coalesce(Src *s) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    IrNode *c = g->ret;
    IrGraph *h = src_jump_of(s, c);
    if (!h) continue;
    for (int i = 0; i < h->nparams; i++) {
      IrNode *x = c->in[i + 1], *p = h->params[i];
      Info *xi = src_info(s, x), *pi = src_info(s, p);
      if (x->kind != IR_APPLY || x->graph != g || (xi->role != R_STMT && xi->role != R_TARGET) ||
          xi->nuses != 1 || xi->as || xi->targets || xi->assert_form || !src_needs_name(s, xi) || pi->dead)
        continue;
      int pr = src_prim_of(x);
      if (pr == IR_P_IMPORT || pr == IR_P_ASSERT_FAIL || pr == IR_P_SET_GLOBAL || pr == IR_P_SLICE) continue;
      bool ok = true;
      /* (entering the loop, the parameter has no old value) */
      if (src_ginfo(s, h)->mode == M_LOOP && ir_is_ancestor(h, g))
        for (int u = 0; u < pi->nuses && ok; u++) {
          Use *us = &pi->uses[u];
          if (us->user == c) ok = us->pos == i + 1 || src_info(s, h->params[us->pos - 1])->dead;
          else if (us->pos < 0) ok = false;
          else ok = before_or_apart(s, us->where, us->user ? printed_pos(s, us->user) : -1, x);
        }
      if (ok) xi->as = p;
    }
  }
  /* a parameter of a join, or of the code after a loop, that every
   * call passes the same value (a variable not changed on the way) is
   * that variable */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    GInfo *gh = &s->gs[gx];
    IrGraph *h = gh->g;
    if (gh->mode != M_JOIN && gh->mode != M_EXIT) continue;
    for (int i = 0; i < h->nparams; i++) {
      IrNode *y = src_resolve(gh->sites[0]->in[i + 1]);
      Info *pi = src_info(s, h->params[i]);
      bool same = !pi->dead && y->kind != IR_CONST && !src_info(s, y)->outer;
      for (int k = 1; same && k < gh->nsites; k++) same = src_resolve(gh->sites[k]->in[i + 1]) == y;
      /* in scope where h is printed: the loop's own parameter, or a
       * node of a graph around h's place, printed in place up to it */
      if (same && gh->mode == M_EXIT) same = y->kind == IR_PARAM && y->graph == gh->loop;
      if (same && gh->mode == M_JOIN) {
        same = ir_is_ancestor(y->graph, h->parent);
        for (IrGraph *t = h->parent; same && t != y->graph; t = t->parent) same = src_ginfo(s, t)->mode != M_DEF;
      }
      if (same) pi->as = y;
    }
  }
}

static int by_id(const void *a, const void *b) {
  const IrGraph *x = *(IrGraph *const *)a, *y = *(IrGraph *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

/* The printout of root graph g; env: the values it captured when it is
 * printed as a function value (NULL: none known). */
static void print_root(MistVM *vm, IrGraph *g, const Value *env, int nenv, StrBuf *out) {
  Src s = {0};
  s.vm = vm;
  s.root = g;
  s.out = out;
  s.start = out->len;
  s.home = g->module;
  sb_init(&s.pre);
  src_name_builtins(&s);
  ir_free_vars(g);
  s.env = env;
  s.nenv = env ? nenv : 0;
  src_add_graph(&s, g);
  src_fold(&s);
  /* root first, then by id: parents before the graphs nested in them */
  IrGraph **order = lang_alloc(s.ngraphs * sizeof *order);
  for (int i = 0; i < s.ngraphs; i++) order[i] = s.gs[i].g;
  qsort(order + 1, s.ngraphs - 1, sizeof *order, by_id);
  for (int i = 0; i < s.ngraphs; i++) {
    s.gs[i] = (GInfo){0};
    s.gs[i].g = order[i];
    ir_map_set_int(&s.gmap, order[i], i);
  }
  count_uses(&s);
  find_roles(&s);
  structure(&s);
  find_dead(&s);
  coalesce(&s);
  src_name_all(&s);
  src_preamble(&s);
  src_emit_root(&s);
}

void std_print_source(MistVM *vm, IrGraph *g, StrBuf *out) { print_root(vm, g, NULL, 0, out); }

void std_print_source_value(MistVM *vm, Value f, StrBuf *out) {
  ObjFunc *fn = AS_FUNC(f);
  print_root(vm, fn->graph, fn->env, fn->nenv, out);
}
