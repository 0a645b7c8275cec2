/* gc.c: memory for the whole runtime, through the Boehm-Demers-Weiser
 * conservative collector.  This is the one file that includes <gc.h>;
 * the rest of the code base allocates with lang_alloc (zeroed, scanned
 * for pointers) or lang_alloc_atomic (text and numbers, not scanned).
 *
 * The collector is process-wide state, the only global state the
 * runtime has, together with the count of external bytes (memory owned
 * by GC objects but allocated elsewhere, freed by finalisers), which
 * belongs with it: the collector cannot see that memory, so this file
 * counts it and collects when it grows.  Its warnings are silenced (the library never prints by
 * itself); running out of memory entirely is the one case where the
 * process stops, with a one-line message on stderr.
 */
#define GC_THREADS 1
#include <gc/gc.h>
#include <gc/gc_mark.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"

static void *out_of_memory(size_t size) {
  fprintf(stderr, "mist: out of memory (allocating %zu bytes)\n", size);
  fflush(stderr);
  abort();
}

/* The collector's pace.  It collects once the bytes allocated since the
 * last collection reach about half the heap (free space divisor 2; the
 * library's default is a third), which keeps the heap small but, when
 * little is live, collects every
 * megabyte or so: a program doing scalar reverse-mode AD (a
 * backpropagator closure and a few tuples per call) then spends a third
 * of its time marking the runtime's own ~2 MB of IR over and over.  So
 * at least LANG_GC_MIN_STEP bytes go between collections: the heap
 * grows by at most the step, and programs with more than about 12 MB
 * live keep the default pace.  A short program never gets there: the
 * floor is set only once LANG_GC_WARMUP_BYTES have been allocated
 * (pace()), because
 * growing the heap to the step touches fresh pages, which a program
 * that loads the derivative rules and stops (40 ms) pays for with 30 ms
 * more.  Tensor buffers outside the heap are counted against the same
 * step (lang_gc_external_alloc). */
static pthread_key_t registered_key;

static void unregister_at_exit(void *unused) { GC_unregister_my_thread(); }

void lang_gc_init(void) {
  if (GC_is_init_called()) return;
  /* one marker thread: helper threads cost start-up time (and exit
   * time) that a short program never wins back on two cores */
  GC_set_markers_count(1);
  GC_INIT();
  /* half the heap between collections, not a third: reverse-mode AD
   * keeps a chain of backpropagators alive through a whole forward
   * pass, which each collection marks again; fewer collections make a
   * differentiated loop about 15% faster for a heap about 5% larger */
  GC_set_free_space_divisor(2);
  GC_set_warn_proc(GC_ignore_warn_proc);
  GC_set_oom_fn(out_of_memory);
  /* Host threads may call into Mist (lang_gc_enter_thread); allowing
   * them must happen on the main thread, here.  It makes allocation take
   * a lock, which evaluation pays anyway: it runs on a thread made by
   * GC_pthread_create (lang_run_on_stack), which does the same. */
  GC_allow_register_threads();
  pthread_key_create(&registered_key, unregister_at_exit);
}

/* The collector must start on the main thread: GC_INIT takes the
 * calling thread's stack for the main one, and only a registered thread
 * may allow others.  A host whose first call into Mist comes from
 * another thread would break both, so it starts when the program (or
 * the library) is loaded. */
__attribute__((constructor)) static void init_at_load(void) { lang_gc_init(); }

/* a program that loads the derivative rules and stops allocates about 12 MiB */
#define LANG_GC_WARMUP_BYTES ((size_t)16 << 20)
static atomic_bool paced;

/* Once the program has allocated LANG_GC_WARMUP_BYTES: the floor. */
static void pace(void) {
  if (GC_get_total_bytes() < LANG_GC_WARMUP_BYTES) return;
  GC_set_min_bytes_allocd(LANG_GC_MIN_STEP);
  atomic_store_explicit(&paced, true, memory_order_relaxed);
}

/* A host thread that calls into Mist allocates and holds GC pointers
 * on its stack, so the collector must know it: it stops registered
 * threads while it marks and aborts ("Collecting from unknown thread")
 * when an unknown one collects.  Registered on its first call; a
 * thread-specific key's destructor unregisters it when it exits, as
 * the collector requires of threads it did not start. */
void lang_gc_enter_thread(void) {
  if (GC_thread_is_registered()) return;
  struct GC_stack_base sb;
  if (GC_get_stack_base(&sb) != GC_SUCCESS) return;
  if (GC_register_my_thread(&sb) == GC_SUCCESS) pthread_setspecific(registered_key, &registered_key);
}

void *lang_alloc(size_t size) {
  if (__builtin_expect(!atomic_load_explicit(&paced, memory_order_relaxed), 0)) pace();
  return GC_MALLOC(size ? size : 1);
}

void *lang_alloc_atomic(size_t size) {
  return GC_MALLOC_ATOMIC(size ? size : 1);
}

void *lang_alloc_uncollectable(size_t size) {
  return GC_MALLOC_UNCOLLECTABLE(size ? size : 1);
}

void lang_free(void *p) {
  if (p) GC_FREE(p);
}

void *lang_realloc(void *p, size_t size) {
  return GC_REALLOC(p, size ? size : 1);
}

char *lang_strndup(const char *s, size_t n) {
  char *d = GC_MALLOC_ATOMIC(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *lang_strdup(const char *s) {
  return lang_strndup(s, strlen(s));
}

void lang_gc_add_roots(void *start, void *end) {
  GC_add_roots(start, end);
}

void lang_gc_remove_roots(void *start, void *end) {
  GC_remove_roots(start, end);
}

size_t lang_gc_heap_size(void) {
  return GC_get_heap_size();
}

static void add_object_size(void *obj, size_t bytes, void *total) {
  (void)obj;
  *(size_t *)total += bytes;
}

static void *sum_reachable(void *total) {
  GC_enumerate_reachable_objects_inner(add_object_size, total);
  return NULL;
}

size_t lang_gc_live_bytes(void) {
  lang_gc_collect();
  GC_gcollect();   /* (the mark bits of a collection after the finalisers ran) */
  size_t total = 0;
  GC_call_with_alloc_lock(sum_reachable, &total);
  return total;
}

/* Run fn(arg) on a new thread whose stack is stack_size bytes (reserved
 * address space; pages are touched only as the stack grows), registered
 * with the collector so its stack is scanned.  Waits for it.  False if
 * no such thread could be made (the caller then runs fn itself). */
typedef struct StackJob {
  void *(*fn)(void *);
  void *arg;
  pthread_mutex_t lock;
  pthread_cond_t finished;
  bool done;
} StackJob;

static void *run_stack_job(void *p) {
  StackJob *job = p;
  job->fn(job->arg);
  pthread_mutex_lock(&job->lock);
  job->done = true;
  pthread_cond_signal(&job->finished);
  pthread_mutex_unlock(&job->lock);
  return NULL;
}

/* The caller waits outside the collector's view (GC_do_blocking): a
 * registered thread that merely waits would otherwise be stopped and
 * restarted by signals at every collection, which cost about as much as
 * marking a small heap.  Its stack is still scanned up to this call. */
static void *wait_stack_job(void *p) {
  StackJob *job = p;
  pthread_mutex_lock(&job->lock);
  while (!job->done) pthread_cond_wait(&job->finished, &job->lock);
  pthread_mutex_unlock(&job->lock);
  return NULL;
}

bool lang_run_on_stack(size_t stack_size, void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  StackJob job = {fn, arg, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
  pthread_t t;
  bool ok = pthread_attr_setstacksize(&attr, stack_size) == 0 &&
            GC_pthread_create(&t, &attr, run_stack_job, &job) == 0;
  pthread_attr_destroy(&attr);
  if (ok) {
    GC_do_blocking(wait_stack_job, &job);
    GC_pthread_join(t, NULL);
  }
  pthread_mutex_destroy(&job.lock);
  pthread_cond_destroy(&job.finished);
  return ok;
}

/* A background thread (stdlib/data.c's pipelines), detached, known to
 * the collector from its first instruction: GC_pthread_create registers
 * it, so its stack is scanned and it may allocate.  stack_size 0 takes
 * the default.  False if it could not be made. */
bool lang_gc_thread_start(size_t stack_size, void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t t;
  bool ok = (stack_size == 0 || pthread_attr_setstacksize(&attr, stack_size) == 0) &&
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
            GC_pthread_create(&t, &attr, fn, arg) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}

/* ---- finalisers and memory the collector cannot see ---- */

void lang_gc_finalize(void *obj, void (*fn)(void *obj, void *data), void *data) {
  GC_register_finalizer_no_order(obj, (GC_finalization_proc)fn, data, NULL, NULL);
}

static _Atomic size_t external_live;   /* bytes allocated and not yet finalised */
static _Atomic size_t external_mark;   /* external_live after the last collection made here */
static atomic_flag collecting = ATOMIC_FLAG_INIT;

void lang_gc_collect(void) {
  GC_gcollect();
  GC_invoke_finalizers();
}

/* Bytes allocated outside the heap since collection number external_gc.
 * Finalisers give them back only once a collection finds their owners
 * dead, and until then the caching allocator cannot hand them out again:
 * a tensor loop would take fresh pages (a fault per 4 KiB, see
 * devices/alloc.c) into cold caches.  So once LANG_GC_EXTERNAL_MIN_STEP of them,
 * and at least half the external bytes live, have been allocated since
 * the last collection, collect, as the collector would had they been in
 * its heap. */
static _Atomic size_t external_since;
static _Atomic GC_word external_gc;

void lang_gc_external_alloc(size_t bytes) {
  size_t live = atomic_fetch_add(&external_live, bytes) + bytes;
  GC_word gc = GC_get_gc_no();
  size_t since;
  if (atomic_exchange(&external_gc, gc) != gc) atomic_store(&external_since, since = bytes);
  else since = atomic_fetch_add(&external_since, bytes) + bytes;
  bool waiting = since >= LANG_GC_EXTERNAL_MIN_STEP && since >= live / 2;
  if ((waiting || live > atomic_load(&external_mark) + LANG_GC_EXTERNAL_STEP) &&
      !atomic_flag_test_and_set(&collecting)) {
    lang_gc_collect();
    atomic_store(&external_mark, atomic_load(&external_live));
    atomic_flag_clear(&collecting);
  }
}

void lang_gc_external_free(size_t bytes) {
  size_t live = atomic_fetch_sub(&external_live, bytes) - bytes;
  /* keep the mark at or below what is live, so the next step is measured
   * from the memory actually in use */
  size_t mark = atomic_load(&external_mark);
  while (mark > live && !atomic_compare_exchange_weak(&external_mark, &mark, live)) {
  }
}

size_t lang_gc_external_bytes(void) {
  return atomic_load(&external_live);
}

/* ---- reverse passes ----
 *
 * A gradient's forward pass builds a chain of backpropagators that lives
 * until the gradient returns.  A collection in the middle of a pass marks
 * the chain built so far (ADBench's LSTM: up to 110k tensors and 14k
 * closures, 20 MB of pointers, most of the collector's time), and its
 * pace then counts the chain as if it stayed.  Before a pass starts,
 * the last one's chain is dead (grad's frames start zeroed so that no
 * stale slot keeps it, IRG_ZERO_FRAME), and a collection there marks
 * only what the program keeps (5 MB for the LSTM).  So when an
 * outermost pass starts (eval.c, on entering grad's graph) and a
 * collection would fall within it (the bytes allocated since the last
 * collection plus what the last pass allocated reach the step), it
 * comes now, and the step becomes 9/8 of a pass, so that the next one
 * waits for the next pass's start.  The heap may grow by a quarter at
 * most for that (a pass that does not fit in 5/4 of the heap keeps to
 * the free bytes, and the collector's own pace decides), so a heap grows
 * once to what a pass needs and no further while passes keep their size.
 *
 * "Outermost" is read from the call depth: a pass starting deeper than
 * the shallowest one seen may be nested in another whose chain is live
 * (grad of a function calling grad) and is left to the pacing. */
static _Atomic int pass_depth = INT_MAX;   /* the shallowest pass seen */
static _Atomic size_t pass_total;          /* GC_get_total_bytes() at the last outermost pass */
static _Atomic size_t pass_last;           /* what the last pass and the code after it allocated */
static _Atomic size_t pass_bytes;          /* the smaller of that and the one before */
static _Atomic size_t pass_floor;          /* the floor set here, 0 before */

bool lang_gc_pass_due(int depth) {
  if (!atomic_load_explicit(&paced, memory_order_relaxed)) return false;
  int outer = atomic_load(&pass_depth);
  if (depth > outer) return false;
  if (depth < outer) atomic_store(&pass_depth, depth);
  size_t total = GC_get_total_bytes();
  size_t last = atomic_exchange(&pass_total, total);
  if (!last) return false;
  size_t pass = total - last;
  /* the smaller of the last two: the first call of a gradient also
   * transforms the function, and allocates more than those after */
  size_t before = atomic_exchange(&pass_last, pass);
  if (before && before < pass) pass = before;
  atomic_store(&pass_bytes, pass);
  size_t floor = atomic_load(&pass_floor);
  return GC_get_bytes_since_gc() + pass >= (floor ? floor : LANG_GC_MIN_STEP);
}

void lang_gc_pass_collect(void) {
  lang_gc_collect();
  size_t pass = atomic_load(&pass_bytes);
  size_t step = pass + pass / 8, free_bytes = GC_get_free_bytes();
  size_t heap = GC_get_heap_size();
  if (step > free_bytes && step > heap + heap / 4) step = free_bytes;
  if (step < LANG_GC_MIN_STEP) step = LANG_GC_MIN_STEP;
  atomic_store(&pass_floor, step);
  GC_set_min_bytes_allocd(step);
}
