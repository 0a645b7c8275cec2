/* marks.c: the per-node ints of marks.h: the array, and the map for the
 * nodes the array has no slot for. */
#include <stdlib.h>

#include "ir/marks.h"
#include "lang/gc.h"

void ir_marks_init(IrMarks *m, uint32_t n) {
  m->slots = calloc(n ? n : 1, sizeof *m->slots);
  /* (out of memory: every node goes to the map) */
  m->n = m->slots ? n : 0;
  m->others = (NodeMap){0};
}

void ir_marks_free(IrMarks *m) {
  free(m->slots);
  *m = (IrMarks){0};
}

int *ir_mark_other(IrMarks *m, const IrNode *n) {
  int *box = ir_map_get(&m->others, n);
  if (!box) {
    box = lang_alloc_atomic(sizeof *box);
    *box = 0;
    ir_map_put(&m->others, n, box);
  }
  return box;
}
