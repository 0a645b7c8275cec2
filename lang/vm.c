/* vm.c: the interpreter state's own machinery: raising and clearing
 * errors, traceback entries, rendering an error the way the CLI prints
 * it, the table of source files that spans refer to, output through the
 * host's write callback, the builtin and method tables, the recursion
 * guard, and where the standard library's files are.
 *
 * An error is a record in vm->err, not a longjmp: lang_raise fills it
 * and returns false, and every caller passes the false up.  The
 * interpreter adds the span and, while unwinding, one traceback entry
 * per Mist frame (innermost pushed first, so entries are prepended and
 * the array stays outermost first).
 */
#define _GNU_SOURCE   /* dladdr */
#include <ctype.h>
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/gc.h"
#include "lang/strbuf.h"
#include "lang/tensor.h"
#include "lang/vm.h"

/* ---- the VM handle ---- */

/* The interpreter lock (vm.h): a flag under a mutex rather than a held
 * mutex, since the thread that gives it back need not be the one that
 * took it (each mist_eval runs on a thread of its own). */
struct LangLock {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool held;
};

MistVM *lang_vm_new(void) {
  lang_gc_init();
  MistVM *vm = lang_alloc_uncollectable(sizeof(MistVM));
  memset(vm, 0, sizeof *vm);
  vm->err.span = span_none();
  vm->max_depth = LANG_DEFAULT_MAX_DEPTH;
  vm->print_options = lang_print_defaults();
  return vm;
}

void lang_vm_free(MistVM *vm) {
  if (vm->stop_threads) vm->stop_threads(vm);
  lang_tensor_vm_free(vm);
  if (vm->lock) {
    pthread_mutex_destroy(&vm->lock->mu);
    pthread_cond_destroy(&vm->lock->cv);
    free(vm->lock);
  }
  lang_free(vm);
}

void lang_set_stack_budget(MistVM *vm, size_t bytes) {
  if (bytes == 0) {
    struct rlimit rl;
    size_t total = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      total = (size_t)rl.rlim_cur;
    if (total > (1u << 30)) total = 1u << 30;
    /* leave room for what runs above us and for C code called near the limit */
    bytes = total > (512u << 10) ? total - total / 8 - (256u << 10) : total / 2;
  }
  char *here = __builtin_frame_address(0);
  vm->stack_limit = (uintptr_t)here > bytes ? here - bytes : NULL;
}

/* ---- errors ---- */

static bool raise_v(MistVM *vm, Span span, const char *kind, const char *fmt, va_list ap) {
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  ObjStr *msg;
  if (n < 0) {
    msg = lang_str("(unprintable error message)");
  } else if ((size_t)n < sizeof small) {
    msg = lang_str_new(small, (size_t)n);
  } else {
    char *buf = lang_alloc_atomic((size_t)n + 1);
    vsnprintf(buf, (size_t)n + 1, fmt, ap2);
    msg = lang_str_new(buf, (size_t)n);
  }
  va_end(ap2);
  MistError *e = &vm->err;
  e->set = true;
  e->kind = kind ? lang_strdup(kind) : "Error";
  e->message = msg;
  e->span = span;
  e->incomplete = false;
  e->ntrace = 0;
  return false;
}

bool lang_raise(MistVM *vm, const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(vm, span_none(), kind, fmt, ap);
  va_end(ap);
  return false;
}

bool lang_raise_at(MistVM *vm, Span span, const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(vm, span, kind, fmt, ap);
  va_end(ap);
  return false;
}

void lang_error_clear(MistVM *vm) {
  MistError *e = &vm->err;
  e->set = false;
  e->kind = NULL;
  e->message = NULL;
  e->span = span_none();
  e->incomplete = false;
  e->ntrace = 0;
}

/* Frames are pushed while unwinding, innermost first, so the array is
 * kept innermost first (an append) and printed backwards. */
void lang_trace_push(MistVM *vm, Span span, const char *name) {
  MistError *e = &vm->err;
  if (e->ntrace == e->captrace) {
    int cap = e->captrace ? 2 * e->captrace : 8;
    e->trace = lang_realloc(e->trace, (size_t)cap * sizeof(TraceEntry));
    e->captrace = cap;
  }
  e->trace[e->ntrace].span = span;
  e->trace[e->ntrace].name = name ? name : "?";
  e->ntrace++;
}

static const char *file_path(MistVM *vm, int file) {
  if (file < 0 || file >= vm->nfiles || !vm->files[file].path) return "<unknown>";
  return vm->files[file].path->data;
}

/* The caret line: as many columns as the source line has characters
 * before `col` (tabs copied, so the caret lines up in any terminal). */
static void add_caret(StrBuf *sb, const char *line, size_t len, int col, int width) {
  sb_adds(sb, "    ");
  size_t i = 0;
  for (int c = 1; c < col; c++) {
    if (i < len && line[i] == '\t') {
      sb_addc(sb, '\t');
    } else {
      sb_addc(sb, ' ');
    }
    if (i < len) {
      i++;
      while (i < len && ((unsigned char)line[i] & 0xc0) == 0x80) i++;
    }
  }
  if (width < 1) width = 1;
  for (int k = 0; k < width; k++) sb_addc(sb, '^');
  sb_addc(sb, '\n');
}

/* A source line as valid UTF-8 without NUL bytes (the rendered error is
 * a C string, which a NUL would cut short before its caret): each byte
 * of a malformed sequence, and each NUL (the error that reports it
 * points there), shown as U+FFFD, one column. */
static const char *valid_line(const char *line, size_t *len) {
  size_t bad = lang_utf8_check(line, *len);
  if (bad == *len && !memchr(line, '\0', *len)) return line;
  StrBuf sb;
  sb_init(&sb);
  for (size_t i = 0; i < *len;) {
    size_t ok = lang_utf8_check(line + i, *len - i);
    const char *nul = memchr(line + i, '\0', ok);
    if (nul) ok = (size_t)(nul - (line + i));
    sb_add(&sb, line + i, ok);
    i += ok;
    if (i < *len) sb_adds(&sb, "\xef\xbf\xbd"), i++;
  }
  *len = sb.len;
  return sb.data;
}

static bool internal_span(MistVM *vm, Span s) {
  return s.file >= 0 && s.file < vm->nfiles && vm->files[s.file].internal;
}

/* The traceback without the frames in internal code, nor the innermost
 * frames without a place (a builtin's wrapper that autodiff made), which
 * say nothing to the user; and the error's place, when it is in
 * internal code, moved out to the innermost frame left. */
static Span leave_internal(MistVM *vm, TraceEntry *trace, int *ntrace) {
  MistError *e = &vm->err;
  Span sp = e->span;
  bool move = internal_span(vm, sp), innermost = true;
  int n = 0;
  for (int i = 0; i < e->ntrace; i++) {
    TraceEntry t = e->trace[i];
    if (internal_span(vm, t.span) || (innermost && t.span.file < 0)) continue;
    if (innermost && move) sp = t.span;
    innermost = false;
    trace[n++] = t;
  }
  if (innermost && move) sp = span_none();
  *ntrace = n;
  return sp;
}

/* An augmented assignment's TypeError names its operator with the '=', as
 * Python's does ("for +=:", "for **=:").  The IR has no in-place operations:
 * `x += v` raised the message of `+`, placed at the statement, which starts
 * with its target (a name, then subscripts, calls, attributes).  So where
 * the source has the operator and '=' right after such a target, the
 * message is Python's for the statement; else it is msg unchanged. */
static const char *augmented_message(const char *msg, const char *line, size_t len, int col) {
  static const char prefix[] = "unsupported operand type(s) for ";
  size_t np = sizeof prefix - 1;
  if (strncmp(msg, prefix, np) != 0) return msg;
  const char *rest = strstr(msg + np, ": '");
  if (!rest) return msg;
  size_t nsym = strncmp(msg + np, "** or pow()", 11) == 0 ? 2 : (size_t)(rest - (msg + np));
  size_t i = 0;
  for (int c = 1; c < col && i < len; c++)
    for (i++; i < len && ((unsigned char)line[i] & 0xc0) == 0x80; i++) {}
  if (i >= len || !(isalpha((unsigned char)line[i]) || line[i] == '_')) return msg;
  int depth = 0;
  char quote = 0;
  for (; i < len; i++) {
    char ch = line[i];
    if (quote) {
      if (ch == '\\') i++;
      else if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '[' || ch == '(') {
      depth++;
    } else if (ch == ']' || ch == ')') {
      depth--;
    } else if (depth == 0 && !(isalnum((unsigned char)ch) || ch == '_' || ch == '.')) {
      break;
    }
  }
  while (i < len && line[i] == ' ') i++;
  if (i + nsym >= len || strncmp(line + i, msg + np, nsym) != 0 || line[i + nsym] != '=') return msg;
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%s%.*s=%s", prefix, (int)nsym, msg + np, rest);
  return sb.data;
}

ObjStr *lang_error_render(MistVM *vm) {
  MistError *e = &vm->err;
  StrBuf sb;
  sb_init(&sb);
  TraceEntry *trace = lang_alloc((e->ntrace ? e->ntrace : 1) * sizeof *trace);
  int ntrace;
  Span sp = leave_internal(vm, trace, &ntrace);
  const char *msg = e->message ? e->message->data : "";
  /* A KeyError's message is the key's repr alone, which says nothing
   * by itself ("error: 'b'"): it is shown with its class, as Python's
   * last traceback line shows it.  Other messages say what went wrong. */
  const char *cls = e->kind && strcmp(e->kind, "KeyError") == 0 ? "KeyError: " : "";
  /* exit("message") is not an error: its message alone, or nothing */
  if (e->kind && strcmp(e->kind, "SystemExit") == 0) return lang_str(msg);
  if (sp.file < 0) {
    sb_printf(&sb, "error: %s%s\n", cls, msg);
  } else {
    size_t len;
    const char *line = lang_file_line(vm, sp.file, sp.line, &len);
    if (line) line = valid_line(line, &len);
    if (line && e->kind && strcmp(e->kind, "TypeError") == 0) msg = augmented_message(msg, line, len, sp.col);
    sb_printf(&sb, "%s:%d:%d: error: %s%s\n", file_path(vm, sp.file), sp.line, sp.col, cls, msg);
    if (line) {
      sb_adds(&sb, "    ");
      sb_add(&sb, line, len);
      sb_addc(&sb, '\n');
      add_caret(&sb, line, len, sp.col, sp.len);
    }
  }
  if (ntrace > 0) {
    sb_adds(&sb, "Traceback (innermost last):\n");
    /* as Python does, a line repeated more than three times in a row
     * (runaway recursion) is shown three times and counted */
    int repeats = 0;
    for (int i = ntrace - 1; i >= 0; i--) {
      TraceEntry *t = &trace[i];
      bool same = i < ntrace - 1 && t->span.file == t[1].span.file && t->span.line == t[1].span.line &&
                  t->span.col == t[1].span.col && strcmp(t->name, t[1].name) == 0;
      repeats = same ? repeats + 1 : 0;
      if (repeats >= 3) {
        if (i > 0 && t->span.line == t[-1].span.line && t->span.col == t[-1].span.col &&
            t->span.file == t[-1].span.file && strcmp(t->name, t[-1].name) == 0)
          continue;
        sb_printf(&sb, "  [Previous line repeated %d more time%s]\n", repeats - 2, repeats - 2 == 1 ? "" : "s");
        continue;
      }
      if (t->span.file < 0)
        sb_printf(&sb, "  <unknown> in %s\n", t->name);
      else
        sb_printf(&sb, "  %s:%d:%d in %s\n", file_path(vm, t->span.file), t->span.line,
                  t->span.col, t->name);
    }
  }
  return sb_to_str(&sb);
}

/* ---- source files ---- */

int lang_file_add(MistVM *vm, const char *path, const char *text, size_t len) {
  if (vm->nfiles == vm->capfiles) {
    int cap = vm->capfiles ? 2 * vm->capfiles : 8;
    vm->files = lang_realloc(vm->files, (size_t)cap * sizeof(SourceFile));
    vm->capfiles = cap;
  }
  SourceFile *f = &vm->files[vm->nfiles];
  f->path = lang_str(path ? path : "<string>");
  f->text = lang_str_new(text ? text : "", text ? len : 0);
  return vm->nfiles++;
}

const char *lang_file_line(MistVM *vm, int file, int line, size_t *len) {
  if (file < 0 || file >= vm->nfiles || line < 1 || !vm->files[file].text) return NULL;
  const ObjStr *t = vm->files[file].text;
  const char *p = t->data, *end = t->data + t->len;
  for (int l = 1; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return NULL;
    p = nl + 1;
  }
  if (p == end && line > 1) {
    /* a line after a final newline exists only as an empty last line */
    if (len) *len = 0;
    return p;
  }
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
  if (n > 0 && p[n - 1] == '\r') n--;
  if (len) *len = n;
  return p;
}

/* ---- output ---- */

void lang_write(MistVM *vm, const char *text, size_t len) {
  vm->effects++;
  if (vm->write) {
    vm->write(vm->write_user, text, len);
  } else {
    fwrite(text, 1, len, stdout);
  }
}

void lang_write_err(MistVM *vm, const char *text, size_t len) {
  vm->effects++;
  if (vm->write_err) {
    vm->write_err(vm->write_err_user, text, len);
  } else {
    fflush(stdout);
    fwrite(text, 1, len, stderr);
    fflush(stderr);
  }
}

bool lang_err_is_tty(MistVM *vm) {
  return vm->write_err ? vm->err_is_tty : isatty(STDERR_FILENO);
}

/* ---- builtin tables ---- */

static ObjBuiltin *def_in(MistVM *vm, ObjDict **table, const char *name, BuiltinFn fn,
                          int min_args, int max_args) {
  if (!*table) *table = lang_dict_new();
  ObjBuiltin *b = lang_builtin_new(name, fn, min_args, max_args);
  lang_dict_put(*table, lang_intern(vm, name, strlen(name)), v_obj(b));
  return b;
}

ObjBuiltin *lang_def_builtin(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args) {
  return def_in(vm, &vm->builtins, name, fn, min_args, max_args);
}

ObjBuiltin *lang_def_method(MistVM *vm, const char *name, BuiltinFn fn, int min_args, int max_args) {
  return def_in(vm, &vm->methods, name, fn, min_args, max_args);
}

ObjBuiltin *lang_def_property(MistVM *vm, const char *name, BuiltinFn fn) {
  return def_in(vm, &vm->properties, name, fn, 1, 1);
}

/* ---- recursion guard ---- */

bool lang_check_stack(MistVM *vm) {
  char *here = __builtin_frame_address(0);
  if ((vm->stack_limit && here < vm->stack_limit) || vm->depth > vm->max_depth)
    return lang_raise(vm, "RecursionError", "maximum recursion depth exceeded");
  return true;
}

/* ---- threads ---- */

bool lang_lock_init(MistVM *vm) {
  if (vm->lock) return true;
  struct LangLock *l = malloc(sizeof *l);
  if (!l) return false;
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->held = true;
  vm->lock = l;
  return true;
}

void lang_unlock(MistVM *vm, LangThreadState *save) {
  save->stack_limit = vm->stack_limit;
  save->depth = vm->depth;
  save->err = vm->err;
  save->callee = vm->callee;
  struct LangLock *l = vm->lock;
  if (!l) return;
  pthread_mutex_lock(&l->mu);
  l->held = false;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

void lang_lock(MistVM *vm, const LangThreadState *state) {
  struct LangLock *l = vm->lock;
  if (l) {
    pthread_mutex_lock(&l->mu);
    while (l->held) pthread_cond_wait(&l->cv, &l->mu);
    l->held = true;
    pthread_mutex_unlock(&l->mu);
  }
  vm->stack_limit = state->stack_limit;
  vm->depth = state->depth;
  vm->err = state->err;
  vm->callee = state->callee;
}

void lang_thread_state_init(LangThreadState *st, char *stack_low) {
  memset(st, 0, sizeof *st);
  st->err.span = span_none();
  /* the same margin as the evaluation thread's: C code between two checks */
  st->stack_limit = stack_low ? stack_low + (256u << 10) : NULL;
}

static bool no_mist_here(MistVM *vm, Value fn, int argc, const Value *argv, const KwArgs *kw,
                         Value *out) {
  return lang_raise(vm, "RuntimeError", "Mist code cannot run on this thread");
}

MistVM *lang_vm_for_thread(MistVM *vm) {
  lang_tensor_pool(vm);
  lang_tensor_allocator(vm);
  MistVM *t = lang_alloc(sizeof *t);
  t->err.span = span_none();
  t->max_depth = vm->max_depth;
  t->call = no_mist_here;
  t->pool = vm->pool;
  t->tensor_heap = vm->tensor_heap;
  return t;
}

/* ---- the standard library's folder ---- */

static char stdlib_dir[4096];
static pthread_once_t stdlib_once = PTHREAD_ONCE_INIT;

static bool is_stdlib(const char *dir) {
  char path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/nn.ms", dir);
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void find_stdlib(void) {
  const char *env = getenv("MIST_STDLIB");
  if (env && *env) {
    snprintf(stdlib_dir, sizeof stdlib_dir, "%s", env);
    return;
  }
  Dl_info info;
  char *here = NULL;
  if (dladdr((void *)find_stdlib, &info) && info.dli_fname) here = realpath(info.dli_fname, NULL);
  if (here) {
    const char *dir = dirname(here);
    static const char *const beside[] = {"../stdlib", "../../stdlib", "../share/mist/stdlib"};
    for (size_t i = 0; i < sizeof beside / sizeof *beside; i++) {
      char cand[4200];
      snprintf(cand, sizeof cand, "%s/%s", dir, beside[i]);
      char *real = realpath(cand, NULL);
      bool found = real && is_stdlib(real) && strlen(real) < sizeof stdlib_dir;
      if (found) strcpy(stdlib_dir, real);
      free(real);
      if (found) {
        free(here);
        return;
      }
    }
    free(here);
  }
  snprintf(stdlib_dir, sizeof stdlib_dir, "%s", MIST_STDLIB_DIR);
}

const char *lang_stdlib_dir(void) {
  pthread_once(&stdlib_once, find_stdlib);
  return stdlib_dir;
}
