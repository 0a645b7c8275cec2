/* vecmath.c: which vector math library graph mode's fused loops call
 * for f32 exp and tanh (docs/jit.md, "Fused elementwise loops"), on
 * 16 floats at a time under AVX-512 (bench/jit_tensor_run.sh):
 *
 *   mist     Mist's own (devices/cpu/vmathf.c: f32 with FMA, within
 *            1 ulp), which eager mode's kernels use;
 *   libmvec  glibc's _ZGVeN16v_expf and _ZGVeN16v_tanhf, what gcc
 *            -ffast-math vectorises expf and tanhf into;
 *   sleef    SLEEF 3.5's Sleef_expf16_u10avx512f and
 *            Sleef_tanhf16_u10avx512f (1.0-ulp functions, libsleef-dev).
 *
 * For each: the time of the chain exp(x) * y + tanh(x) over 10^7 floats
 * (one thread, output preallocated, best of 7, the three interleaved),
 * and the accuracy of exp and tanh against the correctly rounded result
 * (libm's double function rounded to float) over 10^7 arguments in
 * [-10, 10) and [-88, 88): the largest error in ulps and the share not
 * correctly rounded.  Then each of exp, tanh, log and sigmoid alone on
 * 16K floats in the cache (x in [-10, 10), for log [0.01, 6000); the
 * best of 20 runs of 100 passes): nanoseconds per vector of 16.
 *
 * Then the same on 8 lanes, AVX2 and FMA, as on a CPU without AVX-512
 * (the functions called directly here): the chain's time and each
 * function alone, in nanoseconds per 8 floats, for
 *
 *   mist     Mist's own 8-lane ones (devices/cpu/vmathf256.c, the
 *            16-lane ones' bits), which eager mode calls and 256-bit
 *            fused loops inline (jit/llvm/kernels.c);
 *   f64x4    what they replaced: libmvec's f64 functions on 4 lanes,
 *            twice, rounded to float (_ZGVdN4v_exp...);
 *   libmvec  _ZGVdN8v_expf, _ZGVdN8v_tanhf, _ZGVdN8v_logf, what gcc
 *            -march=haswell -ffast-math vectorises into;
 *   sleef    Sleef_expf8_u10avx2 and friends.
 *
 * Built with gcc -O2 -mavx512f (sleef.h declares its AVX-512 functions
 * only then) against libmist_devices.a. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../vec_libs.h"

T512 __m512 dev_vec_expf16(__m512);
T512 __m512 dev_vec_tanhf16(__m512);
T512 __m512 dev_vec_logf16(__m512);
T512 __m512 dev_vec_sigmoidf16(__m512);

#define T256 __attribute__((target("avx2,fma")))
typedef __m256 (*VecFn8)(__m256);
T256 __m256 dev_vec_expf8(__m256);
T256 __m256 dev_vec_tanhf8(__m256);
T256 __m256 dev_vec_logf8(__m256);
T256 __m256 dev_vec_sigmoidf8(__m256);
T256 __m256 _ZGVdN8v_expf(__m256);
T256 __m256 _ZGVdN8v_tanhf(__m256);
T256 __m256 _ZGVdN8v_logf(__m256);
T256 __m256d _ZGVdN4v_exp(__m256d);
T256 __m256d _ZGVdN4v_tanh(__m256d);
T256 __m256d _ZGVdN4v_log(__m256d);

/* 8 floats through a function of 4 doubles, as vmath.c did before */
#define VIA_F64(NAME, FD)                                                              \
  T256 static __m256 NAME(__m256 v) {                                                  \
    __m256d lo = FD(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));                       \
    __m256d hi = FD(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));                     \
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1); \
  }
T256 static __m256d sigmoid4d(__m256d x) {
  __m256d one = _mm256_set1_pd(1.0);
  return _mm256_div_pd(one, _mm256_add_pd(one, _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), x))));
}
VIA_F64(exp_f64x4, _ZGVdN4v_exp)
VIA_F64(tanh_f64x4, _ZGVdN4v_tanh)
VIA_F64(log_f64x4, _ZGVdN4v_log)
VIA_F64(sigmoid_f64x4, sigmoid4d)
T256 static __m256 sigmoid_mvec8(__m256 v) {
  __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), v))));
}
T256 static __m256 exp_sleef8(__m256 v) { return Sleef_expf8_u10avx2(v); }
T256 static __m256 tanh_sleef8(__m256 v) { return Sleef_tanhf8_u10avx2(v); }
T256 static __m256 log_sleef8(__m256 v) { return Sleef_logf8_u10avx2(v); }
T256 static __m256 sigmoid_sleef8(__m256 v) {
  __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp_sleef8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
}

T256 static void chain8(VecFn8 e, VecFn8 th, float *o, const float *x, const float *y, long n) {
  for (long i = 0; i < n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(o + i, _mm256_add_ps(_mm256_mul_ps(e(v), _mm256_loadu_ps(y + i)), th(v)));
  }
}

T256 static void apply8(VecFn8 f, float *o, const float *x, long n) {
  for (long i = 0; i < n; i += 8) _mm256_storeu_ps(o + i, f(_mm256_loadu_ps(x + i)));
}

static double now(void);

/* The 8-lane comparison (the opening comment), on the buffers of main. */
static void lanes8(float *x, float *y, float *o, long n) {
  unsigned s = 1;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
    y[i] = x[i] * 0.5f;
  }
  const char *names[] = {"mist", "f64x4", "libmvec", "sleef"};
  VecFn8 ex[] = {dev_vec_expf8, exp_f64x4, _ZGVdN8v_expf, exp_sleef8};
  VecFn8 th[] = {dev_vec_tanhf8, tanh_f64x4, _ZGVdN8v_tanhf, tanh_sleef8};
  VecFn8 lg[] = {dev_vec_logf8, log_f64x4, _ZGVdN8v_logf, log_sleef8};
  VecFn8 sg[] = {dev_vec_sigmoidf8, sigmoid_f64x4, sigmoid_mvec8, sigmoid_sleef8};
  double chain_best[4] = {1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < 7; r++)
    for (int k = 0; k < 4; k++) {
      double t = now();
      chain8(ex[k], th[k], o, x, y, n);
      t = now() - t;
      if (t < chain_best[k]) chain_best[k] = t;
    }
  long m = 16384;
  float *xs = x + m;
  for (long i = 0; i < m; i++) x[i] = -10.0f + (float)i * (20.0f / (float)m), xs[i] = 0.01f + (float)i * 0.37f;
  VecFn8 *fns[] = {ex, th, lg, sg};
  double alone[4][4];
  for (int f = 0; f < 4; f++)
    for (int k = 0; k < 4; k++) alone[f][k] = 1e9;
  for (int r = 0; r < 20; r++)
    for (int f = 0; f < 4; f++)
      for (int k = 0; k < 4; k++) {
        double t = now();
        for (int q = 0; q < 100; q++) apply8(fns[f][k], o, f == 2 ? xs : x, m);
        t = now() - t;
        if (t < alone[f][k]) alone[f][k] = t;
      }
  printf("\n8 lanes (AVX2 and FMA)\n%-8s %12s %12s %12s %12s %12s\n", "ns / 8", "chain", "exp", "tanh", "log",
         "sigmoid");
  for (int k = 0; k < 4; k++) {
    printf("%-8s %9.2f ms", names[k], chain_best[k] * 1e3);
    for (int f = 0; f < 4; f++) printf(" %12.2f", alone[f][k] * 1e9 / (100.0 * (double)m / 8));
    printf("\n");
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

T512 static void chain(VecFn e, VecFn th, float *o, const float *x, const float *y, long n) {
  for (long i = 0; i < n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    _mm512_storeu_ps(o + i, _mm512_add_ps(_mm512_mul_ps(e(v), _mm512_loadu_ps(y + i)), th(v)));
  }
}

T512 static void apply(VecFn f, float *o, const float *x, long n) {
  for (long i = 0; i < n; i += 16) _mm512_storeu_ps(o + i, f(_mm512_loadu_ps(x + i)));
}

static int64_t ulps(float a, double exact) {
  float r = (float)exact;
  if ((a != a && r != r) || a == r) return 0;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &r, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  int64_t d = (int64_t)ia - ib;
  return d < 0 ? -d : d;
}

int main(void) {
  long n = 10000000;
  float *x = aligned_alloc(64, n * 4), *y = aligned_alloc(64, n * 4), *o = aligned_alloc(64, n * 4);
  unsigned s = 1;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1 << 24) * 6.0f - 3.0f;
    y[i] = x[i] * 0.5f;
    o[i] = 0;
  }
  const char *names[] = {"mist", "libmvec", "sleef"};
  VecFn ex[] = {dev_vec_expf16, _ZGVeN16v_expf, sleef_exp}, th[] = {dev_vec_tanhf16, _ZGVeN16v_tanhf, sleef_tanh};
  double best[3] = {1e9, 1e9, 1e9};
  for (int r = 0; r < 7; r++)
    for (int k = 0; k < 3; k++) {
      double t = now();
      chain(ex[k], th[k], o, x, y, n);
      t = now() - t;
      if (t < best[k]) best[k] = t;
    }
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    float u = (float)(s >> 8) / (float)(1 << 24);
    x[i] = i % 2 ? u * 176 - 88 : u * 20 - 10;
  }
  printf("%-8s %12s %14s %16s %14s %16s\n", "library", "chain", "exp max ulp", "exp not c.r.", "tanh max ulp", "tanh not c.r.");
  for (int k = 0; k < 3; k++) {
    int64_t mx[2] = {0, 0};
    long bad[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
      apply(f ? th[k] : ex[k], o, x, n);
      for (long i = 0; i < n; i++) {
        int64_t u = ulps(o[i], f ? tanh(x[i]) : exp(x[i]));
        if (u > mx[f]) mx[f] = u;
        bad[f] += u != 0;
      }
    }
    printf("%-8s %9.2f ms %14lld %15.4f%% %14lld %15.4f%%\n", names[k], best[k] * 1e3, (long long)mx[0],
           100.0 * bad[0] / n, (long long)mx[1], 100.0 * bad[1] / n);
  }
  /* log on [0.01, 6000), the others on [-10, 10) (where no library takes
   * a slow path for overflow) */
  long m = 16384;
  float *xs = x + m;
  for (long i = 0; i < m; i++) x[i] = -10.0f + (float)i * (20.0f / (float)m), xs[i] = 0.01f + (float)i * 0.37f;
  VecFn lg[] = {dev_vec_logf16, _ZGVeN16v_logf, sleef_log};
  VecFn sg[] = {dev_vec_sigmoidf16, mvec_sigmoid, sleef_sigmoid};
  VecFn *fns[] = {ex, th, lg, sg};
  double alone[4][3];
  for (int f = 0; f < 4; f++)
    for (int k = 0; k < 3; k++) alone[f][k] = 1e9;
  for (int r = 0; r < 20; r++)
    for (int f = 0; f < 4; f++)
      for (int k = 0; k < 3; k++) {
        double t = now();
        for (int q = 0; q < 100; q++) apply(fns[f][k], o, f == 2 ? xs : x, m);
        t = now() - t;
        if (t < alone[f][k]) alone[f][k] = t;
      }
  printf("\n%-8s %14s %14s %14s %14s\n", "ns / 16", "exp", "tanh", "log", "sigmoid");
  for (int k = 0; k < 3; k++) {
    printf("%-8s", names[k]);
    for (int f = 0; f < 4; f++) printf(" %14.2f", alone[f][k] * 1e9 / (100.0 * (double)m / 16));
    printf("\n");
  }
  lanes8(x, y, o, n);
  return 0;
}
