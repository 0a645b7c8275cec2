/* backend.c: libmist_jit.so's one export, mist_jit_backend (jit/backend.h):
 * LLVM's code generator set up for the host CPU, and a typed graph turned
 * into native code (docs/jit.md, "How a function compiles").
 *
 * One code generator per VM: a context its modules share, and a target
 * machine for the host's CPU and features that the new pass manager
 * (LLVMRunPasses,
 * default<O2>) optimises for and the code generator compiles for.  Each
 * compilation lowers the specialisation into a module of its own; the
 * module (its bitcode) and the machine are the key of the compile cache
 * (cache.c).  On a miss the module is verified, optimised, compiled to
 * an object file and stored; on a hit the stored object is used and
 * LLVM's verifier, passes and code generator do not run.  Either way the object
 * is linked by the runtime's loader (jit/elf.c; not ORC, so that linking
 * needs no LLVM), its calls bound to the runtime's functions by name
 * (jit_rt_symbol), and its entry, named by the key, is looked up.  Every
 * LLVMErrorRef is checked and consumed; the messages become the reason
 * the function runs in the interpreter instead.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "jit/elf.h"
#include "jit/llvm/cg.h"
#include "jit/rt.h"
#include "lang/gc.h"

typedef struct Cg {
  MistVM *vm;
  LLVMContextRef ctx;
  LLVMTargetMachineRef tm;      /* for the passes: the host's CPU and features */
  LLVMTargetMachineRef quick;   /* the same, generating code without optimising it */
  char *triple;
  LLVMTargetDataRef layout;
  char *cpu, *features;         /* the host's (or MIST_JIT_CPU's), for the key */
  JitCache cache;               /* opened on the first compilation */
  bool cache_opened;
  /* the objects loaded, by key: a key seen again (the same code
   * compiled again after a guard failed) reuses its code */
  struct Loaded {
    uint8_t key[32];
    JitElf *obj;
    void *addr;
  } *loaded;
  int nloaded;
} Cg;

/* The optimisation pipeline and the code generator's settings: part
 * of the key. */
#define PIPELINE "default<O2>"
#define CODEGEN_RELOC LLVMRelocPIC
#define CODEGEN_MODEL LLVMCodeModelSmall
#define CODEGEN "PIC, small code model; a module all optnone by the code generator at -O0"

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

static LLVMTargetMachineRef host_machine(Cg *cg, LLVMCodeGenOptLevel level, const char **why) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(cg->triple, &target, &err)) {
    *why = lang_str_fmt("LLVM has no target for %s: %s", cg->triple, err ? err : "?")->data;
    LLVMDisposeMessage(err);
    return NULL;
  }
  /* the small code model and position-independent code, as jit/elf.c
   * links them: a call of a function of the module is a direct call,
   * not an indirect one through a 64-bit address (the large model,
   * LLVM's default for JITs); the loader makes the stubs for calls of
   * the runtime's functions that are out of reach */
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, cg->triple, cg->cpu, cg->features,
                                                    level, CODEGEN_RELOC, CODEGEN_MODEL);
  if (!tm) *why = "LLVM cannot make a target machine for this CPU";
  return tm;
}

static void cg_close(void *p) {
  Cg *cg = p;
  if (!cg) return;
  for (int i = 0; i < cg->nloaded; i++) jit_elf_free(cg->loaded[i].obj);
  if (cg->ctx) LLVMContextDispose(cg->ctx);
  if (cg->layout) LLVMDisposeTargetData(cg->layout);
  if (cg->tm) LLVMDisposeTargetMachine(cg->tm);
  if (cg->quick) LLVMDisposeTargetMachine(cg->quick);
  if (cg->triple) LLVMDisposeMessage(cg->triple);
  free(cg->cpu);
  free(cg->features);
  free(cg->loaded);
  jit_cache_close(&cg->cache);
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
  /* MIST_JIT_CPU=x86-64 (say) instead of the host's CPU and features:
   * the same code on every machine, for tests of the printed IR */
  const char *fixed = getenv("MIST_JIT_CPU");
  if (fixed && *fixed) {
    cg->cpu = strdup(fixed);
    cg->features = strdup("");
  } else {
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    cg->cpu = strdup(cpu);
    cg->features = strdup(features);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
  }
  if (!(cg->tm = host_machine(cg, LLVMCodeGenLevelAggressive, why)) ||
      !(cg->quick = host_machine(cg, LLVMCodeGenLevelNone, why))) {
    cg_close(cg);
    return NULL;
  }
  cg->layout = LLVMCreateTargetDataLayout(cg->tm);
  cg->ctx = LLVMContextCreate();
  return cg;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Lower t into a module for the host; false with *why.  Every module's
 * names start with the same prefix: their functions are internal but
 * the entry, which compile renames by its key, so the text (the key)
 * does not depend on what was compiled before. */
static bool lower(Cg *cg, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, Lowered *lo, int effort[2],
                  const char **why) {
  if (!jit_lower(cg->vm, ctx, g, t, sig, "m0.", lo, why)) return false;
  LLVMSetTarget(lo->mod, cg->triple);
  LLVMSetModuleDataLayout(lo->mod, cg->layout);
  effort[0] = jit_mark_effort(lo->mod, &effort[1]);
  return true;
}

/* Whether lo's module passes LLVM's verifier; false with *why (the
 * module is then disposed of).  A module is verified before it is
 * optimised or compiled, never on a hit of the compile cache: the
 * stored object's module, the same module (the key is its bitcode), was
 * verified before it was compiled and stored. */
static bool verified(Lowered *lo, const char **why) {
  char *msg = NULL;
  bool ok = !LLVMVerifyModule(lo->mod, LLVMReturnStatusAction, &msg);
  if (!ok) {
    *why = lang_str_fmt("LLVM's verifier: %s", msg ? msg : "?")->data;
    LLVMDisposeModule(lo->mod);
  }
  LLVMDisposeMessage(msg);
  return ok;
}

/* Optimise lo's module; false with *why (the module is then disposed of). */
static bool optimise(Cg *cg, Lowered *lo, const char **why) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(lo->mod, PIPELINE, cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    *why = error_text(err);
    LLVMDisposeModule(lo->mod);
    return false;
  }
  return true;
}

/* The compile cache's key of mod: its bitcode (a complete description
 * of the module, and far quicker to make than its text) and everything
 * else that decides the machine code made from it. */
static void module_key(Cg *cg, LLVMModuleRef mod, uint8_t key[32]) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  char head[512];
  int n = snprintf(head, sizeof head, "mist jit object, abi %d\nLLVM %u.%u.%u\n%s\n%s\n%s %s\n", JIT_ABI, major,
                   minor, patch, PIPELINE, CODEGEN, cg->triple, cg->cpu);
  JitSha s;
  jit_sha_init(&s);
  jit_sha_add(&s, head, (size_t)(n < (int)sizeof head ? n : (int)sizeof head - 1));
  jit_sha_add(&s, cg->features, strlen(cg->features) + 1);
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
  jit_sha_add(&s, LLVMGetBufferStart(bc), LLVMGetBufferSize(bc));
  LLVMDisposeMemoryBuffer(bc);
  jit_sha_end(&s, key);
}

/* Whether the constant c is or holds an address made from an integer. */
static bool made_address(LLVMValueRef c, int depth) {
  if (!c || !LLVMIsAConstant(c) || LLVMIsAGlobalValue(c)) return false;
  if (depth > 32) return true;   /* (deeper than the lowering makes: not stored) */
  if (LLVMIsAConstantExpr(c) && LLVMGetConstOpcode(c) == LLVMIntToPtr) return true;
  int n = LLVMGetNumOperands(c);
  for (int k = 0; k < n; k++)
    if (made_address(LLVMGetOperand(c, k), depth + 1)) return true;
  return false;
}

/* Whether mod holds no address of this process as a constant (an
 * inttoptr of an integer constant, in code or in a global's initial
 * value): lower.c makes none, and must not, for a module that does
 * would be wrong in another process. */
static bool storable(LLVMModuleRef mod) {
  for (LLVMValueRef gv = LLVMGetFirstGlobal(mod); gv; gv = LLVMGetNextGlobal(gv))
    if (made_address(LLVMGetInitializer(gv), 0)) return false;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        int n = LLVMGetNumOperands(i);
        if (LLVMGetInstructionOpcode(i) == LLVMIntToPtr && n == 1 && LLVMIsAConstant(LLVMGetOperand(i, 0)))
          return false;
        for (int k = 0; k < n; k++)
          if (made_address(LLVMGetOperand(i, k), 0)) return false;
      }
  return true;
}

/* The object file of lo's module (disposed of), optimised and compiled:
 * NULL with *why.  ms[0], ms[1]: the time the passes and the code
 * generator took. */
static LLVMMemoryBufferRef compile_object(Cg *cg, Lowered *lo, bool quick, double ms[2], const char **why) {
  double t0 = now_ms();
  if (!quick && !optimise(cg, lo, why)) return NULL;
  double t1 = now_ms();
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(quick ? cg->quick : cg->tm, lo->mod, LLVMObjectFile, &err, &buf)) {
    *why = lang_str_fmt("LLVM's code generator: %s", err ? err : "?")->data;
    buf = NULL;
  }
  LLVMDisposeMessage(err);
  LLVMDisposeModule(lo->mod);
  ms[0] = t1 - t0;
  ms[1] = now_ms() - t1;
  return buf;
}

/* Link the object obj (size bytes, not kept) into this process with the
 * runtime's loader and remember it under key; its entry's address, or
 * NULL with *why.  label names its functions in the perf map. */
static void *link_object(Cg *cg, const uint8_t key[32], const void *obj, size_t size, const char *entry,
                         const char *label, const char **why) {
  char reason[JIT_ELF_WHY];
  JitElf *e = jit_elf_load(obj, size, jit_rt_symbol, NULL, label, reason);
  if (!e) {
    *why = lang_str_fmt("the object cannot be linked: %s", reason)->data;
    return NULL;
  }
  void *addr = jit_elf_symbol(e, entry);
  struct Loaded *more = addr ? realloc(cg->loaded, (size_t)(cg->nloaded + 1) * sizeof *more) : NULL;
  if (!more) {
    *why = addr ? "out of memory" : lang_str_fmt("the object has no %s", entry)->data;
    jit_elf_free(e);
    return NULL;
  }
  cg->loaded = more;
  memcpy(cg->loaded[cg->nloaded].key, key, 32);
  cg->loaded[cg->nloaded].obj = e;
  cg->loaded[cg->nloaded++].addr = addr;
  return addr;
}

static JitCode *cg_compile(void *p, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, const char **why) {
  Cg *cg = p;
  if (!cg->cache_opened) {
    jit_cache_open(&cg->cache);
    cg->cache_opened = true;
  }
  double t0 = now_ms();
  Lowered lo;
  LLVMContextRef ctx = cg->ctx;
  int effort[2];
  if (!lower(cg, ctx, g, t, sig, &lo, effort, why)) return NULL;
  uint8_t key[32];
  module_key(cg, lo.mod, key);
  bool keep = storable(lo.mod);
  char entry[64] = "mist.";
  jit_hex(key, 16, entry + 5);
  double t1 = now_ms();
  const char *note = NULL, *unsaved = NULL;
  void *addr = NULL;
  for (int i = 0; i < cg->nloaded && !addr; i++)
    if (memcmp(cg->loaded[i].key, key, 32) == 0) addr = cg->loaded[i].addr;
  if (addr) {
    LLVMDisposeModule(lo.mod);
    note = lang_str_fmt("lowered %.2f ms, the same code as before", t1 - t0)->data;
  } else {
    size_t size = 0;
    void *obj = keep ? jit_cache_get(&cg->cache, key, &size) : NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (obj) {
      LLVMDisposeModule(lo.mod);
      note = lang_str_fmt("cached: lowered %.2f ms, read %.2f ms", t1 - t0, now_ms() - t1)->data;
    } else {
      if (!verified(&lo, why)) return NULL;
      LLVMSetValueName2(LLVMGetNamedFunction(lo.mod, lo.entry), entry, strlen(entry));
      double ms[2];
      if (!(buf = compile_object(cg, &lo, effort[0] == effort[1], ms, why))) return NULL;
      note = lang_str_fmt("lowered %.2f ms, optimised %.2f ms (%d of %d functions), code %.2f ms", t1 - t0, ms[0],
                          effort[1] - effort[0], effort[1], ms[1])->data;
      if (!keep) unsaved = "not cached: the module holds an address of this process";
      else if (!cg->cache.dir) unsaved = cg->cache.off[0] ? cg->cache.off : NULL;
      else jit_cache_put(&cg->cache, key, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), &unsaved);
    }
    double t2 = now_ms();
    const char *label = g->display ? g->display->data : g->name->data;
    if (buf) {
      addr = link_object(cg, key, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), entry, label, why);
      LLVMDisposeMemoryBuffer(buf);
    } else {
      addr = link_object(cg, key, obj, size, entry, label, why);
      free(obj);
    }
    if (!addr) return NULL;
    note = lang_str_fmt("%s, linked %.2f ms%s%s", note, now_ms() - t2, unsaved ? "; " : "", unsaved ? unsaved : "")->data;
  }
  JitCode *code = lang_alloc(sizeof *code);
  code->entry = (bool (*)(const JitCx *, const Value *, const Value *, Value *))(uintptr_t)addr;
  code->cx = (JitCx){vm, lo.sites, lo.consts};
  code->nguards = lo.nguards;
  code->guards = lo.guards;
  code->note = note;
  return code;
}

static bool cg_emit_llvm(void *p, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out,
                         const char **why) {
  Cg *cg = p;
  Lowered lo;
  /* a context of its own: the module is printed and dropped */
  LLVMContextRef ctx = LLVMContextCreate();
  int effort[2];
  bool ok = lower(cg, ctx, g, t, sig, &lo, effort, why) && verified(&lo, why) && optimise(cg, &lo, why);
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
