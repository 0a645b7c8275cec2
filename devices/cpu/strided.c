/* devices/cpu/strided.c: copies between strided views (strided.h), the
 * general path under every elementwise kernel: a transposed, sliced or
 * broadcast operand is gathered into a contiguous buffer, the contiguous
 * kernel runs, and the result is scattered back if it must be.
 *
 * Approach: the innermost dimension is a loop with two strides (the
 * compiler vectorises the stride-1 case); the outer dimensions are
 * flattened into "rows", each row's offsets computed from its index,
 * and rows are split over the pool when there are enough elements.
 * Element sizes 1, 2, 4 and 8 are copied as integers of that width,
 * others with memcpy. */
#include "devices/cpu/strided.h"

#include <string.h>

#include "devices/cpu/vmath.h"

void dev_contiguous_strides(int nd, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; k--) {
    strides[k] = s;
    s *= shape[k] > 0 ? shape[k] : 1;
  }
}

typedef struct {
  size_t elem;
  char *out;
  const char *x;
  const int64_t *os, *xs, *shape;
  int nd;
} Copy;

#define ROW(T)                                                                  \
  do {                                                                          \
    T *o = (T *)(void *)op;                                                     \
    const T *s = (const T *)(const void *)xp;                                   \
    if (so == 1 && sx == 1)                                                     \
      for (int64_t i = 0; i < len; i++) o[i] = s[i];                            \
    else                                                                        \
      for (int64_t i = 0; i < len; i++) o[i * so] = s[i * sx];                  \
  } while (0)

static void rows(void *ctx, int64_t r0, int64_t r1) {
  const Copy *c = ctx;
  int nd = c->nd;
  int64_t len = c->shape[nd - 1], so = c->os[nd - 1], sx = c->xs[nd - 1];
  for (int64_t r = r0; r < r1; r++) {
    /* offsets of row r from its index in the outer dimensions */
    int64_t rem = r, off_o = 0, off_x = 0;
    for (int k = nd - 2; k >= 0; k--) {
      int64_t i = rem % c->shape[k];
      rem /= c->shape[k];
      off_o += i * c->os[k];
      off_x += i * c->xs[k];
    }
    char *op = c->out + off_o * (int64_t)c->elem;
    const char *xp = c->x + off_x * (int64_t)c->elem;
    switch (c->elem) {
    case 1: ROW(uint8_t); break;
    case 2: ROW(uint16_t); break;
    case 4: ROW(uint32_t); break;
    case 8: ROW(uint64_t); break;
    default:
      for (int64_t i = 0; i < len; i++)
        memcpy(op + i * so * (int64_t)c->elem, xp + i * sx * (int64_t)c->elem, c->elem);
    }
  }
}

void dev_copy_strided(DevPool *p, size_t elem, void *out, const int64_t *out_strides,
                      const void *x, const int64_t *x_strides, int nd, const int64_t *shape) {
  if (nd <= 0) {
    memcpy(out, x, elem);
    return;
  }
  int64_t nrows = 1;
  for (int k = 0; k < nd; k++) {
    if (shape[k] <= 0) return;
    if (k < nd - 1) nrows *= shape[k];
  }
  Copy c = {elem, out, x, out_strides, x_strides, shape, nd};
  int64_t len = shape[nd - 1];
  int64_t grain = DEV_PAR_GRAIN / len + 1;
  dev_parallel_for(p, nrows, grain, rows, &c);
}
