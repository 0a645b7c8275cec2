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
 * The includer includes vmathf_coefs.h (the tables), then defines,
 * before including this once:
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
 *   tanh_coefs(idx, k)   k[j] = tanh_tab[j][idx & 31] for j < 7 (read
 *                        from tanh_tab or from tanh_rows)
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
  V k[7];
  tanh_coefs(idx, k);
  V p = vfmadd(k[6], y, k[5]);
  p = vfmadd(p, y, k[4]);
  p = vfmadd(p, y, k[3]);
  p = vfmadd(p, y, k[2]);
  p = vfmadd(p, y, k[1]); /* L + P1 y + ... */
  V t = vadd(k[0], p);
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
 * its place.  Flattened: with the function inlined, the loop keeps its
 * constants in registers and overlaps one vector's work with the next
 * (tanh on 8 lanes 1.25x as fast as calling tanh_ps). */
#define VMATHF_DEFINE(NAME, FN)                                                         \
  TGT __attribute__((flatten)) void ARRAY(NAME)(float *out, const float *x, int64_t n) { \
    int64_t i = 0;                                                                      \
    for (; i + LANES <= n; i += LANES) store(out + i, FN(load(x + i)));               \
    if (i < n) store_tail(out + i, FN(load_tail(x + i, n - i)), n - i);                 \
  }                                                                                     \
  TGT V VEC(NAME)(V v) { return FN(v); }

VMATHF_DEFINE(exp, exp_ps)
VMATHF_DEFINE(log, log_ps)
VMATHF_DEFINE(tanh, tanh_ps)
VMATHF_DEFINE(sigmoid, sigmoid_ps)
