/* devices/cpu/vmath.c: contiguous elementwise kernels and reductions
 * (vmath.h), f32 and f64.
 *
 * Approach.  Arithmetic (neg, abs, sqrt, relu, + - * /, max, min) is a
 * plain C loop that GCC vectorises; target_clones builds it for AVX-512,
 * AVX2 and baseline x86-64 and picks one at load time, so the library
 * needs no -march.  Transcendentals are vector functions chosen once
 * from the CPU's features, with no -ffast-math.  f32 exp, log, tanh and
 * sigmoid are Mist's own (vmathf.c: computed in f32, within 1 ulp of the
 * exact value for every argument, as fast as libmvec's; 16 lanes under
 * AVX-512, 8 under AVX2 and FMA, with the same bits), because glibc's
 * libmvec, within 4 ulp by contract, is measured 2.6 ulp off for f32
 * exp, 3.9 for log and 1.4 for tanh (bench/vmath_accuracy_run.sh, over
 * all 2^32 arguments).  Everything else calls libmvec directly
 * (_ZGVeN16v_sinf and friends): its f64 functions and f32 sin, cos and
 * pow are within 2 ulp of libm, except that under AVX2 f32 sin and cos
 * go through libmvec's f64 functions (its 8-lane f32 ones are up to 4
 * ulp off).  The tail of an array goes through the same vector function
 * (masked, or through a padded buffer), so an element's result never
 * depends on its position.
 * Without libmvec (or AVX2) each element calls libm.
 *
 * Arrays of DEV_PAR_GRAIN elements or more are cut into chunks of whole
 * 1024-element blocks and spread over the pool.  Sums are pairwise
 * (blocks of 8 or 16 running partials, halves added recursively; f32 is
 * summed in double), over fixed 64K-element blocks whose partial sums
 * are then added pairwise, so the result does not depend on the number
 * of threads.  Max and min propagate NaN like PyTorch. */
#include "devices/cpu/vmath.h"

#include <math.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(DEV_HAVE_MVEC)
#define USE_MVEC 1
#include <immintrin.h>

#include "devices/cpu/vmathf.h"
#else
#define USE_MVEC 0
#endif

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define BLOCK 1024
/* A chunk's least size in blocks: an array of DEV_PAR_GRAIN elements or
 * more makes two chunks at least (with DEV_PAR_GRAIN / BLOCK - 1 it took
 * twice that, and mlp2's 256x256 update ran on one thread) */
#define CHUNK_BLOCKS (DEV_PAR_GRAIN / BLOCK / 2)

static const char *unary_names[] = {"neg", "abs", "exp", "log", "sqrt", "sin", "cos",
                                    "tanh", "sigmoid", "relu"};
static const char *binary_names[] = {"add", "sub", "mul", "div", "max", "min", "pow"};

const char *dev_unary_name(VmUnary op) {
  return (unsigned)op < sizeof unary_names / sizeof *unary_names ? unary_names[op] : "?";
}

const char *dev_binary_name(VmBinary op) {
  return (unsigned)op < sizeof binary_names / sizeof *binary_names ? binary_names[op] : "?";
}

/* ---- libmvec ------------------------------------------------------------ */

#if USE_MVEC
/* 2: AVX-512 variants, 1: AVX2 variants, 0: libm per element. */
static int mvec_level = -1;

static int level(void) {
  if (mvec_level < 0) {
    __builtin_cpu_init();
    int l = 0;
    if (__builtin_cpu_supports("avx512f")) l = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) l = 1;
    __atomic_store_n(&mvec_level, l, __ATOMIC_RELAXED);
  }
  return mvec_level;
}

/* Everything here is compiled for AVX-512F (called only after the check). */
#define T512 __attribute__((target("avx512f")))
T512 __m512 _ZGVeN16v_sinf(__m512);
T512 __m512 _ZGVeN16v_cosf(__m512);
T512 __m512 _ZGVeN16vv_powf(__m512, __m512);
T512 __m512d _ZGVeN8v_exp(__m512d);
T512 __m512d _ZGVeN8v_log(__m512d);
T512 __m512d _ZGVeN8v_sin(__m512d);
T512 __m512d _ZGVeN8v_cos(__m512d);
T512 __m512d _ZGVeN8v_tanh(__m512d);
T512 __m512d _ZGVeN8vv_pow(__m512d, __m512d);

T512 static __m512d sigmoid8d(__m512d x) {
  __m512d one = _mm512_set1_pd(1.0);
  __m512d e = _ZGVeN8v_exp(_mm512_sub_pd(_mm512_setzero_pd(), x));
  return _mm512_div_pd(one, _mm512_add_pd(one, e));
}

/* Unary and binary loops over one vector function, the tail masked. */
#define MVEC512_UN(NAME, T, VT, W, LOAD, MLOAD, STORE, MSTORE, F)                     \
  T512 static void NAME(T *out, const T *x, int64_t n) {                                   \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) STORE(out + i, F(LOAD(x + i)));                        \
    if (i < n) {                                                                      \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                                 \
      MSTORE(out + i, m, F(MLOAD(m, x + i)));                                         \
    }                                                                                 \
  }
#define MVEC512_BIN(NAME, T, W, LOAD, MLOAD, STORE, MSTORE, F)                        \
  T512 static void NAME(T *out, const T *x, const T *y, int64_t n) {                  \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) STORE(out + i, F(LOAD(x + i), LOAD(y + i)));           \
    if (i < n) {                                                                      \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                                 \
      MSTORE(out + i, m, F(MLOAD(m, x + i), MLOAD(m, y + i)));                        \
    }                                                                                 \
  }

#define UN_F32(NAME, F) MVEC512_UN(NAME, float, __m512, 16, _mm512_loadu_ps, _mm512_maskz_loadu_ps, \
                                   _mm512_storeu_ps, _mm512_mask_storeu_ps, F)
#define UN_F64(NAME, F) MVEC512_UN(NAME, double, __m512d, 8, _mm512_loadu_pd, _mm512_maskz_loadu_pd, \
                                   _mm512_storeu_pd, _mm512_mask_storeu_pd, F)
UN_F32(sin512_f32, _ZGVeN16v_sinf)
UN_F32(cos512_f32, _ZGVeN16v_cosf)
UN_F64(exp512_f64, _ZGVeN8v_exp)
UN_F64(log512_f64, _ZGVeN8v_log)
UN_F64(sin512_f64, _ZGVeN8v_sin)
UN_F64(cos512_f64, _ZGVeN8v_cos)
UN_F64(tanh512_f64, _ZGVeN8v_tanh)
UN_F64(sigmoid512_f64, sigmoid8d)
MVEC512_BIN(pow512_f32, float, 16, _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_storeu_ps,
            _mm512_mask_storeu_ps, _ZGVeN16vv_powf)
MVEC512_BIN(pow512_f64, double, 8, _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_storeu_pd,
            _mm512_mask_storeu_pd, _ZGVeN8vv_pow)

/* Everything here is compiled for AVX2 and FMA (called only after the check). */
#define T256 __attribute__((target("avx2,fma")))
T256 __m256 _ZGVdN8vv_powf(__m256, __m256);
T256 __m256d _ZGVdN4v_exp(__m256d);
T256 __m256d _ZGVdN4v_log(__m256d);
T256 __m256d _ZGVdN4v_sin(__m256d);
T256 __m256d _ZGVdN4v_cos(__m256d);
T256 __m256d _ZGVdN4v_tanh(__m256d);
T256 __m256d _ZGVdN4vv_pow(__m256d, __m256d);

T256 static __m256d sigmoid4d(__m256d x) {
  __m256d one = _mm256_set1_pd(1.0);
  __m256d e = _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), x));
  return _mm256_div_pd(one, _mm256_add_pd(one, e));
}

/* The tail goes through a zero-padded buffer. */
#define MVEC256_UN(NAME, T, W, LOAD, STORE, F)                                        \
  T256 static void NAME(T *out, const T *x, int64_t n) {                                   \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) STORE(out + i, F(LOAD(x + i)));                        \
    if (i < n) {                                                                      \
      T buf[W] = {0};                                                                 \
      for (int64_t j = i; j < n; j++) buf[j - i] = x[j];                              \
      STORE(buf, F(LOAD(buf)));                                                       \
      for (int64_t j = i; j < n; j++) out[j] = buf[j - i];                            \
    }                                                                                 \
  }
#define MVEC256_BIN(NAME, T, W, LOAD, STORE, F)                                       \
  T256 static void NAME(T *out, const T *x, const T *y, int64_t n) {                  \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) STORE(out + i, F(LOAD(x + i), LOAD(y + i)));           \
    if (i < n) {                                                                      \
      T bx[W] = {0}, by[W] = {0};                                                     \
      for (int64_t j = i; j < n; j++) bx[j - i] = x[j], by[j - i] = y[j];             \
      STORE(bx, F(LOAD(bx), LOAD(by)));                                               \
      for (int64_t j = i; j < n; j++) out[j] = bx[j - i];                             \
    }                                                                                 \
  }
/* f32 sin and cos under AVX2: libmvec's f32 functions are up to 4 ulp
 * off, so each 8 floats go through the f64 ones, 4 at a time. */
#define VIA_F64(NAME, FD)                                                             \
  T256 static __m256 NAME(__m256 v) {                                                      \
    __m256d lo = FD(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));                      \
    __m256d hi = FD(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));                    \
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)),          \
                                _mm256_cvtpd_ps(hi), 1);                              \
  }
VIA_F64(sin8, _ZGVdN4v_sin)
VIA_F64(cos8, _ZGVdN4v_cos)
MVEC256_UN(sin256_f32, float, 8, _mm256_loadu_ps, _mm256_storeu_ps, sin8)
MVEC256_UN(cos256_f32, float, 8, _mm256_loadu_ps, _mm256_storeu_ps, cos8)
MVEC256_UN(exp256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_exp)
MVEC256_UN(log256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_log)
MVEC256_UN(sin256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_sin)
MVEC256_UN(cos256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_cos)
MVEC256_UN(tanh256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_tanh)
MVEC256_UN(sigmoid256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, sigmoid4d)
MVEC256_BIN(pow256_f32, float, 8, _mm256_loadu_ps, _mm256_storeu_ps, _ZGVdN8vv_powf)
MVEC256_BIN(pow256_f64, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4vv_pow)

typedef void (*UnFn32)(float *, const float *, int64_t);
typedef void (*UnFn64)(double *, const double *, int64_t);

/* The vector kernel for a transcendental op, NULL for libm per element. */
static UnFn32 mvec_un_f32(VmUnary op) {
  int l = level();
  static const UnFn32 k512[] = {[VM_EXP] = dev_vexpf_avx512, [VM_LOG] = dev_vlogf_avx512,
                                [VM_SIN] = sin512_f32, [VM_COS] = cos512_f32,
                                [VM_TANH] = dev_vtanhf_avx512,
                                [VM_SIGMOID] = dev_vsigmoidf_avx512};
  static const UnFn32 k256[] = {[VM_EXP] = dev_vexpf_avx2, [VM_LOG] = dev_vlogf_avx2,
                                [VM_SIN] = sin256_f32, [VM_COS] = cos256_f32,
                                [VM_TANH] = dev_vtanhf_avx2, [VM_SIGMOID] = dev_vsigmoidf_avx2};
  if ((unsigned)op >= sizeof k512 / sizeof *k512) return NULL;
  return l == 2 ? k512[op] : l == 1 ? k256[op] : NULL;
}
static UnFn64 mvec_un_f64(VmUnary op) {
  int l = level();
  static const UnFn64 k512[] = {[VM_EXP] = exp512_f64, [VM_LOG] = log512_f64,
                                [VM_SIN] = sin512_f64, [VM_COS] = cos512_f64,
                                [VM_TANH] = tanh512_f64, [VM_SIGMOID] = sigmoid512_f64};
  static const UnFn64 k256[] = {[VM_EXP] = exp256_f64, [VM_LOG] = log256_f64,
                                [VM_SIN] = sin256_f64, [VM_COS] = cos256_f64,
                                [VM_TANH] = tanh256_f64, [VM_SIGMOID] = sigmoid256_f64};
  if ((unsigned)op >= sizeof k512 / sizeof *k512) return NULL;
  return l == 2 ? k512[op] : l == 1 ? k256[op] : NULL;
}
#endif /* USE_MVEC */

DevVecFn dev_vec_unary(VmUnary op, bool f64, int bits) {
#if USE_MVEC
  /* [wide][f64]: wide, the AVX-512 kernels' (level 2); else the AVX2
   * kernels' functions of one __m256 or __m256d (level 1) */
  static const DevVecFn fns[2][2][VM_RELU + 1] = {
      {{[VM_EXP] = (DevVecFn)dev_vec_expf8, [VM_LOG] = (DevVecFn)dev_vec_logf8, [VM_SIN] = (DevVecFn)sin8,
        [VM_COS] = (DevVecFn)cos8, [VM_TANH] = (DevVecFn)dev_vec_tanhf8,
        [VM_SIGMOID] = (DevVecFn)dev_vec_sigmoidf8},
       {[VM_EXP] = (DevVecFn)_ZGVdN4v_exp, [VM_LOG] = (DevVecFn)_ZGVdN4v_log,
        [VM_SIN] = (DevVecFn)_ZGVdN4v_sin, [VM_COS] = (DevVecFn)_ZGVdN4v_cos,
        [VM_TANH] = (DevVecFn)_ZGVdN4v_tanh, [VM_SIGMOID] = (DevVecFn)sigmoid4d}},
      {{[VM_EXP] = (DevVecFn)dev_vec_expf16, [VM_LOG] = (DevVecFn)dev_vec_logf16,
        [VM_SIN] = (DevVecFn)_ZGVeN16v_sinf, [VM_COS] = (DevVecFn)_ZGVeN16v_cosf,
        [VM_TANH] = (DevVecFn)dev_vec_tanhf16, [VM_SIGMOID] = (DevVecFn)dev_vec_sigmoidf16},
       {[VM_EXP] = (DevVecFn)_ZGVeN8v_exp, [VM_LOG] = (DevVecFn)_ZGVeN8v_log,
        [VM_SIN] = (DevVecFn)_ZGVeN8v_sin, [VM_COS] = (DevVecFn)_ZGVeN8v_cos,
        [VM_TANH] = (DevVecFn)_ZGVeN8v_tanh, [VM_SIGMOID] = (DevVecFn)sigmoid8d}}};
  bool wide = bits == 512;
  if ((unsigned)op > VM_RELU || (bits != 512 && bits != 256) || level() < (wide ? 2 : 1)) return NULL;
  /* Mist's own f32 functions give the same bits at 8 lanes as at 16,
   * so a 256-bit loop may call them on an AVX-512 CPU too (where eager
   * mode calls the 16-lane ones); every other function only at the
   * width eager mode uses */
  bool own = !f64 && (op == VM_EXP || op == VM_LOG || op == VM_TANH || op == VM_SIGMOID);
  if (level() != (wide ? 2 : 1) && !own) return NULL;
  return fns[wide][f64][op];
#else
  (void)op;
  (void)f64;
  (void)bits;
  return NULL;
#endif
}

/* pow: the function eager mode's dev_binary and dev_binary_scalar call
 * (pow512_f32 / pow512_f64 under AVX-512, the AVX2 kernels' under AVX2). */
DevVecFn dev_vec_binary(VmBinary op, bool f64, int bits) {
#if USE_MVEC
  if (op != VM_POW) return NULL;
  if (bits == 512 && level() == 2) return f64 ? (DevVecFn)_ZGVeN8vv_pow : (DevVecFn)_ZGVeN16vv_powf;
  if (bits == 256 && level() == 1) return f64 ? (DevVecFn)_ZGVdN4vv_pow : (DevVecFn)_ZGVdN8vv_powf;
  return NULL;
#else
  (void)op;
  (void)f64;
  (void)bits;
  return NULL;
#endif
}

/* ---- plain loops (vectorised by the compiler) --------------------------- */

/* out may equal x or y exactly: no dependence between iterations. */
#if defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define IVDEP _Pragma("GCC ivdep")
#endif

/* max/min that propagate NaN from either side (vectorises to cmp+blend). */
#define MAXOF(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))
#define MINOF(a, b) ((a) < (b) || (a) != (a) ? (a) : (b))

#define DEFINE_LOOPS(T, SUF, EXPF, LOGF, SQRTF, SINF, COSF, TANHF, POWF, FABSF)           \
  CLONES static void unary_loop_##SUF(VmUnary op, T *out, const T *x, int64_t n) {         \
    switch (op) {                                                                          \
    case VM_NEG:                                                                           \
      IVDEP for (int64_t i = 0; i < n; i++) out[i] = -x[i];                 \
      break;                                                                               \
    case VM_ABS:                                                                           \
      IVDEP for (int64_t i = 0; i < n; i++) out[i] = FABSF(x[i]);           \
      break;                                                                               \
    case VM_SQRT:                                                                          \
      IVDEP for (int64_t i = 0; i < n; i++) out[i] = SQRTF(x[i]);           \
      break;                                                                               \
    case VM_RELU: /* NaN stays NaN */                                                      \
      IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] < 0 ? 0 : x[i];   \
      break;                                                                               \
    case VM_EXP:                                                                           \
      for (int64_t i = 0; i < n; i++) out[i] = EXPF(x[i]);                                 \
      break;                                                                               \
    case VM_LOG:                                                                           \
      for (int64_t i = 0; i < n; i++) out[i] = LOGF(x[i]);                                 \
      break;                                                                               \
    case VM_SIN:                                                                           \
      for (int64_t i = 0; i < n; i++) out[i] = SINF(x[i]);                                 \
      break;                                                                               \
    case VM_COS:                                                                           \
      for (int64_t i = 0; i < n; i++) out[i] = COSF(x[i]);                                 \
      break;                                                                               \
    case VM_TANH:                                                                          \
      for (int64_t i = 0; i < n; i++) out[i] = TANHF(x[i]);                                \
      break;                                                                               \
    case VM_SIGMOID:                                                                       \
      for (int64_t i = 0; i < n; i++) out[i] = 1 / (1 + EXPF(-x[i]));                      \
      break;                                                                               \
    }                                                                                      \
  }                                                                                        \
                                                                                           \
  /* sx: 0 both arrays, 1 x is the scalar s, 2 y is the scalar s */                        \
  CLONES static void binary_loop_##SUF(VmBinary op, T *out, const T *x, const T *y, T s,    \
                                       int sx, int64_t n) {                                \
    switch (op) {                                                                          \
    case VM_POW:                                                                           \
      for (int64_t i = 0; i < n; i++)                                                      \
        out[i] = POWF(sx == 1 ? s : x[i], sx == 2 ? s : y[i]);                             \
      return;                                                                              \
    default:                                                                               \
      break;                                                                               \
    }                                                                                      \
    if (sx == 0) {                                                                         \
      switch (op) {                                                                        \
      case VM_ADD: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] + y[i]; break; \
      case VM_SUB: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] - y[i]; break; \
      case VM_MUL: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] * y[i]; break; \
      case VM_DIV: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] / y[i]; break; \
      case VM_MAX: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MAXOF(x[i], y[i]); break; \
      case VM_MIN: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MINOF(x[i], y[i]); break; \
      default: break;                                                                      \
      }                                                                                    \
    } else if (sx == 2) {                                                                  \
      switch (op) {                                                                        \
      case VM_ADD: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] + s; break; \
      case VM_SUB: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] - s; break; \
      case VM_MUL: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] * s; break; \
      case VM_DIV: IVDEP for (int64_t i = 0; i < n; i++) out[i] = x[i] / s; break; \
      case VM_MAX: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MAXOF(x[i], s); break; \
      case VM_MIN: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MINOF(x[i], s); break; \
      default: break;                                                                      \
      }                                                                                    \
    } else {                                                                               \
      switch (op) {                                                                        \
      case VM_ADD: IVDEP for (int64_t i = 0; i < n; i++) out[i] = s + y[i]; break; \
      case VM_SUB: IVDEP for (int64_t i = 0; i < n; i++) out[i] = s - y[i]; break; \
      case VM_MUL: IVDEP for (int64_t i = 0; i < n; i++) out[i] = s * y[i]; break; \
      case VM_DIV: IVDEP for (int64_t i = 0; i < n; i++) out[i] = s / y[i]; break; \
      case VM_MAX: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MAXOF(s, y[i]); break; \
      case VM_MIN: IVDEP for (int64_t i = 0; i < n; i++) out[i] = MINOF(s, y[i]); break; \
      default: break;                                                                      \
      }                                                                                    \
    }                                                                                      \
  }

DEFINE_LOOPS(float, f32, expf, logf, sqrtf, sinf, cosf, tanhf, powf, fabsf)
DEFINE_LOOPS(double, f64, exp, log, sqrt, sin, cos, tanh, pow, fabs)

/* ---- dispatch and splitting over the pool ------------------------------ */

typedef struct {
  int op;
  int sx;
  void *out;
  const void *x, *y;
  double s;
  int64_t n;
} Job;

#define DEFINE_DISPATCH(T, SUF)                                                           \
  static void unary_range_##SUF(const Job *j, int64_t lo, int64_t hi) {                  \
    T *out = (T *)j->out + lo;                                                             \
    const T *x = (const T *)j->x + lo;                                                     \
    MVEC_UNARY_##SUF                                                                       \
    unary_loop_##SUF((VmUnary)j->op, out, x, hi - lo);                                     \
  }                                                                                        \
  static void binary_range_##SUF(const Job *j, int64_t lo, int64_t hi) {                 \
    T *out = (T *)j->out + lo;                                                             \
    const T *x = j->sx == 1 ? NULL : (const T *)j->x + lo;                                 \
    const T *y = j->sx == 2 ? NULL : (const T *)j->y + lo;                                 \
    MVEC_BINARY_##SUF                                                                      \
    binary_loop_##SUF((VmBinary)j->op, out, x, y, (T)j->s, j->sx, hi - lo);                \
  }                                                                                        \
  static void unary_chunk_##SUF(void *ctx, int64_t b0, int64_t b1) {                      \
    const Job *j = ctx;                                                                    \
    int64_t hi = b1 * BLOCK < j->n ? b1 * BLOCK : j->n;                                    \
    unary_range_##SUF(j, b0 * BLOCK, hi);                                                  \
  }                                                                                        \
  static void binary_chunk_##SUF(void *ctx, int64_t b0, int64_t b1) {                     \
    const Job *j = ctx;                                                                    \
    int64_t hi = b1 * BLOCK < j->n ? b1 * BLOCK : j->n;                                    \
    binary_range_##SUF(j, b0 * BLOCK, hi);                                                 \
  }                                                                                        \
  void dev_unary_##SUF(DevPool *p, VmUnary op, T *out, const T *x, int64_t n) {           \
    if (n <= 0) return;                                                                    \
    Job j = {op, 0, out, x, NULL, 0, n};                                                   \
    if (n < DEV_PAR_GRAIN || dev_pool_size(p) < 2) unary_range_##SUF(&j, 0, n);            \
    else dev_parallel_for(p, (n + BLOCK - 1) / BLOCK, CHUNK_BLOCKS,                        \
                          unary_chunk_##SUF, &j);                                          \
  }                                                                                        \
  static void binary_any_##SUF(DevPool *p, VmBinary op, T *out, const T *x, const T *y,    \
                               T s, int sx, int64_t n) {                                   \
    if (n <= 0) return;                                                                    \
    Job j = {op, sx, out, x, y, s, n};                                                     \
    if (n < DEV_PAR_GRAIN || dev_pool_size(p) < 2) binary_range_##SUF(&j, 0, n);           \
    else dev_parallel_for(p, (n + BLOCK - 1) / BLOCK, CHUNK_BLOCKS,                        \
                          binary_chunk_##SUF, &j);                                         \
  }                                                                                        \
  void dev_binary_##SUF(DevPool *p, VmBinary op, T *out, const T *x, const T *y,           \
                        int64_t n) {                                                       \
    binary_any_##SUF(p, op, out, x, y, 0, 0, n);                                           \
  }                                                                                        \
  void dev_binary_scalar_##SUF(DevPool *p, VmBinary op, T *out, const T *x, T s,           \
                               int64_t n, bool scalar_first) {                             \
    /* the array is passed as y when the scalar comes first */                             \
    if (scalar_first) binary_any_##SUF(p, op, out, NULL, x, s, 1, n);                      \
    else binary_any_##SUF(p, op, out, x, NULL, s, 2, n);                                   \
  }

#if USE_MVEC
#define MVEC_UNARY_f32                                                                     \
  UnFn32 k = mvec_un_f32((VmUnary)j->op);                                                  \
  if (k) {                                                                                 \
    k(out, x, hi - lo);                                                                    \
    return;                                                                                \
  }
#define MVEC_UNARY_f64                                                                     \
  UnFn64 k = mvec_un_f64((VmUnary)j->op);                                                  \
  if (k) {                                                                                 \
    k(out, x, hi - lo);                                                                    \
    return;                                                                                \
  }
#define MVEC_BINARY_f32 MVEC_POW(float, f32)
#define MVEC_BINARY_f64 MVEC_POW(double, f64)
/* pow: the vector kernels take two arrays; a scalar side becomes a block
 * of copies of it. */
#define MVEC_POW(T, SUF)                                                                   \
  if (j->op == VM_POW && level() > 0) {                                                    \
    void (*k)(T *, const T *, const T *, int64_t) = level() == 2 ? pow512_##SUF : pow256_##SUF; \
    if (j->sx == 0) {                                                                      \
      k(out, x, y, hi - lo);                                                               \
      return;                                                                              \
    }                                                                                      \
    T fill[256];                                                                           \
    for (int q = 0; q < 256; q++) fill[q] = (T)j->s;                                       \
    for (int64_t i = 0; i < hi - lo; i += 256) {                                           \
      int64_t len = hi - lo - i < 256 ? hi - lo - i : 256;                                 \
      if (j->sx == 1) k(out + i, fill, y + i, len);                                        \
      else k(out + i, x + i, fill, len);                                                   \
    }                                                                                      \
    return;                                                                                \
  }
#else
#define MVEC_UNARY_f32
#define MVEC_UNARY_f64
#define MVEC_BINARY_f32
#define MVEC_BINARY_f64
#endif

DEFINE_DISPATCH(float, f32)
DEFINE_DISPATCH(double, f64)

/* ---- x op (s * y) in one pass ------------------------------------------ */

/* Block by block, the product goes to a buffer on the stack and is
 * combined with x from there: each element takes the same two roundings
 * in the same loops as the two operations one after the other, so the
 * bits are the same, but the product never reaches memory.  (j->sx holds
 * the order bits.) */
#define DEFINE_SCALED(T, SUF)                                                             \
  static void scaled_range_##SUF(const Job *j, int64_t lo, int64_t hi) {                  \
    T tmp[BLOCK];                                                                          \
    for (int64_t i = lo; i < hi; i += BLOCK) {                                             \
      int64_t m = hi - i < BLOCK ? hi - i : BLOCK;                                         \
      const T *x = (const T *)j->x + i, *y = (const T *)j->y + i;                          \
      T *out = (T *)j->out + i;                                                            \
      if (j->sx & DEV_SCALAR_LAST) binary_loop_##SUF(VM_MUL, tmp, y, NULL, (T)j->s, 2, m); \
      else binary_loop_##SUF(VM_MUL, tmp, NULL, y, (T)j->s, 1, m);                         \
      if (j->sx & DEV_PRODUCT_FIRST) binary_loop_##SUF((VmBinary)j->op, out, tmp, x, 0, 0, m); \
      else binary_loop_##SUF((VmBinary)j->op, out, x, tmp, 0, 0, m);                       \
    }                                                                                      \
  }                                                                                        \
  static void scaled_chunk_##SUF(void *ctx, int64_t b0, int64_t b1) {                     \
    const Job *j = ctx;                                                                    \
    int64_t hi = b1 * BLOCK < j->n ? b1 * BLOCK : j->n;                                    \
    scaled_range_##SUF(j, b0 * BLOCK, hi);                                                 \
  }                                                                                        \
  void dev_binary_scaled_##SUF(DevPool *p, VmBinary op, T *out, const T *x, T s,           \
                               const T *y, int64_t n, unsigned order) {                    \
    if (n <= 0) return;                                                                    \
    Job j = {op, (int)order, out, x, y, s, n};                                             \
    if (n < DEV_PAR_GRAIN || dev_pool_size(p) < 2) scaled_range_##SUF(&j, 0, n);           \
    else dev_parallel_for(p, (n + BLOCK - 1) / BLOCK, CHUNK_BLOCKS,                        \
                          scaled_chunk_##SUF, &j);                                         \
  }

DEFINE_SCALED(float, f32)
DEFINE_SCALED(double, f64)

/* ---- reductions --------------------------------------------------------- */

/* Pairwise sum: runs of 16 partial sums at the leaves, halves above. */
#define LEAF 256
#define SUM_BLOCK DEV_SUM_BLOCK

#define DEFINE_SUM(T, SUF)                                                                \
  CLONES static double leaf_sum_##SUF(const T *x, int64_t n) {                            \
    double acc[16] = {0};                                                                  \
    int64_t i = 0;                                                                         \
    for (; i + 16 <= n; i += 16)                                                           \
      for (int j = 0; j < 16; j++) acc[j] += (double)x[i + j];                             \
    for (int j = 0; i < n; i++, j++) acc[j] += (double)x[i];                               \
    for (int w = 8; w >= 1; w /= 2)                                                        \
      for (int j = 0; j < w; j++) acc[j] += acc[j + w];                                    \
    return acc[0];                                                                         \
  }                                                                                        \
  static double pairwise_##SUF(const T *x, int64_t n) {                                   \
    if (n <= LEAF) return leaf_sum_##SUF(x, n);                                            \
    int64_t h = (n / 2 + 15) & ~(int64_t)15;                                               \
    return pairwise_##SUF(x, h) + pairwise_##SUF(x + h, n - h);                            \
  }

DEFINE_SUM(float, f32)
DEFINE_SUM(double, f64)

/* max/min over runs of 16 lanes, with a NaN flag per lane. */
#define DEFINE_EXTREME(T, SUF, NAME, PICK, INIT)                                          \
  CLONES static T NAME##_leaf_##SUF(const T *x, int64_t n) {                              \
    T acc[16];                                                                             \
    int nan[16] = {0};                                                                     \
    for (int j = 0; j < 16; j++) acc[j] = INIT;                                            \
    int64_t i = 0;                                                                         \
    for (; i + 16 <= n; i += 16)                                                           \
      for (int j = 0; j < 16; j++) {                                                       \
        T v = x[i + j];                                                                    \
        acc[j] = PICK(v, acc[j]);                                                          \
        nan[j] |= v != v;                                                                  \
      }                                                                                    \
    for (int j = 0; i < n; i++, j++) {                                                     \
      acc[j] = PICK(x[i], acc[j]);                                                         \
      nan[j] |= x[i] != x[i];                                                              \
    }                                                                                      \
    T r = INIT;                                                                            \
    int any = 0;                                                                           \
    for (int j = 0; j < 16; j++) {                                                         \
      r = PICK(acc[j], r);                                                                 \
      any |= nan[j];                                                                       \
    }                                                                                      \
    return any ? (T)NAN : r;                                                               \
  }

#define PICKMAX(a, b) ((a) > (b) ? (a) : (b))
#define PICKMIN(a, b) ((a) < (b) ? (a) : (b))
DEFINE_EXTREME(float, f32, max, PICKMAX, -INFINITY)
DEFINE_EXTREME(float, f32, min, PICKMIN, INFINITY)
DEFINE_EXTREME(double, f64, max, PICKMAX, -INFINITY)
DEFINE_EXTREME(double, f64, min, PICKMIN, INFINITY)

typedef struct {
  const void *x;
  int64_t n;
  int kind;   /* 0 sum, 1 max, 2 min */
  double *part;
} RedJob;

#define DEFINE_REDUCE(T, SUF)                                                             \
  static double block_##SUF(const RedJob *r, int64_t b) {                                 \
    const T *x = (const T *)r->x + b * SUM_BLOCK;                                          \
    int64_t len = r->n - b * SUM_BLOCK < SUM_BLOCK ? r->n - b * SUM_BLOCK : SUM_BLOCK;     \
    return r->kind == 0 ? pairwise_##SUF(x, len)                                           \
           : r->kind == 1 ? (double)max_leaf_##SUF(x, len)                                 \
                          : (double)min_leaf_##SUF(x, len);                                \
  }                                                                                        \
  static void red_chunk_##SUF(void *ctx, int64_t b0, int64_t b1) {                        \
    const RedJob *r = ctx;                                                                 \
    for (int64_t b = b0; b < b1; b++) r->part[b] = block_##SUF(r, b);                      \
  }                                                                                        \
  static double reduce_##SUF(DevPool *p, const T *x, int64_t n, int kind) {               \
    RedJob r = {x, n, kind, NULL};                                                         \
    int64_t nb = (n + SUM_BLOCK - 1) / SUM_BLOCK;                                          \
    if (nb <= 1) return block_##SUF(&r, 0);                                                \
    double small[64];                                                                      \
    double *part = nb <= 64 ? small : malloc((size_t)nb * sizeof *part);                   \
    if (!part) { /* out of memory: one block at a time, in order */                        \
      double acc = kind == 0 ? 0 : block_##SUF(&r, 0);                                     \
      for (int64_t b = kind == 0 ? 0 : 1; b < nb; b++) {                                   \
        double v = block_##SUF(&r, b);                                                     \
        acc = kind == 0 ? acc + v : kind == 1 ? MAXOF(v, acc) : MINOF(v, acc);             \
      }                                                                                    \
      return acc;                                                                          \
    }                                                                                      \
    r.part = part;                                                                         \
    dev_parallel_for(p, nb, 1, red_chunk_##SUF, &r);                                       \
    double v;                                                                              \
    if (kind == 0) {                                                                       \
      v = pairwise_f64(part, nb);                                                          \
    } else {                                                                               \
      v = part[0];                                                                         \
      for (int64_t b = 1; b < nb; b++)                                                     \
        v = kind == 1 ? MAXOF(part[b], v) : MINOF(part[b], v);                             \
    }                                                                                      \
    if (part != small) free(part);                                                         \
    return v;                                                                              \
  }                                                                                        \
  double dev_sum_##SUF(DevPool *p, const T *x, int64_t n) {                               \
    return n <= 0 ? 0.0 : reduce_##SUF(p, x, n, 0);                                        \
  }                                                                                        \
  T dev_max_##SUF(DevPool *p, const T *x, int64_t n) {                                    \
    return n <= 0 ? (T)-INFINITY : (T)reduce_##SUF(p, x, n, 1);                            \
  }                                                                                        \
  T dev_min_##SUF(DevPool *p, const T *x, int64_t n) {                                    \
    return n <= 0 ? (T)INFINITY : (T)reduce_##SUF(p, x, n, 2);                             \
  }

DEFINE_REDUCE(float, f32)
DEFINE_REDUCE(double, f64)

double dev_sum_block_f32(const float *x, int64_t n) { return n <= 0 ? 0.0 : pairwise_f32(x, n); }
double dev_sum_block_f64(const double *x, int64_t n) { return n <= 0 ? 0.0 : pairwise_f64(x, n); }
double dev_sum_partials(const double *part, int64_t nblocks) { return pairwise_f64(part, nblocks); }
double dev_extreme_block_f32(const float *x, int64_t n, bool max) {
  return max ? (double)max_leaf_f32(x, n) : (double)min_leaf_f32(x, n);
}
double dev_extreme_block_f64(const double *x, int64_t n, bool max) {
  return max ? (double)max_leaf_f64(x, n) : (double)min_leaf_f64(x, n);
}
double dev_extreme_partials(const double *part, int64_t nblocks, bool max) {
  double v = part[0];
  for (int64_t b = 1; b < nblocks; b++) v = max ? MAXOF(part[b], v) : MINOF(part[b], v);
  return v;
}

/* ---- column sums ---------------------------------------------------------- */

enum { SUM_BAND = 256 };

typedef struct RowsCtx {
  const void *x;
  int64_t rows, cols;
  double scale;
  void *out;
  bool f64;
} RowsCtx;

/* acc += rows x[0..n) of the matrix (n <= 4 at a time: the partial sums
 * are loaded and stored once per four rows) */
CLONES static void add_rows_f32(double *restrict acc, const float *restrict x, int64_t cols, int64_t n, int64_t w) {
  if (n == 4) {
    const float *a = x, *b = x + cols, *c = x + 2 * cols, *d = x + 3 * cols;
    for (int64_t j = 0; j < w; j++) acc[j] += ((double)a[j] + (double)b[j]) + ((double)c[j] + (double)d[j]);
    return;
  }
  for (int64_t r = 0; r < n; r++)
    for (int64_t j = 0; j < w; j++) acc[j] += x[r * cols + j];
}

CLONES static void add_rows_f64(double *restrict acc, const double *restrict x, int64_t cols, int64_t n, int64_t w) {
  if (n == 4) {
    const double *a = x, *b = x + cols, *c = x + 2 * cols, *d = x + 3 * cols;
    for (int64_t j = 0; j < w; j++) acc[j] += (a[j] + b[j]) + (c[j] + d[j]);
    return;
  }
  for (int64_t r = 0; r < n; r++)
    for (int64_t j = 0; j < w; j++) acc[j] += x[r * cols + j];
}

/* columns [begin, end), a band of SUM_BAND at a time: the band's
 * partial sums stay in L1 while the rows stream through */
static void sum_rows_band(void *vctx, int64_t begin, int64_t end) {
  RowsCtx *c = vctx;
  double acc[SUM_BAND];
  for (int64_t j0 = begin; j0 < end; j0 += SUM_BAND) {
    int64_t w = end - j0 < SUM_BAND ? end - j0 : SUM_BAND;
    for (int64_t j = 0; j < w; j++) acc[j] = 0;
    for (int64_t r = 0; r < c->rows; r += 4) {
      int64_t n = c->rows - r < 4 ? c->rows - r : 4;
      if (c->f64) add_rows_f64(acc, (const double *)c->x + r * c->cols + j0, c->cols, n, w);
      else add_rows_f32(acc, (const float *)c->x + r * c->cols + j0, c->cols, n, w);
    }
    for (int64_t j = 0; j < w; j++) {
      if (c->f64) ((double *)c->out)[j0 + j] = acc[j] * c->scale;
      else ((float *)c->out)[j0 + j] = (float)(acc[j] * c->scale);
    }
  }
}

static void sum_rows(DevPool *p, RowsCtx *c) {
  if (p && c->rows * c->cols >= DEV_PAR_GRAIN && c->cols >= 2 * SUM_BAND)
    dev_parallel_for(p, c->cols, SUM_BAND, sum_rows_band, c);
  else
    sum_rows_band(c, 0, c->cols);
}

void dev_sum_rows_f32(DevPool *p, const float *x, int64_t rows, int64_t cols, double scale, float *out) {
  RowsCtx c = {x, rows, cols, scale, out, false};
  sum_rows(p, &c);
}

void dev_sum_rows_f64(DevPool *p, const double *x, int64_t rows, int64_t cols, double scale, double *out) {
  RowsCtx c = {x, rows, cols, scale, out, true};
  sum_rows(p, &c);
}
