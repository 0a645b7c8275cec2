/* devices/blas.c: matrix products through OpenBLAS (blas.h); the only
 * file in Mist that includes <cblas.h>.
 *
 * Threads: Mist has one thread pool, and BLAS must never run its own
 * threads while pool tasks run.  The default ("pool" mode) keeps
 * OpenBLAS single-threaded for good and splits a big product over the
 * pool instead: the rows of C (or its columns, when C is wide) are cut
 * into one slab per worker and each worker calls single-threaded sgemm
 * on its slab.  B is packed once per slab, which costs little against
 * the slab's m*n*k work, and nothing else ever spins on the cores.  The
 * other mode ("openblas") takes the pool's lock and lets OpenBLAS use
 * its own threads, one per pool worker; bench/matmul.c measures both.
 *
 * Core type: the machines set OPENBLAS_CORETYPE=Haswell, which holds a
 * DYNAMIC_ARCH OpenBLAS to its AVX2 kernels (~108 GFLOP/s f32 per core)
 * on CPUs with AVX-512, where its SkylakeX kernels reach ~195.  OpenBLAS
 * reads the variable once, in its load-time constructor, so the choice
 * is made in this executable's .preinit_array, which runs before any
 * shared library's constructor: from the CPU's features (AVX-512
 * F/CD/BW/DQ/VL enabled by the OS: SkylakeX; AVX2 and FMA: Haswell), or
 * from MIST_BLAS_CORETYPE (a core name, or "env" to keep the
 * environment's choice).  A constructor puts the variable back as it
 * was once OpenBLAS is loaded, so child processes see what we saw.  In a
 * shared library the .preinit_array is not available and OpenBLAS keeps
 * what the environment says; where the variable is unset, OpenBLAS's
 * own detection is used. */
#include "devices/blas.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS extensions (declared in its cblas.h, repeated here in case a
 * different cblas.h is found first). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);

/* ---- choosing the core type before OpenBLAS loads ---------------------- */

#if defined(__x86_64__) && defined(__ELF__) && !defined(MIST_SHARED)
/* .preinit_array functions run before libc's own initialiser, so getenv
 * and setenv do not work yet (libc's environ is set afterwards, from the
 * same array).  The array passed in is the environment, so the entry is
 * replaced in place; where the variable is absent there is no room to
 * add it, and OpenBLAS detects the CPU itself (it picks Cooperlake on
 * these machines, as fast as SkylakeX). */
static char coretype_entry[64];
static const char *saved_entry;   /* the entry replaced, to put back */

static const char *env_value(char **envp, const char *name, int *index) {
  size_t len = strlen(name);
  for (int i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
      if (index) *index = i;
      return envp[i] + len + 1;
    }
  return NULL;
}

static const char *cpu_coretype(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return NULL;
}

static void choose_coretype(int argc, char **argv, char **envp) {
  (void)argc, (void)argv;
  const char *want = env_value(envp, "MIST_BLAS_CORETYPE", NULL);
  if (want && strcmp(want, "env") == 0) return;
  if (!want || !*want) want = cpu_coretype();
  int i = -1;
  const char *old = env_value(envp, "OPENBLAS_CORETYPE", &i);
  if (!want || !old || strcmp(old, want) == 0) return;
  if (snprintf(coretype_entry, sizeof coretype_entry, "OPENBLAS_CORETYPE=%s", want) >=
      (int)sizeof coretype_entry)
    return;
  saved_entry = envp[i];
  envp[i] = coretype_entry;
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit_coretype)(int, char **, char **) = choose_coretype;

/* OpenBLAS's DYNAMIC_ARCH kernel table, NULL until it has read the
 * variable: a constructor in a shared libopenblas, but in a static link
 * the first BLAS call, in which case the variable stays as chosen. */
extern void *gotoblas __attribute__((weak));

/* After OpenBLAS's constructor: put the environment back as it was. */
__attribute__((constructor)) static void restore_coretype(void) {
  if (!saved_entry) return;
  if (&gotoblas && !gotoblas) return;
  const char *now = getenv("OPENBLAS_CORETYPE");
  if (now && now == coretype_entry + strlen("OPENBLAS_CORETYPE="))
    setenv("OPENBLAS_CORETYPE", strchr(saved_entry, '=') + 1, 1);
  saved_entry = NULL;
}
#endif

const char *dev_blas_info(void) {
  static char buf[256];
  if (!buf[0]) {
    snprintf(buf, sizeof buf, "%s; core %s", openblas_get_config(), openblas_get_corename());
  }
  return buf;
}

/* ---- threading -------------------------------------------------------- */

static _Atomic int own_threads = -1;   /* -1: read MIST_BLAS_THREADS on first use */

static bool use_own_threads(void) {
  int v = atomic_load_explicit(&own_threads, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("MIST_BLAS_THREADS");
    v = e && strcmp(e, "openblas") == 0;
    atomic_store_explicit(&own_threads, v, memory_order_relaxed);
  }
  return v;
}

void dev_blas_set_own_threads(bool own) {
  atomic_store_explicit(&own_threads, own ? 1 : 0, memory_order_relaxed);
}

void dev_blas_single_thread(void) {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* Products below this many multiply-adds run on one thread. */
#define PAR_MNK ((int64_t)1 << 18)

/* ---- gemm, written once for both types ------------------------------- */

typedef struct {
  bool ta, tb, split_rows;
  int64_t m, n, k, lda, ldb, ldc, parts;
  const void *a, *b;
  void *c;
  double alpha, beta;
} GemmJob;

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
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||     \
        ldc > INT_MAX) {                                                                   \
      naive_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                   \
      return;                                                                              \
    }                                                                                      \
    /* cblas insists on ld >= the row length even where a row is never used. */          \
    int64_t ra = ta ? m : k, rb = tb ? k : n;                                              \
    if (lda < ra) lda = ra;                                                                \
    if (ldb < rb) ldb = rb;                                                                \
    CBLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,   \
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
    if (!big || dev_pool_in_task()) {                                                      \
      /* Inside a pool task the region's owner made OpenBLAS single-threaded. */          \
      if (!dev_pool_in_task()) dev_blas_single_thread();                                   \
      call_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                    \
      return;                                                                              \
    }                                                                                      \
    if (use_own_threads()) {                                                               \
      int locked = dev_pool_lock(p);                                                       \
      if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);        \
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

DEFINE_GEMM(float, f32, cblas_sgemm)
DEFINE_GEMM(double, f64, cblas_dgemm)
