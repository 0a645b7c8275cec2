/* devices/blas.h: matrix products through OpenBLAS (the only user of
 * cblas in Mist).  Row-major.  A multi-threaded BLAS call holds the pool
 * (dev_pool_lock), so BLAS and pool tasks never run at once; called from
 * inside a pool task, BLAS runs on one thread. */
#ifndef MIST_DEVICES_BLAS_H
#define MIST_DEVICES_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/pool.h"

/* C = alpha * op(A) @ op(B) + beta * C, C is m x n, op(A) m x k,
 * op(B) k x n, op = transpose when ta/tb; lda/ldb/ldc are row strides
 * of the stored matrices.  With beta == 0, C is not read. */
void dev_gemm_f32(DevPool *p, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                  float beta, float *c, int64_t ldc);
void dev_gemm_f64(DevPool *p, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                  double beta, double *c, int64_t ldc);

/* batch gemms: matrix i of A starts at a + i * stride_a (and so on). */
void dev_gemm_batched_f32(DevPool *p, bool ta, bool tb, int64_t batch,
                          int64_t m, int64_t n, int64_t k, float alpha,
                          const float *a, int64_t stride_a, int64_t lda,
                          const float *b, int64_t stride_b, int64_t ldb, float beta,
                          float *c, int64_t stride_c, int64_t ldc);
void dev_gemm_batched_f64(DevPool *p, bool ta, bool tb, int64_t batch,
                          int64_t m, int64_t n, int64_t k, double alpha,
                          const double *a, int64_t stride_a, int64_t lda,
                          const double *b, int64_t stride_b, int64_t ldb, double beta,
                          double *c, int64_t stride_c, int64_t ldc);

/* Which OpenBLAS is loaded: its config string (e.g. "OpenBLAS 0.3.21
 * DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64") and core name. */
const char *dev_blas_info(void);

/* Threading mode of products that are not thin (every side above 128;
 * thin ones always run as slabs, see blas.c), for the whole process.
 * true (the default): OpenBLAS runs its own threads, one per pool
 * worker, while the call holds the pool's lock.  false
 * (MIST_BLAS_THREADS=pool): OpenBLAS stays single-threaded and a big
 * product is cut into slabs over the pool (slower on many cores: see
 * blas.c). */
void dev_blas_set_own_threads(bool own);
/* Make OpenBLAS single-threaded; code that calls BLAS inside pool tasks
 * calls this before dev_parallel_for. */
void dev_blas_single_thread(void);

#endif
