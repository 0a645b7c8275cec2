/* bench/conv.c: conv2d on a batch of 64 images of 1x28x28 with 32 3x3
 * filters (stride 1, no padding: out 64x32x26x26, PyTorch's
 * Conv2d(1, 32, 3)), f32, with Mist's dev_conv2d_f32 (im2col + gemm) on
 * the pool and on one thread, against a naive direct loop built with
 * -O3 in the same run; then 2x2 max pooling of the result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "devices/cpu/conv.h"
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

enum { N = 64, CIN = 1, H = 28, W = 28, COUT = 32, K = 3, HO = H - K + 1, WO = W - K + 1 };

__attribute__((noinline)) static void naive_conv(const float *x, const float *wt,
                                                 const float *bias, float *out) {
  for (int b = 0; b < N; b++)
    for (int co = 0; co < COUT; co++)
      for (int oh = 0; oh < HO; oh++)
        for (int ow = 0; ow < WO; ow++) {
          float s = bias[co];
          for (int c = 0; c < CIN; c++)
            for (int i = 0; i < K; i++)
              for (int j = 0; j < K; j++)
                s += x[((b * CIN + c) * H + oh + i) * W + ow + j] *
                     wt[((co * CIN + c) * K + i) * K + j];
          out[((b * COUT + co) * HO + oh) * WO + ow] = s;
        }
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  DevPool *pool = dev_pool_new(threads), *one = dev_pool_new(1);
  float *x = malloc(sizeof(float) * N * CIN * H * W), *wt = malloc(sizeof(float) * COUT * CIN * K * K);
  float *bias = malloc(sizeof(float) * COUT);
  float *out = malloc(sizeof(float) * N * COUT * HO * WO), *ref = malloc(sizeof(float) * N * COUT * HO * WO);
  float *pooled = malloc(sizeof(float) * N * COUT * (HO / 2) * (WO / 2));
  uint64_t s = 7;
  for (int i = 0; i < N * CIN * H * W; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (float)((double)(s >> 40) / (1 << 24));
  }
  for (int i = 0; i < COUT * CIN * K * K; i++) wt[i] = (float)((i % 7) - 3) / 4;
  for (int i = 0; i < COUT; i++) bias[i] = (float)i / 32;

  double t_pool, t_one, t_naive, t_mp;
  BEST(t_pool, 50, dev_conv2d_f32(pool, x, N, CIN, H, W, wt, COUT, K, K, bias, 1, 1, 0, 0, out));
  BEST(t_one, 20, dev_conv2d_f32(one, x, N, CIN, H, W, wt, COUT, K, K, bias, 1, 1, 0, 0, out));
  BEST(t_naive, 10, naive_conv(x, wt, bias, ref));
  BEST(t_mp, 50, dev_maxpool2d_f32(pool, out, N, COUT, HO, WO, 2, 2, 2, 2, 0, 0, pooled, NULL));
  double err = 0;
  for (int i = 0; i < N * COUT * HO * WO; i++)
    if (fabs((double)out[i] - ref[i]) > err) err = fabs((double)out[i] - ref[i]);
  double fl = 2.0 * N * COUT * HO * WO * CIN * K * K;
  int nt = dev_pool_size(pool);
  printf("conv: conv2d 64x1x28x28 * 32x1x3x3 -> 64x32x26x26 f32, best of several runs\n");
  printf("  mist dev_conv2d_f32, %d threads  %7.3f ms  %6.1f GFLOP/s   naive/mist %.2fx\n", nt,
         t_pool * 1e3, fl / t_pool / 1e9, t_naive / t_pool);
  printf("  mist dev_conv2d_f32, 1 thread   %7.3f ms  %6.1f GFLOP/s   naive/mist %.2fx\n",
         t_one * 1e3, fl / t_one / 1e9, t_naive / t_one);
  printf("  naive direct loop, -O3, 1 thread %7.3f ms  %6.1f GFLOP/s   max|diff| %.1e\n",
         t_naive * 1e3, fl / t_naive / 1e9, err);
  printf("  maxpool 2x2 of the result, %d threads  %.3f ms\n", nt, t_mp * 1e3);
  free(x), free(wt), free(bias), free(out), free(ref), free(pooled);
  dev_pool_free(pool), dev_pool_free(one);
  return 0;
}
