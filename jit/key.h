/* key.h: what the compile cache's key of a specialisation is made of,
 * before anything is lowered (key.c, docs/jit.md "The compile cache").
 * On the runtime's side and free of LLVM, so that a process can look a
 * function up in the cache without loading the code generator.
 */
#ifndef MIST_JIT_KEY_H
#define MIST_JIT_KEY_H

#include "ir/infer.h"

/* Append to out a description of everything the lowering of the
 * specialisation t of closures of g with signature sig reads (its graphs,
 * their nodes, constants and types, the graphs they reach, the globals
 * they read), in a traversal that is the same in every process: no
 * address, graphs and nodes by their place in it.  False, with *why,
 * when something cannot be described by its content (a constant that
 * is a tensor, say): the key must then be made from the lowered module.
 */
bool jit_key_describe(MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out, const char **why);

/* Append the GNU build-id of the loaded object (program or shared
 * object) that holds addr, in hex; false when it has none. */
bool jit_build_id(const void *addr, StrBuf *out);

#endif
