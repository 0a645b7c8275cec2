/* devices/alloc.c: the caching allocator for tensor buffers (alloc.h).
 *
 * Why: on these machines a fresh 4 KiB page costs ~10.8 us to fault in,
 * so a kernel writing a new 40 MB temporary spends 100 ms in the kernel
 * the first time and 1 ms when the buffer is reused.  Freed buffers are
 * therefore kept, per size class, and handed out again.
 *
 * Size classes: four per power of two (1, 1.25, 1.5, 1.75 x 2^k), at
 * least 64 bytes, so a request wastes at most 25%.  Buffers below
 * MMAP_MIN come from posix_memalign; bigger ones are mmap'd directly and,
 * from 2 MiB on, aligned to 2 MiB and advised MADV_HUGEPAGE so that one
 * fault maps 2 MiB.  A freed buffer goes on its class's list (the link
 * lives in the buffer itself) unless the cache would exceed its cap
 * (1 GiB), in which case it goes back to the OS.  One mutex guards it
 * all: allocations are per tensor, not per element.
 *
 * Slabs: a buffer between MMAP_MIN and 2 MiB mapped on its own lies on a
 * few hundred 4 KiB pages, and every pass over it misses the TLB on each
 * one (an MLP's 784x256 gradient, computed and then read by the update:
 * a training step 3-4% slower).  So such buffers are cut from slabs, 2
 * MiB huge pages holding several buffers of one class, where those fill
 * at least seven eighths of the slab (every class from 256 KiB to 1 MiB
 * but 768 KiB, and 1.75 MiB).  A new slab's other buffers wait on the
 * class's fresh list, used when its cache list is empty.  A buffer of a
 * slab goes back to the OS alone (the kernel splits the huge page); the
 * slab's unused tail goes with the last of them.
 *
 * Newest first.  A buffer handed out again is cheap to write when it is
 * still in the caches, that is when it was last written lately; but the
 * collector finalises the tensors it found dead all at once and in no
 * useful order, so a plain LIFO list hands out the garbage of several
 * steps of a training loop in a random order, mostly cold.  So frees
 * carry a stamp (the caller's count of buffers made when this one was:
 * a temporary is written when it is made) and wait on a pending array;
 * the next allocation sorts them and pushes them oldest first, so each
 * class hands out its most recently made buffer first (a training step
 * right after a collection gets the previous step's). */
#include "devices/alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Under AddressSanitizer a cached buffer is poisoned, so a use after
 * dev_buf_free is reported even though the memory stays mapped. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef POISON
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define NCLASSES 256
#define MIN_BYTES 64
#define MMAP_MIN ((size_t)256 << 10)
#define HUGE_PAGE ((size_t)2 << 20)
#define DEFAULT_CAP ((size_t)1 << 30)

typedef struct FreeBuf { struct FreeBuf *next; } FreeBuf;

/* A slab: its 2 MiB at base, in buffers of `size` bytes; bit i of
 * `mapped` is set while buffer i is (handed out, cached or fresh), so an
 * address the kernel gave out again after a buffer went back is never
 * taken for that buffer. */
typedef struct Slab {
  char *base;
  size_t size;
  unsigned mapped;
} Slab;

/* a free waiting for the next allocation (newest first) */
typedef struct Pending {
  void *p;
  size_t bytes;
  uint64_t stamp;
} Pending;

struct DevAllocator {
  pthread_mutex_t m;
  Pending *pending;
  size_t npending, cappending;
  FreeBuf *lists[NCLASSES];
  FreeBuf *fresh[NCLASSES];   /* buffers of slabs never handed out */
  size_t cached;   /* bytes on the lists */
  size_t cap;
  Slab *slabs;
  int nslabs, capslabs;
};

/* The class of a request and its rounded size. */
static int size_class(size_t bytes, size_t *rounded) {
  if (bytes < MIN_BYTES) bytes = MIN_BYTES;
  int k = 63 - __builtin_clzll((unsigned long long)bytes);   /* 2^k <= bytes */
  size_t base = (size_t)1 << k;
  size_t step = k >= 2 ? base >> 2 : 1;
  size_t q = (bytes - base + step - 1) / step;   /* 0..4 */
  size_t r = base + q * step;
  if (q == 4) {
    k++;
    q = 0;
  }
  *rounded = r;
  return k * 4 + (int)q;
}

static void *os_alloc(size_t size) {
  if (size < MMAP_MIN) {
    void *p;
    return posix_memalign(&p, 64, size) == 0 ? p : NULL;
  }
  if (size < HUGE_PAGE) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  /* Over-map by one huge page and trim, so the buffer starts on a 2 MiB
   * boundary and every 2 MiB of it can be one huge page. */
  size_t len = size + HUGE_PAGE;
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t head = start - (uintptr_t)raw;
  if (head) munmap(raw, head);
  size_t tail = len - head - size;
  if (tail) munmap((char *)start + size, tail);
#ifdef MADV_HUGEPAGE
  madvise((void *)start, size, MADV_HUGEPAGE);
#endif
  return (void *)start;
}

static void os_free(void *p, size_t size) {
  if (size < MMAP_MIN) free(p);
  else munmap(p, size);
}

/* How many buffers of `size` bytes a slab holds: 0 when the size is not
 * cut from slabs (see the top of the file). */
static int slab_count(size_t size) {
  if (size < MMAP_MIN || size >= HUGE_PAGE) return 0;
  size_t k = HUGE_PAGE / size;
  return 8 * k * size >= 7 * HUGE_PAGE ? (int)k : 0;
}

/* A new slab of class c (buffers of `size` bytes): the first buffer,
 * the others on the fresh list; NULL when out of memory.  Called with
 * the lock held. */
static void *slab_new(DevAllocator *a, int c, size_t size) {
  if (a->nslabs == a->capslabs) {
    int cap = a->capslabs ? 2 * a->capslabs : 16;
    Slab *s = realloc(a->slabs, (size_t)cap * sizeof *s);
    if (!s) return NULL;
    a->slabs = s;
    a->capslabs = cap;
  }
  char *base = os_alloc(HUGE_PAGE);
  if (!base) return NULL;
  int k = slab_count(size);
  a->slabs[a->nslabs++] = (Slab){base, size, (1u << k) - 1};
  for (int i = k - 1; i >= 1; i--) {
    FreeBuf *b = (FreeBuf *)(base + (size_t)i * size);
    b->next = a->fresh[c];
    a->fresh[c] = b;
  }
  return base;
}

/* Give buffer p of `size` bytes back to the OS, and its slab's tail
 * with the slab's last buffer.  Called with the lock held (or with no
 * allocator, when nothing comes from slabs). */
static void release(DevAllocator *a, void *p, size_t size) {
  if (a && slab_count(size)) {
    char *base = (char *)((uintptr_t)p & ~(uintptr_t)(HUGE_PAGE - 1));
    for (int i = 0; i < a->nslabs; i++) {
      Slab *s = &a->slabs[i];
      size_t k = (size_t)((char *)p - base) / size;
      if (s->base != base || s->size != size || (char *)p != base + k * size || !(s->mapped >> k & 1)) continue;
      munmap(p, size);
      s->mapped &= ~(1u << k);
      if (!s->mapped) {
        size_t used = (size_t)slab_count(size) * size;
        if (used < HUGE_PAGE) munmap(base + used, HUGE_PAGE - used);
        *s = a->slabs[--a->nslabs];
      }
      return;
    }
  }
  os_free(p, size);
}

DevAllocator *dev_allocator_new(void) {
  DevAllocator *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  pthread_mutex_init(&a->m, NULL);
  a->cap = DEFAULT_CAP;
  return a;
}

/* Release cached buffers, largest classes first, until cached <= limit;
 * at 0, the fresh ones of slabs too.  Called with the lock held. */
static void trim_to(DevAllocator *a, size_t limit) {
  for (int c = NCLASSES - 1; c >= 0 && a->cached > limit; c--) {
    size_t size = ((size_t)1 << (c / 4)) + (size_t)(c % 4) * (((size_t)1 << (c / 4)) >> 2);
    while (a->lists[c] && a->cached > limit) {
      FreeBuf *b = a->lists[c];
      UNPOISON(b, size);
      a->lists[c] = b->next;
      a->cached -= size;
      release(a, b, size);
    }
  }
  for (int c = 0; c < NCLASSES && limit == 0; c++) {
    size_t size = ((size_t)1 << (c / 4)) + (size_t)(c % 4) * (((size_t)1 << (c / 4)) >> 2);
    while (a->fresh[c]) {
      FreeBuf *b = a->fresh[c];
      a->fresh[c] = b->next;
      release(a, b, size);
    }
  }
}

static void push(DevAllocator *a, void *p, size_t bytes);

static int by_stamp(const void *x, const void *y) {
  uint64_t s = ((const Pending *)x)->stamp, t = ((const Pending *)y)->stamp;
  return s < t ? -1 : s > t;
}

/* The pending frees onto their lists, oldest first.  Called with the
 * lock held. */
static void drain(DevAllocator *a) {
  if (!a->npending) return;
  qsort(a->pending, a->npending, sizeof *a->pending, by_stamp);
  for (size_t i = 0; i < a->npending; i++) push(a, a->pending[i].p, a->pending[i].bytes);
  a->npending = 0;
}

void dev_allocator_free(DevAllocator *a) {
  if (!a) return;
  drain(a);
  trim_to(a, 0);
  free(a->pending);
  free(a->slabs);
  pthread_mutex_destroy(&a->m);
  free(a);
}

void *dev_buf_alloc(DevAllocator *a, size_t bytes) {
  size_t size;
  if (bytes > (SIZE_MAX >> 2)) return NULL;
  int c = size_class(bytes, &size);
  if (a) {
    pthread_mutex_lock(&a->m);
    drain(a);
    void *b = a->lists[c];
    if (b) {
      UNPOISON(b, size);
      a->lists[c] = a->lists[c]->next;
      a->cached -= size;
    } else if (a->fresh[c]) {
      b = a->fresh[c];
      a->fresh[c] = a->fresh[c]->next;
    } else if (slab_count(size)) {
      b = slab_new(a, c, size);
    }
    pthread_mutex_unlock(&a->m);
    if (b) return b;
  }
  void *p = os_alloc(size);
  if (!p && a) {
    /* Out of memory: give the cache back and try once more. */
    dev_allocator_trim(a);
    p = os_alloc(size);
  }
  return p;
}

void *dev_buf_calloc(DevAllocator *a, size_t bytes) {
  void *p = dev_buf_alloc(a, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

/* p onto its class's list, or back to the OS past the cap.  Called with
 * the lock held. */
static void push(DevAllocator *a, void *p, size_t bytes) {
  size_t size;
  int c = size_class(bytes, &size);
  if (a->cached + size <= a->cap) {
    FreeBuf *b = p;
    UNPOISON(b, sizeof *b);
    b->next = a->lists[c];
    POISON(b, size);
    a->lists[c] = b;
    a->cached += size;
  } else {
    UNPOISON(p, size);
    release(a, p, size);
  }
}

void dev_buf_free_stamped(DevAllocator *a, void *p, size_t bytes, uint64_t stamp) {
  if (!p) return;
  if (!a) {
    size_t size;
    size_class(bytes, &size);
    os_free(p, size);
    return;
  }
  pthread_mutex_lock(&a->m);
  if (a->npending == a->cappending) {
    size_t cap = a->cappending ? 2 * a->cappending : 256;
    Pending *q = realloc(a->pending, cap * sizeof *q);
    if (q) {
      a->pending = q;
      a->cappending = cap;
    } else {
      drain(a);   /* (no room to wait: in the order given) */
      push(a, p, bytes);
      pthread_mutex_unlock(&a->m);
      return;
    }
  }
  size_t size;
  size_class(bytes, &size);
  POISON(p, size);
  a->pending[a->npending++] = (Pending){p, bytes, stamp};
  pthread_mutex_unlock(&a->m);
}

void dev_buf_free(DevAllocator *a, void *p, size_t bytes) {
  dev_buf_free_stamped(a, p, bytes, UINT64_MAX);
}

size_t dev_allocator_cached_bytes(DevAllocator *a) {
  if (!a) return 0;
  pthread_mutex_lock(&a->m);
  drain(a);
  size_t n = a->cached;
  pthread_mutex_unlock(&a->m);
  return n;
}

void dev_allocator_set_cap(DevAllocator *a, size_t cap) {
  if (!a) return;
  pthread_mutex_lock(&a->m);
  drain(a);
  a->cap = cap;
  trim_to(a, cap);
  pthread_mutex_unlock(&a->m);
}

void dev_allocator_trim(DevAllocator *a) {
  if (!a) return;
  pthread_mutex_lock(&a->m);
  drain(a);
  trim_to(a, 0);
  pthread_mutex_unlock(&a->m);
}
