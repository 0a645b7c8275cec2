/* tensor_impl.h: what lang/tensor*.c share and nothing else includes:
 * the strided n-d loop that every elementwise kernel, copy and cast runs
 * on, the cast table, broadcasting of shapes, and a few helpers.
 *
 * The loop walks up to LANG_ND_MAXOPS operands of one shape together,
 * each with its own byte strides (0 on broadcast axes).  It first drops
 * axes of size 1 and merges axes that are contiguous in every operand,
 * so a contiguous tensor is one long row whatever its shape; then it
 * calls a row function on the innermost axis, splitting the rows (or,
 * for a few long rows, each row) over the VM's thread pool when there
 * are at least LANG_ND_PAR_MIN elements.  Row functions run on pool
 * threads: they must not allocate GC memory or raise, and report
 * failures through their context. */
#ifndef MIST_LANG_TENSOR_IMPL_H
#define MIST_LANG_TENSOR_IMPL_H

#include "lang/tensor.h"

#define LANG_ND_MAXOPS 4
#define LANG_ND_PAR_MIN ((int64_t)1 << 16)

/* fn(ctx, p, s, n): n elements; operand k starts at p[k] and steps s[k] bytes. */
typedef void (*LangRowFn)(void *ctx, char *const *p, const int64_t *s, int64_t n);

typedef struct LangNdLoop {
  int nops, ndim;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  int64_t strides[LANG_ND_MAXOPS][LANG_TENSOR_MAX_DIMS];   /* bytes */
  char *base[LANG_ND_MAXOPS];
} LangNdLoop;

/* A loop over `shape`; then set each operand with lang_nd_operand. */
void lang_nd_init(LangNdLoop *l, int nops, int ndim, const int64_t *shape);
/* Operand k is tensor t broadcast to the loop's shape (t's shape must
 * broadcast to it: callers check first). */
void lang_nd_operand(LangNdLoop *l, int k, const ObjTensor *t);
/* Run fn over every element; pool NULL runs on the calling thread. */
void lang_nd_run(struct DevPool *pool, LangNdLoop *l, LangRowFn fn, void *ctx);

/* The row function that copies operand 1 (dtype from) to operand 0
 * (dtype to), converting as astype does. */
LangRowFn lang_cast_row(DType from, DType to);

/* The NumPy broadcast of two shapes into out (ndim *nout); raises
 * "FNAME: shapes (2,) and (3,) cannot be broadcast". */
bool lang_broadcast_shapes(MistVM *vm, const char *fname, int na, const int64_t *sa, int nb,
                           const int64_t *sb, int *nout, int64_t *out);
/* Contiguous (row-major) element strides for shape. */
void lang_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/* The product of shape, or -1 when it exceeds LANG_TENSOR_MAX_SIZE. */
int64_t lang_shape_size(int ndim, const int64_t *shape);

/* Float to int conversions of astype: truncation toward zero,
 * saturating at the type's limits, NaN to 0. */
int32_t lang_f2i32(double x);
int64_t lang_f2i64(double x);

/* A tensor made from an operand value: the tensor itself, a 0-d tensor
 * for a number (dtype dt), or tensor(list) for a list or tuple. */
bool lang_tensor_of_value(MistVM *vm, const char *fname, Value v, DType dt, ObjTensor **out);

#endif
