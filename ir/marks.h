/* marks.h: an int per node for one run of a pass (dce's counts of uses,
 * reverse mode's pruning), kept by the pass, not in the node: the IR
 * holds the program only.  An array indexed by the node's id, which is
 * dense in its unit (IrUnit.next_id), so reading or bumping a mark costs
 * about what a field did (a map costs a hash and a probe per use).
 *
 * A pass may meet nodes of other units (a graph it reaches by constant
 * belongs to another lowering), whose ids are their unit's: each slot
 * remembers the node that took it, and a node whose slot another took,
 * or whose id is past the array, gets its int from a map instead.  So
 * two nodes never share a mark, whatever their ids.
 *
 * The array is malloc'd, not the collector's (a pass that prunes in
 * rounds would otherwise hand it a large block each round), and holds
 * node addresses only to compare them: a pass makes no nodes while it
 * holds marks, so no new node can take a dropped one's address.  Free
 * it with ir_marks_free. */
#ifndef MIST_IR_MARKS_H
#define MIST_IR_MARKS_H

#include "ir/ir.h"
#include "ir/map.h"

typedef struct IrMarkSlot {
  const IrNode *node;   /* who holds the slot; NULL: free */
  int mark;
} IrMarkSlot;

typedef struct IrMarks {
  uint32_t n;           /* ids below n have a slot */
  IrMarkSlot *slots;
  NodeMap others;       /* node -> int * for the rest */
} IrMarks;

/* Marks for nodes whose ids are mostly below n (a unit's next_id), all 0. */
void ir_marks_init(IrMarks *m, uint32_t n);
/* Marks for the nodes of unit u. */
static inline void ir_marks_for_unit(IrMarks *m, const IrUnit *u) { ir_marks_init(m, u->next_id); }
void ir_marks_free(IrMarks *m);

int *ir_mark_other(IrMarks *m, const IrNode *n);

/* Node x's mark, to read or change; 0 until set. */
static inline int *ir_mark(IrMarks *m, const IrNode *x) {
  if (x->id < m->n) {
    IrMarkSlot *s = &m->slots[x->id];
    if (s->node == x) return &s->mark;
    if (!s->node) {
      s->node = x;
      return &s->mark;
    }
  }
  return ir_mark_other(m, x);
}

#endif
