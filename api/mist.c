/* mist.c: the public API (include/mist.h) and the pipeline it runs.
 *
 * The whole pipeline is one function, compile(), that reads as the list
 * of its stages: parse, lower, verify, then optimise and verify where
 * asked; every way in (a script, -e, the REPL, an import, `mist ir`,
 * `mist --dump`) goes through it, and run_source() evaluates what it
 * made.  Everything else here is bookkeeping around it: reading files,
 * the module cache behind
 * `import`, and running evaluation on a thread with a large stack so
 * that deep (non-tail) recursion works and runaway recursion hits the
 * interpreter's guard long before the real stack ends.  Each entry point
 * that may allocate first makes the calling thread known to the
 * collector (lang_gc_enter_thread), since hosts call from threads of
 * their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "ir/infer.h"
#include "ir/passes.h"
#include "jit/jit.h"
#include "stdlib/source.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "mist.h"
#include "parser/lower.h"
#include "parser/parse.h"
#include "parser/toplevel.h"
#include "stdlib/builtins.h"

#define MAX_DEPTH 200000
#define EVAL_STACK_SIZE ((size_t)1 << 30)   /* reserved, touched only as used */

const char *mist_version(void) { return MIST_VERSION; }

/* A NULL handle, or NULL where a call needs a string, is the host's
 * mistake, and mist.h promises that every call reports failure rather
 * than crash: the calls that return a status fail (with this message
 * from mist_error), the others do nothing. */
static const char null_vm_message[] = "error: the MistVM handle is NULL";

static bool is_null(MistVM *vm, const char *call, const char *what, const void *p) {
  if (p) return false;
  lang_raise(vm, "ValueError", "%s: %s is NULL", call, what);
  return true;
}

/* Whether nargs argument types are not all there: nargs is negative (-1
 * allowed where it means "no types") or one of them is NULL. */
static bool argtypes_missing(MistVM *vm, const char *call, int nargs, const char *const *argtypes,
                             bool none_allowed) {
  if (nargs < (none_allowed ? -1 : 0)) {
    lang_raise(vm, "ValueError", "%s: nargs is %d", call, nargs);
    return true;
  }
  for (int i = 0; i < nargs; i++)
    if (is_null(vm, call, "an argument type", argtypes ? argtypes[i] : NULL)) return true;
  return false;
}

static ObjModule *module_new(MistVM *vm, const char *name, const char *path) {
  ObjModule *m = lang_alloc(sizeof *m);
  m->obj.kind = O_MODULE;
  m->name = lang_str(name);
  m->path = lang_str(path);
  m->names = lang_dict_new();
  m->file_id = -1;
  return m;
}

static bool import_module(MistVM *vm, ObjStr *name, ObjModule *from, Value *out);
static bool load_lazy(MistVM *vm, ObjModule *m, ObjStr *name);
static bool lower_lazy(MistVM *vm, ObjModule *m, int stmt);

MistVM *mist_new(int argc, const char *const *argv) {
  lang_gc_init();
  lang_gc_enter_thread();
  MistVM *vm = lang_vm_new();   /* not collected: the host holds it */
  if (!vm) return NULL;
  if (!vm->builtins) vm->builtins = lang_dict_new();
  if (!vm->methods) vm->methods = lang_dict_new();
  if (!vm->interned) vm->interned = lang_dict_new();
  vm->modules = lang_dict_new();
  vm->max_depth = MAX_DEPTH;
  if (!argv) argc = 0;
  ObjSeq *args = lang_list_new(argc > 0 ? argc : 0);
  for (int i = 0; i < argc; i++) args->items[i] = v_obj(lang_str(argv[i] ? argv[i] : ""));
  vm->argv = args;
  vm->main = module_new(vm, "__main__", "<main>");
  vm->import = import_module;
  vm->load_lazy = load_lazy;
  vm->lower_lazy = lower_lazy;
  ev_init(vm);
  std_register_builtins(vm);
  ad_register(vm);
  jit_register(vm);
  return vm;
}

void mist_free(MistVM *vm) {
  lang_gc_enter_thread();
  if (!vm) return;
  jit_free(vm);
  lang_vm_free(vm);
}

void mist_set_write(MistVM *vm, void (*write)(void *, const char *, size_t), void *user) {
  if (!vm) return;
  vm->write = write;
  vm->write_user = user;
}

void mist_set_write_err(MistVM *vm, void (*write)(void *, const char *, size_t), void *user,
                        bool is_terminal) {
  if (!vm) return;
  vm->write_err = write;
  vm->write_err_user = user;
  vm->err_is_tty = is_terminal;
}

void mist_interrupt(MistVM *vm) {
  if (vm) vm->interrupt = 1;
}

void mist_set_time_limit(MistVM *vm, double seconds) {
  if (vm) vm->time_limit = seconds > 0 ? seconds : 0;
}

/* ---- the pipeline ---- */

typedef struct Job {
  MistVM *vm;
  ObjModule *module;
  int file;
  bool echo;
  bool ok;
  Value result;
} Job;

/* ---- the pipeline ---- */

static void dump_header(MistVM *vm, const char *stage, int file) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "# ---- %s: %s ----\n", stage, vm->files[file].path->data);
  lang_write(vm, sb.data, sb.len);
}

static void dump_ast(MistVM *vm, int file, Ast *ast) {
  dump_header(vm, "ast", file);
  StrBuf sb;
  sb_init(&sb);
  ast_dump(ast, false, &sb);
  sb_addc(&sb, '\n');
  lang_write(vm, sb.data, sb.len);
}

static void dump_unit(MistVM *vm, const char *stage, int file, IrUnit *u) {
  dump_header(vm, stage, file);
  StrBuf sb;
  sb_init(&sb);
  ir_print_unit(vm, u, &sb);
  lang_write(vm, sb.data, sb.len);
}

static bool verify(MistVM *vm, IrUnit *u) {
#ifndef NDEBUG
  return ir_verify_unit(vm, u);
#else
  (void)vm, (void)u;
  return true;
#endif
}

/* Source text to IR: parse, lower, verify, and with optimise set, the
 * optimiser (inline, simplify, cse, dce) and the verifier again.  Eager
 * mode runs the IR as lowered: the inliner would drop the traceback
 * entries of the calls it inlines.  The stages vm->dump names are
 * printed as they pass; the optimised IR it asks for is made from a
 * second lowering, so that printing it never changes what runs. */
static bool compile(MistVM *vm, ObjModule *module, int file, bool echo, bool optimise,
                    LowerResult *lr) {
  SourceFile *f = &vm->files[file];
  Ast *ast = parse_module(vm, file, f->text->data, f->text->len);
  if (!ast) return false;
  if (vm->dump & MIST_DUMP_AST) dump_ast(vm, file, ast);
  if (!lower_module(vm, ast, module, echo, lr)) return false;
  if (!verify(vm, lr->unit)) return false;
  if (vm->dump & MIST_DUMP_IR) dump_unit(vm, "ir", file, lr->unit);
  if ((vm->dump & (MIST_DUMP_OPT | MIST_DUMP_TYPES)) && !optimise) {
    int dump = vm->dump;
    vm->dump = 0;
    LowerResult copy;
    bool ok = compile(vm, module, file, echo, true, &copy);
    vm->dump = dump;
    if (!ok) return false;
    if (dump & MIST_DUMP_OPT) dump_unit(vm, "opt", file, copy.unit);
    if (dump & MIST_DUMP_TYPES) {
      /* the module's code as it would run, and every function it calls
       * that inference can follow, specialised (docs/types.md) */
      IrInferOpts opts = {copy.main, NULL};
      IrTyped *typed = ir_infer(vm, copy.main, 0, NULL, &opts);
      if (!typed) return false;
      dump_header(vm, "types", file);
      StrBuf sb;
      sb_init(&sb);
      ir_print_typed(vm, typed, &sb);
      lang_write(vm, sb.data, sb.len);
    }
  }
  if (!optimise) return true;
  return ir_optimize_unit(vm, lr->unit) && verify(vm, lr->unit);
}

static bool run_source(MistVM *vm, ObjModule *module, int file, bool echo, Value *result) {
  LowerResult lr;
  return compile(vm, module, file, echo, false, &lr) && ev_run_main(vm, lr.main, result);
}

int mist_dump_stages(const char *list, const char **bad) {
  static const char *const names[] = {"ast", "ir", "opt", "types"};
  int stages = 0;
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    size_t k = 0;
    while (k < sizeof names / sizeof *names && !(strlen(names[k]) == n && strncmp(p, names[k], n) == 0)) k++;
    if (k == sizeof names / sizeof *names) {
      *bad = p;
      return -1;
    }
    stages |= 1 << k;
    p += n + (p[n] == ',');
  }
  return stages;
}

void mist_set_dump(MistVM *vm, int stages) {
  if (vm) vm->dump = stages;
}

void mist_set_graph_mode(MistVM *vm, bool on) {
  if (vm) jit_set_graph_mode(vm, on);
}

static void set_stack_limit(MistVM *vm);

static void *job_main(void *arg) {
  Job *job = arg;
  set_stack_limit(job->vm);
  job->ok = run_source(job->vm, job->module, job->file, job->echo, &job->result);
  return NULL;
}



static void set_stack_limit(MistVM *vm) {
  pthread_attr_t attr;
  void *addr;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      /* the stack grows down from addr + size; keep a margin for C code
       * that runs between two checks (builtins, printing, the GC) */
      size_t margin = size / 8 > (4u << 20) ? (4u << 20) : size / 8;
      vm->stack_limit = (char *)addr + margin;
    }
    pthread_attr_destroy(&attr);
  }
}

/* Run a job on a thread with a big stack; if no thread can be made, run
 * it here. */
static bool run_job(Job *job) {
  MistVM *vm = job->vm;
  vm->depth = 0;
  vm->deadline = 0;
  if (vm->time_limit > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    vm->deadline = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + vm->time_limit;
  }
  char *saved = job->vm->stack_limit;
  if (!lang_run_on_stack(EVAL_STACK_SIZE, job_main, job)) job_main(job);
  job->vm->stack_limit = saved;
  return job->ok;
}

/* ---- files ---- */

static char *read_file(const char *path, size_t *len, const char **why) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    *why = "Is a directory";
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    *why = strerror(errno);
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = lang_alloc_atomic(cap + 1);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      buf = lang_realloc(buf, cap + 1);
    }
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Register source text under path; -1 with a SyntaxError raised when it
 * is not UTF-8, at the line and column of the first bad byte.  A UTF-8
 * byte-order mark at the start is dropped, as Python does. */
static int add_file(MistVM *vm, const char *path, const char *text, size_t len) {
  if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) text += 3, len -= 3;
  int file = lang_file_add(vm, path, text, len);
  size_t bad = lang_utf8_check(text, len);
  if (bad == len) return file;
  Span at = {file, 1, 1, 1};
  for (size_t i = 0; i < bad;) {
    if (text[i] == '\n') {
      at.line++, at.col = 1, i++;
      continue;
    }
    uint32_t cp;
    i += lang_utf8_decode(text + i, bad - i, &cp);
    at.col++;
  }
  lang_raise_at(vm, at, "SyntaxError", "invalid UTF-8: byte 0x%02x", (unsigned char)text[bad]);
  return -1;
}

static MistStatus load_and_run(MistVM *vm, ObjModule *m, const char *path, bool echo, Value *result) {
  size_t len;
  const char *why;
  char *text = read_file(path, &len, &why);
  if (!text) {
    lang_raise(vm, "OSError", "can't open file '%s': %s", path, why);
    return MIST_ERROR;
  }
  int file = add_file(vm, path, text, len);
  if (file < 0) return MIST_ERROR;
  m->file_id = file;
  Job job = {vm, m, file, echo, false, v_none()};
  return run_job(&job) ? MIST_OK : MIST_ERROR;
}

MistStatus mist_run_file(MistVM *vm, const char *path) {
  lang_gc_enter_thread();
  if (!vm) return MIST_ERROR;
  lang_error_clear(vm);
  if (is_null(vm, "mist_run_file", "path", path)) return MIST_ERROR;
  vm->interrupt = 0;
  vm->main->path = lang_str(path);
  Value r;
  return load_and_run(vm, vm->main, path, false, &r);
}

MistStatus mist_eval(MistVM *vm, const char *name, const char *source, bool echo) {
  lang_gc_enter_thread();
  if (!vm) return MIST_ERROR;
  lang_error_clear(vm);
  if (is_null(vm, "mist_eval", "source", source)) return MIST_ERROR;
  vm->interrupt = 0;
  size_t len = strlen(source);
  int file = add_file(vm, name, source, len);
  if (file < 0) return MIST_ERROR;
  if (vm->main->file_id < 0) vm->main->file_id = file;
  Job job = {vm, vm->main, file, echo, false, v_none()};
  if (!run_job(&job)) return vm->err.incomplete ? MIST_INCOMPLETE : MIST_ERROR;
  if (echo && job.result.tag != V_NONE && job.result.tag != V_UNBOUND) {
    StrBuf sb;
    sb_init(&sb);
    if (!lang_repr(vm, job.result, &sb)) return MIST_ERROR;
    sb_addc(&sb, '\n');
    lang_write(vm, sb.data, sb.len);
    /* as Python's interactive mode: _ is the last value shown */
    ev_set_global(vm->main, lang_intern(vm, "_", 1), job.result);
  }
  return MIST_OK;
}

int mist_exit_code(MistVM *vm) {
  return vm && vm->err.set && vm->err.kind && strcmp(vm->err.kind, "SystemExit") == 0 ? vm->err.exit_code : -1;
}

/* ---- completion ---- */

static const char *const keywords[] = {
#define TOK(e, s)
#define PUNCT(e, s)
#define KW(e, s) s,
#define RESERVED(e, s)
#include "parser/token.def"
};

typedef struct Words {
  char **items;
  size_t n, cap;
} Words;

static void word_add(Words *w, const char *prefix, size_t plen, const char *name, size_t nlen) {
  for (size_t i = 0; i < w->n; i++)
    if (strlen(w->items[i]) == plen + nlen && memcmp(w->items[i] + plen, name, nlen) == 0) return;
  if (w->n + 1 >= w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 32;
    char **items = realloc(w->items, cap * sizeof *items);
    if (!items) return;
    w->items = items;
    w->cap = cap;
  }
  char *s = malloc(plen + nlen + 1);
  if (!s) return;
  memcpy(s, prefix, plen);
  memcpy(s + plen, name, nlen);
  s[plen + nlen] = '\0';
  w->items[w->n++] = s;
}

static bool word_starts(const char *name, size_t nlen, const char *stem, size_t slen) {
  /* names private to the runtime only when asked for */
  if (nlen > 0 && name[0] == '_' && (slen == 0 || stem[0] != '_')) return false;
  return nlen >= slen && memcmp(name, stem, slen) == 0;
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The value text names: a global or builtin, then attributes; false
 * when some part is not there (no error is left behind). */
static bool value_of_path(MistVM *vm, const char *text, size_t len, Value *out) {
  size_t i = 0;
  while (i < len && text[i] != '.') i++;
  ObjStr *name = lang_str_new(text, i);
  Value slot;
  ObjModule *m = vm->main;
  if (m->names && lang_dict_get(m->names, name, &slot) && m->slots[slot.i].tag != V_UNBOUND) *out = m->slots[slot.i];
  else if (!vm->builtins || !lang_dict_get(vm->builtins, name, out)) return false;
  while (i < len) {
    size_t j = ++i;
    while (i < len && text[i] != '.') i++;
    bool bound;
    if (!ev_lookup_attr(vm, *out, lang_str_new(text + j, i - j), out, &bound) || bound) {
      lang_error_clear(vm);
      return false;
    }
  }
  return true;
}

char **mist_complete(MistVM *vm, const char *text) {
  lang_gc_enter_thread();
  if (!vm || !text) return NULL;
  Words w = {0};
  const char *dot = strrchr(text, '.');
  if (dot) {
    /* x.y.pre: the attributes of x.y that start with pre */
    Value x;
    size_t plen = (size_t)(dot - text) + 1;
    const char *stem = dot + 1;
    size_t slen = strlen(stem);
    if (!value_of_path(vm, text, plen - 1, &x)) return NULL;
    ObjSeq *names = lang_attr_names(vm, x);
    for (size_t i = 0; i < names->len; i++) {
      ObjStr *n = AS_STR(names->items[i]);
      if (word_starts(n->data, n->len, stem, slen)) word_add(&w, text, plen, n->data, n->len);
    }
  } else {
    size_t slen = strlen(text);
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
      if (word_starts(keywords[i], strlen(keywords[i]), text, slen)) word_add(&w, "", 0, keywords[i], strlen(keywords[i]));
    ObjModule *m = vm->main;
    for (size_t i = 0; m->names && i < m->names->len; i++) {
      DictEntry *e = &m->names->entries[i];
      if (e->key && e->value.tag == V_INT && m->slots[e->value.i].tag != V_UNBOUND &&
          word_starts(e->key->data, e->key->len, text, slen))
        word_add(&w, "", 0, e->key->data, e->key->len);
    }
    for (size_t i = 0; vm->builtins && i < vm->builtins->len; i++) {
      DictEntry *e = &vm->builtins->entries[i];
      if (e->key && word_starts(e->key->data, e->key->len, text, slen)) word_add(&w, "", 0, e->key->data, e->key->len);
    }
  }
  if (w.n == 0) {
    free(w.items);
    return NULL;
  }
  qsort(w.items, w.n, sizeof *w.items, by_text);
  w.items[w.n] = NULL;
  return w.items;
}

const char *mist_error(MistVM *vm) {
  lang_gc_enter_thread();
  if (!vm) return null_vm_message;
  if (!vm->err.set) return "";
  return lang_error_render(vm)->data;
}

/* ---- modules ---- */

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- modules loaded a definition at a time ----
 *
 * Autodiff's modules of rules (stdlib/ad_rules.ms: some 200 functions)
 * are loaded when the first derivative is met, and a program uses a few
 * of their functions: parsing, lowering and running the whole file cost
 * 40 M instructions (docs/jit.md, "Speed").  So those modules are cut
 * into their top-level statements (parser/toplevel.c) and a statement
 * that binds a name is loaded (parsed, lowered, run) only when the name
 * is first asked for (lang_module_load: a rule looked up, an attribute
 * of the module read), together with the statements binding the names
 * its code reads, so that no code of the module ever reads a global of
 * it not loaded.  Statements that bind no name are loaded with the
 * module.  Each statement is lowered as the whole file would lower it
 * (lower_statement: a def calls an earlier def's graph directly, and
 * reads a later one as a global), and the spans are the file's, so that
 * the code, its errors and their tracebacks are those of the whole
 * file; only each statement's module-level code is a graph of its own. */

/* (not ad_sens.ms: its functions capture values its module-level code
 * reads from ad_rules, so that a def's graph is not one a later
 * statement can call directly; it is loaded only where a derivative is
 * differentiated again, and is small) */
static const char *const lazy_modules[] = {"ad_rules", "ad"};

/* Whether path, the file of module name, is one of lazy_modules in the
 * standard library. */
static bool loads_lazily(const char *name, const char *path) {
  bool listed = false;
  for (size_t i = 0; i < sizeof lazy_modules / sizeof *lazy_modules; i++) listed |= strcmp(name, lazy_modules[i]) == 0;
  if (!listed) return false;
  char *dir = realpath(lang_stdlib_dir(), NULL), *file = realpath(path, NULL);
  size_t n = dir ? strlen(dir) : 0;
  bool in_stdlib = dir && file && strncmp(file, dir, n) == 0 && file[n] == '/' && !strchr(file + n + 1, '/');
  free(dir);
  free(file);
  return in_stdlib;
}

/* The statements a load lowers, run together once all are lowered. */
typedef struct Batch {
  int n, cap;
  int *stmt;
  LowerResult *lowered;
} Batch;

/* vm->lower_lazy: statement i of m (being loaded) lowered into the load's
 * batch, and the later statements binding the globals its code reads;
 * false with the error raised. */
static bool lower_lazy(MistVM *vm, ObjModule *m, int i) {
  ModuleLazy *z = m->lazy;
  Batch *b = z->batch;
  if (!b || z->state[i] != LAZY_NOT_LOADED) return true;
  z->state[i] = LAZY_LOADING;
  TopStmt *s = &z->stmts[i];
  LowerResult lr;
  IrNode *bound;
  Ast *ast = parse_module_part(vm, m->file_id, vm->files[m->file_id].text->data, s->start, s->end, s->line);
  if (!ast || !lower_statement(vm, ast, m, i, s->name, &lr, &bound) || !verify(vm, lr.unit)) return false;
  z->bound[i] = bound;
  z->bound_known[i] = true;
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 8;
    b->stmt = lang_realloc(b->stmt, (size_t)b->cap * sizeof *b->stmt);
    b->lowered = lang_realloc(b->lowered, (size_t)b->cap * sizeof *b->lowered);
  }
  b->stmt[b->n] = i;
  b->lowered[b->n++] = lr;
  for (int j = 0; j < lr.nglobals; j++) {
    Value k;
    if (lang_dict_get(z->index, lr.globals[j], &k) && !lower_lazy(vm, m, (int)k.i)) return false;
  }
  return true;
}

/* Statement `first` of lazily loaded module m loaded, with those that
 * its code needs: all are lowered, then run in the file's order. */
static bool load_statements(MistVM *vm, ObjModule *m, int first) {
  ModuleLazy *z = m->lazy;
  Batch b = {0};
  void *outer = z->batch;
  z->batch = &b;
  bool ok = lower_lazy(vm, m, first);
  z->batch = outer;
  if (!ok) {
    for (int i = 0; i < z->n; i++)
      if (z->state[i] == LAZY_LOADING) z->state[i] = LAZY_NOT_LOADED, z->bound_known[i] = false;
    return false;
  }
  for (int k = 1; k < b.n; k++)   /* into the file's order (insertion: a batch is small) */
    for (int j = k; j > 0 && b.stmt[j - 1] > b.stmt[j]; j--) {
      int t = b.stmt[j];
      b.stmt[j] = b.stmt[j - 1];
      b.stmt[j - 1] = t;
      LowerResult u = b.lowered[j];
      b.lowered[j] = b.lowered[j - 1];
      b.lowered[j - 1] = u;
    }
  for (int k = 0; k < b.n; k++) z->state[b.stmt[k]] = LAZY_LOADED;
  for (int k = 0; k < b.n; k++) {
    Value r;
    if (!ev_run_main(vm, b.lowered[k].main, &r)) return false;
  }
  return true;
}

/* vm->load_lazy */
static bool load_lazy(MistVM *vm, ObjModule *m, ObjStr *name) {
  Value i;
  if (!lang_dict_get(m->lazy->index, name, &i) || m->lazy->state[i.i] != LAZY_NOT_LOADED) return true;
  return load_statements(vm, m, (int)i.i);
}

/* Module m, read from file, set up to load its definitions as they are
 * asked for, and its statements that bind no name loaded; run whole
 * instead when a name is bound by two statements. */
static bool start_lazily(MistVM *vm, ObjModule *m, int file) {
  SourceFile *f = &vm->files[file];
  ModuleLazy *z = lang_alloc(sizeof *z);
  z->n = parse_top_statements(vm, f->text->data, f->text->len, &z->stmts);
  size_t n = z->n ? (size_t)z->n : 1;
  z->state = lang_alloc_atomic(n);
  memset(z->state, LAZY_NOT_LOADED, n);
  z->bound = lang_alloc(n * sizeof *z->bound);
  z->bound_known = lang_alloc_atomic(n * sizeof *z->bound_known);
  memset(z->bound_known, 0, n * sizeof *z->bound_known);
  z->index = lang_dict_new();
  for (int i = 0; i < z->n; i++) {
    Value seen;
    ObjStr *name = z->stmts[i].name;
    if (!name) continue;
    if (lang_dict_get(z->index, name, &seen)) {
      Value r;
      return run_source(vm, m, file, false, &r);
    }
    lang_dict_put(z->index, name, v_int(i));
  }
  m->lazy = z;
  for (int i = 0; i < z->n; i++)
    if (!z->stmts[i].name && z->state[i] == LAZY_NOT_LOADED && !load_statements(vm, m, i)) return false;
  return true;
}

/* `import name`: name.ms next to the importing file, then in the
 * standard library; each file is loaded once per VM. */
static bool import_module(MistVM *vm, ObjStr *name, ObjModule *from, Value *out) {
  if (vm->sandbox) return lang_raise(vm, "ImportError", "imports are disabled in the sandbox");
  StrBuf path;
  sb_init(&path);
  const char *fp = from && from->path ? from->path->data : "";
  const char *slash = strrchr(fp, '/');
  if (slash) sb_add(&path, fp, (size_t)(slash - fp) + 1);
  sb_printf(&path, "%s.ms", name->data);
  if (!file_exists(path.data)) {
    path.len = 0;
    sb_printf(&path, "%s/%s.ms", lang_stdlib_dir(), name->data);
    if (!file_exists(path.data)) return lang_raise(vm, "ImportError", "No module named '%s'", name->data);
  }
  char *real = realpath(path.data, NULL);
  ObjStr *key = lang_str(real ? real : path.data);
  free(real);
  if (lang_dict_get(vm->modules, key, out)) return true;
  ObjModule *m = module_new(vm, name->data, path.data);
  *out = v_obj(m);
  lang_dict_put(vm->modules, key, *out);   /* before running: a cycle sees it */
  size_t len;
  const char *why;
  char *text = read_file(path.data, &len, &why);
  if (!text) return lang_raise(vm, "ImportError", "can't read '%s': %s", path.data, why);
  int file = add_file(vm, path.data, text, len);
  if (file < 0) return false;
  m->file_id = file;
  Value r;
  /* errors inside the module keep their own spans; the import line is
   * added to the traceback by the caller's frame */
  if (loads_lazily(name->data, path.data)) return start_lazily(vm, m, file);
  return run_source(vm, m, file, false, &r);
}

/* ---- IR ---- */

/* grad(f) for a closure f of g (what it captured Unbound); false with
 * the error raised. */
static bool grad_of(MistVM *vm, IrGraph *g, Value *out) {
  ir_free_vars(g);
  Value *env = lang_alloc((g->nfv ? g->nfv : 1) * sizeof *env);
  for (int i = 0; i < g->nfv; i++) env[i] = v_unbound();
  Value f = v_obj(ev_closure(vm, g, env)), grad;
  if (!lang_dict_get(vm->builtins, lang_str("grad"), &grad))
    return lang_raise(vm, "NameError", "grad is not available in this build");
  return vm->call(vm, grad, 1, &f, NULL, out);
}

/* `mist ir --source --grad`: the whole program of grad(g), as
 * show_source(grad(f)) prints it.  The file is not run, so the values g
 * captured from its top level are Unbound here: the printout reads them
 * by name, from the program it is pasted after. */
static MistStatus print_grad_source(MistVM *vm, IrGraph *g, StrBuf *sb) {
  Value gf;
  if (!grad_of(vm, g, &gf)) return MIST_ERROR;
  std_print_source_value(vm, gf, sb);
  return MIST_OK;
}

static MistStatus print_graph(MistVM *vm, IrGraph *g, int flags) {
  StrBuf sb;
  sb_init(&sb);
  if ((flags & MIST_IR_GRAD) && (flags & MIST_IR_SOURCE)) {
    if (print_grad_source(vm, g, &sb) != MIST_OK) return MIST_ERROR;
    lang_write(vm, sb.data, sb.len);
    return MIST_OK;
  }
  if (flags & MIST_IR_GRAD) {
    /* J(g) returns (value, backpropagator); its graphs are the derivative */
    IrGraph *jg = ad_reverse(vm, g);
    if (!jg) return MIST_ERROR;
    g = jg;
  }
  if (flags & MIST_IR_SOURCE) std_print_source(vm, g, &sb);
  else ir_print_graph(vm, g, &sb);
  lang_write(vm, sb.data, sb.len);
  return MIST_OK;
}

MistStatus mist_print_ir(MistVM *vm, const char *name, int flags) {
  lang_gc_enter_thread();
  if (!vm) return MIST_ERROR;
  lang_error_clear(vm);
  if (is_null(vm, "mist_print_ir", "name", name)) return MIST_ERROR;
  if (flags & MIST_IR_OPT) {
    /* the graphs have run: the passes change no graph the interpreter has compiled */
    lang_raise(vm, "ValueError", "the optimised IR is printed from a file (mist ir --opt FILE.ms NAME)");
    return MIST_ERROR;
  }
  Value slot;
  ObjModule *m = vm->main;
  if (m->names && lang_dict_get(m->names, lang_str(name), &slot)) {
    Value v = m->slots[slot.i];
    if (v_is_obj(v, O_FUNC)) return print_graph(vm, AS_FUNC(v)->graph, flags);
    if (v.tag != V_UNBOUND) {
      lang_raise(vm, "TypeError", "'%s' is a %s, not a function", name, lang_type_name(v));
      return MIST_ERROR;
    }
  }
  lang_raise(vm, "NameError", "no function named '%s'", name);
  return MIST_ERROR;
}

/* Whether the signature the user gave has g's number of arguments;
 * if not, raised at the def, which the user then sees beside it. */
static bool arity_matches(MistVM *vm, IrGraph *g, int nargs) {
  if (nargs == g->nparams) return true;
  return lang_raise_at(vm, g->span, "TypeError", "%s() takes %d argument%s but the signature gives %d",
                       g->display->data, g->nparams, g->nparams == 1 ? "" : "s", nargs);
}

/* `mist ir --types`: the specialisation of g (with --grad, of grad(g))
 * for the argument types, the module's own defs standing for its
 * globals. */
static MistStatus print_types(MistVM *vm, IrGraph *g, IrGraph *module_code, int flags, int nargs,
                              const char *const *argtypes) {
  IrType **args = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *args);
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = ir_parse_argtype(vm, argtypes[i]))) return MIST_ERROR;
  IrType **fv = NULL;
  if (flags & MIST_IR_GRAD) {
    /* the graph of grad(g), with the types of what it captured (g) */
    Value gf;
    if (!grad_of(vm, g, &gf)) return MIST_ERROR;
    if (!v_is_obj(gf, O_FUNC)) {
      lang_raise(vm, "TypeError", "grad(%s) is not a function made of IR", g->display->data);
      return MIST_ERROR;
    }
    g = AS_FUNC(gf)->graph;
    ir_free_vars(g);
    fv = lang_alloc((size_t)(g->nfv ? g->nfv : 1) * sizeof *fv);
    for (int i = 0; i < g->nfv; i++)
      fv[i] = i < AS_FUNC(gf)->nenv ? ir_infer_value_type(vm, AS_FUNC(gf)->env[i]) : &ir_t_any;
  }
  IrInferOpts opts = {module_code, fv};
  IrTyped *t = ir_infer(vm, g, nargs, args, &opts);
  if (!t) return MIST_ERROR;
  StrBuf sb;
  sb_init(&sb);
  ir_print_typed(vm, t, &sb);
  lang_write(vm, sb.data, sb.len);
  return MIST_OK;
}

const char *mist_argtype_error(MistVM *vm, const char *text) {
  lang_gc_enter_thread();
  if (!vm) return null_vm_message + strlen("error: ");
  lang_error_clear(vm);
  if (!text) return "the type is NULL";
  if (ir_parse_argtype(vm, text)) return NULL;
  return vm->err.message ? vm->err.message->data : "not a type";
}

static MistStatus print_llvm(MistVM *vm, IrGraph *g, const Value *env, IrGraph *module_code, int nargs,
                             const char *const *argtypes) {
  if (!arity_matches(vm, g, nargs)) return MIST_ERROR;
  IrType **args = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *args);
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = ir_parse_argtype(vm, argtypes[i]))) return MIST_ERROR;
  StrBuf sb;
  sb_init(&sb);
  if (!jit_emit_llvm(vm, g, env, nargs, args, module_code, &sb)) return MIST_ERROR;
  lang_write(vm, sb.data, sb.len);
  return MIST_OK;
}

MistStatus mist_print_llvm(MistVM *vm, const char *name, int nargs, const char *const *argtypes) {
  lang_gc_enter_thread();
  if (!vm) return MIST_ERROR;
  lang_error_clear(vm);
  if (is_null(vm, "mist_print_llvm", "name", name) ||
      argtypes_missing(vm, "mist_print_llvm", nargs, argtypes, false))
    return MIST_ERROR;
  Value slot;
  ObjModule *m = vm->main;
  if (m->names && lang_dict_get(m->names, lang_str(name), &slot)) {
    Value v = m->slots[slot.i];
    if (v_is_obj(v, O_FUNC)) return print_llvm(vm, AS_FUNC(v)->graph, AS_FUNC(v)->env, NULL, nargs, argtypes);
    if (v.tag != V_UNBOUND) {
      lang_raise(vm, "TypeError", "'%s' is a %s, not a function", name, lang_type_name(v));
      return MIST_ERROR;
    }
  }
  lang_raise(vm, "NameError", "no function named '%s'", name);
  return MIST_ERROR;
}

MistStatus mist_print_file_ir(MistVM *vm, const char *path, const char *name, int flags) {
  return mist_print_file_ir_types(vm, path, name, flags, -1, NULL);
}

/* The IR (nargs -1), the typed IR or (llvm) the LLVM IR of function
 * name of a file that is compiled, not run. */
static MistStatus print_file(MistVM *vm, const char *path, const char *name, int flags, int nargs,
                             const char *const *argtypes, bool llvm) {
  lang_gc_enter_thread();
  if (!vm) return MIST_ERROR;
  lang_error_clear(vm);
  const char *call = llvm ? "mist_print_file_llvm" : "mist_print_file_ir";
  if (is_null(vm, call, "path", path) || is_null(vm, call, "name", name) ||
      argtypes_missing(vm, call, nargs, argtypes, !llvm))
    return MIST_ERROR;
  size_t len;
  const char *why;
  char *text = read_file(path, &len, &why);
  if (!text) {
    lang_raise(vm, "OSError", "can't open file '%s': %s", path, why);
    return MIST_ERROR;
  }
  int file = add_file(vm, path, text, len);
  vm->main->path = lang_str(path);
  LowerResult lr;
  if (file < 0 || !compile(vm, vm->main, file, false, flags & MIST_IR_OPT, &lr)) return MIST_ERROR;
  for (int i = 0; i < lr.unit->ngraphs; i++) {
    IrGraph *g = lr.unit->graphs[i];
    if ((g->flags & IRG_FUNCTION) && strcmp(g->name->data, name) == 0) {
      if (nargs >= 0 && !(flags & MIST_IR_GRAD) && !arity_matches(vm, g, nargs)) return MIST_ERROR;
      if (llvm) return print_llvm(vm, g, NULL, lr.main, nargs, argtypes);
      return nargs >= 0 ? print_types(vm, g, lr.main, flags, nargs, argtypes) : print_graph(vm, g, flags);
    }
  }
  lang_raise(vm, "NameError", "no top-level function named '%s' in %s", name, path);
  return MIST_ERROR;
}

MistStatus mist_print_file_ir_types(MistVM *vm, const char *path, const char *name, int flags,
                                    int nargs, const char *const *argtypes) {
  return print_file(vm, path, name, flags, nargs, argtypes, false);
}

MistStatus mist_print_file_llvm(MistVM *vm, const char *path, const char *name, int nargs,
                                const char *const *argtypes) {
  return print_file(vm, path, name, 0, nargs, argtypes, true);
}
