/* devices/cpu/gemm_tn.h: C = A^T @ B for f32 matrices whose shared side
 * is short, without packing, on AVX-512 (gemm_tn.c); blas.c tries it
 * before OpenBLAS.  That is a weight's gradient in a minibatch, x^T @ d,
 * the shared side the batch. */
#ifndef MIST_DEVICES_CPU_GEMM_TN_H
#define MIST_DEVICES_CPU_GEMM_TN_H

#include <stdbool.h>
#include <stdint.h>

/* C (m x n, row stride ldc) = A^T @ B, A k x m (row stride lda), B k x n
 * (ldb), row-major, with OpenBLAS's bits (each element summed over k in
 * order by fused multiply-adds from zero, a zero result +0).  false,
 * nothing written, where the kernel does not apply: no AVX-512, or a
 * shape it does not run faster than OpenBLAS (gemm_tn.c). */
bool dev_cpu_sgemm_tn(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc);

#endif
