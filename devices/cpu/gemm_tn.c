/* devices/cpu/gemm_tn.c: C = A^T @ B in f32 when the shared side k is
 * short (gemm_tn.h), the product of a weight's gradient x^T @ d in a
 * minibatch (k = the batch).  OpenBLAS packs both operands into panels
 * and makes a pass that zeroes C before its kernel adds into it; with
 * k = 64 that is a large part of the work.  Here each tile of 12 rows
 * by 32 columns of C sits in 24 AVX-512 registers while k runs: one step
 * reads 12 consecutive floats of a row of A (broadcast) and 32 of a row
 * of B, no packing, C written once.  Rows of C are outermost, so the
 * tile's 12 columns of A (k short lines) stay in L1 while it goes
 * across, and B (k x n, at most 256 KB here) comes from L2.
 *
 * Bits: each element is summed over k in order, one fused multiply-add
 * a step, starting from zero, and a zero result is stored +0 (OpenBLAS
 * adds its sum to the zeroed C): OpenBLAS's SkylakeX kernels compute
 * exactly this while k is under their block of k (GEMM_Q; checked by
 * bench/mlp_products.c and tests/unit/test_devices.c for k <= 448), so
 * the kernel changes no result, only the time.
 *
 * Where it runs (measured on 2-core Xeon, AVX-512, one thread, best of
 * 200, bench/mlp_products.c; OpenBLAS 0.3.21 SkylakeX): k <= 128 and
 * 128 <= n <= 512, n a multiple of 16, m >= 64: 784x256 @ k=64 0.82x
 * OpenBLAS's time, 256x256 0.87x, 128x128 0.76x, 512x512 0.91x,
 * 128x128 @ k=128 0.91x.  Slower outside: n = 48 or 64 (1.1x to 1.3x:
 * the tile's masked half), 1024x1024 @ k=128 (1.24x: B no longer in
 * L2); k = 512 is where OpenBLAS splits k and sums differently. */
#include "devices/cpu/gemm_tn.h"

#if defined(__x86_64__)
#include <immintrin.h>

static bool have_avx512(void) {
  static int v = -1;
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx512f") ? 1 : 0;
  }
  return v;
}

enum { TILE_ROWS = 12 };

/* rows [0, mr) of C by 32 columns from c; the second register of each
 * row masked by m1 (0 where only 16 columns are left) */
static inline __attribute__((always_inline, target("avx512f"))) void tile(int mr, int64_t k, const float *a,
                                                                         int64_t lda, const float *b, int64_t ldb,
                                                                         float *c, int64_t ldc, __mmask16 m1) {
  __m512 acc[TILE_ROWS][2];
#pragma GCC unroll 12
  for (int r = 0; r < mr; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p++) {
    const float *bp = b + p * ldb, *ap = a + p * lda;
    __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_maskz_loadu_ps(m1, bp + 16);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
      __m512 av = _mm512_set1_ps(ap[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  /* + 0: a sum that is -0 (products that underflowed) stored +0, as
   * OpenBLAS's C = 0 + sum stores it */
  __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int r = 0; r < mr; r++) {
    _mm512_storeu_ps(c + r * ldc, _mm512_add_ps(acc[r][0], zero));
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, _mm512_add_ps(acc[r][1], zero));
  }
}

__attribute__((target("avx512f"))) static void kernel(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                                                      const float *b, int64_t ldb, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += TILE_ROWS) {
    int64_t mr = m - i < TILE_ROWS ? m - i : TILE_ROWS;
    for (int64_t j = 0; j < n; j += 32) {
      __mmask16 m1 = n - j >= 32 ? (__mmask16)0xffff : 0;
      float *cij = c + i * ldc + j;
      switch (mr) {
#define ROWS(R) \
  case R: tile(R, k, a + i, lda, b + j, ldb, cij, ldc, m1); break;
        ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12)
#undef ROWS
      }
    }
  }
}

bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  if (k < 1 || k > 128 || n < 128 || n > 512 || n % 16 != 0 || m < 64 || !have_avx512()) return false;
  kernel(m, n, k, a, lda, b, ldb, c, ldc);
  return true;
}
#else
bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  return false;
}
#endif
