/* tensor.h: Mist's n-dimensional arrays.
 *
 * A tensor is a view: a dtype, a shape, strides and an offset (both
 * counted in elements) into a TensorBuf, the storage that views share.
 * Like every Mist value it is immutable: slicing, transposing and
 * reshaping contiguous data make new views of the same buffer, and
 * arithmetic builds a new buffer.  t[i] = v on a big buffer writes in
 * place, versioned as lists are (lang/value.h): the new tensor gets a
 * new TensorBuf that takes over the bytes, and the old TensorBuf, which
 * every other view of it still holds, becomes an old version that
 * notes the elements it had there and brings its bytes back when read
 * (lang_tensor_ptr).  So no view ever sees an update, and a loop that
 * sets one element at a time costs O(1) a step.
 *
 * Small buffers live inside their TensorBuf in GC memory; big ones
 * (LANG_TENSOR_INLINE_MAX bytes and more) come from the VM's caching
 * allocator (devices/alloc.h), outside the collector's scanned heap,
 * and a GC finaliser on the TensorBuf gives them back.  gc.c counts
 * those external bytes and collects when they grow, so garbage tensors
 * cannot pile up unseen.
 *
 * The files: tensor.c (the object, buffers, dtypes, views, copies and
 * casts, indexing, making tensors from nested lists and back),
 * tensor_ops.c (broadcasting, the elementwise, reduction and matmul
 * engines, operators), tensor_print.c (repr), random.c (Philox).
 *
 * Every function that can fail returns false (or NULL) after
 * lang_raise(). */
#ifndef MIST_LANG_TENSOR_H
#define MIST_LANG_TENSOR_H

#include "devices/dtype.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/vm.h"

struct DevPool;
struct DevAllocator;

/* The most dimensions a tensor may have (NumPy's limit is 32 too). */
#define LANG_TENSOR_MAX_DIMS 32
/* Buffers at least this big live outside the GC heap. */
#define LANG_TENSOR_INLINE_MAX 2048
/* The most elements one tensor may hold (2**40): beyond it, MemoryError. */
#define LANG_TENSOR_MAX_SIZE ((int64_t)1 << 40)

typedef enum { LANG_DEVICE_CPU } LangDevice;

struct TensorHeap;   /* tensor.c: the allocator, shared by the VM and live buffers */

/* Storage shared by views.  data is 64-byte aligned, or 16-byte in a
 * small buffer (tensor.c, buf_new).  A small buffer
 * (under LANG_TENSOR_INLINE_MAX bytes) has its bytes inside this object,
 * in GC memory that is not scanned (store is NULL), and is never updated
 * in place.  A big one's bytes are owned by a TensorStore (tensor.c),
 * outside the GC heap, and this object is the first part of a
 * TensorVersion (tensor.c, "Versions"): the current version of those
 * bytes, or an old version, with data and store NULL. */
typedef struct TensorBuf {
  void *data;
  size_t bytes;
  struct TensorStore *store;
} TensorBuf;

typedef struct ObjTensor {
  Obj obj;
  DType dtype;
  LangDevice device;
  int ndim;
  int64_t size;        /* product of shape */
  int64_t offset;      /* of element [0, 0, ...] from buf->data, in elements */
  TensorBuf *buf;
  int64_t *shape;      /* -> dims[0 .. ndim) */
  int64_t *strides;    /* -> dims[ndim .. 2 ndim), in elements; 0 for broadcast axes */
  int64_t dims[];
} ObjTensor;

#define AS_TENSOR(v) ((ObjTensor *)(v).o)
static inline bool v_is_tensor(Value v) { return v_is_obj(v, O_TENSOR); }

/* Keep a GC object visibly alive up to this point: after taking raw
 * pointers into a tensor's buffer, a temporary's last use would
 * otherwise let the collector finalise its buffer while a kernel still
 * reads it. */
#define LANG_KEEP(p) __asm__ __volatile__("" : : "g"(p) : "memory")

/* ---- the VM's tensor machinery ----
 *
 * The thread pool and the allocator are made on first use, so a program
 * without tensors starts no threads.  lang_tensor_vm_free (called by
 * lang_vm_free) stops the pool and drops the VM's hold on the
 * allocator, which lives on until the last buffer from it is finalised. */
struct DevPool *lang_tensor_pool(MistVM *vm);
struct DevAllocator *lang_tensor_allocator(MistVM *vm);
void lang_tensor_vm_free(MistVM *vm);

/* ---- dtypes ---- */

/* "f32", "f64", "i32", "i64", "bool" (a str Value) to a DType; raises
 * "FNAME: dtype must be one of ..." otherwise. */
bool lang_dtype_from_value(MistVM *vm, const char *fname, Value v, DType *out);
/* bool < i32 < i64 < f32 < f64: the larger of the two. */
DType lang_dtype_promote(DType a, DType b);
static inline bool lang_dtype_is_float(DType t) { return t == DT_F32 || t == DT_F64; }

/* ---- making tensors ---- */

/* A new contiguous tensor with unspecified contents (zeroed when zero
 * is true).  NULL after MemoryError when it would be too big. */
ObjTensor *lang_tensor_new(MistVM *vm, DType dt, int ndim, const int64_t *shape, bool zero);
/* A 0-d tensor holding the number v (int, float or bool) as dtype dt. */
bool lang_tensor_scalar(MistVM *vm, DType dt, Value v, ObjTensor **out);
/* A tensor of the given shape filled with the number v. */
bool lang_tensor_full(MistVM *vm, DType dt, int ndim, const int64_t *shape, Value v,
                      ObjTensor **out);
/* tensor(data, dtype=): data a number, bool, tensor, or nested lists and
 * tuples of them.  dtype < 0 infers it: f32 if any float (or float
 * tensor: the widest), else i64 if any int, else bool. */
bool lang_tensor_from_value(MistVM *vm, const char *fname, Value data, int dtype,
                            ObjTensor **out);
/* A shape argument: an int or a tuple/list of ints, each >= 0 (-1 too
 * when allow_infer). */
bool lang_shape_from_value(MistVM *vm, const char *fname, Value v, bool allow_infer, int *ndim,
                           int64_t *shape);
/* The shape as Python prints a tuple: "(2, 3)", "(3,)", "()". */
void lang_shape_repr(int ndim, const int64_t *shape, StrBuf *out);
Value lang_shape_tuple(const ObjTensor *t);

/* ---- elements ---- */

/* Bring an old version's bytes back (a copy of the current version's,
 * with the differences undone); b becomes a current version. */
void lang_tensor_buf_current(TensorBuf *b);

/* Address of element [0, 0, ...].  Valid until the buffer is next
 * updated in place (lang_tensor_setitem), which may take the bytes
 * over: C code must not keep it across a call to Mist code. */
static inline char *lang_tensor_ptr(const ObjTensor *t) {
  char *data = __atomic_load_n((char **)&t->buf->data, __ATOMIC_ACQUIRE);
  if (__builtin_expect(data == NULL, 0)) {
    lang_tensor_buf_current(t->buf);
    data = t->buf->data;
  }
  return data + t->offset * (int64_t)dev_dtype_size(t->dtype);
}
bool lang_tensor_is_contiguous(const ObjTensor *t);
/* Can a result of dtype dt and this shape be written over t's elements,
 * t being a temporary that nothing else will read (the caller's
 * promise)?  t must cover its whole buffer, in order, and a big buffer
 * have no old versions that read its bytes (a small one, in the
 * collector's heap, has none: an update copies it).  Small ones count:
 * a backward pass over small tensors (an LSTM step) spends most of its
 * time allocating and sweeping them. */
bool lang_tensor_reusable(const ObjTensor *t, DType dt, int ndim, const int64_t *shape);
/* The element at p (of dtype dt) as a Mist value: float, int or bool. */
Value lang_tensor_load(DType dt, const char *p);
/* Store the number v at p as dtype dt; floats going to an int dtype are
 * truncated (saturating; NaN gives 0).  Raises OverflowError for a
 * Python int outside an i32's range. */
bool lang_tensor_store(MistVM *vm, DType dt, char *p, Value v);
/* item(): the one element of a 0-d or one-element tensor. */
bool lang_tensor_item(MistVM *vm, const char *fname, ObjTensor *t, Value *out);
/* tolist(): nested lists of Python numbers; a 0-d tensor gives a number. */
bool lang_tensor_tolist(MistVM *vm, ObjTensor *t, Value *out);

/* ---- views and copies ---- */

/* A view of t's buffer with another shape, strides and offset. */
ObjTensor *lang_tensor_view(const ObjTensor *t, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset);
/* t itself when it is contiguous, else a contiguous copy. */
ObjTensor *lang_tensor_contiguous(MistVM *vm, ObjTensor *t);
/* t as dtype dt: t itself when it already is, else a contiguous copy. */
bool lang_tensor_astype(MistVM *vm, ObjTensor *t, DType dt, ObjTensor **out);
/* Copy src into the (writable, freshly made) view dst, broadcasting src
 * to dst's shape and casting to dst's dtype.  fname names the caller in
 * a shape error. */
bool lang_tensor_copy_into(MistVM *vm, const char *fname, ObjTensor *dst, const ObjTensor *src);
/* reshape: shape may hold one -1.  A view when t is contiguous. */
bool lang_tensor_reshape(MistVM *vm, ObjTensor *t, int ndim, const int64_t *shape,
                         ObjTensor **out);
/* transpose: perm a permutation of the axes, or NULL to reverse them. */
bool lang_tensor_transpose(MistVM *vm, ObjTensor *t, const int *perm, ObjTensor **out);
bool lang_tensor_broadcast_to(MistVM *vm, const char *fname, ObjTensor *t, int ndim,
                              const int64_t *shape, ObjTensor **out);
/* Normalise axis (negative counts from the end) for a tensor of ndim
 * dimensions; raises "axis 2 is out of bounds for a tensor of 2
 * dimensions". */
bool lang_tensor_axis(MistVM *vm, int64_t axis, int ndim, int *out);

/* ---- indexing ---- */

/* t[index]: index an int, a slice, None (a new axis), an int or bool
 * tensor or list (at most one such), or a tuple of them. */
bool lang_tensor_getitem(MistVM *vm, ObjTensor *t, Value index, Value *out);
/* A new tensor equal to t with t[index] = v (v broadcast and cast to
 * t's dtype).  With basic indexing into a big buffer it writes in place
 * and t's buffer becomes an old version (see above): O(size of the
 * region) amortised; otherwise the whole buffer is copied. */
bool lang_tensor_setitem(MistVM *vm, ObjTensor *t, Value index, Value v, Value *out);

/* A new tensor equal to t with v added at t[index]: positions that an
 * int tensor index repeats add up (NumPy's add.at). */
bool lang_tensor_index_add(MistVM *vm, ObjTensor *t, Value index, Value v, Value *out);
/* fresh[index] += v in place, for a tensor the caller made and no program
 * has seen yet. */
bool lang_tensor_add_at(MistVM *vm, ObjTensor *fresh, Value index, Value v);
/* zeros(shape, dt) with v added at [index], as lang_tensor_index_add:
 * the sensitivity of x[index] for an x of that shape. */
bool lang_tensor_scatter(MistVM *vm, DType dt, int ndim, const int64_t *shape, Value index,
                         Value v, Value *out);
/* acc + lang_tensor_scatter(acc's dtype and shape, index, v) written over
 * acc, a contiguous temporary that nothing else reads, with the bits of
 * the two steps (acc + 0 outside the block, acc + (0 + v) in it), where
 * index selects one block of rows (an int, a slice of step 1) that v
 * fills; false, changing nothing, for any other index or v. */
bool lang_tensor_add_block(ObjTensor *acc, Value index, const ObjTensor *v);

/* ---- derivatives (tensor_grad.c) ----
 *
 * Sensitivities (None is zero) fitted to the value they belong to; each
 * result has like's dtype when like is a float tensor, and is a Python
 * float when like is a number. */

/* d summed back to like's shape, undoing NumPy broadcasting: leading
 * axes summed away, axes where like has size 1 summed (a sensitivity
 * with axes of size 1 where like has more spreads over them).  like a
 * number: the sum of all of d, as a float. */
bool lang_tensor_sum_to(MistVM *vm, Value d, Value like, Value *out);
/* The transpose of sum_to: d broadcast to like's shape (a view). */
bool lang_tensor_broadcast_like(MistVM *vm, Value d, Value like, Value *out);
/* d, the sensitivity of a reduction of like over the axes in the mask
 * (kept as size 1 or dropped), broadcast back to like's shape. */
bool lang_tensor_unreduce(MistVM *vm, Value d, ObjTensor *like, uint64_t axes, bool keepdims,
                          Value *out);
/* The sensitivity of an activation in one pass, for d and v two float
 * tensors of one dtype and one shape (false, raising nothing, for any
 * other operands: the caller then computes it op by op): sigmoid's
 * d * y * (1 - y) and tanh's d * (1 - y * y) with v the result y, relu's
 * d * (x > 0) with v the argument x.  Each element is computed with the
 * same operations in the same order as op by op, so gives the same bits.
 * over_d: d is a temporary that nothing reads afterwards, whose buffer
 * may take the result (lang_tensor_reusable).  NULL *out after
 * MemoryError. */
typedef enum { LANG_SENS_SIGMOID, LANG_SENS_TANH, LANG_SENS_RELU } LangActSens;
bool lang_tensor_act_sens(MistVM *vm, LangActSens kind, Value d, Value v, bool over_d, ObjTensor **out);
/* log_softmax's sensitivity d - exp(y) * sum(d, axes, keepdims=True)
 * in one pass over each row, for d and y two contiguous float tensors
 * of one dtype and one shape reduced over their last axis (false,
 * raising nothing, for any other operands: the caller then computes it
 * op by op).  exp is the tensor kernel's and each row's sum
 * dev_sum_f32/f64's, as sum() reduces a last axis, and the product and
 * the difference are rounded apart, so the bits are op by op's.  NULL
 * *out after an error. */
bool lang_tensor_log_softmax_sens(MistVM *vm, Value d, ObjTensor *y, uint64_t axes, ObjTensor **out);
/* a + b (op TB_ADD) or a * b (TB_MUL) for two small contiguous float
 * tensors of one dtype and one shape (two parts of a sensitivity being
 * summed, a sensitivity times a value), as lang_arith computes them but
 * without its broadcasting and dispatch; false, raising nothing, for any
 * other operands or op.  dead: a (1) or b (2) is a temporary that
 * nothing reads afterwards, whose buffer may take the result
 * (lang_tensor_reusable).  NULL *out after MemoryError. */
bool lang_tensor_alike_op(MistVM *vm, int op, Value a, Value b, unsigned dead, ObjTensor **out);

/* ---- operations (tensor_ops.c) ---- */

/* Elementwise binary operations, in the order of their names. */
#define LANG_TENSOR_BINOPS(X)                                                         \
  X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(TRUEDIV, "truediv")                     \
  X(FLOORDIV, "floordiv") X(MOD, "mod") X(POW, "pow") X(MAXIMUM, "maximum")           \
  X(MINIMUM, "minimum") X(ATAN2, "atan2") X(EQ, "eq") X(NE, "ne") X(LT, "lt") X(LE, "le") X(GT, "gt")   \
  X(GE, "ge")
typedef enum {
#define X(e, n) TB_##e,
  LANG_TENSOR_BINOPS(X)
#undef X
  TB_COUNT
} TensorBinop;

#define LANG_TENSOR_UNOPS(X)                                                          \
  X(NEG, "neg") X(ABS, "abs") X(EXP, "exp") X(LOG, "log") X(SQRT, "sqrt")             \
  X(SIN, "sin") X(COS, "cos") X(TANH, "tanh") X(SIGMOID, "sigmoid") X(RELU, "relu")  \
  X(ROUND, "round") X(FLOOR, "floor") X(CEIL, "ceil") X(TAN, "tan") X(ASIN, "asin")    \
  X(ACOS, "acos") X(ATAN, "atan") X(LOG2, "log2") X(LOG10, "log10") X(LGAMMA, "lgamma")  \
  X(ERF, "erf")
typedef enum {
#define X(e, n) TU_##e,
  LANG_TENSOR_UNOPS(X)
#undef X
  TU_COUNT
} TensorUnop;

#define LANG_TENSOR_REDUCTIONS(X)                                                     \
  X(SUM, "sum") X(MEAN, "mean") X(MAX, "max") X(MIN, "min") X(ARGMAX, "argmax")       \
  X(ARGMIN, "argmin") X(PROD, "prod") X(ANY, "any") X(ALL, "all")
typedef enum {
#define X(e, n) TR_##e,
  LANG_TENSOR_REDUCTIONS(X)
#undef X
  TR_COUNT
} TensorReduction;

const char *lang_tensor_binop_name(TensorBinop op);
const char *lang_tensor_unop_name(TensorUnop op);
const char *lang_tensor_reduction_name(TensorReduction op);

/* The shape of a @ b for operands of shapes sa and sb, into out (ndim
 * *nout); raises matmul's shape errors (type inference checks shapes
 * with it before running, ir/infer_rules.c). */
bool lang_matmul_shape(MistVM *vm, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                       int64_t *out);

/* a op b with NumPy broadcasting, where a and b are tensors, numbers,
 * bools, or lists/tuples of numbers (made into tensors); at least one
 * should be a tensor.  A Python number takes the tensor's dtype (f32
 * for a float with an int or bool tensor). */
bool lang_tensor_binary(MistVM *vm, TensorBinop op, Value a, Value b, Value *out);
bool lang_tensor_unary(MistVM *vm, TensorUnop op, ObjTensor *x, ObjTensor **out);
/* where(c, a, b): a where c is true, else b, broadcast together. */
bool lang_tensor_where(MistVM *vm, Value c, Value a, Value b, Value *out);
/* A reduction over the axes whose bits are set in axes (all of them for
 * ~0); argmax/argmin take exactly one axis or all of them (the index
 * into the flattened tensor). */
bool lang_tensor_reduce(MistVM *vm, TensorReduction op, ObjTensor *x, uint64_t axes,
                        bool keepdims, ObjTensor **out);
bool lang_tensor_matmul(MistVM *vm, ObjTensor *a, ObjTensor *b, ObjTensor **out);
/* How BLAS reads a matrix of r rows and c columns whose strides (in
 * elements) are sr and sc, in place: stored transposed or not, and the
 * row stride; false when it cannot (the matrix must be copied first).
 * lang_tensor_matmul's own rule, which graph mode's direct products
 * follow (jit/matmul.c). */
bool lang_mat_layout(int64_t r, int64_t c, int64_t sr, int64_t sc, bool *trans, int64_t *ld);

/* The operators of lang/ops.c when an operand is a tensor. */
bool lang_tensor_arith(MistVM *vm, ArithOp op, Value a, Value b, Value *out);
/* The same, writing an elementwise result into the buffer of operand a
 * (dead & 1) or b (dead & 2) where lang_tensor_reusable allows: the
 * caller promises that nothing reads that operand afterwards. */
bool lang_tensor_arith_reusing(MistVM *vm, ArithOp op, Value a, Value b, unsigned dead, Value *out);
/* x op (a * b) for op TB_ADD or TB_SUB, one of a and b a number and the
 * other a contiguous float tensor of x's dtype and shape, x contiguous
 * too: in one pass with the bits of the two operations
 * (dev_binary_scaled), into a new tensor or over x, a or b where `how`
 * says it is dead (LANG_DEAD_X... of lang/ops.h; LANG_PRODUCT_FIRST for
 * (a * b) op x).  False, doing nothing, for any other operands; true
 * with *out NULL after an error. */
bool lang_tensor_scaled_op(MistVM *vm, TensorBinop op, Value x, Value a, Value b, unsigned how,
                           ObjTensor **out);
bool lang_tensor_compare(MistVM *vm, CmpOp op, Value a, Value b, Value *out);
bool lang_tensor_truthy(MistVM *vm, ObjTensor *t, bool *out);
bool lang_tensor_contains(MistVM *vm, ObjTensor *t, Value item, bool *out);

/* ---- text (tensor_print.c) ---- */

/* tensor([[1., 2.], [3., 4.]], f32): see docs/tensors.md. */
void lang_tensor_repr(MistVM *vm, ObjTensor *t, StrBuf *out);
/* NumPy's default print options (tensor_print.c). */
LangPrintOptions lang_print_defaults(void);
/* log |Gamma(x)| as Python's math.lgamma computes it (tensor_ops.c). */
double lang_lgamma(double x);

/* ---- random numbers (random.c) ---- */

/* Philox4x32-10: four 32-bit words from a 128-bit counter and a 64-bit key. */
void lang_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
typedef enum { LANG_RANDOM_UNIFORM, LANG_RANDOM_NORMAL } LangRandomKind;
/* A tensor of uniform [0, 1) or standard normal numbers (dt f32 or f64)
 * drawn from key: element i depends only on key and i, so results are
 * the same on every machine and for every number of threads. */
bool lang_tensor_random(MistVM *vm, LangRandomKind kind, DType dt, int ndim,
                        const int64_t *shape, const uint32_t key[2], ObjTensor **out);
/* The i-th of the keys that split(key, n) makes. */
void lang_random_split(const uint32_t key[2], uint64_t i, uint32_t out[2]);

#endif
