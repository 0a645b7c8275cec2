/* reduce_max.c: the C baselines of bench/jit/reduce_max.ms: the max of
 * expf(x) * y over the middle axis (argv[2] "middle") or the last
 * ("last") of x, y of shape 100 x 1000 x 100 floats, built with
 * gcc -O3 -march=native -ffast-math -fopenmp (expf through glibc's
 * libmvec, the max vectorised), split over OMP_NUM_THREADS threads
 * along the first axis; the output preallocated.  Also, of the same
 * chain: the sum over the last two axes ("axes"), the argmax over the
 * last, the first of equals ("argmax"), the count of elements above 1
 * ("count").  The best of N calls
 * (N = argv[1], default 10).  Inputs uniform in [-3, 3). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { A = 100, D = 1000, B = 100 };

/* noipa: one call per measurement, as Mist makes one */
__attribute__((noipa)) static void middle(float *out, const float *x, const float *y) {
#pragma omp parallel for schedule(static)
  for (long a = 0; a < A; a++) {
    float *acc = out + a * B;
    for (long b = 0; b < B; b++) acc[b] = -INFINITY;
    for (long d = 0; d < D; d++) {
      const float *xs = x + (a * D + d) * B, *ys = y + (a * D + d) * B;
      for (long b = 0; b < B; b++) acc[b] = fmaxf(acc[b], expf(xs[b]) * ys[b]);
    }
  }
}

__attribute__((noipa)) static void last(float *out, const float *x, const float *y) {
#pragma omp parallel for schedule(static)
  for (long r = 0; r < A * D; r++) {
    float m = -INFINITY;
    for (long b = 0; b < B; b++) m = fmaxf(m, expf(x[r * B + b]) * y[r * B + b]);
    out[r] = m;
  }
}

__attribute__((noipa)) static void axes(float *out, const float *x, const float *y) {
#pragma omp parallel for schedule(static)
  for (long a = 0; a < A; a++) {
    float s = 0;
    for (long i = a * D * B; i < (a + 1) * D * B; i++) s += expf(x[i]) * y[i];
    out[a] = s;
  }
}

__attribute__((noipa)) static void argmax_last(float *out, const float *x, const float *y) {
#pragma omp parallel for schedule(static)
  for (long r = 0; r < A * D; r++) {
    float m = -INFINITY;
    long at = 0;
    for (long b = 0; b < B; b++) {
      float v = expf(x[r * B + b]) * y[r * B + b];
      if (v > m) m = v, at = b;
    }
    out[r] = (float)at;
  }
}

__attribute__((noipa)) static void count(float *out, const float *x, const float *y) {
  long c = 0;
#pragma omp parallel for schedule(static) reduction(+ : c)
  for (long i = 0; i < (long)A * D * B; i++) c += expf(x[i]) * y[i] > 1.0f;
  out[0] = (float)c;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 10;
  const char *name = argc > 2 ? argv[2] : "middle";
  static const struct {
    const char *name;
    void (*fn)(float *, const float *, const float *);
    long nout;
  } cases[] = {{"middle", middle, (long)A * B}, {"last", last, (long)A * D}, {"axes", axes, A},
               {"argmax", argmax_last, (long)A * D}, {"count", count, 1}};
  int k = 0;
  while (k < 5 && strcmp(name, cases[k].name) != 0) k++;
  if (k == 5) {
    fprintf(stderr, "reduce_max: no case %s\n", name);
    return 2;
  }
  void (*fn)(float *, const float *, const float *) = cases[k].fn;
  long n = (long)A * D * B, nout = cases[k].nout;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(nout * sizeof *out);
  unsigned s = 1;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
    s = s * 1664525u + 1013904223u;
    y[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
  }
  fn(out, x, y);
  double best = 1e9;
  for (int i = 0; i < reps; i++) {
    double t0 = now();
    fn(out, x, y);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double sum = 0;
  for (long i = 0; i < nout; i++) sum += out[i];
  printf("%s = %.17g best ms: %.6f\n", name, sum, best * 1000.0);
  return 0;
}
