/* test_api.c: the embedding API (include/mist.h) used the wrong way.
 *
 * mist.h promises that no call exits, aborts or crashes: every failure
 * is a return value and a message.  Here a host misuses it as hosts do
 * (a NULL handle from an unchecked mist_new, NULL strings, argument
 * types missing, a file that is a directory, a function that is not
 * there), and stops programs from outside (mist_interrupt from another
 * thread, a time limit, exit()); after each failure the same VM must
 * still run a program.  Before the checks of the NULL cases, each of
 * them crashed the process with SIGSEGV. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "mist.h"

/* The VM still works: it runs a program and prints through the callback. */
static void still_runs(MistVM *vm) {
  Buf out = {0};
  buf_clear(&out);
  mist_set_write(vm, capture, &out);
  ck_assert_int_eq(mist_eval(vm, "<after>", "print(6 * 7)", false), MIST_OK);
  ck_assert_str_eq(out.data, "42\n");
  ck_assert_str_eq(mist_error(vm), "");
  mist_set_write(vm, NULL, NULL);
  buf_free(&out);
}

START_TEST(null_handle)
{
  MistVM *none = NULL;
  ck_assert_int_eq(mist_eval(none, "<x>", "print(1)", false), MIST_ERROR);
  ck_assert_int_eq(mist_run_file(none, "x.ms"), MIST_ERROR);
  ck_assert_str_eq(mist_error(none), "error: the MistVM handle is NULL");
  ck_assert_int_eq(mist_exit_code(none), -1);
  ck_assert_ptr_null(mist_complete(none, "pri"));
  ck_assert_int_eq(mist_print_ir(none, "f", MIST_IR_LOWERED), MIST_ERROR);
  ck_assert_int_eq(mist_print_file_ir(none, "x.ms", "f", 0), MIST_ERROR);
  ck_assert_int_eq(mist_print_llvm(none, "f", 0, NULL), MIST_ERROR);
  ck_assert_ptr_nonnull(mist_argtype_error(none, "int"));
  mist_set_write(none, NULL, NULL);
  mist_set_write_err(none, NULL, NULL, false);
  mist_set_time_limit(none, 1);
  mist_set_dump(none, MIST_DUMP_IR);
  mist_set_graph_mode(none, true);
  mist_interrupt(none);
  mist_free(none);
}
END_TEST

START_TEST(null_arguments)
{
  MistVM *vm = mist_new(3, NULL);   /* argv NULL: no arguments, whatever argc says */
  ck_assert_ptr_nonnull(vm);
  ck_assert_int_eq(mist_eval(vm, "<x>", NULL, false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "mist_eval: source is NULL"));
  ck_assert_int_eq(mist_run_file(vm, NULL), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "path is NULL"));
  ck_assert_int_eq(mist_print_ir(vm, NULL, 0), MIST_ERROR);
  ck_assert_int_eq(mist_print_file_ir(vm, NULL, "f", 0), MIST_ERROR);
  ck_assert_int_eq(mist_print_file_llvm(vm, "x.ms", NULL, 0, NULL), MIST_ERROR);
  ck_assert_ptr_null(mist_complete(vm, NULL));
  ck_assert_str_eq(mist_argtype_error(vm, NULL), "the type is NULL");
  /* argument types: fewer strings than nargs says, or nargs negative */
  ck_assert_int_eq(mist_eval(vm, "<x>", "def f(x):\n    return x\n", false), MIST_OK);
  ck_assert_int_eq(mist_print_llvm(vm, "f", 1, NULL), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "an argument type is NULL"));
  const char *const holes[] = {NULL};
  ck_assert_int_eq(mist_print_llvm(vm, "f", 1, holes), MIST_ERROR);
  ck_assert_int_eq(mist_print_llvm(vm, "f", -1, NULL), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "nargs is -1"));
  ck_assert_int_eq(mist_print_file_ir_types(vm, "x.ms", "f", 0, -5, NULL), MIST_ERROR);
  /* the program's args() is the empty list */
  Buf out = {0};
  buf_clear(&out);
  mist_set_write(vm, capture, &out);
  ck_assert_int_eq(mist_eval(vm, "<x>", "print(args())", false), MIST_OK);
  ck_assert_str_eq(out.data, "[]\n");
  mist_set_write(vm, NULL, NULL);
  buf_free(&out);
  still_runs(vm);
  mist_free(vm);
  const char *const some[] = {"a", NULL, "c"};   /* a NULL among them reads as "" */
  vm = mist_new(3, some);
  buf_clear(&out);
  mist_set_write(vm, capture, &out);
  ck_assert_int_eq(mist_eval(vm, "<x>", "print(args())", false), MIST_OK);
  ck_assert_str_eq(out.data, "['a', '', 'c']\n");
  mist_set_write(vm, NULL, NULL);
  buf_free(&out);
  mist_free(vm);
}
END_TEST

/* Files and functions that are not there, text that is not a program:
 * MIST_ERROR and a message that names the place where there is one. */
START_TEST(failures_are_messages)
{
  MistVM *vm = mist_new(0, NULL);
  ck_assert_int_eq(mist_run_file(vm, "/nonexistent-dir/x.ms"), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "can't open file '/nonexistent-dir/x.ms'"));
  ck_assert_int_eq(mist_run_file(vm, "/"), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "Is a directory"));
  ck_assert_int_eq(mist_print_file_llvm(vm, "/", "f", 0, NULL), MIST_ERROR);
  ck_assert_int_eq(mist_print_ir(vm, "nope", 0), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "nope"));
  ck_assert_int_eq(mist_print_llvm(vm, "nope", 0, NULL), MIST_ERROR);
  /* a bad type that the host did not check with mist_argtype_error */
  ck_assert_int_eq(mist_eval(vm, "<x>", "def f(x):\n    return x\n", false), MIST_OK);
  const char *const bad[] = {"f33[2"};
  ck_assert_int_eq(mist_print_llvm(vm, "f", 1, bad), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "f33[2"));
  /* calling what is not there, a syntax error, bytes that are not UTF-8 */
  ck_assert_int_eq(mist_eval(vm, "<call>", "missing(1)", false), MIST_ERROR);
  ck_assert_str_eq(mist_error(vm),
                   "<call>:1:1: error: name 'missing' is not defined\n"
                   "    missing(1)\n"
                   "    ^^^^^^^\n"
                   "Traceback (innermost last):\n"
                   "  <call>:1:1 in <module>\n");
  ck_assert_int_eq(mist_eval(vm, "<call>", "f(1, 2)", false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "<call>:1:1: error: "));
  ck_assert_int_eq(mist_eval(vm, "<syn>", "x = = 1", false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "<syn>:1:"));
  ck_assert_int_eq(mist_eval(vm, "<utf>", "x = '\xff'", false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "<utf>:1:6: error: invalid UTF-8: byte 0xff"));
  ck_assert_int_eq(mist_eval(vm, "<inc>", "def g(x):", false), MIST_INCOMPLETE);
  ck_assert_int_eq(mist_eval(vm, "<deep>", "def r(n):\n    return r(n + 1)\nr(0)\n", false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "maximum recursion depth exceeded"));
  /* exit() ends the program, not the host */
  ck_assert_int_eq(mist_eval(vm, "<exit>", "exit(3)", false), MIST_ERROR);
  ck_assert_int_eq(mist_exit_code(vm), 3);
  ck_assert_int_eq(mist_eval(vm, "<exit>", "exit(-1)", false), MIST_ERROR);
  ck_assert_int_eq(mist_exit_code(vm), 255);   /* not -1, "no exit" */
  ck_assert_str_eq(mist_error(vm), "");
  still_runs(vm);
  ck_assert_int_eq(mist_exit_code(vm), -1);
  mist_free(vm);
}
END_TEST

/* A NUL byte in a file: the rendered error keeps its caret (a C string
 * used to end at the NUL, losing the caret line). */
START_TEST(nul_byte_in_file)
{
  char path[] = "/tmp/mist_test_api_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "x = 1\0\n", 7), 7);
  close(fd);
  MistVM *vm = mist_new(0, NULL);
  ck_assert_int_eq(mist_run_file(vm, path), MIST_ERROR);
  char want[256];
  snprintf(want, sizeof want,
           "%s:1:6: error: source code cannot contain null bytes\n"
           "    x = 1\xef\xbf\xbd\n"
           "         ^\n", path);
  ck_assert_str_eq(mist_error(vm), want);
  unlink(path);
  mist_free(vm);
}
END_TEST

typedef struct Run {
  MistVM *vm;
  const char *source;
  MistStatus status;
} Run;

static void *run_thread(void *arg) {
  Run *r = arg;
  r->status = mist_eval(r->vm, "<loop>", r->source, false);
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* mist_interrupt from another thread stops a loop that never ends, in
 * eager and graph mode; the VM then runs the next program. */
static void interrupt_in(bool graph) {
  MistVM *vm = mist_new(0, NULL);
  mist_set_graph_mode(vm, graph);
  Run r = {vm, "def spin(n):\n    while True:\n        n = n + 1\n    return n\nspin(0)\n", MIST_OK};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, run_thread, &r), 0);
  double start = now();
  usleep(300 * 1000);
  mist_interrupt(vm);
  pthread_join(th, NULL);
  ck_assert_int_eq(r.status, MIST_ERROR);
  ck_assert_double_lt(now() - start, 20.0);
  ck_assert_msg(strstr(mist_error(vm), "KeyboardInterrupt") || strstr(mist_error(vm), "interrupt"),
                "error: %s", mist_error(vm));
  still_runs(vm);
  mist_free(vm);
}

START_TEST(interrupt_from_another_thread) { interrupt_in(false); }
END_TEST

START_TEST(interrupt_from_another_thread_graph) { interrupt_in(true); }
END_TEST

START_TEST(time_limit)
{
  MistVM *vm = mist_new(0, NULL);
  mist_set_time_limit(vm, 0.3);
  double start = now();
  ck_assert_int_eq(mist_eval(vm, "<loop>", "while True:\n    pass\n", false), MIST_ERROR);
  ck_assert_double_lt(now() - start, 20.0);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "the program ran past its time limit"));
  mist_set_time_limit(vm, 0);
  still_runs(vm);
  mist_free(vm);
}
END_TEST

/* Two VMs in one thread share nothing: a name one defines is not in the other. */
START_TEST(vms_are_independent)
{
  MistVM *a = mist_new(0, NULL), *b = mist_new(0, NULL);
  ck_assert_int_eq(mist_eval(a, "<a>", "x = 1", false), MIST_OK);
  ck_assert_int_eq(mist_eval(b, "<b>", "print(x)", false), MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(b), "name 'x' is not defined"));
  ck_assert_str_eq(mist_error(a), "");
  mist_free(b);
  still_runs(a);
  mist_free(a);
}
END_TEST

static Suite *api_suite(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("misuse");
  tcase_set_timeout(tc, 100);
  tcase_add_test(tc, null_handle);
  tcase_add_test(tc, null_arguments);
  tcase_add_test(tc, failures_are_messages);
  tcase_add_test(tc, nul_byte_in_file);
  tcase_add_test(tc, interrupt_from_another_thread);
  tcase_add_test(tc, interrupt_from_another_thread_graph);
  tcase_add_test(tc, time_limit);
  tcase_add_test(tc, vms_are_independent);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(api_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
