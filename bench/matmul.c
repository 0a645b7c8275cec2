/* bench/matmul.c: Mist's dev_gemm against OpenBLAS called directly, in
 * the same run: square f32 and f64 products at 256 and 1024.  Both sides
 * use the same OpenBLAS (with the core type blas.c chose; run with
 * MIST_BLAS_CORETYPE=env to keep the environment's).  Mist is timed in
 * its two threading modes (blas.h): OpenBLAS's threads while the pool is
 * held (the default), and slabs over the pool.  Each figure is the best
 * of several timed rounds, the sides alternating, so the ratio holds on
 * a noisy machine.  Last, whether OpenBLAS's idle threads (they spin a
 * while after each call) slow down the pool's next kernel.  Built by
 * bench/tensor_run.sh. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "devices/blas.h"
#include "devices/cpu/vmath.h"
#include "devices/pool.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define DEFINE_RUN(T, SUF, CBLAS)                                                         \
  static void run_##SUF(DevPool *pool, int n, int threads) {                              \
    T *a = malloc(sizeof(T) * n * n), *b = malloc(sizeof(T) * n * n);                      \
    T *c = malloc(sizeof(T) * n * n), *d = malloc(sizeof(T) * n * n);                      \
    for (int i = 0; i < n * n; i++) {                                                      \
      a[i] = (T)((i * 7 % 13) - 6) / 8;                                                    \
      b[i] = (T)((i * 5 % 11) - 5) / 8;                                                    \
      c[i] = d[i] = 0;                                                                     \
    }                                                                                      \
    int reps = n <= 256 ? 100 : 5;                                                         \
    double best[3] = {1e30, 1e30, 1e30};                                                   \
    for (int round = 0; round < 7; round++) {                                              \
      for (int side = 0; side < 3; side++) {                                               \
        if (side == 0) openblas_set_num_threads(threads);                                  \
        dev_blas_set_own_threads(side == 1);                                               \
        double t = now();                                                                  \
        for (int r = 0; r < reps; r++) {                                                   \
          if (side == 0)                                                                   \
            CBLAS(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n); \
          else                                                                             \
            dev_gemm_##SUF(pool, false, false, n, n, n, 1, a, n, b, n, 0, d, n);           \
        }                                                                                  \
        t = (now() - t) / reps;                                                            \
        if (round > 0 && t < best[side]) best[side] = t; /* round 0 warms up */            \
      }                                                                                    \
    }                                                                                      \
    dev_blas_set_own_threads(true);                                                        \
    double err = 0;                                                                        \
    for (int i = 0; i < n * n; i++) {                                                      \
      double e = (double)c[i] - (double)d[i];                                              \
      if (e < 0) e = -e;                                                                   \
      if (e > err) err = e;                                                                \
    }                                                                                      \
    double fl = 2.0 * n * n * n;                                                           \
    printf("%-4s %5d  %8.1f  %8.1f  %10.1f   %5.2f  %5.2f   %.1e\n", #SUF, n,           \
           fl / best[0] / 1e9, fl / best[1] / 1e9, fl / best[2] / 1e9,                     \
           best[0] / best[1], best[0] / best[2], err);                                     \
    free(a), free(b), free(c), free(d);                                                    \
  }

DEFINE_RUN(float, f32, cblas_sgemm)
DEFINE_RUN(double, f64, cblas_dgemm)

/* A pool kernel right after a gemm (OpenBLAS's threads still spinning)
 * against the same kernel after a pause (they have gone to sleep). */
static void interplay(DevPool *pool) {
  int n = 256, m = 1 << 20;
  float *a = calloc((size_t)n * n, sizeof(float)), *c = calloc((size_t)n * n, sizeof(float));
  float *x = calloc((size_t)m, sizeof(float)), *y = calloc((size_t)m, sizeof(float));
  double after = 1e30, rested = 1e30;
  for (int r = 0; r < 40; r++) {
    dev_gemm_f32(pool, false, false, n, n, n, 1, a, n, a, n, 0, c, n);
    double t = now();
    dev_unary_f32(pool, VM_EXP, y, x, m);
    t = now() - t;
    if (t < after) after = t;
  }
  for (int r = 0; r < 4; r++) {
    dev_gemm_f32(pool, false, false, n, n, n, 1, a, n, a, n, 0, c, n);
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    double t = now();
    dev_unary_f32(pool, VM_EXP, y, x, m);
    t = now() - t;
    if (t < rested) rested = t;
  }
  printf("pool exp on 2^20 f32: right after a 256 gemm %.3f ms, after a 0.3 s pause %.3f ms\n",
         after * 1e3, rested * 1e3);
  free(a), free(c), free(x), free(y);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  DevPool *pool = dev_pool_new(threads);
  threads = dev_pool_size(pool);
  printf("matmul: %s; %d threads\n", dev_blas_info(), threads);
  printf("GFLOP/s, best of 6 rounds; ratio = Mist speed / OpenBLAS speed (target >= 0.90)\n");
  printf("type     n  openblas      mist  mist/slabs   ratio  slabs   max|diff|\n");
  int sizes[] = {256, 1024};
  for (int i = 0; i < 2; i++) run_f32(pool, sizes[i], threads);
  for (int i = 0; i < 2; i++) run_f64(pool, sizes[i], threads);
  printf("(mist: OpenBLAS's threads while Mist's pool is held, the default; mist/slabs:\n"
         " C cut into one slab per pool worker, single-threaded OpenBLAS on each)\n");
  interplay(pool);
  dev_pool_free(pool);
  return 0;
}
