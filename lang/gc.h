/* gc.h: memory.  Every heap object of Mist goes through the Boehm GC;
 * this file's gc.c is the only user of <gc.h>.  lang_alloc memory is
 * zeroed and scanned for pointers; lang_alloc_atomic memory is neither
 * (use it for text and numbers).  Both are 16-byte aligned (the
 * collector's granule on 64-bit targets).  Allocation failure is not reported
 * to callers: out of memory entirely, the collector's handler raises
 * nothing and the process reports it and stops, which is the one exit
 * the runtime allows itself. */
#ifndef MIST_LANG_GC_H
#define MIST_LANG_GC_H

#include <stdbool.h>
#include <stddef.h>

/* Once per process; idempotent.  Once a program has collected a few
 * times, at least LANG_GC_MIN_STEP bytes go between collections (gc.c
 * says why). */
#define LANG_GC_MIN_STEP ((size_t)8 << 20)
void lang_gc_init(void);
void *lang_alloc(size_t size);
void *lang_alloc_atomic(size_t size);
void *lang_realloc(void *p, size_t size);
/* Memory that is scanned but never collected, for a root that the host
 * may keep where the collector cannot see it (the MistVM); lang_free
 * releases it explicitly. */
void *lang_alloc_uncollectable(size_t size);
void lang_free(void *p);
char *lang_strdup(const char *s);
char *lang_strndup(const char *s, size_t n);
/* Memory that holds pointers to GC objects but is not itself GC memory
 * (a malloc'd table, say) must be registered. */
void lang_gc_add_roots(void *start, void *end);
void lang_gc_remove_roots(void *start, void *end);
size_t lang_gc_heap_size(void);
/* A full collection, then the bytes of the objects it found reachable:
 * what the runtime keeps alive (tests of retention use it). */
size_t lang_gc_live_bytes(void);
/* Run fn(obj, data) once obj has become unreachable (obj from
 * lang_alloc or lang_alloc_atomic); no ordering among finalisers.  The
 * finaliser must not allocate GC memory.  Finalisers run on the thread
 * that allocates, during allocation. */
void lang_gc_finalize(void *obj, void (*fn)(void *obj, void *data), void *data);
/* A full collection now, then the finalisers it made ready. */
void lang_gc_collect(void);
/* Memory that GC objects own but the collector cannot see (tensor
 * buffers from the device allocator): count it, so that garbage holding
 * much of it is found.  lang_gc_external_alloc collects first when the
 * bytes live outside the heap have grown by LANG_GC_EXTERNAL_STEP since
 * the last collection it made, or when LANG_GC_EXTERNAL_MIN_STEP bytes, and half
 * the bytes live outside, have been allocated there since the last
 * collection of any kind; lang_gc_external_free (called from
 * finalisers) counts them down.  Thread-safe. */
#define LANG_GC_EXTERNAL_STEP ((size_t)64 << 20)
/* (the "waiting" step for external bytes: a training step allocates a
 * few megabytes of tensors, and a collection per step would mark the
 * heap again each time) */
#define LANG_GC_EXTERNAL_MIN_STEP ((size_t)32 << 20)
void lang_gc_external_alloc(size_t bytes);
void lang_gc_external_free(size_t bytes);
size_t lang_gc_external_bytes(void);

/* Collections timed by reverse passes (grad, value_and_grad).  When one
 * starts at Mist call depth `depth`, lang_gc_pass_due says whether a
 * collection is due before it ends; if so the caller lets go of what it
 * holds of the last pass (ev_tape_forget) and calls
 * lang_gc_pass_collect, which collects now, while the last pass's chain
 * of backpropagators is dead, and sets the step so that the next
 * collection waits for the next pass (see gc.c). */
bool lang_gc_pass_due(int depth);
void lang_gc_pass_collect(void);
/* Make the calling thread known to the collector, if it is not yet
 * (a host thread calling the API); it is forgotten again when the
 * thread exits.  Every public entry point that may allocate calls it.
 * Threads made with lang_run_on_stack are known already. */
void lang_gc_enter_thread(void);
/* Start fn(arg) on a detached background thread whose stack is
 * stack_size bytes (0: the default), registered with the collector for
 * its whole life; false if it could not be made. */
bool lang_gc_thread_start(size_t stack_size, void *(*fn)(void *), void *arg);
/* Run fn(arg) on a thread with a stack of stack_size bytes and wait for
 * it; false if the thread could not be made. */
bool lang_run_on_stack(size_t stack_size, void *(*fn)(void *), void *arg);

#endif
