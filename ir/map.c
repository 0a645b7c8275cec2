/* map.c: the pointer map of map.h, its insertion and growth. */
#include "ir/map.h"
#include "lang/gc.h"

static size_t slot_of(const NodeMap *m, const void *key) {
  size_t mask = m->cap - 1;
  size_t i = ir_map_hash(key) & mask;
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & mask;
  return i;
}

void ir_map_put(NodeMap *m, const void *key, void *val) {
  if (2 * (m->n + 1) > m->cap) {
    NodeMap big = {m->cap ? 2 * m->cap : 32, 0, NULL, NULL};
    big.keys = lang_alloc(big.cap * sizeof *big.keys);
    big.vals = lang_alloc(big.cap * sizeof *big.vals);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = slot_of(&big, m->keys[i]);
        big.keys[j] = m->keys[i];
        big.vals[j] = m->vals[i];
        big.n++;
      }
    *m = big;
  }
  size_t i = slot_of(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
}
