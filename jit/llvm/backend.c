/* backend.c: libmist_jit.so's one export, mist_jit_backend (jit/backend.h):
 * LLVM's ORC LLJIT set up for the host CPU, and a typed graph turned into
 * native code (docs/jit.md, "How a function compiles").
 *
 * One code generator per VM: an LLJIT whose main JITDylib holds the
 * runtime functions compiled code calls (rt.c) as absolute symbols, a
 * thread-safe context its modules share, and a target machine for the
 * host's CPU and features that the new pass manager (LLVMRunPasses,
 * default<O2>) optimises for.  Each compilation lowers the
 * specialisation into a module of its own, whose names start with a
 * prefix unique in the VM, verifies it, optimises it, hands it to the
 * JIT and looks its entry up.  Every LLVMErrorRef is checked and
 * consumed; the messages become the reason the function runs in the
 * interpreter instead.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "jit/llvm/cg.h"
#include "lang/gc.h"

typedef struct Cg {
  MistVM *vm;
  LLVMOrcLLJITRef jit;
  LLVMOrcThreadSafeContextRef tsc;
  LLVMTargetMachineRef tm;      /* for the passes: the host's CPU and features */
  char *triple;
  LLVMTargetDataRef layout;
  unsigned nmodules;
} Cg;

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static bool llvm_ready;

static void init_llvm(void) {
  llvm_ready = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter();
}

/* The message of err (consumed), as a GC string. */
static const char *error_text(LLVMErrorRef err) {
  char *m = LLVMGetErrorMessage(err);
  const char *s = lang_str_fmt("LLVM: %s", m)->data;
  LLVMDisposeErrorMessage(m);
  return s;
}

static LLVMTargetMachineRef host_machine(Cg *cg, const char **why) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(cg->triple, &target, &err)) {
    *why = lang_str_fmt("LLVM has no target for %s: %s", cg->triple, err ? err : "?")->data;
    LLVMDisposeMessage(err);
    return NULL;
  }
  /* MIST_JIT_CPU=x86-64 (say) instead of the host's CPU and features:
   * the same code on every machine, for tests of the printed IR */
  const char *fixed = getenv("MIST_JIT_CPU");
  char *cpu = fixed && *fixed ? NULL : LLVMGetHostCPUName();
  char *features = fixed && *fixed ? NULL : LLVMGetHostCPUFeatures();
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, cg->triple, cpu ? cpu : fixed, features ? features : "",
                                                    LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                                    LLVMCodeModelJITDefault);
  if (cpu) LLVMDisposeMessage(cpu);
  if (features) LLVMDisposeMessage(features);
  if (!tm) *why = "LLVM cannot make a target machine for this CPU";
  return tm;
}

static void cg_close(void *p) {
  Cg *cg = p;
  if (!cg) return;
  if (cg->jit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(cg->jit);
    if (e) LLVMConsumeError(e);
  }
  if (cg->tsc) LLVMOrcDisposeThreadSafeContext(cg->tsc);
  if (cg->layout) LLVMDisposeTargetData(cg->layout);
  if (cg->tm) LLVMDisposeTargetMachine(cg->tm);
  if (cg->triple) LLVMDisposeMessage(cg->triple);
  free(cg);
}

static void *cg_open(MistVM *vm, const char **why) {
  pthread_once(&llvm_once, init_llvm);
  if (!llvm_ready) {
    *why = "LLVM cannot generate code for this machine";
    return NULL;
  }
  Cg *cg = calloc(1, sizeof *cg);
  if (!cg) {
    *why = "out of memory";
    return NULL;
  }
  cg->vm = vm;
  cg->triple = LLVMGetDefaultTargetTriple();
  LLVMTargetMachineRef jtm = NULL;
  if (!(cg->tm = host_machine(cg, why)) || !(jtm = host_machine(cg, why))) {
    cg_close(cg);
    return NULL;
  }
  cg->layout = LLVMCreateTargetDataLayout(cg->tm);
  /* the JIT compiles for the same machine the passes optimise for
   * (takes ownership of jtm) */
  LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&cg->jit, b);   /* takes ownership of b */
  if (err) {
    *why = error_text(err);
    cg->jit = NULL;
    cg_close(cg);
    return NULL;
  }
  cg->tsc = LLVMOrcCreateNewThreadSafeContext();
  /* the runtime functions, at their addresses in this process */
  int nvec;
  const JitHelper *vec = jit_vec_helpers(&nvec);
  int nsyms = jit_nhelpers + nvec;
  LLVMOrcCSymbolMapPairs syms = calloc((size_t)nsyms, sizeof *syms);
  for (int i = 0; i < nsyms; i++) {
    const JitHelper *h = i < jit_nhelpers ? &jit_helpers[i] : &vec[i - jit_nhelpers];
    syms[i].Name = LLVMOrcLLJITMangleAndIntern(cg->jit, h->name);
    syms[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)h->addr;
    syms[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    syms[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(syms, (size_t)nsyms);
  free(syms);
  err = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(cg->jit), mu);
  if (err) {
    LLVMOrcDisposeMaterializationUnit(mu);
    *why = error_text(err);
    cg_close(cg);
    return NULL;
  }
  return cg;
}

/* Lower and optimise t; false with *why. */
static bool build(Cg *cg, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, Lowered *lo,
                  const char **why) {
  const char *prefix = lang_str_fmt("m%u.", cg->nmodules++)->data;
  if (!jit_lower(cg->vm, ctx, g, t, sig, prefix, lo, why)) return false;
  LLVMSetTarget(lo->mod, cg->triple);
  LLVMSetModuleDataLayout(lo->mod, cg->layout);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(lo->mod, "default<O2>", cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    *why = error_text(err);
    LLVMDisposeModule(lo->mod);
    return false;
  }
  return true;
}

static JitCode *cg_compile(void *p, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, const char **why) {
  Cg *cg = p;
  Lowered lo;
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(cg->tsc);
  if (!build(cg, ctx, g, t, sig, &lo, why)) return NULL;
  /* the JIT takes ownership of the module */
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(lo.mod, cg->tsc);
  LLVMErrorRef err = LLVMOrcLLJITAddLLVMIRModule(cg->jit, LLVMOrcLLJITGetMainJITDylib(cg->jit), tsm);
  if (err) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    *why = error_text(err);
    return NULL;
  }
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(cg->jit, &addr, lo.entry);
  if (err) {
    *why = error_text(err);
    return NULL;
  }
  JitCode *code = lang_alloc(sizeof *code);
  code->entry = (bool (*)(const JitCx *, const Value *, const Value *, Value *))(uintptr_t)addr;
  code->cx = (JitCx){vm, lo.sites, lo.consts};
  code->nguards = lo.nguards;
  code->guards = lo.guards;
  return code;
}

static bool cg_emit_llvm(void *p, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out,
                         const char **why) {
  Cg *cg = p;
  Lowered lo;
  /* a context of its own: the module is printed and dropped */
  LLVMContextRef ctx = LLVMContextCreate();
  unsigned n = cg->nmodules;
  cg->nmodules = 0;   /* the printout's names do not depend on what ran before */
  bool ok = build(cg, ctx, g, t, sig, &lo, why);
  cg->nmodules = n > cg->nmodules ? n : cg->nmodules;
  if (ok) {
    char *text = LLVMPrintModuleToString(lo.mod);
    sb_adds(out, text);
    LLVMDisposeMessage(text);
    LLVMDisposeModule(lo.mod);
  }
  LLVMContextDispose(ctx);
  (void)vm;
  return ok;
}

__attribute__((visibility("default"))) const JitBackend mist_jit_backend = {
  JIT_ABI, cg_open, cg_compile, cg_emit_llvm, cg_close,
};
