/* backend.c: libmist_jit.so's one export, mist_jit_backend (jit/backend.h):
 * LLVM's code generator set up for the host CPU, and a typed graph turned
 * into native code (docs/jit.md, "How a function compiles").
 *
 * One code generator per VM: a context its modules share, and a target
 * machine for the host's CPU and features that the new pass manager
 * (LLVMRunPasses, default<O2>) optimises for and the code generator
 * compiles for.  The key of the compile cache (cache.c) is made first,
 * from the typed graphs (jit/key.c) and the machine, or, where the
 * graphs cannot be described, from the lowered module's bitcode.  On a
 * miss the specialisation is lowered into a module of its own,
 * verified, optimised, compiled to an object file and stored with the
 * tables its code reads; on a hit the stored object is used, its tables
 * are read back (or, where they could not be stored, made by lowering),
 * and LLVM's verifier, passes and code generator do not run.  Either
 * way the object is linked by the runtime's loader (jit/elf.c; not ORC, so that linking
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
#include "jit/key.h"
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
  /* the version of the code that lowers graphs and of the program
   * whose graphs they are (their build-ids), for keys made from the
   * graphs; NULL when either has none: keys are then made from the
   * lowered module */
  char *version;
  bool check;                   /* MIST_JIT_CACHE_CHECK=1: a hit is lowered too, and checked */
  /* the objects loaded, by key: a key seen again (the same code
   * compiled again after a guard failed) reuses its code */
  struct Loaded {
    uint8_t key[32];
    JitElf *obj;
    void *addr;
    uint8_t module[32];         /* the hash of its module (module_sum) */
    void *tables;               /* its tables as stored (jit/key.c), or NULL */
    size_t ntables;
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
  for (int i = 0; i < cg->nloaded; i++) {
    jit_elf_free(cg->loaded[i].obj);
    free(cg->loaded[i].tables);
  }
  if (cg->ctx) LLVMContextDispose(cg->ctx);
  if (cg->layout) LLVMDisposeTargetData(cg->layout);
  if (cg->tm) LLVMDisposeTargetMachine(cg->tm);
  if (cg->quick) LLVMDisposeTargetMachine(cg->quick);
  if (cg->triple) LLVMDisposeMessage(cg->triple);
  free(cg->cpu);
  free(cg->features);
  free(cg->version);
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
  StrBuf ids;
  sb_init(&ids);
  bool ids_known = jit_build_id((const void *)(uintptr_t)cg_open, &ids);
  sb_addc(&ids, ' ');
  if (ids_known && jit_build_id((const void *)(uintptr_t)jit_build_id, &ids)) cg->version = strdup(ids.data);
  const char *check = getenv("MIST_JIT_CACHE_CHECK");
  cg->check = check && *check && strcmp(check, "0") != 0;
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
  if (!jit_link_kernels(lo->mod, why)) {
    LLVMDisposeModule(lo->mod);
    return false;
  }
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

/* What decides the machine code beside what is compiled: the target,
 * the CPU and its features, LLVM's version, the pipeline and the code
 * generator's settings, and the runtime helpers' ABI. */
static void machine_key(Cg *cg, JitSha *s, const char *what) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  char head[512];
  int n = snprintf(head, sizeof head, "mist jit object, abi %d, %s\nLLVM %u.%u.%u\n%s\n%s\n%s %s\n", JIT_ABI, what,
                   major, minor, patch, PIPELINE, CODEGEN, cg->triple, cg->cpu);
  jit_sha_add(s, head, (size_t)(n < (int)sizeof head ? n : (int)sizeof head - 1));
  jit_sha_add(s, cg->features, strlen(cg->features) + 1);
}

/* The key of mod: its bitcode (a complete description of the module,
 * and far quicker to make than its text) and the machine.  The key of
 * an entry whose graphs cannot be described (graph_key), and what a
 * check of a hit compares. */
static void module_key(Cg *cg, LLVMModuleRef mod, uint8_t key[32]) {
  JitSha s;
  jit_sha_init(&s);
  machine_key(cg, &s, "from its module");
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
  jit_sha_add(&s, LLVMGetBufferStart(bc), LLVMGetBufferSize(bc));
  LLVMDisposeMemoryBuffer(bc);
  jit_sha_end(&s, key);
}

/* What a check of a hit compares (MIST_JIT_CACHE_CHECK): a SHA-256 of
 * mod's text.  Not its bitcode: that holds things of the LLVM context
 * the module was made in (the names of metadata kinds it has met), so
 * the same module made later in a process can be other bitcode. */
static void module_sum(LLVMModuleRef mod, uint8_t sum[32]) {
  char *text = LLVMPrintModuleToString(mod);
  JitSha s;
  jit_sha_init(&s);
  jit_sha_add(&s, text, strlen(text));
  jit_sha_end(&s, sum);
  LLVMDisposeMessage(text);
}

/* Whether an entry's module sum is none: it was made by a process
 * that did not check (module_sum is made only by one that does). */
static bool unsummed(const uint8_t sum[32]) {
  for (int i = 0; i < 32; i++)
    if (sum[i]) return false;
  return true;
}

/* The key of the specialisation t of g, made before it is lowered:
 * the typed graphs the lowering reads (jit/key.c), the version of the
 * code that lowers them and of the program (their build-ids) and the
 * machine.  False when the graphs cannot be described, or no version
 * is known: the key is then the module's. */
static JitKey *graph_key(Cg *cg, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, uint8_t key[32],
                         const char **why) {
  if (!cg->version) {
    *why = "no build-id";
    return NULL;
  }
  StrBuf d;
  sb_init(&d);
  JitKey *k = jit_key_describe(vm, g, t, sig, &d, why);
  if (!k) return NULL;
  JitSha s;
  jit_sha_init(&s);
  machine_key(cg, &s, "from its graphs");
  jit_sha_add(&s, cg->version, strlen(cg->version) + 1);
  jit_sha_add(&s, d.data, d.len);
  jit_sha_end(&s, key);
  return k;
}

/* A hit that is not what lowering its function makes now (its module,
 * or the tables read back): the key missed something the lowering
 * reads, or the tables were stored or read back wrong, and the code
 * would be stale.  Loud, for it is found only where MIST_JIT_CACHE_CHECK
 * is set (every test): a process that ran on would run wrong code
 * silently. */
static void stale_hit(MistVM *vm, IrGraph *g, const char *what) {
  const char *file = g->span.file >= 0 && g->span.file < vm->nfiles ? vm->files[g->span.file].path->data : "?";
  fprintf(stderr,
          "mist: internal error: the compile cache's entry for %s (%s:%d) is not what lowering it makes now: "
          "%s (MIST_JIT_CACHE_CHECK)\n",
          g->display ? g->display->data : g->name->data, file, g->span.line, what);
  abort();
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

/* Whether two constants are the same as compiled code sees them: the
 * same object, or a closure that captured nothing, a graph constant or
 * a str made again (what a lowering makes anew each time). */
static bool same_const(Value a, Value b) {
  if (a.tag != b.tag) return false;
  if (a.tag != V_OBJ || a.o == b.o) return a.i == b.i;
  if (a.o->kind != b.o->kind) return false;
  switch (a.o->kind) {
  case O_FUNC: return AS_FUNC(a)->nenv == 0 && AS_FUNC(b)->nenv == 0 && AS_FUNC(a)->graph == AS_FUNC(b)->graph;
  case O_GRAPH: return AS_GRAPH(a)->graph == AS_GRAPH(b)->graph;
  case O_STR: return lang_str_eq(AS_STR(a), AS_STR(b));
  default: return false;
  }
}

/* Whether the tables a hit read (code) are those a check's lowering
 * built (lo): the same nodes (or a graph constant of the same graph
 * and place), frames, types, constants and guards. */
static bool same_tables(const JitCode *code, int nsites, int nconsts, const Lowered *lo) {
  if (nsites != lo->nsites || nconsts != lo->nconsts || code->nguards != lo->nguards) return false;
  for (int i = 0; i < nsites; i++) {
    const JitSite *a = &code->cx.sites[i], *b = &lo->sites[i];
    bool node = a->node == b->node ||
                (a->node && b->node && a->node->kind == IR_CONST && b->node->kind == IR_CONST &&
                 same_const(a->node->value, b->node->value) && a->node->span.file == b->node->span.file &&
                 a->node->span.line == b->node->span.line && a->node->span.col == b->node->span.col &&
                 a->node->span.len == b->node->span.len);
    bool type = a->type == b->type || (a->type && b->type && ir_type_eq(a->type, b->type));
    if (!node || a->frame != b->frame || !type) return false;
  }
  for (int i = 0; i < nconsts; i++)
    if (!same_const(code->cx.consts[i], lo->consts[i])) return false;
  for (int i = 0; i < lo->nguards; i++) {
    const JitGuard *a = &code->guards[i], *b = &lo->guards[i];
    if (a->module != b->module || !lang_str_eq(a->name, b->name) || !same_const(a->expect, b->expect)) return false;
  }
  return true;
}

static JitCode *cg_compile(void *p, MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, const char **why) {
  Cg *cg = p;
  if (!cg->cache_opened) {
    jit_cache_open(&cg->cache);
    cg->cache_opened = true;
  }
  double t0 = now_ms();
  uint8_t key[32], module[32], stored[32];
  const char *no_key = NULL;
  JitKey *jk = graph_key(cg, vm, g, t, sig, key, &no_key);
  double t1 = now_ms();
  const char *keyed = jk ? lang_str_fmt(" (keyed %.2f ms)", t1 - t0)->data
                         : lang_str_fmt(" (keyed by its module: %s)", no_key)->data;
  /* what the code is: where it came from (in this JIT already, the
   * cache, or LLVM) and its tables (stored with it, or lowered) */
  void *addr = NULL;
  void *obj = NULL, *tables = NULL;
  size_t size = 0, ntables = 0;
  JitCode *code = lang_alloc(sizeof *code);
  code->cx.vm = vm;
  Lowered lo = {0};
  bool lowered = false, have_module = false;
  int effort[2] = {0, 0};
  double tl = 0, tr = 0;
  uint64_t serials = 0, stored_serials = 0;   /* the IrNode serials the lowering took (ir_serials_skip) */
  int nsites = 0, nconsts = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (!jk || pass == 1) {
      /* lower: where the key is the module's, to have it; else for the
       * tables of a hit that has none, or for a miss */
      double tl0 = now_ms();
      LLVMContextRef ctx = cg->ctx;
      uint64_t s0 = ir_serials_made();
      if (!lower(cg, ctx, g, t, sig, &lo, effort, why)) {
        free(obj);
        return NULL;
      }
      serials = ir_serials_made() - s0;
      lowered = true;
      tl = now_ms() - tl0;
      if (!jk) {
        module_key(cg, lo.mod, key);
        memcpy(module, key, 32);
        have_module = true;
      }
    }
    if (pass == 1) break;   /* (looked up on the first) */
    for (int i = 0; i < cg->nloaded && !addr; i++)
      if (memcmp(cg->loaded[i].key, key, 32) == 0) {
        addr = cg->loaded[i].addr;
        memcpy(stored, cg->loaded[i].module, 32);
        tables = cg->loaded[i].tables;
        ntables = cg->loaded[i].ntables;
      }
    if (!addr && (jk || storable(lo.mod))) {
      double tr0 = now_ms();
      obj = jit_cache_get(&cg->cache, key, &size, stored, &ntables);
      tr = now_ms() - tr0;
      tables = obj && ntables ? (char *)obj + size : NULL;
      if (obj && cg->check && unsummed(stored)) {
        /* made where no check ran: nothing to compare a check with, so
         * made anew (and stored with its sum) */
        free(obj);
        obj = tables = NULL;
      }
    }
    if (!addr && !obj) {
      if (jk) continue;   /* a miss: lowered on the next pass */
      break;
    }
    /* a hit: its tables rebuilt, without lowering, where they were stored */
    if (jk && tables &&
        jit_key_load_tables(jk, tables, ntables, (JitSite **)&code->cx.sites, &nsites, (Value **)&code->cx.consts,
                            &nconsts, &code->guards, &code->nguards, &stored_serials))
      break;
    tables = NULL;
    if (lowered) break;
  }
  /* a hit is checked where MIST_JIT_CACHE_CHECK is set: lowered (if it
   * was not), its module and tables compared with those stored */
  if ((addr || obj) && cg->check && jk) {
    Lowered chk = lo;
    if (!lowered) {
      LLVMContextRef ctx = cg->ctx;
      int eff[2];
      if (!lower(cg, ctx, g, t, sig, &chk, eff, why)) stale_hit(vm, t->graph, "it does not lower now");
    }
    module_sum(chk.mod, module);
    if (memcmp(module, stored, 32) != 0) stale_hit(vm, t->graph, "its module differs");
    /* The serials a lowering takes are not compared: they depend on what
     * this process had specialised before (a callee inferred for an
     * earlier function takes none now), and they only name env keys of
     * later derivative programs, which a different count makes other
     * cache entries, not other results. */
    if (tables && !same_tables(code, nsites, nconsts, &chk)) stale_hit(vm, t->graph, "its tables differ");
    if (!lowered) LLVMDisposeModule(chk.mod);
  } else if (!lowered) {
    /* the serials the lowering would have taken (the check's took them) */
    ir_serials_skip(stored_serials);
  }
  char entry[64] = "mist.";
  jit_hex(key, 16, entry + 5);
  const char *note, *unsaved = NULL;
  const char *how = lowered ? lang_str_fmt("lowered %.2f ms", tl)->data : "tables read";
  if (addr) {
    if (lowered) LLVMDisposeModule(lo.mod);
    note = lang_str_fmt("%s, the same code as before%s", how, keyed)->data;
  } else {
    LLVMMemoryBufferRef buf = NULL;
    StrBuf tb;
    sb_init(&tb);
    bool with_tables = false;
    if (obj) {
      if (lowered) LLVMDisposeModule(lo.mod);
      memcpy(module, stored, 32);
      if (tables) {
        sb_add(&tb, tables, ntables);
        with_tables = true;
      }
      note = lang_str_fmt("cached: %s, read %.2f ms%s", how, tr, keyed)->data;
    } else {
      bool keep = storable(lo.mod);
      /* the module's text is printed and hashed only where a check may
       * compare it: in a process that checks (what a later one reads
       * back is then the entry's); elsewhere printing it took a twentieth
       * of a nested derivative's compile time */
      if (!have_module) {
        if (cg->check) module_sum(lo.mod, module);
        else memset(module, 0, 32);
      }
      with_tables = jk && jit_key_save_tables(jk, lo.sites, lo.nsites, lo.consts, lo.nconsts, lo.guards,
                                              lo.nguards, serials, &tb);
      if (!verified(&lo, why)) return NULL;
      LLVMSetValueName2(LLVMGetNamedFunction(lo.mod, lo.entry), entry, strlen(entry));
      double ms[2];
      if (!(buf = compile_object(cg, &lo, effort[0] == effort[1], ms, why))) return NULL;
      note = lang_str_fmt("%s, optimised %.2f ms (%d of %d functions), code %.2f ms%s%s", how, ms[0],
                          effort[1] - effort[0], effort[1], ms[1], keyed,
                          jk && !with_tables ? " (its tables not stored)" : "")->data;
      if (!keep) unsaved = "not cached: the module holds an address of this process";
      else if (!cg->cache.dir) unsaved = cg->cache.off[0] ? cg->cache.off : NULL;
      else
        jit_cache_put(&cg->cache, key, module, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), tb.data,
                      with_tables ? tb.len : 0, &unsaved);
    }
    double t3 = now_ms();
    const char *label = g->display ? g->display->data : g->name->data;
    if (buf) {
      addr = link_object(cg, key, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), entry, label, why);
      LLVMDisposeMemoryBuffer(buf);
    } else {
      addr = link_object(cg, key, obj, size, entry, label, why);
      free(obj);
    }
    if (!addr) return NULL;
    note = lang_str_fmt("%s, linked %.2f ms%s%s", note, now_ms() - t3, unsaved ? "; " : "", unsaved ? unsaved : "")->data;
    /* (link_object remembered it last) */
    struct Loaded *l = &cg->loaded[cg->nloaded - 1];
    memcpy(l->module, module, 32);
    l->tables = with_tables ? malloc(tb.len) : NULL;
    l->ntables = l->tables ? tb.len : 0;
    if (l->tables) memcpy(l->tables, tb.data, tb.len);
  }
  code->entry = (bool (*)(const JitCx *, const Value *, const Value *, Value *))(uintptr_t)addr;
  if (lowered) {
    code->cx = (JitCx){vm, lo.sites, lo.consts};
    code->nguards = lo.nguards;
    code->guards = lo.guards;
  }
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
