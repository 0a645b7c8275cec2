/* bench/elementwise.c: the chain exp(x) * y + tanh(x) on 10^7 f32, three
 * ways in the same run: Mist's dev_ kernels (four calls, each a pass
 * over memory: exp, mul, tanh, add), on one thread and on the pool; one
 * fused C loop built with gcc -O3 -march=native -ffast-math (the
 * design's reference, vectorised math through libmvec); and memcpy of
 * the chain's bytes (x and y read, out written: 120 MB of traffic), the
 * floor that memory bandwidth sets.  Also the cost of a fresh 40 MB
 * buffer against one reused from Mist's caching allocator.
 *
 * This file is compiled twice by bench/tensor_run.sh: with
 * -DFUSED_LOOP_ONLY (and the fast-math flags) it is just the loop. */
#include <math.h>
#include <stdint.h>

void fused_chain(float *out, const float *x, const float *y, int64_t n);

#ifdef FUSED_LOOP_ONLY
void fused_chain(float *out, const float *x, const float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = expf(x[i]) * y[i] + tanhf(x[i]);
}
#else
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/alloc.h"
#include "devices/cpu/vmath.h"
#include "devices/pool.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void mist_chain(DevPool *p, float *out, float *t, const float *x, const float *y,
                       int64_t n) {
  dev_unary_f32(p, VM_EXP, out, x, n);
  dev_binary_f32(p, VM_MUL, out, out, y, n);
  dev_unary_f32(p, VM_TANH, t, x, n);
  dev_binary_f32(p, VM_ADD, out, out, t, n);
}

/* A plain scalar loop calling libm (no fast-math): the accuracy truth. */
static void libm_chain(float *out, const float *x, const float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = expf(x[i]) * y[i] + tanhf(x[i]);
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

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  int64_t n = 10000000;
  DevPool *pool = dev_pool_new(threads), *one = dev_pool_new(1);
  DevAllocator *alloc = dev_allocator_new();
  size_t bytes = (size_t)n * sizeof(float);
  float *x = dev_buf_alloc(alloc, bytes), *y = dev_buf_alloc(alloc, bytes);
  float *out = dev_buf_alloc(alloc, bytes), *t = dev_buf_alloc(alloc, bytes);
  float *ref = dev_buf_alloc(alloc, bytes), *c1 = dev_buf_alloc(alloc, bytes);
  float *c2 = dev_buf_alloc(alloc, bytes);
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (float)((double)(s >> 40) / (1 << 24) * 6 - 3);
    y[i] = (float)((double)((s >> 16) & 0xffffff) / (1 << 24) * 2 - 1);
  }
  memset(out, 0, bytes), memset(t, 0, bytes), memset(ref, 0, bytes);
  memset(c1, 0, bytes), memset(c2, 0, bytes);

  double t_pool, t_one, t_fused, t_copy, t_libm;
  BEST(t_pool, 10, mist_chain(pool, out, t, x, y, n));
  BEST(t_one, 5, mist_chain(one, out, t, x, y, n));
  BEST(t_fused, 10, fused_chain(ref, x, y, n));
  BEST(t_copy, 10, (memcpy(c1, x, bytes), memcpy(c2, y, bytes)));
  BEST(t_libm, 2, libm_chain(ref, x, y, n));

  /* accuracy of both against the scalar libm loop */
  float *fused = malloc(bytes);
  fused_chain(fused, x, y, n);
  /* error relative to the size of the terms (the sum may cancel) */
  double err_mist = 0, err_fused = 0;
  for (int64_t i = 0; i < n; i++) {
    double scale = fabs(exp((double)x[i]) * y[i]) + fabs(tanh((double)x[i]));
    double em = fabs((double)out[i] - ref[i]) / scale, ef = fabs((double)fused[i] - ref[i]) / scale;
    if (em > err_mist) err_mist = em;
    if (ef > err_fused) err_fused = ef;
  }

  /* one kernel into a fresh buffer (malloc'd, or mapped with huge pages
   * by dev_buf_alloc with nothing cached) vs a buffer from the cache */
  double t_fresh = 1e30, t_huge = 1e30, t_cached = 1e30;
  for (int r = 0; r < 3; r++) {
    float *f = malloc(bytes);
    double t0 = now();
    dev_unary_f32(pool, VM_EXP, f, x, n);
    t0 = now() - t0;
    if (t0 < t_fresh) t_fresh = t0;
    free(f);
    f = dev_buf_alloc(NULL, bytes);
    t0 = now();
    dev_unary_f32(pool, VM_EXP, f, x, n);
    t0 = now() - t0;
    if (t0 < t_huge) t_huge = t0;
    dev_buf_free(NULL, f, bytes);
    float *b = dev_buf_alloc(alloc, bytes);
    t0 = now();
    dev_unary_f32(pool, VM_EXP, b, x, n);
    t0 = now() - t0;
    if (t0 < t_cached) t_cached = t0;
    dev_buf_free(alloc, b, bytes);
  }

  int nt = dev_pool_size(pool);
  printf("elementwise: exp(x) * y + tanh(x) on 10^7 f32, best of several runs\n");
  printf("  mist dev_ kernels, 4 passes, %d threads  %8.2f ms   %.2fx the fused loop\n", nt,
         t_pool * 1e3, t_pool / t_fused);
  printf("  mist dev_ kernels, 4 passes, 1 thread    %8.2f ms   %.2fx the fused loop\n",
         t_one * 1e3, t_one / t_fused);
  printf("  fused C loop, -O3 -march=native -ffast-math, 1 thread  %8.2f ms\n", t_fused * 1e3);
  printf("  scalar libm loop, -O3, 1 thread          %8.2f ms\n", t_libm * 1e3);
  printf("  memcpy of x and y (120 MB of traffic)    %8.2f ms   mist/memcpy %.2fx\n",
         t_copy * 1e3, t_pool / t_copy);
  printf("  max error vs the scalar libm loop, relative to |exp(x)y|+|tanh(x)|: mist %.1e, fused fast-math %.1e\n", err_mist, err_fused);
  printf("  exp into a fresh 40 MB buffer: malloc %.2f ms, huge pages %.2f ms; "
         "into a cached one %.2f ms\n", t_fresh * 1e3, t_huge * 1e3, t_cached * 1e3);
  free(fused);
  float *bufs[] = {x, y, out, t, ref, c1, c2};
  for (int i = 0; i < 7; i++) dev_buf_free(alloc, bufs[i], bytes);
  dev_allocator_free(alloc);
  dev_pool_free(pool), dev_pool_free(one);
  return 0;
}
#endif
