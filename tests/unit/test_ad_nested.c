/* test_ad_nested.c: derivatives of derivatives, and derivative calls
 * inside the function differentiated, on random programs.
 *
 * The programs come from adgen.c with derivative calls inside f (grad of
 * a lambda over the values in scope, of a closure or helper,
 * value_and_grad, grad with argnums, jvp, vjp, hessian), nested up to
 * two deep, besides the branches, loops, closures, containers of floats
 * and of functions, comprehensions and module functions of the
 * first-order suite (every odd seed's with adgen's extras too: built
 * string keys, keywords and defaults, int tensors, while True, mutual
 * recursion).  Each is checked against an independent truth:
 *
 *  - each inner derivative call against central differences (its
 *    numeric twins _ngrad, _mgrad, _ograd... in the prelude), when f's
 *    twin fchk, each call written _cmp(call, twin1, twin2, twin3), runs;
 *  - along each parameter, on the slice g(t) of f through the point:
 *    the first derivative by grad against central differences, and by
 *    jvp and vjp against grad;
 *  - the second derivative by grad(grad(g)) against central differences
 *    of grad(g), and forward over reverse (jvp of grad), reverse over
 *    forward (grad of jvp), forward over forward and hessian against it;
 *  - the third derivative by grad(grad(grad(g))) against central
 *    differences of grad(grad(g)), and jvp of grad(grad(g)) against it.
 *
 * The checks of one order only run where that order is smooth at the
 * point: where differences with two steps disagree (an `if` boundary
 * within the step), the point is skipped, and skips must stay rare.
 *
 * MIST_AD_NESTED (default 96) and MIST_AD_SEED (default 1) run more
 * programs or others; MIST_AD_SHOW=SEED prints a program with the
 * checker, ready to run with `mist` (with MIST_AD_SHOW_BUILTIN_VALUES=1,
 * one of the builtin_value_programs, MIST_AD_BUILTIN_VALUES of them,
 * whose inner derivatives take builtins as values: adgen.c).
 */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adgen.h"
#include "mist.h"

static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

static const char *run(const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_OK, "failed (status %d):\n%s\n--- error:\n%s", (int)s, src, mist_error(vm));
  return out.data;
}

/* The numeric twins of the derivative builtins, in three families:
 * central differences of two steps (_n..., _m...) and a one-sided one
 * (_o..., a negative step): where those disagree, differences are no
 * truth (a jump or a kink at the point). */
static const char *TWINS =
    "def _%sgrad(fn):\n"
    "    return lambda t: _nd(fn, t, %s)\n"
    "\n"
    "def _%sgrad2(fn, argnums=1):\n"
    "    return lambda a, b: _nd(lambda t: fn(a, t), b, %s)\n"
    "\n"
    "def _%svalue_and_grad(fn):\n"
    "    return lambda t: (fn(t), _nd(fn, t, %s))\n"
    "\n"
    "def _%sjvp(fn, xs, ts):\n"
    "    return fn(xs[0]), ts[0] * _nd(fn, xs[0], %s)\n"
    "\n"
    "def _%sjvp2(fn, xs, ts):\n"
    "    return fn(xs[0], xs[1]), (ts[0] * _nd(lambda u: fn(u, xs[1]), xs[0], %s) +\n"
    "                              ts[1] * _nd(lambda u: fn(xs[0], u), xs[1], %s))\n"
    "\n"
    "def _%svjp(fn, x):\n"
    "    return fn(x), lambda ct: (ct * _nd(fn, x, %s),)\n"
    "\n"
    "def _%shessian(fn):\n"
    "    def h2(t):\n"
    "        s = 10.0 * %s * max(1.0, abs(t))\n"
    "        return (fn(t + s) - 2.0 * fn(t) + fn(t - s)) / (s * s)\n"
    "    return h2\n"
    "\n";

/* The checker. */
static const char *CHECK =
    "def _nd(fn, t, h):\n"
    "    s = abs(h) * max(1.0, abs(t))\n"
    "    if h < 0.0:\n"
    "        return (fn(t + s) - fn(t)) / s\n"
    "    return (fn(t + s) - fn(t - s)) / (2.0 * s)\n"
    "\n"
    "def _call(f, xs):\n"
    "    n = len(xs)\n"
    "    if n == 1:\n"
    "        return f(xs[0])\n"
    "    if n == 2:\n"
    "        return f(xs[0], xs[1])\n"
    "    return f(xs[0], xs[1], xs[2])\n"
    "\n"
    "def _slice(f, xs, i):\n"
    "    def g(t):\n"
    "        ys = list(xs)\n"
    "        ys[i] = t\n"
    "        return _call(f, ys)\n"
    "    return g\n"
    "\n"
    "def _num(g, t, h):\n"
    "    s = h * max(1.0, abs(t))\n"
    "    return (g(t + s) - g(t - s)) / (2.0 * s)\n"
    "\n"
    "def _near(a, b, rtol, atol):\n"
    "    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))\n"
    "\n"
    "# 'ok' when d, a derivative of g, agrees with central differences of\n"
    "# g; 'skip' when differences with two steps disagree (a kink within\n"
    "# the step) or cannot tell; otherwise a failure naming what\n"
    "def _against_num(what, d, g, t):\n"
    "    num = _num(g, t, 1e-6)\n"
    "    if _near(d, num, 1e-4, 1e-6):\n"
    "        return 'ok'\n"
    "    if not _near(_num(g, t, 1e-7), num, 1e-4, 1e-6):\n"
    "        return 'skip'\n"
    "    # g so large that its rounding swamps the differences\n"
    "    if abs(d - num) <= 1e-14 * abs(g(t)) / (1e-6 * max(1.0, abs(t))):\n"
    "        return 'skip'\n"
    "    return f'FAIL {what}: {d} but central differences {num}'\n"
    "\n"
    "def _same(what, a, b):\n"
    "    if _near(a, b, 1e-8, 1e-10):\n"
    "        return 'ok'\n"
    "    return f'FAIL {what}: {a} but {b}'\n"
    "\n"
    "def _first(v):\n"
    "    # the first verdict that is not 'ok', or 'ok'\n"
    "    for x in v:\n"
    "        if x != 'ok':\n"
    "            return x\n"
    "    return 'ok'\n"
    "\n"
    "def _check_slice(g, t, order):\n"
    "    d1 = grad(g)(t)\n"
    "    v = [_against_num('grad', d1, g, t),\n"
    "         _same('jvp against grad', jvp(g, (t,), (1.0,))[1], d1),\n"
    "         _same('vjp against grad', vjp(g, t)[1](1.0)[0], d1)]\n"
    "    if _first(v) != 'ok' or order < 2:\n"
    "        return _first(v)\n"
    "    g1 = grad(g)\n"
    "    d2 = grad(g1)(t)\n"
    "    v = [_against_num('grad(grad)', d2, g1, t),\n"
    "         _same('jvp(grad) against grad(grad)', jvp(g1, (t,), (1.0,))[1], d2),\n"
    "         _same('grad(jvp) against grad(grad)', grad(lambda u: jvp(g, (u,), (1.0,))[1])(t), d2),\n"
    "         _same('jvp(jvp) against grad(grad)', jvp(lambda u: jvp(g, (u,), (1.0,))[1], (t,), (1.0,))[1], d2),\n"
    "         _same('hessian against grad(grad)', hessian(g)(t), d2)]\n"
    "    if _first(v) != 'ok' or order < 3:\n"
    "        return _first(v)\n"
    "    g2 = grad(g1)\n"
    "    d3 = grad(g2)(t)\n"
    "    return _first([_against_num('grad(grad(grad))', d3, g2, t),\n"
    "                   _same('jvp(grad(grad)) against grad(grad(grad))', jvp(g2, (t,), (1.0,))[1], d3)])\n"
    "\n"
    "# an inner derivative against central differences of two steps and a\n"
    "# one-sided one; where those disagree (a jump, a kink), no judgement\n"
    "def _cmp(real, n, m, o):\n"
    "    if _near(real, n, 1e-4, 1e-6) or not _near(n, m, 1e-4, 1e-6) or not _near(n, o, 1e-3, 1e-5):\n"
    "        return real\n"
    "    assert False, f'FAIL inner derivative {real} but central differences {n}'\n"
    "\n"
    "def _check(f, fchk, xs, order):\n"
    "    y = _call(f, xs)\n"
    "    if y != _call(fchk, xs):\n"
    "        return f'FAIL value {y} but {_call(fchk, xs)} with the inner derivatives checked'\n"
    "    skipped = False\n"
    "    for i in range(len(xs)):\n"
    "        r = _check_slice(_slice(f, xs, i), xs[i], order)\n"
    "        if r == 'skip':\n"
    "            skipped = True\n"
    "        elif r != 'ok':\n"
    "            return f'parameter {i}: {r}'\n"
    "    return 'skip' if skipped else 'ok'\n";

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : dflt;
}

enum { BATCHES = 8 };

static const AdGenOpts NESTED = {.containers = true, .modules = true, .methods = true, .inner = 2};
static const AdGenOpts NESTED_EXTRAS = {.containers = true, .modules = true, .methods = true, .inner = 2, .extras = true};

/* The prelude: the two families of numeric twins and the checker. */
static void prelude(Buf *b) {
  buf_clear(b);
  const char *fam[3][2] = {{"n", "1e-5"}, {"m", "3e-6"}, {"o", "(-1e-6)"}};
  for (int i = 0; i < 3; i++) {
    const char *p = fam[i][0], *h = fam[i][1];
    adgen_printf(b, TWINS, p, h, p, h, p, h, p, h, p, h, h, p, h, p, h);
  }
  buf_add(b, CHECK, strlen(CHECK));
}

/* The program for seed as f, the same with its inner derivatives
 * checked as fchk, and the call of the checker (the derivative orders
 * checked alternate 3, 2, 2). */
static void program(uint64_t seed, const AdGenOpts *given, Buf *prog, Buf *call) {
  /* (every odd seed's program with adgen's extras, but for the
   * builtin-value programs, which have their own test) */
  AdGenOpts opts = *given;
  if (seed % 2 && !opts.builtin_values) opts.extras = true;
  const AdGenOpts *o = &opts;
  int np = adgen_program(seed, o, prog);
  AdGenOpts chk = *o;
  chk.check = true;
  Buf twin = {0};
  adgen_program(seed, &chk, &twin);
  /* "def f(" appears once */
  char *at = strstr(twin.data, "def f(");
  if (!at) abort();   /* (not ck_assert: MIST_AD_SHOW runs outside a test) */
  adgen_printf(prog, "\ndef fchk(");
  buf_add(prog, at + 6, strlen(at + 6));
  buf_free(&twin);
  buf_clear(call);
  adgen_printf(call, "print(_check(f, fchk, ");
  adgen_point(seed, np, call);
  adgen_printf(call, ", %d))\n", seed % 3 == 0 ? 3 : 2);
}

/* Programs seed0 * 1000003 + p for p of batch `batch` of BATCHES over
 * total, generated with o: each must print ok, few skip. */
static void check_programs(const AdGenOpts *o, long total, long seed0, int batch) {
  long per = (total + BATCHES - 1) / BATCHES;
  Buf prog = {0}, call = {0};
  prelude(&prog);
  run(prog.data);
  int skips = 0, count = 0;
  for (long p = batch * per; p < (batch + 1) * per && p < total; p++) {
    uint64_t seed = (uint64_t)(seed0 * 1000003L + p);
    program(seed, o, &prog, &call);
    run(prog.data);
    buf_clear(&out);
    MistStatus st = mist_eval(vm, "<t>", call.data, false);
    ck_assert_msg(st == MIST_OK, "program %ld (MIST_AD_SHOW=%" PRIu64 "):\n%s\n%s--> error:\n%s", p, seed, prog.data,
                  call.data, mist_error(vm));
    const char *got = out.data;
    count++;
    if (strcmp(got, "skip\n") == 0) {
      skips++;
      continue;
    }
    ck_assert_msg(strcmp(got, "ok\n") == 0, "program %ld (MIST_AD_SHOW=%" PRIu64 "):\n%s\n%s--> %s", p, seed,
                  prog.data, call.data, got);
  }
  ck_assert_msg(skips * 5 <= count, "%d of %d points skipped as non-smooth", skips, count);
  buf_free(&prog);
  buf_free(&call);
}

START_TEST(t_nested_programs) { check_programs(&NESTED, env_long("MIST_AD_NESTED", 96), env_long("MIST_AD_SEED", 1), _i); }
END_TEST

/* The same with builtins passed as values to the inner derivatives and
 * jacobians of containers (adgen's builtin_values), seeds of their own:
 * MIST_AD_BUILTIN_VALUES programs (default 48). */
START_TEST(t_builtin_value_programs) {
  AdGenOpts o = NESTED;
  o.builtin_values = true;
  check_programs(&o, env_long("MIST_AD_BUILTIN_VALUES", 48), env_long("MIST_AD_SEED", 1) + 7, _i);
}
END_TEST

/* The generator writes what this suite is for. */
START_TEST(t_generator_covers) {
  Buf b = {0}, all = {0};
  buf_clear(&all);
  for (uint64_t s = 1; s <= 300; s++) {
    adgen_program(s, s % 2 ? &NESTED_EXTRAS : &NESTED, &b);
    buf_add(&all, b.data, b.len);
  }
  static const char *want[] = {"grad(lambda t", "grad(c", "value_and_grad(lambda", ", argnums=1)(", "jvp(lambda",
                               "vjp(lambda", "hessian(lambda", ", 0.5))[1]", "grad(L.", "grad(half)", ",), (0.5,))[1]",
                               /* extras */
                               "while True:", "kw(b=", "od(", "{f\"k{n}\"", "dtype=\"i64\"))", "min(", "max(",
                               "((None, 0.5) + (", "([0.25] + ["};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_msg(strstr(all.data, want[i]), "no generated program contains \"%s\"", want[i]);
  buf_free(&b);
  buf_free(&all);
}
END_TEST

static Suite *nested_suite(void) {
  Suite *s = suite_create("ad_nested");
  TCase *tc = tcase_create("generator");
  tcase_add_test(tc, t_generator_covers);
  suite_add_tcase(s, tc);
  TCase *rp = tcase_create("nested_programs");
  tcase_add_checked_fixture(rp, setup, teardown);
  tcase_set_timeout(rp, 300);
  tcase_add_loop_test(rp, t_nested_programs, 0, BATCHES);
  suite_add_tcase(s, rp);
  TCase *bv = tcase_create("builtin_value_programs");
  tcase_add_checked_fixture(bv, setup, teardown);
  tcase_set_timeout(bv, 300);
  tcase_add_loop_test(bv, t_builtin_value_programs, 0, BATCHES);
  suite_add_tcase(s, bv);
  return s;
}

int main(void) {
  long show = env_long("MIST_AD_SHOW", 0);
  if (show) {
    Buf prog = {0}, call = {0};
    Buf pre = {0};
    prelude(&pre);
    AdGenOpts o = NESTED;
    o.builtin_values = env_long("MIST_AD_SHOW_BUILTIN_VALUES", 0) != 0;
    program((uint64_t)show, &o, &prog, &call);
    printf("%s%s\n%s", pre.data, prog.data, call.data);
    buf_free(&pre);
    buf_free(&prog);
    buf_free(&call);
    return 0;
  }
  SRunner *sr = srunner_create(nested_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
