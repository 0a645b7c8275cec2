/* bench/reduce.c: sum, max of 10^7 f32 with Mist's dev_sum_f32 (pairwise,
 * accumulated in double) and dev_max_f32, on the pool and on one thread,
 * against plain C loops built with -O3 in the same run (a float
 * accumulator, as the naive loop; a double one), with the error of each
 * against an exact sum (long double over doubles). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "devices/cpu/vmath.h"
#include "devices/pool.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define BEST(VAR, REPS, STMT)                                    \
  do {                                                           \
    VAR = 1e30;                                                  \
    for (int r_ = 0; r_ < (REPS); r_++) {                        \
      double t_ = now();                                         \
      STMT;                                                      \
      t_ = now() - t_;                                           \
      if (t_ < VAR) VAR = t_;                                    \
    }                                                            \
  } while (0)

__attribute__((noinline)) static float loop_sum_f(const float *x, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i];
  return s;
}
__attribute__((noinline)) static double loop_sum_d(const float *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i];
  return s;
}
__attribute__((noinline)) static float loop_max(const float *x, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  int64_t n = 10000000;
  DevPool *pool = dev_pool_new(threads), *one = dev_pool_new(1);
  float *x = malloc(sizeof(float) * n);
  uint64_t s = 99;
  long double exact = 0;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (float)((double)(s >> 40) / (1 << 24)) + 0.1f;
    exact += x[i];
  }
  volatile double sink;
  double t_pool, t_one, t_f, t_d, t_max, t_cmax;
  double v_pool = 0, v_f = 0, v_d = 0;
  BEST(t_pool, 20, v_pool = dev_sum_f32(pool, x, n));
  BEST(t_one, 10, sink = dev_sum_f32(one, x, n));
  BEST(t_f, 10, v_f = loop_sum_f(x, n));
  BEST(t_d, 10, v_d = loop_sum_d(x, n));
  BEST(t_max, 20, sink = dev_max_f32(pool, x, n));
  BEST(t_cmax, 10, sink = loop_max(x, n));
  (void)sink;
  int nt = dev_pool_size(pool);
  printf("reduce: sum of 10^7 f32 (values in [0.1, 1.1)), best of several runs\n");
  printf("  mist dev_sum_f32, %d threads  %6.2f ms   rel. error %.1e\n", nt, t_pool * 1e3,
         fabs((double)((v_pool - exact) / exact)));
  printf("  mist dev_sum_f32, 1 thread   %6.2f ms\n", t_one * 1e3);
  printf("  C loop, float accumulator    %6.2f ms   rel. error %.1e   mist/loop %.2fx\n",
         t_f * 1e3, fabs((double)((v_f - exact) / exact)), t_pool / t_f);
  printf("  C loop, double accumulator   %6.2f ms   rel. error %.1e   mist/loop %.2fx\n",
         t_d * 1e3, fabs((double)((v_d - exact) / exact)), t_pool / t_d);
  printf("  max: mist %d threads %.2f ms, C loop %.2f ms   mist/loop %.2fx\n", nt, t_max * 1e3,
         t_cmax * 1e3, t_max / t_cmax);
  free(x);
  dev_pool_free(pool), dev_pool_free(one);
  return 0;
}
