/* tensor_ops.c: computing on tensors: dtype promotion, NumPy
 * broadcasting, the elementwise engines (unary, binary, where), the
 * reductions, matmul, and the operators of lang/ops.c (+ - * / // % **
 * @, comparisons, truthiness, `in`) when an operand is a tensor.
 *
 * Every elementwise operation runs on the strided n-d loop of
 * tensor_impl.h: operands are first brought to the computation's dtype,
 * the loop merges contiguous axes and splits big work over the pool, and
 * a row function does the arithmetic.  Contiguous f32/f64 rows go to the
 * vectorised kernels of devices/cpu/vmath.h; everything else (strided
 * rows, integer dtypes, operations those kernels lack) is a plain C loop
 * here.  Integer arithmetic wraps as NumPy's does, except division or
 * modulo by zero and negative integer powers, which are errors.
 *
 * Reductions move the reduced axes last (a view), copy when that view is
 * not contiguous, and reduce each contiguous block: floating sums are
 * pairwise in double (dev_sum_*); integer sums and products are exact,
 * an error only when the result does not fit in i64 (never because a
 * partial result did not).  matmul hands f32/f64 work to BLAS
 * (devices/blas.h), passing transposed operands as transposes rather
 * than copying them, and batches through dev_gemm_batched_*; integer
 * matmul is a loop here.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "devices/blas.h"
#include "devices/cpu/vmath.h"
#include "devices/pool.h"
#include "lang/gc.h"
#include "lang/tensor_impl.h"

const char *lang_tensor_binop_name(TensorBinop op) {
  static const char *const names[] = {
#define X(e, n) n,
    LANG_TENSOR_BINOPS(X)
#undef X
  };
  return (unsigned)op < TB_COUNT ? names[op] : "?";
}

const char *lang_tensor_unop_name(TensorUnop op) {
  static const char *const names[] = {
#define X(e, n) n,
    LANG_TENSOR_UNOPS(X)
#undef X
  };
  return (unsigned)op < TU_COUNT ? names[op] : "?";
}

const char *lang_tensor_reduction_name(TensorReduction op) {
  static const char *const names[] = {
#define X(e, n) n,
    LANG_TENSOR_REDUCTIONS(X)
#undef X
  };
  return (unsigned)op < TR_COUNT ? names[op] : "?";
}

static const char *shape_str(int ndim, const int64_t *shape) {
  StrBuf sb;
  sb_init(&sb);
  lang_shape_repr(ndim, shape, &sb);
  return sb.data;
}

static bool is_number(Value v) { return v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL; }

static DType dtype_of_number(Value v) {
  return v.tag == V_FLOAT ? DT_F32 : v.tag == V_INT ? DT_I64 : DT_BOOL;
}

/* The dtype a Python number takes next to a tensor of dtype t. */
static DType scalar_with(DType t, Value s) {
  if (s.tag == V_FLOAT) return lang_dtype_is_float(t) ? t : DT_F32;
  if (s.tag == V_INT) return t == DT_BOOL ? DT_I64 : t;
  return t;
}

static bool is_arith(TensorBinop op) { return op <= TB_POW; }
static bool is_compare(TensorBinop op) { return op >= TB_EQ; }

/* ---- binary rows ---- */

enum { ERR_ZERO_DIV = 1, ERR_NEG_POW = 2 };

typedef struct BinCtx {
  TensorBinop op;
  atomic_int err;
} BinCtx;

/* One row: out = x op y over n elements, with the three strides.  EXPR
 * reads x and y (of type T) and gives the result (of type OT). */
#define BIN_ROW(T, OT, EXPR)                                                        \
  do {                                                                              \
    const int64_t so = s[0], sa = s[1], sb = s[2];                                  \
    char *po = p[0];                                                                \
    const char *pa = p[1], *pb = p[2];                                              \
    if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == (int64_t)sizeof(T)) { \
      OT *O = (OT *)po;                                                             \
      const T *A = (const T *)pa, *B = (const T *)pb;                               \
      for (int64_t i = 0; i < n; i++) {                                             \
        T x = A[i], y = B[i];                                                       \
        O[i] = (OT)(EXPR);                                                          \
      }                                                                             \
    } else if (so == (int64_t)sizeof(OT) && sa == (int64_t)sizeof(T) && sb == 0) {  \
      OT *O = (OT *)po;                                                             \
      const T *A = (const T *)pa;                                                   \
      const T y = *(const T *)pb;                                                   \
      for (int64_t i = 0; i < n; i++) {                                             \
        T x = A[i];                                                                 \
        O[i] = (OT)(EXPR);                                                          \
      }                                                                             \
    } else if (so == (int64_t)sizeof(OT) && sa == 0 && sb == (int64_t)sizeof(T)) {  \
      OT *O = (OT *)po;                                                             \
      const T *B = (const T *)pb;                                                   \
      const T x = *(const T *)pa;                                                   \
      for (int64_t i = 0; i < n; i++) {                                             \
        T y = B[i];                                                                 \
        O[i] = (OT)(EXPR);                                                          \
      }                                                                             \
    } else {                                                                        \
      for (int64_t i = 0; i < n; i++) {                                             \
        T x = *(const T *)(pa + i * sa), y = *(const T *)(pb + i * sb);             \
        *(OT *)(po + i * so) = (OT)(EXPR);                                          \
      }                                                                             \
    }                                                                               \
  } while (0)

#define CMP_ROWS(T)                                                                 \
  case TB_EQ: BIN_ROW(T, uint8_t, x == y); return;                                  \
  case TB_NE: BIN_ROW(T, uint8_t, x != y); return;                                  \
  case TB_LT: BIN_ROW(T, uint8_t, x < y); return;                                   \
  case TB_LE: BIN_ROW(T, uint8_t, x <= y); return;                                  \
  case TB_GT: BIN_ROW(T, uint8_t, x > y); return;                                   \
  case TB_GE: BIN_ROW(T, uint8_t, x >= y); return;

static void bool_row(void *vctx, char *const *p, const int64_t *s, int64_t n) {
  BinCtx *c = vctx;
  switch (c->op) {
  case TB_MAXIMUM: BIN_ROW(uint8_t, uint8_t, x > y ? x : y); return;
  case TB_MINIMUM: BIN_ROW(uint8_t, uint8_t, x < y ? x : y); return;
  CMP_ROWS(uint8_t)
  default: return;   /* arithmetic on bools runs as i64 */
  }
}

/* Integer floor division and modulo with Python's signs; a zero divisor
 * sets the error flag and gives 0. */
#define INT_HELPERS(T, U, MIN, NAME)                                                 \
  static inline T NAME##_floordiv(T x, T y, atomic_int *err) {                       \
    if (y == 0) {                                                                    \
      atomic_store(err, ERR_ZERO_DIV);                                               \
      return 0;                                                                      \
    }                                                                                \
    if (x == MIN && y == -1) return MIN;                                             \
    T q = x / y;                                                                     \
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;                                   \
    return q;                                                                        \
  }                                                                                  \
  static inline T NAME##_mod(T x, T y, atomic_int *err) {                            \
    if (y == 0) {                                                                    \
      atomic_store(err, ERR_ZERO_DIV);                                               \
      return 0;                                                                      \
    }                                                                                \
    if (y == -1) return 0;                                                           \
    T r = x % y;                                                                     \
    if (r != 0 && ((r < 0) != (y < 0))) r += y;                                      \
    return r;                                                                        \
  }                                                                                  \
  static inline T NAME##_pow(T x, T y, atomic_int *err) {                            \
    if (y < 0) {                                                                     \
      atomic_store(err, ERR_NEG_POW);                                                \
      return 0;                                                                      \
    }                                                                                \
    U base = (U)x, r = 1, e = (U)y;                                                  \
    while (e) {                                                                      \
      if (e & 1) r *= base;                                                          \
      e >>= 1;                                                                       \
      base *= base;                                                                  \
    }                                                                                \
    return (T)r;                                                                     \
  }

INT_HELPERS(int32_t, uint32_t, INT32_MIN, i32)
INT_HELPERS(int64_t, uint64_t, INT64_MIN, i64)

#define INT_ROWS(T, U, NAME)                                                         \
  static void NAME##_row(void *vctx, char *const *p, const int64_t *s, int64_t n) {  \
    BinCtx *c = vctx;                                                                \
    atomic_int *err = &c->err;                                                       \
    switch (c->op) {                                                                 \
    case TB_ADD: BIN_ROW(T, T, (T)((U)x + (U)y)); return;                            \
    case TB_SUB: BIN_ROW(T, T, (T)((U)x - (U)y)); return;                            \
    case TB_MUL: BIN_ROW(T, T, (T)((U)x * (U)y)); return;                            \
    case TB_FLOORDIV: BIN_ROW(T, T, NAME##_floordiv(x, y, err)); return;             \
    case TB_MOD: BIN_ROW(T, T, NAME##_mod(x, y, err)); return;                       \
    case TB_POW: BIN_ROW(T, T, NAME##_pow(x, y, err)); return;                       \
    case TB_MAXIMUM: BIN_ROW(T, T, x > y ? x : y); return;                           \
    case TB_MINIMUM: BIN_ROW(T, T, x < y ? x : y); return;                           \
    CMP_ROWS(T)                                                                      \
    default: return;   /* truediv runs as f32 */                                     \
    }                                                                                \
  }

INT_ROWS(int32_t, uint32_t, i32)
INT_ROWS(int64_t, uint64_t, i64)

/* NumPy's npy_floor_divide and npy_remainder (Python's float semantics). */
#define FLOAT_HELPERS(T, FMOD, FLOOR, COPYSIGN, NAME)                                \
  static inline T NAME##_floordiv(T a, T b) {                                        \
    if (b == 0) return a / b;                                                        \
    T mod = FMOD(a, b);                                                              \
    T div = (a - mod) / b;                                                           \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                                \
    T fd;                                                                            \
    if (div != 0) {                                                                  \
      fd = FLOOR(div);                                                               \
      if (div - fd > (T)0.5) fd += 1;                                                \
    } else {                                                                         \
      fd = COPYSIGN((T)0, a / b);                                                    \
    }                                                                                \
    return fd;                                                                       \
  }                                                                                  \
  static inline T NAME##_mod(T a, T b) {                                             \
    if (b == 0) return FMOD(a, b);                                                   \
    T mod = FMOD(a, b);                                                              \
    if (mod != 0) {                                                                  \
      if ((b < 0) != (mod < 0)) mod += b;                                            \
    } else {                                                                         \
      mod = COPYSIGN((T)0, b);                                                       \
    }                                                                                \
    return mod;                                                                      \
  }                                                                                  \
  static inline T NAME##_max(T x, T y) { return x != x ? x : y != y ? y : x >= y ? x : y; } \
  static inline T NAME##_min(T x, T y) { return x != x ? x : y != y ? y : x <= y ? x : y; }

FLOAT_HELPERS(float, fmodf, floorf, copysignf, f32)
FLOAT_HELPERS(double, fmod, floor, copysign, f64)

static bool vm_binary(TensorBinop op, VmBinary *out) {
  switch (op) {
  case TB_ADD: *out = VM_ADD; return true;
  case TB_SUB: *out = VM_SUB; return true;
  case TB_MUL: *out = VM_MUL; return true;
  case TB_TRUEDIV: *out = VM_DIV; return true;
  case TB_POW: *out = VM_POW; return true;
  default: return false;
  }
}

#define FLOAT_ROWS(T, NAME, POW, DEVBIN, DEVSCALAR)                                  \
  static void NAME##_row(void *vctx, char *const *p, const int64_t *s, int64_t n) {  \
    BinCtx *c = vctx;                                                                \
    const int64_t es = (int64_t)sizeof(T);                                           \
    VmBinary vop;                                                                    \
    if (s[0] == es && vm_binary(c->op, &vop)) {                                      \
      if (s[1] == es && s[2] == es) {                                                \
        DEVBIN(NULL, vop, (T *)p[0], (const T *)p[1], (const T *)p[2], n);           \
        return;                                                                      \
      }                                                                              \
      if (s[1] == es && s[2] == 0) {                                                 \
        DEVSCALAR(NULL, vop, (T *)p[0], (const T *)p[1], *(const T *)p[2], n, false); \
        return;                                                                      \
      }                                                                              \
      if (s[1] == 0 && s[2] == es) {                                                 \
        DEVSCALAR(NULL, vop, (T *)p[0], (const T *)p[2], *(const T *)p[1], n, true); \
        return;                                                                      \
      }                                                                              \
    }                                                                                \
    switch (c->op) {                                                                 \
    case TB_ADD: BIN_ROW(T, T, x + y); return;                                       \
    case TB_SUB: BIN_ROW(T, T, x - y); return;                                       \
    case TB_MUL: BIN_ROW(T, T, x * y); return;                                       \
    case TB_TRUEDIV: BIN_ROW(T, T, x / y); return;                                   \
    case TB_FLOORDIV: BIN_ROW(T, T, NAME##_floordiv(x, y)); return;                  \
    case TB_MOD: BIN_ROW(T, T, NAME##_mod(x, y)); return;                            \
    case TB_POW: BIN_ROW(T, T, POW(x, y)); return;                                   \
    case TB_MAXIMUM: BIN_ROW(T, T, NAME##_max(x, y)); return;                        \
    case TB_MINIMUM: BIN_ROW(T, T, NAME##_min(x, y)); return;                        \
    case TB_ATAN2: BIN_ROW(T, T, atan2((double)x, (double)y)); return;               \
    CMP_ROWS(T)                                                                      \
    default: return;                                                                 \
    }                                                                                \
  }

FLOAT_ROWS(float, f32, powf, dev_binary_f32, dev_binary_scalar_f32)
FLOAT_ROWS(double, f64, pow, dev_binary_f64, dev_binary_scalar_f64)

static LangRowFn binary_row(DType t) {
  switch (t) {
  case DT_BOOL: return bool_row;
  case DT_I32: return i32_row;
  case DT_I64: return i64_row;
  case DT_F32: return f32_row;
  case DT_F64: return f64_row;
  }
  return NULL;
}

/* ---- operands ---- */

/* The operand values of a binary operation as tensors of one compute
 * dtype *cdt (lists become tensors; numbers take the other operand's
 * dtype as scalar_with says). */
static bool operands(MistVM *vm, const char *fname, TensorBinop op, Value a, Value b,
                     ObjTensor **ta, ObjTensor **tb, DType *cdt) {
  if (v_is_obj(a, O_LIST) || v_is_obj(a, O_TUPLE)) {
    ObjTensor *t;
    if (!lang_tensor_from_value(vm, fname, a, -1, &t)) return false;
    a = v_obj(t);
  }
  if (v_is_obj(b, O_LIST) || v_is_obj(b, O_TUPLE)) {
    ObjTensor *t;
    if (!lang_tensor_from_value(vm, fname, b, -1, &t)) return false;
    b = v_obj(t);
  }
  bool at = v_is_tensor(a), bt = v_is_tensor(b);
  if ((!at && !is_number(a)) || (!bt && !is_number(b)))
    return lang_raise(vm, "TypeError", "%s: unsupported operand types '%s' and '%s'", fname,
                      lang_type_name(a), lang_type_name(b));
  DType dt;
  if (at && bt) dt = lang_dtype_promote(AS_TENSOR(a)->dtype, AS_TENSOR(b)->dtype);
  else if (at) dt = scalar_with(AS_TENSOR(a)->dtype, b);
  else if (bt) dt = scalar_with(AS_TENSOR(b)->dtype, a);
  else dt = lang_dtype_promote(dtype_of_number(a), dtype_of_number(b));
  if (is_arith(op) && dt == DT_BOOL) dt = DT_I64;
  if ((op == TB_TRUEDIV || op == TB_ATAN2) && !lang_dtype_is_float(dt)) dt = DT_F32;
  Value v[2] = {a, b};
  ObjTensor *t[2];
  for (int i = 0; i < 2; i++) {
    if (v_is_tensor(v[i])) {
      if (!lang_tensor_astype(vm, AS_TENSOR(v[i]), dt, &t[i])) return false;
    } else if (!lang_tensor_scalar(vm, dt, v[i], &t[i])) {
      return false;
    }
  }
  *ta = t[0];
  *tb = t[1];
  *cdt = dt;
  return true;
}

static bool int_error(MistVM *vm, const char *fname, int err) {
  if (err == ERR_ZERO_DIV)
    return lang_raise(vm, "ZeroDivisionError", "%s: integer division or modulo by zero", fname);
  return lang_raise(vm, "ValueError", "%s: integers to negative integer powers are not allowed",
                    fname);
}

/* a op b into a new tensor, or over operand a (dead & 1) or b
 * (dead & 2), a temporary nothing reads afterwards, where its buffer can
 * take the result: each element is read before the same element is written,
 * which every row function allows (out equal to an operand exactly). */
static bool binary(MistVM *vm, TensorBinop op, Value a, Value b, unsigned dead, Value *out) {
  const char *fname = lang_tensor_binop_name(op);
  ObjTensor *x, *y;
  DType cdt;
  if (!operands(vm, fname, op, a, b, &x, &y, &cdt)) return false;
  int nd;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  if (!lang_broadcast_shapes(vm, fname, x->ndim, x->shape, y->ndim, y->shape, &nd, shape))
    return false;
  DType rdt = is_compare(op) ? DT_BOOL : cdt;
  ObjTensor *r = NULL;
  /* (operands() hands the tensor itself on when its dtype is cdt) */
  if ((dead & 1) && v_is_tensor(a) && AS_TENSOR(a) == x && lang_tensor_reusable(x, rdt, nd, shape)) r = x;
  else if ((dead & 2) && v_is_tensor(b) && AS_TENSOR(b) == y && lang_tensor_reusable(y, rdt, nd, shape)) r = y;
  if (!r && !(r = lang_tensor_new(vm, rdt, nd, shape, false))) return false;
  LangNdLoop l;
  lang_nd_init(&l, 3, nd, shape);
  lang_nd_operand(&l, 0, r);
  lang_nd_operand(&l, 1, x);
  lang_nd_operand(&l, 2, y);
  BinCtx c = {op, 0};
  lang_nd_run(lang_tensor_pool(vm), &l, binary_row(cdt), &c);
  LANG_KEEP(x);
  LANG_KEEP(y);
  int err = atomic_load(&c.err);
  if (err) return int_error(vm, fname, err);
  *out = v_obj(r);
  return true;
}

bool lang_tensor_binary(MistVM *vm, TensorBinop op, Value a, Value b, Value *out) {
  return binary(vm, op, a, b, 0, out);
}

/* ---- where ---- */

static void where_row(void *ctx, char *const *p, const int64_t *s, int64_t n) {
  size_t es = *(const size_t *)ctx;
  char *o = p[0];
  const char *c = p[1], *a = p[2], *b = p[3];
  for (int64_t i = 0; i < n; i++, o += s[0], c += s[1], a += s[2], b += s[3]) {
    const char *src = *(const uint8_t *)c ? a : b;
    switch (es) {
    case 1: *(uint8_t *)o = *(const uint8_t *)src; break;
    case 4: *(uint32_t *)o = *(const uint32_t *)src; break;
    default: *(uint64_t *)o = *(const uint64_t *)src; break;
    }
  }
}

bool lang_tensor_where(MistVM *vm, Value c, Value a, Value b, Value *out) {
  ObjTensor *tc, *x, *y;
  if (!lang_tensor_of_value(vm, "where", c, DT_BOOL, &tc)) return false;
  if (!lang_tensor_astype(vm, tc, DT_BOOL, &tc)) return false;
  DType cdt;
  /* the operands' dtype as for maximum(a, b), but bools stay bools */
  if (!operands(vm, "where", TB_MAXIMUM, a, b, &x, &y, &cdt)) return false;
  int nd, nd2;
  int64_t s1[LANG_TENSOR_MAX_DIMS], shape[LANG_TENSOR_MAX_DIMS];
  if (!lang_broadcast_shapes(vm, "where", x->ndim, x->shape, y->ndim, y->shape, &nd, s1) ||
      !lang_broadcast_shapes(vm, "where", tc->ndim, tc->shape, nd, s1, &nd2, shape))
    return false;
  ObjTensor *r = lang_tensor_new(vm, cdt, nd2, shape, false);
  if (!r) return false;
  LangNdLoop l;
  lang_nd_init(&l, 4, nd2, shape);
  lang_nd_operand(&l, 0, r);
  lang_nd_operand(&l, 1, tc);
  lang_nd_operand(&l, 2, x);
  lang_nd_operand(&l, 3, y);
  size_t es = dev_dtype_size(cdt);
  lang_nd_run(lang_tensor_pool(vm), &l, where_row, &es);
  LANG_KEEP(tc);
  LANG_KEEP(x);
  LANG_KEEP(y);
  *out = v_obj(r);
  return true;
}

/* ---- unary ---- */

typedef struct UnCtx {
  TensorUnop op;
} UnCtx;

static bool vm_unary(TensorUnop op, VmUnary *out) {
  switch (op) {
  case TU_NEG: *out = VM_NEG; return true;
  case TU_ABS: *out = VM_ABS; return true;
  case TU_EXP: *out = VM_EXP; return true;
  case TU_LOG: *out = VM_LOG; return true;
  case TU_SQRT: *out = VM_SQRT; return true;
  case TU_SIN: *out = VM_SIN; return true;
  case TU_COS: *out = VM_COS; return true;
  case TU_TANH: *out = VM_TANH; return true;
  case TU_SIGMOID: *out = VM_SIGMOID; return true;
  case TU_RELU: *out = VM_RELU; return true;
  default: return false;
  }
}

#define UN_ROW(T, EXPR)                                                              \
  do {                                                                               \
    char *po = p[0];                                                                 \
    const char *px = p[1];                                                           \
    for (int64_t i = 0; i < n; i++) {                                                \
      T x = *(const T *)(px + i * s[1]);                                             \
      *(T *)(po + i * s[0]) = (T)(EXPR);                                             \
    }                                                                                \
  } while (0)

/* ---- lgamma, as CPython computes it ----
 *
 * Python's math.lgamma is not the C library's: it is Lanczos'
 * approximation (g = 6.0246..., 13 terms) with the reflection formula
 * for negative x, which differs from glibc in the last digits.  Mist
 * prints floats as Python does, so it computes lgamma the same way,
 * with the same coefficients. */

static const double lanczos_g = 6.024680040776729583740234375;
static const double lanczos_num[13] = {
  23531376880.410759688572007674451636754734846804940, 42919803642.649098768957899047001988850926355848959,
  35711959237.355668049440185451547166705960488635843, 17921034426.037209699919755754458931112671403265390,
  6039542586.3520280050642916443072979210699388420708, 1439720407.3117216736632230727949123939715485786772,
  248874557.86205415651146038641322942321632125127801, 31426415.585400194380614231628318205362874684987640,
  2876370.6289353724412254090516208496135991145378768, 186056.26539522349504029498971604569928220784236328,
  8071.6720023658162106380029022722506138218516325024, 210.82427775157934587250973392071336271166969580291,
  2.5066282746310002701649081771338373386264310793408,
};
/* the denominator x (x + 1) ... (x + 11) as a polynomial */
static const double lanczos_den[13] = {0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
                                       13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0};

static double lanczos_sum(double x) {
  double num = 0.0, den = 0.0;
  if (x < 5.0) {
    for (int i = 13; --i >= 0;) {
      num = num * x + lanczos_num[i];
      den = den * x + lanczos_den[i];
    }
  } else {
    for (int i = 0; i < 13; i++) {
      num = num / x + lanczos_num[i];
      den = den / x + lanczos_den[i];
    }
  }
  return num / den;
}

/* sin(pi x) for finite x, exact at the integers and half-integers */
static double sinpi(double x) {
  double y = fmod(fabs(x), 2.0), r;
  switch ((int)round(2.0 * y)) {
  case 0: r = sin(M_PI * y); break;
  case 1: r = cos(M_PI * (y - 0.5)); break;
  case 2: r = sin(M_PI * (1.0 - y)); break;
  case 3: r = -cos(M_PI * (y - 1.5)); break;
  default: r = sin(M_PI * (y - 2.0)); break;
  }
  return copysign(1.0, x) * r;
}

double lang_lgamma(double x) {
  if (!isfinite(x)) return isnan(x) ? x : INFINITY;
  if (x == floor(x) && x <= 2.0) return x <= 0.0 ? INFINITY : 0.0;
  double ax = fabs(x);
  if (ax < 1e-20) return -log(ax);
  double r = log(lanczos_sum(ax)) - lanczos_g;
  r += (ax - 0.5) * (log(ax + lanczos_g - 0.5) - 1);
  if (x < 0.0) r = 1.144729885849400174143427351353058711647 - log(fabs(sinpi(ax))) - log(ax) - r;
  return r;
}

static inline double sigmoid_d(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

static inline float sigmoid_f(float x) {
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

#define FLOAT_UNARY(T, NAME, DEVUN, EXP, LOG, SQRT, SIN, COS, TANH, SIGMOID, FABS, RINT, FLOOR, CEIL) \
  static void NAME##_unary_row(void *vctx, char *const *p, const int64_t *s, int64_t n) { \
    const UnCtx *c = vctx;                                                           \
    VmUnary vop;                                                                     \
    if (s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T) && vm_unary(c->op, &vop)) { \
      DEVUN(NULL, vop, (T *)p[0], (const T *)p[1], n);                               \
      return;                                                                        \
    }                                                                                \
    switch (c->op) {                                                                 \
    case TU_NEG: UN_ROW(T, -x); return;                                              \
    case TU_ABS: UN_ROW(T, FABS(x)); return;                                         \
    case TU_EXP: UN_ROW(T, EXP(x)); return;                                          \
    case TU_LOG: UN_ROW(T, LOG(x)); return;                                          \
    case TU_SQRT: UN_ROW(T, SQRT(x)); return;                                        \
    case TU_SIN: UN_ROW(T, SIN(x)); return;                                          \
    case TU_COS: UN_ROW(T, COS(x)); return;                                          \
    case TU_TANH: UN_ROW(T, TANH(x)); return;                                        \
    case TU_SIGMOID: UN_ROW(T, SIGMOID(x)); return;                                  \
    case TU_RELU: UN_ROW(T, x > 0 ? x : (x != x ? x : 0)); return;                   \
    case TU_ROUND: UN_ROW(T, RINT(x)); return;                                       \
    case TU_FLOOR: UN_ROW(T, FLOOR(x)); return;                                      \
    case TU_CEIL: UN_ROW(T, CEIL(x)); return;                                        \
    /* the rarer functions in double, rounded once to T */                          \
    case TU_TAN: UN_ROW(T, tan((double)x)); return;                                  \
    case TU_ASIN: UN_ROW(T, asin((double)x)); return;                                \
    case TU_ACOS: UN_ROW(T, acos((double)x)); return;                                \
    case TU_ATAN: UN_ROW(T, atan((double)x)); return;                                \
    case TU_LOG2: UN_ROW(T, log2((double)x)); return;                                \
    case TU_LOG10: UN_ROW(T, log10((double)x)); return;                              \
    case TU_LGAMMA: UN_ROW(T, lang_lgamma((double)x)); return;                         \
    case TU_ERF: UN_ROW(T, erf((double)x)); return;                                  \
    default: return;                                                                 \
    }                                                                                \
  }

FLOAT_UNARY(float, f32, dev_unary_f32, expf, logf, sqrtf, sinf, cosf, tanhf, sigmoid_f, fabsf,
            rintf, floorf, ceilf)
FLOAT_UNARY(double, f64, dev_unary_f64, exp, log, sqrt, sin, cos, tanh, sigmoid_d, fabs, rint,
            floor, ceil)

#define INT_UNARY(T, U, NAME)                                                        \
  static void NAME##_unary_row(void *vctx, char *const *p, const int64_t *s, int64_t n) { \
    const UnCtx *c = vctx;                                                           \
    switch (c->op) {                                                                 \
    case TU_NEG: UN_ROW(T, (T)((U)0 - (U)x)); return;                                \
    case TU_ABS: UN_ROW(T, x < 0 ? (T)((U)0 - (U)x) : x); return;                    \
    case TU_RELU: UN_ROW(T, x > 0 ? x : 0); return;                                  \
    default: UN_ROW(T, x); return;   /* round, floor, ceil */                        \
    }                                                                                \
  }

INT_UNARY(int32_t, uint32_t, i32)
INT_UNARY(int64_t, uint64_t, i64)

static LangRowFn unary_row(DType t) {
  switch (t) {
  case DT_I32: return i32_unary_row;
  case DT_I64: return i64_unary_row;
  case DT_F32: return f32_unary_row;
  case DT_F64: return f64_unary_row;
  default: return NULL;
  }
}

bool lang_tensor_unary(MistVM *vm, TensorUnop op, ObjTensor *x, ObjTensor **out) {
  DType cdt = x->dtype;
  switch (op) {
  case TU_NEG: case TU_ABS: case TU_RELU:
    if (cdt == DT_BOOL) cdt = DT_I64;
    break;
  case TU_ROUND: case TU_FLOOR: case TU_CEIL:
    if (!lang_dtype_is_float(cdt)) {   /* integers are already whole */
      *out = x;
      return true;
    }
    break;
  default:
    if (!lang_dtype_is_float(cdt)) cdt = DT_F32;
    break;
  }
  ObjTensor *r = lang_tensor_new(vm, cdt, x->ndim, x->shape, false);
  if (!r) return false;
  ObjTensor *src = x;
  if (x->dtype != cdt || !lang_tensor_is_contiguous(x)) {
    /* bring it to the dtype and into r first, then work in place */
    if (!lang_tensor_copy_into(vm, lang_tensor_unop_name(op), r, x)) return false;
    src = r;
  }
  LangNdLoop l;
  lang_nd_init(&l, 2, x->ndim, x->shape);
  lang_nd_operand(&l, 0, r);
  lang_nd_operand(&l, 1, src);
  UnCtx c = {op};
  lang_nd_run(lang_tensor_pool(vm), &l, unary_row(cdt), &c);
  LANG_KEEP(x);
  *out = r;
  return true;
}

/* ---- reductions ---- */

enum { ERR_OVERFLOW = 1 };

typedef struct RedCtx {
  TensorReduction op;
  DType cdt, rdt;
  int64_t inner;
  const char *src;
  char *dst;
  DevPool *pool;     /* for the kernels of one block, when blocks run one at a time */
  atomic_int err;
} RedCtx;

static void reduce_f32(RedCtx *c, const float *x, char *dst, int64_t n) {
  switch (c->op) {
  case TR_SUM: *(float *)dst = (float)dev_sum_f32(c->pool, x, n); return;
  case TR_MEAN: *(float *)dst = (float)(dev_sum_f32(c->pool, x, n) / (double)n); return;
  case TR_MAX: *(float *)dst = dev_max_f32(c->pool, x, n); return;
  case TR_MIN: *(float *)dst = dev_min_f32(c->pool, x, n); return;
  case TR_PROD: {
    double r = 1;
    for (int64_t i = 0; i < n; i++) r *= x[i];
    *(float *)dst = (float)r;
    return;
  }
  case TR_ARGMAX: case TR_ARGMIN: {
    int64_t best = 0;
    bool mx = c->op == TR_ARGMAX;
    for (int64_t i = 0; i < n; i++) {
      if (x[i] != x[i]) { best = i; break; }   /* the first NaN wins, as NumPy */
      if (mx ? x[i] > x[best] : x[i] < x[best]) best = i;
    }
    *(int64_t *)dst = best;
    return;
  }
  default: return;
  }
}

static void reduce_f64(RedCtx *c, const double *x, char *dst, int64_t n) {
  switch (c->op) {
  case TR_SUM: *(double *)dst = dev_sum_f64(c->pool, x, n); return;
  case TR_MEAN: {
    double m = dev_sum_f64(c->pool, x, n) / (double)n;
    if (c->rdt == DT_F32) *(float *)dst = (float)m;
    else *(double *)dst = m;
    return;
  }
  case TR_MAX: *(double *)dst = dev_max_f64(c->pool, x, n); return;
  case TR_MIN: *(double *)dst = dev_min_f64(c->pool, x, n); return;
  case TR_PROD: {
    double r = 1;
    for (int64_t i = 0; i < n; i++) r *= x[i];
    *(double *)dst = r;
    return;
  }
  case TR_ARGMAX: case TR_ARGMIN: {
    int64_t best = 0;
    bool mx = c->op == TR_ARGMAX;
    for (int64_t i = 0; i < n; i++) {
      if (x[i] != x[i]) { best = i; break; }
      if (mx ? x[i] > x[best] : x[i] < x[best]) best = i;
    }
    *(int64_t *)dst = best;
    return;
  }
  default: return;
  }
}

/* An integer product kept exactly: its sign and its magnitude, until
 * that passes 2^63.  A partial product may overflow while the whole does
 * not (a 0 further on, or 2^62 * 2 * -1); without a 0 the magnitudes
 * never shrink, so one past 2^63 stays past it. */
typedef struct ProdAcc {
  uint64_t mag;
  bool negative, past, zero;
} ProdAcc;

static inline void prod_add(ProdAcc *p, int64_t v) {
  if (v == 0) p->zero = true;
  if (p->zero || p->past) return;
  p->negative ^= v < 0;
  uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  p->past = __builtin_mul_overflow(p->mag, a, &p->mag) || p->mag > (uint64_t)1 << 63;
}

/* The product, or 0 and an overflow noted in c when it does not fit. */
static int64_t prod_total(RedCtx *c, const ProdAcc *p) {
  if (p->zero) return 0;
  if (p->past || (!p->negative && p->mag == (uint64_t)1 << 63)) {
    atomic_store(&c->err, ERR_OVERFLOW);
    return 0;
  }
  return p->negative ? (int64_t)(0 - p->mag) : (int64_t)p->mag;
}

/* Integer sums and products: in i64 while no partial result overflows,
 * else again exactly (a sum in 128 bits, a product as a ProdAcc), where
 * only the total must fit in i64. */
#define REDUCE_INT(T, NAME)                                                          \
  static int64_t sum_exact_##NAME(RedCtx *c, const T *x, int64_t n) {                \
    __int128 r = 0;                                                                  \
    for (int64_t i = 0; i < n; i++) r += x[i];                                       \
    if (r < INT64_MIN || r > INT64_MAX) atomic_store(&c->err, ERR_OVERFLOW);         \
    return (int64_t)r;                                                               \
  }                                                                                  \
                                                                                     \
  static void reduce_##NAME(RedCtx *c, const T *x, char *dst, int64_t n) {           \
    switch (c->op) {                                                                 \
    case TR_SUM: {                                                                   \
      int64_t r = 0;                                                                 \
      for (int64_t i = 0; i < n; i++)                                                \
        if (__builtin_add_overflow(r, (int64_t)x[i], &r)) {                          \
          r = sum_exact_##NAME(c, x, n);                                             \
          break;                                                                     \
        }                                                                            \
      *(int64_t *)dst = r;                                                           \
      return;                                                                        \
    }                                                                                \
    case TR_PROD: {                                                                  \
      int64_t r = 1;                                                                 \
      for (int64_t i = 0; i < n; i++)                                                \
        if (__builtin_mul_overflow(r, (int64_t)x[i], &r)) {                          \
          ProdAcc p = {1, false, false, false};                                      \
          for (int64_t j = 0; j < n && !p.zero; j++) prod_add(&p, (int64_t)x[j]);   \
          r = prod_total(c, &p);                                                     \
          break;                                                                     \
        }                                                                            \
      *(int64_t *)dst = r;                                                           \
      return;                                                                        \
    }                                                                                \
    case TR_MAX: case TR_MIN: {                                                      \
      T r = x[0];                                                                    \
      bool mx = c->op == TR_MAX;                                                     \
      for (int64_t i = 1; i < n; i++)                                                \
        if (mx ? x[i] > r : x[i] < r) r = x[i];                                      \
      *(T *)dst = r;                                                                 \
      return;                                                                        \
    }                                                                                \
    case TR_ARGMAX: case TR_ARGMIN: {                                                \
      int64_t best = 0;                                                              \
      bool mx = c->op == TR_ARGMAX;                                                  \
      for (int64_t i = 1; i < n; i++)                                                \
        if (mx ? x[i] > x[best] : x[i] < x[best]) best = i;                          \
      *(int64_t *)dst = best;                                                        \
      return;                                                                        \
    }                                                                                \
    case TR_ANY: case TR_ALL: {                                                      \
      bool any = c->op == TR_ANY, r = !any;                                          \
      for (int64_t i = 0; i < n; i++)                                                \
        if ((x[i] != 0) == any) { r = any; break; }                                  \
      *(uint8_t *)dst = r;                                                           \
      return;                                                                        \
    }                                                                                \
    default: return;                                                                 \
    }                                                                                \
  }

REDUCE_INT(uint8_t, bool)
REDUCE_INT(int32_t, i32)
REDUCE_INT(int64_t, i64)

static void reduce_blocks(void *vctx, int64_t begin, int64_t end) {
  RedCtx *c = vctx;
  size_t ces = dev_dtype_size(c->cdt), res = dev_dtype_size(c->rdt);
  for (int64_t o = begin; o < end; o++) {
    const char *x = c->src + (size_t)(o * c->inner) * ces;
    char *dst = c->dst + (size_t)o * res;
    switch (c->cdt) {
    case DT_BOOL: reduce_bool(c, (const uint8_t *)x, dst, c->inner); break;
    case DT_I32: reduce_i32(c, (const int32_t *)x, dst, c->inner); break;
    case DT_I64: reduce_i64(c, (const int64_t *)x, dst, c->inner); break;
    case DT_F32: reduce_f32(c, (const float *)x, dst, c->inner); break;
    case DT_F64: reduce_f64(c, (const double *)x, dst, c->inner); break;
    }
  }
}

/* A sum or mean over the leading axes of a contiguous float tensor (a
 * bias's gradient: the sum over a batch): the column sums of the matrix
 * it is (devices' dev_sum_rows), reading it once in order, where the
 * general path copies it transposed first. */
static void reduce_leading(MistVM *vm, TensorReduction op, ObjTensor *x, int k, ObjTensor *r) {
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x->ndim; d++) *(d < k ? &rows : &cols) *= x->shape[d];
  double scale = op == TR_MEAN ? 1.0 / (double)rows : 1.0;
  DevPool *pool = lang_tensor_pool(vm);
  if (x->dtype == DT_F32) dev_sum_rows_f32(pool, (const float *)lang_tensor_ptr(x), rows, cols, scale, (float *)lang_tensor_ptr(r));
  else dev_sum_rows_f64(pool, (const double *)lang_tensor_ptr(x), rows, cols, scale, (double *)lang_tensor_ptr(r));
  LANG_KEEP(x);
}

bool lang_tensor_reduce(MistVM *vm, TensorReduction op, ObjTensor *x, uint64_t axes,
                        bool keepdims, ObjTensor **out) {
  const char *fname = lang_tensor_reduction_name(op);
  int nd = x->ndim;
  uint64_t all = nd >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nd) - 1);
  axes &= all;
  int nred = __builtin_popcountll(axes);
  if ((op == TR_ARGMAX || op == TR_ARGMIN) && nred > 1 && axes != all)
    return lang_raise(vm, "ValueError", "%s: takes one axis or none, not a tuple of axes", fname);
  bool flat_arg = (op == TR_ARGMAX || op == TR_ARGMIN) && axes == all && nd > 1;
  if (flat_arg) {   /* the index into the flattened tensor */
    ObjTensor *f;
    int64_t n = x->size;
    if (!lang_tensor_reshape(vm, x, 1, &n, &f)) return false;
    ObjTensor *r;
    if (!lang_tensor_reduce(vm, op, f, 1, false, &r)) return false;
    if (keepdims) {
      int64_t ones[LANG_TENSOR_MAX_DIMS];
      for (int d = 0; d < nd; d++) ones[d] = 1;
      return lang_tensor_reshape(vm, r, nd, ones, out);
    }
    *out = r;
    return true;
  }
  /* kept axes first, reduced axes last */
  int perm[LANG_TENSOR_MAX_DIMS], np = 0, ond = 0;
  int64_t oshape[LANG_TENSOR_MAX_DIMS] = {0}, inner = 1, outer = 1;
  for (int d = 0; d < nd; d++)
    if (!(axes >> d & 1)) {
      perm[np++] = d;
      oshape[ond++] = x->shape[d];
      outer *= x->shape[d];
    } else if (keepdims) {
      oshape[ond++] = 1;
    }
  for (int d = 0; d < nd; d++)
    if (axes >> d & 1) {
      perm[np++] = d;
      inner *= x->shape[d];
    }
  DType cdt = x->dtype, rdt = x->dtype;
  switch (op) {
  case TR_SUM: case TR_PROD:
    if (!lang_dtype_is_float(cdt)) cdt = rdt = DT_I64;
    break;
  case TR_MEAN:
    if (!lang_dtype_is_float(cdt)) {
      cdt = DT_F64;
      rdt = DT_F32;
    }
    break;
  case TR_ARGMAX: case TR_ARGMIN: rdt = DT_I64; break;
  case TR_ANY: case TR_ALL: cdt = rdt = DT_BOOL; break;
  default: break;
  }
  /* max, min, argmax and argmin over a zero-length axis have no value
   * to give even when the result is empty (NumPy refuses both) */
  if (inner == 0) {
    switch (op) {
    case TR_SUM: case TR_ANY: return (*out = lang_tensor_new(vm, rdt, ond, oshape, true)) != NULL;
    case TR_PROD: case TR_ALL:
      return lang_tensor_full(vm, rdt, ond, oshape, v_int(1), out);
    case TR_MEAN: return lang_tensor_full(vm, rdt, ond, oshape, v_float(NAN), out);
    default:
      return lang_raise(vm, "ValueError", "%s: cannot reduce a tensor of shape %s over a zero-size axis",
                        fname, shape_str(nd, x->shape));
    }
  }
  ObjTensor *r = lang_tensor_new(vm, rdt, ond, oshape, false);
  if (!r) return false;
  if (outer == 0) {
    *out = r;
    return true;
  }
  int lead = __builtin_ctzll(~axes);   /* the reduced axes 0..lead-1, if they are a prefix */
  if ((op == TR_SUM || op == TR_MEAN) && lang_dtype_is_float(x->dtype) && rdt == x->dtype && lead > 0 &&
      lead < nd && axes == (((uint64_t)1 << lead) - 1) && lang_tensor_is_contiguous(x)) {
    reduce_leading(vm, op, x, lead, r);
    *out = r;
    return true;
  }
  ObjTensor *y;
  if (!lang_tensor_transpose(vm, x, perm, &y)) return false;
  if (y->dtype != cdt || !lang_tensor_is_contiguous(y)) {
    ObjTensor *c = lang_tensor_new(vm, cdt, y->ndim, y->shape, false);
    if (!c || !lang_tensor_copy_into(vm, fname, c, y)) return false;
    y = c;
  }
  DevPool *pool = lang_tensor_pool(vm);
  RedCtx c = {op, cdt, rdt, inner, lang_tensor_ptr(y), lang_tensor_ptr(r), NULL, 0};
  if (outer >= 2 * (int64_t)dev_pool_size(pool) && outer * inner >= LANG_ND_PAR_MIN) {
    int64_t grain = LANG_ND_PAR_MIN / 4 / inner;
    dev_parallel_for(pool, outer, grain > 0 ? grain : 1, reduce_blocks, &c);
  } else {
    c.pool = pool;
    reduce_blocks(&c, 0, outer);
  }
  LANG_KEEP(y);
  LANG_KEEP(x);
  if (atomic_load(&c.err))
    return lang_raise(vm, "OverflowError", "%s: integer overflow (the result does not fit in i64)",
                      fname);
  *out = r;
  return true;
}

/* ---- matmul ---- */

/* One operand of a gemm batch: where matrix 0 starts, the step between
 * matrices (0: the same matrix for every batch), the row stride of the
 * stored matrix and whether it is stored transposed. */
typedef struct MatArg {
  const char *base;
  int64_t stride, ld;
  bool trans;
} MatArg;

/* Layout of the last two axes of t (rows r, cols c) as BLAS sees it. */
static bool mat_layout(const ObjTensor *t, bool *trans, int64_t *ld) {
  int nd = t->ndim;
  return lang_mat_layout(t->shape[nd - 2], t->shape[nd - 1], t->strides[nd - 2], t->strides[nd - 1], trans, ld);
}

bool lang_mat_layout(int64_t r, int64_t c, int64_t sr, int64_t sc, bool *trans, int64_t *ld) {
  if ((c == 1 || sc == 1) && (r == 1 || sr >= c)) {
    *trans = false;
    *ld = r == 1 ? (c > 1 ? c : 1) : sr;
    return *ld >= 1;
  }
  if ((r == 1 || sr == 1) && (c == 1 || sc >= r)) {
    *trans = true;
    *ld = c == 1 ? (r > 1 ? r : 1) : sc;
    return *ld >= 1;
  }
  return false;
}

/* The single stride over the flattened batch of t (whose batch axes
 * are bshape, nb of them, t's own batch axes left-padded with 1s), or
 * false when there is none and t must be copied. */
static bool batch_stride(const ObjTensor *t, int nb, const int64_t *bshape, int64_t *stride) {
  int tb = t->ndim - 2, lead = nb - tb;
  int64_t tsize = 1;
  for (int d = 0; d < tb; d++) tsize *= t->shape[d];
  if (tsize == 1) {
    *stride = 0;
    return true;
  }
  int64_t expect = -1;
  for (int d = nb - 1; d >= 0; d--) {
    int td = d - lead;
    int64_t size = td < 0 ? 1 : t->shape[td];
    if (size != bshape[d]) return false;   /* broadcast inside the batch */
    if (size == 1) continue;
    int64_t st = t->strides[td];
    if (expect < 0) *stride = st;
    else if (st != expect) return false;
    expect = st * size;
  }
  return true;
}

static bool mat_arg(MistVM *vm, ObjTensor *t, int nb, const int64_t *bshape, MatArg *m,
                    ObjTensor **keep) {
  int64_t stride;
  if (!mat_layout(t, &m->trans, &m->ld) || !batch_stride(t, nb, bshape, &stride)) {
    int64_t full[LANG_TENSOR_MAX_DIMS];
    memcpy(full, bshape, (size_t)nb * sizeof *full);
    full[nb] = t->shape[t->ndim - 2];
    full[nb + 1] = t->shape[t->ndim - 1];
    ObjTensor *b, *c;
    if (!lang_tensor_broadcast_to(vm, "matmul", t, nb + 2, full, &b)) return false;
    c = lang_tensor_new(vm, t->dtype, nb + 2, full, false);
    if (!c || !lang_tensor_copy_into(vm, "matmul", c, b)) return false;
    t = c;
    mat_layout(t, &m->trans, &m->ld);
    batch_stride(t, nb, bshape, &stride);
  }
  m->base = lang_tensor_ptr(t);
  m->stride = stride;
  *keep = t;
  return true;
}

/* Integer matmul: both operands contiguous, broadcast to the full batch. */
#define INT_MATMUL(T, U, NAME)                                                       \
  static void NAME##_matmul(const T *a, const T *b, T *c, int64_t batch, int64_t m,  \
                            int64_t n, int64_t k) {                                  \
    for (int64_t q = 0; q < batch; q++, a += m * k, b += k * n, c += m * n)          \
      for (int64_t i = 0; i < m; i++)                                                \
        for (int64_t j = 0; j < n; j++) {                                            \
          U acc = 0;                                                                 \
          for (int64_t l = 0; l < k; l++) acc += (U)a[i * k + l] * (U)b[l * n + j];  \
          c[i * n + j] = (T)acc;                                                     \
        }                                                                            \
  }

INT_MATMUL(int32_t, uint32_t, i32)
INT_MATMUL(int64_t, uint64_t, i64)

bool lang_matmul_shape(MistVM *vm, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                       int64_t *out) {
  if (na == 0 || nb == 0)
    return lang_raise(vm, "ValueError",
                      "matmul: shapes %s and %s: both operands need at least one dimension "
                      "(use * for scalars)", shape_str(na, sa), shape_str(nb, sb));
  /* vectors as matrices: (k,) @ ... as (1, k), ... @ (k,) as (k, 1) */
  int64_t xs[2] = {1, sa[0]}, ys[2] = {sb[0], 1};
  const int64_t *x = na == 1 ? xs : sa, *y = nb == 1 ? ys : sb;
  int xn = na == 1 ? 2 : na, yn = nb == 1 ? 2 : nb;
  if (y[yn - 2] != x[xn - 1])
    return lang_raise(vm, "ValueError", "matmul: shapes %s and %s are not aligned",
                      shape_str(na, sa), shape_str(nb, sb));
  int nbatch = 0;
  if (xn > 2 || yn > 2) {
    if (!lang_broadcast_shapes(vm, "matmul", xn - 2, x, yn - 2, y, &nbatch, out)) {
      lang_error_clear(vm);
      return lang_raise(vm, "ValueError", "matmul: shapes %s and %s cannot be broadcast",
                        shape_str(na, sa), shape_str(nb, sb));
    }
  }
  if (nbatch + 2 > LANG_TENSOR_MAX_DIMS) return lang_raise(vm, "ValueError", "matmul: too many dimensions");
  int n = nbatch;
  if (na > 1) out[n++] = x[xn - 2];
  if (nb > 1) out[n++] = y[yn - 1];
  *nout = n;
  return true;
}

bool lang_tensor_matmul(MistVM *vm, ObjTensor *a, ObjTensor *b, ObjTensor **out) {
  int nchk;
  int64_t chk[LANG_TENSOR_MAX_DIMS];
  if (!lang_matmul_shape(vm, a->ndim, a->shape, b->ndim, b->shape, &nchk, chk)) return false;
  DType cdt = lang_dtype_promote(a->dtype, b->dtype);
  if (cdt == DT_BOOL) cdt = DT_I64;
  ObjTensor *x, *y;
  if (!lang_tensor_astype(vm, a, cdt, &x) || !lang_tensor_astype(vm, b, cdt, &y)) return false;
  /* vectors become matrices: (k,) @ ... as (1, k), ... @ (k,) as (k, 1) */
  if (x->ndim == 1) {
    int64_t sh[2] = {1, x->shape[0]}, st[2] = {0, x->strides[0]};
    x = lang_tensor_view(x, 2, sh, st, x->offset);
  }
  if (y->ndim == 1) {
    int64_t sh[2] = {y->shape[0], 1}, st[2] = {y->strides[0], 0};
    y = lang_tensor_view(y, 2, sh, st, y->offset);
  }
  int64_t m = x->shape[x->ndim - 2], k = x->shape[x->ndim - 1], n = y->shape[y->ndim - 1];
  if (y->shape[y->ndim - 2] != k)
    return lang_raise(vm, "ValueError", "matmul: shapes %s and %s are not aligned",
                      shape_str(a->ndim, a->shape), shape_str(b->ndim, b->shape));
  int nb;
  int64_t shape[LANG_TENSOR_MAX_DIMS + 2];
  if (x->ndim - 2 > 0 || y->ndim - 2 > 0) {
    int64_t bs[LANG_TENSOR_MAX_DIMS];
    if (!lang_broadcast_shapes(vm, "matmul", x->ndim - 2, x->shape, y->ndim - 2, y->shape, &nb, bs)) {
      lang_error_clear(vm);
      return lang_raise(vm, "ValueError", "matmul: shapes %s and %s cannot be broadcast",
                        shape_str(a->ndim, a->shape), shape_str(b->ndim, b->shape));
    }
    memcpy(shape, bs, (size_t)nb * sizeof *bs);
  } else {
    nb = 0;
  }
  if (nb + 2 > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "ValueError", "matmul: too many dimensions");
  shape[nb] = m;
  shape[nb + 1] = n;
  int64_t batch = 1;
  for (int d = 0; d < nb; d++) batch *= shape[d];
  ObjTensor *r = lang_tensor_new(vm, cdt, nb + 2, shape, k == 0);
  if (!r) return false;
  if (batch > 0 && m > 0 && n > 0 && k > 0) {
    if (lang_dtype_is_float(cdt)) {
      MatArg ma, mb;
      ObjTensor *kx, *ky;
      if (!mat_arg(vm, x, nb, shape, &ma, &kx) || !mat_arg(vm, y, nb, shape, &mb, &ky)) return false;
      DevPool *pool = lang_tensor_pool(vm);
      if (cdt == DT_F32) {
        if (batch == 1)
          dev_gemm_f32(pool, ma.trans, mb.trans, m, n, k, 1.0f, (const float *)ma.base, ma.ld,
                       (const float *)mb.base, mb.ld, 0.0f, (float *)lang_tensor_ptr(r), n);
        else
          dev_gemm_batched_f32(pool, ma.trans, mb.trans, batch, m, n, k, 1.0f,
                               (const float *)ma.base, ma.stride, ma.ld, (const float *)mb.base,
                               mb.stride, mb.ld, 0.0f, (float *)lang_tensor_ptr(r), m * n, n);
      } else {
        if (batch == 1)
          dev_gemm_f64(pool, ma.trans, mb.trans, m, n, k, 1.0, (const double *)ma.base, ma.ld,
                       (const double *)mb.base, mb.ld, 0.0, (double *)lang_tensor_ptr(r), n);
        else
          dev_gemm_batched_f64(pool, ma.trans, mb.trans, batch, m, n, k, 1.0,
                               (const double *)ma.base, ma.stride, ma.ld, (const double *)mb.base,
                               mb.stride, mb.ld, 0.0, (double *)lang_tensor_ptr(r), m * n, n);
      }
      LANG_KEEP(kx);
      LANG_KEEP(ky);
    } else {
      int64_t fa[LANG_TENSOR_MAX_DIMS], fb[LANG_TENSOR_MAX_DIMS];
      memcpy(fa, shape, (size_t)nb * sizeof *fa);
      memcpy(fb, shape, (size_t)nb * sizeof *fb);
      fa[nb] = m;
      fa[nb + 1] = k;
      fb[nb] = k;
      fb[nb + 1] = n;
      ObjTensor *bx, *by, *cx, *cy;
      if (!lang_tensor_broadcast_to(vm, "matmul", x, nb + 2, fa, &bx) ||
          !lang_tensor_broadcast_to(vm, "matmul", y, nb + 2, fb, &by))
        return false;
      cx = lang_tensor_new(vm, cdt, nb + 2, fa, false);
      cy = lang_tensor_new(vm, cdt, nb + 2, fb, false);
      if (!cx || !cy || !lang_tensor_copy_into(vm, "matmul", cx, bx) ||
          !lang_tensor_copy_into(vm, "matmul", cy, by))
        return false;
      if (cdt == DT_I32)
        i32_matmul((const int32_t *)lang_tensor_ptr(cx), (const int32_t *)lang_tensor_ptr(cy),
                   (int32_t *)lang_tensor_ptr(r), batch, m, n, k);
      else
        i64_matmul((const int64_t *)lang_tensor_ptr(cx), (const int64_t *)lang_tensor_ptr(cy),
                   (int64_t *)lang_tensor_ptr(r), batch, m, n, k);
      LANG_KEEP(cx);
      LANG_KEEP(cy);
    }
  }
  LANG_KEEP(x);
  LANG_KEEP(y);
  /* drop the axes the vectors gained */
  int rnd = nb + 2;
  int64_t rs[LANG_TENSOR_MAX_DIMS + 2];
  memcpy(rs, shape, (size_t)rnd * sizeof *rs);
  if (b->ndim == 1) rnd--;
  if (a->ndim == 1) {
    rs[nb] = rs[nb + 1];
    rnd--;
  }
  if (rnd != nb + 2) return lang_tensor_reshape(vm, r, rnd, rs, out);
  *out = r;
  return true;
}

/* ---- the operators ---- */

bool lang_tensor_arith_reusing(MistVM *vm, ArithOp op, Value a, Value b, unsigned dead, Value *out) {
  static const TensorBinop map[] = {
    [OP_ADD] = TB_ADD, [OP_SUB] = TB_SUB, [OP_MUL] = TB_MUL, [OP_TRUEDIV] = TB_TRUEDIV,
    [OP_FLOORDIV] = TB_FLOORDIV, [OP_MOD] = TB_MOD, [OP_POW] = TB_POW,
  };
  if (op == OP_MATMUL) {
    ObjTensor *x, *y, *r;
    if (is_number(a) || is_number(b))
      return lang_raise(vm, "ValueError", "matmul: an operand is a scalar (%s); use * instead",
                        lang_type_name(is_number(a) ? a : b));
    if (!lang_tensor_of_value(vm, "matmul", a, DT_F32, &x) ||
        !lang_tensor_of_value(vm, "matmul", b, DT_F32, &y) || !lang_tensor_matmul(vm, x, y, &r))
      return false;
    *out = v_obj(r);
    return true;
  }
  if ((!v_is_tensor(a) && !is_number(a) && !v_is_obj(a, O_LIST) && !v_is_obj(a, O_TUPLE)) ||
      (!v_is_tensor(b) && !is_number(b) && !v_is_obj(b, O_LIST) && !v_is_obj(b, O_TUPLE)))
    return lang_raise(vm, "TypeError", "unsupported operand type(s) for %s: '%s' and '%s'",
                      op == OP_POW ? "** or pow()" : lang_arith_symbol(op), lang_type_name(a), lang_type_name(b));
  return binary(vm, map[op], a, b, dead, out);
}

bool lang_tensor_arith(MistVM *vm, ArithOp op, Value a, Value b, Value *out) {
  return lang_tensor_arith_reusing(vm, op, a, b, 0, out);
}

static bool same_shape(const ObjTensor *x, const ObjTensor *y) {
  if (x->ndim != y->ndim) return false;
  for (int d = 0; d < x->ndim; d++)
    if (x->shape[d] != y->shape[d]) return false;
  return true;
}

bool lang_tensor_scaled_op(MistVM *vm, TensorBinop op, Value x, Value a, Value b, unsigned how,
                           ObjTensor **out) {
  *out = NULL;
  bool scalar_first = !v_is_tensor(a);
  Value s = scalar_first ? a : b, y = scalar_first ? b : a;
  if ((op != TB_ADD && op != TB_SUB) || !v_is_tensor(x) || !v_is_tensor(y) ||
      (s.tag != V_FLOAT && s.tag != V_INT))
    return false;
  ObjTensor *X = AS_TENSOR(x), *Y = AS_TENSOR(y);
  /* a number takes the tensor's float dtype in the product (scalar_with),
   * which the sum keeps when x has it too */
  DType dt = Y->dtype;
  if (!lang_dtype_is_float(dt) || X->dtype != dt || !same_shape(X, Y) || !lang_tensor_is_contiguous(X) ||
      !lang_tensor_is_contiguous(Y))
    return false;
  union {
    float f;
    double d;
  } sv;
  if (!lang_tensor_store(vm, dt, (char *)&sv, s)) return true;
  ObjTensor *r = NULL;
  if ((how & LANG_DEAD_X) && lang_tensor_reusable(X, dt, X->ndim, X->shape)) r = X;
  else if ((how & (scalar_first ? LANG_DEAD_B : LANG_DEAD_A)) && lang_tensor_reusable(Y, dt, Y->ndim, Y->shape))
    r = Y;
  if (!r && !(r = lang_tensor_new(vm, dt, X->ndim, X->shape, false))) return true;
  unsigned order = (how & LANG_PRODUCT_FIRST ? DEV_PRODUCT_FIRST : 0) | (scalar_first ? 0 : DEV_SCALAR_LAST);
  VmBinary vop = op == TB_ADD ? VM_ADD : VM_SUB;
  DevPool *pool = lang_tensor_pool(vm);
  if (dt == DT_F32)
    dev_binary_scaled_f32(pool, vop, (float *)lang_tensor_ptr(r), (const float *)lang_tensor_ptr(X), sv.f,
                          (const float *)lang_tensor_ptr(Y), X->size, order);
  else
    dev_binary_scaled_f64(pool, vop, (double *)lang_tensor_ptr(r), (const double *)lang_tensor_ptr(X), sv.d,
                          (const double *)lang_tensor_ptr(Y), X->size, order);
  LANG_KEEP(X);
  LANG_KEEP(Y);
  *out = r;
  return true;
}

bool lang_tensor_compare(MistVM *vm, CmpOp op, Value a, Value b, Value *out) {
  static const TensorBinop map[] = {
    [CMP_EQ] = TB_EQ, [CMP_NE] = TB_NE, [CMP_LT] = TB_LT,
    [CMP_LE] = TB_LE, [CMP_GT] = TB_GT, [CMP_GE] = TB_GE,
  };
  Value other = v_is_tensor(a) ? b : a;
  if (!v_is_tensor(other) && !is_number(other) && !v_is_obj(other, O_LIST) &&
      !v_is_obj(other, O_TUPLE)) {
    if (op == CMP_EQ || op == CMP_NE) {   /* a tensor is never equal to a str, None... */
      *out = v_bool(op == CMP_NE);
      return true;
    }
    return lang_raise(vm, "TypeError", "'%s' not supported between instances of '%s' and '%s'",
                      lang_cmp_symbol(op), lang_type_name(a), lang_type_name(b));
  }
  return lang_tensor_binary(vm, map[op], a, b, out);
}

bool lang_tensor_truthy(MistVM *vm, ObjTensor *t, bool *out) {
  if (t->size != 1)
    return lang_raise(vm, "ValueError",
                      t->size == 0 ? "the truth value of an empty tensor is ambiguous"
                                   : "the truth value of a tensor with more than one element is "
                                     "ambiguous (use any() or all())");
  Value v = lang_tensor_load(t->dtype, lang_tensor_ptr(t));
  *out = v.tag == V_FLOAT ? v.f != 0 : v.tag == V_INT ? v.i != 0 : v.b;
  return true;
}

bool lang_tensor_contains(MistVM *vm, ObjTensor *t, Value item, bool *out) {
  Value eq;
  ObjTensor *any;
  if (!lang_tensor_binary(vm, TB_EQ, v_obj(t), item, &eq) ||
      !lang_tensor_reduce(vm, TR_ANY, AS_TENSOR(eq), ~(uint64_t)0, false, &any))
    return false;
  *out = *(uint8_t *)lang_tensor_ptr(any) != 0;
  return true;
}
