/* devices/blas.c: matrix products through OpenBLAS (blas.h); the only
 * file in Mist that includes <cblas.h>.
 *
 * Threads: Mist has one thread pool, and BLAS must never run its own
 * threads while pool tasks run.  Two ways to use several cores:
 * OpenBLAS's own threads, one per pool worker, while the call holds the
 * pool's lock (no pool task runs: the cores are BLAS's), or slabs: C cut
 * into one slab of rows or columns per pool worker, each a call of a
 * single-threaded OpenBLAS.  Code that calls BLAS inside pool tasks
 * (conv, batched gemm) first makes OpenBLAS single-threaded
 * (dev_blas_single_thread); the next product on its own threads sets
 * the count back.  Which way a product goes:
 *   - thin products, a side of at most THIN_SIDE (128): slabs.  That is
 *     a minibatch's products (m = the batch, or k = the batch in a
 *     weight gradient x.T @ d).  OpenBLAS's threads scale poorly there:
 *     measured on 2 cores (AMD EPYC, SkylakeX kernels, f32, the
 *     products of bench/grad/mlp2 at batch 64, warm pool, us):
 *     784x256 @ k=64 (x.T @ d) 1 thread 262, OpenBLAS's 2 threads 326,
 *     slabs 146; 256x256 @ k=64 86 / 113 / 58; 64x256 @ k=784 267 /
 *     203 / 159; 64x256 @ k=256 87 / 75 / 64.  Each slab packs the whole
 *     operand it does not cut, which costs little when that operand is
 *     thin.  Neither way keeps the one-thread bits everywhere (OpenBLAS's
 *     kernels treat a tile at an edge differently), but slabs mostly do
 *     (K is never split): of 2172 thin shapes (sides from 16 to 784,
 *     four transpositions), on 2 threads slabs changed the last bits of
 *     85 f32 and 253 f64 products, OpenBLAS's threads 418 and 1050;
 *     mlp2's products at batch 64 keep them.  mlp2's eager training step
 *     on 2 threads went 0.90 -> 0.66 ms with it (0.62 with pool.c's
 *     longer spin; its forward 0.285 -> 0.235 ms).
 *   - other products: OpenBLAS's threads (the default), or slabs too
 *     when MIST_BLAS_THREADS=pool.  Measured (bench/matmul.c, Xeon,
 *     AVX-512): on 1 core both match OpenBLAS; on 2 threads the slabs
 *     lose half the speed at 256 f32, and on 16 threads 30-60%
 *     everywhere (each slab packs all of B, and OpenBLAS's threads share
 *     packed panels), while OpenBLAS's own threads reach 0.93-1.06 of
 *     OpenBLAS called directly.  (On the 2-core EPYC, at load 9, slabs
 *     against OpenBLAS's threads: f32 256 0.77x, 1024 1.13x; f64 256
 *     1.51x, 1024 1.08x: mixed, and only 2 threads, so the default
 *     stays until a quiet many-core machine decides it.)
 * Slabs wait for the pool's workers: a worker asleep when a product
 * starts joins ~20 us late (pool.c spins long enough that a training
 * step's workers stay awake).
 *
 * Own kernels: the f32 products of a minibatch's backward pass, x^T @ d
 * with a short shared side and d @ w^T with few rows, run
 * devices/cpu/gemm_thin.c's AVX-512 kernels, no packing (or one
 * transposed panel), with OpenBLAS's bits: 0.82x to 0.87x OpenBLAS's
 * time for an MLP's 784x256 and 256x256 weight gradients at batch 64,
 * 0.64x to 0.78x for 64x256 @ k=256.  They are tried per call, so slabs
 * use them too.
 *
 * Loading: OpenBLAS is opened with dlopen on the first product, not
 * linked: its thousands of symbols cost a few milliseconds of relocation
 * at every start-up, and most programs never multiply matrices.  Without
 * a loadable OpenBLAS the products run as plain loops (correct, slow).
 *
 * Core type: the machines set OPENBLAS_CORETYPE=Haswell, which holds a
 * DYNAMIC_ARCH OpenBLAS to its AVX2 kernels (~108 GFLOP/s f32 per core)
 * on CPUs with AVX-512, where its SkylakeX kernels reach ~195 (measured:
 * 1.3-1.8x on 2 cores).  OpenBLAS reads the variable once, when it is
 * loaded, so just before dlopen the variable is set from the CPU's
 * features (AVX-512 F/CD/BW/DQ/VL: SkylakeX; AVX2 and FMA: Haswell) or
 * from MIST_BLAS_CORETYPE (a core name, or "env" to keep the
 * environment's choice), and put back as it was right after, so child
 * processes see what we saw. */
#define _GNU_SOURCE
#include "devices/blas.h"

#include "devices/cpu/gemm_thin.h"

#include <cblas.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*SgemmFn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, float,
                        const float *, int, const float *, int, float, float *, int);
typedef void (*DgemmFn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, double,
                        const double *, int, const double *, int, double, double *, int);

/* What the loaded library provides; a process-wide table, filled once
 * (the library itself is process-wide state). */
static struct {
  pthread_once_t once;
  SgemmFn sgemm;
  DgemmFn dgemm;
  void (*set_threads)(int);
  int (*get_threads)(void);
  char *(*config)(void);
  char *(*corename)(void);
} blas = {PTHREAD_ONCE_INIT};

static const char *cpu_coretype(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return NULL;
}

static void load_blas(void) {
  const char *want = getenv("MIST_BLAS_CORETYPE");
  char *old = getenv("OPENBLAS_CORETYPE");
  char *saved = old ? strdup(old) : NULL;
  bool set = false;
  if (!(want && strcmp(want, "env") == 0)) {
    if (!want || !*want) want = cpu_coretype();
    if (want) set = setenv("OPENBLAS_CORETYPE", want, 1) == 0;
  }
  static const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblas.so.3"};
  void *h = NULL;
  for (size_t i = 0; !h && i < sizeof names / sizeof *names; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (set) {
    if (saved) setenv("OPENBLAS_CORETYPE", saved, 1);
    else unsetenv("OPENBLAS_CORETYPE");
  }
  free(saved);
  if (!h) return;
  blas.sgemm = (SgemmFn)dlsym(h, "cblas_sgemm");
  blas.dgemm = (DgemmFn)dlsym(h, "cblas_dgemm");
  blas.set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  blas.get_threads = (int (*)(void))dlsym(h, "openblas_get_num_threads");
  blas.config = (char *(*)(void))dlsym(h, "openblas_get_config");
  blas.corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
}

static void ensure_blas(void) { pthread_once(&blas.once, load_blas); }

static int get_num_threads(void) { return blas.get_threads ? blas.get_threads() : 1; }
static void set_num_threads(int n) {
  if (blas.set_threads) blas.set_threads(n);
}

const char *dev_blas_info(void) {
  static char buf[256];
  ensure_blas();
  if (!buf[0]) {
    if (blas.config && blas.corename)
      snprintf(buf, sizeof buf, "%s; core %s", blas.config(), blas.corename());
    else
      snprintf(buf, sizeof buf, "%s", blas.sgemm ? "cblas" : "no BLAS found: plain loops");
  }
  return buf;
}

/* ---- threading -------------------------------------------------------- */

static _Atomic int own_threads = -1;   /* -1: read MIST_BLAS_THREADS on first use */

static bool use_own_threads(void) {
  int v = atomic_load_explicit(&own_threads, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("MIST_BLAS_THREADS");
    v = !(e && strcmp(e, "pool") == 0);
    atomic_store_explicit(&own_threads, v, memory_order_relaxed);
  }
  return v;
}

void dev_blas_set_own_threads(bool own) {
  atomic_store_explicit(&own_threads, own ? 1 : 0, memory_order_relaxed);
}

void dev_blas_single_thread(void) {
  ensure_blas();
  if (get_num_threads() != 1) set_num_threads(1);
}

/* Products below this many multiply-adds run on one thread. */
#define PAR_MNK ((int64_t)1 << 18)

/* A product with a side this short (a minibatch's rows, or K = the
 * batch in a weight gradient) runs as slabs over the pool in either
 * mode: OpenBLAS's own threads scale poorly there (opening comment). */
#define THIN_SIDE 128

static bool thin(int64_t m, int64_t n, int64_t k) {
  return m <= THIN_SIDE || n <= THIN_SIDE || k <= THIN_SIDE;
}

/* ---- gemm, written once for both types ------------------------------- */

typedef struct {
  bool ta, tb, split_rows;
  int64_t m, n, k, lda, ldb, ldc, parts;
  const void *a, *b;
  void *c;
  double alpha, beta;
} GemmJob;

/* Products that kernels of Mist's own compute faster than OpenBLAS,
 * with OpenBLAS's bits (devices/cpu/gemm_thin.c): f32 A^T @ B with a
 * short k (a weight's gradient in a minibatch) and A @ B^T with few rows
 * (an input's sensitivity).  true when done. */
static bool own_kernel_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (alpha != 1.0f || beta != 0.0f || ta == tb) return false;
  return ta ? dev_cpu_sgemm_tn(m, n, k, a, lda, b, ldb, c, ldc) : dev_cpu_sgemm_nt(m, n, k, a, lda, b, ldb, c, ldc);
}
static bool own_kernel_f64(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                           int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
  (void)c, (void)ldc;
  return false;
}

#define DEFINE_GEMM(T, SUF, CBLAS)                                                        \
  static void naive_##SUF(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,     \
                          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,  \
                          int64_t ldc) {                                                   \
    for (int64_t i = 0; i < m; i++)                                                        \
      for (int64_t j = 0; j < n; j++) {                                                    \
        T s = 0;                                                                           \
        for (int64_t l = 0; l < k; l++)                                                    \
          s += (ta ? a[l * lda + i] : a[i * lda + l]) * (tb ? b[j * ldb + l] : b[l * ldb + j]); \
        c[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * c[i * ldc + j]);              \
      }                                                                                    \
  }                                                                                        \
                                                                                           \
  /* One call into OpenBLAS, or the plain loops where its int would overflow. */          \
  static void call_##SUF(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,      \
                         const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,   \
                         int64_t ldc) {                                                    \
    if (m == 0 || n == 0) return;                                                          \
    if (k == 0) {                                                                          \
      for (int64_t i = 0; i < m; i++)                                                      \
        for (int64_t j = 0; j < n; j++)                                                    \
          c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j];                          \
      return;                                                                              \
    }                                                                                      \
    if (own_kernel_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;    \
    ensure_blas();                                                                         \
    if (!blas.CBLAS || m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||       \
        ldb > INT_MAX || ldc > INT_MAX) {                                                  \
      naive_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                   \
      return;                                                                              \
    }                                                                                      \
    /* cblas insists on ld >= the row length even where a row is never used. */          \
    int64_t ra = ta ? m : k, rb = tb ? k : n;                                              \
    if (lda < ra) lda = ra;                                                                \
    if (ldb < rb) ldb = rb;                                                                \
    blas.CBLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, \
          (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);     \
  }                                                                                        \
                                                                                           \
  static void slab_##SUF(void *ctx, int64_t begin, int64_t end) {                         \
    GemmJob *g = ctx;                                                                      \
    const T *a = g->a, *b = g->b;                                                          \
    T *c = g->c;                                                                           \
    for (int64_t part = begin; part < end; part++) {                                       \
      int64_t len = g->split_rows ? g->m : g->n;                                           \
      /* slab edges on multiples of 16 rows/columns */                                     \
      int64_t units = (len + 15) / 16;                                                     \
      int64_t lo = units * part / g->parts * 16, hi = units * (part + 1) / g->parts * 16;  \
      if (hi > len) hi = len;                                                              \
      if (lo >= hi) continue;                                                              \
      if (g->split_rows)                                                                   \
        call_##SUF(g->ta, g->tb, hi - lo, g->n, g->k, (T)g->alpha,                         \
                   g->ta ? a + lo : a + lo * g->lda, g->lda, b, g->ldb, (T)g->beta,        \
                   c + lo * g->ldc, g->ldc);                                               \
      else                                                                                 \
        call_##SUF(g->ta, g->tb, g->m, hi - lo, g->k, (T)g->alpha, a, g->lda,              \
                   g->tb ? b + lo * g->ldb : b + lo, g->ldb, (T)g->beta, c + lo, g->ldc);  \
    }                                                                                      \
  }                                                                                        \
                                                                                           \
  void dev_gemm_##SUF(DevPool *p, bool ta, bool tb, int64_t m, int64_t n, int64_t k,      \
                      T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,   \
                      T *c, int64_t ldc) {                                                 \
    if (m <= 0 || n <= 0) return;                                                          \
    int threads = dev_pool_size(p);                                                        \
    bool big = threads > 1 && m * n * (k > 0 ? k : 1) >= PAR_MNK;                          \
    bool own = use_own_threads() && !thin(m, n, k);                                        \
    if (dev_pool_in_task() || threads < 2 || (!big && !own)) {                             \
      /* Inside a pool task the region's owner made OpenBLAS single-threaded; a            \
       * pool of one thread (MIST_NUM_THREADS=1) wants one BLAS thread too. */             \
      if (!dev_pool_in_task()) dev_blas_single_thread();                                   \
      call_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                    \
      return;                                                                              \
    }                                                                                      \
    if (own) {                                                                             \
      /* a small product keeps the count: OpenBLAS runs those on one thread anyway */     \
      int locked = dev_pool_lock(p);                                                       \
      if (big && get_num_threads() != threads) set_num_threads(threads);                  \
      call_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                    \
      if (locked) dev_pool_unlock(p);                                                      \
      return;                                                                              \
    }                                                                                      \
    GemmJob g = {ta, tb, m >= n, m, n, k, lda, ldb, ldc, 0, a, b, c, alpha, beta};         \
    int64_t len = g.split_rows ? m : n;                                                    \
    g.parts = (len + 15) / 16 < threads ? (len + 15) / 16 : threads;                       \
    dev_blas_single_thread();                                                              \
    dev_parallel_for(p, g.parts, 1, slab_##SUF, &g);                                       \
  }                                                                                        \
                                                                                           \
  typedef struct {                                                                         \
    bool ta, tb;                                                                           \
    int64_t m, n, k, sa, lda, sb, ldb, sc, ldc;                                            \
    T alpha, beta;                                                                         \
    const T *a, *b;                                                                        \
    T *c;                                                                                  \
  } Batch_##SUF;                                                                           \
                                                                                           \
  static void batch_##SUF(void *ctx, int64_t begin, int64_t end) {                        \
    Batch_##SUF *g = ctx;                                                                  \
    for (int64_t i = begin; i < end; i++)                                                  \
      call_##SUF(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a + i * g->sa, g->lda,       \
                 g->b + i * g->sb, g->ldb, g->beta, g->c + i * g->sc, g->ldc);             \
  }                                                                                        \
                                                                                           \
  void dev_gemm_batched_##SUF(DevPool *p, bool ta, bool tb, int64_t batch, int64_t m,     \
                              int64_t n, int64_t k, T alpha, const T *a, int64_t stride_a, \
                              int64_t lda, const T *b, int64_t stride_b, int64_t ldb,      \
                              T beta, T *c, int64_t stride_c, int64_t ldc) {               \
    if (batch <= 0 || m <= 0 || n <= 0) return;                                            \
    int threads = dev_pool_size(p);                                                        \
    if (batch < threads || dev_pool_in_task() || m * n * (k > 0 ? k : 1) >= 8 * PAR_MNK) { \
      for (int64_t i = 0; i < batch; i++)                                                  \
        dev_gemm_##SUF(p, ta, tb, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, \
                       ldb, beta, c + i * stride_c, ldc);                                  \
      return;                                                                              \
    }                                                                                      \
    Batch_##SUF g = {ta, tb, m, n, k, stride_a, lda, stride_b, ldb, stride_c, ldc,          \
                     alpha, beta, a, b, c};                                                \
    dev_blas_single_thread();                                                              \
    int64_t per = PAR_MNK / (m * n * (k > 0 ? k : 1)) + 1;                                 \
    dev_parallel_for(p, batch, per, batch_##SUF, &g);                                      \
  }

DEFINE_GEMM(float, f32, sgemm)
DEFINE_GEMM(double, f64, dgemm)
