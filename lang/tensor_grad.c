/* tensor_grad.c: the shape bookkeeping that derivatives of tensor code
 * need, written once in C so that the rules of stdlib/ad_rules.ms and
 * the sensitivity primitives of ir/prims.c share it.
 *
 * Broadcasting is the one place where a derivative changes shape: a
 * value x of shape (3,) added to one of shape (2, 3) is read twice, so
 * its sensitivity is the sum of the two rows of the result's.
 * lang_tensor_sum_to undoes NumPy broadcasting that way (leading axes
 * summed away, axes of size 1 summed with keepdims); its transpose,
 * lang_tensor_broadcast_like, spreads a sensitivity back out as a
 * stride-0 view; lang_tensor_unreduce puts back the axes a reduction
 * removed.  All three give the sensitivity the dtype of the value it
 * belongs to when that is a float tensor (an f32 parameter gets an f32
 * gradient, whatever dtype its uses computed in), and a Python float
 * when the value is a number.  lang_tensor_act_sens fuses the few
 * operations of an activation's sensitivity into one pass: on the small
 * vectors of a recurrent network each operation costs its allocations
 * and set-up far more than its arithmetic.
 */
#include <string.h>

#include "devices/cpu/vmath.h"
#include "lang/gc.h"
#include "lang/tensor_impl.h"

static bool is_number(Value v) { return v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL; }

static const char *shape_str(int ndim, const int64_t *shape) {
  StrBuf sb;
  sb_init(&sb);
  lang_shape_repr(ndim, shape, &sb);
  return sb.data;
}

/* d as a tensor: numbers become 0-d tensors of dtype dt. */
static bool sens_tensor(MistVM *vm, const char *fname, Value d, DType dt, ObjTensor **out) {
  if (v_is_tensor(d)) {
    *out = AS_TENSOR(d);
    return true;
  }
  if (is_number(d)) return lang_tensor_scalar(vm, dt, d, out);
  if (v_is_obj(d, O_LIST) || v_is_obj(d, O_TUPLE)) return lang_tensor_from_value(vm, fname, d, dt, out);
  return lang_raise(vm, "TypeError", "%s: a sensitivity must be a number or a tensor, not %s",
                    fname, lang_type_name(d));
}

/* The sum of every element of t, as a double. */
static bool sum_all(MistVM *vm, ObjTensor *t, double *out) {
  ObjTensor *s;
  if (!lang_tensor_reduce(vm, TR_SUM, t, ~(uint64_t)0, false, &s)) return false;
  Value v = lang_tensor_load(s->dtype, lang_tensor_ptr(s));
  *out = v.tag == V_FLOAT ? v.f : v.tag == V_INT ? (double)v.i : (double)v.b;
  return true;
}

/* t cast to the dtype of the float tensor like (t itself when it already
 * has it, or like is not a float tensor). */
static bool like_dtype(MistVM *vm, ObjTensor *t, const ObjTensor *like, ObjTensor **out) {
  if (!lang_dtype_is_float(like->dtype) || t->dtype == like->dtype) {
    *out = t;
    return true;
  }
  return lang_tensor_astype(vm, t, like->dtype, out);
}

static DType sens_dtype(const ObjTensor *like) {
  return lang_dtype_is_float(like->dtype) ? like->dtype : DT_F32;
}

bool lang_tensor_sum_to(MistVM *vm, Value d, Value like, Value *out) {
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  if (is_number(like)) {
    if (is_number(d)) {
      *out = v_float(d.tag == V_FLOAT ? d.f : d.tag == V_INT ? (double)d.i : (double)d.b);
      return true;
    }
    ObjTensor *t;
    double s;
    if (!sens_tensor(vm, "sum_to", d, DT_F64, &t) || !sum_all(vm, t, &s)) return false;
    *out = v_float(s);
    return true;
  }
  if (!v_is_tensor(like))
    return lang_raise(vm, "TypeError", "sum_to: expected a tensor or a number to sum to, not %s",
                      lang_type_name(like));
  ObjTensor *L = AS_TENSOR(like), *D;
  if (!sens_tensor(vm, "sum_to", d, sens_dtype(L), &D)) return false;
  int lead = D->ndim - L->ndim;
  uint64_t mask = 0;
  bool same = lead == 0;
  for (int a = 0; a < D->ndim; a++) {
    int la = a - lead;
    if (la < 0) {
      mask |= (uint64_t)1 << a;
      continue;
    }
    int64_t want = L->shape[la], have = D->shape[a];
    if (want == have) continue;
    same = false;
    if (want == 1) mask |= (uint64_t)1 << a;
    else if (have != 1)
      return lang_raise(vm, "ValueError", "sum_to: a sensitivity of shape %s does not fit shape %s",
                        shape_str(D->ndim, D->shape), shape_str(L->ndim, L->shape));
  }
  ObjTensor *r = D;
  if (!same) {
    if (mask && !lang_tensor_reduce(vm, TR_SUM, D, mask, true, &r)) return false;
    if (lead > 0) {   /* drop the leading axes, now of size 1 */
      ObjTensor *s;
      if (!lang_tensor_reshape(vm, r, r->ndim - lead, r->shape + lead, &s)) return false;
      r = s;
    }
    /* axes of size 1 in d and not in like (or missing from d) spread out */
    if (!lang_tensor_broadcast_to(vm, "sum_to", r, L->ndim, L->shape, &r)) return false;
  }
  if (!like_dtype(vm, r, L, &r)) return false;
  *out = v_obj(r);
  return true;
}

bool lang_tensor_broadcast_like(MistVM *vm, Value d, Value like, Value *out) {
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  if (is_number(like)) {
    if (is_number(d)) return lang_tensor_sum_to(vm, d, like, out);
    ObjTensor *t;
    Value v;
    if (!sens_tensor(vm, "broadcast_like", d, DT_F64, &t) || !lang_tensor_item(vm, "broadcast_like", t, &v))
      return false;
    return lang_tensor_sum_to(vm, v, like, out);
  }
  if (!v_is_tensor(like))
    return lang_raise(vm, "TypeError", "broadcast_like: expected a tensor or a number, not %s",
                      lang_type_name(like));
  ObjTensor *L = AS_TENSOR(like), *D, *r;
  if (!sens_tensor(vm, "broadcast_like", d, sens_dtype(L), &D) || !like_dtype(vm, D, L, &D) ||
      !lang_tensor_broadcast_to(vm, "broadcast_like", D, L->ndim, L->shape, &r))
    return false;
  *out = v_obj(r);
  return true;
}

bool lang_tensor_unreduce(MistVM *vm, Value d, ObjTensor *like, uint64_t axes, bool keepdims,
                          Value *out) {
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  ObjTensor *D;
  if (!sens_tensor(vm, "unreduce", d, sens_dtype(like), &D)) return false;
  if (!keepdims) {
    int64_t kept[LANG_TENSOR_MAX_DIMS];
    for (int a = 0; a < like->ndim; a++) kept[a] = axes >> a & 1 ? 1 : like->shape[a];
    if (lang_shape_size(like->ndim, kept) != D->size)
      return lang_raise(vm, "ValueError", "unreduce: a sensitivity of shape %s does not fit a reduction of shape %s",
                        shape_str(D->ndim, D->shape), shape_str(like->ndim, like->shape));
    if (!lang_tensor_reshape(vm, D, like->ndim, kept, &D)) return false;
  }
  return lang_tensor_broadcast_like(vm, v_obj(D), v_obj(like), out);
}

/* ---- the sensitivities of activations, fused ---- */

/* out = expr(d, v) over one row; the contiguous case apart, so that it
 * vectorises (for AVX-512 and AVX2 too, chosen at load time as
 * devices/cpu/vmath.c's kernels are) */
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define ACT_ROW(name, T, EXPR)                                                      \
  CLONES static void name(void *ctx, char *const *p, const int64_t *s, int64_t n) { \
    (void)ctx;                                                                      \
    if (s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T) && s[2] == (int64_t)sizeof(T)) { \
      /* (the result is a new buffer: no overlap) */                                \
      T *restrict o = (T *)p[0];                                                    \
      const T *restrict dd = (const T *)p[1], *restrict vv = (const T *)p[2];       \
      for (int64_t i = 0; i < n; i++) {                                             \
        T d = dd[i], v = vv[i];                                                     \
        o[i] = EXPR;                                                                \
      }                                                                             \
      return;                                                                       \
    }                                                                               \
    char *o = p[0];                                                                 \
    const char *dp = p[1], *vp = p[2];                                              \
    for (int64_t i = 0; i < n; i++, o += s[0], dp += s[1], vp += s[2]) {            \
      T d = *(const T *)dp, v = *(const T *)vp;                                     \
      *(T *)o = EXPR;                                                               \
    }                                                                               \
  }

/* (d * y) * (1 - y), d * (1 - y * y), d * (x > 0): the op-by-op order.
 * relu's comparison is a number, not a branch: a branch on the sign of
 * each element mispredicts half the time and does not vectorise (3
 * cycles an element, against a fraction of one) */
ACT_ROW(sigmoid_f32, float, (d * v) * ((float)1 - v))
ACT_ROW(sigmoid_f64, double, (d * v) * (1.0 - v))
ACT_ROW(tanh_f32, float, d * ((float)1 - v * v))
ACT_ROW(tanh_f64, double, d * (1.0 - v * v))
ACT_ROW(relu_f32, float, d * (float)(v > 0))
ACT_ROW(relu_f64, double, d * (double)(v > 0))

bool lang_tensor_act_sens(MistVM *vm, LangActSens kind, Value d, Value v, bool over_d, ObjTensor **out) {
  *out = NULL;
  if (!v_is_tensor(d) || !v_is_tensor(v)) return false;
  ObjTensor *D = AS_TENSOR(d), *V = AS_TENSOR(v);
  if (D->dtype != V->dtype || !lang_dtype_is_float(D->dtype) || D->ndim != V->ndim) return false;
  for (int a = 0; a < D->ndim; a++)
    if (D->shape[a] != V->shape[a]) return false;
  static const LangRowFn rows[3][2] = {{sigmoid_f32, sigmoid_f64}, {tanh_f32, tanh_f64}, {relu_f32, relu_f64}};
  /* (each element of d is read before the same one of r is written) */
  ObjTensor *r = over_d && lang_tensor_reusable(D, D->dtype, D->ndim, D->shape)
                     ? D : lang_tensor_new(vm, D->dtype, D->ndim, D->shape, false);
  if (!r) return true;
  LangNdLoop l;
  lang_nd_init(&l, 3, D->ndim, D->shape);
  lang_nd_operand(&l, 0, r);
  lang_nd_operand(&l, 1, D);
  lang_nd_operand(&l, 2, V);
  lang_nd_run(lang_tensor_pool(vm), &l, rows[kind][D->dtype == DT_F64], NULL);
  LANG_KEEP(D);
  LANG_KEEP(V);
  *out = r;
  return true;
}

/* ---- log_softmax's sensitivity ---- */

bool lang_tensor_log_softmax_sens(MistVM *vm, Value d, ObjTensor *y, uint64_t axes, ObjTensor **out) {
  *out = NULL;
  if (!v_is_tensor(d)) return false;
  ObjTensor *D = AS_TENSOR(d);
  int nd = y->ndim;
  if (D->dtype != y->dtype || !lang_dtype_is_float(y->dtype) || D->ndim != nd || nd == 0 ||
      (axes & (((uint64_t)1 << nd) - 1)) != (uint64_t)1 << (nd - 1) || !lang_tensor_is_contiguous(D) ||
      !lang_tensor_is_contiguous(y))
    return false;
  for (int a = 0; a < nd; a++)
    if (D->shape[a] != y->shape[a]) return false;
  int64_t n = y->shape[nd - 1], rows = n ? y->size / n : 0;
  ObjTensor *e;
  if (!lang_tensor_unary(vm, TU_EXP, y, &e)) return true;   /* exp(y), written over by the result */
  DevPool *pool = lang_tensor_pool(vm);
  if (y->dtype == DT_F32) {
    float *r = (float *)lang_tensor_ptr(e);
    const float *g = (const float *)lang_tensor_ptr(D);
    for (int64_t i = 0; i < rows; i++, r += n, g += n) {
      float s = (float)(n <= DEV_SUM_SHORT ? dev_sum_short_f32(g, n) : dev_sum_f32(pool, g, n));
      for (int64_t j = 0; j < n; j++) r[j] = g[j] - r[j] * s;
    }
  } else {
    double *r = (double *)lang_tensor_ptr(e);
    const double *g = (const double *)lang_tensor_ptr(D);
    for (int64_t i = 0; i < rows; i++, r += n, g += n) {
      double s = n <= DEV_SUM_SHORT ? dev_sum_short_f64(g, n) : dev_sum_f64(pool, g, n);
      for (int64_t j = 0; j < n; j++) r[j] = g[j] - r[j] * s;
    }
  }
  LANG_KEEP(D);
  *out = e;
  return true;
}

/* ---- sums and products of alike tensors ---- */

/* (r may be x or y: each element is read before the same one is written) */
#define ALIKE_ROW(name, T, OP)                                                      \
  static void name(void *o, const void *a, const void *b, int64_t n) {              \
    T *r = o;                                                                       \
    const T *x = a, *y = b;                                                         \
    for (int64_t i = 0; i < n; i++) r[i] = x[i] OP y[i];                            \
  }
ALIKE_ROW(add_alike_f32, float, +)
ALIKE_ROW(add_alike_f64, double, +)
ALIKE_ROW(mul_alike_f32, float, *)
ALIKE_ROW(mul_alike_f64, double, *)

bool lang_tensor_alike_op(MistVM *vm, int op, Value a, Value b, unsigned dead, ObjTensor **out) {
  *out = NULL;
  if ((op != TB_ADD && op != TB_MUL) || !v_is_tensor(a) || !v_is_tensor(b)) return false;
  ObjTensor *A = AS_TENSOR(a), *B = AS_TENSOR(b);
  if (A->dtype != B->dtype || !lang_dtype_is_float(A->dtype) || A->ndim != B->ndim) return false;
  for (int d = 0; d < A->ndim; d++)
    if (A->shape[d] != B->shape[d]) return false;
  /* the parallel kernels are for big tensors: those go the general way */
  if (A->size >= LANG_ND_PAR_MIN || !lang_tensor_is_contiguous(A) || !lang_tensor_is_contiguous(B))
    return false;
  ObjTensor *r = (dead & 1) && lang_tensor_reusable(A, A->dtype, A->ndim, A->shape)   ? A
                 : (dead & 2) && lang_tensor_reusable(B, B->dtype, B->ndim, B->shape) ? B
                                                                                     : lang_tensor_new(vm, A->dtype, A->ndim, A->shape, false);
  if (!r) return true;
  bool f64 = A->dtype == DT_F64;
  void (*row)(void *, const void *, const void *, int64_t) =
      op == TB_ADD ? (f64 ? add_alike_f64 : add_alike_f32) : (f64 ? mul_alike_f64 : mul_alike_f32);
  row(lang_tensor_ptr(r), lang_tensor_ptr(A), lang_tensor_ptr(B), A->size);
  LANG_KEEP(A);
  LANG_KEEP(B);
  *out = r;
  return true;
}
