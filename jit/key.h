/* key.h: what the compile cache's key of a specialisation is made of,
 * before anything is lowered (key.c, docs/jit.md "The compile cache").
 * On the runtime's side and free of LLVM, so that a process can look a
 * function up in the cache without loading the code generator.
 */
#ifndef MIST_JIT_KEY_H
#define MIST_JIT_KEY_H

#include "jit/backend.h"

/* Append to out a description of everything the lowering of the
 * specialisation t of closures of g with signature sig reads (its graphs,
 * their nodes, constants and types, the graphs they reach, the globals
 * they read), in a traversal that is the same in every process: no
 * address, graphs and nodes by their place in it.  False, with *why,
 * when something cannot be described by its content (a constant that
 * is a tensor, say): the key must then be made from the lowered module.
 * The JitKey returned numbers what the description met, for the tables
 * (below). */
typedef struct JitKey JitKey;
JitKey *jit_key_describe(MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out, const char **why);

/* The tables a lowering of the same specialisation built, in the terms
 * of k's description, and the count of IrNode serials it took,
 * appended to out: to be stored with the object.
 * False when something in them is not in the description (a node of a
 * specialisation the lowering made itself, a constant that is no
 * builtin, str, closure that captured nothing or graph): a hit must
 * then lower to have them. */
bool jit_key_save_tables(JitKey *k, const JitSite *sites, int nsites, const Value *consts, int nconsts,
                         const JitGuard *guards, int nguards, uint64_t serials, StrBuf *out);
/* The tables stored, rebuilt from k's description (made in this
 * process), and the serials the lowering took: false when they cannot
 * be (malformed, a file this process has not read, a global no longer
 * bound).  They take no serial. */
bool jit_key_load_tables(JitKey *k, const void *data, size_t size, JitSite **sites, int *nsites, Value **consts,
                         int *nconsts, JitGuard **guards, int *nguards, uint64_t *serials);

/* Append the GNU build-id of the loaded object (program or shared
 * object) that holds addr, in hex; false when it has none. */
bool jit_build_id(const void *addr, StrBuf *out);

#endif
