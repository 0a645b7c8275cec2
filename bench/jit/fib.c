/* fib.c: the C baseline of bench/jit/fib.ms, timed the same way: the
 * best of N calls of fib(30) (N = argv[1], default 10). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  volatile long arg = 30;   /* not folded at compile time */
  long r = 0;
  double best = 1e9;
  for (int i = 0; i < n; i++) {
    double t0 = now();
    r = fib(arg);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("fib(30) = %ld best ms: %.6f\n", r, best * 1000.0);
  return 0;
}
