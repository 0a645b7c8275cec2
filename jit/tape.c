/* tape.c: the memory of a loop's backward pass in compiled code
 * (docs/jit.md, "The tape of a loop's backward pass").
 *
 * The forward pass of a differentiated loop makes, on each turn, the
 * turn's backpropagator: a closure that holds the values the backward
 * step needs and the backpropagator of the turn before.  Compiled code
 * keeps those values in a tape instead (the lowering's R_TAPE: a
 * buffer, a count of entries and the continuation of the first turn),
 * and this file owns the buffer: memory of the collector's, freed with
 * the last tape that holds it, and scanned where the entries hold
 * pointers (boxed values, the tapes of loops the turn ran); not a
 * tensor from the caching allocator, whose finaliser would cost more
 * than a short loop's closures.  Its word 0
 * counts the entries written, word 1 those there
 * is room for; the entries follow, the leaves of one turn's values
 * each (8 bytes a leaf).  Compiled code reads entries and appends
 * where there is room itself (lower.c); these functions are its slow
 * paths.  Entries are never written over: a tape of
 * count n is the first n entries of its buffer for as long as it
 * lives, and a push at n where more were written (two paths from one
 * tape) copies the n into a new buffer.
 */
#include <string.h>

#include "ir/eval.h"
#include "jit/tape.h"
#include "lang/gc.h"

enum { HEAD = JIT_TAPE_HEAD, FIRST = 64 };

uint8_t *mist_rt_tape_push(int64_t *owner, int64_t count, int64_t entry_bytes, bool scanned) {
  int64_t *w = (int64_t *)(intptr_t)*owner;
  int64_t ew = entry_bytes / 8;
  if (!w || w[0] != count || w[1] == count) {
    int64_t room = count < FIRST / 2 ? FIRST : 2 * count;
    size_t size = (size_t)(HEAD + room * ew) * sizeof *w;
    int64_t *n = scanned ? lang_alloc(size) : lang_alloc_atomic(size);
    if (w) memcpy(n + HEAD, w + HEAD, (size_t)(count * ew) * sizeof *n);
    n[1] = room;
    *owner = (int64_t)(intptr_t)n;
    w = n;
  }
  w[0] = count + 1;
  return (uint8_t *)(w + HEAD + count * ew);
}

const Value *mist_rt_env_of(const JitCx *cx, const Value *v, int32_t site) {
  IrGraph *g = ir_node_graph(cx->sites[site].node);
  if (!v_is_obj(*v, O_FUNC) || AS_FUNC(*v)->graph != g || AS_FUNC(*v)->nenv != g->nfv) return NULL;
  return AS_FUNC(*v)->env;
}
