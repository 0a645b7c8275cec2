/* devices/cpu/gemm_thin.h: two f32 matrix products of a minibatch's
 * backward pass on AVX-512, with OpenBLAS's bits (gemm_thin.c); blas.c
 * tries them before OpenBLAS.  A weight's gradient x^T @ d (the shared
 * side the batch, short) and the sensitivity of a layer's input
 * d @ w^T (the batch the rows of the result, few). */
#ifndef MIST_DEVICES_CPU_GEMM_THIN_H
#define MIST_DEVICES_CPU_GEMM_THIN_H

#include <stdbool.h>
#include <stdint.h>

/* C (m x n, row stride ldc) = A^T @ B, A k x m (row stride lda), B k x n
 * (ldb), row-major.  false, nothing written, where the kernel does not
 * apply: no AVX-512, or a shape it does not run faster than OpenBLAS
 * (gemm_thin.c). */
bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc);

/* C (m x n, ldc) = A @ B^T, A m x k (lda), B n x k (ldb); false as above. */
bool dev_cpu_sgemm_nt(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc);

#endif
