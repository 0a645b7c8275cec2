/* progress.c: progress(seq, desc=""), a progress bar over anything a
 * for loop walks.
 *
 * progress() returns a native value whose stream (NativeClass.iter)
 * wraps seq's: handing out item i, it counts i + 1 items done and draws
 * the bar through lang_write_err.  On a terminal the bar is redrawn in
 * place (at most ten times a second, and always for the last item, after
 * which it ends its line); elsewhere (a log, a pipe) it prints a line
 * each time another tenth of the items is done.  The line is tqdm's:
 *
 *   epoch 1:  40%|########            | 188/469 [00:01<00:01, 161.32 it/s]
 *
 * An item counts as done when the loop takes it, not when the loop's
 * body has finished with it: a for loop asks its sequence for nothing
 * after the last item, so there is no later moment to count it.  A
 * sequence without a length (an infinite dataset) shows the count and
 * rate only, with a line at 10, 100, 1000... items off a terminal. */
#include <string.h>
#include <time.h>

#include "ir/eval.h"
#include "lang/gc.h"
#include "stdlib/builtins.h"
#include "stdlib/files.h"

#define BAR_WIDTH 20

typedef struct Progress {
  ObjNative base;
  Value seq;
  ObjStr *desc;
} Progress;

typedef struct Bar {
  ObjNative base;
  Value seq;          /* what the loop indexes: seq's own stream */
  ObjStr *desc;
  int64_t total;      /* -1: unknown */
  double start, last_draw;
  int64_t logged;     /* off a terminal: tenths (or powers of ten) printed */
} Bar;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void clock_text(StrBuf *sb, double s) {
  if (!(s >= 0) || s > 1e9) {
    sb_adds(sb, "?");
    return;
  }
  long t = (long)(s + 0.5);
  if (t >= 3600) sb_printf(sb, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else sb_printf(sb, "%02ld:%02ld", t / 60, t % 60);
}

static void draw(MistVM *vm, Bar *b, int64_t n, bool tty, bool last) {
  double el = now() - b->start;
  StrBuf sb;
  sb_init(&sb);
  if (tty) sb_addc(&sb, '\r');
  if (b->desc->len) sb_printf(&sb, "%s: ", b->desc->data);
  double rate = el > 0 ? (double)n / el : 0;
  if (b->total >= 0) {
    int pct = b->total ? (int)(100 * n / b->total) : 100;
    int fill = b->total ? (int)(BAR_WIDTH * n / b->total) : BAR_WIDTH;
    sb_printf(&sb, "%3d%%|", pct);
    for (int i = 0; i < BAR_WIDTH; i++) sb_addc(&sb, i < fill ? '#' : ' ');
    sb_printf(&sb, "| %lld/%lld [", (long long)n, (long long)b->total);
    clock_text(&sb, el);
    sb_addc(&sb, '<');
    clock_text(&sb, rate > 0 ? (double)(b->total - n) / rate : (n == b->total ? 0 : -1));
  } else {
    sb_printf(&sb, "%lld [", (long long)n);
    clock_text(&sb, el);
  }
  sb_printf(&sb, ", %.2f it/s]", rate);
  if (!tty || last) sb_addc(&sb, '\n');
  lang_write_err(vm, sb.data, sb.len);
}

static bool bar_len(MistVM *vm, Value self, int64_t *out) {
  return lang_len(vm, ((Bar *)self.o)->seq, out);
}

static bool bar_getitem(MistVM *vm, Value self, Value index, Value *out) {
  Bar *b = (Bar *)self.o;
  if (!lang_getitem(vm, b->seq, index, out)) return false;
  if (index.tag != V_INT) return true;
  int64_t n = index.i + 1;
  bool tty = lang_err_is_tty(vm);
  bool last = b->total >= 0 && n >= b->total;
  if (tty) {
    double t = now();
    if (last || n == 1 || t - b->last_draw >= 0.1) {
      b->last_draw = t;
      draw(vm, b, n, true, last);
    }
  } else if (b->total > 0) {
    int64_t tenth = 10 * n / b->total;
    if (tenth > b->logged) {
      b->logged = tenth;
      draw(vm, b, n, false, last);
    }
  } else if (b->total < 0) {
    int64_t p = 1;
    while (p <= n / 10) p *= 10;
    if (n >= 10 && n == p && p > b->logged) {
      b->logged = p;
      draw(vm, b, n, false, false);
    }
  }
  return true;
}

static const NativeClass bar_class = {"progress_stream", NULL, bar_len, NULL, bar_getitem};

/* The stream: seq's (what `for` would index), wrapped in a Bar. */
static bool progress_iter(MistVM *vm, Value self, Value *out) {
  Progress *p = (Progress *)self.o;
  Value iter_seq = ir_prim_value(vm, IR_P_ITER_SEQ), seq;
  if (!AS_BUILTIN(iter_seq)->fn(vm, 1, &p->seq, NULL, &seq)) return false;
  int64_t n;
  if (!lang_len(vm, seq, &n)) return false;
  Bar *b = lang_alloc(sizeof *b);
  b->base.obj.kind = O_NATIVE;
  b->base.cls = &bar_class;
  b->seq = seq;
  b->desc = p->desc;
  b->total = n == INT64_MAX ? -1 : n;   /* an infinite dataset's stream */
  b->start = now();
  if (b->total == 0 && lang_err_is_tty(vm)) draw(vm, b, 0, true, true);
  *out = v_obj(b);
  return true;
}

static bool progress_len(MistVM *vm, Value self, int64_t *out) {
  return lang_len(vm, ((Progress *)self.o)->seq, out);
}

static const NativeClass progress_class = {"progress", NULL, progress_len, progress_iter, NULL};

static bool bi_progress(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"seq", "desc"};
  Value a[2];
  if (!std_parse_args(vm, "progress", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 1, true, a))
    return false;
  if (a[1].tag != V_UNBOUND && !v_is_obj(a[1], O_STR))
    return lang_raise(vm, "TypeError", "progress: desc must be a str, not '%s'", lang_type_name(a[1]));
  Progress *p = lang_alloc(sizeof *p);
  p->base.obj.kind = O_NATIVE;
  p->base.cls = &progress_class;
  p->seq = a[0];
  p->desc = a[1].tag == V_UNBOUND ? lang_str("") : AS_STR(a[1]);
  *out = v_obj(p);
  return true;
}

void std_register_progress(MistVM *vm) { lang_def_builtin(vm, "progress", bi_progress, -1, -1); }
