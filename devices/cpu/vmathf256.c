/* devices/cpu/vmathf256.c: exp, log, tanh and sigmoid of f32 arrays
 * under AVX2 and FMA, 8 lanes at a time (vmathf.h), for vmath.c and the
 * 256-bit fused loops of graph mode: vmathf_algo.h's algorithms over
 * the AVX2 operations defined here, with the AVX-512 kernels' bits
 * (vmathf.c), so that a CPU without AVX-512 gets the same results, 1
 * ulp at most from the exact value, at the speed of 8-lane f32 code
 * rather than libmvec's f64 functions 4 lanes at a time.
 *
 * Three AVX-512 instructions have no AVX2 twin; each is built here from
 * steps that round at most once, so the bits stay:
 *   vscalefps (h 2^k): k in [-150, 128] split as k2 + k1, k1 in
 *       [-126, 127], k2 in [-24, 1]; h 2^k2 is exact (h is near 1, or
 *       the low part of such a pair, where a value that small gives 0
 *       either way) and times 2^k1 rounds once, subnormal or inf
 *       included.  When every lane's k is in [-126, 127] (the usual
 *       case: |x| under about 87), k2 is 0 and one multiplication by
 *       2^k does it: a branch on the vector takes that path (exp 1.05x
 *       as fast, sigmoid 1.07x, the fused exp(x) * y + tanh(x) 1.03x).
 *   vgetmantps / vgetexpps: the exponent field read off (a subnormal
 *       scaled by 2^23 first), m in [0.75, 1.5) by subtracting the bits
 *       of 0.75; a negative x gives the default NaN and a NaN x itself,
 *       quieted, as vgetmantps does.
 *   vpermt2ps (a 32-entry table): for log's three tables, four vpermps
 *       of 8 entries, two blends on the index's bit 3 and one on bit 4;
 *       tanh's seven are read as each lane's row of them (tanh_rows),
 *       transposed, which takes fewer shuffles.
 *
 * Speed (bench/jit/vecmath.c, AMD EPYC, one thread, 8 floats in the
 * cache): exp 4.8 ns, tanh 8.2, log 7.9, sigmoid 9.0, where libmvec's
 * 8-lane f32 functions take 2.7, 5.6 and 2.7 (but are up to 2.5, 1.4
 * and 3.8 ulp off) and the f64 path this replaced 8.4, 22.7 to 35, 11.1
 * and 10.4.  What costs most is what AVX2 lacks: tanh's lookups (3.7 ns
 * of its 8.2), exp's scaling by 2^k (10 instructions for one; on the usual
 * path 4 and a branch, which took exp from 4.78 ns to 4.55, measured
 * side by side). */
#include "devices/cpu/vmathf.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "devices/cpu/vmathf_coefs.h"

#define TGT __attribute__((target("avx2,fma")))
typedef __m256 V;
typedef __m256i VI;
typedef __m256 M;
enum { LANES = 8 };

TGT static inline V F(float c) { return _mm256_set1_ps(c); }
TGT static inline VI I(int c) { return _mm256_set1_epi32(c); }
TGT static inline V vadd(V a, V b) { return _mm256_add_ps(a, b); }
TGT static inline V vsub(V a, V b) { return _mm256_sub_ps(a, b); }
TGT static inline V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
TGT static inline V vdiv(V a, V b) { return _mm256_div_ps(a, b); }
TGT static inline V vmin(V a, V b) { return _mm256_min_ps(a, b); }
TGT static inline V vmax(V a, V b) { return _mm256_max_ps(a, b); }
TGT static inline V vfmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
TGT static inline V vfnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
TGT static inline V vfmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
TGT static inline V round_even(V v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
TGT static inline M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
TGT static inline M eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
TGT static inline V blend(M m, V a, V b) { return _mm256_blendv_ps(a, b, m); }
TGT static inline VI bits(V v) { return _mm256_castps_si256(v); }
TGT static inline V flt(VI i) { return _mm256_castsi256_ps(i); }
TGT static inline VI isub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
TGT static inline VI iand(VI a, VI b) { return _mm256_and_si256(a, b); }
TGT static inline VI ior(VI a, VI b) { return _mm256_or_si256(a, b); }
TGT static inline VI iandnot(VI a, VI b) { return _mm256_andnot_si256(a, b); }
TGT static inline VI isrl(VI a, int n) { return _mm256_srli_epi32(a, n); }

/* 2^k for an integer k in [-126, 127] */
TGT static inline V pow2(VI k) { return flt(_mm256_slli_epi32(_mm256_add_epi32(k, I(127)), 23)); }

TGT static inline V scale(V h, V k) {
  VI ki = _mm256_cvtps_epi32(k);
  /* the usual case, every k in [-126, 127]: one multiplication by 2^k,
   * rounded once as the split below rounds */
  VI out = _mm256_or_si256(_mm256_cmpgt_epi32(I(-126), ki), _mm256_cmpgt_epi32(ki, I(127)));
  if (__builtin_expect(_mm256_testz_si256(out, out), 1)) return vmul(h, pow2(ki));
  VI k1 = _mm256_max_epi32(I(-126), _mm256_min_epi32(I(127), ki));
  return vmul(vmul(h, pow2(_mm256_sub_epi32(ki, k1))), pow2(k1));
}

TGT static inline V lookup32(const float *t, VI idx) {
  M bit3 = flt(_mm256_slli_epi32(idx, 28)), bit4 = flt(_mm256_slli_epi32(idx, 27)); /* in the sign */
  V lo = blend(bit3, _mm256_permutevar8x32_ps(_mm256_load_ps(t), idx),
               _mm256_permutevar8x32_ps(_mm256_load_ps(t + 8), idx));
  V hi = blend(bit3, _mm256_permutevar8x32_ps(_mm256_load_ps(t + 16), idx),
               _mm256_permutevar8x32_ps(_mm256_load_ps(t + 24), idx));
  return blend(bit4, lo, hi);
}

/* Each lane's row of tanh_rows, the 8 rows transposed: the halves of
 * rows i and i + 4 side by side, then each 4 x 4 block in place.  (Four
 * vpermps and three blends per column, as lookup32, were 1.5x slower.)
 * Written out, no arrays: with a loop over the rows GCC kept the
 * halves on the stack and the offsets went through memory, and tanh
 * took 1.3x as long.  The offsets reach the scalar side two at a time
 * (vmovq, vpextrq), unsigned, so that no sign extension is left. */
TGT static inline void tanh_coefs(VI idx, V k[7]) {
  VI off = _mm256_slli_epi32(_mm256_and_si256(idx, I(31)), 5); /* bytes */
  __m128i lo4 = _mm256_castsi256_si128(off), hi4 = _mm256_extracti128_si256(off, 1);
  uint64_t p0 = (uint64_t)_mm_cvtsi128_si64(lo4), p1 = (uint64_t)_mm_extract_epi64(lo4, 1);
  uint64_t p2 = (uint64_t)_mm_cvtsi128_si64(hi4), p3 = (uint64_t)_mm_extract_epi64(hi4, 1);
  const char *rows = (const char *)tanh_rows;
#define ROW(o) ((const float *)(rows + (uint32_t)(o)))
  const float *r0 = ROW(p0), *r1 = ROW(p0 >> 32), *r2 = ROW(p1), *r3 = ROW(p1 >> 32);
  const float *r4 = ROW(p2), *r5 = ROW(p2 >> 32), *r6 = ROW(p3), *r7 = ROW(p3 >> 32);
#undef ROW
  V a0 = _mm256_loadu2_m128(r4, r0), b0 = _mm256_loadu2_m128(r4 + 4, r0 + 4);
  V a1 = _mm256_loadu2_m128(r5, r1), b1 = _mm256_loadu2_m128(r5 + 4, r1 + 4);
  V a2 = _mm256_loadu2_m128(r6, r2), b2 = _mm256_loadu2_m128(r6 + 4, r2 + 4);
  V a3 = _mm256_loadu2_m128(r7, r3), b3 = _mm256_loadu2_m128(r7 + 4, r3 + 4);
  V t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
  V t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
  k[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  k[1] = _mm256_shuffle_ps(t0, t2, 0xee);
  k[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  k[3] = _mm256_shuffle_ps(t1, t3, 0xee);
  t0 = _mm256_unpacklo_ps(b0, b1), t1 = _mm256_unpackhi_ps(b0, b1);
  t2 = _mm256_unpacklo_ps(b2, b3), t3 = _mm256_unpackhi_ps(b2, b3);
  k[4] = _mm256_shuffle_ps(t0, t2, 0x44);
  k[5] = _mm256_shuffle_ps(t0, t2, 0xee);
  k[6] = _mm256_shuffle_ps(t1, t3, 0x44);
}

TGT static inline V mant_exp(V x, V *e) {
  M tiny = lt(x, F(0x1p-126f)); /* subnormal (or zero or negative) */
  V xs = blend(tiny, x, vmul(x, F(0x1p23f)));
  VI t = isub(bits(xs), I(0x3f400000));
  VI ei = _mm256_srai_epi32(t, 23);
  V m = flt(isub(bits(xs), _mm256_slli_epi32(ei, 23)));
  *e = vsub(_mm256_cvtepi32_ps(ei), blend(tiny, F(0.0f), F(23.0f)));
  m = blend(lt(x, F(0.0f)), m, flt(I((int)0xffc00000)));
  return blend(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), m, vadd(x, x));
}

TGT static inline V load(const float *x) { return _mm256_loadu_ps(x); }
TGT static inline void store(float *out, V v) { _mm256_storeu_ps(out, v); }
/* lanes [0, n) of a mask vector */
TGT static inline VI first(int64_t n) {
  return _mm256_cmpgt_epi32(I((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
TGT static inline V load_tail(const float *x, int64_t n) {
  return blend(flt(first(n)), F(1.0f), _mm256_maskload_ps(x, first(n)));
}
TGT static inline void store_tail(float *out, V v, int64_t n) { _mm256_maskstore_ps(out, first(n), v); }
#define ARRAY(f) dev_v##f##f_avx2
#define VEC(f) dev_vec_##f##f8

#include "devices/cpu/vmathf_algo.h"

#endif
