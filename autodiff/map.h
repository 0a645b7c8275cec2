/* map.h: a pointer-to-pointer hash map for the transformations (node to
 * node, graph to graph), GC-allocated. */
#ifndef MIST_AUTODIFF_MAP_H
#define MIST_AUTODIFF_MAP_H

#include <stdint.h>

#include "lang/gc.h"

typedef struct Map {
  size_t cap, n;
  const void **keys;
  void **vals;
} Map;

static inline size_t hash_ptr(const void *p) { return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull; }

static inline void *map_get(const Map *m, const void *k) {
  if (!m->cap) return NULL;
  for (size_t i = hash_ptr(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == k) return m->vals[i];
  }
}

static inline void map_put(Map *m, const void *k, void *v) {
  if (2 * (m->n + 1) > m->cap) {
    Map old = *m;
    m->cap = old.cap ? 2 * old.cap : 64;
    m->n = 0;
    m->keys = lang_alloc(m->cap * sizeof *m->keys);
    m->vals = lang_alloc(m->cap * sizeof *m->vals);
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i]) map_put(m, old.keys[i], old.vals[i]);
  }
  size_t i = hash_ptr(k) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = k;
  m->vals[i] = v;
}

#endif
