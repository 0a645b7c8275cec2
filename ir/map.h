/* map.h: the one map between pointers that the IR's passes, the
 * interpreter's compiler, the printers and autodiff's transforms use
 * (nodes to nodes, graphs to graphs, nodes to small ints): open
 * addressing on the GC heap, keys never NULL.  Zero-initialise it:
 * NodeMap m = {0}. */
#ifndef MIST_IR_MAP_H
#define MIST_IR_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct NodeMap {
  size_t cap, n;
  const void **keys;
  void **vals;
} NodeMap;

static inline size_t ir_map_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

/* The value under key; NULL when absent. */
static inline void *ir_map_get(const NodeMap *m, const void *key) {
  if (!m->cap || !key) return NULL;
  size_t mask = m->cap - 1;
  for (size_t i = ir_map_hash(key) & mask;; i = (i + 1) & mask) {
    if (m->keys[i] == key) return m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

/* Adds key, or replaces its value. */
void ir_map_put(NodeMap *m, const void *key, void *val);

/* ints in a NodeMap (stored as val + 1, so 0 stays "absent") */
static inline int ir_map_int(const NodeMap *m, const void *key, int dflt) {
  void *v = ir_map_get(m, key);
  return v ? (int)((intptr_t)v - 1) : dflt;
}
static inline void ir_map_set_int(NodeMap *m, const void *key, int val) {
  ir_map_put(m, key, (void *)((intptr_t)val + 1));
}

#endif
