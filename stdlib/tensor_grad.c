/* tensor_grad.c: the builtins that the derivative rules of tensor code
 * (stdlib/ad_rules.ms) are written with.  They are ordinary builtins,
 * so the rules stay Mist code that is itself differentiated; the
 * leading underscore marks the ones that are not meant for programs.
 *
 *   sum_to(x, like)                 x summed back to like's shape
 *   _sens_to(d, x)                  d as the sensitivity of x: sum_to,
 *                                   None for ints, bools, strs and
 *                                   integer tensors, nested lists for a
 *                                   list x
 *   _broadcast_like(x, like)        x spread out to like's shape
 *   _unreduce(x, like, axis=None, keepdims=False)
 *                                   a reduction's sensitivity, back to
 *                                   the shape of what was reduced
 *   _conv2d_backward_input(d, x, w, stride=1, padding=0)
 *   _conv2d_backward_weight(d, x, w, stride=1, padding=0)
 *   _max_pool2d_backward(d, x, kernel, stride=None, padding=0)
 *   _max_pool2d_select(x, v, kernel, stride=None, padding=0)
 *   _log_softmax_sens(d, y, axis)   log_softmax's backward step,
 *                                   d - exp(y) * sum(d, axis, True)
 *   _sens_whole(d)                  a sensitivity made of parts, whole
 *   _fdiv(a, b), _fpow(a, b)        a / b and a ** b as IEEE arithmetic
 *                                   does them on floats: a derivative at a
 *                                   singular point is inf or nan, never an
 *                                   error (docs/autodiff.md); on tensors,
 *                                   which already do, / and **
 *
 * The convolution's two backward products follow the forward pass's
 * im2col + gemm (devices/cpu/conv.c): for one image the columns matrix
 * cols[Cin*kh*kw, Ho*Wo] holds the input under each window, so with
 * out = W @ cols the input's sensitivity is col2im(W^T @ d) (windows
 * that overlap add up) and the weight's is the sum over images of
 * d @ cols^T.  Max pooling sends each window's sensitivity to the
 * element that won it, found again by the device kernel (its argmax);
 * _max_pool2d_select reads v at those same elements, which is the
 * tangent of max_pool2d in forward mode and the transpose of the
 * backward pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blas.h"
#include "devices/cpu/conv.h"
#include "ir/eval.h"
#include "lang/gc.h"
#include "lang/tensor_impl.h"
#include "stdlib/builtins.h"
#include "stdlib/ops.h"
#include "stdlib/tensor.h"

#define BUILTIN(name) \
  static bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

static bool given_nn(Value v) { return v.tag != V_UNBOUND && v.tag != V_NONE; }

/* ---- broadcasting and reductions ---- */

/* sum_to(x, like) */
OP_EVAL(std_sum_to) {
  static const char *const names[] = {"x", "like"};
  Value a[2];
  if (!std_tensor_parse(vm, "sum_to", argc, argv, kw, names, 2, 2, 2, a)) return false;
  return lang_tensor_sum_to(vm, a[0], a[1], out);
}

/* A sensitivity of a list or tuple of numbers, None items (zeros) as 0.0,
 * to be read as a tensor. */
static Value dense(Value d) {
  if (!(v_is_obj(d, O_LIST) || v_is_obj(d, O_TUPLE))) return d.tag == V_NONE ? v_float(0.0) : d;
  ObjSeq *s = AS_SEQ(d), *r = v_is_obj(d, O_TUPLE) ? lang_tuple_new(s->len) : lang_list_new(s->len);
  for (size_t i = 0; i < s->len; i++) r->items[i] = dense(s->items[i]);
  return v_obj(r);
}

static bool sens_to(MistVM *vm, Value d, Value x, Value *out);

/* The sensitivity of a list or tuple x of numbers (or nested ones) made
 * into a tensor: d summed to its shape, then split into the same nesting. */
static bool sens_to_seq(MistVM *vm, Value d, Value x, Value *out) {
  ObjSeq *xs = AS_SEQ(x);
  ObjSeq *r = v_is_obj(x, O_TUPLE) ? lang_tuple_new(xs->len) : lang_list_new(xs->len);
  if (v_is_obj(d, O_LIST) || v_is_obj(d, O_TUPLE)) {
    /* already a sensitivity of the list's kind */
    ObjSeq *ds = AS_SEQ(d);
    if (ds->len != xs->len)
      return lang_raise(vm, "ValueError", "a sensitivity of %zu item%s for a sequence of %zu", ds->len,
                        ds->len == 1 ? "" : "s", xs->len);
    for (size_t i = 0; i < xs->len; i++)
      if (!sens_to(vm, ds->items[i], xs->items[i], &r->items[i])) return false;
    *out = v_obj(r);
    return true;
  }
  ObjTensor *t;
  Value s;
  if (!lang_tensor_from_value(vm, "sum_to", dense(x), DT_F64, &t) || !lang_tensor_sum_to(vm, d, v_obj(t), &s))
    return false;
  ObjTensor *st = AS_TENSOR(s);
  if (st->ndim == 0 || st->shape[0] != (int64_t)xs->len)
    return lang_raise(vm, "ValueError", "a sensitivity of shape %s for a sequence of %zu item%s",
                      std_shape_str(st), xs->len, xs->len == 1 ? "" : "s");
  for (size_t i = 0; i < xs->len; i++) {
    Value di;
    if (!lang_tensor_getitem(vm, st, v_int((int64_t)i), &di) || !sens_to(vm, di, xs->items[i], &r->items[i]))
      return false;
  }
  *out = v_obj(r);
  return true;
}

static bool sens_to(MistVM *vm, Value d, Value x, Value *out) {
  *out = v_none();
  if (d.tag == V_NONE) return true;
  switch (x.tag) {
  case V_FLOAT: return lang_tensor_sum_to(vm, dense(d), x, out);
  case V_OBJ:
    if (v_is_tensor(x)) {
      if (!lang_dtype_is_float(AS_TENSOR(x)->dtype)) return true;
      return lang_tensor_sum_to(vm, dense(d), x, out);
    }
    if (v_is_obj(x, O_LIST) || v_is_obj(x, O_TUPLE)) return sens_to_seq(vm, d, x, out);
    if (v_is_obj(x, O_STR)) return true;
    *out = d;   /* a function, a dict...: the sensitivity as it is */
    return true;
  default: return true;   /* int, bool, None */
  }
}

/* _sens_to(d, x) */
OP_EVAL(std_sens_to) {
  static const char *const names[] = {"d", "x"};
  Value a[2];
  if (!std_tensor_parse(vm, "_sens_to", argc, argv, kw, names, 2, 2, 2, a)) return false;
  return sens_to(vm, a[0], a[1], out);
}

static bool broadcast_like(MistVM *vm, Value x, Value like, Value *out) {
  if (x.tag == V_NONE || like.tag == V_NONE || (v_is_tensor(like) && !lang_dtype_is_float(AS_TENSOR(like)->dtype)) ||
      like.tag == V_INT || like.tag == V_BOOL) {
    /* a zero tangent, or a value that has no derivative: no tangent */
    *out = v_none();
    return true;
  }
  if (v_is_obj(like, O_LIST) || v_is_obj(like, O_TUPLE)) {
    /* a sequence of numbers (a sensitivity of one): item by item */
    ObjSeq *ls = AS_SEQ(like), *r = v_is_obj(like, O_TUPLE) ? lang_tuple_new(ls->len) : lang_list_new(ls->len);
    if (v_is_obj(x, O_LIST) || v_is_obj(x, O_TUPLE)) {
      if (AS_SEQ(x)->len != ls->len)
        return lang_raise(vm, "ValueError", "broadcast_like: %zu items for a sequence of %zu", AS_SEQ(x)->len, ls->len);
      for (size_t i = 0; i < ls->len; i++)
        if (!broadcast_like(vm, AS_SEQ(x)->items[i], ls->items[i], &r->items[i])) return false;
    } else {
      for (size_t i = 0; i < ls->len; i++)
        if (!broadcast_like(vm, x, ls->items[i], &r->items[i])) return false;
    }
    *out = v_obj(r);
    return true;
  }
  return lang_tensor_broadcast_like(vm, dense(x), like, out);
}

/* _broadcast_like(x, like) */
OP_EVAL(std_broadcast_like) {
  static const char *const names[] = {"x", "like"};
  Value a[2];
  if (!std_tensor_parse(vm, "_broadcast_like", argc, argv, kw, names, 2, 2, 2, a)) return false;
  return broadcast_like(vm, a[0], a[1], out);
}

/* _log_softmax_sens(d, y, axis): the sensitivity of x in y =
 * log_softmax(x, axis), d - exp(y) * sum(d, axis, True) with d
 * broadcast to y's shape as _broadcast_like does (stdlib/ad_rules.ms, J_log_softmax): one pass
 * where it can (lang_tensor_log_softmax_sens), else op by op, the same
 * bits either way */
OP_EVAL(std_log_softmax_sens) {
  if (!std_no_kw(vm, "_log_softmax_sens", kw)) return false;
  if (argc != 3 || !v_is_tensor(argv[1]))
    return lang_raise(vm, "TypeError", "_log_softmax_sens: expected (d, y, axis), y a tensor");
  ObjTensor *y = AS_TENSOR(argv[1]), *r, *e, *s;
  uint64_t axes;
  Value d, m;
  if (!std_axes_arg(vm, "_log_softmax_sens", argv[2], y->ndim, true, &axes) ||
      !broadcast_like(vm, argv[0], argv[1], &d))
    return false;
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  if (lang_tensor_log_softmax_sens(vm, d, y, axes, &r)) {
    *out = r ? v_obj(r) : v_none();
    return r != NULL;
  }
  if (!lang_tensor_unary(vm, TU_EXP, y, &e) || !lang_tensor_reduce(vm, TR_SUM, AS_TENSOR(d), axes, true, &s) ||
      !lang_arith(vm, OP_MUL, v_obj(e), v_obj(s), &m))
    return false;
  return lang_arith(vm, OP_SUB, d, m, out);
}

/* _unreduce(x, like, axis=None, keepdims=False) */
OP_EVAL(std_unreduce) {
  static const char *const names[] = {"x", "like", "axis", "keepdims"};
  Value a[4];
  ObjTensor *like;
  uint64_t mask;
  bool keep;
  if (!std_tensor_parse(vm, "_unreduce", argc, argv, kw, names, 4, 4, 2, a) ||
      !std_tensor_arg(vm, "_unreduce", a[1], &like) ||
      !std_axes_arg(vm, "_unreduce", a[2], like->ndim, true, &mask) ||
      !std_bool_arg(vm, a[3], false, &keep))
    return false;
  return lang_tensor_unreduce(vm, a[0], like, mask, keep, out);
}

/* ---- convolution ---- */

/* An int, or a pair of ints (h, w). */
static bool pair_arg(MistVM *vm, const char *fname, const char *what, Value v, int64_t out[2]) {
  if (v.tag == V_INT) {
    out[0] = out[1] = v.i;
    return true;
  }
  if ((v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) && AS_SEQ(v)->len == 2 &&
      AS_SEQ(v)->items[0].tag == V_INT && AS_SEQ(v)->items[1].tag == V_INT) {
    out[0] = AS_SEQ(v)->items[0].i;
    out[1] = AS_SEQ(v)->items[1].i;
    return true;
  }
  return lang_raise(vm, "TypeError", "%s: %s must be an int or a pair of ints, not %s", fname,
                    what, lang_type_name(v));
}

/* t as a contiguous 4-d tensor of dtype dt (a 3-d t is one image). */
static bool as_nchw(MistVM *vm, const char *fname, const char *what, ObjTensor *t, DType dt,
                    ObjTensor **out) {
  if (t->ndim != 4 && t->ndim != 3)
    return lang_raise(vm, "ValueError", "%s: %s must be 3-d or 4-d, not of shape %s", fname, what,
                      std_shape_str(t));
  if (!lang_tensor_astype(vm, t, dt, &t)) return false;
  if (t->ndim == 3) {
    int64_t sh[4] = {1, t->shape[0], t->shape[1], t->shape[2]};
    if (!lang_tensor_reshape(vm, t, 4, sh, &t)) return false;
  }
  *out = lang_tensor_contiguous(vm, t);
  return *out != NULL;
}

static bool float_tensor(MistVM *vm, const char *fname, Value v, ObjTensor **out) {
  if (!std_tensor_arg(vm, fname, v, out)) return false;
  if (!lang_dtype_is_float((*out)->dtype))
    return lang_raise(vm, "TypeError", "%s: expected f32 or f64 tensors, not %s", fname,
                      dev_dtype_name((*out)->dtype));
  return true;
}

typedef struct ConvG {
  int64_t n, cin, h, w, cout, kh, kw, sh, sw, ph, pw, ho, wo;
} ConvG;

/* images per part of a weight's sensitivity (backward_weight below) */
#define CONV_GROUP 8

#define CONV_GRAD(T, SUF)                                                                     \
  static void im2col_##SUF(const ConvG *g, const T *x, T *cols) {                             \
    for (int64_t c = 0; c < g->cin; c++)                                                      \
      for (int64_t i = 0; i < g->kh; i++)                                                     \
        for (int64_t j = 0; j < g->kw; j++) {                                                 \
          T *row = cols + ((c * g->kh + i) * g->kw + j) * g->ho * g->wo;                      \
          for (int64_t oh = 0; oh < g->ho; oh++) {                                            \
            int64_t ih = oh * g->sh - g->ph + i;                                              \
            for (int64_t ow = 0; ow < g->wo; ow++) {                                          \
              int64_t iw = ow * g->sw - g->pw + j;                                            \
              row[oh * g->wo + ow] = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w             \
                                         ? x[(c * g->h + ih) * g->w + iw] : (T)0;             \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
  }                                                                                           \
  static void col2im_##SUF(const ConvG *g, const T *cols, T *x) {                             \
    for (int64_t c = 0; c < g->cin; c++)                                                      \
      for (int64_t i = 0; i < g->kh; i++)                                                     \
        for (int64_t j = 0; j < g->kw; j++) {                                                 \
          const T *row = cols + ((c * g->kh + i) * g->kw + j) * g->ho * g->wo;                \
          for (int64_t oh = 0; oh < g->ho; oh++) {                                            \
            int64_t ih = oh * g->sh - g->ph + i;                                              \
            if (ih < 0 || ih >= g->h) continue;                                               \
            for (int64_t ow = 0; ow < g->wo; ow++) {                                          \
              int64_t iw = ow * g->sw - g->pw + j;                                            \
              if (iw >= 0 && iw < g->w) x[(c * g->h + ih) * g->w + iw] += row[oh * g->wo + ow]; \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
  }                                                                                           \
  /* dx = col2im(W^T @ d), image by image: the batch split over the pool, \
   * each task with its own columns and a single-threaded product */          \
  typedef struct {                                                             \
    const ConvG *g;                                                            \
    const T *d, *w, *x;                                                        \
    T *out;                                                                    \
    bool failed;                                                               \
  } Task_##SUF;                                                                \
  /* a task's columns buffer; NULL (and the task failed) without memory */  \
  static T *task_cols_##SUF(Task_##SUF *t) {                                  \
    const ConvG *g = t->g;                                                     \
    T *cols = malloc((size_t)(g->cin * g->kh * g->kw * g->ho * g->wo) * sizeof(T)); \
    if (!cols) t->failed = true;                                               \
    return cols;                                                               \
  }                                                                            \
  static void input_images_##SUF(void *ctx, int64_t b0, int64_t b1) {         \
    Task_##SUF *t = ctx;                                                       \
    const ConvG *g = t->g;                                                     \
    int64_t k = g->cin * g->kh * g->kw, hw = g->ho * g->wo;                    \
    T *cols = task_cols_##SUF(t);                                              \
    if (!cols) return;                                                         \
    for (int64_t b = b0; b < b1; b++) {                                        \
      dev_gemm_##SUF(NULL, true, false, k, hw, g->cout, 1, t->w, k,             \
                     t->d + b * g->cout * hw, hw, 0, cols, hw);                \
      col2im_##SUF(g, cols, t->out + b * g->cin * g->h * g->w);                \
    }                                                                          \
    free(cols);                                                                \
  }                                                                            \
  static bool backward_input_##SUF(DevPool *p, const ConvG *g, const T *d,    \
                                   const T *wt, T *dx) {                       \
    Task_##SUF t = {g, d, wt, NULL, dx, false};                                \
    dev_parallel_for(p, g->n, 1, input_images_##SUF, &t);                      \
    return !t.failed;                                                          \
  }                                                                            \
  /* dw = sum over images of d @ cols^T: the images in groups of           \
   * CONV_GROUP, each group's sum made by one task into its own part,      \
   * the parts then added in order, so that the result does not depend on  \
   * the number of threads */                                              \
  static void weight_groups_##SUF(void *ctx, int64_t q0, int64_t q1) {        \
    Task_##SUF *t = ctx;                                                       \
    const ConvG *g = t->g;                                                     \
    int64_t k = g->cin * g->kh * g->kw, hw = g->ho * g->wo;                    \
    T *cols = task_cols_##SUF(t);                                              \
    if (!cols) return;                                                         \
    for (int64_t q = q0; q < q1; q++) {                                        \
      int64_t b1 = (q + 1) * CONV_GROUP < g->n ? (q + 1) * CONV_GROUP : g->n;  \
      for (int64_t b = q * CONV_GROUP; b < b1; b++) {                          \
        im2col_##SUF(g, t->x + b * g->cin * g->h * g->w, cols);                \
        dev_gemm_##SUF(NULL, false, true, g->cout, k, hw, 1,                   \
                       t->d + b * g->cout * hw, hw, cols, hw,                  \
                       b > q * CONV_GROUP ? 1 : 0, t->out + q * g->cout * k, k); \
      }                                                                        \
    }                                                                          \
    free(cols);                                                                \
  }                                                                            \
  static bool backward_weight_##SUF(DevPool *p, const ConvG *g, const T *d,   \
                                    const T *x, T *parts, T *dw) {             \
    int64_t k = g->cin * g->kh * g->kw, groups = (g->n + CONV_GROUP - 1) / CONV_GROUP; \
    Task_##SUF t = {g, d, NULL, x, parts, false};                              \
    dev_parallel_for(p, groups, 1, weight_groups_##SUF, &t);                   \
    for (int64_t q = 0; q < groups; q++)                                       \
      for (int64_t i = 0; i < g->cout * k; i++)                                \
        dw[i] = q ? dw[i] + parts[q * g->cout * k + i] : parts[i];             \
    return !t.failed;                                                          \
  }
CONV_GRAD(float, f32)
CONV_GRAD(double, f64)
#undef CONV_GRAD

/* The arguments both backward builtins take: (d, x, w, stride=1,
 * padding=0), checked against each other; every tensor comes back 4-d,
 * contiguous, of one float dtype. */
static bool conv_grad_args(MistVM *vm, const char *fname, int argc, const Value *argv,
                           const KwArgs *kw, ObjTensor **d, ObjTensor **x, ObjTensor **w,
                           ConvG *g, ObjTensor **x_orig, ObjTensor **w_orig) {
  static const char *const names[] = {"d", "x", "w", "stride", "padding"};
  Value a[5];
  int64_t st[2] = {1, 1}, pd[2] = {0, 0};
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 5, 5, 3, a) || !float_tensor(vm, fname, a[0], d) ||
      !float_tensor(vm, fname, a[1], x) || !float_tensor(vm, fname, a[2], w) ||
      (given_nn(a[3]) && !pair_arg(vm, fname, "stride", a[3], st)) ||
      (given_nn(a[4]) && !pair_arg(vm, fname, "padding", a[4], pd)))
    return false;
  *x_orig = *x;
  *w_orig = *w;
  DType dt = lang_dtype_promote(lang_dtype_promote((*d)->dtype, (*x)->dtype), (*w)->dtype);
  if ((*w)->ndim != 4)
    return lang_raise(vm, "ValueError", "%s: weight must be 4-d, not of shape %s", fname, std_shape_str(*w));
  if ((*d)->ndim != (*x)->ndim)
    return lang_raise(vm, "ValueError", "%s: a sensitivity of shape %s for an input of shape %s",
                      fname, std_shape_str(*d), std_shape_str(*x));
  if (!as_nchw(vm, fname, "input", *x, dt, x) || !as_nchw(vm, fname, "sensitivity", *d, dt, d) ||
      !lang_tensor_astype(vm, *w, dt, w) || !(*w = lang_tensor_contiguous(vm, *w)))
    return false;
  *g = (ConvG){(*x)->shape[0], (*x)->shape[1], (*x)->shape[2], (*x)->shape[3], (*w)->shape[0],
               (*w)->shape[2], (*w)->shape[3], st[0], st[1], pd[0], pd[1], 0, 0};
  g->ho = dev_conv_out_size(g->h, g->kh, g->sh, g->ph);
  g->wo = dev_conv_out_size(g->w, g->kw, g->sw, g->pw);
  if (st[0] < 1 || st[1] < 1 || pd[0] < 0 || pd[1] < 0 || (*w)->shape[1] != g->cin ||
      (*d)->shape[0] != g->n || (*d)->shape[1] != g->cout || (*d)->shape[2] != g->ho ||
      (*d)->shape[3] != g->wo)
    return lang_raise(vm, "ValueError",
                      "%s: a sensitivity of shape %s does not match conv2d of an input of shape %s "
                      "with a weight of shape %s",
                      fname, std_shape_str(*d), std_shape_str(*x), std_shape_str(*w));
  return true;
}

/* The weight sensitivity's parts, one per group of CONV_GROUP images. */
static ObjTensor *parts_of(MistVM *vm, DType dt, const ConvG *g) {
  int64_t sh[2] = {(g->n + CONV_GROUP - 1) / CONV_GROUP, g->cout * g->cin * g->kh * g->kw};
  return lang_tensor_new(vm, dt, 2, sh, false);
}

static bool no_memory(MistVM *vm, const char *fname) {
  return lang_raise(vm, "MemoryError", "%s: out of memory for the columns of a convolution", fname);
}

/* r (computed in a wider dtype, 4-d) as the sensitivity of like. */
static bool fit(MistVM *vm, ObjTensor *r, ObjTensor *like, Value *out) {
  if (!lang_tensor_astype(vm, r, like->dtype, &r) ||
      !lang_tensor_reshape(vm, r, like->ndim, like->shape, &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* _conv2d_backward_input(d, x, w, stride=1, padding=0): the sensitivity
 * of conv2d's input x (only its shape and dtype are read) */
OP_EVAL(std_conv2d_backward_input) {
  ObjTensor *d, *x, *w, *x0, *w0;
  ConvG g;
  if (!conv_grad_args(vm, "_conv2d_backward_input", argc, argv, kw, &d, &x, &w, &g, &x0, &w0))
    return false;
  DType dt = d->dtype;
  ObjTensor *dx = lang_tensor_new(vm, dt, 4, x->shape, true);
  if (!dx) return false;
  if (dx->size > 0 && d->size > 0) {
    bool ok = dt == DT_F32
                  ? backward_input_f32(lang_tensor_pool(vm), &g, (const float *)lang_tensor_ptr(d),
                                       (const float *)lang_tensor_ptr(w), (float *)lang_tensor_ptr(dx))
                  : backward_input_f64(lang_tensor_pool(vm), &g, (const double *)lang_tensor_ptr(d),
                                       (const double *)lang_tensor_ptr(w), (double *)lang_tensor_ptr(dx));
    if (!ok) return no_memory(vm, "_conv2d_backward_input");
  }
  LANG_KEEP(d);
  LANG_KEEP(w);
  return fit(vm, dx, x0, out);
}

/* _conv2d_backward_weight(d, x, w, stride=1, padding=0): the sensitivity
 * of conv2d's weight w (only its shape and dtype are read) */
OP_EVAL(std_conv2d_backward_weight) {
  ObjTensor *d, *x, *w, *x0, *w0;
  ConvG g;
  if (!conv_grad_args(vm, "_conv2d_backward_weight", argc, argv, kw, &d, &x, &w, &g, &x0, &w0))
    return false;
  DType dt = d->dtype;
  ObjTensor *dw = lang_tensor_new(vm, dt, 4, w->shape, true), *parts = parts_of(vm, dt, &g);
  if (!dw || !parts) return false;
  if (dw->size > 0 && d->size > 0) {
    bool ok = dt == DT_F32
                  ? backward_weight_f32(lang_tensor_pool(vm), &g, (const float *)lang_tensor_ptr(d),
                                        (const float *)lang_tensor_ptr(x), (float *)lang_tensor_ptr(parts),
                                        (float *)lang_tensor_ptr(dw))
                  : backward_weight_f64(lang_tensor_pool(vm), &g, (const double *)lang_tensor_ptr(d),
                                        (const double *)lang_tensor_ptr(x), (double *)lang_tensor_ptr(parts),
                                        (double *)lang_tensor_ptr(dw));
    if (!ok) return no_memory(vm, "_conv2d_backward_weight");
  }
  LANG_KEEP(d);
  LANG_KEEP(x);
  LANG_KEEP(parts);
  return fit(vm, dw, w0, out);
}

/* ---- max pooling ---- */

typedef struct PoolG {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, ho, wo;
} PoolG;

/* (x, kernel, stride=None, padding=0) as max_pool2d takes them; x comes
 * back 4-d and contiguous, with the argmax of every window. */
static bool pool_args(MistVM *vm, const char *fname, Value xv, Value kv, Value sv, Value pv,
                      ObjTensor **x, PoolG *g, int64_t **argmax) {
  int64_t k[2] = {1, 1}, st[2] = {1, 1}, pd[2] = {0, 0};
  if (!float_tensor(vm, fname, xv, x) || !pair_arg(vm, fname, "kernel", kv, k) ||
      (given_nn(sv) && !pair_arg(vm, fname, "stride", sv, st)) ||
      (given_nn(pv) && !pair_arg(vm, fname, "padding", pv, pd)))
    return false;
  if (!given_nn(sv)) {
    st[0] = k[0];
    st[1] = k[1];
  }
  if (!as_nchw(vm, fname, "input", *x, (*x)->dtype, x)) return false;
  if (k[0] < 1 || k[1] < 1 || st[0] < 1 || st[1] < 1 || pd[0] < 0 || pd[1] < 0 ||
      pd[0] > k[0] / 2 || pd[1] > k[1] / 2)
    return lang_raise(vm, "ValueError", "%s: bad kernel, stride or padding", fname);
  *g = (PoolG){(*x)->shape[0], (*x)->shape[1], (*x)->shape[2], (*x)->shape[3], k[0], k[1], st[0],
               st[1], pd[0], pd[1], 0, 0};
  g->ho = dev_conv_out_size(g->h, g->kh, g->sh, g->ph);
  g->wo = dev_conv_out_size(g->w, g->kw, g->sw, g->pw);
  if (g->ho < 1 || g->wo < 1)
    return lang_raise(vm, "ValueError", "%s: the kernel does not fit an input of shape %s", fname,
                      std_shape_str(*x));
  int64_t shape[4] = {g->n, g->c, g->ho, g->wo};
  ObjTensor *m = lang_tensor_new(vm, (*x)->dtype, 4, shape, false);
  if (!m) return false;
  int64_t cells = g->n * g->c * g->ho * g->wo;
  *argmax = lang_alloc_atomic((size_t)(cells ? cells : 1) * sizeof **argmax);
  if (cells > 0) {
    if ((*x)->dtype == DT_F32)
      dev_maxpool2d_f32(lang_tensor_pool(vm), (const float *)lang_tensor_ptr(*x), g->n, g->c, g->h,
                        g->w, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, (float *)lang_tensor_ptr(m),
                        *argmax);
    else
      dev_maxpool2d_f64(lang_tensor_pool(vm), (const double *)lang_tensor_ptr(*x), g->n, g->c,
                        g->h, g->w, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw,
                        (double *)lang_tensor_ptr(m), *argmax);
  }
  LANG_KEEP(*x);
  LANG_KEEP(m);
  return true;
}

/* dx[plane][argmax] += d[plane][cell] for planes [p0, p1) */
typedef struct PoolScatter {
  const PoolG *g;
  const int64_t *am;
  const void *d;
  void *dx;
  DType dt;
} PoolScatter;

static void pool_scatter(void *ctx, int64_t p0, int64_t p1) {
  const PoolScatter *ps = ctx;
  const PoolG *g = ps->g;
  int64_t cells = g->ho * g->wo, plane = g->h * g->w;
  for (int64_t p = p0; p < p1; p++) {
    const int64_t *am = ps->am + p * cells;
    if (ps->dt == DT_F32) {
      const float *d = (const float *)ps->d + p * cells;
      float *x = (float *)ps->dx + p * plane;
      for (int64_t i = 0; i < cells; i++)
        if (am[i] >= 0) x[am[i]] += d[i];
    } else {
      const double *d = (const double *)ps->d + p * cells;
      double *x = (double *)ps->dx + p * plane;
      for (int64_t i = 0; i < cells; i++)
        if (am[i] >= 0) x[am[i]] += d[i];
    }
  }
}

/* _max_pool2d_backward(d, x, kernel, stride=None, padding=0): each
 * window's sensitivity goes to the element that won it */
OP_EVAL(std_max_pool2d_backward) {
  static const char *const names[] = {"d", "x", "kernel", "stride", "padding"};
  Value a[5];
  ObjTensor *x, *d, *x0;
  PoolG g;
  int64_t *am;
  if (!std_tensor_parse(vm, "_max_pool2d_backward", argc, argv, kw, names, 5, 5, 3, a) ||
      !float_tensor(vm, "_max_pool2d_backward", a[1], &x0) ||
      !pool_args(vm, "_max_pool2d_backward", a[1], a[2], a[3], a[4], &x, &g, &am) ||
      !float_tensor(vm, "_max_pool2d_backward", a[0], &d))
    return false;
  /* windows that do not overlap send each element at most one value, so
   * f32 gives what f64 would; overlapping ones add in f64 */
  bool disjoint = g.sh >= g.kh && g.sw >= g.kw;
  DType dt = disjoint && d->dtype == DT_F32 && x->dtype == DT_F32 ? DT_F32 : DT_F64;
  if (d->ndim != x0->ndim || !as_nchw(vm, "_max_pool2d_backward", "sensitivity", d, dt, &d) ||
      d->shape[0] != g.n || d->shape[1] != g.c || d->shape[2] != g.ho || d->shape[3] != g.wo)
    return lang_raise(vm, "ValueError", "_max_pool2d_backward: a sensitivity of shape %s does not match the pooling of shape %s",
                      std_shape_str(AS_TENSOR(a[0])), std_shape_str(x0));
  ObjTensor *dx = lang_tensor_new(vm, dt, 4, x->shape, true);
  if (!dx) return false;
  PoolScatter ps = {&g, am, lang_tensor_ptr(d), lang_tensor_ptr(dx), dt};
  int64_t cells = g.ho * g.wo;
  dev_parallel_for(lang_tensor_pool(vm), g.n * g.c, ((int64_t)1 << 14) / (cells ? cells : 1) + 1,
                   pool_scatter, &ps);
  LANG_KEEP(d);
  return fit(vm, dx, x0, out);
}

/* _max_pool2d_select(x, v, kernel, stride=None, padding=0): v (of x's
 * shape) read at the element that wins each window of x */
OP_EVAL(std_max_pool2d_select) {
  static const char *const names[] = {"x", "v", "kernel", "stride", "padding"};
  Value a[5];
  ObjTensor *x, *v, *x0;
  PoolG g;
  int64_t *am;
  if (!std_tensor_parse(vm, "_max_pool2d_select", argc, argv, kw, names, 5, 5, 3, a) ||
      !float_tensor(vm, "_max_pool2d_select", a[0], &x0) ||
      !pool_args(vm, "_max_pool2d_select", a[0], a[2], a[3], a[4], &x, &g, &am) ||
      !float_tensor(vm, "_max_pool2d_select", a[1], &v))
    return false;
  DType dt = v->dtype;
  if (v->ndim != x0->ndim || memcmp(v->shape, x0->shape, (size_t)v->ndim * sizeof(int64_t)) != 0)
    return lang_raise(vm, "ValueError", "_max_pool2d_select: shapes %s and %s differ", std_shape_str(v),
                      std_shape_str(x0));
  if (!as_nchw(vm, "_max_pool2d_select", "values", v, DT_F64, &v)) return false;
  int64_t shape[4] = {g.n, g.c, g.ho, g.wo};
  ObjTensor *r = lang_tensor_new(vm, DT_F64, 4, shape, true);
  if (!r) return false;
  const double *vp = (const double *)lang_tensor_ptr(v);
  double *rp = (double *)lang_tensor_ptr(r);
  int64_t planes = g.n * g.c, cells = g.ho * g.wo;
  for (int64_t p = 0; p < planes; p++)
    for (int64_t i = 0; i < cells; i++) {
      int64_t k = am[p * cells + i];
      if (k >= 0) rp[p * cells + i] = vp[p * g.h * g.w + k];
    }
  LANG_KEEP(v);
  if (!lang_tensor_astype(vm, r, dt, &r)) return false;
  if (x0->ndim == 3 && !lang_tensor_reshape(vm, r, 3, shape + 1, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* _sens_whole(d): a sensitivity made of parts made whole (ir_sens_dense), for
 * the Mist definitions of the sensitivity primitives, which compute with
 * it */
OP_EVAL(std_sens_whole) {
  if (argc != 1) return lang_raise(vm, "TypeError", "_sens_whole takes 1 argument (%d given)", argc);
  return ir_sens_dense(vm, argv[0], out);
}

/* ---- IEEE arithmetic for derivatives ---- */

static bool as_double(Value v, double *d) {
  if (v.tag == V_FLOAT) *d = v.f;
  else if (v.tag == V_INT) *d = (double)v.i;
  else if (v.tag == V_BOOL) *d = v.b;
  else return false;
  return true;
}

/* _fdiv(a, b) */
OP_EVAL(std_fdiv) {
  double a, b;
  if (argc != 2) return lang_raise(vm, "TypeError", "_fdiv takes 2 arguments (%d given)", argc);
  if (as_double(argv[0], &a) && as_double(argv[1], &b)) {
    *out = v_float(a / b);
    return true;
  }
  return lang_arith(vm, OP_TRUEDIV, argv[0], argv[1], out);
}

/* _fpow(a, b): C's pow, the same bits as ** where ** gives a float */
OP_EVAL(std_fpow) {
  double a, b;
  if (argc != 2) return lang_raise(vm, "TypeError", "_fpow takes 2 arguments (%d given)", argc);
  if (as_double(argv[0], &a) && as_double(argv[1], &b)) {
    *out = v_float(pow(a, b));
    return true;
  }
  return lang_arith(vm, OP_POW, argv[0], argv[1], out);
}
