/* vec_libs.h: the f32 vector functions of glibc's libmvec and SLEEF on
 * 16 lanes under AVX-512, as bench/vmath_accuracy.c and
 * bench/jit/vecmath.c compare them with Mist's own; sigmoid, which
 * neither library has, as 1 / (1 + exp(-x)) over the library's exp (not
 * within 1 ulp: exp(-x) overflows from x = -88.7 on, where sigmoid is
 * still normal).  Include after <immintrin.h> and <sleef.h>, built with
 * -mavx512f (sleef.h declares its AVX-512 functions only then). */
#ifndef MIST_BENCH_VEC_LIBS_H
#define MIST_BENCH_VEC_LIBS_H

#define T512 __attribute__((target("avx512f")))

typedef __m512 (*VecFn)(__m512);

T512 __m512 _ZGVeN16v_expf(__m512);
T512 __m512 _ZGVeN16v_logf(__m512);
T512 __m512 _ZGVeN16v_tanhf(__m512);
T512 __m512 _ZGVeN16v_sinf(__m512);
T512 __m512 _ZGVeN16v_cosf(__m512);

T512 static inline __m512 mvec_sigmoid(__m512 v) {
  __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, _ZGVeN16v_expf(_mm512_sub_ps(_mm512_setzero_ps(), v))));
}
T512 static inline __m512 sleef_exp(__m512 v) { return Sleef_expf16_u10avx512f(v); }
T512 static inline __m512 sleef_log(__m512 v) { return Sleef_logf16_u10avx512f(v); }
T512 static inline __m512 sleef_tanh(__m512 v) { return Sleef_tanhf16_u10avx512f(v); }
T512 static inline __m512 sleef_sin(__m512 v) { return Sleef_sinf16_u10avx512f(v); }
T512 static inline __m512 sleef_cos(__m512 v) { return Sleef_cosf16_u10avx512f(v); }
T512 static inline __m512 sleef_sigmoid(__m512 v) {
  __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, sleef_exp(_mm512_sub_ps(_mm512_setzero_ps(), v))));
}

#endif
