/* backend.h: the native code generator as graph mode's runtime reaches
 * it (docs/jit.md).
 *
 * The code generator is LLVM's, in a shared object of its own,
 * libmist_jit.so (jit/llvm/), which jit/load.c opens on the first
 * compilation, so that a program that compiles nothing never loads
 * LLVM.  It exports one symbol, `mist_jit_backend`, a JitBackend: the
 * one interface between the two.  The shared object calls back into the
 * program that opened it (ir/ for the typed graphs, lang/ for values
 * and errors): the mist binary and the test programs export those
 * functions (jit/exports.list).
 */
#ifndef MIST_JIT_BACKEND_H
#define MIST_JIT_BACKEND_H

#include "ir/infer.h"

/* Bumped whenever these structs or the runtime helpers compiled code
 * calls (jit/rt.c) change, so that a stale shared object is
 * refused rather than misread, and a cached object made for other
 * helpers is never linked (it is part of the compile cache's key). */
#define JIT_ABI 5

/* A place compiled code can fail at: the node, and the graph whose
 * frame it runs in (a function or module shows in tracebacks, as in
 * the interpreter). */
typedef struct JitSite {
  IrNode *node;
  IrGraph *frame;
  IrType *type;        /* for a value checked against its type: the type */
} JitSite;

/* What compiled code reads at run time: the VM, its failure sites and
 * its constants that are objects (builtins, strs, closures), by index.
 * All on the GC heap, kept alive by the JitCode. */
typedef struct JitCx {
  MistVM *vm;
  const JitSite *sites;
  const Value *consts;
} JitCx;

/* A global the code read when it was compiled and assumed to keep: it
 * is still `expect` (for a closure that captured nothing, any closure
 * of the same graph), or the code is stale. */
typedef struct JitGuard {
  ObjModule *module;
  ObjStr *name;
  Value expect;
} JitGuard;

/* Native code for one function and signature.  entry runs it on the
 * bound arguments and the closure's captured values (env, in the
 * order of the original graph's free variables), which must match the
 * signature it was compiled for: false with the error (span,
 * traceback) in cx->vm, as the interpreter would have raised it. */
typedef struct JitCode {
  bool (*entry)(const JitCx *cx, const Value *params, const Value *env, Value *out);
  JitCx cx;
  int nguards;
  JitGuard *guards;
  const char *note;    /* for MIST_JIT_LOG: where the time went, whether
                          the code came from the compile cache */
} JitCode;

typedef struct JitBackend {
  int abi;                                  /* JIT_ABI */
  /* The code generator for vm (LLVM set up for the host CPU), or NULL
   * with *why (a GC string) saying why not. */
  void *(*open)(MistVM *vm, const char **why);
  /* Native code for the specialisation t of closures of graph g whose
   * signature is sig (g's nparams parameter types, then its nfv free
   * variables'), or NULL with *why: the first thing that cannot be
   * compiled, with its place. */
  JitCode *(*compile)(void *cg, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, const char **why);
  /* The optimised LLVM IR of the same, appended to out; false with *why. */
  bool (*emit_llvm)(void *cg, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out,
                    const char **why);
  /* Frees what open made and every JitCode compiled through it. */
  void (*close)(void *cg);
} JitBackend;

/* t without the values inference keeps for ints, bools, strs and
 * slices, and lists of any length: the types a signature keeps (the
 * runtime's, jit/run.c). */
IrType *jit_widen(IrType *t);

#endif
