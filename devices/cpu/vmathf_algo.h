/* devices/cpu/vmathf_algo.h: the algorithms of Mist's f32 exp, log,
 * tanh and sigmoid (vmathf.c says how each works and why), written once
 * over a vector of floats and a few operations on it, which the
 * includer defines for its width: vmathf.c for AVX-512 (16 lanes),
 * vmathf256.c for AVX2 and FMA (8 lanes).  Every step is an IEEE
 * operation rounded the same way at either width (the few that AVX2
 * lacks, such as vscalefps, vgetmantps and vpermt2ps, are built from
 * exact steps there), so the two give the same bits lane for lane
 * (bench/vmath_accuracy.c checks all 2^32 arguments).
 *
 * The includer defines, before including this once:
 *   TGT                  the target attribute of every function here
 *   V, VI, M             the vector of floats, of int32s, a lane mask
 *   LANES                the lanes of V
 *   F(c), I(c)           a vector of c (float, int32)
 *   vadd vsub vmul vdiv vmin vmax   as the instructions (vmin, vmax:
 *                        the second operand where either is NaN)
 *   vfmadd(a, b, c)      a b + c; vfnmadd -(a b) + c; vfmsub a b - c
 *   round_even(v)        to the nearest integer, ties to even
 *   scale(h, k)          h 2^k rounded once, k integral in [-150, 128]
 *   lt(a, b), eq(a, b)   ordered comparisons; blend(m, a, b): b where m
 *   bits(v), flt(i)      reinterpretations; isub iand ior iandnot
 *                        (iandnot(a, b) = ~a & b), isrl(i, n) logical
 *   lookup32(t, idx)     t[idx & 31] for a 32-float table aligned to 64
 *   mant_exp(x, &e)      m in [0.75, 1.5) and e with x = 2^e m for a
 *                        positive x; for a negative x the default NaN
 *                        (0xffc00000), for NaN x x made quiet; e as a
 *                        float
 *   load(x), store(out, v)   a whole vector, unaligned
 *   load_tail(x, n), store_tail(out, v, n)   the first n < LANES lanes
 *                        (the others read 1.0)
 *   ARRAY(f), VEC(f)     the names of f's array and vector functions
 * and gets the static inline functions exp_ps, log_ps, tanh_ps and
 * sigmoid_ps, and the external ARRAY(f) (out[i] = f(x[i]) over n floats)
 * and VEC(f) (one vector) for f = exp, log, tanh, sigmoid. */

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
TGT static inline V exp_poly(V r) {
  V p = vfmadd(F(exp_p[5]), r, F(exp_p[4]));
  p = vfmadd(p, r, F(exp_p[3]));
  p = vfmadd(p, r, F(exp_p[2]));
  p = vfmadd(p, r, F(exp_p[1]));
  return vfmadd(p, r, F(exp_p[0]));
}

/* e^x = 2^k (h + l), h the float nearest h + l, for x clamped to
 * [-104, 89] (NaN passes through). */
TGT static inline V exp_pair(V x, V *k, V *l) {
  x = vmax(F(-104.0f), vmin(F(89.0f), x));
  *k = round_even(vmul(x, F(0x1.715476p0f)));
  /* r1 = x - k ln2hi is exact; r = r1 - k ln2lo is rounded, and rerr
   * is what that rounding lost */
  V r1 = vfnmadd(*k, F(0x1.62e43p-1f), x);
  V r = vfnmadd(*k, F(-0x1.05c61p-29f), r1);
  V rerr = vfnmadd(*k, F(-0x1.05c61p-29f), vsub(r1, r));
  V t = vfmadd(exp_poly(r), vmul(r, r), rerr);
  V one = F(1.0f);
  V h = vadd(one, r);
  V lo = vadd(vadd(vsub(one, h), r), t);
  V s = vadd(h, lo);
  *l = vadd(vsub(h, s), lo);
  return s;
}

TGT static inline V exp_ps(V x) {
  V k, l, h = exp_pair(x, &k, &l);
  (void)l;
  return scale(h, k);
}

/* e^(-|x|) as eh + el, and 1 + e^(-|x|) as dh + dl. */
TGT static inline void exp_neg_abs(V ax, V *eh, V *el, V *dh, V *dl) {
  V k, l, h = exp_pair(vsub(F(0.0f), ax), &k, &l);
  *eh = scale(h, k);
  *el = scale(l, k);
  V one = F(1.0f);
  *dh = vadd(one, *eh);
  *dl = vadd(vadd(vsub(one, *dh), *eh), *el);
}

TGT static inline V abs_ps(V x) { return flt(iandnot(I((int)0x80000000), bits(x))); }

TGT static inline V tanh_ps(V x) {
  V ax = abs_ps(x);
  /* the quarter binade of |x| (clamped below 16, where tanh is 1; NaN
   * stays NaN): its index from 2^-4 on, and its middle c, exact in
   * float, so that y = |x| - c is exact */
  V cx = vmin(F(0x1.fffffep3f), ax);
  VI b = bits(cx);
  VI idx = isrl(isub(b, I(0x3d800000)), 21);
  V c = flt(ior(iand(b, I((int)0xffe00000)), I(0x00100000)));
  V y = vsub(cx, c);
  V p = vfmadd(lookup32(tanh_tab[6], idx), y, lookup32(tanh_tab[5], idx));
  p = vfmadd(p, y, lookup32(tanh_tab[4], idx));
  p = vfmadd(p, y, lookup32(tanh_tab[3], idx));
  p = vfmadd(p, y, lookup32(tanh_tab[2], idx));
  p = vfmadd(p, y, lookup32(tanh_tab[1], idx)); /* L + P1 y + ... */
  V t = vadd(lookup32(tanh_tab[0], idx), p);
  /* below 2^-4: x + x^3 (S0 + S1 x^2) */
  V s = vmul(ax, ax);
  V small = vfmadd(vmul(s, ax), vfmadd(F(tanh_s[1]), s, F(tanh_s[0])), ax);
  t = blend(lt(ax, F(0x1p-4f)), t, small);
  return flt(ior(bits(t), iand(I((int)0x80000000), bits(x)))); /* x's sign */
}

/* 1 / (1 + e^-|x|) for x >= 0, e^-|x| / (1 + e^-|x|) below: the
 * quotient of the pairs n = nh + nl and d = dh + dl, q = nh / dh
 * rounded, corrected by the residual (n - q d) / d, where 1/d need not
 * be exact: q itself for x >= 0 (n = 1), 1 - q below (n = d - 1), both
 * within 2^-23 of it. */
TGT static inline V sigmoid_ps(V x) {
  V eh, el, dh, dl;
  exp_neg_abs(abs_ps(x), &eh, &el, &dh, &dl);
  M neg = lt(x, F(0.0f));
  V nh = blend(neg, F(1.0f), eh), nl = blend(neg, F(0.0f), el);
  V q = vdiv(nh, dh);
  V res = vfnmadd(q, dh, nh);
  res = vfnmadd(q, dl, vadd(res, nl));
  return vfmadd(res, blend(neg, q, vsub(F(1.0f), q)), q);
}

TGT static inline V log_ps(V x) {
  /* x = 2^e m, m in [0.75, 1.5) (NaN for a negative x) */
  V e, m = mant_exp(x, &e);
  /* m's interval (32 from 0.75 on), r = m (1/c) - 1 rounded once */
  VI idx = isrl(isub(bits(m), I(0x3f400000)), 18);
  V r = vfmsub(m, lookup32(log_tab[0], idx), F(1.0f));
  V q = vfmadd(F(log_q[3]), r, F(log_q[2]));
  q = vfmadd(q, r, F(log_q[1]));
  q = vfmadd(q, r, F(log_q[0]));
  /* log x = (e ln2hi + H) + r + (r^2 Q + e ln2lo + L), the first sum
   * exact, the second with its rounding error kept */
  V a = vfmadd(e, F(log_ln2[0]), lookup32(log_tab[1], idx));
  V b = vfmadd(vmul(r, r), q, vfmadd(e, F(log_ln2[1]), lookup32(log_tab[2], idx)));
  V s = vadd(a, r);
  V y = vadd(s, vadd(vadd(vsub(a, s), r), b));
  /* log 0 = -inf, log inf = inf; negatives and NaN are NaN already */
  y = blend(eq(x, F(0.0f)), y, F(-__builtin_inff()));
  return blend(eq(x, F(__builtin_inff())), y, x);
}

/* Whole vectors, then the tail (its other lanes read 1.0, harmless to
 * every function here), so that an element's result never depends on
 * its place. */
#define VMATHF_DEFINE(NAME, FN)                                                         \
  TGT void ARRAY(NAME)(float *out, const float *x, int64_t n) {                         \
    int64_t i = 0;                                                                      \
    for (; i + LANES <= n; i += LANES) store(out + i, FN(load(x + i)));               \
    if (i < n) store_tail(out + i, FN(load_tail(x + i, n - i)), n - i);                 \
  }                                                                                     \
  TGT V VEC(NAME)(V v) { return FN(v); }

VMATHF_DEFINE(exp, exp_ps)
VMATHF_DEFINE(log, log_ps)
VMATHF_DEFINE(tanh, tanh_ps)
VMATHF_DEFINE(sigmoid, sigmoid_ps)
