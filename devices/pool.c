/* devices/pool.c: the thread pool (pool.h).  Mist has exactly one pool
 * per interpreter, and multi-threaded BLAS only runs while it holds the
 * pool (dev_pool_lock), so on a 2-core machine there are never two sets
 * of threads fighting for the cores.
 *
 * Approach: nthreads-1 persistent workers plus the calling thread.  A
 * job is published as (fn, ctx, n, nchunks) and one share of its chunks
 * per thread: thread t (the caller is 0) owns the t-th run of
 * consecutive chunks, so the same part of the same-sized data goes to
 * the same core from one job to the next (a product's slab, then the
 * update of that slab: measured below).  A thread runs its own chunks
 * first and then takes what is left of the others' shares, from their
 * end, so a busy core delays nothing.  Each share is a 64-bit word (generation << 32 |
 * end << 16 | next chunk) claimed with a compare-and-swap: the chunk's
 * bounds and the job it belongs to are read in one load, so a worker
 * that wakes late can never claim a chunk of a job it did not read.
 * The caller returns when every chunk is counted done.  Idle workers
 * spin for 200 microseconds (a burst of kernels, or a training step's
 * backward pass with its interpreted rules between the products, then
 * costs no wake-ups) and then sleep on a condition variable.  A
 * thread-local flag marks pool tasks, so a nested dev_parallel_for runs
 * inline.
 *
 * Why shares: with one ticket for all chunks, whichever thread came
 * first took the next chunk, so chunks alternated between the cores and
 * a chunk's data was as often in the other core's cache as in its own.
 * Measured on bench/grad/mlp2.ms's training step (2 cores, the update
 * of the 784x256 weights, whose gradient a product had just written in
 * two row slabs; prim profile, medians over 5 runs of tenth percentiles,
 * cycles): in 2 chunks 82k; in 6 chunks from one ticket 112k; in 6
 * chunks as two shares of 3, 90k.  So vmath.c's arrays can be cut in
 * more chunks (the 256x256 update on both cores, 57k -> 34k) without
 * the larger ones losing their locality. */
#define _GNU_SOURCE
#include "devices/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long an idle worker spins before it sleeps: longer than the gaps
 * between the parallel kernels of an eager training step (the backward
 * pass's rules between two products take 60-80 us in bench/grad/mlp2),
 * since a worker woken from its sleep starts its chunk ~20 us late. */
#define SPIN_NS 200000

/* One thread's share of the current job: generation << 32 | end << 16 |
 * next, chunks [next, end); a cache line of its own, since every claim
 * writes it. */
typedef struct {
  _Alignas(64) _Atomic uint64_t word;
} Share;

#define SHARE(gen, end, next) ((uint64_t)(gen) << 32 | (uint64_t)(end) << 16 | (uint64_t)(next))
#define SHARE_GEN(w) ((uint32_t)((w) >> 32))
#define SHARE_END(w) ((uint32_t)((w) >> 16) & 0xffff)
#define SHARE_NEXT(w) ((uint32_t)(w) & 0xffff)

struct DevPool;

typedef struct {
  struct DevPool *pool;
  int slot;                    /* its share: 1 + the worker's index */
} WorkerArg;

struct DevPool {
  int nthreads;
  int nworkers;                /* threads started: nthreads - 1 when all went well */
  pthread_t *threads;
  WorkerArg *args;
  pthread_mutex_t call_lock;   /* one job (or one BLAS call) at a time */
  pthread_mutex_t m;           /* guards sleeping, stop, and the condition */
  pthread_cond_t wake;
  int sleeping;
  int stop;
  /* the current job */
  void (*fn)(void *ctx, int64_t begin, int64_t end);
  void *ctx;
  int64_t n;
  uint32_t nchunks;
  Share *shares;               /* nthreads of them */
  _Atomic uint32_t published;  /* the generation of the newest job */
  _Atomic uint32_t done;       /* chunks finished in this generation */
  uint32_t gen;
};

static _Thread_local int in_task;

int dev_pool_in_task(void) {
  return in_task;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Claim and run chunks of generation gen until none is left: the
 * thread's own share from its front, then the others' in turn from their
 * back (the owner keeps the chunks next to the ones it ran). */
static void run_chunks(DevPool *p, uint32_t gen, int self) {
  for (int k = 0; k < p->nthreads; k++) {
    Share *sh = &p->shares[(self + k) % p->nthreads];
    uint64_t w = atomic_load_explicit(&sh->word, memory_order_acquire);
    for (;;) {
      if (SHARE_GEN(w) != gen) return;   /* a newer job: all of ours were claimed */
      uint32_t first = SHARE_NEXT(w), stop = SHARE_END(w);
      if (first >= stop) break;
      uint32_t i = k == 0 ? first : stop - 1;
      uint64_t claimed = k == 0 ? w + 1 : SHARE(gen, stop - 1, first);
      if (!atomic_compare_exchange_weak_explicit(&sh->word, &w, claimed, memory_order_acq_rel,
                                                 memory_order_acquire))
        continue;
      int64_t begin = p->n * (int64_t)i / p->nchunks;
      int64_t end = p->n * (int64_t)(i + 1) / p->nchunks;
      p->fn(p->ctx, begin, end);
      atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
      w = atomic_load_explicit(&sh->word, memory_order_acquire);
    }
  }
}

static void *worker(void *arg) {
  WorkerArg *wa = arg;
  DevPool *p = wa->pool;
  in_task = 1;
  uint32_t seen = 0;
  for (;;) {
    /* Spin for a while waiting for a new generation, then sleep. */
    uint32_t g = atomic_load_explicit(&p->published, memory_order_acquire);
    if (g == seen) {
      uint64_t start = now_ns();
      for (int k = 0;; k++) {
        cpu_relax();
        g = atomic_load_explicit(&p->published, memory_order_acquire);
        if (g != seen) break;
        if ((k & 63) == 63 && now_ns() - start > SPIN_NS) break;
      }
    }
    if (g == seen) {
      pthread_mutex_lock(&p->m);
      p->sleeping++;
      while (!p->stop && atomic_load_explicit(&p->published, memory_order_acquire) == seen)
        pthread_cond_wait(&p->wake, &p->m);
      p->sleeping--;
      int stop = p->stop;
      pthread_mutex_unlock(&p->m);
      if (stop) return NULL;
      g = atomic_load_explicit(&p->published, memory_order_acquire);
    }
    seen = g;
    run_chunks(p, seen, wa->slot);
  }
}

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0 && (n < 1 || c < n)) n = c;
  }
  return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

DevPool *dev_pool_new(int nthreads) {
  if (nthreads <= 0) nthreads = online_cores();
  /* a share counts chunks (at most 4 per thread) in 16 bits */
  if (nthreads > 4096) nthreads = 4096;
  DevPool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nthreads = nthreads;
  pthread_mutex_init(&p->call_lock, NULL);
  pthread_mutex_init(&p->m, NULL);
  pthread_cond_init(&p->wake, NULL);
  atomic_init(&p->published, 0);
  atomic_init(&p->done, 0);
  p->shares = aligned_alloc(64, (size_t)nthreads * sizeof *p->shares);
  if (!p->shares) {
    free(p);
    return NULL;
  }
  for (int i = 0; i < nthreads; i++) atomic_init(&p->shares[i].word, 0);
  if (nthreads > 1) {
    p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
    p->args = calloc((size_t)nthreads - 1, sizeof *p->args);
    for (int i = 0; p->threads && p->args && i < nthreads - 1; i++) {
      p->args[i] = (WorkerArg){p, i + 1};
      if (pthread_create(&p->threads[i], NULL, worker, &p->args[i]) != 0) break;
      p->nworkers++;
    }
  }
  p->nthreads = p->nworkers + 1;
  return p;
}

void dev_pool_free(DevPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->m);
  p->stop = 1;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->m);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
  free(p->threads);
  free(p->args);
  free(p->shares);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->m);
  pthread_mutex_destroy(&p->call_lock);
  free(p);
}

int dev_pool_size(DevPool *p) {
  return p ? p->nthreads : 1;
}

int dev_pool_lock(DevPool *p) {
  if (!p || in_task) return 0;
  pthread_mutex_lock(&p->call_lock);
  return 1;
}

void dev_pool_unlock(DevPool *p) {
  if (p) pthread_mutex_unlock(&p->call_lock);
}

void dev_parallel_for(DevPool *p, int64_t n, int64_t grain,
                      void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (!p || p->nthreads <= 1 || n <= grain || in_task) {
    fn(ctx, 0, n);
    return;
  }
  /* A few chunks per thread balance the load when a core is busy with
   * something else; every chunk holds at least `grain` items. */
  int64_t nchunks = n / grain;
  if (nchunks > 4 * (int64_t)p->nthreads) nchunks = 4 * (int64_t)p->nthreads;
  /* fewer chunks than that: as many for every thread (3 chunks on 2
   * threads would take two chunks' time) */
  if (nchunks > p->nthreads) nchunks -= nchunks % p->nthreads;
  if (nchunks < 2) {
    fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&p->call_lock);
  in_task = 1;
  p->fn = fn;
  p->ctx = ctx;
  p->n = n;
  p->nchunks = (uint32_t)nchunks;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  uint32_t gen = ++p->gen;
  if (gen == 0) gen = ++p->gen;   /* generation 0 means "no job yet" to workers */
  for (int t = 0; t < p->nthreads; t++)
    atomic_store_explicit(&p->shares[t].word,
                          SHARE(gen, nchunks * (t + 1) / p->nthreads, nchunks * t / p->nthreads),
                          memory_order_release);
  atomic_store_explicit(&p->published, gen, memory_order_release);
  pthread_mutex_lock(&p->m);
  if (p->sleeping) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->m);

  run_chunks(p, gen, 0);
  for (int k = 0; atomic_load_explicit(&p->done, memory_order_acquire) != (uint32_t)nchunks;
       k++) {
    if (k < 4096) cpu_relax();
    else sched_yield();
  }
  in_task = 0;
  pthread_mutex_unlock(&p->call_lock);
}
