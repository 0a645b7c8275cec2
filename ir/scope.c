/* scope.c: the bookkeeping the IR passes share.
 *
 * A pass works on a scope: the graphs reachable from its root through
 * graph constants, restricted to one unit and to graphs the interpreter
 * has not compiled, listed ancestors first so that a forward sweep sees a
 * node's rewrite before the nested graphs that use it.  Most passes do
 * not patch uses one by one; they record replacements (old node -> new
 * node) in a map, resolve inputs through it as they go, and finish with
 * one sweep over the scope (ir_scope_rewrite).  (The inliner, which
 * copies graphs as it goes, also replaces uses at once.)  Nodes a pass proved useless
 * are then taken out of their schedules together.  Pruning a unit and
 * the pointer map (NodeMap, declared in passes.h) live here too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/scope.h"
#include "lang/gc.h"

/* ---- references and scopes ---- */

void ir_each_ref(IrGraph *g, IrRefFn fn, void *ctx) {
  for (int i = 0; i < g->nnodes; i++)
    for (int j = 0; j < g->nodes[i]->nin; j++) {
      IrGraph *h = ir_node_graph(g->nodes[i]->in[j]);
      if (h) fn(ctx, h, i);
    }
  if (g->ret && ir_node_graph(g->ret)) fn(ctx, ir_node_graph(g->ret), g->nnodes);
  for (int d = 0; d < g->ndefaults; d++)
    if (g->defaults[d] && ir_node_graph(g->defaults[d])) fn(ctx, ir_node_graph(g->defaults[d]), -1);
}

int ir_graph_depth(const IrGraph *g) {
  int d = 0;
  for (g = g->parent; g; g = g->parent) d++;
  return d;
}

bool ir_scope_has(const IrScope *s, const IrGraph *g) { return ir_map_get(&s->index, g) != NULL; }

typedef struct Collect {
  IrScope *s;
  NodeMap unit;     /* the unit's graphs, when restricted to one */
  bool restrict_unit;
} Collect;

static void scope_add(Collect *c, IrGraph *g) {
  IrScope *s = c->s;
  if (ir_scope_has(s, g) || ir_frozen(g)) return;
  if (c->restrict_unit && !ir_map_get(&c->unit, g)) return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->graphs = lang_realloc(s->graphs, (size_t)s->cap * sizeof *s->graphs);
  }
  s->graphs[s->n++] = g;
  ir_map_set_int(&s->index, g, s->n - 1);
}

static void collect_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  scope_add(ctx, h);
}

typedef struct Ranked {
  IrGraph *g;
  int depth, order;
} Ranked;

static int by_depth(const void *a, const void *b) {
  const Ranked *x = a, *y = b;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

void ir_scope_collect(IrScope *s, IrUnit *u, IrGraph *root) {
  memset(s, 0, sizeof *s);
  Collect c = {s, {0}, u != NULL};
  if (u)
    for (int i = 0; i < u->ngraphs; i++) ir_map_put(&c.unit, u->graphs[i], u->graphs[i]);
  scope_add(&c, root);
  for (int k = 0; k < s->n; k++) ir_each_ref(s->graphs[k], collect_ref, &c);
  if (s->n < 2) return;
  Ranked *r = lang_alloc((size_t)s->n * sizeof *r);
  for (int i = 0; i < s->n; i++) r[i] = (Ranked){s->graphs[i], ir_graph_depth(s->graphs[i]), i};
  qsort(r, (size_t)s->n, sizeof *r, by_depth);
  for (int i = 0; i < s->n; i++) {
    s->graphs[i] = r[i].g;
    ir_map_set_int(&s->index, r[i].g, i);
  }
}

/* ---- replacing and removing nodes ---- */

IrNode *ir_repl_resolve(const NodeMap *repl, IrNode *x) {
  /* a chain visits each entry at most once, unless a pass made a cycle */
  for (size_t steps = 0; x; steps++) {
    IrNode *y = ir_map_get(repl, x);
    if (!y || y == x) return x;
    if (steps > repl->n) {
      fprintf(stderr, "mist: internal error: a cycle of node replacements (ir_repl_resolve)\n");
      abort();
    }
    x = y;
  }
  return x;
}

bool ir_scope_rewrite(IrScope *s, const NodeMap *repl) {
  if (!repl->n) return false;
  bool changed = false;
  for (int k = 0; k < s->n; k++) {
    IrGraph *g = s->graphs[k];
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *n = g->nodes[i];
      for (int j = 0; j < n->nin; j++) {
        IrNode *r = ir_repl_resolve(repl, n->in[j]);
        if (r != n->in[j]) {
          n->in[j] = r;
          changed = true;
        }
      }
    }
    IrNode *r = g->ret ? ir_repl_resolve(repl, g->ret) : NULL;
    if (r != g->ret) {
      g->ret = r;
      changed = true;
    }
    for (int d = 0; d < g->ndefaults; d++) {
      r = ir_repl_resolve(repl, g->defaults[d]);
      if (r != g->defaults[d]) {
        g->defaults[d] = r;
        changed = true;
      }
    }
  }
  return changed;
}

void ir_scope_unschedule(IrScope *s, const NodeMap *dead) {
  if (!dead->n) return;
  for (int k = 0; k < s->n; k++) {
    IrGraph *g = s->graphs[k];
    int m = 0;
    for (int i = 0; i < g->nnodes; i++)
      if (!ir_map_get(dead, g->nodes[i])) g->nodes[m++] = g->nodes[i];
    g->nnodes = m;
  }
}

void ir_forget_free_vars(IrGraph *g) {
  g->fv_done = false;
  g->nfv = 0;
  g->fv = NULL;
}

void ir_scope_forget_free_vars(IrScope *s, IrUnit *u) {
  for (int k = 0; k < s->n; k++)
    if (!ir_frozen(s->graphs[k])) ir_forget_free_vars(s->graphs[k]);
  if (u)
    for (int i = 0; i < u->ngraphs; i++)
      if (!ir_frozen(u->graphs[i])) ir_forget_free_vars(u->graphs[i]);
}

/* ---- pruning a unit ---- */

typedef struct Live {
  NodeMap set;
  int n, cap;
  IrGraph **stack;
} Live;

static void mark_live(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  Live *l = ctx;
  if (ir_map_get(&l->set, h)) return;
  ir_map_put(&l->set, h, h);
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 32;
    l->stack = lang_realloc(l->stack, (size_t)l->cap * sizeof *l->stack);
  }
  l->stack[l->n++] = h;
}

void ir_prune_unit(IrUnit *u, IrGraph *keep) {
  NodeMap in_unit = {0};
  for (int i = 0; i < u->ngraphs; i++) ir_map_put(&in_unit, u->graphs[i], u->graphs[i]);
  Live l = {{0}, 0, 0, NULL};
  for (int i = 0; i < u->ngraphs; i++) {
    IrGraph *g = u->graphs[i];
    if (!g->parent || !ir_map_get(&in_unit, g->parent)) mark_live(&l, g, 0);
  }
  if (keep) mark_live(&l, keep, 0);
  while (l.n > 0) ir_each_ref(l.stack[--l.n], mark_live, &l);
  int m = 0;
  for (int i = 0; i < u->ngraphs; i++)
    if (ir_map_get(&l.set, u->graphs[i])) u->graphs[m++] = u->graphs[i];
  u->ngraphs = m;
}

/* ---- facts about nodes ---- */

bool ir_never_unbound(const IrNode *x) {
  if (x->kind == IR_CONST) return x->value.tag != V_UNBOUND;
  switch (ir_node_prim(x)) {
  case IR_P_ADD: case IR_P_SUB: case IR_P_MUL: case IR_P_TRUEDIV: case IR_P_FLOORDIV:
  case IR_P_MOD: case IR_P_POW: case IR_P_MATMUL: case IR_P_NEG: case IR_P_POS:
  case IR_P_NOT: case IR_P_TRUTH: case IR_P_EQ: case IR_P_NE: case IR_P_LT: case IR_P_LE:
  case IR_P_GT: case IR_P_GE: case IR_P_IS: case IR_P_IS_NOT: case IR_P_CONTAINS:
  case IR_P_MAKE_TUPLE: case IR_P_MAKE_LIST: case IR_P_MAKE_DICT: case IR_P_SETITEM:
  case IR_P_SLICE: case IR_P_UNPACK: case IR_P_LEN: case IR_P_ITER_SEQ: case IR_P_FORMAT:
  case IR_P_CONCAT_STR: case IR_P_REPR: case IR_P_STR: case IR_P_GLOBAL:
  case IR_P_CHECK_BOUND:
    return true;
  default:
    return false;
  }
}

IrGraph *ir_known_callee(const IrNode *f) {
  IrGraph *g = ir_node_graph(f);
  if (g) return g;
  if (f->kind != IR_CONST || !v_is_obj(f->value, O_FUNC)) return NULL;
  ObjFunc *fn = AS_FUNC(f->value);
  return fn->nenv == 0 && lang_func_ndefaults(fn) == 0 ? fn->graph : NULL;
}


static bool plain_value(Value v, int depth) {
  switch (v.tag) {
  case V_NONE: case V_BOOL: case V_INT: case V_FLOAT: return true;
  case V_UNBOUND: return false;
  case V_OBJ: break;
  }
  if (v.o->kind == O_STR) return true;
  if (v.o->kind != O_TUPLE || depth > 8) return false;
  for (size_t i = 0; i < AS_SEQ(v)->len; i++)
    if (!plain_value(AS_SEQ(v)->items[i], depth + 1)) return false;
  return true;
}

bool ir_plain_const(const IrNode *x) { return x->kind == IR_CONST && plain_value(x->value, 0); }
