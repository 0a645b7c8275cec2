/* test_devices.c: Check suite for devices/: the thread pool, the caching
 * allocator, gemm through OpenBLAS (both threading modes), the
 * elementwise kernels and reductions of cpu/vmath, and conv2d / maxpool.
 *
 * Every kernel is checked against an independent truth computed here:
 * naive triple loops for gemm and convolution, libm per element for
 * the math functions (to 2 ulp for f32, and under 1 ulp of the exact
 * value for Mist's own AVX-512 exp, log, tanh and sigmoid; 1e-15
 * relative for f64), exact
 * integer sums for the pool.  Timings belong in bench/, not here.
 * Element loops count mismatches and assert once: a Check assertion
 * costs microseconds (it records its place), too much per element. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/alloc.h"
#include "devices/blas.h"
#include "devices/cpu/conv.h"
#include "devices/cpu/gemm_thin.h"
#include "devices/cpu/strided.h"
#include "devices/cpu/vmath.h"
#include "devices/dtype.h"
#include "devices/pool.h"

static DevPool *pool;   /* 4 workers whatever the machine, to exercise splitting */

static void setup(void) { pool = dev_pool_new(4); }
static void teardown(void) {
  dev_pool_free(pool);
  pool = NULL;
}

/* A reproducible uniform value in [lo, hi). */
static uint64_t rng = 88172645463325252ULL;
static double urand(double lo, double hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* ---- dtype ---- */

START_TEST(test_dtype) {
  ck_assert_uint_eq(dev_dtype_size(DT_BOOL), 1);
  ck_assert_uint_eq(dev_dtype_size(DT_I32), 4);
  ck_assert_uint_eq(dev_dtype_size(DT_I64), 8);
  ck_assert_uint_eq(dev_dtype_size(DT_F32), 4);
  ck_assert_uint_eq(dev_dtype_size(DT_F64), 8);
  ck_assert_str_eq(dev_dtype_name(DT_BOOL), "bool");
  ck_assert_str_eq(dev_dtype_name(DT_I32), "i32");
  ck_assert_str_eq(dev_dtype_name(DT_I64), "i64");
  ck_assert_str_eq(dev_dtype_name(DT_F32), "f32");
  ck_assert_str_eq(dev_dtype_name(DT_F64), "f64");
  ck_assert_str_eq(dev_dtype_name((DType)99), "?");
}
END_TEST

/* ---- pool ---- */

typedef struct {
  _Atomic int64_t sum;
  _Atomic int calls;
  unsigned char *seen;
  int64_t grain;
  _Atomic int bad;
} SumCtx;

static void sum_range(void *ctx, int64_t begin, int64_t end) {
  SumCtx *c = ctx;
  int64_t s = 0;
  if (end - begin < c->grain) atomic_store(&c->bad, 1);
  if (!dev_pool_in_task() && c->grain < 1000000) atomic_store(&c->bad, 2);
  for (int64_t i = begin; i < end; i++) {
    s += i;
    c->seen[i]++;
  }
  atomic_fetch_add(&c->sum, s);
  atomic_fetch_add(&c->calls, 1);
}

START_TEST(test_pool_sums) {
  int sizes[] = {1, 2, 3, 4, 0};
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    DevPool *p = dev_pool_new(sizes[t]);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_ge(dev_pool_size(p), 1);
    if (sizes[t] > 0) ck_assert_int_eq(dev_pool_size(p), sizes[t]);
    int64_t ns[] = {1, 7, 100, 1000, 12345, 1000000};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
      int64_t n = ns[k];
      SumCtx c = {.seen = calloc((size_t)n, 1), .grain = n >= 1000 ? 100 : 1};
      dev_parallel_for(p, n, c.grain, sum_range, &c);
      ck_assert_int_eq(atomic_load(&c.sum), n * (n - 1) / 2);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; i++) wrong += c.seen[i] != 1;
      ck_assert_int_eq(wrong, 0);
      if (n > 1 && dev_pool_size(p) > 1) ck_assert_int_eq(atomic_load(&c.bad), 0);
      free(c.seen);
    }
    dev_pool_free(p);
  }
  /* NULL pool: runs inline */
  SumCtx c = {.seen = calloc(50, 1), .grain = 1};
  dev_parallel_for(NULL, 50, 1, sum_range, &c);
  ck_assert_int_eq(atomic_load(&c.sum), 50 * 49 / 2);
  ck_assert_int_eq(atomic_load(&c.calls), 1);
  free(c.seen);
  ck_assert_int_eq(dev_pool_size(NULL), 1);
}
END_TEST

typedef struct {
  DevPool *p;
  _Atomic int64_t inner;
  _Atomic int nested_inline;
} NestCtx;

static void inner_fn(void *ctx, int64_t begin, int64_t end) {
  NestCtx *c = ctx;
  atomic_fetch_add(&c->inner, end - begin);
}

static void outer_fn(void *ctx, int64_t begin, int64_t end) {
  NestCtx *c = ctx;
  for (int64_t i = begin; i < end; i++) {
    /* must run inline: with grain 1 a parallel run would split it */
    int64_t before = atomic_load(&c->inner);
    (void)before;
    dev_parallel_for(c->p, 1000, 1, inner_fn, c);
  }
  if (dev_pool_in_task()) atomic_fetch_add(&c->nested_inline, 1);
}

START_TEST(test_pool_nested) {
  NestCtx c = {.p = pool};
  dev_parallel_for(pool, 64, 1, outer_fn, &c);
  ck_assert_int_eq(atomic_load(&c.inner), 64 * 1000);
  ck_assert_int_ge(atomic_load(&c.nested_inline), 1);
  ck_assert(!dev_pool_in_task());
}
END_TEST

static void count_fn(void *ctx, int64_t begin, int64_t end) {
  atomic_fetch_add((_Atomic int64_t *)ctx, end - begin);
}

START_TEST(test_pool_many_small) {
  _Atomic int64_t total = 0;
  for (int i = 0; i < 20000; i++) dev_parallel_for(pool, 8, 1, count_fn, &total);
  ck_assert_int_eq(atomic_load(&total), 20000 * 8);
  /* n <= grain and n <= 0 */
  dev_parallel_for(pool, 5, 10, count_fn, &total);
  dev_parallel_for(pool, 0, 1, count_fn, &total);
  dev_parallel_for(pool, -3, 1, count_fn, &total);
  ck_assert_int_eq(atomic_load(&total), 20000 * 8 + 5);
}
END_TEST

/* Jobs of alternating sizes back to back, every item counted: a worker
 * that finished the last chunk of one job must not claim a chunk of the
 * next by the old job's word (the bounds travel with the generation in
 * a share, pool.c), and each thread's share is a run of consecutive
 * chunks that the others take over when it is late. */
static void mark_fn(void *ctx, int64_t begin, int64_t end) {
  SumCtx *c = ctx;
  for (int64_t i = begin; i < end; i++) c->seen[i]++;
  atomic_fetch_add(&c->calls, 1);
}

START_TEST(test_pool_alternating_jobs) {
  unsigned char seen[64];
  for (int i = 0; i < 20000; i++) {
    int64_t n = i % 3 == 0 ? 2 : i % 3 == 1 ? 64 : 5;
    memset(seen, 0, sizeof seen);
    SumCtx c = {.seen = seen};
    dev_parallel_for(pool, n, 1, mark_fn, &c);
    for (int64_t k = 0; k < n; k++) ck_assert_int_eq(seen[k], 1);
    /* at most 4 chunks per thread, as many for every thread */
    int64_t chunks = n > 16 ? 16 : n > 4 ? n - n % 4 : n;
    ck_assert_int_eq(atomic_load(&c.calls), chunks);
  }
}
END_TEST

static void *hammer(void *arg) {
  _Atomic int64_t *total = arg;
  for (int i = 0; i < 2000; i++) dev_parallel_for(pool, 100, 10, count_fn, total);
  return NULL;
}

START_TEST(test_pool_concurrent_callers) {
  _Atomic int64_t total = 0;
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, hammer, &total);
  hammer(&total);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  ck_assert_int_eq(atomic_load(&total), 4 * 2000 * 100);
}
END_TEST

/* ---- allocator ---- */

START_TEST(test_alloc_reuse_align) {
  DevAllocator *a = dev_allocator_new();
  ck_assert_ptr_nonnull(a);
  size_t sizes[] = {0, 1, 63, 64, 65, 1000, 4096, 100000, 300000, 1 << 20, 5000000, 40000000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    unsigned char *p = dev_buf_alloc(a, sizes[i]);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 64, 0);
    memset(p, 0xab, sizes[i]);
    dev_buf_free(a, p, sizes[i]);
    /* the same size class comes back from the cache */
    unsigned char *q = dev_buf_alloc(a, sizes[i]);
    ck_assert_ptr_eq(p, q);
    dev_buf_free(a, q, sizes[i]);
  }
  ck_assert_uint_gt(dev_allocator_cached_bytes(a), 40000000);
  /* a slightly smaller request in the same class reuses too */
  void *p = dev_buf_alloc(a, 39000000);
  ck_assert_uint_le(dev_allocator_cached_bytes(a), 10000000);
  dev_buf_free(a, p, 39000000);
  /* calloc zeroes a reused buffer */
  unsigned char *z = dev_buf_calloc(a, 1000);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(z[i], 0);
  dev_buf_free(a, z, 1000);
  dev_allocator_trim(a);
  ck_assert_uint_eq(dev_allocator_cached_bytes(a), 0);
  /* the cap: beyond it, buffers go back to the OS */
  dev_allocator_set_cap(a, 1 << 20);
  void *big = dev_buf_alloc(a, 4 << 20);
  dev_buf_free(a, big, 4 << 20);
  ck_assert_uint_eq(dev_allocator_cached_bytes(a), 0);
  void *small = dev_buf_alloc(a, 1000);
  dev_buf_free(a, small, 1000);
  ck_assert_uint_gt(dev_allocator_cached_bytes(a), 0);
  dev_buf_free(a, NULL, 10);
  dev_allocator_free(a);
  /* no allocator: plain allocation */
  void *r = dev_buf_alloc(NULL, 100);
  ck_assert_uint_eq((uintptr_t)r % 64, 0);
  dev_buf_free(NULL, r, 100);
}
END_TEST

/* Frees given back together in any order (as a collection's finalisers
 * run) are handed out again newest stamp first, each class on its own;
 * a plain dev_buf_free counts as newer than every stamp. */
START_TEST(test_alloc_newest_first) {
  DevAllocator *a = dev_allocator_new();
  enum { N = 40 };
  size_t sizes[] = {4096, 300000};
  for (size_t s = 0; s < 2; s++) {
    void *p[N], *other = dev_buf_alloc(a, 100);
    for (int i = 0; i < N; i++) p[i] = dev_buf_alloc(a, sizes[s]);
    for (int i = 0; i < N; i++) {   /* stamps i * 7919 % N: a permutation */
      int k = i * 7919 % N;
      dev_buf_free_stamped(a, p[k], sizes[s], (uint64_t)k);
      if (i == N / 2) dev_buf_free_stamped(a, other, 100, 1000);   /* another class, meanwhile */
    }
    for (int k = N - 1; k >= 0; k--) ck_assert_ptr_eq(dev_buf_alloc(a, sizes[s]), p[k]);
    /* a plain free goes on top of stamped ones */
    for (int k = 1; k < N; k++) dev_buf_free_stamped(a, p[k], sizes[s], (uint64_t)k);
    dev_buf_free(a, p[0], sizes[s]);
    ck_assert_ptr_eq(dev_buf_alloc(a, sizes[s]), p[0]);
    ck_assert_ptr_eq(dev_buf_alloc(a, sizes[s]), p[N - 1]);
  }
  /* cached_bytes, the cap and trim see frees still waiting */
  DevAllocator *b = dev_allocator_new();
  void *q = dev_buf_alloc(b, 100000);
  dev_buf_free_stamped(b, q, 100000, 5);
  ck_assert_uint_ge(dev_allocator_cached_bytes(b), 100000);
  q = dev_buf_alloc(b, 100000);
  dev_buf_free_stamped(b, q, 100000, 5);
  dev_allocator_trim(b);
  ck_assert_uint_eq(dev_allocator_cached_bytes(b), 0);
  dev_allocator_free(b);
  dev_allocator_free(a);
}
END_TEST

/* Buffers from 256 KiB to 2 MiB come from 2 MiB slabs of one class:
 * the buffers of a slab lie side by side in one aligned huge page, never
 * overlap, and each goes back to the OS (the slab's tail with the last). */
START_TEST(test_alloc_slabs) {
  DevAllocator *a = dev_allocator_new();
  size_t sizes[] = {300000, 1 << 20, 800000, 1700000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    unsigned char *p[8];
    for (int k = 0; k < 8; k++) {
      p[k] = dev_buf_alloc(a, n);
      ck_assert_ptr_nonnull(p[k]);
      ck_assert_uint_eq((uintptr_t)p[k] % 64, 0);
      memset(p[k], k + 1, n);
    }
    for (int k = 0; k < 8; k++)
      for (size_t j = 0; j < n; j += 4093) ck_assert_int_eq(p[k][j], k + 1);
    /* the second buffer of a new slab follows the first in its 2 MiB */
    uintptr_t slab = (uintptr_t)p[0] & ~(uintptr_t)((2 << 20) - 1);
    if (n <= (1 << 20)) {
      ck_assert_uint_eq(slab, (uintptr_t)p[0]);
      ck_assert_uint_eq((uintptr_t)p[1] & ~(uintptr_t)((2 << 20) - 1), slab);
    }
    for (int k = 0; k < 8; k++) dev_buf_free(a, p[k], n);
    ck_assert_uint_gt(dev_allocator_cached_bytes(a), 8 * n - 1);
    dev_allocator_trim(a);
    ck_assert_uint_eq(dev_allocator_cached_bytes(a), 0);
  }
  /* a cap of 0: each buffer goes back as it is freed, slab by slab */
  dev_allocator_set_cap(a, 0);
  void *q[5];
  for (int k = 0; k < 5; k++) q[k] = dev_buf_alloc(a, 1 << 19);
  for (int k = 0; k < 5; k++) {
    memset(q[k], 7, 1 << 19);
    dev_buf_free(a, q[k], 1 << 19);
  }
  ck_assert_uint_eq(dev_allocator_cached_bytes(a), 0);
  dev_allocator_free(a);
}
END_TEST

static void *alloc_worker(void *arg) {
  DevAllocator *a = arg;
  uint64_t s = (uint64_t)(uintptr_t)&s | 1;
  void *held[16] = {0};
  size_t held_n[16] = {0};
  for (int i = 0; i < 20000; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    int slot = (int)(s % 16);
    if (held[slot]) {
      unsigned char *p = held[slot];
      unsigned char tag = (unsigned char)held_n[slot];
      for (size_t k = 0; k < held_n[slot]; k += 97)
        if (p[k] != tag) return (void *)1;
      dev_buf_free(a, p, held_n[slot]);
      held[slot] = NULL;
    } else {
      size_t n = 1 + (s >> 20) % 600000;   /* (slabs from 256 KiB) */
      unsigned char *p = dev_buf_alloc(a, n);
      if (!p || (uintptr_t)p % 64) return (void *)1;
      memset(p, (unsigned char)n, n);
      held[slot] = p;
      held_n[slot] = n;
    }
  }
  for (int k = 0; k < 16; k++) dev_buf_free(a, held[k], held_n[k]);
  return NULL;
}

START_TEST(test_alloc_threads) {
  DevAllocator *a = dev_allocator_new();
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, alloc_worker, a);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(th[i], &r);
    ck_assert_ptr_null(r);
  }
  dev_allocator_free(a);
}
END_TEST

/* ---- gemm ---- */

#define DEFINE_NAIVE_GEMM(T, SUF)                                                        \
  static void naive_gemm_##SUF(bool ta, bool tb, int m, int n, int k, T alpha, const T *a, \
                               int lda, const T *b, int ldb, T beta, T *c, int ldc) {      \
    for (int i = 0; i < m; i++)                                                          \
      for (int j = 0; j < n; j++) {                                                      \
        long double s = 0;                                                               \
        for (int l = 0; l < k; l++)                                                      \
          s += (long double)(ta ? a[l * lda + i] : a[i * lda + l]) *                     \
               (tb ? b[j * ldb + l] : b[l * ldb + j]);                                   \
        c[i * ldc + j] = (T)(alpha * s + (beta == 0 ? 0 : beta * (long double)c[i * ldc + j])); \
      }                                                                                  \
  }
DEFINE_NAIVE_GEMM(float, f32)
DEFINE_NAIVE_GEMM(double, f64)

#define DEFINE_GEMM_CHECK(T, SUF, EPS)                                                   \
  static void check_gemm_##SUF(DevPool *p, bool ta, bool tb, int m, int n, int k, T alpha, \
                               T beta, int pad) {                                        \
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;              \
    int lda = ac + pad, ldb = bc + pad, ldc = n + pad;                                   \
    T *a = malloc(sizeof(T) * (size_t)(ar * lda + 1));                                   \
    T *b = malloc(sizeof(T) * (size_t)(br * ldb + 1));                                   \
    T *c = malloc(sizeof(T) * (size_t)(m * ldc + 1));                                    \
    T *r = malloc(sizeof(T) * (size_t)(m * ldc + 1));                                    \
    for (int i = 0; i < ar * lda; i++) a[i] = (T)urand(-1, 1);                           \
    for (int i = 0; i < br * ldb; i++) b[i] = (T)urand(-1, 1);                           \
    for (int i = 0; i < m * ldc; i++) c[i] = r[i] = beta == 0 ? (T)NAN : (T)urand(-1, 1); \
    dev_gemm_##SUF(p, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);             \
    naive_gemm_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, r, ldc);              \
    double tol = (k + 2) * EPS * 4;                                                      \
    int bad = -1;                                                                        \
    for (int i = 0; i < m * ldc && bad < 0; i++)                                         \
      if (i % ldc < n && !(fabs((double)c[i] - (double)r[i]) <= tol)) bad = i;           \
    ck_assert_msg(bad < 0, #SUF " gemm ta=%d tb=%d %dx%dx%d [%d]: %g vs %g", ta, tb, m, n, \
                  k, bad, bad < 0 ? 0.0 : (double)c[bad], bad < 0 ? 0.0 : (double)r[bad]); \
    free(a), free(b), free(c), free(r);                                                  \
  }
DEFINE_GEMM_CHECK(float, f32, 1.2e-7)
DEFINE_GEMM_CHECK(double, f64, 2.3e-16)

static const int gemm_shapes[][3] = {{1, 1, 1},    {3, 5, 7},    {17, 33, 65}, {64, 1, 64},
                                     {1, 70, 30},  {130, 70, 90}, {300, 257, 129},
                                     {40, 600, 50}, {5, 4, 0}, {784, 256, 64}, {100, 144, 3}};

START_TEST(test_gemm) {
  for (int own = 0; own < 2; own++) {
    dev_blas_set_own_threads(own);
    for (size_t s = 0; s < sizeof gemm_shapes / sizeof *gemm_shapes; s++)
      for (int t = 0; t < 4; t++) {
        const int *sh = gemm_shapes[s];
        bool ta = t & 1, tb = t & 2;
        check_gemm_f32(pool, ta, tb, sh[0], sh[1], sh[2], 1, 0, 0);
        check_gemm_f64(pool, ta, tb, sh[0], sh[1], sh[2], 1, 0, 0);
        check_gemm_f32(pool, ta, tb, sh[0], sh[1], sh[2], 0.5f, 2, 3);
        check_gemm_f64(NULL, ta, tb, sh[0], sh[1], sh[2], -1.5, 0.25, 1);
      }
  }
  dev_blas_set_own_threads(false);
  ck_assert_ptr_nonnull(strstr(dev_blas_info(), "core"));
}
END_TEST

/* devices/cpu/gemm_thin.c's A^T @ B (nt = 0) and A @ B^T (nt = 1), where
 * they apply, against each element summed in order by fmaf from zero,
 * bit for bit (OpenBLAS's bits), a zero sum +0, nothing written outside
 * C; and dev_gemm_f32, one thread or slabs, giving the same bits.  Rows
 * of 12 and columns of 32 with ends short of both, padded rows, and
 * products that underflow below zero. */
START_TEST(test_gemm_thin) {
  static const int shapes[2][5][3] = {
      {{784, 256, 64}, {100, 144, 3}, {64, 128, 1}, {77, 496, 128}, {130, 512, 17}},
      {{64, 256, 256}, {100, 144, 16}, {1, 128, 32}, {77, 784, 128}, {128, 208, 48}}};
  for (int nt = 0; nt < 2; nt++) {
    int applied = 0;
    for (size_t s = 0; s < 5; s++)
      for (int pad = 0; pad < 2; pad++)
        for (int tiny = 0; tiny < 2; tiny++) {
          int m = shapes[nt][s][0], n = shapes[nt][s][1], k = shapes[nt][s][2];
          /* A is k x m (tn) or m x k (nt), B k x n or n x k */
          int arows = nt ? m : k, acols = nt ? k : m, brows = nt ? n : k, bcols = nt ? k : n;
          int lda = acols + 3 * pad, ldb = bcols + 5 * pad, ldc = n + 7 * pad;
          float *a = malloc(sizeof(float) * (size_t)arows * lda), *b = malloc(sizeof(float) * (size_t)brows * ldb);
          float *c = malloc(sizeof(float) * (size_t)m * ldc), *r = malloc(sizeof(float) * (size_t)m * ldc);
          float *g = malloc(sizeof(float) * (size_t)m * ldc);
          for (int i = 0; i < arows * lda; i++) a[i] = tiny ? 1e-30f * (float)(i % 3) : (float)urand(-1, 1);
          for (int i = 0; i < brows * ldb; i++) b[i] = tiny ? -1e-30f : (float)urand(-1, 1);
          for (int i = 0; i < m * ldc; i++) c[i] = r[i] = g[i] = NAN;
          for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
              float acc = 0.0f;
              for (int l = 0; l < k; l++)
                acc = nt ? fmaf(a[i * lda + l], b[j * ldb + l], acc) : fmaf(a[l * lda + i], b[l * ldb + j], acc);
              r[i * ldc + j] = acc + 0.0f;
            }
          bool done = nt ? dev_cpu_sgemm_nt(m, n, k, a, lda, b, ldb, c, ldc)
                         : dev_cpu_sgemm_tn(m, n, k, a, lda, b, ldb, c, ldc);
          if (done) {
            applied++;
            ck_assert_msg(memcmp(c, r, sizeof(float) * (size_t)m * ldc) == 0, "gemm_thin nt=%d %dx%dx%d pad %d", nt,
                          m, n, k, pad);
            for (int threads = 0; threads < 2; threads++) {
              dev_gemm_f32(threads ? pool : NULL, !nt, nt, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, g, ldc);
              for (int i = 0; i < m; i++)
                ck_assert_msg(memcmp(g + i * ldc, r + i * ldc, sizeof(float) * (size_t)n) == 0,
                              "dev_gemm_f32 nt=%d %dx%dx%d pad %d threads %d row %d", nt, m, n, k, pad, threads, i);
            }
            if (tiny) ck_assert(r[0] == 0.0f && !signbit(r[0]) && !signbit(c[0]));
          }
          free(a), free(b), free(c), free(r), free(g);
        }
    /* where no AVX-512 runs, the kernels decline every shape */
    ck_assert(applied == 0 || applied == 20);
  }
  /* shapes they leave to OpenBLAS (nothing is read: empty buffers do) */
  static float x[1], y[1], z[1];
  ck_assert(!dev_cpu_sgemm_tn(200, 64, 64, x, 200, y, 64, z, 64));   /* n < 128 */
  ck_assert(!dev_cpu_sgemm_tn(100, 130, 64, x, 100, y, 130, z, 130)); /* n not a multiple of 16 */
  ck_assert(!dev_cpu_sgemm_tn(32, 128, 64, x, 32, y, 128, z, 128));   /* m < 64 */
  ck_assert(!dev_cpu_sgemm_tn(64, 128, 129, x, 64, y, 128, z, 128)); /* k > 128 */
  ck_assert(!dev_cpu_sgemm_nt(129, 128, 64, x, 64, y, 64, z, 128));  /* m > 128 */
  ck_assert(!dev_cpu_sgemm_nt(64, 128, 72, x, 72, y, 72, z, 128));   /* k not a multiple of 16 */
  ck_assert(!dev_cpu_sgemm_nt(64, 128, 272, x, 272, y, 272, z, 128)); /* k > 256 */
  ck_assert(!dev_cpu_sgemm_nt(64, 112, 64, x, 64, y, 64, z, 112));   /* n < 128 */
}
END_TEST

START_TEST(test_gemm_batched) {
  int batch = 7, m = 20, n = 30, k = 40;
  for (int t = 0; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    int lda = ta ? m : k, ldb = tb ? k : n;
    double *a = malloc(sizeof(double) * batch * m * k), *b = malloc(sizeof(double) * batch * k * n);
    double *c = malloc(sizeof(double) * batch * m * n), *r = malloc(sizeof(double) * m * n);
    float *af = malloc(sizeof(float) * batch * m * k), *bf = malloc(sizeof(float) * batch * k * n);
    float *cf = malloc(sizeof(float) * batch * m * n);
    for (int i = 0; i < batch * m * k; i++) af[i] = (float)(a[i] = urand(-1, 1));
    for (int i = 0; i < batch * k * n; i++) bf[i] = (float)(b[i] = urand(-1, 1));
    dev_gemm_batched_f64(pool, ta, tb, batch, m, n, k, 1, a, m * k, lda, b, k * n, ldb, 0, c,
                         m * n, n);
    dev_gemm_batched_f32(pool, ta, tb, batch, m, n, k, 1, af, m * k, lda, bf, k * n, ldb, 0,
                         cf, m * n, n);
    int wrong = 0;
    for (int q = 0; q < batch; q++) {
      naive_gemm_f64(ta, tb, m, n, k, 1, a + q * m * k, lda, b + q * k * n, ldb, 0, r, n);
      for (int i = 0; i < m * n; i++)
        wrong += fabs(c[q * m * n + i] - r[i]) > 1e-12 || fabs(cf[q * m * n + i] - r[i]) > 1e-4;
    }
    ck_assert_int_eq(wrong, 0);
    free(a), free(b), free(c), free(r), free(af), free(bf), free(cf);
  }
}
END_TEST

/* ---- vmath ---- */

/* Distance in ulps between two floats (NaNs equal each other). */
static int64_t ulps_f32(float a, float b) {
  if (isnan(a) && isnan(b)) return 0;
  if (isnan(a) || isnan(b)) return INT64_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
  return oa > ob ? oa - ob : ob - oa;
}

static bool close_f64(double a, double b, double rel) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return true;
  return fabs(a - b) <= rel * fabs(b) + 1e-300;
}

static double ref_unary(VmUnary op, double x) {
  switch (op) {
  case VM_NEG: return -x;
  case VM_ABS: return fabs(x);
  case VM_EXP: return exp(x);
  case VM_LOG: return log(x);
  case VM_SQRT: return sqrt(x);
  case VM_SIN: return sin(x);
  case VM_COS: return cos(x);
  case VM_TANH: return tanh(x);
  case VM_SIGMOID: return 1 / (1 + exp(-x));
  case VM_RELU: return x < 0 ? 0 : x;
  }
  return 0;
}

static float ref_unary_f32(VmUnary op, float x) {
  switch (op) {
  case VM_EXP: return expf(x);
  case VM_LOG: return logf(x);
  case VM_SQRT: return sqrtf(x);
  case VM_SIN: return sinf(x);
  case VM_COS: return cosf(x);
  case VM_TANH: return tanhf(x);
  /* 1/(1+expf(-x)) overflows early; the double formula is the truth */
  default: return (float)ref_unary(op, x);
  }
}

/* Inputs: a sweep over the op's natural range plus special values. */
static int64_t fill_inputs(VmUnary op, double *x, int64_t n) {
  static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, -1e-30, 1e-8, 88.0,
                                    89.0, -87.0, -104.0, 710.0, -745.0, 1e30, -1e30,
                                    INFINITY, -INFINITY, NAN, 3.14159265, 1e-45, 2e-38};
  int64_t ns = sizeof specials / sizeof *specials, i = 0;
  for (; i < ns && i < n; i++) x[i] = specials[i];
  for (; i < n; i++) {
    switch (op) {
    case VM_LOG:
    case VM_SQRT: x[i] = exp(urand(-80, 80)); break;
    case VM_SIN:
    case VM_COS: x[i] = i % 4 ? urand(-10, 10) : urand(-1e4, 1e4); break;
    case VM_EXP: x[i] = urand(-110, 90); break;
    default: x[i] = i % 3 ? urand(-10, 10) : urand(-0.01, 0.01); break;
    }
  }
  return n;
}

START_TEST(test_vmath_unary) {
  /* sizes around the vector widths, and one big enough to use the pool */
  int64_t sizes[] = {1, 15, 16, 17, 33, 1000, 200003};
  for (int op = VM_NEG; op <= VM_RELU; op++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      int64_t n = sizes[s];
      double *xd = malloc(sizeof(double) * n), *od = malloc(sizeof(double) * n);
      float *xf = malloc(sizeof(float) * n), *of = malloc(sizeof(float) * n);
      fill_inputs((VmUnary)op, xd, n);
      for (int64_t i = 0; i < n; i++) xf[i] = (float)xd[i];
      dev_unary_f64(pool, (VmUnary)op, od, xd, n);
      dev_unary_f32(pool, (VmUnary)op, of, xf, n);
      for (int64_t i = 0; i < n; i++) {
        double r = ref_unary((VmUnary)op, xd[i]);
        if (!close_f64(od[i], r, 1e-15))
          ck_abort_msg("f64 %s(%.17g) = %.17g, libm %.17g", dev_unary_name((VmUnary)op), xd[i],
                       od[i], r);
        float rf = ref_unary_f32((VmUnary)op, xf[i]);
        if (ulps_f32(of[i], rf) > 2)
          ck_abort_msg("f32 %s(%.9g) = %.9g, libm %.9g", dev_unary_name((VmUnary)op),
                       (double)xf[i], (double)of[i], (double)rf);
      }
      /* in place gives the same */
      dev_unary_f32(pool, (VmUnary)op, xf, xf, n);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; i++) wrong += ulps_f32(xf[i], of[i]) != 0;
      ck_assert_int_eq(wrong, 0);
      free(xd), free(od), free(xf), free(of);
    }
}
END_TEST

/* The error of y in f32 ulps of the truth t (a real number: under 1
 * means y is one of the two floats around t); NaN must give NaN, and a
 * result that should be inf or 0 exactly that. */
static double ulp_error_f32(float y, double t) {
  if (isnan(t)) return isnan(y) ? 0 : INFINITY;
  if (isnan(y)) return INFINITY;
  float rt = (float)t;
  if (isinf(rt) || isinf(y) || t == 0) return y == rt ? 0 : INFINITY;
  int e;
  frexp(t, &e);
  if (e - 1 < -126) e = -125;
  return fabs((double)y - t) / ldexp(1.0, e - 1 - 23);
}

/* Where the CPU runs Mist's own f32 kernels (AVX-512 or AVX2: devices/
 * cpu/vmathf.c), exp, log, tanh and sigmoid are within 1 ulp of the exact
 * value (libm's double function) for every argument: checked here on
 * every 4099th bit pattern of the 2^32 (about a million arguments, all
 * signs and binades, subnormals, infinities and NaNs among them), in
 * blocks of 4093 (whole vectors and a partial one).  bench/vmath_accuracy.c
 * checks all 2^32. */
START_TEST(test_vmath_f32_ulp) {
  static const VmUnary ops[] = {VM_EXP, VM_LOG, VM_TANH, VM_SIGMOID};
  enum { N = 4093, STRIDE = 4099 };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
    VmUnary op = ops[o];
    if (!dev_vec_unary(op, false, 512) && !dev_vec_unary(op, false, 256)) continue;
    uint64_t bits = 0;
    double worst = 0;
    float worst_x = 0;
    while (bits < ((uint64_t)1 << 32)) {
      int64_t n = 0;
      for (; n < N && bits < ((uint64_t)1 << 32); n++, bits += STRIDE) {
        uint32_t b = (uint32_t)bits;
        memcpy(&x[n], &b, 4);
      }
      dev_unary_f32(NULL, op, y, x, n);
      for (int64_t i = 0; i < n; i++) {
        double e = ulp_error_f32(y[i], ref_unary(op, (double)x[i]));
        if (e > worst) worst = e, worst_x = x[i];
      }
    }
    if (!(worst < 1))
      ck_abort_msg("f32 %s(%a) is %g ulp from the exact value", dev_unary_name(op), (double)worst_x, worst);
  }
  free(x), free(y);
}
END_TEST

#if defined(__x86_64__)
/* Mist's 8-lane f32 kernels (vmathf256.c, AVX2) give the 16-lane ones'
 * bits (vmathf.c, AVX-512) for every argument, NaN payloads included:
 * checked on a CPU with AVX-512F on every 4099th bit pattern of the
 * 2^32 (bench/vmath_accuracy.c checks all). */
typedef __attribute__((vector_size(64))) float F16;
typedef __attribute__((vector_size(32))) float F8;
__attribute__((target("avx512f"))) static void call16(DevVecFn fn, float *y, const float *x) {
  F16 v;
  memcpy(&v, x, sizeof v);
  v = ((F16(*)(F16))fn)(v);
  memcpy(y, &v, sizeof v);
}
__attribute__((target("avx2,fma"))) static void call8(DevVecFn fn, float *y, const float *x) {
  F8 v;
  memcpy(&v, x, sizeof v);
  v = ((F8(*)(F8))fn)(v);
  memcpy(y, &v, sizeof v);
}

START_TEST(test_vmath_f32_lanes) {
  static const VmUnary ops[] = {VM_EXP, VM_LOG, VM_TANH, VM_SIGMOID};
  enum { STRIDE = 4099 };
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
    DevVecFn f16 = dev_vec_unary(ops[o], false, 512), f8 = dev_vec_unary(ops[o], false, 256);
    if (!f16) return; /* no AVX-512F (or no libmvec) */
    ck_assert_ptr_nonnull(f8);
    float x[16], a[16], b[16];
    for (uint64_t bits = 0; bits < ((uint64_t)1 << 32); bits += 16 * STRIDE) {
      for (int i = 0; i < 16; i++) {
        uint32_t u = (uint32_t)(bits + (uint64_t)i * STRIDE);
        memcpy(&x[i], &u, 4);
      }
      call16(f16, a, x);
      call8(f8, b, x);
      call8(f8, b + 8, x + 8);
      for (int i = 0; i < 16; i++)
        if (memcmp(&a[i], &b[i], 4) != 0)
          ck_abort_msg("f32 %s(%a): 16 lanes give %a, 8 lanes %a", dev_unary_name(ops[o]), (double)x[i],
                       (double)a[i], (double)b[i]);
    }
  }
}
END_TEST
#endif

static double ref_binary(VmBinary op, double x, double y) {
  switch (op) {
  case VM_ADD: return x + y;
  case VM_SUB: return x - y;
  case VM_MUL: return x * y;
  case VM_DIV: return x / y;
  case VM_MAX: return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
  case VM_MIN: return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
  case VM_POW: return pow(x, y);
  }
  return 0;
}

static float ref_binary_f32(VmBinary op, float x, float y) {
  switch (op) {
  case VM_ADD: return x + y;
  case VM_SUB: return x - y;
  case VM_MUL: return x * y;
  case VM_DIV: return x / y;
  case VM_POW: return powf(x, y);
  default: return (float)ref_binary(op, x, y);
  }
}

START_TEST(test_vmath_binary) {
  int64_t sizes[] = {1, 17, 1000, 100001};
  for (int op = VM_ADD; op <= VM_POW; op++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      int64_t n = sizes[s];
      double *xd = malloc(sizeof(double) * n), *yd = malloc(sizeof(double) * n);
      double *od = malloc(sizeof(double) * n);
      float *xf = malloc(sizeof(float) * n), *yf = malloc(sizeof(float) * n);
      float *of = malloc(sizeof(float) * n);
      for (int64_t i = 0; i < n; i++) {
        xd[i] = op == VM_POW ? urand(0, 10) : urand(-100, 100);
        yd[i] = op == VM_POW ? urand(-8, 8) : urand(-100, 100);
        if (i == 3) xd[i] = NAN;
        if (i == 5) yd[i] = NAN;
        if (i == 7) yd[i] = 0;
        xf[i] = (float)xd[i], yf[i] = (float)yd[i];
      }
      dev_binary_f64(pool, (VmBinary)op, od, xd, yd, n);
      dev_binary_f32(pool, (VmBinary)op, of, xf, yf, n);
      for (int64_t i = 0; i < n; i++) {
        double r = ref_binary((VmBinary)op, xd[i], yd[i]);
        if (!close_f64(od[i], r, 1e-15))
          ck_abort_msg("f64 %s(%.17g, %.17g) = %.17g, want %.17g",
                       dev_binary_name((VmBinary)op), xd[i], yd[i], od[i], r);
        float rf = ref_binary_f32((VmBinary)op, xf[i], yf[i]);
        if (ulps_f32(of[i], rf) > 2)
          ck_abort_msg("f32 %s(%.9g, %.9g) = %.9g, want %.9g", dev_binary_name((VmBinary)op),
                       (double)xf[i], (double)yf[i], (double)of[i], (double)rf);
      }
      /* scalar on either side, and in place */
      for (int first = 0; first < 2; first++) {
        double sd = op == VM_POW ? 1.7 : -3.25;
        dev_binary_scalar_f64(pool, (VmBinary)op, od, xd, sd, n, first);
        dev_binary_scalar_f32(pool, (VmBinary)op, of, xf, (float)sd, n, first);
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; i++) {
          double r = first ? ref_binary((VmBinary)op, sd, xd[i]) : ref_binary((VmBinary)op, xd[i], sd);
          float rf = first ? ref_binary_f32((VmBinary)op, (float)sd, xf[i])
                           : ref_binary_f32((VmBinary)op, xf[i], (float)sd);
          wrong += !close_f64(od[i], r, 1e-15) || ulps_f32(of[i], rf) > 2;
        }
        ck_assert_msg(wrong == 0, "%s with a scalar %s: %lld wrong", dev_binary_name((VmBinary)op),
                      first ? "first" : "second", (long long)wrong);
      }
      dev_binary_f32(pool, (VmBinary)op, xf, xf, yf, n);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; i++)
        wrong += ulps_f32(xf[i], ref_binary_f32((VmBinary)op, (float)xd[i], yf[i])) > 2;
      ck_assert_int_eq(wrong, 0);
      free(xd), free(yd), free(od), free(xf), free(yf), free(of);
    }
}
END_TEST

/* x op (s * y) in one pass: each element as the two operations give it
 * (volatile: no fused multiply-add), bit for bit, in every order, over
 * the pool's split and in place over x or y. */
static bool same_f64(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }
static bool same_f32(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

START_TEST(test_vmath_scaled) {
  int64_t sizes[] = {1, 17, 1000, 1025, 100001};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int op = VM_ADD; op <= VM_SUB; op++)
      for (unsigned order = 0; order < 4; order++)
        for (int place = 0; place < 3; place++) {   /* a new array, over x, over y */
          int64_t n = sizes[si];
          double *xd = malloc(sizeof(double) * n), *yd = malloc(sizeof(double) * n);
          double *od = malloc(sizeof(double) * n), *wd = malloc(sizeof(double) * n);
          float *xf = malloc(sizeof(float) * n), *yf = malloc(sizeof(float) * n);
          float *of = malloc(sizeof(float) * n), *wf = malloc(sizeof(float) * n);
          double sd = 0.01;
          float sf = (float)sd;
          for (int64_t i = 0; i < n; i++) {
            xd[i] = urand(-100, 100), yd[i] = urand(-100, 100);
            if (i == 3) xd[i] = NAN;
            if (i == 5) yd[i] = INFINITY;
            xf[i] = (float)xd[i], yf[i] = (float)yd[i];
            volatile double td = order & DEV_SCALAR_LAST ? yd[i] * sd : sd * yd[i];
            volatile float tf = order & DEV_SCALAR_LAST ? yf[i] * sf : sf * yf[i];
            double a = order & DEV_PRODUCT_FIRST ? td : xd[i], b = order & DEV_PRODUCT_FIRST ? xd[i] : td;
            float af = order & DEV_PRODUCT_FIRST ? tf : xf[i], bf = order & DEV_PRODUCT_FIRST ? xf[i] : tf;
            wd[i] = op == VM_ADD ? a + b : a - b;
            wf[i] = op == VM_ADD ? af + bf : af - bf;
          }
          double *outd = place == 1 ? xd : place == 2 ? yd : od;
          float *outf = place == 1 ? xf : place == 2 ? yf : of;
          dev_binary_scaled_f64(pool, (VmBinary)op, outd, xd, sd, yd, n, order);
          dev_binary_scaled_f32(pool, (VmBinary)op, outf, xf, sf, yf, n, order);
          int64_t wrong = 0;
          for (int64_t i = 0; i < n; i++) wrong += !same_f64(outd[i], wd[i]) || !same_f32(outf[i], wf[i]);
          ck_assert_msg(wrong == 0, "%s, order %u, n %lld, out %d: %lld elements differ",
                        dev_binary_name((VmBinary)op), order, (long long)n, place, (long long)wrong);
          free(xd), free(yd), free(od), free(wd), free(xf), free(yf), free(of), free(wf);
        }
}
END_TEST

/* dev_sum_short gives dev_sum's bits on every length it takes: values
 * of mixed signs and magnitudes (where the order of the additions
 * shows) and signed zeros (0.0 + -0.0 is 0.0) */
START_TEST(test_sum_short) {
  float x[DEV_SUM_SHORT];
  double xd[DEV_SUM_SHORT];
  for (int trial = 0; trial < 2000; trial++) {
    for (int j = 0; j < DEV_SUM_SHORT; j++) {
      double v = urand(-1, 1) * pow(10.0, (double)(rand() % 17 - 8));
      if (rand() % 8 == 0) v = rand() % 2 ? -0.0 : 0.0;
      xd[j] = v, x[j] = (float)v;
    }
    for (int64_t n = 0; n <= DEV_SUM_SHORT; n++) {
      double a = dev_sum_short_f32(x, n), b = dev_sum_f32(pool, x, n);
      ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "f32, n %lld: %a against %a", (long long)n, a, b);
      a = dev_sum_short_f64(xd, n), b = dev_sum_f64(pool, xd, n);
      ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "f64, n %lld: %a against %a", (long long)n, a, b);
    }
  }
}
END_TEST

START_TEST(test_sum_accuracy) {
  int64_t n = 10000000;
  float *x = malloc(sizeof(float) * n);
  double *xd = malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++) x[i] = 0.1f, xd[i] = 0.1;
  double s = dev_sum_f32(pool, x, n);
  ck_assert_double_eq_tol(s, (double)n * (double)0.1f, 1e-6);
  ck_assert_double_eq_tol(s, 1e6, 0.02);
  double sd = dev_sum_f64(pool, xd, n);
  ck_assert_double_eq_tol(sd, 1e6, 1e-7);
  /* the result does not depend on the number of threads */
  for (int64_t i = 0; i < n; i++) xd[i] = urand(-1, 1), x[i] = (float)xd[i];
  DevPool *one = dev_pool_new(1), *three = dev_pool_new(3);
  ck_assert(dev_sum_f64(one, xd, n) == dev_sum_f64(three, xd, n));
  ck_assert(dev_sum_f64(pool, xd, n) == dev_sum_f64(NULL, xd, n));
  ck_assert(dev_sum_f32(one, x, n) == dev_sum_f32(three, x, n));
  dev_pool_free(one), dev_pool_free(three);
  /* small and empty */
  ck_assert_double_eq(dev_sum_f32(pool, x, 0), 0);
  float three_f[] = {1, 2, 3.5f};
  ck_assert_double_eq(dev_sum_f32(pool, three_f, 3), 6.5);
  free(x), free(xd);
}
END_TEST

START_TEST(test_max_min) {
  int64_t sizes[] = {1, 5, 16, 100, 70001, 1000000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    int64_t n = sizes[s];
    float *x = malloc(sizeof(float) * n);
    double *xd = malloc(sizeof(double) * n);
    double mx = -INFINITY, mn = INFINITY;
    for (int64_t i = 0; i < n; i++) {
      xd[i] = urand(-1000, 1000);
      x[i] = (float)xd[i];
      if (xd[i] > mx) mx = xd[i];
      if (xd[i] < mn) mn = xd[i];
    }
    ck_assert(dev_max_f64(pool, xd, n) == mx);
    ck_assert(dev_min_f64(pool, xd, n) == mn);
    ck_assert(dev_max_f32(pool, x, n) == (float)mx);
    ck_assert(dev_min_f32(pool, x, n) == (float)mn);
    x[n / 2] = NAN, xd[n - 1] = NAN;
    ck_assert(isnan(dev_max_f32(pool, x, n)));
    ck_assert(isnan(dev_min_f32(pool, x, n)));
    ck_assert(isnan(dev_max_f64(pool, xd, n)));
    ck_assert(isnan(dev_min_f64(pool, xd, n)));
    free(x), free(xd);
  }
  ck_assert(dev_max_f32(pool, NULL, 0) == -INFINITY);
  ck_assert(dev_min_f64(pool, NULL, 0) == INFINITY);
}
END_TEST

/* ---- conv2d and maxpool ---- */

#define DEFINE_NAIVE_CONV(T, SUF)                                                           \
  static void naive_conv_##SUF(const T *x, int n, int cin, int h, int w, const T *wt,       \
                               int cout, int kh, int kw, const T *bias, int sh, int sw,     \
                               int ph, int pw, T *out) {                                    \
    int ho = (h + 2 * ph - kh) / sh + 1, wo = (w + 2 * pw - kw) / sw + 1;                   \
    for (int b = 0; b < n; b++)                                                             \
      for (int co = 0; co < cout; co++)                                                     \
        for (int oh = 0; oh < ho; oh++)                                                     \
          for (int ow = 0; ow < wo; ow++) {                                                 \
            double s = bias ? bias[co] : 0;                                                 \
            for (int c = 0; c < cin; c++)                                                   \
              for (int i = 0; i < kh; i++)                                                  \
                for (int j = 0; j < kw; j++) {                                              \
                  int ih = oh * sh - ph + i, iw = ow * sw - pw + j;                         \
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;                     \
                  s += (double)x[((b * cin + c) * h + ih) * w + iw] *                       \
                       wt[((co * cin + c) * kh + i) * kw + j];                              \
                }                                                                           \
            out[((b * cout + co) * ho + oh) * wo + ow] = (T)s;                              \
          }                                                                                 \
  }
DEFINE_NAIVE_CONV(float, f32)
DEFINE_NAIVE_CONV(double, f64)

START_TEST(test_conv2d) {
  /* n cin h w cout kh kw sh sw ph pw */
  static const int cases[][11] = {
      {1, 1, 5, 5, 1, 3, 3, 1, 1, 0, 0},   {2, 3, 8, 7, 4, 3, 3, 1, 1, 1, 1},
      {5, 2, 9, 10, 3, 3, 2, 2, 1, 1, 0},  {3, 4, 6, 6, 5, 1, 1, 1, 1, 0, 0},
      {4, 3, 11, 9, 2, 5, 5, 2, 3, 2, 1},  {64, 1, 28, 28, 32, 3, 3, 1, 1, 1, 1},
      {1, 8, 16, 16, 16, 3, 3, 1, 1, 1, 1}, {2, 2, 4, 4, 3, 1, 1, 2, 2, 0, 0},
      {2, 1, 3, 3, 2, 3, 3, 1, 1, 2, 2}};
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    const int *c = cases[t];
    int n = c[0], cin = c[1], h = c[2], w = c[3], cout = c[4], kh = c[5], kw = c[6];
    int sh = c[7], sw = c[8], ph = c[9], pw = c[10];
    int ho = (h + 2 * ph - kh) / sh + 1, wo = (w + 2 * pw - kw) / sw + 1;
    ck_assert_int_eq(dev_conv_out_size(h, kh, sh, ph), ho);
    size_t nx = (size_t)n * cin * h * w, nw = (size_t)cout * cin * kh * kw;
    size_t no = (size_t)n * cout * ho * wo;
    double *x = malloc(sizeof(double) * nx), *wt = malloc(sizeof(double) * nw);
    double *bias = malloc(sizeof(double) * cout), *out = malloc(sizeof(double) * no);
    double *ref = malloc(sizeof(double) * no);
    float *xf = malloc(sizeof(float) * nx), *wf = malloc(sizeof(float) * nw);
    float *bf = malloc(sizeof(float) * cout), *of = malloc(sizeof(float) * no);
    float *rf = malloc(sizeof(float) * no);
    for (size_t i = 0; i < nx; i++) xf[i] = (float)(x[i] = urand(-1, 1));
    for (size_t i = 0; i < nw; i++) wf[i] = (float)(wt[i] = urand(-1, 1));
    for (int i = 0; i < cout; i++) bf[i] = (float)(bias[i] = urand(-1, 1));
    for (int withbias = 0; withbias < 2; withbias++)
      for (int usepool = 0; usepool < 2; usepool++) {
        DevPool *p = usepool ? pool : NULL;
        dev_conv2d_f64(p, x, n, cin, h, w, wt, cout, kh, kw, withbias ? bias : NULL, sh, sw,
                       ph, pw, out);
        naive_conv_f64(x, n, cin, h, w, wt, cout, kh, kw, withbias ? bias : NULL, sh, sw, ph,
                       pw, ref);
        size_t wrong = 0;
        for (size_t i = 0; i < no; i++) wrong += !(fabs(out[i] - ref[i]) <= 1e-12);
        ck_assert_msg(wrong == 0, "f64 conv case %zu: %zu wrong", t, wrong);
        dev_conv2d_f32(p, xf, n, cin, h, w, wf, cout, kh, kw, withbias ? bf : NULL, sh, sw,
                       ph, pw, of);
        naive_conv_f32(xf, n, cin, h, w, wf, cout, kh, kw, withbias ? bf : NULL, sh, sw, ph,
                       pw, rf);
        for (size_t i = 0; i < no; i++)
          if (!(fabsf(of[i] - rf[i]) <= 1e-5f * (cin * kh * kw + 1)))
            ck_abort_msg("f32 conv case %zu [%zu]: %g vs %g", t, i, (double)of[i], (double)rf[i]);
      }
    free(x), free(wt), free(bias), free(out), free(ref);
    free(xf), free(wf), free(bf), free(of), free(rf);
  }
}
END_TEST

START_TEST(test_maxpool2d) {
  /* n c h w kh kw sh sw ph pw */
  static const int cases[][10] = {{1, 1, 4, 4, 2, 2, 2, 2, 0, 0}, {2, 3, 7, 9, 3, 3, 2, 2, 1, 1},
                                  {3, 2, 5, 6, 2, 3, 1, 2, 1, 1}, {64, 32, 28, 28, 2, 2, 2, 2, 0, 0},
                                  {2, 2, 9, 8, 3, 2, 1, 3, 1, 1},  {1, 3, 5, 5, 5, 5, 1, 1, 2, 2}};
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    const int *c = cases[t];
    int n = c[0], ch = c[1], h = c[2], w = c[3], kh = c[4], kw = c[5], sh = c[6], sw = c[7];
    int ph = c[8], pw = c[9];
    int ho = (h + 2 * ph - kh) / sh + 1, wo = (w + 2 * pw - kw) / sw + 1;
    size_t nx = (size_t)n * ch * h * w, no = (size_t)n * ch * ho * wo;
    float *x = malloc(sizeof(float) * nx), *out = malloc(sizeof(float) * no);
    double *xd = malloc(sizeof(double) * nx), *outd = malloc(sizeof(double) * no);
    int64_t *am = malloc(sizeof(int64_t) * no), *amd = malloc(sizeof(int64_t) * no);
    for (size_t i = 0; i < nx; i++) x[i] = (float)(xd[i] = urand(-10, 10));
    x[0] = NAN, xd[0] = NAN, x[1] = NAN, xd[1] = NAN;
    x[nx - 1] = -INFINITY, xd[nx - 1] = -INFINITY;
    size_t wrong = 0;
    dev_maxpool2d_f32(pool, x, n, ch, h, w, kh, kw, sh, sw, ph, pw, out, am);
    dev_maxpool2d_f64(NULL, xd, n, ch, h, w, kh, kw, sh, sw, ph, pw, outd, amd);
    for (int q = 0; q < n * ch; q++)
      for (int oh = 0; oh < ho; oh++)
        for (int ow = 0; ow < wo; ow++) {
          double best = -INFINITY;
          int64_t bi = -1;
          for (int i = 0; i < kh; i++)
            for (int j = 0; j < kw; j++) {
              int ih = oh * sh - ph + i, iw = ow * sw - pw + j;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              double v = xd[(size_t)q * h * w + ih * w + iw];
              if (bi < 0) bi = ih * w + iw;   /* PyTorch: the first element, then */
              if (v > best || isnan(v)) best = v, bi = ih * w + iw;   /* larger or NaN */
            }
          size_t o = (size_t)q * ho * wo + oh * wo + ow;
          if (isnan(best))
            wrong += !(isnan(out[o]) && isnan(outd[o]));
          else
            wrong += outd[o] != best || out[o] != (float)best;
          wrong += am[o] != bi || amd[o] != bi;
        }
    ck_assert_msg(wrong == 0, "maxpool case %zu: %zu wrong", t, wrong);
    /* argmax is optional (a different loop): the same maxima without it */
    float *out2 = malloc(sizeof(float) * no);
    double *outd2 = malloc(sizeof(double) * no);
    dev_maxpool2d_f32(pool, x, n, ch, h, w, kh, kw, sh, sw, ph, pw, out2, NULL);
    dev_maxpool2d_f64(pool, xd, n, ch, h, w, kh, kw, sh, sw, ph, pw, outd2, NULL);
    for (size_t o = 0; o < no; o++) {
      wrong += isnan(out[o]) ? !isnan(out2[o]) : out2[o] != out[o];
      wrong += isnan(outd[o]) ? !isnan(outd2[o]) : outd2[o] != outd[o];
    }
    ck_assert_msg(wrong == 0, "maxpool case %zu without argmax: %zu wrong", t, wrong);
    free(out2), free(outd2);
    free(x), free(out), free(xd), free(outd), free(am), free(amd);
  }
}
END_TEST

/* ---- strided copies ---- */

START_TEST(test_copy_strided) {
  /* a 3-d array a[4][5][6] of doubles */
  int64_t shape[3] = {4, 5, 6}, cs[3];
  dev_contiguous_strides(3, shape, cs);
  ck_assert(cs[0] == 30 && cs[1] == 6 && cs[2] == 1);
  double a[120], t[120];
  for (int i = 0; i < 120; i++) a[i] = i;
  /* transpose to b[6][5][4]: b[k][j][i] = a[i][j][k] */
  int64_t tshape[3] = {6, 5, 4}, ts[3], xs[3] = {1, 6, 30};
  dev_contiguous_strides(3, tshape, ts);
  dev_copy_strided(pool, sizeof(double), t, ts, a, xs, 3, tshape);
  int wrong = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 6; k++) wrong += t[(k * 5 + j) * 4 + i] != a[(i * 5 + j) * 6 + k];
  ck_assert_int_eq(wrong, 0);
  /* broadcast a row (stride 0) and reverse it (negative stride), f32 */
  float row[7] = {1, 2, 3, 4, 5, 6, 7}, m[3 * 7];
  int64_t bshape[2] = {3, 7}, bs[2], rs[2] = {0, -1};
  dev_contiguous_strides(2, bshape, bs);
  dev_copy_strided(NULL, sizeof(float), m, bs, row + 6, rs, 2, bshape);
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 7; k++) ck_assert(m[r * 7 + k] == row[6 - k]);
  /* a big slice, through the pool, bytes and an odd element size */
  int64_t n = 600, big[2] = {n, n}, src_s[2] = {2 * n, 2}, dst_s[2];
  dev_contiguous_strides(2, big, dst_s);
  uint8_t *src = malloc((size_t)(2 * n * 2 * n)), *dst = malloc((size_t)(n * n));
  for (int64_t i = 0; i < 4 * n * n; i++) src[i] = (uint8_t)(i * 7);
  dev_copy_strided(pool, 1, dst, dst_s, src, src_s, 2, big);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) bad += dst[i * n + j] != src[i * 2 * n + 2 * j];
  ck_assert_int_eq(bad, 0);
  free(src), free(dst);
  char three[4][3], out3[4][3];
  for (int i = 0; i < 12; i++) three[i / 3][i % 3] = (char)i;
  int64_t s1[1] = {1}, shape1[1] = {4}, rev[1] = {-1};
  dev_copy_strided(pool, 3, out3, s1, three[3], rev, 1, shape1);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(out3[i][0], three[3 - i][0]);
  /* nd = 0: one element */
  double one = 0, src1 = 42;
  dev_copy_strided(pool, sizeof(double), &one, NULL, &src1, NULL, 0, NULL);
  ck_assert(one == 42);
}
END_TEST

static Suite *devices_suite(void) {
  Suite *s = suite_create("devices");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_dtype);
  tcase_add_test(tc, test_pool_sums);
  tcase_add_test(tc, test_pool_nested);
  tcase_add_test(tc, test_pool_many_small);
  tcase_add_test(tc, test_pool_alternating_jobs);
  tcase_add_test(tc, test_pool_concurrent_callers);
  tcase_add_test(tc, test_alloc_reuse_align);
  tcase_add_test(tc, test_alloc_threads);
  tcase_add_test(tc, test_alloc_slabs);
  tcase_add_test(tc, test_alloc_newest_first);
  tcase_add_test(tc, test_gemm);
  tcase_add_test(tc, test_gemm_thin);
  tcase_add_test(tc, test_gemm_batched);
  tcase_add_test(tc, test_vmath_unary);
  tcase_add_test(tc, test_vmath_f32_ulp);
#if defined(__x86_64__)
  tcase_add_test(tc, test_vmath_f32_lanes);
#endif
  tcase_add_test(tc, test_vmath_binary);
  tcase_add_test(tc, test_vmath_scaled);
  tcase_add_test(tc, test_sum_accuracy);
  tcase_add_test(tc, test_sum_short);
  tcase_add_test(tc, test_max_min);
  tcase_add_test(tc, test_conv2d);
  tcase_add_test(tc, test_maxpool2d);
  tcase_add_test(tc, test_copy_strided);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(devices_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
