/* devices/dtype.h: the element types a tensor buffer can hold.
 * bool is stored as one uint8_t, 0 or 1. */
#ifndef MIST_DEVICES_DTYPE_H
#define MIST_DEVICES_DTYPE_H

#include <stddef.h>

typedef enum { DT_BOOL, DT_I32, DT_I64, DT_F32, DT_F64 } DType;

#define DT_COUNT 5

/* Bytes per element: 1, 4, 8, 4, 8. */
size_t dev_dtype_size(DType t);
/* "bool", "i32", "i64", "f32", "f64"; "?" for an out-of-range value. */
const char *dev_dtype_name(DType t);

#endif
