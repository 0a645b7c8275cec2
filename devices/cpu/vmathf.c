/* devices/cpu/vmathf.c: exp, log, tanh and sigmoid of f32 arrays under
 * AVX-512 (vmathf.h), for vmath.c; the algorithms are written once in
 * vmathf_algo.h, over the AVX-512 operations defined here (vmathf256.c
 * defines AVX2's, for 8 lanes with the same bits).
 *
 * Why Mist's own: measured over the f32 arguments against the exact
 * value (bench/vmath_accuracy.c), libmvec's f32 functions are off by up
 * to 2.6 ulp (exp), 3.9 (log) and 1.4 (tanh), where Mist promises under
 * 1; SLEEF's 1-ulp functions keep that promise but are slower
 * (bench/jit/vecmath.c).  So the four are computed here in f32 with
 * FMA, within 0.8 ulp of the exact value for every argument, at about
 * libmvec's speed (sigmoid at twice its exp's cost).
 *
 * exp:  x = k ln2 + r, |r| <= ln2/2 (ln2 in two parts, the rounding of r
 *       kept), e^r = 1 + r + r^2 P(r) with P a degree-5 minimax
 *       polynomial (devices/cpu/vmathf_remez.py computes every
 *       coefficient here), summed as h + l with l what the rounding of
 *       h = 1 + r loses; scaled by 2^k with vscalefps (which also gives
 *       inf and 0 at the ends).
 * tanh: a degree-5 polynomial in |x| - c on each quarter binade of
 *       [2^-4, 16) (c its middle; 32 intervals, their coefficients
 *       picked by vpermt2ps), the constant term in two floats so that
 *       the last addition is the only rounding that counts; below 2^-4
 *       an odd polynomial; the sign of x copied.
 * sigmoid: 1 / (1 + E) for x >= 0, E / (1 + E) below, E = e^(-|x|) as
 *       the pair 2^k (h + l), the denominator as an exact sum of two
 *       floats, the quotient corrected by its residual (divided by the
 *       quotient itself or 1 minus it, each within 2^-23 of the
 *       denominator's reciprocal: vrcp14ps was used before, but AVX2's
 *       vrcpps gives other bits).
 * log:  x = 2^e m, m in [0.75, 1.5) (vgetmantps, vgetexpps), m in one of
 *       32 intervals, c its middle: log x = e ln2 - log(1/c) + log1p(r),
 *       r = m (1/c) - 1, with 1/c and -log(1/c) (in two floats) from a
 *       table and log1p a polynomial; e ln2 + log(c) is summed exactly
 *       and r added with its rounding error kept.  0 and inf are
 *       patched in afterwards. */
#include "devices/cpu/vmathf.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "devices/cpu/vmathf_coefs.h"

#define TGT __attribute__((target("avx512f")))
typedef __m512 V;
typedef __m512i VI;
typedef __mmask16 M;
enum { LANES = 16 };

TGT static inline V F(float c) { return _mm512_set1_ps(c); }
TGT static inline VI I(int c) { return _mm512_set1_epi32(c); }
TGT static inline V vadd(V a, V b) { return _mm512_add_ps(a, b); }
TGT static inline V vsub(V a, V b) { return _mm512_sub_ps(a, b); }
TGT static inline V vmul(V a, V b) { return _mm512_mul_ps(a, b); }
TGT static inline V vdiv(V a, V b) { return _mm512_div_ps(a, b); }
TGT static inline V vmin(V a, V b) { return _mm512_min_ps(a, b); }
TGT static inline V vmax(V a, V b) { return _mm512_max_ps(a, b); }
TGT static inline V vfmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
TGT static inline V vfnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
TGT static inline V vfmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
TGT static inline V round_even(V v) {
  return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
TGT static inline V scale(V h, V k) { return _mm512_scalef_ps(h, k); }
TGT static inline M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
TGT static inline M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
TGT static inline V blend(M m, V a, V b) { return _mm512_mask_blend_ps(m, a, b); }
TGT static inline VI bits(V v) { return _mm512_castps_si512(v); }
TGT static inline V flt(VI i) { return _mm512_castsi512_ps(i); }
TGT static inline VI isub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
TGT static inline VI iand(VI a, VI b) { return _mm512_and_si512(a, b); }
TGT static inline VI ior(VI a, VI b) { return _mm512_or_si512(a, b); }
TGT static inline VI iandnot(VI a, VI b) { return _mm512_andnot_si512(a, b); }
TGT static inline VI isrl(VI a, unsigned n) { return _mm512_srli_epi32(a, n); }
/* vpermt2ps: the index's low 5 bits pick from the table's two halves */
TGT static inline V lookup32(const float *t, VI idx) {
  return _mm512_permutex2var_ps(_mm512_load_ps(t), idx, _mm512_load_ps(t + 16));
}
TGT static inline void tanh_coefs(VI idx, V k[7]) {
  for (int j = 0; j < 7; j++) k[j] = lookup32(tanh_tab[j], idx);
}
TGT static inline V mant_exp(V x, V *e) {
  V m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_nan);
  V ex = _mm512_getexp_ps(x);
  *e = _mm512_mask_add_ps(ex, lt(m, F(1.0f)), ex, F(1.0f));
  return m;
}
TGT static inline V load(const float *x) { return _mm512_loadu_ps(x); }
TGT static inline void store(float *out, V v) { _mm512_storeu_ps(out, v); }
TGT static inline V load_tail(const float *x, int64_t n) {
  return _mm512_mask_loadu_ps(F(1.0f), (__mmask16)((1u << n) - 1), x);
}
TGT static inline void store_tail(float *out, V v, int64_t n) {
  _mm512_mask_storeu_ps(out, (__mmask16)((1u << n) - 1), v);
}
#define ARRAY(f) dev_v##f##f_avx512
#define VEC(f) dev_vec_##f##f16

#include "devices/cpu/vmathf_algo.h"

#endif
