/* elementwise.c: the C baselines of bench/jit/elementwise.ms: the loop
 * out[i] = expf(x[i]) * y[i] + tanhf(x[i]) over 10^7 floats, and of
 * bench/jit/select.ms (argv[2] "select"): out[i] = (x[i] > 0 ? x[i] :
 * 0.1f * x[i]) + fminf(fmaxf(y[i], -0.5f), 0.5f), built with
 * gcc -O3 -march=native -ffast-math -fopenmp, which vectorises expf and
 * tanhf through glibc's libmvec (_ZGVeN16v_expf, _ZGVeN16v_tanhf under
 * AVX-512), split over OMP_NUM_THREADS threads; the output preallocated
 * and written once before timing.  The best of N calls (N = argv[1],
 * default 10).  The inputs are uniform in [-3, 3) (not Mist's randn:
 * the time of these functions does not depend on the values). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

/* noipa: one call per measurement, as Mist makes one */
__attribute__((noipa)) static void chain(float *out, const float *x, const float *y, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) out[i] = expf(x[i]) * y[i] + tanhf(x[i]);
}

__attribute__((noipa)) static void select_chain(float *out, const float *x, const float *y, long n) {
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
  const char *name = argc > 2 ? argv[2] : "elementwise";
  void (*f)(float *, const float *, const float *, long) = strcmp(name, "select") == 0 ? select_chain : chain;
  long n = 10000000;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
  unsigned s = 1;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
    s = s * 1664525u + 1013904223u;
    y[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
  }
  f(out, x, y, n);
  double best = 1e9;
  for (int i = 0; i < reps; i++) {
    double t0 = now();
    f(out, x, y, n);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double sum = 0;
  for (long i = 0; i < n; i++) sum += out[i];
  printf("%s = %.17g best ms: %.6f\n", name, sum, best * 1000.0);
  return 0;
}
