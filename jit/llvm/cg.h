/* cg.h: what the files of libmist_jit.so share (docs/jit.md, "How a
 * function compiles"): the code generator of a VM (backend.c), the
 * lowering of typed graphs to an LLVM module (lower.c); the runtime
 * functions compiled code calls are the runtime's (jit/rt.h).
 */
#ifndef MIST_JIT_LLVM_CG_H
#define MIST_JIT_LLVM_CG_H

#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "jit/backend.h"

/* A module lowered from a specialisation, before LLVM optimises and
 * compiles it.  The tables are on the GC heap. */
typedef struct Lowered {
  LLVMModuleRef mod;
  const char *entry;        /* the name of its entry function (JitCode.entry) */
  JitSite *sites;
  int nsites;
  Value *consts;
  int nconsts;
  JitGuard *guards;
  int nguards;
} Lowered;

/* Lower the specialisation t of graph g (signature sig: g's parameters'
 * types, then its free variables') into a new module of ctx whose
 * global names start with prefix.  False with *why (a GC string) when
 * something in it cannot be compiled; the module is then disposed of.
 * The module holds no address of this process (objects by index
 * through cx, the runtime by name): the compile cache (cache.c) links
 * its object into other processes.  The module is
 * not verified: what compiles it verifies it first (backend.c), so that
 * a hit of the compile cache does not pay for LLVM's verifier. */
bool jit_lower(MistVM *vm, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, const char *prefix,
               Lowered *out, const char **why);

/* Mark the functions of mod that LLVM need not optimise (effort.c)
 * optnone: returns how many, and the number of functions in *nfns.
 * When they are all marked, the module is compiled without the passes
 * and by the quick code generator. */
int jit_mark_effort(LLVMModuleRef mod, int *nfns);

/* Link Mist's own f32 vector math functions that mod's fused loops
 * declare (mist_vec256_exp_f32 and friends) into mod, internal and
 * always inlined (kernels.c); false with *why. */
bool jit_link_kernels(LLVMModuleRef mod, const char **why);

/* Test the base cases of mod's optimised recursions before their
 * native calls (peek.c); returns how many frames were peeked at.
 * jit_mark_effort calls it once the marks are made. */
int jit_peek_base_cases(LLVMModuleRef mod);

/* SHA-256, for the compile cache's keys (cache.c). */
typedef struct JitSha {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
} JitSha;
void jit_sha_init(JitSha *s);
void jit_sha_add(JitSha *s, const void *data, size_t n);
void jit_sha_end(JitSha *s, uint8_t out[32]);
/* n bytes as 2n hex digits and a NUL, into out. */
void jit_hex(const uint8_t *bytes, int n, char *out);

/* The persistent cache of object files (cache.c, docs/jit.md): its
 * folder, or none (dir NULL) and why in off (empty when it was turned
 * off on purpose: MIST_JIT_CACHE=0). */
typedef struct JitCache {
  char *dir;
  uint64_t cap;            /* bytes the folder may hold */
  uint64_t total;          /* bytes it held when last read, and written since */
  bool scanned;            /* read once (cache.c's prune) */
  char off[4096];
} JitCache;
void jit_cache_open(JitCache *c);
void jit_cache_close(JitCache *c);
/* The object stored for key (malloc'd, its size in *size, followed by
 * its tables, *tables bytes, none when 0; the hash of the module it was
 * made from in module), or NULL when there is none or the entry is not
 * whole and valid. */
void *jit_cache_get(JitCache *c, const uint8_t key[32], size_t *size, uint8_t module[32], size_t *tables);
/* Store an object and its tables for key, made from the module whose
 * hash is module; false with *why (c->off) when it cannot be written. */
bool jit_cache_put(JitCache *c, const uint8_t key[32], const uint8_t module[32], const void *obj, size_t size,
                   const void *tables, size_t ntables, const char **why);

#endif
