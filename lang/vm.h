/* vm.h: the interpreter state handle and the error machinery.
 *
 * Everything the runtime needs hangs off one MistVM, so several can live
 * in one process (no global state besides the GC itself).  The public
 * header include/mist.h exposes it as an opaque handle.
 *
 * Errors are values that travel up: a C function that fails calls
 * lang_raise(), which records the message in the VM and returns false;
 * every caller passes the false up.  The interpreter (ir/eval.c) adds
 * the source span of the node being run and a traceback entry for each
 * Mist frame it unwinds.  Nothing here prints: output goes through the
 * host's write callback.
 */
#ifndef MIST_LANG_VM_H
#define MIST_LANG_VM_H

#include <signal.h>
#include <stdarg.h>

#include "lang/value.h"

/* A place in the source: file number (index into vm->files), 1-based line
 * and column of the first character, and the length in columns on that
 * line (for the caret; 0 = one). */
typedef struct Span {
  int32_t file;
  int32_t line;
  int32_t col;
  int32_t len;
} Span;

static inline Span span_none(void) { Span s = {-1, 0, 0, 0}; return s; }

typedef struct SourceFile {
  ObjStr *path;       /* as the user named it */
  ObjStr *text;       /* whole contents */
  bool internal;      /* the derivative rules (stdlib/ad_rules.ms): code the
                         user did not call, whose frames errors do not show
                         (lang_error_render) */
} SourceFile;

typedef struct TraceEntry {
  Span span;          /* where in this frame the error happened / the call was */
  const char *name;   /* function name, "<module>" at top level */
} TraceEntry;

/* What failed.  kind is a short class ("SyntaxError", "TypeError"...),
 * kept for the API and the REPL; the message is what users read. */
typedef struct MistError {
  bool set;
  const char *kind;
  ObjStr *message;
  Span span;          /* span_none() until someone knows where */
  bool incomplete;    /* a syntax error at end of input: the REPL asks for more */
  int exit_code;      /* kind "SystemExit" (exit(), quit()): the status asked for */
  int ntrace, captrace;
  TraceEntry *trace;  /* innermost first (pushed while unwinding) */
} MistError;

typedef void (*MistWriteFn)(void *user, const char *text, size_t len);

/* How tensors print (lang/tensor_print.c): NumPy's print options of the
 * same names, set by set_printoptions. */
typedef struct LangPrintOptions {
  int64_t precision;    /* digits after the point, at most */
  int64_t threshold;    /* more elements than this: summarised */
  int64_t edgeitems;    /* entries shown at each end of a summarised axis */
  int64_t linewidth;    /* characters a line, at most (long elements excepted) */
  bool suppress;        /* no scientific notation for small values */
} LangPrintOptions;

/* Calling a Mist value from C: installed by ir/eval.c, used by builtins
 * such as map() and sorted(key=). */
typedef bool (*LangCallFn)(MistVM *vm, Value fn, int argc, const Value *argv,
                           const KwArgs *kw, Value *out);

#define LANG_TYPE_NAME_SLOTS (V_OBJ + O_NATIVE)

struct MistVM {
  MistError err;

  /* output: the host's callback; the CLI writes to stdout */
  MistWriteFn write;
  void *write_user;
  /* diagnostics a program draws (progress bars): the host's callback and
   * whether it ends at a terminal; without one, stderr */
  MistWriteFn write_err;
  void *write_err_user;
  bool err_is_tty;

  SourceFile *files;
  int nfiles, capfiles;

  ObjDict *builtins;      /* name -> builtin function value */
  ObjDict *methods;       /* name -> builtin, consulted first for x.name */
  ObjDict *properties;    /* name -> builtin: x.name is name(x) (t.shape, t.T) */
  ObjDict *interned;
  ObjDict *modules;       /* path -> module, so each file loads once */
  ObjModule *main;        /* the module of the script or REPL */
  ObjSeq *argv;           /* what args() returns */

  LangCallFn call;        /* set by the interpreter */
  /* a function's name, for its repr: set by the interpreter, which
   * knows graphs (lang/ does not) */
  const char *(*graph_name)(struct IrGraph *g);
  /* the builtin being called, set just before its C function runs, for
   * builtins made at run time that carry data (ObjBuiltin.data) */
  ObjBuiltin *callee;
  /* autodiff/ as the interpreter's primitives reach it (IrAdInterface,
   * ir/eval.h), installed by autodiff's ad_register; NULL without it */
  const struct IrAdInterface *ad;
  void *ad_state;         /* autodiff's own state and caches (AdState, autodiff/ad.h) */
  /* `import name` from module `from`: set by the API, which owns the
   * pipeline (parse, lower, run) that loading a module needs */
  bool (*import)(MistVM *vm, ObjStr *name, ObjModule *from, Value *out);
  void *eval;             /* the interpreter's private state */
  /* graph mode (jit/, docs/jit.md): the path a call of a function takes
   * when it is compiled (IrJitInterface, ir/eval.h), installed by
   * jit_register; its own state; whether every call of a user function
   * takes it (set_mode("graph"), mist --mode=graph); and whether the
   * interpreter must look at calls at all (graph mode, or a jit(f) made):
   * one flag, so eager mode pays one test per call */
  const struct IrJitInterface *jit;
  void *jit_state;
  bool graph_mode;
  bool jit_calls;
  void *infer;            /* type inference's state (ir/infer.c) */

  /* runaway recursion guard: depth of Mist calls and C stack bound */
  int depth, max_depth;
  char *stack_limit;      /* an address below which the C stack must not go */

  volatile sig_atomic_t interrupt;   /* set from a signal handler: stop soon */
  double deadline;        /* seconds since the epoch, 0 = none */
  double time_limit;      /* seconds each mist_eval / mist_run_file may run, 0 = none */
  bool sandbox;           /* no file system access */
  int dump;               /* the stages of the pipeline to print (api/mist.c, MIST_DUMP_) */

  LangPrintOptions print_options;

  /* tensors (lang/tensor.c): made on first use, so start-up stays fast */
  struct DevPool *pool;           /* the one thread pool */
  struct TensorHeap *tensor_heap; /* the caching allocator of tensor buffers */

  /* background threads that run Mist code (stdlib/data.c's map
   * workers): the interpreter lock they take, made by the first of them
   * (NULL until then: one thread, nothing to lock); and the hook that
   * stops them all and waits for them, called by lang_vm_free */
  struct LangLock *lock;
  void (*stop_threads)(MistVM *vm);
  void *threads;          /* the owner of stop_threads' private state */
  /* threads that may read Mist values without the interpreter lock (the
   * data pipeline's, stdlib/data.c), counted with __atomic builtins:
   * while there are any, updates do not write in place
   * (lang_updates_in_place) */
  int background;
  /* set by the interpreter just before a primitive marked P_OVER_D
   * (ir/ops.def) runs when its first argument is a temporary that
   * nothing reads afterwards, whose tensor buffer may then take the
   * result; the primitive reads it first thing and clears it */
  bool over_d;
  /* the statement of a lazily loaded module (ObjModule.lazy) that binds
   * name, and those it reads, loaded; and statement stmt of such a
   * module lowered now (not yet run), for the lowering of a later
   * statement that reads the name it binds: set by the API with import
   * (last here: compiled code reads fields above by offset) */
  bool (*load_lazy)(MistVM *vm, ObjModule *m, ObjStr *name);
  bool (*lower_lazy)(MistVM *vm, ObjModule *m, int stmt);
  /* type()'s interned result for each value tag and object kind but
   * O_NATIVE (slot tag, or V_OBJ + kind), filled as they are asked: the
   * derivative rules ask type() of every operand, millions of times in a
   * nested derivative, and a lookup in the intern table cost a quarter
   * of a rule's own work (stdlib/builtins.c, bi_type) */
  ObjStr *type_names[LANG_TYPE_NAME_SLOTS];
  /* effects a program had that running a call again would repeat or
   * change (output, files written, input read, foreign calls), counted,
   * so that graph mode may run a call again in the interpreter where its
   * compiled code stopped before any (jit/run.c) */
  uint64_t effects;
  /* set where compiled code met a value of another type than inference
   * gave it (jit/rt.c mist_rt_bad_value): a bug of inference or of the
   * lowering, which the interpreter does not share */
  bool jit_bad_value;
};

/* May xs[i] = v (and d[k] = v, xs + [v], t[i] = v) write into storage
 * that the old value shares (lang/value.c, "Versions")?  Not while
 * another thread may be reading values: it could see the write. */
static inline bool lang_updates_in_place(MistVM *vm) {
  return __atomic_load_n(&vm->background, __ATOMIC_ACQUIRE) == 0;
}

/* A fresh VM, zeroed, in memory the collector scans but never frees
 * (hosts keep the handle where the collector cannot see it); release it
 * with lang_vm_free.  max_depth starts at LANG_DEFAULT_MAX_DEPTH and
 * stack_limit at NULL (no C stack check until lang_set_stack_budget). */
#define LANG_DEFAULT_MAX_DEPTH 10000
MistVM *lang_vm_new(void);
void lang_vm_free(MistVM *vm);
/* Set vm->stack_limit to `bytes` below the caller's frame; 0 derives a
 * budget from RLIMIT_STACK.  Call it near the base of the thread that
 * runs the VM. */
void lang_set_stack_budget(MistVM *vm, size_t bytes);

/* Raise an error of the given kind.  Always returns false, so a failing
 * function can say `return lang_raise(vm, "TypeError", "...")`. */
bool lang_raise(MistVM *vm, const char *kind, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
bool lang_raise_at(MistVM *vm, Span span, const char *kind, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
void lang_error_clear(MistVM *vm);
void lang_trace_push(MistVM *vm, Span span, const char *name);

/* Render the error as the CLI prints it:
 *   FILE:LINE:COL: error: MESSAGE
 *       source line
 *       ^
 *   traceback (innermost last):
 *     FILE:LINE:COL in NAME
 * An error raised in internal code (SourceFile.internal) is shown where
 * the program that led there is, as an error of a builtin is: at the
 * innermost frame outside it, without the frames inside it (nor the
 * innermost frames that have no place).  The error keeps its own place
 * and frames (MistError.span, .trace): only the rendering leaves them.
 * Returns a GC string. */
ObjStr *lang_error_render(MistVM *vm);

/* Source files are registered once and referred to by number in spans. */
int lang_file_add(MistVM *vm, const char *path, const char *text, size_t len);
/* The text of line `line` of file `file` (without newline), or NULL. */
const char *lang_file_line(MistVM *vm, int file, int line, size_t *len);

/* The folder of the standard library's .ms files: $MIST_STDLIB when
 * set; else the one beside the code that runs (the mist binary, a test,
 * or a host linked with the library): stdlib/ of the source tree a build
 * folder sits in (build/mist, build/tests/test_x), or share/mist/stdlib
 * of an installation (bin/mist); else the source tree it was built
 * from.  Found once per process. */
const char *lang_stdlib_dir(void);

/* Before reading name in m's names: the definition of name loaded when
 * m loads its definitions lazily (ObjModule.lazy) and has one not loaded
 * yet.  False with the error raised when loading it failed. */
static inline bool lang_module_load(MistVM *vm, ObjModule *m, ObjStr *name) {
  return !m->lazy || vm->load_lazy(vm, m, name);
}

void lang_write(MistVM *vm, const char *text, size_t len);
/* Diagnostics (progress bars) through vm->write_err, else to stderr
 * after flushing stdout; lang_err_is_tty says whether they reach a
 * terminal (redrawn in place) or not (a log). */
void lang_write_err(MistVM *vm, const char *text, size_t len);
bool lang_err_is_tty(MistVM *vm);

/* Register a C function under a global builtin name, or as a method.
 * Each returns the new builtin, whose self_kinds the caller may set. */
ObjBuiltin *lang_def_builtin(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args);
ObjBuiltin *lang_def_method(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args);
/* A property: x.name calls fn(x) and is its result, not a bound method. */
ObjBuiltin *lang_def_property(MistVM *vm, const char *name, BuiltinFn fn);

/* ---- names (suggest.c) ---- */

/* The kinds of value a builtin is a method of (ObjBuiltin.self_kinds). */
enum { SELF_STR = 1, SELF_LIST = 2, SELF_TUPLE = 4, SELF_DICT = 8, SELF_TENSOR = 16, SELF_FILE_KIND = 32 };
/* x's bit among them, 0 for a value of another kind. */
unsigned lang_self_kind(Value x);
/* The sorted names `x.` may be followed by: a module's bound names, or
 * the methods registered for x's kind (and a tensor's properties). */
ObjSeq *lang_attr_names(MistVM *vm, Value x);

/* "Did you mean": offer candidates one by one, then ask for the hint.
 * The rule is CPython's (suggest.c), and so is the hint's form:
 * ". Did you mean: 'print'?", or "" when no candidate is close. */
typedef struct LangSuggest {
  const char *name;   /* the misspelt name */
  size_t len;
  const char *best;   /* the closest candidate so far, or NULL */
  size_t dist;
} LangSuggest;
void lang_suggest_start(LangSuggest *s, const char *name);
void lang_suggest_offer(LangSuggest *s, const char *candidate);
void lang_suggest_dict(LangSuggest *s, const ObjDict *d);          /* each key */
void lang_suggest_module(LangSuggest *s, const ObjModule *m);      /* each bound name */
const char *lang_suggest_hint(const LangSuggest *s);

/* Guard against runaway recursion: false (with an error raised) when the
 * C stack or the Mist call depth is nearly exhausted. */
bool lang_check_stack(MistVM *vm);

/* ---- threads ----
 *
 * One thread at a time runs Mist code on a VM, as in CPython: the one
 * that holds the interpreter lock.  The thread that made the VM holds it
 * from the start and gives it up only while it waits (for a dataset's
 * next example); background threads take it to call Mist functions.
 * What belongs to the running thread (its C stack bound, call depth,
 * error and current builtin) is kept in the VM while it holds the lock
 * and in its LangThreadState while it does not. */
typedef struct LangThreadState {
  char *stack_limit;
  int depth;
  MistError err;
  ObjBuiltin *callee;
} LangThreadState;

/* Make vm->lock, held by the caller, if there is none yet.  False when
 * out of memory. */
bool lang_lock_init(MistVM *vm);
/* Give up the lock, keeping this thread's state in *save. */
void lang_unlock(MistVM *vm, LangThreadState *save);
/* Wait for the lock and run with the state in *state. */
void lang_lock(MistVM *vm, const LangThreadState *state);
/* A state for a new thread whose stack ends below stack_low: no error,
 * depth 0, C stack bounded a margin above stack_low. */
void lang_thread_state_init(LangThreadState *st, char *stack_low);

/* A VM for C code on a background thread: it shares vm's tensor
 * allocator and thread pool (both made here if need be, and both safe
 * to use from several threads) and has its own error record; it runs no
 * Mist code and has no tables.  A GC object: it lives while referenced. */
MistVM *lang_vm_for_thread(MistVM *vm);

#endif
