/* elf.h: a loader of ELF64 x86-64 relocatable objects (elf.c): the
 * linker of graph mode's compiled code, in the runtime, so that running
 * an object from the compile cache needs no LLVM (docs/jit.md, "How a
 * function compiles").
 */
#ifndef MIST_JIT_ELF_H
#define MIST_JIT_ELF_H

#include <stddef.h>

/* An object loaded into memory of its own: its code executable, its
 * constants read-only, its data writable. */
typedef struct JitElf JitElf;

/* The address of an undefined symbol the object refers to, or NULL
 * when there is none. */
typedef void *(*JitElfResolve)(void *ud, const char *name);

/* Room for the reason an object is refused. */
enum { JIT_ELF_WHY = 256 };

/* Load the object file obj (size bytes, not kept), its undefined
 * symbols resolved through resolve; NULL with the reason in why when it
 * is malformed, truncated or holds something the loader does not know
 * (a relocation or section kind).  label names its functions in the
 * perf map (MIST_JIT_PERFMAP=1) and may be NULL. */
JitElf *jit_elf_load(const void *obj, size_t size, JitElfResolve resolve, void *ud, const char *label,
                     char why[JIT_ELF_WHY]);

/* The address of the global symbol called name that e defines, or NULL. */
void *jit_elf_symbol(const JitElf *e, const char *name);

/* Unmap e's memory and free it (NULL is fine). */
void jit_elf_free(JitElf *e);

#endif
