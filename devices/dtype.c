/* devices/dtype.c: sizes and names of the element types (dtype.h).  A
 * table indexed by DType; out-of-range values answer 0 and "?". */
#include "devices/dtype.h"

#include <stdint.h>

static const struct { size_t size; const char *name; } dtypes[DT_COUNT] = {
  [DT_BOOL] = {sizeof(uint8_t), "bool"},
  [DT_I32] = {sizeof(int32_t), "i32"},
  [DT_I64] = {sizeof(int64_t), "i64"},
  [DT_F32] = {sizeof(float), "f32"},
  [DT_F64] = {sizeof(double), "f64"},
};

size_t dev_dtype_size(DType t) {
  return (unsigned)t < DT_COUNT ? dtypes[t].size : 0;
}

const char *dev_dtype_name(DType t) {
  return (unsigned)t < DT_COUNT ? dtypes[t].name : "?";
}
