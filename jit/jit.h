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

#endif
