/* jit.h: graph mode, as the rest of Mist reaches it (docs/jit.md).
 *
 * jit_register installs the path that calls of compiled functions take
 * (vm->jit, IrJitInterface of ir/eval.h) and the builtins `jit` and
 * `set_mode`.  The code generator itself (LLVM) is a shared object,
 * libmist_jit.so, opened on the first compilation (jit/load.c), so that
 * a program that compiles nothing never loads LLVM.
 */
#ifndef MIST_JIT_JIT_H
#define MIST_JIT_JIT_H

#include "ir/infer.h"

void jit_register(MistVM *vm);

/* Graph mode on or off for the whole VM (set_mode, mist --mode=graph). */
void jit_set_graph_mode(MistVM *vm, bool on);

/* Close the code generator, if one was opened (mist_free). */
void jit_free(MistVM *vm);

/* The optimised LLVM IR that graph mode makes for g called with nargs
 * arguments of the given types, appended to out (emit-llvm, the REPL's
 * :llvm): for a closure of g over env (its captured values), or, env
 * NULL, for g before its module runs (module_code: its code, whose defs
 * the globals are).  False with an error raised when it is not
 * compiled natively (the message says why) or the code generator
 * cannot be loaded. */
bool jit_emit_llvm(MistVM *vm, IrGraph *g, const Value *env, int nargs, IrType **args, IrGraph *module_code,
                   StrBuf *out);

#endif
