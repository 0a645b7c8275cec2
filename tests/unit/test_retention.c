/* test_retention.c: what the runtime keeps of a program once the
 * program is gone.
 *
 * A host that evaluates new source again and again (a REPL session, a
 * server running scripts) must not grow without bound: the graphs a
 * call lowered, the code the interpreter compiled for them, the
 * transforms autodiff made of them (grad of a lambda, grad of a def,
 * vjp, jvp, value_and_grad, hessian) and the specialisations inference
 * made (mist --dump=types infers each module's code) must die with the
 * program once nothing refers to it.  Each test evaluates fresh source
 * many times through the public API and measures the bytes the
 * collector finds reachable (lang_gc_live_bytes, after a full
 * collection) after a warm-up and again at the end: the difference is
 * what each evaluation left behind, which must stay small (the source
 * text itself, kept for error messages, is about 300 bytes a call).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "lang/gc.h"
#include "mist.h"

enum { WARMUP = 40, ROUNDS = 240 };

/* Bytes left behind per evaluation, at most: the source text and its
 * line of the file table are a few hundred; before graphs' data died
 * with them, an evaluation with grad left over 100 KB. */
#define MAX_PER_ROUND 2048

static void sink(void *user, const char *text, size_t len) { (void)user, (void)text, (void)len; }

/* Evaluate make(i) for i < ROUNDS in a fresh VM (with the dump stages
 * given), and check the live bytes grew by at most MAX_PER_ROUND an
 * evaluation between the warm-up and the end. */
static void check_bounded(const char *what, int dump, void (*make)(char *src, size_t n, int i)) {
  MistVM *vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  mist_set_write(vm, sink, NULL);
  mist_set_dump(vm, dump);
  size_t before = 0;
  char src[2048];
  for (int i = 0; i < ROUNDS; i++) {
    if (i == WARMUP) before = lang_gc_live_bytes();
    make(src, sizeof src, i);
    MistStatus s = mist_eval(vm, "<retention>", src, false);
    ck_assert_msg(s == MIST_OK, "%s: round %d failed:\n%s\n%s", what, i, src, mist_error(vm));
  }
  size_t after = lang_gc_live_bytes();
  double per = ((double)after - (double)before) / (ROUNDS - WARMUP);
  ck_assert_msg(per <= MAX_PER_ROUND, "%s: %.0f bytes left behind per evaluation (live %zu KiB after %d, %zu KiB after %d)",
                what, per, before >> 10, WARMUP, after >> 10, ROUNDS);
  mist_free(vm);
}

/* A def with a loop and a branch (loop, join and branch graphs), a
 * lambda, a closure returned: new graphs each time, compiled and run. */
static void make_defs(char *src, size_t n, int i) {
  snprintf(src, n,
           "def f%d(x, k=%d):\n"
           "    y = x * %d.0\n"
           "    for j in range(3):\n"
           "        if j > 1:\n"
           "            y = y + j\n"
           "    g = lambda t: t + y\n"
           "    return g\n"
           "z = f%d(2.0)(1.0) + sorted([3, 1, 2], key=lambda v: -v)[0]\n",
           i % 7, i, i, i % 7);
}

START_TEST(t_defs) { check_bounded("defs", 0, make_defs); }
END_TEST

/* The derivative builtins on a new lambda and a new def each time: the
 * transforms (reverse, forward, masked), their compiled code and the
 * cache of the graphs grad and friends make go with the function. */
static void make_grads(char *src, size_t n, int i) {
  snprintf(src, n,
           "def h%d(a, b):\n"
           "    acc = 0.0\n"
           "    for j in range(2):\n"
           "        acc = acc + a * b * %d.0\n"
           "    return acc\n"
           "z = grad(lambda t: t * t * %d.0)(1.5) + grad(h%d, argnums=1)(2.0, 3.0)\n"
           "z = z + value_and_grad(h%d)(1.0, 2.0)[0] + vjp(h%d, 1.0, 2.0)[1](1.0)[0]\n"
           "z = z + jvp(lambda t: t * %d.0, (1.0,), (1.0,))[1] + hessian(lambda t: t * t * t)(%d.0)\n",
           i % 7, i, i, i % 7, i % 7, i % 7, i, i);
}

START_TEST(t_grads) { check_bounded("grads", 0, make_grads); }
END_TEST

/* Type inference of each module's code (its result is cached per graph
 * and signature) beside running it. */
static void make_typed(char *src, size_t n, int i) {
  snprintf(src, n,
           "def p%d(x):\n"
           "    return x * %d + 1\n"
           "w = p%d(%d) + grad(lambda t: t * %d.0)(1.0)\n",
           i % 7, i, i % 7, i, i);
}

START_TEST(t_typed) { check_bounded("types", MIST_DUMP_TYPES, make_typed); }
END_TEST

static Suite *retention_suite(void) {
  Suite *s = suite_create("retention");
  TCase *tc = tcase_create("fresh source");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, t_defs);
  tcase_add_test(tc, t_grads);
  tcase_add_test(tc, t_typed);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(retention_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
