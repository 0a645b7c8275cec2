/* devices/cpu/vmathf.c: exp, log, tanh and sigmoid of f32 arrays under
 * AVX-512 (vmathf.h), for vmath.c.
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
 *       floats, the quotient corrected by its residual.
 * log:  x = 2^e m, m in [0.75, 1.5) (vgetmantps, vgetexpps), m in one of
 *       32 intervals, c its middle: log x = e ln2 - log(1/c) + log1p(r),
 *       r = m (1/c) - 1, with 1/c and -log(1/c) (in two floats) from a
 *       table and log1p a polynomial; e ln2 + log(c) is summed exactly
 *       and r added with its rounding error kept.  0 and inf are
 *       patched in afterwards. */
#include "devices/cpu/vmathf.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

#define F(v) _mm512_set1_ps(v)
#define SIGN _mm512_set1_epi32((int)0x80000000)

/* The polynomials' coefficients, computed by devices/cpu/vmathf_remez.py
 * (which prints this block). */
/* exp: P0..P5; relative error of e^r with these floats: 2^-29.7 */
static const float exp_p[6] = {0x1p-1f, 0x1.555556p-3f, 0x1.5554acp-5f, 0x1.11108ep-7f, 0x1.6d75dap-10f, 0x1.a1a2ep-13f};
/* log: ln2 as a multiple of 2^-16 and the rest; Q0..Q3 (r in [-0.01562, 0.03125], relative error 2^-30.5); per interval 1/c, H, L */
static const float log_ln2[2] = {0x1.62e4p-1f, 0x1.7f7d1cp-20f};
static const float log_q[4] = {-0x1.fffff8p-2f, 0x1.55553p-2f, -0x1.008e68p-2f, 0x1.ad5676p-3f};
static const float log_tab[3][32] __attribute__((aligned(64))) = {
    {0x1.51d07ep+0f, 0x1.4afd6ap+0f, 0x1.446f86p+0f, 0x1.3e22ccp+0f, 0x1.381382p+0f, 0x1.323e34p+0f, 0x1.2c9fb4p+0f, 0x1.27350cp+0f, 0x1.21fb78p+0f, 0x1.1cf06ap+0f, 0x1.181182p+0f, 0x1.135c82p+0f, 0x1.0ecf56p+0f, 0x1.0a681p+0f, 0x1.0624dep+0f, 0x1p+0f, 0x1p+0f, 0x1.e9131ap-1f, 0x1.dae608p-1f, 0x1.cd8568p-1f, 0x1.c0e07p-1f, 0x1.b4e81cp-1f, 0x1.a98ef6p-1f, 0x1.9ec8eap-1f, 0x1.948b1p-1f, 0x1.8acb9p-1f, 0x1.818182p-1f, 0x1.78a4c8p-1f, 0x1.702e06p-1f, 0x1.681682p-1f, 0x1.605816p-1f, 0x1.58ed24p-1f},
    {-0x1.1bf8p-2f, -0x1.0714p-2f, -0x1.e53p-3f, -0x1.bd08p-3f, -0x1.95a8p-3f, -0x1.6fp-3f, -0x1.491p-3f, -0x1.23d8p-3f, -0x1.fe9p-4f, -0x1.b6bp-4f, -0x1.701p-4f, -0x1.2aap-4f, -0x1.cccp-5f, -0x1.466p-5f, -0x1.848p-6f, 0.0f, 0.0f, 0x1.774p-5f, 0x1.342p-4f, 0x1.a92p-4f, 0x1.0d78p-3f, 0x1.44dp-3f, 0x1.7ab8p-3f, 0x1.af4p-3f, 0x1.e27p-3f, 0x1.0a34p-2f, 0x1.2294p-2f, 0x1.3a64p-2f, 0x1.51acp-2f, 0x1.686cp-2f, 0x1.7ebp-2f, 0x1.9478p-2f},
    {-0x1.9425a6p-18f, 0x1.e82caap-20f, -0x1.dbbce2p-20f, -0x1.d30ef6p-21f, 0x1.268848p-18f, -0x1.247756p-19f, -0x1.e9399ep-18f, 0x1.d436c8p-20f, 0x1.bb589p-18f, 0x1.c1b296p-19f, 0x1.6108aap-19f, -0x1.6011c6p-22f, 0x1.1b3444p-18f, -0x1.5b285cp-18f, -0x1.2858c8p-18f, 0.0f, 0.0f, 0x1.66f8ccp-19f, -0x1.45cf22p-19f, 0x1.b6292cp-18f, -0x1.732f72p-23f, 0x1.59c65cp-18f, 0x1.20821cp-20f, -0x1.b73bfap-18f, 0x1.d78abcp-21f, -0x1.af58c6p-18f, 0x1.e6cf7ap-22f, 0x1.8b2d28p-19f, -0x1.283d2p-18f, 0x1.007362p-19f, -0x1.f0df54p-20f, 0x1.3ee212p-18f},
};
/* tanh below 2^-4: S0, S1; relative error 2^-32.9 */
static const float tanh_s[2] = {-0x1.55553ep-2f, 0x1.107772p-3f};
/* tanh on the quarter binades of [2^-4, 16): H, L, P1..P5, each for the 32 intervals; relative error at most 2^-26.4 */
static const float tanh_tab[7][32] __attribute__((aligned(64))) = {
    {0x1.1f86bep-4f, 0x1.5f22d2p-4f, 0x1.9e9356p-4f, 0x1.ddd092p-4f, 0x1.1e1ddp-3f, 0x1.5c9308p-3f, 0x1.9a5f1cp-3f, 0x1.d7665cp-3f, 0x1.18a39ap-2f, 0x1.52c2c6p-2f, 0x1.8a87e2p-2f, 0x1.bfae6ap-2f, 0x1.05087p-1f, 0x1.3157ep-1f, 0x1.5789p-1f, 0x1.77d838p-1f, 0x1.9e5cb6p-1f, 0x1.c278a6p-1f, 0x1.d9c6fcp-1f, 0x1.e8789ep-1f, 0x1.f4bfd6p-1f, 0x1.fbd50ap-1f, 0x1.fe767ap-1f, 0x1.ff6f18p-1f, 0x1.ffdfa6p-1f, 0x1.fffbap-1f, 0x1.ffff68p-1f, 0x1.ffffecp-1f, 0x1.fffffep-1f, 0x1p+0f, 0x1p+0f, 0x1p+0f},
    {-0x1.3a17fcp-29f, -0x1.2659cp-32f, 0x1.f48db2p-30f, 0x1.493e02p-29f, 0x1.573598p-29f, -0x1.bb0ce4p-28f, -0x1.899efap-31f, 0x1.f3767ap-28f, -0x1.954a58p-30f, -0x1.3c6198p-27f, -0x1.69a966p-27f, 0x1.72d632p-27f, -0x1.a2558ep-26f, -0x1.63807cp-29f, -0x1.de1fbp-26f, 0x1.c70bdp-26f, -0x1.965538p-28f, -0x1.94eb98p-26f, -0x1.fad12p-26f, 0x1.9ed20ap-26f, 0x1.278fb4p-26f, -0x1.d50e3ap-27f, -0x1.6577e8p-26f, -0x1.7bb764p-27f, 0x1.8684a4p-26f, -0x1.ba2342p-26f, 0x1.38bf1ep-27f, -0x1.0f30dcp-26f, 0x1.f30f4cp-26f, 0.0f, 0.0f, 0.0f},
    {0x1.fd7a22p-1f, 0x1.fc3cbep-1f, 0x1.fac13ep-1f, 0x1.f9085ap-1f, 0x1.f601cap-1f, 0x1.f12bp-1f, 0x1.eb715ap-1f, 0x1.e4dfb2p-1f, 0x1.d98b36p-1f, 0x1.c7f724p-1f, 0x1.b3ff2ep-1f, 0x1.9e23aep-1f, 0x1.7aeae6p-1f, 0x1.49e6cp-1f, 0x1.197fcep-1f, 0x1.d834d2p-2f, 0x1.615002p-2f, 0x1.cea744p-3f, 0x1.265e34p-3f, 0x1.6fcfa6p-4f, 0x1.641088p-5f, 0x1.09a7acp-6f, 0x1.88ef74p-8f, 0x1.21a7b8p-9f, 0x1.02c14ap-11f, 0x1.18359cp-14f, 0x1.2f62f4p-17f, 0x1.4878f6p-20f, 0x1.065a0ep-24f, 0.0f, 0.0f, 0.0f},
    {-0x1.1e1c0ap-4f, -0x1.5c8e36p-4f, -0x1.9a5416p-4f, -0x1.d75004p-4f, -0x1.18883cp-3f, -0x1.5279fep-3f, -0x1.89e50ep-3f, -0x1.be6cb8p-3f, -0x1.038f7p-2f, -0x1.2daf98p-2f, -0x1.4ff712p-2f, -0x1.6a1d38p-2f, -0x1.825de4p-2f, -0x1.897d22p-2f, -0x1.79c0e4p-2f, -0x1.5aa224p-2f, -0x1.1df056p-2f, -0x1.970ed2p-3f, -0x1.1064bap-3f, -0x1.5ee8aap-4f, -0x1.5c3a3ep-5f, -0x1.077906p-6f, -0x1.87b86ep-8f, -0x1.214eaap-9f, -0x1.0244fp-11f, -0x1.17bd64p-14f, -0x1.2ee2eap-17f, -0x1.47eea6p-20f, -0x1.fcb28cp-25f, 0.0f, 0.0f, 0.0f},
    {-0x1.4ea16p-2f, -0x1.4b5adp-2f, -0x1.477428p-2f, -0x1.42f17cp-2f, -0x1.3b135p-2f, -0x1.2ea3fcp-2f, -0x1.202a34p-2f, -0x1.0fdf04p-2f, -0x1.e91ef8p-3f, -0x1.98588ep-3f, -0x1.4272p-3f, -0x1.d71f7ep-4f, -0x1.bd0ce8p-5f, 0x1.d76898p-7f, 0x1.072cc4p-4f, 0x1.8434bp-4f, 0x1.c68efep-4f, 0x1.97d8e2p-4f, 0x1.33df76p-4f, 0x1.a85c5p-5f, 0x1.bbce98p-6f, 0x1.59933p-7f, 0x1.0394ecp-8f, 0x1.80e4f8p-10f, 0x1.583ec4p-12f, 0x1.7504fap-15f, 0x1.93e83cp-18f, 0x1.b54f4ep-21f, 0x1.541594p-25f, 0.0f, 0.0f, 0.0f},
    {0x1.7aa3e8p-5f, 0x1.cb9816p-5f, 0x1.0d55c6p-4f, 0x1.33c776p-4f, 0x1.6b051cp-4f, 0x1.af9b76p-4f, 0x1.ed77f8p-4f, 0x1.11e9f2p-3f, 0x1.32dfccp-3f, 0x1.4fff7cp-3f, 0x1.5c02d8p-3f, 0x1.5839a2p-3f, 0x1.39dae6p-3f, 0x1.e93b12p-4f, 0x1.474356p-4f, 0x1.633acp-5f, 0x1.e50bf2p-9f, -0x1.599f7ep-6f, -0x1.9b961cp-6f, -0x1.5596cp-6f, -0x1.960176p-7f, -0x1.519598p-8f, -0x1.0374f6p-9f, -0x1.83e814p-11f, -0x1.69dda2p-13f, -0x1.888fbcp-16f, -0x1.a92212p-19f, -0x1.cc4cfep-22f, -0x1.a8b4c6p-26f, 0.0f, 0.0f, 0.0f},
    {0x1.05bd36p-3f, 0x1.003d74p-3f, 0x1.f37448p-4f, 0x1.e47db6p-4f, 0x1.cab608p-4f, 0x1.a2868ap-4f, 0x1.74c974p-4f, 0x1.42ad2ap-4f, 0x1.e4bddcp-5f, 0x1.068f38p-5f, 0x1.897f2ap-8f, -0x1.1830acp-6f, -0x1.630d34p-5f, -0x1.f7f4a4p-5f, -0x1.00ac5ep-4f, -0x1.b2c93ap-5f, -0x1.070c4cp-5f, -0x1.391722p-7f, 0x1.696166p-10f, 0x1.2d31f6p-8f, 0x1.04949ap-8f, 0x1.f6767ep-10f, 0x1.947e1ep-11f, 0x1.334c94p-12f, 0x1.202b1cp-14f, 0x1.3937d2p-17f, 0x1.534b8ap-20f, 0x1.6f6004p-23f, 0x1.50b4e6p-27f, 0.0f, 0.0f, 0.0f},
};

/* P(r) with e^r ~ 1 + r + r^2 P(r) for |r| <= 1.002 ln2/2. */
T512 static inline __m512 exp_poly(__m512 r) {
  __m512 p = _mm512_fmadd_ps(F(exp_p[5]), r, F(exp_p[4]));
  p = _mm512_fmadd_ps(p, r, F(exp_p[3]));
  p = _mm512_fmadd_ps(p, r, F(exp_p[2]));
  p = _mm512_fmadd_ps(p, r, F(exp_p[1]));
  return _mm512_fmadd_ps(p, r, F(exp_p[0]));
}

/* e^x = 2^k (h + l), h the float nearest h + l, for x clamped to
 * [-104, 89] (NaN passes through). */
T512 static inline __m512 exp_pair(__m512 x, __m512 *k, __m512 *l) {
  x = _mm512_max_ps(F(-104.0f), _mm512_min_ps(F(89.0f), x));
  *k = _mm512_roundscale_ps(_mm512_mul_ps(x, F(0x1.715476p0f)),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  /* r1 = x - k ln2hi is exact; r = r1 - k ln2lo is rounded, and rerr
   * is what that rounding lost */
  __m512 r1 = _mm512_fnmadd_ps(*k, F(0x1.62e43p-1f), x);
  __m512 r = _mm512_fnmadd_ps(*k, F(-0x1.05c61p-29f), r1);
  __m512 rerr = _mm512_fnmadd_ps(*k, F(-0x1.05c61p-29f), _mm512_sub_ps(r1, r));
  __m512 t = _mm512_fmadd_ps(exp_poly(r), _mm512_mul_ps(r, r), rerr);
  __m512 one = F(1.0f);
  __m512 h = _mm512_add_ps(one, r);
  __m512 lo = _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(one, h), r), t);
  __m512 s = _mm512_add_ps(h, lo);
  *l = _mm512_add_ps(_mm512_sub_ps(h, s), lo);
  return s;
}

T512 static inline __m512 exp_ps(__m512 x) {
  __m512 k, l, h = exp_pair(x, &k, &l);
  (void)l;
  return _mm512_scalef_ps(h, k);
}

/* (nh + nl) / (dh + dl) for dh in [1, 2], |nl|, |dl| under an ulp of
 * nh, dh: the quotient plus its residual over dh. */
T512 static inline __m512 div_pair(__m512 nh, __m512 nl, __m512 dh, __m512 dl) {
  __m512 q = _mm512_div_ps(nh, dh);
  __m512 res = _mm512_fnmadd_ps(q, dh, nh);
  res = _mm512_fnmadd_ps(q, dl, _mm512_add_ps(res, nl));
  return _mm512_fmadd_ps(res, _mm512_rcp14_ps(dh), q);
}

/* e^(-|x|) as eh + el, and 1 + e^(-|x|) as dh + dl. */
T512 static inline void exp_neg_abs(__m512 ax, __m512 *eh, __m512 *el, __m512 *dh, __m512 *dl) {
  __m512 k, l, h = exp_pair(_mm512_sub_ps(_mm512_setzero_ps(), ax), &k, &l);
  *eh = _mm512_scalef_ps(h, k);
  *el = _mm512_scalef_ps(l, k);
  __m512 one = F(1.0f);
  *dh = _mm512_add_ps(one, *eh);
  *dl = _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(one, *dh), *eh), *el);
}

T512 static inline __m512 abs_ps(__m512 x) {
  return _mm512_castsi512_ps(_mm512_andnot_si512(SIGN, _mm512_castps_si512(x)));
}

/* Column j of tanh_tab for each lane's interval (the low 5 bits of idx). */
T512 static inline __m512 tanh_coef(int j, __m512i idx) {
  return _mm512_permutex2var_ps(_mm512_load_ps(tanh_tab[j]), idx, _mm512_load_ps(tanh_tab[j] + 16));
}

T512 static inline __m512 tanh_ps(__m512 x) {
  __m512 ax = abs_ps(x);
  /* the quarter binade of |x| (clamped below 16, where tanh is 1; NaN
   * stays NaN): its index from 2^-4 on, and its middle c, exact in
   * float, so that y = |x| - c is exact */
  __m512 cx = _mm512_min_ps(F(0x1.fffffep3f), ax);
  __m512i b = _mm512_castps_si512(cx);
  __m512i idx = _mm512_srli_epi32(_mm512_sub_epi32(b, _mm512_set1_epi32(0x3d800000)), 21);
  __m512 c = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      b, _mm512_set1_epi32((int)0xffe00000), _mm512_set1_epi32(0x00100000), 0xEA)); /* b & A | B */
  __m512 y = _mm512_sub_ps(cx, c);
  __m512 p = _mm512_fmadd_ps(tanh_coef(6, idx), y, tanh_coef(5, idx));
  p = _mm512_fmadd_ps(p, y, tanh_coef(4, idx));
  p = _mm512_fmadd_ps(p, y, tanh_coef(3, idx));
  p = _mm512_fmadd_ps(p, y, tanh_coef(2, idx));
  p = _mm512_fmadd_ps(p, y, tanh_coef(1, idx)); /* L + P1 y + ... */
  __m512 t = _mm512_add_ps(tanh_coef(0, idx), p);
  /* below 2^-4: x + x^3 (S0 + S1 x^2) */
  __m512 s = _mm512_mul_ps(ax, ax);
  __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(s, ax), _mm512_fmadd_ps(F(tanh_s[1]), s, F(tanh_s[0])), ax);
  t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, F(0x1p-4f), _CMP_LT_OQ), t, small);
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(t), SIGN,
                                                       _mm512_castps_si512(x), 0xF8)); /* t | SIGN & x */
}

T512 static inline __m512 sigmoid_ps(__m512 x) {
  __m512 eh, el, dh, dl;
  exp_neg_abs(abs_ps(x), &eh, &el, &dh, &dl);
  __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  return div_pair(_mm512_mask_blend_ps(neg, F(1.0f), eh), _mm512_maskz_mov_ps(neg, el), dh, dl);
}

/* Column j of log_tab for each lane's interval. */
T512 static inline __m512 log_coef(int j, __m512i idx) {
  return _mm512_permutex2var_ps(_mm512_load_ps(log_tab[j]), idx, _mm512_load_ps(log_tab[j] + 16));
}

T512 static inline __m512 log_ps(__m512 x) {
  /* x = 2^e m, m in [0.75, 1.5) (NaN for a negative x) */
  __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_nan);
  __m512 e = _mm512_getexp_ps(x);
  e = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask(m, F(1.0f), _CMP_LT_OQ), e, F(1.0f));
  /* m's interval (32 from 0.75 on), r = m (1/c) - 1 rounded once */
  __m512i idx = _mm512_srli_epi32(_mm512_sub_epi32(_mm512_castps_si512(m), _mm512_set1_epi32(0x3f400000)), 18);
  __m512 r = _mm512_fmsub_ps(m, log_coef(0, idx), F(1.0f));
  __m512 q = _mm512_fmadd_ps(F(log_q[3]), r, F(log_q[2]));
  q = _mm512_fmadd_ps(q, r, F(log_q[1]));
  q = _mm512_fmadd_ps(q, r, F(log_q[0]));
  /* log x = (e ln2hi + H) + r + (r^2 Q + e ln2lo + L), the first sum
   * exact, the second with its rounding error kept */
  __m512 a = _mm512_fmadd_ps(e, F(log_ln2[0]), log_coef(1, idx));
  __m512 b = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, _mm512_fmadd_ps(e, F(log_ln2[1]), log_coef(2, idx)));
  __m512 s = _mm512_add_ps(a, r);
  __m512 y = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(a, s), r), b));
  /* log 0 = -inf, log inf = inf; negatives and NaN are NaN already */
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), y, F(-__builtin_inff()));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, F(__builtin_inff()), _CMP_EQ_OQ), y, x);
}

/* Whole groups of 16, then the tail masked (masked-off lanes read 1.0,
 * harmless to every function here). */
#define DEFINE_ARRAY(NAME, FN)                                                          \
  T512 void NAME(float *out, const float *x, int64_t n) {                               \
    int64_t i = 0;                                                                      \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, FN(_mm512_loadu_ps(x + i))); \
    if (i < n) {                                                                        \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                                   \
      __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, x + i);                  \
      _mm512_mask_storeu_ps(out + i, m, FN(v));                                         \
    }                                                                                   \
  }

/* One vector of 16 floats, for compiled code's fused loops
 * (dev_vec_unary): the same lanes the arrays above compute. */
T512 __m512 dev_vec_expf16(__m512 v) { return exp_ps(v); }
T512 __m512 dev_vec_logf16(__m512 v) { return log_ps(v); }
T512 __m512 dev_vec_tanhf16(__m512 v) { return tanh_ps(v); }
T512 __m512 dev_vec_sigmoidf16(__m512 v) { return sigmoid_ps(v); }

DEFINE_ARRAY(dev_vexpf_avx512, exp_ps)
DEFINE_ARRAY(dev_vlogf_avx512, log_ps)
DEFINE_ARRAY(dev_vtanhf_avx512, tanh_ps)
DEFINE_ARRAY(dev_vsigmoidf_avx512, sigmoid_ps)

#endif
