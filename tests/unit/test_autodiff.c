/* test_autodiff.c: grad, value_and_grad and jvp on random programs,
 * through the public API (include/mist.h).
 *
 * A seeded generator writes small Mist programs: a function f of one to
 * three float parameters built from + - * / and unary minus, constants,
 * `if`/`elif`/`else` and conditional expressions on comparisons of
 * intermediate values, `for range` and `while` loops with small trip
 * counts (with `break` and `continue`), closures capturing intermediate
 * values and applied later (also through a higher-order helper), tuples
 * built and unpacked, calls of helper functions, and a recursive helper
 * with a depth argument.  Divisions are
 * by 1 + v*v and loops squash their carried value, so nothing divides by
 * zero or overflows.
 *
 * Each program is checked in Mist itself (the CHECK prelude below) at a
 * random point: value_and_grad over all parameters against f's value and
 * against central differences (step 1e-6 relative, float64; agreement
 * within rtol 1e-4, atol 1e-6), and jvp along each axis against grad.
 * Where the function is not smooth within the step (an `if` boundary
 * between x - h and x + h), differences with two step sizes disagree with
 * each other and the point is skipped; skips must stay rare.  The checker
 * prints "ok", "skip" or "FAIL ...", and the C side reads that back.
 *
 * MIST_AD_PROGRAMS (default 320) and MIST_AD_SEED (default 1) in the
 * environment run more programs or others, and MIST_AD_DUMP=1 writes each
 * program and its verdict to stderr.  A failure prints the program, so it
 * can be rerun with `mist -e` after the CHECK prelude.
 */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "mist.h"

/* ---- output capture ---- */

#include "capture.h"

static void buf_printf(Buf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  ck_assert_int_lt(n, (int)sizeof tmp);
  buf_add(b, tmp, (size_t)n);
}


static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

/* Run src; it must succeed.  Returns what it printed. */
static const char *run(const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_OK, "failed (status %d):\n%s\n--- error:\n%s", (int)s, src, mist_error(vm));
  return out.data;
}

/* ---- the checker, in Mist ---- */

static const char *CHECK =
    "def _call(f, xs):\n"
    "    n = len(xs)\n"
    "    if n == 1:\n"
    "        return f(xs[0])\n"
    "    if n == 2:\n"
    "        return f(xs[0], xs[1])\n"
    "    return f(xs[0], xs[1], xs[2])\n"
    "\n"
    "def _num(f, xs, i, h):\n"
    "    s = h * max(1.0, abs(xs[i]))\n"
    "    up = list(xs)\n"
    "    up[i] = xs[i] + s\n"
    "    down = list(xs)\n"
    "    down[i] = xs[i] - s\n"
    "    return (_call(f, up) - _call(f, down)) / (2.0 * s)\n"
    "\n"
    "def _near(a, b, rtol, atol):\n"
    "    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))\n"
    "\n"
    "def _check(f, xs):\n"
    "    n = len(xs)\n"
    "    y, g = _call(value_and_grad(f, argnums=tuple(range(n))), xs)\n"
    "    y0 = _call(f, xs)\n"
    "    if y != y0:\n"
    "        return f'FAIL value {y} != {y0}'\n"
    "    if len(g) != n:\n"
    "        return f'FAIL {len(g)} gradients for {n} parameters'\n"
    "    for i in range(n):\n"
    "        if type(g[i]) != 'float':\n"
    "            return f'FAIL gradient {i} is a {type(g[i])}'\n"
    "        num = _num(f, xs, i, 1e-6)\n"
    "        if not _near(g[i], num, 1e-4, 1e-6):\n"
    "            # a kink or a jump within the step: differences with\n"
    "            # another step disagree with these\n"
    "            if not _near(_num(f, xs, i, 1e-7), num, 1e-4, 1e-6):\n"
    "                return 'skip'\n"
    "            return f'FAIL grad {i}: {g[i]} but central differences {num}'\n"
    "        t = [0.0] * n\n"
    "        t[i] = 1.0\n"
    "        yt, tan = jvp(f, tuple(xs), tuple(t))\n"
    "        if yt != y0:\n"
    "            return f'FAIL jvp value {yt} != {y0}'\n"
    "        if not _near(tan, g[i], 1e-9, 1e-12):\n"
    "            return f'FAIL jvp {i}: {tan} but grad {g[i]}'\n"
    "    return 'ok'\n";

/* ---- the generator ---- */

typedef struct Rng {
  uint64_t s;
} Rng;

/* splitmix64: deterministic on every platform */
static uint64_t rng_next(Rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int rnd(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

static double rnd_unit(Rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

enum { MAXV = 64, MAXC = 8, MAXT = 8, MAXH = 3 };

typedef struct Gen {
  Rng rng;
  Buf *b;
  int indent;
  /* float variables in scope */
  char vars[MAXV][16];
  int nvars;
  /* closures of one argument, tuples of three floats, helpers */
  char clos[MAXC][16];
  int nclos;
  char tups[MAXT][16];
  int ntups;
  int helper_arity[MAXH];
  int nhelpers;
  bool has_rec;
  const char *loopvar;   /* an int loop counter usable in expressions, or NULL */
  int fresh;
} Gen;

static void line(Gen *g, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  ck_assert_int_lt(n, (int)sizeof tmp);
  for (int i = 0; i < g->indent; i++) buf_add(g->b, "    ", 4);
  buf_add(g->b, tmp, (size_t)n);
  buf_add(g->b, "\n", 1);
}

static const char *CONSTS[] = {"0.5", "1.5", "2.0", "0.25", "(-0.75)", "(-1.25)", "3.0", "0.1"};

/* An expression over the variables in scope, into b.  Bounded depth. */
static void expr(Gen *g, Buf *b, int depth) {
  Rng *r = &g->rng;
  if (depth <= 0 || rnd(r, 10) < 2) {
    int k = rnd(r, 10);
    if (k < 2 || g->nvars == 0) buf_printf(b, "%s", CONSTS[rnd(r, 8)]);
    else if (k == 2 && g->loopvar) buf_printf(b, "(%s * 0.25)", g->loopvar);
    else if (k == 3 && g->ntups) buf_printf(b, "%s[%d]", g->tups[rnd(r, g->ntups)], rnd(r, 3));
    else buf_printf(b, "%s", g->vars[rnd(r, g->nvars)]);
    return;
  }
  int k = rnd(r, 14);
  switch (k) {
  case 0: case 1:
    buf_add(b, "(", 1); expr(g, b, depth - 1); buf_add(b, " + ", 3); expr(g, b, depth - 1); buf_add(b, ")", 1);
    break;
  case 2: case 3:
    buf_add(b, "(", 1); expr(g, b, depth - 1); buf_add(b, " - ", 3); expr(g, b, depth - 1); buf_add(b, ")", 1);
    break;
  case 4: case 5:
    buf_add(b, "(", 1); expr(g, b, depth - 1); buf_add(b, " * ", 3); expr(g, b, depth - 1); buf_add(b, ")", 1);
    break;
  case 6: {
    /* a / (1 + v*v): never a division by zero; v is a variable so that
     * the text is written once */
    buf_add(b, "(", 1);
    expr(g, b, depth - 1);
    const char *v = g->nvars ? g->vars[rnd(r, g->nvars)] : "1.5";
    buf_printf(b, " / (1.0 + %s * %s))", v, v);
    break;
  }
  case 7:
    buf_add(b, "(-", 2); expr(g, b, depth - 1); buf_add(b, ")", 1);
    break;
  case 8:
    if (g->nhelpers) {
      int h = rnd(r, g->nhelpers);
      buf_printf(b, "h%d(", h);
      expr(g, b, depth - 1);
      if (g->helper_arity[h] == 2) {
        buf_add(b, ", ", 2);
        expr(g, b, depth - 1);
      }
      buf_add(b, ")", 1);
      break;
    }
    /* fall through */
  case 9:
    if (g->nclos) {
      /* a closure applied directly, or passed to the higher-order ap */
      const char *c = g->clos[rnd(r, g->nclos)];
      if (rnd(r, 3) == 0) buf_printf(b, "ap(%s, ", c);
      else buf_printf(b, "%s(", c);
      expr(g, b, depth - 1);
      buf_add(b, ")", 1);
      break;
    }
    /* fall through */
  case 10:
    if (g->has_rec) {
      buf_add(b, "rec(", 4);
      expr(g, b, depth - 1);
      buf_printf(b, ", %d)", rnd(r, 4));
      break;
    }
    /* fall through */
  case 11:
    /* a conditional expression on a comparison of values */
    buf_add(b, "(", 1);
    expr(g, b, depth - 1);
    buf_add(b, " if ", 4);
    expr(g, b, depth - 1);
    buf_printf(b, "%s", rnd(r, 2) ? " < " : " >= ");
    expr(g, b, depth - 1);
    buf_add(b, " else ", 6);
    expr(g, b, depth - 1);
    buf_add(b, ")", 1);
    break;
  default:
    buf_add(b, "(", 1); expr(g, b, depth - 1); buf_add(b, " * ", 3); expr(g, b, depth - 1); buf_add(b, ")", 1);
    break;
  }
}

/* The text of a fresh expression (valid until the next call). */
static const char *ex(Gen *g, int depth) {
  static Buf bufs[4];
  static int next;
  Buf *b = &bufs[next++ % 4];
  buf_clear(b);
  expr(g, b, depth);
  return b->data;
}

static const char *new_var(Gen *g) {
  static char name[16];
  snprintf(name, sizeof name, "v%d", g->fresh++);
  return name;
}

static void add_var(Gen *g, const char *name) {
  if (g->nvars < MAXV) snprintf(g->vars[g->nvars++], 16, "%.15s", name);
}

/* v = e / (1 + e*e) by way of a temporary: bounded, smooth */
static void squash_into(Gen *g, const char *v, const char *e) {
  char t[16];
  snprintf(t, sizeof t, "s%d", g->fresh++);
  line(g, "%s = %s", t, e);
  line(g, "%s = %s / (1.0 + %s * %s)", v, t, t, t);
}

/* "if A op B:" with two fresh expressions, made in order (a call's
 * arguments are evaluated in no fixed order) */
static void if_line(Gen *g, const char *op) {
  const char *a = ex(g, 1);
  const char *b = ex(g, 1);
  line(g, "if %s %s %s:", a, op, b);
}

static void statement(Gen *g, int depth);

static void statements(Gen *g, int n, int depth) {
  for (int i = 0; i < n; i++) statement(g, depth);
}

static void statement(Gen *g, int depth) {
  Rng *r = &g->rng;
  int k = rnd(r, depth > 0 ? 13 : 4);
  char v[16];
  switch (k) {
  case 0: case 1:
    snprintf(v, sizeof v, "%s", new_var(g));
    line(g, "%s = %s", v, ex(g, 2));
    add_var(g, v);
    break;
  case 2: case 3:
    snprintf(v, sizeof v, "%s", new_var(g));
    squash_into(g, v, ex(g, 3));
    add_var(g, v);
    break;
  case 4: case 5: {
    /* if / elif / else assigning the same new variable in each branch */
    snprintf(v, sizeof v, "%s", new_var(g));
    if_line(g, rnd(r, 2) ? "<" : ">");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    if (rnd(r, 2)) {
      const char *a = ex(g, 1);
      const char *b = ex(g, 1);
      line(g, "elif %s <= %s:", a, b);
      g->indent++;
      line(g, "%s = %s", v, ex(g, 2));
      g->indent--;
    }
    line(g, "else:");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    add_var(g, v);
    break;
  }
  case 6: case 7: {
    /* for over a range: a loop-carried value, squashed each time */
    if (!g->nvars) break;
    snprintf(v, sizeof v, "%s", g->vars[rnd(r, g->nvars)]);
    char i[16];
    snprintf(i, sizeof i, "i%d", g->fresh++);
    line(g, "for %s in range(%d):", i, 1 + rnd(r, 3));
    g->indent++;
    const char *saved = g->loopvar;
    g->loopvar = i;
    if (rnd(r, 3) == 0) {
      if_line(g, "<");
      g->indent++;
      line(g, rnd(r, 2) ? "continue" : "break");
      g->indent--;
    }
    char e[1024];
    snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
    squash_into(g, v, e);
    g->loopvar = saved;
    g->indent--;
    break;
  }
  case 8: {
    /* while with a counter, maybe leaving early */
    if (!g->nvars) break;
    snprintf(v, sizeof v, "%s", g->vars[rnd(r, g->nvars)]);
    char j[16];
    snprintf(j, sizeof j, "j%d", g->fresh++);
    line(g, "%s = 0", j);
    line(g, "while %s < %d:", j, 1 + rnd(r, 3));
    g->indent++;
    const char *saved = g->loopvar;
    g->loopvar = j;
    char e[1024];
    snprintf(e, sizeof e, "%s - %s * 0.25", ex(g, 2), v);
    squash_into(g, v, e);
    if (rnd(r, 2)) {
      if_line(g, ">");
      g->indent++;
      line(g, "break");
      g->indent--;
    }
    line(g, "%s += 1", j);
    g->loopvar = saved;
    g->indent--;
    break;
  }
  case 9: case 12: {
    /* a closure capturing intermediate values, applied later */
    if (g->nclos >= MAXC) break;
    char c[16];
    snprintf(c, sizeof c, "c%d", g->fresh++);
    if (rnd(r, 2)) {
      const char *a = ex(g, 1);
      const char *b = ex(g, 1);
      line(g, "%s = lambda t: t * %s + %s", c, a, b);
    } else {
      line(g, "def %s(t):", c);
      g->indent++;
      line(g, "if t > %s:", ex(g, 1));
      g->indent++;
      line(g, "return t * %s", ex(g, 1));
      g->indent--;
      line(g, "return t / (1.0 + t * t) - %s", ex(g, 1));
      g->indent--;
    }
    snprintf(g->clos[g->nclos++], 16, "%.15s", c);
    if (rnd(r, 2)) {
      /* applied at once as well as (maybe) later */
      snprintf(v, sizeof v, "%s", new_var(g));
      const char *a = ex(g, 1);
      line(g, rnd(r, 2) ? "%s = %s(%s)" : "%s = ap(%s, %s)", v, c, a);
      add_var(g, v);
    }
    break;
  }
  case 10: {
    /* a tuple built, later indexed or unpacked */
    if (g->ntups >= MAXT) break;
    char t[16];
    snprintf(t, sizeof t, "tp%d", g->fresh++);
    const char *a = ex(g, 1);
    const char *b = ex(g, 1);
    const char *c = ex(g, 1);
    line(g, "%s = (%s, %s, %s)", t, a, b, c);
    snprintf(g->tups[g->ntups++], 16, "%.15s", t);
    if (rnd(r, 2)) {
      char u[3][16];
      for (int q = 0; q < 3; q++) snprintf(u[q], sizeof u[q], "%s", new_var(g));
      line(g, "%s, %s, %s = %s", u[0], u[1], u[2], t);
      for (int q = 0; q < 3; q++) add_var(g, u[q]);
    }
    break;
  }
  default: {
    /* a nested block: statements inside a branch, joined afterwards */
    snprintf(v, sizeof v, "%s", new_var(g));
    if_line(g, "<");
    int saved = g->nvars, savedc = g->nclos, savedt = g->ntups;
    g->indent++;
    statements(g, 1 + rnd(r, 2), depth - 1);
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    /* names made in one branch are not bound on the other path */
    g->nvars = saved;
    g->nclos = savedc;
    g->ntups = savedt;
    line(g, "else:");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    add_var(g, v);
    break;
  }
  }
}

/* A whole program: helpers, the recursive helper, then f.  Returns the
 * number of parameters of f. */
static int program(uint64_t seed, Buf *b) {
  Gen g = {0};
  g.rng.s = seed * 0x2545f4914f6cdd1dULL + 12345;
  g.b = b;
  buf_clear(b);
  Rng *r = &g.rng;

  /* a higher-order helper that closures are passed to */
  line(&g, "def ap(fn, v):");
  line(&g, "    return fn(v) * 0.5 + fn(v * 0.5)");
  line(&g, "");

  /* helpers of one or two parameters, over their parameters only */
  int nh = rnd(r, MAXH + 1);
  for (int h = 0; h < nh; h++) {
    int ar = 1 + rnd(r, 2);
    g.nvars = 0;
    add_var(&g, "a");
    if (ar == 2) add_var(&g, "b");
    line(&g, ar == 2 ? "def h%d(a, b):" : "def h%d(a):", h);
    g.indent++;
    if (rnd(r, 2)) {
      if_line(&g, "<");
      g.indent++;
      line(&g, "return %s", ex(&g, 2));
      g.indent--;
    }
    line(&g, "return %s", ex(&g, 2));
    g.indent--;
    line(&g, "");
    g.helper_arity[g.nhelpers++] = ar;
  }

  /* the recursive helper: depth argument n, tail or not */
  if (rnd(r, 2)) {
    g.nvars = 0;
    add_var(&g, "v");
    line(&g, "def rec(v, n):");
    g.indent++;
    line(&g, "if n <= 0:");
    g.indent++;
    line(&g, "return %s", ex(&g, 1));
    g.indent--;
    if (rnd(r, 2))
      line(&g, "return rec(v * 0.5 + %s / (1.0 + v * v), n - 1)", ex(&g, 1));
    else
      line(&g, "return %s * 0.5 + rec(v / (1.0 + v * v), n - 1) * v", ex(&g, 1));
    g.indent--;
    line(&g, "");
    g.has_rec = true;
  }

  int np = 1 + rnd(r, 3);
  g.nvars = 0;
  static const char *params[] = {"x", "y", "z"};
  for (int i = 0; i < np; i++) add_var(&g, params[i]);
  line(&g, np == 1 ? "def f(x):" : np == 2 ? "def f(x, y):" : "def f(x, y, z):");
  g.indent++;
  statements(&g, 2 + rnd(r, 5), 1);
  /* the result uses the newest values and one of the parameters */
  char ret[2048];
  int n = snprintf(ret, sizeof ret, "return %s", ex(&g, 2));
  for (int i = 0; i < 2 && g.nvars > np; i++)
    n += snprintf(ret + n, sizeof ret - n, " + %s", g.vars[g.nvars - 1 - i]);
  line(&g, "%s", ret);
  g.indent--;
  return np;
}

/* A point in [-2, 2]^np, written so that Mist reads floats. */
static void point(uint64_t seed, int np, Buf *b) {
  Rng r = {seed ^ 0x5deece66dULL};
  buf_add(b, "(", 1);
  for (int i = 0; i < np; i++) buf_printf(b, "%.17e, ", 4.0 * rnd_unit(&r) - 2.0);
  buf_add(b, ")", 1);
}

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : dflt;
}

enum { BATCHES = 8 };

/* One batch of programs in one interpreter: every program must print
 * "ok" or "skip", and skips stay under a tenth. */
START_TEST(t_random_programs) {
  long total = env_long("MIST_AD_PROGRAMS", 320);
  long seed0 = env_long("MIST_AD_SEED", 1);
  bool dump = env_long("MIST_AD_DUMP", 0) != 0;
  long per = (total + BATCHES - 1) / BATCHES;
  run(CHECK);
  Buf prog = {0}, call = {0};
  int skips = 0, count = 0;
  for (long p = _i * per; p < (_i + 1) * per && p < total; p++) {
    uint64_t seed = (uint64_t)(seed0 * 1000003L + p);
    int np = program(seed, &prog);
    run(prog.data);
    buf_clear(&call);
    buf_add(&call, "print(_check(f, ", 16);
    point(seed, np, &call);
    buf_add(&call, "))\n", 3);
    const char *got = run(call.data);
    if (dump) fprintf(stderr, "# program %ld (seed %" PRIu64 ")\n%s%s--> %s\n", p, seed, prog.data, call.data, got);
    count++;
    if (strcmp(got, "skip\n") == 0) {
      skips++;
      continue;
    }
    ck_assert_msg(strcmp(got, "ok\n") == 0, "program %ld (seed %" PRIu64 "):\n%s\n%s--> %s", p, seed, prog.data,
                  call.data, got);
  }
  ck_assert_msg(skips * 10 <= count, "%d of %d points skipped as non-smooth", skips, count);
  free(prog.data);
  free(call.data);
}
END_TEST

/* The generator itself: deterministic, and the programs use what they
 * are meant to exercise. */
START_TEST(t_generator_covers) {
  Buf b = {0}, all = {0};
  buf_clear(&all);
  for (uint64_t s = 1; s <= 200; s++) {
    program(s, &b);
    buf_add(&all, b.data, b.len);
  }
  static const char *want[] = {"if ", "elif ", "else:", "for ", "while ", "break", "continue", "lambda t",
                               "def c", "tp", "rec(", "def h", " / (1.0 + ", "(-", " if ", "ap(c"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_msg(strstr(all.data, want[i]), "no generated program contains \"%s\"", want[i]);
  Buf again = {0};
  program(77, &b);
  program(77, &again);
  ck_assert_str_eq(b.data, again.data);
  free(b.data);
  free(again.data);
  free(all.data);
}
END_TEST

/* ---- a few fixed programs with values worked out by hand ---- */

static const struct {
  const char *src;
  const char *out;
} fixed[] = {
    {"print(grad(lambda x: x * x * x)(2.0))\n", "12.0\n"},
    {"print(grad(lambda x, y: x * y + y, argnums=(0, 1))(2.0, 3.0))\n", "(3.0, 3.0)\n"},
    {"print(value_and_grad(lambda x: x * x)(3.0))\n", "(9.0, 6.0)\n"},
    {"print(grad(grad(lambda x: x * x * x))(2.0))\n", "12.0\n"},
    {"print(grad(lambda x: x * grad(lambda y: x + y)(1.0))(3.0))\n", "1.0\n"},
    {"print(grad(lambda x: grad(lambda y: x * y)(2.0))(3.0))\n", "1.0\n"},
    {"y, back = vjp(lambda a, b: (a * b, a + b), 2.0, 3.0)\nprint(y, back((1.0, 0.0)))\n", "(6.0, 5.0) (3.0, 2.0)\n"},
    {"print(jvp(lambda a, b: a * b, (2.0, 3.0), (1.0, 0.0)))\n", "(6.0, 3.0)\n"},
    {"print(grad(lambda p: p['w'] * p['b'])({'w': 2.0, 'b': 5.0}))\n", "{'w': 5.0, 'b': 2.0}\n"},
    {"print(grad(lambda x: stop_gradient(x) * x)(4.0))\n", "4.0\n"},
};

START_TEST(t_fixed) {
  const char *got = run(fixed[_i].src);
  ck_assert_msg(strcmp(got, fixed[_i].out) == 0, "%s--> %s(expected %s)", fixed[_i].src, got, fixed[_i].out);
}
END_TEST

/* Errors reach the host through mist_error with the usual form. */
START_TEST(t_errors) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", "def f(n):\n    return n * 2.0\nprint(grad(f)(3))\n", false);
  ck_assert_int_eq(s, MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "error: cannot differentiate with respect to argument 'n'"));
  s = mist_eval(vm, "<t>", "print(grad(lambda x: (x, x))(1.0))\n", false);
  ck_assert_int_eq(s, MIST_ERROR);
  ck_assert_ptr_nonnull(
      strstr(mist_error(vm), "error: grad: the function must return a float or a one-element tensor, not tuple"));
  s = mist_eval(vm, "<t>", "g = grad(lambda x, y: x, argnums=2)\n", false);
  ck_assert_int_eq(s, MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "<t>:1:5: error: grad: argnums 2 is out of range"));
  /* the interpreter is still usable afterwards */
  ck_assert_str_eq(run("print(grad(lambda x: x * 3.0)(1.0))\n"), "3.0\n");
}
END_TEST

/* The backpropagators a differentiated loop makes on each turn are cut
 * side by side from chunks (make_closure in ir/eval.c).  A chunk lives
 * while any closure in it does, so a chunk holding the end of one
 * gradient's chain and the start of the next would keep every earlier
 * chain alive: 150 gradients of a 20000-turn loop (about 1.4 MB of
 * closures each) would then hold over 200 MB. */
START_TEST(t_loop_tape_freed) {
  const char *src =
      "def f(a):\n"
      "    x = 1.0\n"
      "    acc = 0.0\n"
      "    i = 0\n"
      "    while i < 20000:\n"
      "        x = x * a + 0.5\n"
      "        acc += x\n"
      "        i += 1\n"
      "    return acc\n"
      "df = grad(f)\n"
      "s = 0.0\n"
      "for k in range(150):\n"
      "    s += df(0.9999)\n"
      "print(s > 0.0)\n";
  ck_assert_str_eq(run(src), "True\n");
  size_t heap = lang_gc_heap_size();
  ck_assert_msg(heap < ((size_t)96 << 20), "heap grew to %zu MB", heap >> 20);
}
END_TEST

static Suite *autodiff_suite(void) {
  Suite *s = suite_create("autodiff");
  TCase *tc = tcase_create("fixed");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, t_fixed, 0, (int)(sizeof fixed / sizeof fixed[0]));
  tcase_add_test(tc, t_errors);
  tcase_add_test(tc, t_generator_covers);
  tcase_add_test(tc, t_loop_tape_freed);
  suite_add_tcase(s, tc);

  TCase *rp = tcase_create("random_programs");
  tcase_add_checked_fixture(rp, setup, teardown);
  tcase_set_timeout(rp, 120);
  tcase_add_loop_test(rp, t_random_programs, 0, BATCHES);
  suite_add_tcase(s, rp);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(autodiff_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
