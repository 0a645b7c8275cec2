/* test_threads.c: interpreters made and run on the host's own threads.
 *
 * The API promises that several VMs live in one process and in different
 * threads (include/mist.h).  The host's threads are plain pthreads the
 * collector did not start, so the library must register each one on its
 * first call: without that, a collection started on one of them aborts
 * the process ("Collecting from unknown thread"), as it did in 6 of 9
 * runs with 2 to 4 threads.  Here 4 threads each make a VM, run a
 * program that allocates enough to collect several times (lists, str,
 * tensors, a gradient), check what it printed and free the VM; 100
 * rounds, each with fresh threads, so registration and unregistration
 * at thread exit are both exercised. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "mist.h"

#define NTHREADS 4
#define NROUNDS 100

static const char program[] =
    "xs = [str(i) * 3 for i in range(20000)]\n"
    "d = {}\n"
    "for i in range(300):\n"
    "    d[str(i)] = [i] * 10\n"
    "t = ones((40, 40))\n"
    "print(len(xs), xs[12345], len(d), (t @ t).sum().item(), grad(lambda x: x * x)(3.0))\n";

static const char expected[] = "20000 123451234512345 300 64000.0 6.0\n";

typedef struct Worker {
  bool ok;
  char why[256];
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  Buf out = {0};
  MistVM *vm = mist_new(0, NULL);
  if (!vm) {
    snprintf(w->why, sizeof w->why, "mist_new returned NULL");
    return NULL;
  }
  buf_add(&out, "", 0);
  out.len = 0;
  mist_set_write(vm, capture, &out);
  if (mist_eval(vm, "<thread>", program, false) != MIST_OK)
    snprintf(w->why, sizeof w->why, "error: %s", mist_error(vm));
  else if (strcmp(out.data, expected) != 0)
    snprintf(w->why, sizeof w->why, "printed %s", out.data);
  else
    w->ok = true;
  mist_free(vm);
  free(out.data);
  return NULL;
}

START_TEST(vms_on_host_threads)
{
  for (int round = 0; round < NROUNDS; round++) {
    pthread_t th[NTHREADS];
    Worker w[NTHREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NTHREADS; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++)
      ck_assert_msg(w[i].ok, "round %d, thread %d: %s", round, i, w[i].why);
  }
}
END_TEST

/* The main thread, which the collector knows from the start, and host
 * threads using VMs at the same time. */
START_TEST(main_thread_beside_host_threads)
{
  pthread_t th[NTHREADS];
  Worker w[NTHREADS];
  memset(w, 0, sizeof w);
  for (int i = 0; i < NTHREADS; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
  Worker mine = {0};
  work(&mine);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  ck_assert_msg(mine.ok, "main thread: %s", mine.why);
  for (int i = 0; i < NTHREADS; i++) ck_assert_msg(w[i].ok, "thread %d: %s", i, w[i].why);
}
END_TEST

static Suite *threads_suite(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("host threads");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, vms_on_host_threads);
  tcase_add_test(tc, main_thread_beside_host_threads);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(threads_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
