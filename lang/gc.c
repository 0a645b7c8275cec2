/* gc.c: memory for the whole runtime, through the Boehm-Demers-Weiser
 * conservative collector.  This is the one file that includes <gc.h>;
 * the rest of the code base allocates with lang_alloc (zeroed, scanned
 * for pointers) or lang_alloc_atomic (text and numbers, not scanned).
 *
 * The collector is process-wide state, the only global state the
 * runtime has.  Its warnings are silenced (the library never prints by
 * itself); running out of memory entirely is the one case where the
 * process stops, with a one-line message on stderr.
 */
#define GC_THREADS 1
#include <gc/gc.h>

#include <pthread.h>
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

void lang_gc_init(void) {
  if (GC_is_init_called()) return;
  GC_INIT();
  GC_set_warn_proc(GC_ignore_warn_proc);
  GC_set_oom_fn(out_of_memory);
}

/* Threads that allocate or hold GC pointers must be known to the
 * collector.  Allowing it makes every allocation take a lock, so it is
 * done only when a second thread is first started. */
void lang_gc_allow_threads(void) {
  GC_allow_register_threads();
}

bool lang_gc_register_thread(void) {
  struct GC_stack_base sb;
  if (GC_get_stack_base(&sb) != GC_SUCCESS) return false;
  int r = GC_register_my_thread(&sb);
  return r == GC_SUCCESS || r == GC_DUPLICATE;
}

void lang_gc_unregister_thread(void) {
  GC_unregister_my_thread();
}

void *lang_alloc(size_t size) {
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

/* Run fn(arg) on a new thread whose stack is stack_size bytes (reserved
 * address space; pages are touched only as the stack grows), registered
 * with the collector so its stack is scanned.  Waits for it.  False if
 * no such thread could be made (the caller then runs fn itself). */
bool lang_run_on_stack(size_t stack_size, void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t t;
  bool ok = pthread_attr_setstacksize(&attr, stack_size) == 0 &&
            GC_pthread_create(&t, &attr, fn, arg) == 0;
  pthread_attr_destroy(&attr);
  if (ok) GC_pthread_join(t, NULL);
  return ok;
}
