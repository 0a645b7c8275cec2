/* devices/cpu/gemm_thin.c: two f32 matrix products of a minibatch's
 * backward pass, on AVX-512 (gemm_thin.h): a weight's gradient
 * C = A^T @ B (x^T @ d, the shared side k the batch) and an input's
 * sensitivity C = A @ B^T (d @ w^T, m the batch).  OpenBLAS packs both
 * operands into panels and makes a pass that zeroes C before its kernel
 * adds into it; with a side of 64 that is a large part of the work.
 *
 * Both kernels hold a tile of 12 rows by 32 columns of C in 24 AVX-512
 * registers while k runs; one step broadcasts 12 floats of A and loads
 * 32 of B, 24 fused multiply-adds; C written once.
 *   A^T @ B: the 12 floats are consecutive in a row of A and the 32 in a
 *     row of B, so nothing is packed.  Rows of C outermost: the tile's
 *     12 columns of A (k short lines) stay in L1 while it goes across,
 *     B (k x n, at most 256 KB here) comes from L2.
 *   A @ B^T: the 12 floats are one column of 12 rows of A (12 lines in
 *     L1); the 32 of B^T are a column of B, so each panel of 32 rows of
 *     B is first transposed (16 x 16 blocks in registers) into a k x 32
 *     buffer on the stack (32 KB at k = 256, in L1), which the tiles
 *     down C then read.
 *
 * Bits: each element is summed over k in order, one fused multiply-add
 * a step, from zero, and a zero sum is stored +0 (OpenBLAS adds its sum
 * to the C it zeroed).  OpenBLAS's SkylakeX kernels compute exactly
 * this while k is within their block of k (GEMM_Q): bench/mlp_products.c
 * compares every shape it times bit for bit, and 52 TN shapes with k up
 * to 448 and 12 NT shapes agreed; tests/unit/test_devices.c holds both
 * kernels to the sum in order.  So the kernels change no result, only
 * the time.
 *
 * Where they run (2-core Xeon, AVX-512, one thread, best of 200 to 300,
 * bench/mlp_products.c; OpenBLAS 0.3.21 SkylakeX), the time against
 * OpenBLAS's:
 *   A^T @ B where k <= 128, 128 <= n <= 512, n a multiple of 16, m >= 64:
 *     784x256 @ k=64 0.82x to 0.87x, 256x256 0.85x to 0.87x, 128x128
 *     0.76x, 512x512 0.91x, 128x128 @ k=128 0.91x.  Slower outside:
 *     n = 48 or 64 (1.1x to 1.3x, the tile's masked half), 1024x1024 @
 *     k=128 (1.24x: B not in L2).
 *   A @ B^T where m <= 128, n >= 128, k <= 256, n and k multiples of 16:
 *     64x256 @ k=256 0.64x to 0.78x, 64x784 0.77x to 0.84x, 128x256
 *     0.75x, 64x256 @ k=128 0.68x, 32x256 0.56x to 0.61x (512x256 0.83x,
 *     but m above 128 is a product blas.c gives OpenBLAS's threads).
 * Both bounds keep a product thin (a side <= 128), so on several
 * threads blas.c cuts it into slabs, each a call here. */
#include "devices/cpu/gemm_thin.h"

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

/* Rows [0, mr) of a tile of C from its sums; + 0: a sum that is -0
 * (products that underflowed) stored +0, as OpenBLAS's C = 0 + sum
 * stores it */
static inline __attribute__((always_inline, target("avx512f"))) void store_tile(int mr, __m512 acc[][2], float *c,
                                                                            int64_t ldc, __mmask16 m1) {
  __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int r = 0; r < mr; r++) {
    _mm512_storeu_ps(c + r * ldc, _mm512_add_ps(acc[r][0], zero));
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, _mm512_add_ps(acc[r][1], zero));
  }
}

/* A^T @ B: rows [0, mr) of C by 32 columns from c; the second register of each
 * row masked by m1 (0 where only 16 columns are left) */
static inline __attribute__((always_inline, target("avx512f"))) void tile_tn(int mr, int64_t k, const float *a,
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
  store_tile(mr, acc, c, ldc, m1);
}

__attribute__((target("avx512f"))) static void kernel_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                                                      const float *b, int64_t ldb, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += TILE_ROWS) {
    int64_t mr = m - i < TILE_ROWS ? m - i : TILE_ROWS;
    for (int64_t j = 0; j < n; j += 32) {
      __mmask16 m1 = n - j >= 32 ? (__mmask16)0xffff : 0;
      float *cij = c + i * ldc + j;
      switch (mr) {
#define ROWS(R) \
  case R: tile_tn(R, k, a + i, lda, b + j, ldb, cij, ldc, m1); break;
        ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12)
#undef ROWS
      }
    }
  }
}

bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  if (k < 1 || k > 128 || n < 128 || n > 512 || n % 16 != 0 || m < 64 || !have_avx512()) return false;
  kernel_tn(m, n, k, a, lda, b, ldb, c, ldc);
  return true;
}

/* dst (16 x 16, row stride ldd) = the transpose of src (16 x 16, lds) */
static inline __attribute__((always_inline, target("avx512f"))) void transpose16(const float *src, int64_t lds,
                                                                                float *dst, int64_t ldd) {
  __m512 r[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* then r[4i + q] holds, in its 128-bit lane L, column 4L + q of rows 4i to 4i + 3 */
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]), c = _mm512_castps_pd(t[4 * i + 2]),
            d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; q++) {
    __m512 a = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88), b = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xdd),
           c = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88), d = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xdd);
    t[q] = _mm512_shuffle_f32x4(a, c, 0x88);
    t[8 + q] = _mm512_shuffle_f32x4(a, c, 0xdd);
    t[4 + q] = _mm512_shuffle_f32x4(b, d, 0x88);
    t[12 + q] = _mm512_shuffle_f32x4(b, d, 0xdd);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, t[i]);
}

enum { NT_MAX_K = 256 };

/* rows [0, mr) of C by 32 columns from c, over the k x 32 panel of B^T */
static inline __attribute__((always_inline, target("avx512f"))) void tile_nt(int mr, int64_t k, const float *a,
                                                                            int64_t lda, const float *panel,
                                                                            float *c, int64_t ldc, __mmask16 m1) {
  __m512 acc[TILE_ROWS][2];
#pragma GCC unroll 12
  for (int r = 0; r < mr; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p++) {
    __m512 b0 = _mm512_load_ps(panel + p * 32), b1 = _mm512_maskz_load_ps(m1, panel + p * 32 + 16);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
      __m512 av = _mm512_set1_ps(a[r * lda + p]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  store_tile(mr, acc, c, ldc, m1);
}

__attribute__((target("avx512f"))) static void kernel_nt(int64_t m, int64_t n, int64_t k, const float *a,
                                                         int64_t lda, const float *b, int64_t ldb, float *c,
                                                         int64_t ldc) {
  float panel[NT_MAX_K * 32] __attribute__((aligned(64)));
  for (int64_t j = 0; j < n; j += 32) {
    int64_t w = n - j >= 32 ? 32 : 16;
    /* panel[p][0, w) = rows j to j + w of B at column p (a panel of 16
     * leaves its right half unwritten, and unread: m1 masks it) */
    for (int64_t p = 0; p < k; p += 16)
      for (int64_t h = 0; h < w; h += 16) transpose16(b + (j + h) * ldb + p, ldb, panel + p * 32 + h, 32);
    __mmask16 m1 = w == 32 ? (__mmask16)0xffff : 0;
    for (int64_t i = 0; i < m; i += TILE_ROWS) {
      int64_t mr = m - i < TILE_ROWS ? m - i : TILE_ROWS;
      float *cij = c + i * ldc + j;
      const float *ai = a + i * lda;
      switch (mr) {
#define ROWS(R) \
  case R: tile_nt(R, k, ai, lda, panel, cij, ldc, m1); break;
        ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12)
#undef ROWS
      }
    }
  }
}

bool dev_cpu_sgemm_nt(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  if (m < 1 || m > 128 || n < 128 || n % 16 != 0 || k < 16 || k > NT_MAX_K || k % 16 != 0 || !have_avx512())
    return false;
  kernel_nt(m, n, k, a, lda, b, ldb, c, ldc);
  return true;
}
#else
bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  return false;
}
bool dev_cpu_sgemm_nt(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  return false;
}
#endif
