/* vmath_accuracy.c: the accuracy of the f32 vector functions graph
 * mode's fused loops and eager mode's kernels call (dev_vec_unary,
 * devices/cpu/vmath.h), over every one of the 2^32 f32 arguments,
 * beside glibc's libmvec and SLEEF's 1-ulp functions for comparison
 * (bench/vmath_accuracy_run.sh).
 *
 * The truth is glibc's double function of the argument (sigmoid:
 * 1 / (1 + exp(-x)) in double), whose own error, under 1 double ulp,
 * is 2^-29 of an f32 ulp.  A result's error is |result - truth| in
 * units of the f32 ulp of the truth's binade (subnormals: 2^-149), a
 * real number: under 1 means the result is one of the two floats
 * around the exact value.  NaN must give NaN and a result that should
 * be inf or 0 must be exactly that.  Prints per function and library
 * the largest error, an argument where it occurs, and the share of
 * arguments not correctly rounded.
 *
 *   vmath_accuracy [FUNCTION...]     exp log tanh sigmoid sin cos
 *   VMATH_STEP=k  every k-th bit pattern only (a quick look; default 1)
 *   VMATH_MIST_ONLY=1  Mist's functions only (a third of the time)
 *
 * "mist8" is Mist's 8-lane AVX2 version of a function where it has one
 * (dev_vec_unary(op, false, 256): exp log tanh sigmoid), whose results
 * must be the 16-lane version's bit for bit: its line says how many
 * arguments give other bits (NaNs' payloads included).
 *
 * Split over OMP_NUM_THREADS threads.  Built (by the script) with gcc -O2 -mavx512f
 * -fopenmp against libmist_devices.a, -lsleef -lmvec -lm; needs a CPU
 * with AVX-512F. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/cpu/vmath.h"

#include "vec_libs.h"

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

typedef struct {
  const char *name;
  VmUnary op;
  double (*truth)(double);
  VecFn mvec, sleef;
} Func;

static const Func funcs[] = {
    {"exp", VM_EXP, exp, _ZGVeN16v_expf, sleef_exp},
    {"log", VM_LOG, log, _ZGVeN16v_logf, sleef_log},
    {"tanh", VM_TANH, tanh, _ZGVeN16v_tanhf, sleef_tanh},
    {"sigmoid", VM_SIGMOID, sigmoid, mvec_sigmoid, sleef_sigmoid},
    {"sin", VM_SIN, sin, _ZGVeN16v_sinf, sleef_sin},
    {"cos", VM_COS, cos, _ZGVeN16v_cosf, sleef_cos},
};

/* The error of y in f32 ulps of the truth t (see the opening comment). */
static double ulp_error(float y, double t) {
  if (isnan(t)) return isnan(y) ? 0 : INFINITY;
  if (isnan(y)) return INFINITY;
  float rt = (float)t;
  if (isinf(rt) || isinf(y) || t == 0) return y == rt ? 0 : INFINITY;
  int e;
  frexp(t, &e);              /* |t| in [2^(e-1), 2^e) */
  if (e - 1 < -126) e = -125;
  double ulp = ldexp(1.0, e - 1 - 23);
  return fabs((double)y - t) / ulp;
}

typedef struct {
  double max;
  uint32_t worst;
  uint64_t not_cr, differ;
} Score;

/* Mist's 8-lane function of the function being measured, on each half */
typedef __m256 (*VecFn8)(__m256);
static VecFn8 mist8_fn;
T512 static __m512 mist8(__m512 v) {
  __m256 lo = mist8_fn(_mm512_castps512_ps256(v));
  __m256 hi = mist8_fn(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

int main(int argc, char **argv) {
  int64_t step = getenv("VMATH_STEP") ? atoll(getenv("VMATH_STEP")) : 1;
  if (step < 1) step = 1;
  bool mist_only = getenv("VMATH_MIST_ONLY") && atoi(getenv("VMATH_MIST_ONLY"));
  printf("%-8s %-8s %10s %16s %14s\n", "function", "library", "max ulp", "at x", "not c.r.");
  for (size_t f = 0; f < sizeof funcs / sizeof *funcs; f++) {
    const Func *fn = &funcs[f];
    bool wanted = argc < 2;
    for (int a = 1; a < argc; a++) wanted |= strcmp(argv[a], fn->name) == 0;
    if (!wanted) continue;
    mist8_fn = (VecFn8)dev_vec_unary(fn->op, false, 256);
    VecFn libs[4] = {(VecFn)dev_vec_unary(fn->op, false, 512), mist8, fn->mvec, fn->sleef};
    const char *names[4] = {"mist", "mist8", "libmvec", "sleef"};
    if (!libs[0]) {
      fprintf(stderr, "vmath_accuracy: no vector %s (needs AVX-512F and libmvec)\n", fn->name);
      return 1;
    }
    int nlibs = mist_only ? 2 : 4; /* mist8 is skipped where there is none */
    Score total[4] = {{0}};
    int64_t chunks = 1 << 16, per = ((int64_t)1 << 32) / chunks;
    uint64_t counted = 0;
#pragma omp parallel
    {
      Score s[4] = {{0}};
      uint64_t seen = 0;
#pragma omp for schedule(dynamic, 16)
      for (int64_t c = 0; c < chunks; c++) {
        for (int64_t b = c * per; b < (c + 1) * per; b += 16 * step) {
          uint32_t bits[16];
          float x[16], y[16];
          double t[16];
          for (int i = 0; i < 16; i++) {
            bits[i] = (uint32_t)(b + i * step);
            memcpy(&x[i], &bits[i], 4);
            t[i] = fn->truth((double)x[i]);
          }
          seen += 16;
          float y16[16];
          for (int l = 0; l < nlibs; l++) {
            if (l == 1 && !mist8_fn) continue;
            _mm512_storeu_ps(y, libs[l](_mm512_loadu_ps(x)));
            for (int i = 0; i < 16; i++) {
              double e = ulp_error(y[i], t[i]);
              if (e > s[l].max) s[l].max = e, s[l].worst = bits[i];
              s[l].not_cr += y[i] != (float)t[i] && !(isnan(y[i]) && isnan(t[i]));
              s[l].differ += l == 1 && memcmp(&y[i], &y16[i], 4) != 0;
            }
            if (l == 0) memcpy(y16, y, sizeof y16);
          }
        }
      }
#pragma omp critical
      {
        counted += seen;
        for (int l = 0; l < 4; l++) {
          if (s[l].max > total[l].max) total[l].max = s[l].max, total[l].worst = s[l].worst;
          total[l].not_cr += s[l].not_cr;
          total[l].differ += s[l].differ;
        }
      }
    }
    for (int l = 0; l < nlibs; l++) {
      if (l == 1 && !mist8_fn) continue;
      float wx;
      memcpy(&wx, &total[l].worst, 4);
      printf("%-8s %-8s %10.4f %16.9g %13.5f%%", fn->name, names[l], total[l].max, (double)wx,
             100.0 * (double)total[l].not_cr / (double)counted);
      if (l == 1) printf("   %llu with other bits than mist's", (unsigned long long)total[l].differ);
      printf("\n");
    }
    fflush(stdout);
  }
  return 0;
}
