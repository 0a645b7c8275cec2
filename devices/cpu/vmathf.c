/* devices/cpu/vmathf.c: exp, log, tanh and sigmoid of f32 arrays under
 * AVX-512 (vmathf.h), for vmath.c.
 *
 * Why not libmvec's f32 versions: measured against libm they are off by
 * up to 3 ulp (exp, tanh) and 4 ulp (log), where Mist promises ~2.  So
 * each group of 16 floats is widened to two vectors of 8 doubles and
 * evaluated there, which leaves plenty of precision: the results are
 * the correctly rounded value in nearly every case (at most 1 ulp from
 * libm's), at about the speed of libmvec's f32 code.
 *
 * exp:  x = k ln2 + r, |r| <= ln2/2, exp(r) = 1 + r Q(r) with Q the
 *       Taylor polynomial of degree 8 (relative error < 1e-10), scaled
 *       by 2^k with vscalefpd (which also gives inf and 0 at the ends).
 * tanh: expm1(2|x|) / (expm1(2|x|) + 2) with the sign of x, expm1 from
 *       the same reduction as 2^k r Q(r) + (2^k - 1), exact in its
 *       leading term near 0, so small arguments lose nothing.
 * sigmoid: 1 / (1 + exp(-x)).
 * log:  x = m 2^e, m in [0.75, 1.5), log m = 2 atanh(t), t = (m-1)/(m+1),
 *       an odd series in t to t^13 (|t| < 0.2).  0, negatives, inf and
 *       NaN are patched in afterwards. */
#include "devices/cpu/vmathf.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

#define LN2 0x1.62e42fefa39efp-1
#define INV_LN2 0x1.71547652b82fep0

T512 static inline __m512d widen_lo(__m512 v) {
  return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}
T512 static inline __m512d widen_hi(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
T512 static inline __m512 narrow(__m512d lo, __m512d hi) {
  __m256 a = _mm512_cvtpd_ps(lo), b = _mm512_cvtpd_ps(hi);
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(a)), _mm256_castps_pd(b), 1));
}

/* t = k ln2 + r; returns Q(r) with exp(r) = 1 + r Q(r), and k, r. */
T512 static inline __m512d reduce_q(__m512d t, __m512d *k, __m512d *r) {
  *k = _mm512_roundscale_pd(_mm512_mul_pd(t, _mm512_set1_pd(INV_LN2)),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  *r = _mm512_fnmadd_pd(*k, _mm512_set1_pd(LN2), t);
  __m512d q = _mm512_set1_pd(1.0 / 362880);   /* 1/9! */
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 40320));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 5040));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 720));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 120));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 24));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0 / 6));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(0.5));
  q = _mm512_fmadd_pd(q, *r, _mm512_set1_pd(1.0));
  return q;
}

/* exp(t) for t clamped to [-200, 200] (NaN passes through). */
T512 static inline __m512d exp_pd(__m512d t) {
  t = _mm512_max_pd(_mm512_set1_pd(-200), _mm512_min_pd(_mm512_set1_pd(200), t));
  __m512d k, r;
  __m512d q = reduce_q(t, &k, &r);
  return _mm512_scalef_pd(_mm512_fmadd_pd(r, q, _mm512_set1_pd(1.0)), k);
}

T512 static inline __m512d tanh_pd(__m512d x) {
  __m512i signbit = _mm512_set1_epi64((long long)0x8000000000000000ULL);
  __m512d ax = _mm512_castsi512_pd(_mm512_andnot_si512(signbit, _mm512_castpd_si512(x)));
  __m512d t = _mm512_add_pd(_mm512_min_pd(_mm512_set1_pd(20), ax),
                            _mm512_min_pd(_mm512_set1_pd(20), ax));
  __m512d k, r;
  __m512d q = reduce_q(t, &k, &r);
  __m512d scale = _mm512_scalef_pd(_mm512_set1_pd(1.0), k);
  __m512d em = _mm512_fmadd_pd(scale, _mm512_mul_pd(r, q),
                               _mm512_sub_pd(scale, _mm512_set1_pd(1.0)));
  __m512d y = _mm512_div_pd(em, _mm512_add_pd(em, _mm512_set1_pd(2.0)));
  return _mm512_castsi512_pd(_mm512_or_si512(
      _mm512_castpd_si512(y), _mm512_and_si512(signbit, _mm512_castpd_si512(x))));
}

T512 static inline __m512d sigmoid_pd(__m512d x) {
  __m512d one = _mm512_set1_pd(1.0);
  return _mm512_div_pd(one, _mm512_add_pd(one, exp_pd(_mm512_sub_pd(_mm512_setzero_pd(), x))));
}

T512 static inline __m512d log_pd(__m512d x) {
  __m512d e = _mm512_getexp_pd(_mm512_mul_pd(x, _mm512_set1_pd(4.0 / 3.0)));
  __m512d m = _mm512_scalef_pd(x, _mm512_sub_pd(_mm512_setzero_pd(), e));
  __m512d one = _mm512_set1_pd(1.0);
  __m512d t = _mm512_div_pd(_mm512_sub_pd(m, one), _mm512_add_pd(m, one));
  __m512d s = _mm512_mul_pd(t, t);
  __m512d p = _mm512_set1_pd(1.0 / 13);
  p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(1.0 / 11));
  p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(1.0 / 9));
  p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(1.0 / 7));
  p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(1.0 / 5));
  p = _mm512_fmadd_pd(p, s, _mm512_set1_pd(1.0 / 3));
  p = _mm512_fmadd_pd(p, s, one);
  __m512d y = _mm512_fmadd_pd(e, _mm512_set1_pd(LN2), _mm512_mul_pd(_mm512_add_pd(t, t), p));
  /* log 0 = -inf, log of a negative = NaN, log inf = inf, NaN stays. */
  __mmask8 zero = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_EQ_OQ);
  __mmask8 neg = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
  __mmask8 inf = _mm512_cmp_pd_mask(x, _mm512_set1_pd(__builtin_inf()), _CMP_EQ_OQ);
  __mmask8 nan = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
  y = _mm512_mask_blend_pd(zero, y, _mm512_set1_pd(-__builtin_inf()));
  y = _mm512_mask_blend_pd(neg, y, _mm512_set1_pd(__builtin_nan("")));
  y = _mm512_mask_blend_pd(inf, y, x);
  y = _mm512_mask_blend_pd(nan, y, x);
  return y;
}

/* Whole groups of 16, then the tail masked (masked-off lanes read 1.0,
 * harmless to every function here). */
#define DEFINE_ARRAY(NAME, F)                                                          \
  T512 void NAME(float *out, const float *x, int64_t n) {                                   \
    int64_t i = 0;                                                                     \
    for (; i + 16 <= n; i += 16) {                                                     \
      __m512 v = _mm512_loadu_ps(x + i);                                               \
      _mm512_storeu_ps(out + i, narrow(F(widen_lo(v)), F(widen_hi(v))));               \
    }                                                                                  \
    if (i < n) {                                                                       \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                                  \
      __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, x + i);                 \
      _mm512_mask_storeu_ps(out + i, m, narrow(F(widen_lo(v)), F(widen_hi(v))));       \
    }                                                                                  \
  }

/* One vector of 16 floats, for compiled code's fused loops
 * (dev_vec_unary): the same lanes the arrays above compute. */
#define DEFINE_VECTOR(NAME, F) \
  T512 __m512 NAME(__m512 v) { return narrow(F(widen_lo(v)), F(widen_hi(v))); }

DEFINE_VECTOR(dev_vec_expf16, exp_pd)
DEFINE_VECTOR(dev_vec_logf16, log_pd)
DEFINE_VECTOR(dev_vec_tanhf16, tanh_pd)
DEFINE_VECTOR(dev_vec_sigmoidf16, sigmoid_pd)

DEFINE_ARRAY(dev_vexpf_avx512, exp_pd)
DEFINE_ARRAY(dev_vlogf_avx512, log_pd)
DEFINE_ARRAY(dev_vtanhf_avx512, tanh_pd)
DEFINE_ARRAY(dev_vsigmoidf_avx512, sigmoid_pd)

#endif
