/* loop.c: the C baseline of bench/jit/loop.ms, timed the same way: the
 * best of N calls of the 10^7-iteration loop (N = argv[1], default 5). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: one call per measurement, as Mist makes one */
__attribute__((noipa)) static double run(long n) {
  double x = 1.0, acc = 0.0;
  for (long i = 0; i < n; i++) {
    x = x * 0.999999 + 0.5;
    acc += x;
  }
  return acc;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  volatile long iters = 10000000;
  double r = 0, best = 1e9;
  for (int i = 0; i < n; i++) {
    double t0 = now();
    r = run(iters);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("loop = %.17g best ms: %.6f\n", r, best * 1000.0);
  return 0;
}
