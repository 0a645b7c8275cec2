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
  int ntrace, captrace;
  TraceEntry *trace;  /* innermost first (pushed while unwinding) */
} MistError;

typedef void (*MistWriteFn)(void *user, const char *text, size_t len);

/* Calling a Mist value from C: installed by ir/eval.c, used by builtins
 * such as map() and sorted(key=). */
typedef bool (*LangCallFn)(MistVM *vm, Value fn, int argc, const Value *argv,
                           const KwArgs *kw, Value *out);

struct MistVM {
  MistError err;

  /* output: the host's callback; the CLI writes to stdout */
  MistWriteFn write;
  void *write_user;

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
  /* the builtin being called, set just before its C function runs, for
   * builtins made at run time that carry data (ObjBuiltin.data) */
  ObjBuiltin *callee;
  /* the reverse-mode transform of a value (autodiff/), for primitive J */
  bool (*ad_J)(MistVM *vm, Value v, Value *out);
  /* J(v) whose backpropagator gives only the parameters in mask, for
   * jmask; made for float arguments when floats is set */
  bool (*ad_Jmask)(MistVM *vm, Value v, int64_t mask, bool floats, Value *out);
  Value ad_kid;           /* autodiff: the identity continuation, a closure */
  bool (*ad_F)(MistVM *vm, Value v, Value *out);   /* forward mode, for primitive F */
  /* the sensitivity primitive `prim` (add_sens, sin_sens...) on what its
   * C fast path does not handle: its Mist definition in
   * stdlib/ad_sens.ms, called by autodiff/ (installed with the first
   * transform, the only place such primitives come from) */
  bool (*ad_sens)(MistVM *vm, int prim, int argc, const Value *argv, Value *out);
  Value *ad_sens_fns;     /* autodiff's cache of those definitions, by primitive */
  void *ad_state;         /* autodiff's other caches (autodiff/builtins.c) */
  /* `import name` from module `from`: set by the API, which owns the
   * pipeline (parse, lower, run) that loading a module needs */
  bool (*import)(MistVM *vm, ObjStr *name, ObjModule *from, Value *out);
  void *eval;             /* the interpreter's private state */

  /* runaway recursion guard: depth of Mist calls and C stack bound */
  int depth, max_depth;
  char *stack_limit;      /* an address below which the C stack must not go */

  volatile sig_atomic_t interrupt;   /* set from a signal handler: stop soon */
  double deadline;        /* seconds since the epoch, 0 = none */
  double time_limit;      /* seconds each mist_eval / mist_run_file may run, 0 = none */
  bool sandbox;           /* no file system access */

  /* tensors (lang/tensor.c): made on first use, so start-up stays fast */
  struct DevPool *pool;           /* the one thread pool */
  struct TensorHeap *tensor_heap; /* the caching allocator of tensor buffers */
};

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
 * Returns a GC string. */
ObjStr *lang_error_render(MistVM *vm);

/* Source files are registered once and referred to by number in spans. */
int lang_file_add(MistVM *vm, const char *path, const char *text, size_t len);
/* The text of line `line` of file `file` (without newline), or NULL. */
const char *lang_file_line(MistVM *vm, int file, int line, size_t *len);

void lang_write(MistVM *vm, const char *text, size_t len);

/* Register a C function under a global builtin name, or as a method. */
void lang_def_builtin(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args);
void lang_def_method(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args);
/* A property: x.name calls fn(x) and is its result, not a bound method. */
void lang_def_property(MistVM *vm, const char *name, BuiltinFn fn);

/* Guard against runaway recursion: false (with an error raised) when the
 * C stack or the Mist call depth is nearly exhausted. */
bool lang_check_stack(MistVM *vm);

#endif
