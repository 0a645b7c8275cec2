/* cpuclock.c: an LD_PRELOAD shim for timing on a loaded machine
 * (bench/jit_cache_run.sh with CPU_CLOCK=1): CLOCK_MONOTONIC, which
 * MIST_JIT_LOG's times read, reads the calling thread's CPU time
 * instead, so that the log says what a compilation cost the CPU rather
 * than how long it waited for one.  For measuring only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  return real(id == CLOCK_MONOTONIC ? CLOCK_THREAD_CPUTIME_ID : id, ts);
}
