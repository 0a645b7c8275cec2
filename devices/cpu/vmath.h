/* devices/cpu/vmath.h: contiguous, vectorised elementwise kernels and
 * reductions on n elements.  out may alias x or y (exactly, not
 * partially).  Large n (>= 1<<16) is split over the pool.
 * Accuracy: f32 transcendental results within 2 ulp of libm (and under
 * AVX-512 exp, log, tanh and sigmoid within 1 ulp of the exact value),
 * f64 within ~1e-15 relative. */
#ifndef MIST_DEVICES_CPU_VMATH_H
#define MIST_DEVICES_CPU_VMATH_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/pool.h"

typedef enum { VM_NEG, VM_ABS, VM_EXP, VM_LOG, VM_SQRT, VM_SIN, VM_COS, VM_TANH,
               VM_SIGMOID, VM_RELU } VmUnary;
typedef enum { VM_ADD, VM_SUB, VM_MUL, VM_DIV, VM_MAX, VM_MIN, VM_POW } VmBinary;

/* The element count above which a kernel splits over the pool. */
#define DEV_PAR_GRAIN ((int64_t)1 << 16)

void dev_unary_f32(DevPool *p, VmUnary op, float *out, const float *x, int64_t n);
void dev_unary_f64(DevPool *p, VmUnary op, double *out, const double *x, int64_t n);

/* out[i] = x[i] op y[i] */
void dev_binary_f32(DevPool *p, VmBinary op, float *out, const float *x, const float *y,
                    int64_t n);
void dev_binary_f64(DevPool *p, VmBinary op, double *out, const double *x, const double *y,
                    int64_t n);

/* out[i] = x[i] op s, or s op x[i] when scalar_first. */
void dev_binary_scalar_f32(DevPool *p, VmBinary op, float *out, const float *x, float s,
                           int64_t n, bool scalar_first);
void dev_binary_scalar_f64(DevPool *p, VmBinary op, double *out, const double *x, double s,
                           int64_t n, bool scalar_first);

/* out[i] = x[i] op (s * y[i]), op VM_ADD or VM_SUB, with the bits of the
 * two operations one after the other (dev_binary_scalar, then
 * dev_binary) but in one pass.  order: DEV_PRODUCT_FIRST computes
 * (s * y[i]) op x[i], DEV_SCALAR_LAST y[i] * s.  out may alias x or y. */
enum { DEV_PRODUCT_FIRST = 1, DEV_SCALAR_LAST = 2 };
void dev_binary_scaled_f32(DevPool *p, VmBinary op, float *out, const float *x, float s,
                           const float *y, int64_t n, unsigned order);
void dev_binary_scaled_f64(DevPool *p, VmBinary op, double *out, const double *x, double s,
                           const double *y, int64_t n, unsigned order);

/* One vector of op's kernel, for compiled code's fused loops
 * (jit/llvm/fuse.c): a function of one vector of `bits` bits (512: an
 * __m512 of 16 floats, f64 false, or an __m512d of 8 doubles; 256: an
 * __m256 or __m256d) that computes exactly the lanes dev_unary_f32 or
 * dev_unary_f64 computes, so a fused loop's results are eager mode's
 * to the bit.  For VM_EXP, VM_LOG, VM_SIN, VM_COS, VM_TANH and
 * VM_SIGMOID; NULL for the others, and for all where eager mode does
 * not call that width's kernels (512: the CPU has AVX-512F; 256: AVX2
 * and FMA without AVX-512F) or Mist was built without libmvec; except
 * that f32 exp, log, tanh and sigmoid of 256 bits are given on any CPU
 * with AVX2 and FMA (Mist's own, vmathf.c: 8 lanes give the bits of
 * the 16 that AVX-512 CPUs use). */
typedef void (*DevVecFn)(void);
DevVecFn dev_vec_unary(VmUnary op, bool f64, int bits);
/* The same for a binary op: VM_POW's (two vectors), else NULL. */
DevVecFn dev_vec_binary(VmBinary op, bool f64, int bits);

/* Pairwise summation (in double for f32).  0 for n == 0. */
double dev_sum_f32(DevPool *p, const float *x, int64_t n);
double dev_sum_f64(DevPool *p, const double *x, int64_t n);
/* dev_sum_f32/f64 of n <= DEV_SUM_SHORT elements, inline: the same
 * additions in the same order as its leaf (vmath.c, leaf_sum: sixteen
 * partial sums from zero, then halves), written out so that they stay
 * in registers (the leaf's array of partial sums, stored element by
 * element and read back as vectors, stalls on every short row), for a
 * caller that sums many short rows (a softmax's). */
#define DEV_SUM_SHORT 16
#define DEV_SUM_SHORT_FN(T, SUF)                                                   \
  static inline double dev_sum_short_##SUF(const T *x, int64_t n) {               \
    double a[16];                                                                  \
    for (int j = 0; j < 16; j++) a[j] = j < n ? 0.0 + (double)x[j] : 0.0;          \
    double p0 = a[0] + a[8], p1 = a[1] + a[9], p2 = a[2] + a[10], p3 = a[3] + a[11]; \
    double p4 = a[4] + a[12], p5 = a[5] + a[13], p6 = a[6] + a[14], p7 = a[7] + a[15]; \
    double q0 = p0 + p4, q1 = p1 + p5, q2 = p2 + p6, q3 = p3 + p7;                 \
    return (q0 + q2) + (q1 + q3);                                                  \
  }
DEV_SUM_SHORT_FN(float, f32)
DEV_SUM_SHORT_FN(double, f64)
/* The pieces of dev_sum_f32/f64, for compiled code that sums what it
 * computes block by block (jit/llvm/fuse.c) with the same bits: the
 * sum of one block of at most DEV_SUM_BLOCK elements (the n elements
 * from DEV_SUM_BLOCK * b on are block b), and the sum of the blocks'
 * sums.  dev_sum is dev_sum_block for n <= DEV_SUM_BLOCK, else
 * dev_sum_partials of the blocks' dev_sum_block. */
#define DEV_SUM_BLOCK ((int64_t)1 << 16)
double dev_sum_block_f32(const float *x, int64_t n);
double dev_sum_block_f64(const double *x, int64_t n);
double dev_sum_partials(const double *part, int64_t nblocks);

/* The column sums of a row-major rows x cols matrix, times scale (1/rows
 * for a mean), summed in double row after row: out[j] = scale * sum_i
 * x[i * cols + j].  A sum over a tensor's leading axes (a batch). */
void dev_sum_rows_f32(DevPool *p, const float *x, int64_t rows, int64_t cols, double scale, float *out);
void dev_sum_rows_f64(DevPool *p, const double *x, int64_t rows, int64_t cols, double scale, double *out);

/* The pieces of dev_max/dev_min, as dev_sum's: one block's max (min)
 * of at most DEV_SUM_BLOCK elements (n >= 1), and that of the blocks'
 * (taken in order: NaN and the sign of a zero come out as
 * dev_max/dev_min give them). */
double dev_extreme_block_f32(const float *x, int64_t n, bool max);
double dev_extreme_block_f64(const double *x, int64_t n, bool max);
double dev_extreme_partials(const double *part, int64_t nblocks, bool max);

/* Max / min; NaN if any element is NaN; -inf/+inf (max/min) for n == 0. */
float dev_max_f32(DevPool *p, const float *x, int64_t n);
float dev_min_f32(DevPool *p, const float *x, int64_t n);
double dev_max_f64(DevPool *p, const double *x, int64_t n);
double dev_min_f64(DevPool *p, const double *x, int64_t n);

/* Names for messages: "neg", "exp", ...; "add", "pow", ... */
const char *dev_unary_name(VmUnary op);
const char *dev_binary_name(VmBinary op);

#endif
