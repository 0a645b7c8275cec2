/* devices/pool.h: Mist's one thread pool.  Every parallel kernel and every
 * multi-threaded BLAS call goes through a DevPool, so BLAS threads and
 * pool threads never run at the same time (see blas.h). */
#ifndef MIST_DEVICES_POOL_H
#define MIST_DEVICES_POOL_H

#include <stdint.h>

typedef struct DevPool DevPool;

/* A pool of nthreads workers, the calling thread included (so nthreads-1
 * threads are started); 0 means the number of online cores.  Returns
 * NULL when out of memory; a pool whose threads fail to start runs
 * everything on the caller.  Free with dev_pool_free. */
DevPool *dev_pool_new(int nthreads);
void dev_pool_free(DevPool *p);
/* Workers including the caller; 1 for NULL. */
int dev_pool_size(DevPool *p);

/* Run fn(ctx, begin, end) over [0, n) in chunks of at least `grain`
 * items, in parallel; returns when all are done.  Runs inline (one call
 * fn(ctx, 0, n)) when n <= grain, when p is NULL or has 1 thread, or
 * when called from inside a pool task (no nested parallelism, no
 * deadlock).  Concurrent callers on the same pool are serialised by a
 * mutex.  Thread t (the caller is 0) runs the t-th run of consecutive
 * chunks unless another thread finishes first, so the same part of two
 * jobs of one size lands on the same core, in its cache. */
void dev_parallel_for(DevPool *p, int64_t n, int64_t grain,
                      void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);

/* True on a thread that is running a pool task (a worker, or the caller
 * inside dev_parallel_for). */
int dev_pool_in_task(void);

/* Hold the pool for the caller's exclusive use (so no pool task runs)
 * until dev_pool_unlock; blas.h uses it around multi-threaded BLAS
 * calls.  Returns 0 when the caller is already inside a pool task (the
 * pool is busy with the caller itself: do not take the lock, and run
 * single-threaded), 1 when the lock was taken. */
int dev_pool_lock(DevPool *p);
void dev_pool_unlock(DevPool *p);

#endif
