/* devices/cpu/conv.c: 2-D convolution and max pooling, NCHW (conv.h).
 *
 * Convolution goes through im2col + gemm: for one image, the columns
 * matrix cols[Cin*Kh*Kw, Ho*Wo] holds, for every output pixel, the input
 * values under the kernel (zeros where the window hangs over the
 * padding), and out[Cout, Ho*Wo] = wt[Cout, Cin*Kh*Kw] @ cols, then the
 * bias is added.  A 1x1 kernel with stride 1 and no padding needs no
 * columns: the image already is that matrix.  A batch is split over the
 * pool by images, each task with its own columns buffer and a
 * single-threaded BLAS call per image; a single image runs im2col on the
 * caller and lets dev_gemm split the product.  f32 convolutions with
 * few taps (Cin*Kh*Kw <= 64) skip gemm for a register-blocked AVX-512
 * kernel (below).  When the columns buffer
 * cannot be allocated, plain direct loops do the work instead, so the
 * call cannot fail.
 *
 * Max pooling is a direct loop over windows, split over the pool by
 * (image, channel) planes.  Padding counts as -inf; NaN wins (the last
 * NaN of a window, as in PyTorch). */
#include "devices/cpu/conv.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blas.h"

int64_t dev_conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad) {
  if (stride < 1 || k < 1) return 0;
  int64_t span = in + 2 * pad - k;
  return span < 0 ? 0 : span / stride + 1;
}

typedef struct {
  const void *x, *wt, *bias;
  void *out;
  int64_t n, cin, h, w, cout, kh, kw, sh, sw, ph, pw, ho, wo;
} Conv;

/* ---- f32 with few taps: a register-blocked kernel instead of gemm ----
 * With K = Cin*Kh*Kw small (a first layer: 9 for 1x3x3, 27 for 3x3x3),
 * every output gets only K multiply-adds, and gemm spends its time on
 * packing and on C.  This kernel keeps 64 outputs of one channel in four
 * AVX-512 registers and runs the K taps over them, reading the columns
 * from L1: about 4x OpenBLAS's speed on the MNIST-sized bench. */
#define SMALL_K 64

#if defined(__x86_64__)
#include <immintrin.h>

static int have_avx512(void) {
  static int v = -1;
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx512f") ? 1 : 0;
  }
  return v;
}

/* Outputs [j0, j0 + 64) of channels [co, co + CO): CO x 4 accumulators,
 * each tap one broadcast per channel and four loads shared by them. */
#define SMALL_K_BLOCK(CO, LOAD, STORE)                                                   \
  do {                                                                                   \
    __m512 acc[CO][4];                                                                   \
    for (int u = 0; u < CO; u++)                                                         \
      for (int v = 0; v < 4; v++) acc[u][v] = _mm512_set1_ps(bias ? bias[co + u] : 0.0f); \
    for (int64_t t = 0; t < k; t++) {                                                    \
      const float *c = cols + t * hw + j0;                                               \
      __m512 cv[4];                                                                      \
      for (int v = 0; v < 4; v++) cv[v] = LOAD(v, c + 16 * v);                           \
      for (int u = 0; u < CO; u++) {                                                     \
        __m512 wv = _mm512_set1_ps(wt[(co + u) * k + t]);                                \
        for (int v = 0; v < 4; v++) acc[u][v] = _mm512_fmadd_ps(wv, cv[v], acc[u][v]);   \
      }                                                                                  \
    }                                                                                    \
    for (int u = 0; u < CO; u++)                                                         \
      for (int v = 0; v < 4; v++) STORE(v, out + (co + u) * hw + j0 + 16 * v, acc[u][v]); \
  } while (0)

#define FULL_LOAD(v, p) _mm512_loadu_ps(p)
#define FULL_STORE(v, p, x) _mm512_storeu_ps(p, x)
#define TAIL_LOAD(v, p) _mm512_maskz_loadu_ps(m[v], p)
#define TAIL_STORE(v, p, x) _mm512_mask_storeu_ps(p, m[v], x)

__attribute__((target("avx512f"))) static void small_k_f32(const float *wt, const float *bias,
                                                          const float *cols, float *out,
                                                          int64_t cout, int64_t k,
                                                          int64_t hw) {
  int64_t j0 = 0;
  for (; j0 + 64 <= hw; j0 += 64) {
    int64_t co = 0;
    for (; co + 4 <= cout; co += 4) SMALL_K_BLOCK(4, FULL_LOAD, FULL_STORE);
    for (; co < cout; co++) SMALL_K_BLOCK(1, FULL_LOAD, FULL_STORE);
  }
  if (j0 < hw) {
    __mmask16 m[4];
    for (int v = 0; v < 4; v++) {
      int64_t r = hw - j0 - 16 * v;
      m[v] = r >= 16 ? (__mmask16)0xffff : r <= 0 ? (__mmask16)0 : (__mmask16)((1u << r) - 1);
    }
    int64_t co = 0;
    for (; co + 4 <= cout; co += 4) SMALL_K_BLOCK(4, TAIL_LOAD, TAIL_STORE);
    for (; co < cout; co++) SMALL_K_BLOCK(1, TAIL_LOAD, TAIL_STORE);
  }
}

/* out = wt @ cols + bias through the kernel above; false when it does not apply. */
static bool small_k_gemm_f32(const float *wt, const float *bias, const float *cols, float *out,
                             int64_t cout, int64_t k, int64_t hw) {
  if (k > SMALL_K || !have_avx512()) return false;
  small_k_f32(wt, bias, cols, out, cout, k, hw);
  return true;
}
#else
static bool small_k_gemm_f32(const float *wt, const float *bias, const float *cols, float *out,
                             int64_t cout, int64_t k, int64_t hw) {
  (void)wt, (void)bias, (void)cols, (void)out, (void)cout, (void)k, (void)hw;
  return false;
}
#endif

static bool small_k_gemm_f64(const double *wt, const double *bias, const double *cols,
                             double *out, int64_t cout, int64_t k, int64_t hw) {
  (void)wt, (void)bias, (void)cols, (void)out, (void)cout, (void)k, (void)hw;
  return false;
}

#define DEFINE_CONV(T, SUF)                                                                \
  /* cols[(c*kh + i)*kw + j][oh*wo + ow] for one image */                                  \
  static void im2col_##SUF(const Conv *cv, const T *x, T *cols) {                          \
    int64_t ho = cv->ho, wo = cv->wo;                                                      \
    for (int64_t c = 0; c < cv->cin; c++)                                                  \
      for (int64_t i = 0; i < cv->kh; i++)                                                 \
        for (int64_t j = 0; j < cv->kw; j++) {                                             \
          T *row = cols + ((c * cv->kh + i) * cv->kw + j) * ho * wo;                       \
          /* output columns whose input column lies inside the image */                    \
          int64_t lo = 0, hi = wo;                                                         \
          while (lo < wo && lo * cv->sw - cv->pw + j < 0) lo++;                            \
          while (hi > lo && (hi - 1) * cv->sw - cv->pw + j >= cv->w) hi--;                 \
          for (int64_t oh = 0; oh < ho; oh++) {                                            \
            T *dst = row + oh * wo;                                                        \
            int64_t ih = oh * cv->sh - cv->ph + i;                                         \
            if (ih < 0 || ih >= cv->h) {                                                   \
              memset(dst, 0, (size_t)wo * sizeof(T));                                      \
              continue;                                                                    \
            }                                                                              \
            const T *src = x + (c * cv->h + ih) * cv->w - cv->pw + j;                      \
            for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;                               \
            if (cv->sw == 1) {                                                             \
              memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(T));                   \
            } else {                                                                       \
              for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[ow * cv->sw];             \
            }                                                                              \
            for (int64_t ow = hi; ow < wo; ow++) dst[ow] = 0;                              \
          }                                                                                \
        }                                                                                  \
  }                                                                                        \
                                                                                           \
  static void add_bias_##SUF(const Conv *cv, T *out) {                                     \
    const T *bias = cv->bias;                                                              \
    if (!bias) return;                                                                     \
    int64_t hw = cv->ho * cv->wo;                                                          \
    for (int64_t co = 0; co < cv->cout; co++) {                                            \
      T b = bias[co];                                                                      \
      T *o = out + co * hw;                                                                \
      for (int64_t t = 0; t < hw; t++) o[t] += b;                                          \
    }                                                                                      \
  }                                                                                        \
                                                                                           \
  /* One image through the direct definition (no scratch memory). */                       \
  static void direct_##SUF(const Conv *cv, const T *x, T *out) {                           \
    const T *wt = cv->wt, *bias = cv->bias;                                                \
    for (int64_t co = 0; co < cv->cout; co++)                                              \
      for (int64_t oh = 0; oh < cv->ho; oh++)                                              \
        for (int64_t ow = 0; ow < cv->wo; ow++) {                                          \
          T s = bias ? bias[co] : 0;                                                       \
          for (int64_t c = 0; c < cv->cin; c++)                                            \
            for (int64_t i = 0; i < cv->kh; i++) {                                         \
              int64_t ih = oh * cv->sh - cv->ph + i;                                       \
              if (ih < 0 || ih >= cv->h) continue;                                         \
              for (int64_t j = 0; j < cv->kw; j++) {                                       \
                int64_t iw = ow * cv->sw - cv->pw + j;                                     \
                if (iw < 0 || iw >= cv->w) continue;                                       \
                s += x[(c * cv->h + ih) * cv->w + iw] *                                    \
                     wt[((co * cv->cin + c) * cv->kh + i) * cv->kw + j];                   \
              }                                                                            \
            }                                                                              \
          out[(co * cv->ho + oh) * cv->wo + ow] = s;                                       \
        }                                                                                  \
  }                                                                                        \
                                                                                           \
  static bool is_pointwise_##SUF(const Conv *cv) {                                         \
    return cv->kh == 1 && cv->kw == 1 && cv->sh == 1 && cv->sw == 1 && cv->ph == 0 &&      \
           cv->pw == 0;                                                                    \
  }                                                                                        \
                                                                                           \
  /* Images [b0, b1), each with its own single-threaded gemm. */                          \
  static void images_##SUF(void *ctx, int64_t b0, int64_t b1) {                            \
    const Conv *cv = ctx;                                                                  \
    int64_t k = cv->cin * cv->kh * cv->kw, hw = cv->ho * cv->wo;                           \
    const T *x = cv->x;                                                                    \
    T *out = cv->out;                                                                      \
    bool pointwise = is_pointwise_##SUF(cv);                                               \
    T *cols = pointwise ? NULL : malloc((size_t)(k * hw) * sizeof(T));                     \
    for (int64_t b = b0; b < b1; b++) {                                                    \
      const T *xb = x + b * cv->cin * cv->h * cv->w;                                       \
      T *ob = out + b * cv->cout * hw;                                                     \
      if (!pointwise && !cols) {                                                           \
        direct_##SUF(cv, xb, ob);                                                          \
        continue;                                                                          \
      }                                                                                    \
      if (!pointwise) im2col_##SUF(cv, xb, cols);                                          \
      if (small_k_gemm_##SUF(cv->wt, cv->bias, pointwise ? xb : cols, ob, cv->cout, k, hw)) \
        continue;                                                                          \
      dev_gemm_##SUF(NULL, false, false, cv->cout, hw, k, 1, cv->wt, k,                    \
                     pointwise ? xb : cols, hw, 0, ob, hw);                                \
      add_bias_##SUF(cv, ob);                                                              \
    }                                                                                      \
    free(cols);                                                                            \
  }                                                                                        \
                                                                                           \
  void dev_conv2d_##SUF(DevPool *p, const T *x, int64_t n, int64_t cin, int64_t h,         \
                        int64_t w, const T *wt, int64_t cout, int64_t kh, int64_t kw,      \
                        const T *bias, int64_t sh, int64_t sw, int64_t ph, int64_t pw,     \
                        T *out) {                                                          \
    int64_t ho = dev_conv_out_size(h, kh, sh, ph), wo = dev_conv_out_size(w, kw, sw, pw);  \
    if (n <= 0 || cout <= 0 || ho <= 0 || wo <= 0) return;                                 \
    Conv cv = {x, wt, bias, out, n, cin, h, w, cout, kh, kw, sh, sw, ph, pw, ho, wo};      \
    int64_t k = cin * kh * kw, hw = ho * wo;                                               \
    if (n >= dev_pool_size(p) && dev_pool_size(p) > 1 && !dev_pool_in_task()) {            \
      dev_blas_single_thread();                                                            \
      /* about 256K multiply-adds per chunk at least */                                    \
      int64_t grain = ((int64_t)1 << 18) / (cout * hw * (k > 0 ? k : 1)) + 1;              \
      dev_parallel_for(p, n, grain, images_##SUF, &cv);                                    \
      return;                                                                              \
    }                                                                                      \
    /* Few images: one at a time, the product split over the pool. */                      \
    bool pointwise = is_pointwise_##SUF(&cv);                                              \
    T *cols = pointwise ? NULL : malloc((size_t)(k * hw) * sizeof(T));                     \
    for (int64_t b = 0; b < n; b++) {                                                      \
      const T *xb = x + b * cin * h * w;                                                   \
      T *ob = out + b * cout * hw;                                                         \
      if (!pointwise && !cols) {                                                           \
        direct_##SUF(&cv, xb, ob);                                                         \
        continue;                                                                          \
      }                                                                                    \
      if (!pointwise) im2col_##SUF(&cv, xb, cols);                                         \
      if (small_k_gemm_##SUF(wt, bias, pointwise ? xb : cols, ob, cout, k, hw)) continue;  \
      dev_gemm_##SUF(p, false, false, cout, hw, k, 1, wt, k, pointwise ? xb : cols, hw, 0, \
                     ob, hw);                                                              \
      add_bias_##SUF(&cv, ob);                                                             \
    }                                                                                      \
    free(cols);                                                                            \
  }

DEFINE_CONV(float, f32)
DEFINE_CONV(double, f64)

typedef struct {
  const void *x;
  void *out;
  int64_t *argmax;
  int64_t h, w, kh, kw, sh, sw, ph, pw, ho, wo;
} Pool2d;

#define DEFINE_MAXPOOL(T, SUF)                                                             \
  /* Without argmax: a row of outputs at a time, each window element a       \
   * pass over the row (strided loads, no branches: the compiler vectorises   \
   * it, where a scan of each window mispredicts every other comparison). */  \
  static void rows_##SUF(const Pool2d *pl, const T *x, T *out) {                           \
    for (int64_t oh = 0; oh < pl->ho; oh++) {                                              \
      T *orow = out + oh * pl->wo;                                                         \
      for (int64_t ow = 0; ow < pl->wo; ow++) orow[ow] = (T)-INFINITY;                     \
      int64_t h0 = oh * pl->sh - pl->ph, h1 = h0 + pl->kh;                                 \
      if (h0 < 0) h0 = 0;                                                                  \
      if (h1 > pl->h) h1 = pl->h;                                                          \
      for (int64_t ih = h0; ih < h1; ih++)                                                 \
        for (int64_t j = 0; j < pl->kw; j++) {                                             \
          int64_t lo = 0, hi = pl->wo, sw = pl->sw;                                        \
          while (lo < hi && lo * sw - pl->pw + j < 0) lo++;                                \
          while (hi > lo && (hi - 1) * sw - pl->pw + j >= pl->w) hi--;                     \
          const T *src = x + ih * pl->w - pl->pw + j;                                      \
          for (int64_t ow = lo; ow < hi; ow++) {                                           \
            T v = src[ow * sw], b = orow[ow];                                              \
            orow[ow] = v > b || v != v ? v : b;                                            \
          }                                                                                \
        }                                                                                  \
    }                                                                                      \
  }                                                                                        \
                                                                                           \
  static void planes_##SUF(void *ctx, int64_t p0, int64_t p1) {                            \
    const Pool2d *pl = ctx;                                                                \
    for (int64_t q = p0; q < p1; q++) {                                                    \
      const T *x = (const T *)pl->x + q * pl->h * pl->w;                                   \
      T *out = (T *)pl->out + q * pl->ho * pl->wo;                                         \
      if (!pl->argmax) {                                                                   \
        rows_##SUF(pl, x, out);                                                            \
        continue;                                                                          \
      }                                                                                    \
      int64_t *am = pl->argmax + q * pl->ho * pl->wo;                                      \
      for (int64_t oh = 0; oh < pl->ho; oh++) {                                            \
        int64_t h0 = oh * pl->sh - pl->ph, h1 = h0 + pl->kh;                               \
        if (h0 < 0) h0 = 0;                                                                \
        if (h1 > pl->h) h1 = pl->h;                                                        \
        for (int64_t ow = 0; ow < pl->wo; ow++) {                                          \
          int64_t w0 = ow * pl->sw - pl->pw, w1 = w0 + pl->kw;                             \
          if (w0 < 0) w0 = 0;                                                              \
          if (w1 > pl->w) w1 = pl->w;                                                      \
          /* PyTorch's rule: start at the window's first element with -inf, take   \
           * every larger value and every NaN. */                                  \
          T best = (T)-INFINITY;                                                           \
          int64_t idx = h0 < h1 && w0 < w1 ? h0 * pl->w + w0 : -1;                         \
          for (int64_t ih = h0; ih < h1; ih++)                                             \
            for (int64_t iw = w0; iw < w1; iw++) {                                         \
              T v = x[ih * pl->w + iw];                                                    \
              bool take = (v > best) | (v != v);                                           \
              best = take ? v : best;                                                      \
              idx = take ? ih * pl->w + iw : idx;                                          \
            }                                                                              \
          out[oh * pl->wo + ow] = best;                                                    \
          am[oh * pl->wo + ow] = idx;                                                      \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
                                                                                           \
  void dev_maxpool2d_##SUF(DevPool *p, const T *x, int64_t n, int64_t c, int64_t h,        \
                           int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,      \
                           int64_t ph, int64_t pw, T *out, int64_t *argmax) {              \
    int64_t ho = dev_conv_out_size(h, kh, sh, ph), wo = dev_conv_out_size(w, kw, sw, pw);  \
    if (n <= 0 || c <= 0 || ho <= 0 || wo <= 0) return;                                   \
    Pool2d pl = {x, out, argmax, h, w, kh, kw, sh, sw, ph, pw, ho, wo};                    \
    int64_t grain = ((int64_t)1 << 15) / (ho * wo * kh * kw) + 1;                          \
    dev_parallel_for(p, n * c, grain, planes_##SUF, &pl);                                  \
  }

DEFINE_MAXPOOL(float, f32)
DEFINE_MAXPOOL(double, f64)
