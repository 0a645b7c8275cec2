/* optimize.c: the optimisation pipeline, one readable list of passes.
 *
 * Each round runs inline (calls of known small graphs become their
 * bodies, which exposes tuples built and indexed, constant switches,
 * closures called where they are made), simplify (folds what inlining
 * exposed), cse (merges repeated pure computations) and dce (drops what
 * nobody uses any more), and rounds repeat while any pass changes
 * something, up to MAX_ROUNDS.  Debug builds (no NDEBUG) verify after
 * every pass that changed something, so a pass that breaks the IR is
 * caught at the pass, with the verifier's error left raised.  Only the
 * graphs that changed (a fingerprint of each graph's schedule, inputs,
 * output and defaults, taken after the previous pass) and the graphs
 * nested in them are verified: a graph's validity depends on its own
 * nodes and its ancestors' schedules only, and verifying a graph costs
 * the size of its ancestors too.  At
 * the end the graphs that became unreachable are dropped from the unit.
 */
#include <string.h>

#include "ir/scope.h"
#include "lang/gc.h"

enum { MAX_ROUNDS = 8 };

#ifndef NDEBUG
/* A graph's fingerprint: its schedule, inputs, output and defaults. */
static uintptr_t fingerprint(const IrGraph *g) {
  uint64_t h = (uint64_t)g->nnodes * 0x9e3779b97f4a7c15ull ^ (uintptr_t)g->ret;
  for (int i = 0; i < g->nnodes; i++) {
    const IrNode *n = g->nodes[i];
    h = (h ^ (uintptr_t)n) * 0x100000001b3ull;
    for (int j = 0; j < n->nin; j++) h = (h ^ (uintptr_t)n->in[j]) * 0x100000001b3ull;
  }
  for (int d = 0; d < g->ndefaults; d++) h = (h ^ (uintptr_t)g->defaults[d]) * 0x100000001b3ull;
  return (uintptr_t)(h | 1);
}

static void take_prints(IrUnit *u, IrGraph *g, NodeMap *prints) {
  IrScope s;
  ir_scope_collect(&s, u, g);
  memset(prints, 0, sizeof *prints);
  for (int k = 0; k < s.n; k++) ir_map_put(prints, s.graphs[k], (void *)fingerprint(s.graphs[k]));
}

/* After a pass that changed something: verify each graph g reaches that
 * changed, is new, or is nested in one that did (its validity depends on
 * its ancestors' schedules); then take the new fingerprints. */
static bool verify_changed(MistVM *vm, IrUnit *u, IrGraph *g, bool changed, NodeMap *prints) {
  if (!changed) return true;
  IrScope s;
  ir_scope_collect(&s, u, g);
  NodeMap dirty = {0};
  for (int k = 0; k < s.n; k++) {
    IrGraph *h = s.graphs[k];
    bool d = (uintptr_t)ir_map_get(prints, h) != fingerprint(h);
    for (IrGraph *a = h->parent; a && !d; a = a->parent) d = ir_map_get(&dirty, a) != NULL;
    if (d) ir_map_put(&dirty, h, h);
  }
  for (int k = 0; k < s.n; k++)
    if (ir_map_get(&dirty, s.graphs[k]) && !ir_verify_graph(vm, s.graphs[k])) return false;
  take_prints(u, g, prints);
  return true;
}

#define PASS(changed, call)                                            \
  do {                                                                 \
    bool c_ = (call);                                                  \
    changed |= c_;                                                     \
    if (!verify_changed(vm, u, g, c_, &prints)) return false;          \
  } while (0)
#else
#define PASS(changed, call) (changed |= (call))
#endif

bool ir_optimize(MistVM *vm, IrUnit *u, IrGraph *g) {
#ifndef NDEBUG
  NodeMap prints;
  take_prints(u, g, &prints);
#endif
  for (int round = 0; round < MAX_ROUNDS; round++) {
    bool changed = false;
    PASS(changed, ir_inline(vm, u, g));
    PASS(changed, ir_simplify(vm, u, g));
    PASS(changed, ir_cse(vm, u, g));
    PASS(changed, ir_dce_scope(u, g));
    ir_prune_unit(u, g);
    if (!changed) break;
  }
  return true;
}

bool ir_optimize_unit(MistVM *vm, IrUnit *u) {
  /* the top-level graphs, taken before the passes add clones */
  NodeMap in_unit = {0};
  for (int i = 0; i < u->ngraphs; i++) ir_map_put(&in_unit, u->graphs[i], u->graphs[i]);
  int n = 0;
  IrGraph **roots = lang_alloc((size_t)(u->ngraphs ? u->ngraphs : 1) * sizeof *roots);
  for (int i = 0; i < u->ngraphs; i++)
    if (!u->graphs[i]->parent || !ir_map_get(&in_unit, u->graphs[i]->parent)) roots[n++] = u->graphs[i];
  for (int i = 0; i < n; i++)
    if (!ir_optimize(vm, u, roots[i])) return false;
  return true;
}
