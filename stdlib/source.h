/* source.h: functions printed as Mist source (source.c; the text form
 * is described in docs/ir.md, "As Mist source").  It lives above
 * autodiff/, which it calls to fold J of a known function into that
 * function's printed transform. */
#ifndef MIST_STDLIB_SOURCE_H
#define MIST_STDLIB_SOURCE_H

#include "ir/ir.h"

/* Append to out graph g and the graphs it uses, as Mist source (one
 * def that parses and runs). */
void std_print_source(MistVM *vm, IrGraph *g, StrBuf *out);

/* Append to out the Mist source of function value f (a closure: user
 * code, a lambda, or what a transformation made, such as grad(f)).  The
 * values f captured are listed first, as comments, where the printout
 * reads them by name.  J of a function the printout knows (a captured
 * value, a constant, a global as it is now) is folded into that
 * function's transform, printed as top-level defs, so the printout of
 * grad(f) is the whole derivative program: pasted after the program
 * that defines f, it runs and gives grad(f)'s results (docs/autodiff.md,
 * "Reading a derivative").  It only reads f, apart from making the
 * transforms (ad_reverse) it prints; an error in making one leaves its
 * J as a call. */
void std_print_source_value(MistVM *vm, Value f, StrBuf *out);

#endif
