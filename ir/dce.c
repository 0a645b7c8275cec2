/* dce.c: dead code elimination, kept deliberately conservative.
 *
 * Primitives marked P_PURE may still raise (`"a" + 1`), and dropping a
 * node that would have raised changes what the program does, so only
 * applications that certainly build a value without failing are
 * candidates (droppable() below lists them: tuples and lists, dicts with
 * str constant keys, slices of int constants, indexing a tuple built in
 * place at a constant index in range, switch on a constant or a bool,
 * check_bound of a value that cannot be Unbound, the sensitivity
 * primitives gadd, env_get, env_set, make_env with distinct int keys...).
 * A call is dropped only when
 * it calls a graph constant with the right number of arguments whose
 * body holds droppable nodes only (recursively, recursion excluded): it
 * builds a closure or a tuple and nothing else.  A builtin's call never
 * goes.
 *
 * A candidate goes when nothing uses it: the uses are counted (in the
 * pass's marks, marks.h) over the graphs that can see it: the graph
 * itself and every graph reachable from it through graph constants,
 * which includes its nested graphs (their parameters' default values
 * count as uses too).  Schedules are walked backwards and nested graphs
 * before their parents, so a chain of dead structures goes in one sweep.
 */
#include <string.h>

#include "ir/marks.h"
#include "ir/scope.h"
#include "lang/gc.h"

typedef struct GraphList {
  int n, cap;
  IrGraph **items;
  NodeMap in;     /* graph -> itself when in items (a unit has thousands) */
} GraphList;

static void list_add(GraphList *l, IrGraph *g) {
  if (ir_map_get(&l->in, g)) return;
  ir_map_put(&l->in, g, g);
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->items = lang_realloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  l->items[l->n++] = g;
}

static void add_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  list_add(ctx, h);
}

/* Add every graph reachable from the list's graphs by constant. */
static void close_over(GraphList *l) {
  for (int k = 0; k < l->n; k++) ir_each_ref(l->items[k], add_ref, l);
}

/* ---- what may go ---- */

typedef struct Dce {
  NodeMap pure;    /* graph -> 1: calling it only builds values, 2: not, 3: being decided */
  IrMarks uses;    /* an application -> the uses counted; -1: dropped */
} Dce;

static bool droppable(Dce *d, const IrNode *n);

static bool const_int_or_none(const IrNode *x) {
  return x->kind == IR_CONST &&
         (x->value.tag == V_INT || x->value.tag == V_NONE || x->value.tag == V_BOOL);
}

/* A condition whose truthiness cannot fail: a constant or a bool. */
static bool plain_condition(const IrNode *c) {
  if (c->kind == IR_CONST) return c->value.tag != V_OBJ || ir_plain_const(c);
  switch (ir_node_prim(c)) {
  case IR_P_NOT: case IR_P_TRUTH: case IR_P_IS: case IR_P_IS_NOT: case IR_P_CONTAINS: return true;
  default: return false;
  }
}

/* The length of a tuple known where it is made: built here, a constant,
 * or unpack(x, n) (a tuple of n items or an error). */
static int64_t tuple_len(const IrNode *t) {
  if (ir_node_prim(t) == IR_P_MAKE_TUPLE) return t->nin - 1;
  if (ir_node_prim(t) == IR_P_UNPACK && t->in[2]->kind == IR_CONST && t->in[2]->value.tag == V_INT)
    return t->in[2]->value.i;
  if (t->kind == IR_CONST && v_is_obj(t->value, O_TUPLE)) return (int64_t)AS_SEQ(t->value)->len;
  return -1;
}

/* make_env(k1, v1, ...) cannot fail when its keys are distinct int
 * constants (a key given twice adds its values, which may fail). */
static bool distinct_int_keys(const IrNode *n) {
  for (int i = 1; i + 1 < n->nin; i += 2) {
    if (n->in[i]->kind != IR_CONST || n->in[i]->value.tag != V_INT) return false;
    for (int j = 1; j < i; j += 2)
      if (n->in[j]->value.i == n->in[i]->value.i) return false;
  }
  return (n->nin - 1) % 2 == 0;
}

/* Does calling graph h do nothing but build values? */
static bool pure_graph(Dce *d, IrGraph *h) {
  int state = ir_map_int(&d->pure, h, 0);
  if (state) return state == 1;
  if (h->ndefaults) return false;
  ir_map_set_int(&d->pure, h, 3);   /* a call back into h: not pure */
  bool pure = true;
  for (int i = 0; i < h->nnodes && pure; i++) pure = droppable(d, h->nodes[i]);
  ir_map_set_int(&d->pure, h, pure ? 1 : 2);
  return pure;
}

static bool droppable(Dce *d, const IrNode *n) {
  int p = ir_node_prim(n);
  int argc = n->nin - 1;
  switch (p) {
  case IR_P_MAKE_TUPLE:
  case IR_P_MAKE_LIST:
  case IR_P_IS:
  case IR_P_IS_NOT:
    return true;
  case IR_P_MAKE_DICT:
    for (int i = 1; i < n->nin; i += 2)
      if (!(n->in[i]->kind == IR_CONST && v_is_obj(n->in[i]->value, O_STR))) return false;
    return true;
  case IR_P_SLICE:
    for (int i = 1; i < n->nin; i++)
      if (!const_int_or_none(n->in[i])) return false;
    return true;
  case IR_P_GETITEM: {
    int64_t len = tuple_len(n->in[1]);
    const IrNode *k = n->in[2];
    if (len < 0 || k->kind != IR_CONST || k->value.tag != V_INT) return false;
    return k->value.i >= -len && k->value.i < len;
  }
  case IR_P_UNPACK: {
    const IrNode *k = n->in[2];
    return k->kind == IR_CONST && k->value.tag == V_INT && tuple_len(n->in[1]) == k->value.i;
  }
  case IR_P_LEN: {
    int q = ir_node_prim(n->in[1]);
    return q == IR_P_MAKE_TUPLE || q == IR_P_MAKE_LIST;
  }
  case IR_P_SWITCH:
  case IR_P_NOT:
  case IR_P_TRUTH:
    return plain_condition(n->in[1]);
  case IR_P_CHECK_BOUND:
    return ir_never_unbound(n->in[1]);
  case -1: {
    IrGraph *h = ir_known_callee(n->in[0]);
    return h && h->nparams == argc && pure_graph(d, h);
  }
  case IR_P_MAKE_ENV:
    return distinct_int_keys(n);
  case IR_P_GADD: case IR_P_ENV_GET: case IR_P_ENV_SET:
    return true;
  default:
    return false;
  }
}

static void dce_init(Dce *d, uint32_t nids) {
  memset(d, 0, sizeof *d);
  ir_marks_init(&d->uses, nids);
}

/* ---- removing ---- */

static void count_use(Dce *d, IrNode *x) {
  if (x && x->kind == IR_APPLY) ++*ir_mark(&d->uses, x);
}

static void reset_marks(Dce *d, IrGraph *g) {
  for (int i = 0; i < g->nnodes; i++) *ir_mark(&d->uses, g->nodes[i]) = 0;
}

static void count_uses_in(Dce *d, IrGraph *h) {
  for (int i = 0; i < h->nnodes; i++)
    for (int j = 0; j < h->nodes[i]->nin; j++) count_use(d, h->nodes[i]->in[j]);
  count_use(d, h->ret);
  for (int k = 0; k < h->ndefaults; k++) count_use(d, h->defaults[k]);
}

/* Drop g's dead candidates, given counted uses; the number dropped. */
static int sweep(Dce *d, IrGraph *g) {
  int removed = 0;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    IrNode *n = g->nodes[i];
    int *uses = ir_mark(&d->uses, n);
    if (*uses != 0 || !droppable(d, n)) continue;
    *uses = -1;   /* gone */
    removed++;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] && n->in[j]->kind == IR_APPLY) {
        int *u = ir_mark(&d->uses, n->in[j]);
        if (*u > 0) --*u;
      }
  }
  if (!removed) return 0;
  int k = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (*ir_mark(&d->uses, g->nodes[i]) != -1) g->nodes[k++] = g->nodes[i];
  g->nnodes = k;
  /* g may have lost free variables; recompute them when next asked */
  ir_forget_free_vars(g);
  return removed;
}

/* DCE of g with uses counted over the graphs in l (g among them). */
static int dce_in(Dce *d, IrGraph *g, GraphList *l) {
  reset_marks(d, g);
  for (int k = 0; k < l->n; k++) {
    IrGraph *h = l->items[k];
    for (int i = 0; i < h->nnodes; i++)
      for (int j = 0; j < h->nodes[i]->nin; j++) {
        IrNode *x = h->nodes[i]->in[j];
        if (x->kind == IR_APPLY && x->graph == g) count_use(d, x);
      }
    if (h->ret && h->ret->graph == g) count_use(d, h->ret);
    for (int k2 = 0; k2 < h->ndefaults; k2++)
      if (h->defaults[k2]->graph == g) count_use(d, h->defaults[k2]);
  }
  return sweep(d, g);
}

void ir_dce(IrGraph *g) {
  /* (no unit: the array spans g's own ids, the nodes it may drop) */
  uint32_t nids = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i]->id >= nids) nids = g->nodes[i]->id + 1;
  Dce d;
  dce_init(&d, nids);
  GraphList l = {0};
  list_add(&l, g);
  close_over(&l);
  dce_in(&d, g, &l);
  ir_marks_free(&d.uses);
}

void ir_dce_unit(IrUnit *u) {
  GraphList l = {0};
  for (int i = 0; i < u->ngraphs; i++) list_add(&l, u->graphs[i]);
  close_over(&l);
  int removed;
  do {
    Dce d;
    dce_init(&d, u->next_id);
    removed = 0;
    /* nested graphs come after their parents: sweep them first */
    for (int i = u->ngraphs - 1; i >= 0; i--) removed += dce_in(&d, u->graphs[i], &l);
    ir_marks_free(&d.uses);
  } while (removed);
}

bool ir_dce_scope(IrUnit *u, IrGraph *g) {
  IrScope s;
  ir_scope_collect(&s, u, g);
  /* uses may also come from graphs outside the scope that it reaches
   * (compiled ones, other units'): count those too */
  GraphList l = {0};
  for (int k = 0; k < s.n; k++) list_add(&l, s.graphs[k]);
  close_over(&l);
  bool any = false;
  int removed;
  do {
    Dce d;
    dce_init(&d, u->next_id);
    for (int k = 0; k < l.n; k++) count_uses_in(&d, l.items[k]);
    removed = 0;
    /* descendants first, so their dead nodes release their parents' */
    for (int k = s.n - 1; k >= 0; k--) removed += sweep(&d, s.graphs[k]);
    any |= removed > 0;
    ir_marks_free(&d.uses);
  } while (removed);
  if (any) ir_scope_forget_free_vars(&s, u);
  return any;
}
