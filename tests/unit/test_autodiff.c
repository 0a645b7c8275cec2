/* test_autodiff.c: grad, value_and_grad and jvp on random programs,
 * through the public API (include/mist.h).
 *
 * The programs come from adgen.c: a function f of one to three float
 * parameters with branches, loops, closures, tuples, helpers, recursion,
 * containers of floats and of functions, comprehensions, a module's
 * functions, method and keyword calls.  Each program is checked in Mist
 * itself (the CHECK prelude below) at a random point: value_and_grad
 * over all parameters against f's value and against central differences
 * (step 1e-6 relative, float64; agreement within rtol 1e-4, atol 1e-6),
 * and jvp along each axis against grad.  Where the function is not
 * smooth within the step (an `if` boundary between x - h and x + h),
 * differences with two step sizes disagree with each other and the point
 * is skipped; skips must stay rare.  The checker prints "ok", "skip" or
 * "FAIL ...", and the C side reads that back.  Derivatives of
 * derivatives, and derivative calls inside f, are test_ad_nested.c's.
 *
 * MIST_AD_PROGRAMS (default 320) and MIST_AD_SEED (default 1) in the
 * environment run more programs or others, and MIST_AD_DUMP=1 writes each
 * program and its verdict to stderr; MIST_AD_SHOW=SEED prints the program
 * of that seed with the checker, ready to run.  A failure prints the program, so it
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

#include "adgen.h"
#include "lang/gc.h"
#include "mist.h"


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
    "            # another step disagree with these; or f so large that\n"
    "            # its rounding swamps the differences\n"
    "            if not _near(_num(f, xs, i, 1e-7), num, 1e-4, 1e-6):\n"
    "                return 'skip'\n"
    "            if abs(g[i] - num) <= 1e-14 * abs(y0) / (1e-6 * max(1.0, abs(xs[i]))):\n"
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

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : dflt;
}

enum { BATCHES = 8 };

static const AdGenOpts FIRST_ORDER = {.containers = true, .modules = true, .methods = true, .loop_bodies = true};
static const AdGenOpts FIRST_ORDER_EXTRAS = {
    .containers = true, .modules = true, .methods = true, .loop_bodies = true, .extras = true};

/* the options of a seed's program: every odd seed's with adgen's extras */
static const AdGenOpts *opts_of(uint64_t seed) { return seed % 2 ? &FIRST_ORDER_EXTRAS : &FIRST_ORDER; }

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
    int np = adgen_program(seed, opts_of(seed), &prog);
    run(prog.data);
    buf_clear(&call);
    buf_add(&call, "print(_check(f, ", 16);
    adgen_point(seed, np, &call);
    buf_add(&call, "))\n", 3);
    buf_clear(&out);
    MistStatus st = mist_eval(vm, "<t>", call.data, false);
    ck_assert_msg(st == MIST_OK, "program %ld (MIST_AD_SHOW=%" PRIu64 "):\n%s\n%s--> error:\n%s", p, seed, prog.data,
                  call.data, mist_error(vm));
    const char *got = out.data;
    if (dump) fprintf(stderr, "# program %ld (seed %" PRIu64 ")\n%s%s--> %s\n", p, seed, prog.data, call.data, got);
    count++;
    if (strcmp(got, "skip\n") == 0) {
      skips++;
      continue;
    }
    ck_assert_msg(strcmp(got, "ok\n") == 0, "program %ld (MIST_AD_SHOW=%" PRIu64 "):\n%s\n%s--> %s", p, seed, prog.data,
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
    adgen_program(s, opts_of(s), &b);
    buf_add(&all, b.data, b.len);
  }
  static const char *want[] = {"if ", "elif ", "else:", "for ", "while ", "break", "continue", "lambda t",
                               "def c", "tp", "rec(", "def h", " / (1.0 + ", "(-", " if ", "ap(c",
                               "GF[", "fs", "](", "% 3]", "[-", "] = ", "sum([", " for q", ".values()",
                               "L.sq", "L.mix(", "ap(L.", "k=", ".sum().item()", ".get(\"", "half(", ", s=", "erf(",
                               "sqrt(1.0 + (", "# a loop's else block",
                               /* extras */
                               "kw(b=", ", a=", "ev(", "od(", "dtype=\"i64\"))", "dtype=\"i32\").sum()",
                               "{f\"k{n}\"", "[\"k\" + str(", ".get(\"b\" + \"a\", ", "while True:", "str(n) + ",
                               " + str(q", "max(", "min(", "sum(filter(lambda u", "sum(filter(None",
                               "in zip([", "sum(map(lambda a, b, c", "key=abs)",
                               "default=", "reverse=True)["};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_msg(strstr(all.data, want[i]), "no generated program contains \"%s\"", want[i]);
  Buf again = {0};
  adgen_program(77, &FIRST_ORDER, &b);
  adgen_program(77, &FIRST_ORDER, &again);
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

/* At a singular point a derivative is inf or nan, as IEEE arithmetic
 * gives it, never an error: wherever a function of a float or an f64
 * tensor runs, its first and second derivatives in both modes run too.
 * Every differentiable math builtin and arithmetic primitive, at the
 * points where derivatives divide by zero, overflow or lose their sign. */
START_TEST(t_singular_points) {
  static const char *fs[] = {
      "sqrt(x)", "log(x)", "exp(x)", "sin(x)", "cos(x)", "tanh(x)", "sigmoid(x)", "relu(x)", "abs(x)",
      "x ** 0.5", "x ** 1.5", "x ** 2", "x ** 0.0", "x ** -1.0", "x ** x", "2.0 ** x", "0.0 ** x", "pow(x, 3)",
      "1.0 / x", "x / (x * x)", "x * x * x", "max(x, 0.0)", "min(x, 0.0)", "x % 1.5", "-x", "+x",
      "tan(x)", "asin(x)", "acos(x)", "atan(x)", "atan2(x, 1.0)", "atan2(1.0, x)", "atan2(x, x)", "log2(x)",
      "log10(x)", "lgamma(x)", "erf(x)",
  };
  static const char *xs[] = {"0.0", "-0.0", "1.0", "-1.0", "1e-200", "5e-324", "1e300", "-1e300", "inf", "-inf", "nan"};
  char src[1024];
  int ran = 0;
  run("inf = float('inf')\nnan = float('nan')\n");
  for (size_t i = 0; i < sizeof fs / sizeof *fs; i++)
    for (size_t j = 0; j < sizeof xs / sizeof *xs; j++)
      for (int tensor = 0; tensor < 2; tensor++) {
        const char *x = xs[j];
        if (tensor && strncmp(fs[i], "m", 1) == 0) continue;   /* max(t, 0.0) reduces t */
        if (tensor)
          snprintf(src, sizeof src, "f = lambda x: (%s).sum()\nx0 = tensor([%s], dtype='f64')\n", fs[i], x);
        else
          snprintf(src, sizeof src, "f = lambda x: %s\nx0 = %s\n", fs[i], x);
        run(src);
        buf_clear(&out);
        if (mist_eval(vm, "<t>", "y0 = f(x0)\n", false) != MIST_OK) continue;   /* no value: nothing to differentiate */
        static const char *ds[] = {
            "print(type(grad(f)(x0)))\n",
            "print(type(jvp(f, (x0,), (x0 * 0.0 + 1.0,))[1]))\n",
            "print(type(grad(grad(f))(x0)))\n",
            "print(type(jvp(grad(f), (x0,), (x0 * 0.0 + 1.0,))[1]))\n",
        };
        for (int k = 0; k < (tensor ? 2 : 4); k++) {
          buf_clear(&out);
          MistStatus st = mist_eval(vm, "<t>", ds[k], false);
          ck_assert_msg(st == MIST_OK, "f = lambda x: %s at %s%s: %s--> %s", fs[i], x, tensor ? " (a tensor)" : "", ds[k],
                        mist_error(vm));
          ran++;
        }
      }
  ck_assert_int_gt(ran, 500);
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
  tcase_add_test(tc, t_singular_points);
  suite_add_tcase(s, tc);

  TCase *rp = tcase_create("random_programs");
  tcase_add_checked_fixture(rp, setup, teardown);
  tcase_set_timeout(rp, 120);
  tcase_add_loop_test(rp, t_random_programs, 0, BATCHES);
  suite_add_tcase(s, rp);
  return s;
}

int main(void) {
  /* MIST_AD_SHOW=SEED prints that seed's program and a call of the
   * checker, to rerun a failure by hand after the CHECK prelude */
  long show = env_long("MIST_AD_SHOW", 0);
  if (show) {
    Buf prog = {0};
    int np = adgen_program((uint64_t)show, opts_of((uint64_t)show), &prog);
    printf("%s%s\nprint(_check(f, ", CHECK, prog.data);
    buf_clear(&prog);
    adgen_point((uint64_t)show, np, &prog);
    printf("%s))\n", prog.data);
    buf_free(&prog);
    return 0;
  }
  SRunner *sr = srunner_create(autodiff_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
