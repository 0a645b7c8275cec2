/* select.c: the C baseline of bench/jit/select.ms: the loop
 * out[i] = (x[i] > 0 ? x[i] : 0.1f * x[i]) + fminf(fmaxf(y[i], -0.5f), 0.5f)
 * over 10^7 floats, built with gcc -O3 -march=native -ffast-math
 * -fopenmp (vectorised to compares and blends), split over
 * OMP_NUM_THREADS threads; the output preallocated and written once
 * before timing.  The best of N calls (N = argv[1], default 10), on
 * inputs uniform in [-3, 3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: one call per measurement, as Mist makes one */
__attribute__((noipa)) static void chain(float *out, const float *x, const float *y, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) out[i] = (x[i] > 0 ? x[i] : 0.1f * x[i]) + fminf(fmaxf(y[i], -0.5f), 0.5f);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 10;
  long n = 10000000;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
  unsigned s = 1;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
    s = s * 1664525u + 1013904223u;
    y[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
  }
  chain(out, x, y, n);
  double best = 1e9;
  for (int i = 0; i < reps; i++) {
    double t0 = now();
    chain(out, x, y, n);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double sum = 0;
  for (long i = 0; i < n; i++) sum += out[i];
  printf("select = %.17g best ms: %.6f\n", sum, best * 1000.0);
  return 0;
}
