/* passes.h: IR-to-IR passes.  Each pass is one file of ir/ and changes
 * graphs in place; run the verifier after it (debug builds do). */
#ifndef MIST_IR_PASSES_H
#define MIST_IR_PASSES_H

#include "ir/ir.h"

/* Dead code elimination (dce.c): drop g's scheduled applications whose
 * result nothing uses (g, the graphs it reaches through graph constants,
 * its output) and which cannot fail or act: calls of make_tuple,
 * make_list and slice.  Anything else may raise, print
 * or bind a global, so it stays. */
void ir_dce(IrGraph *g);

/* ir_dce on every graph of u, counting uses in all of u's graphs too,
 * until nothing more goes. */
void ir_dce_unit(IrUnit *u);

#endif
