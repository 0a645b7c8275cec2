/* devices/alloc.h: a caching allocator for tensor buffers.  A fresh page
 * costs ~10.8 us to fault in on these machines, so freed buffers are kept
 * by size class and handed out again, the most recently made first; from
 * 256 KiB on they are backed by huge pages (madvise MADV_HUGEPAGE),
 * several to a 2 MiB page below 2 MiB. */
#ifndef MIST_DEVICES_ALLOC_H
#define MIST_DEVICES_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef struct DevAllocator DevAllocator;

/* NULL when out of memory.  dev_allocator_free releases every cached
 * buffer; buffers still handed out must not be freed through it after. */
DevAllocator *dev_allocator_new(void);
void dev_allocator_free(DevAllocator *a);

/* A buffer of at least `bytes` bytes (0 allowed), 64-byte aligned, with
 * unspecified contents; NULL when out of memory.  Thread-safe. */
void *dev_buf_alloc(DevAllocator *a, size_t bytes);
/* Same, filled with zeros. */
void *dev_buf_calloc(DevAllocator *a, size_t bytes);
/* Give back a buffer from dev_buf_alloc with the same `bytes`; it goes
 * to the cache, or to the OS when the cache holds more than its cap
 * (1 GiB by default).  p may be NULL.  Thread-safe. */
void dev_buf_free(DevAllocator *a, void *p, size_t bytes);
/* The same, for a buffer last written when the caller's count (of
 * buffers made, say) was `stamp`: frees wait until the next allocation,
 * which puts them on their lists in the order of their stamps, so that
 * the buffer handed out next is the one written last (the most likely
 * to be in the caches).  dev_buf_free's stamp is newer than any. */
void dev_buf_free_stamped(DevAllocator *a, void *p, size_t bytes, uint64_t stamp);
/* Bytes held in the cache (not handed out). */
size_t dev_allocator_cached_bytes(DevAllocator *a);
/* Set the cache's cap in bytes (0: cache nothing); trims at once. */
void dev_allocator_set_cap(DevAllocator *a, size_t cap);
/* Give every cached buffer back to the OS. */
void dev_allocator_trim(DevAllocator *a);

#endif
