/* optimize.c: the optimisation pipeline, one readable list of passes.
 *
 * Each round runs inline (calls of known small graphs become their
 * bodies, which exposes tuples built and indexed, constant switches,
 * closures called where they are made), simplify (folds what inlining
 * exposed), cse (merges repeated pure computations) and dce (drops what
 * nobody uses any more), and rounds repeat while any pass changes
 * something, up to MAX_ROUNDS.  Debug builds (no NDEBUG) verify every
 * graph the pipeline touched after every pass, so a pass that breaks the
 * IR is caught at the pass, with the verifier's error left raised.  At
 * the end the graphs that became unreachable are dropped from the unit.
 */
#include "ir/scope.h"
#include "lang/gc.h"

enum { MAX_ROUNDS = 8 };

#ifndef NDEBUG
static bool verify_scope(MistVM *vm, IrUnit *u, IrGraph *g) {
  IrScope s;
  ir_scope_collect(&s, u, g);
  for (int k = 0; k < s.n; k++)
    if (!ir_verify_graph(vm, s.graphs[k])) return false;
  return true;
}
#define VERIFIED(vm, u, g) verify_scope(vm, u, g)
#else
#define VERIFIED(vm, u, g) true
#endif

bool ir_optimize(MistVM *vm, IrUnit *u, IrGraph *g) {
  for (int round = 0; round < MAX_ROUNDS; round++) {
    bool changed = false;
    changed |= ir_inline(vm, u, g);
    if (!VERIFIED(vm, u, g)) return false;
    changed |= ir_simplify(vm, u, g);
    if (!VERIFIED(vm, u, g)) return false;
    changed |= ir_cse(vm, u, g);
    if (!VERIFIED(vm, u, g)) return false;
    changed |= ir_dce_scope(u, g);
    if (!VERIFIED(vm, u, g)) return false;
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
