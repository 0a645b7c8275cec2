/* cg.h: what the files of libmist_jit.so share (docs/jit.md, "How a
 * function compiles"): the code generator of a VM (backend.c), the
 * lowering of typed graphs to an LLVM module (lower.c) and the runtime
 * functions compiled code calls (rt.c).
 */
#ifndef MIST_JIT_LLVM_CG_H
#define MIST_JIT_LLVM_CG_H

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
 * something in it cannot be compiled; the module is then disposed of. */
bool jit_lower(MistVM *vm, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, const char *prefix,
               Lowered *out, const char **why);

/* The runtime functions compiled code calls (rt.c), by the names the
 * lowering declares them under. */
typedef struct JitHelper {
  const char *name;
  void *addr;
} JitHelper;
extern const JitHelper jit_helpers[];
extern const int jit_nhelpers;
/* The vector math functions of the host (rt.c), *n of them. */
const JitHelper *jit_vec_helpers(int *n);

#endif
