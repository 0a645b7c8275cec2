/* dce.c: dead code elimination, kept deliberately conservative.
 *
 * Primitives marked P_PURE may still raise (`"a" + 1`), and dropping a
 * node that would have raised changes what the program does, so only
 * calls that build a value from any arguments without failing are
 * candidates: make_tuple, make_list and slice.  A call of
 * a graph or builtin is never dropped.  A candidate goes when nothing
 * uses it: the uses are counted (in the nodes' scratch `mark`) over g
 * and every graph reachable from g through graph constants, which
 * includes the graphs nested in g that can see g's nodes (their
 * parameters' default values count as uses too).  The schedule
 * is walked backwards, so a chain of dead tuples goes in one sweep.
 */
#include <string.h>

#include "ir/passes.h"
#include "lang/gc.h"

typedef struct GraphList {
  int n, cap;
  IrGraph **items;
} GraphList;

static bool list_has(GraphList *l, IrGraph *g) {
  for (int i = 0; i < l->n; i++)
    if (l->items[i] == g) return true;
  return false;
}

static void list_add(GraphList *l, IrGraph *g) {
  if (list_has(l, g)) return;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->items = lang_realloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  l->items[l->n++] = g;
}

/* Add every graph reachable from the list's graphs by constant. */
static void close_over(GraphList *l) {
  for (int k = 0; k < l->n; k++) {
    IrGraph *h = l->items[k];
    for (int i = 0; i < h->nnodes; i++)
      for (int j = 0; j < h->nodes[i]->nin; j++) {
        IrGraph *r = ir_node_graph(h->nodes[i]->in[j]);
        if (r) list_add(l, r);
      }
    if (h->ret && ir_node_graph(h->ret)) list_add(l, ir_node_graph(h->ret));
    for (int d = 0; d < h->ndefaults; d++)
      if (h->defaults[d] && ir_node_graph(h->defaults[d])) list_add(l, ir_node_graph(h->defaults[d]));
  }
}

static bool droppable(const IrNode *n) {
  switch (ir_node_prim(n)) {
  case IR_P_MAKE_TUPLE:
  case IR_P_MAKE_LIST:
  case IR_P_SLICE:
    return true;
  default:
    return false;
  }
}

static void count_use(IrGraph *g, IrNode *x) {
  if (x && x->kind == IR_APPLY && x->graph == g) x->mark++;
}

/* DCE of g with uses counted over the graphs in l (g among them). */
static int dce_in(IrGraph *g, GraphList *l) {
  for (int i = 0; i < g->nnodes; i++) g->nodes[i]->mark = 0;
  for (int k = 0; k < l->n; k++) {
    IrGraph *h = l->items[k];
    for (int i = 0; i < h->nnodes; i++)
      for (int j = 0; j < h->nodes[i]->nin; j++) count_use(g, h->nodes[i]->in[j]);
    count_use(g, h->ret);
    for (int d = 0; d < h->ndefaults; d++) count_use(g, h->defaults[d]);
  }
  int removed = 0;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    IrNode *n = g->nodes[i];
    if (n->mark != 0 || !droppable(n)) continue;
    n->mark = -1;   /* gone */
    removed++;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] && n->in[j]->kind == IR_APPLY && n->in[j]->graph == g && n->in[j]->mark > 0)
        n->in[j]->mark--;
  }
  if (!removed) return 0;
  int k = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i]->mark != -1) g->nodes[k++] = g->nodes[i];
  g->nnodes = k;
  /* g may have lost free variables; recompute them when next asked */
  g->fv_done = false;
  g->nfv = 0;
  g->fv = NULL;
  return removed;
}

void ir_dce(IrGraph *g) {
  GraphList l = {0};
  list_add(&l, g);
  close_over(&l);
  dce_in(g, &l);
}

void ir_dce_unit(IrUnit *u) {
  GraphList l = {0};
  for (int i = 0; i < u->ngraphs; i++) list_add(&l, u->graphs[i]);
  close_over(&l);
  int removed;
  do {
    removed = 0;
    /* nested graphs come after their parents: sweep them first */
    for (int i = u->ngraphs - 1; i >= 0; i--) removed += dce_in(u->graphs[i], &l);
  } while (removed);
}
