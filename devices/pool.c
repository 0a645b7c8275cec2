/* devices/pool.c: the thread pool (pool.h).  Mist has exactly one pool
 * per interpreter, and multi-threaded BLAS only runs while it holds the
 * pool (dev_pool_lock), so on a 2-core machine there are never two sets
 * of threads fighting for the cores.
 *
 * Approach: nthreads-1 persistent workers plus the calling thread.  A
 * job is published as (fn, ctx, n, nchunks) followed by a 64-bit ticket
 * word holding (generation << 32 | next chunk); workers and the caller
 * claim chunks with a compare-and-swap on the ticket, so a worker that
 * wakes late can never claim a chunk of a job it did not read.  The
 * caller returns when every chunk is counted done.  Idle workers spin
 * for 200 microseconds (a burst of kernels, or a training step's
 * backward pass with its interpreted rules between the products, then
 * costs no wake-ups) and then sleep on a condition variable.  A thread-local flag
 * marks pool tasks, so a nested dev_parallel_for runs inline. */
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

struct DevPool {
  int nthreads;
  int nworkers;                /* threads started: nthreads - 1 when all went well */
  pthread_t *threads;
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
  _Atomic uint64_t ticket;     /* generation << 32 | next chunk */
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

/* Claim and run chunks of generation gen until none is left. */
static void run_chunks(DevPool *p, uint32_t gen) {
  uint64_t t = atomic_load_explicit(&p->ticket, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(t >> 32) != gen) return;
    uint32_t i = (uint32_t)t;
    if (i >= p->nchunks) return;
    if (!atomic_compare_exchange_weak_explicit(&p->ticket, &t, t + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    int64_t begin = p->n * (int64_t)i / p->nchunks;
    int64_t end = p->n * (int64_t)(i + 1) / p->nchunks;
    p->fn(p->ctx, begin, end);
    atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
    t = atomic_load_explicit(&p->ticket, memory_order_acquire);
  }
}

static void *worker(void *arg) {
  DevPool *p = arg;
  in_task = 1;
  uint32_t seen = 0;
  for (;;) {
    /* Spin for a while waiting for a new generation, then sleep. */
    uint64_t t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    if ((uint32_t)(t >> 32) == seen) {
      uint64_t start = now_ns();
      for (int k = 0;; k++) {
        cpu_relax();
        t = atomic_load_explicit(&p->ticket, memory_order_acquire);
        if ((uint32_t)(t >> 32) != seen) break;
        if ((k & 63) == 63 && now_ns() - start > SPIN_NS) break;
      }
    }
    if ((uint32_t)(t >> 32) == seen) {
      pthread_mutex_lock(&p->m);
      p->sleeping++;
      while (!p->stop &&
             (uint32_t)(atomic_load_explicit(&p->ticket, memory_order_acquire) >> 32) == seen)
        pthread_cond_wait(&p->wake, &p->m);
      p->sleeping--;
      int stop = p->stop;
      pthread_mutex_unlock(&p->m);
      if (stop) return NULL;
      t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    }
    seen = (uint32_t)(t >> 32);
    run_chunks(p, seen);
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
  DevPool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nthreads = nthreads;
  pthread_mutex_init(&p->call_lock, NULL);
  pthread_mutex_init(&p->m, NULL);
  pthread_cond_init(&p->wake, NULL);
  atomic_init(&p->ticket, 0);
  atomic_init(&p->done, 0);
  if (nthreads > 1) {
    p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
    if (!p->threads) nthreads = 1;
    for (int i = 0; i < nthreads - 1; i++) {
      if (pthread_create(&p->threads[i], NULL, worker, p) != 0) break;
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
  atomic_store_explicit(&p->ticket, (uint64_t)gen << 32, memory_order_release);
  pthread_mutex_lock(&p->m);
  if (p->sleeping) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->m);

  run_chunks(p, gen);
  for (int k = 0; atomic_load_explicit(&p->done, memory_order_acquire) != (uint32_t)nchunks;
       k++) {
    if (k < 4096) cpu_relax();
    else sched_yield();
  }
  in_task = 0;
  pthread_mutex_unlock(&p->call_lock);
}
