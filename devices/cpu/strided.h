/* devices/cpu/strided.h: the general (strided) path for elementwise work:
 * gather a strided view into a contiguous buffer, or scatter a
 * contiguous buffer into one.  With it, any strided or broadcast
 * (stride 0) elementwise operation is a copy plus a contiguous vmath.h
 * kernel.  Strides are in elements and may be negative or 0. */
#ifndef MIST_DEVICES_CPU_STRIDED_H
#define MIST_DEVICES_CPU_STRIDED_H

#include <stddef.h>
#include <stdint.h>

#include "devices/pool.h"

/* out[i0, ..., i{nd-1}] at out + sum(i_k * out_strides[k]) gets the element
 * at x + sum(i_k * x_strides[k]), for every index of shape[0..nd).  elem
 * is the element size in bytes (1, 2, 4, 8 are fast; any works).  nd = 0
 * copies one element.  out must not overlap x. */
void dev_copy_strided(DevPool *p, size_t elem, void *out, const int64_t *out_strides,
                      const void *x, const int64_t *x_strides, int nd, const int64_t *shape);

/* Row-major strides (in elements) of a contiguous array of this shape. */
void dev_contiguous_strides(int nd, const int64_t *shape, int64_t *strides);

#endif
