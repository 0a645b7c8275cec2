/* tensor_nn.c: the tensor builtins that combine tensors or compute the
 * layers of neural networks: matmul, concat, stack, the numerically
 * stable softmax, log_softmax and logsumexp (the maximum is subtracted
 * first, so large inputs do not overflow), one_hot, conv2d and
 * max_pool2d (NCHW, through devices/cpu/conv.h), and allclose.
 *
 * The softmax family is composed from the engines of lang/tensor_ops.c
 * (a reduction, an elementwise chain), as the reference their compiled
 * forms are checked against; conv2d and max_pool2d call the device
 * kernels on contiguous copies of their inputs.
 */
#include <math.h>
#include <string.h>

#include "devices/cpu/conv.h"
#include "lang/gc.h"
#include "lang/tensor_impl.h"
#include "stdlib/builtins.h"
#include "stdlib/ops.h"
#include "stdlib/tensor.h"

#define BUILTIN(name) \
  static bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

static bool given(Value v) { return v.tag != V_UNBOUND; }
static bool given_nn(Value v) { return v.tag != V_UNBOUND && v.tag != V_NONE; }

/* An int, or a pair of ints (h, w). */
static bool pair_arg(MistVM *vm, const char *fname, const char *what, Value v, int64_t out[2]) {
  if (v.tag == V_INT || v.tag == V_BOOL) {
    out[0] = out[1] = v.tag == V_INT ? v.i : v.b;
    return true;
  }
  if ((v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) && AS_SEQ(v)->len == 2) {
    bool ok = true;
    for (int i = 0; i < 2; i++) {
      Value x = AS_SEQ(v)->items[i];
      if (x.tag == V_INT) out[i] = x.i;
      else ok = false;
    }
    if (ok) return true;
  }
  return lang_raise(vm, "TypeError", "%s: %s must be an int or a pair of ints, not %s", fname,
                    what, lang_type_name(v));
}

/* matmul(a, b): the @ operator */
OP_EVAL(std_matmul) {
  static const char *const names[] = {"a", "b"};
  Value a[2];
  ObjTensor *x, *y, *r;
  if (!std_tensor_parse(vm, "matmul", argc, argv, kw, names, 2, 2, 2, a) ||
      !std_tensor_arg(vm, "matmul", a[0], &x) || !std_tensor_arg(vm, "matmul", a[1], &y) ||
      !lang_tensor_matmul(vm, x, y, &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* The items of a list or tuple of tensors, and their common dtype. */
static bool tensor_list(MistVM *vm, const char *fname, Value v, ObjTensor ***items, size_t *n,
                        DType *dt) {
  if (!v_is_obj(v, O_LIST) && !v_is_obj(v, O_TUPLE))
    return lang_raise(vm, "TypeError", "%s: expected a list or tuple of tensors, not %s", fname,
                      lang_type_name(v));
  ObjSeq *s = AS_SEQ(v);
  if (s->len == 0) return lang_raise(vm, "ValueError", "%s: needs at least one tensor", fname);
  *items = lang_alloc(s->len * sizeof **items);
  for (size_t i = 0; i < s->len; i++) {
    if (!std_tensor_arg(vm, fname, s->items[i], &(*items)[i])) return false;
    *dt = i == 0 ? (*items)[i]->dtype : lang_dtype_promote(*dt, (*items)[i]->dtype);
  }
  *n = s->len;
  return true;
}

static bool concat_items(MistVM *vm, const char *fname, ObjTensor **ts, size_t n, DType dt,
                         int64_t axis, ObjTensor **out) {
  int nd = ts[0]->ndim, ax;
  if (nd == 0)
    return lang_raise(vm, "ValueError", "%s: 0-d tensors cannot be concatenated", fname);
  if (!lang_tensor_axis(vm, axis, nd, &ax)) return false;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  memcpy(shape, ts[0]->shape, (size_t)nd * sizeof *shape);
  shape[ax] = 0;
  for (size_t i = 0; i < n; i++) {
    const ObjTensor *t = ts[i];
    bool ok = t->ndim == nd;
    for (int d = 0; ok && d < nd; d++)
      if (d != ax && t->shape[d] != ts[0]->shape[d]) ok = false;
    if (!ok)
      return lang_raise(vm, "ValueError", "%s: shapes %s and %s do not match outside axis %d",
                        fname, std_shape_str(ts[0]), std_shape_str(t), ax);
    shape[ax] += t->shape[ax];
  }
  ObjTensor *r = lang_tensor_new(vm, dt, nd, shape, false);
  if (!r) return false;
  int64_t off = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t sh[LANG_TENSOR_MAX_DIMS];
    memcpy(sh, shape, (size_t)nd * sizeof *sh);
    sh[ax] = ts[i]->shape[ax];
    ObjTensor *dst = lang_tensor_view(r, nd, sh, r->strides, off * r->strides[ax]);
    if (!lang_tensor_copy_into(vm, fname, dst, ts[i])) return false;
    off += sh[ax];
  }
  *out = r;
  return true;
}

/* concat(tensors, axis=0) */
OP_EVAL(std_concat) {
  static const char *const names[] = {"tensors", "axis"};
  Value a[2];
  ObjTensor **ts, *r;
  size_t n;
  DType dt;
  int64_t axis = 0;
  if (!std_tensor_parse(vm, "concat", argc, argv, kw, names, 2, 2, 1, a) ||
      !tensor_list(vm, "concat", a[0], &ts, &n, &dt))
    return false;
  if (given(a[1])) {
    if (a[1].tag != V_INT)
      return lang_raise(vm, "TypeError", "concat: axis must be an int, not %s", lang_type_name(a[1]));
    axis = a[1].i;
  }
  if (!concat_items(vm, "concat", ts, n, dt, axis, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* stack(tensors, axis=0): along a new axis */
OP_EVAL(std_stack) {
  static const char *const names[] = {"tensors", "axis"};
  Value a[2];
  ObjTensor **ts, *r;
  size_t n;
  DType dt;
  int64_t axis = 0;
  int ax;
  if (!std_tensor_parse(vm, "stack", argc, argv, kw, names, 2, 2, 1, a) ||
      !tensor_list(vm, "stack", a[0], &ts, &n, &dt))
    return false;
  if (given(a[1])) {
    if (a[1].tag != V_INT)
      return lang_raise(vm, "TypeError", "stack: axis must be an int, not %s", lang_type_name(a[1]));
    axis = a[1].i;
  }
  int nd = ts[0]->ndim;
  if (nd + 1 > LANG_TENSOR_MAX_DIMS) return lang_raise(vm, "ValueError", "stack: too many dimensions");
  if (!lang_tensor_axis(vm, axis, nd + 1, &ax)) return false;
  ObjTensor *first = ts[0];
  for (size_t i = 0; i < n; i++) {
    ObjTensor *t = ts[i];
    bool same = t->ndim == nd;
    for (int d = 0; same && d < nd; d++) same = t->shape[d] == first->shape[d];
    if (!same)
      return lang_raise(vm, "ValueError", "stack: all tensors must have one shape, not %s and %s",
                        std_shape_str(first), std_shape_str(t));
    int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS];
    for (int d = 0, o = 0; d <= nd; d++) {
      if (d == ax) {
        sh[d] = 1;
        st[d] = 0;
      } else {
        sh[d] = t->shape[o];
        st[d] = t->strides[o];
        o++;
      }
    }
    ts[i] = lang_tensor_view(t, nd + 1, sh, st, t->offset);
  }
  if (!concat_items(vm, "stack", ts, n, dt, ax, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* ---- softmax and friends ---- */

/* The tensor argument as floats, and the axes. */
static bool float_arg(MistVM *vm, const char *fname, Value v, ObjTensor **out) {
  ObjTensor *t;
  if (!std_tensor_arg(vm, fname, v, &t)) return false;
  if (!lang_dtype_is_float(t->dtype)) return lang_tensor_astype(vm, t, DT_F32, out);
  *out = t;
  return true;
}

/* max of x over axes (kept), with non-finite entries replaced by 0: the
 * shift that makes exp(x - m) safe */
static bool safe_max(MistVM *vm, ObjTensor *x, uint64_t axes, ObjTensor **out) {
  ObjTensor *m;
  if (!lang_tensor_reduce(vm, TR_MAX, x, axes, true, &m)) return false;
  /* m is fresh: no program has seen it yet */
  char *p = lang_tensor_ptr(m);
  for (int64_t i = 0; i < m->size; i++) {
    if (m->dtype == DT_F32) {
      float *f = (float *)p + i;
      if (!isfinite(*f)) *f = 0;
    } else {
      double *f = (double *)p + i;
      if (!isfinite(*f)) *f = 0;
    }
  }
  *out = m;
  return true;
}

/* log(sum(exp(x - m), axes)) + m, kept dims */
static bool lse_kept(MistVM *vm, ObjTensor *x, uint64_t axes, ObjTensor **out) {
  ObjTensor *m, *e, *s, *l;
  Value d, r;
  if (!safe_max(vm, x, axes, &m) || !lang_tensor_binary(vm, TB_SUB, v_obj(x), v_obj(m), &d) ||
      !lang_tensor_unary(vm, TU_EXP, AS_TENSOR(d), &e) ||
      !lang_tensor_reduce(vm, TR_SUM, e, axes, true, &s) || !lang_tensor_unary(vm, TU_LOG, s, &l) ||
      !lang_tensor_binary(vm, TB_ADD, v_obj(l), v_obj(m), &r))
    return false;
  *out = AS_TENSOR(r);
  return true;
}

static bool softmax_args(MistVM *vm, const char *fname, int argc, const Value *argv,
                         const KwArgs *kw, ObjTensor **x, uint64_t *axes, bool *keep) {
  static const char *const names[] = {"x", "axis", "keepdims"};
  Value a[3];
  bool with_keep = keep != NULL;   /* logsumexp's keepdims */
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, with_keep ? 3 : 2, with_keep ? 3 : 2, 1, a) ||
      !float_arg(vm, fname, a[0], x))
    return false;
  Value axis = given(a[1]) ? a[1] : v_int(-1);
  if ((*x)->ndim == 0 && axis.tag == V_INT && axis.i == -1) axis = v_none();
  if (!std_axes_arg(vm, fname, axis, (*x)->ndim, true, axes)) return false;
  if (with_keep && !std_bool_arg(vm, a[2], false, keep)) return false;
  return true;
}

/* softmax(x, axis=-1) */
OP_EVAL(std_softmax) {
  ObjTensor *x, *m, *e, *s;
  uint64_t axes;
  Value d;
  if (!softmax_args(vm, "softmax", argc, argv, kw, &x, &axes, NULL) ||
      !safe_max(vm, x, axes, &m) || !lang_tensor_binary(vm, TB_SUB, v_obj(x), v_obj(m), &d) ||
      !lang_tensor_unary(vm, TU_EXP, AS_TENSOR(d), &e) ||
      !lang_tensor_reduce(vm, TR_SUM, e, axes, true, &s))
    return false;
  return lang_tensor_binary(vm, TB_TRUEDIV, v_obj(e), v_obj(s), out);
}

/* log_softmax(x, axis=-1) */
OP_EVAL(std_log_softmax) {
  ObjTensor *x, *l;
  uint64_t axes;
  if (!softmax_args(vm, "log_softmax", argc, argv, kw, &x, &axes, NULL) || !lse_kept(vm, x, axes, &l))
    return false;
  return lang_tensor_binary(vm, TB_SUB, v_obj(x), v_obj(l), out);
}

/* logsumexp(x, axis=-1, keepdims=False) */
OP_EVAL(std_logsumexp) {
  ObjTensor *x, *l;
  uint64_t axes;
  bool keep = false;
  if (!softmax_args(vm, "logsumexp", argc, argv, kw, &x, &axes, &keep) || !lse_kept(vm, x, axes, &l))
    return false;
  if (!keep) {
    int64_t sh[LANG_TENSOR_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++)
      if (!(axes >> d & 1)) sh[nd++] = x->shape[d];
    if (!lang_tensor_reshape(vm, l, nd, sh, &l)) return false;
  }
  *out = v_obj(l);
  return true;
}

/* one_hot(indices, n, dtype="f32"): shape indices.shape + (n,) */
OP_EVAL(std_one_hot) {
  static const char *const names[] = {"indices", "n", "dtype"};
  Value a[3];
  ObjTensor *ix;
  int dt;
  if (!std_tensor_parse(vm, "one_hot", argc, argv, kw, names, 3, 3, 2, a) ||
      !std_tensor_arg(vm, "one_hot", a[0], &ix) || !std_dtype_arg(vm, "one_hot", a[2], DT_F32, &dt))
    return false;
  if (a[1].tag != V_INT)
    return lang_raise(vm, "TypeError", "one_hot: n must be an int, not %s", lang_type_name(a[1]));
  int64_t n = a[1].i;
  if (n < 0) return lang_raise(vm, "ValueError", "one_hot: n must be >= 0, not %lld", (long long)n);
  if (ix->dtype != DT_I32 && ix->dtype != DT_I64)
    return lang_raise(vm, "TypeError", "one_hot: indices must be integers, not %s",
                      dev_dtype_name(ix->dtype));
  if (ix->ndim + 1 > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "ValueError", "one_hot: too many dimensions");
  if (!lang_tensor_astype(vm, ix, DT_I64, &ix)) return false;
  ix = lang_tensor_contiguous(vm, ix);
  if (!ix) return false;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  memcpy(shape, ix->shape, (size_t)ix->ndim * sizeof *shape);
  shape[ix->ndim] = n;
  ObjTensor *r = lang_tensor_new(vm, (DType)dt, ix->ndim + 1, shape, true);
  if (!r) return false;
  const int64_t *p = (const int64_t *)lang_tensor_ptr(ix);
  size_t es = dev_dtype_size((DType)dt);
  for (int64_t i = 0; i < ix->size; i++) {
    if (p[i] < 0 || p[i] >= n)
      return lang_raise(vm, "ValueError", "one_hot: index %lld is out of range for %lld class%s",
                        (long long)p[i], (long long)n, n == 1 ? "" : "es");
    lang_tensor_store(vm, (DType)dt, lang_tensor_ptr(r) + (size_t)(i * n + p[i]) * es, v_int(1));
  }
  LANG_KEEP(ix);
  *out = v_obj(r);
  return true;
}

/* ---- convolution and pooling ---- */

/* x as a contiguous 4-d float tensor of dtype dt (a 3-d x gets a batch of 1). */
static bool nchw(MistVM *vm, const char *fname, ObjTensor *x, DType dt, ObjTensor **out) {
  if (x->ndim != 4 && x->ndim != 3)
    return lang_raise(vm, "ValueError", "%s: input must be 4-d (N, C, H, W) or 3-d (C, H, W), not of shape %s",
                      fname, std_shape_str(x));
  if (!lang_tensor_astype(vm, x, dt, &x)) return false;
  if (x->ndim == 3) {
    int64_t sh[4] = {1, x->shape[0], x->shape[1], x->shape[2]};
    if (!lang_tensor_reshape(vm, x, 4, sh, &x)) return false;
  }
  *out = lang_tensor_contiguous(vm, x);
  return *out != NULL;
}

static bool float_dtype(MistVM *vm, const char *fname, const ObjTensor *t) {
  if (!lang_dtype_is_float(t->dtype))
    return lang_raise(vm, "TypeError", "%s: expected f32 or f64 tensors, not %s", fname,
                      dev_dtype_name(t->dtype));
  return true;
}

/* conv2d(x, w, bias=None, stride=1, padding=0): x (N, Cin, H, W),
 * w (Cout, Cin, kh, kw), bias (Cout,) */
OP_EVAL(std_conv2d) {
  static const char *const names[] = {"x", "w", "bias", "stride", "padding"};
  Value a[5];
  ObjTensor *x, *w, *b = NULL;
  int64_t st[2] = {1, 1}, pd[2] = {0, 0};
  if (!std_tensor_parse(vm, "conv2d", argc, argv, kw, names, 5, 5, 2, a) ||
      !std_tensor_arg(vm, "conv2d", a[0], &x) || !std_tensor_arg(vm, "conv2d", a[1], &w) ||
      (given_nn(a[2]) && !std_tensor_arg(vm, "conv2d", a[2], &b)) ||
      (given(a[3]) && !pair_arg(vm, "conv2d", "stride", a[3], st)) ||
      (given(a[4]) && !pair_arg(vm, "conv2d", "padding", a[4], pd)) ||
      !float_dtype(vm, "conv2d", x) || !float_dtype(vm, "conv2d", w) ||
      (b && !float_dtype(vm, "conv2d", b)))
    return false;
  bool batched = x->ndim == 4;
  DType dt = lang_dtype_promote(x->dtype, w->dtype);
  if (b) dt = lang_dtype_promote(dt, b->dtype);
  if (w->ndim != 4)
    return lang_raise(vm, "ValueError", "conv2d: weight must be 4-d (Cout, Cin, kh, kw), not of shape %s",
                      std_shape_str(w));
  if (!nchw(vm, "conv2d", x, dt, &x)) return false;
  if (x->shape[1] != w->shape[1])
    return lang_raise(vm, "ValueError",
                      "conv2d: input of shape %s has %lld channels but weight of shape %s expects %lld",
                      std_shape_str(x), (long long)x->shape[1], std_shape_str(w), (long long)w->shape[1]);
  if (st[0] < 1 || st[1] < 1 || pd[0] < 0 || pd[1] < 0)
    return lang_raise(vm, "ValueError", "conv2d: stride must be >= 1 and padding >= 0");
  if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return lang_raise(vm, "ValueError", "conv2d: bias of shape %s does not match weight of shape %s",
                      std_shape_str(b), std_shape_str(w));
  int64_t n = x->shape[0], cin = x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t cout = w->shape[0], kh = w->shape[2], kw_ = w->shape[3];
  int64_t ho = dev_conv_out_size(h, kh, st[0], pd[0]), wo = dev_conv_out_size(wd, kw_, st[1], pd[1]);
  if (kh < 1 || kw_ < 1 || ho < 1 || wo < 1)
    return lang_raise(vm, "ValueError",
                      "conv2d: a kernel of shape %s does not fit an input of shape %s (padding %lld, %lld)",
                      std_shape_str(w), std_shape_str(x), (long long)pd[0], (long long)pd[1]);
  if (!lang_tensor_astype(vm, w, dt, &w) || !(w = lang_tensor_contiguous(vm, w))) return false;
  if (b && (!lang_tensor_astype(vm, b, dt, &b) || !(b = lang_tensor_contiguous(vm, b)))) return false;
  int64_t shape[4] = {n, cout, ho, wo};
  ObjTensor *r = lang_tensor_new(vm, dt, 4, shape, false);
  if (!r) return false;
  if (r->size > 0) {
    if (dt == DT_F32)
      dev_conv2d_f32(lang_tensor_pool(vm), (const float *)lang_tensor_ptr(x), n, cin, h, wd,
                     (const float *)lang_tensor_ptr(w), cout, kh, kw_,
                     b ? (const float *)lang_tensor_ptr(b) : NULL, st[0], st[1], pd[0], pd[1],
                     (float *)lang_tensor_ptr(r));
    else
      dev_conv2d_f64(lang_tensor_pool(vm), (const double *)lang_tensor_ptr(x), n, cin, h, wd,
                     (const double *)lang_tensor_ptr(w), cout, kh, kw_,
                     b ? (const double *)lang_tensor_ptr(b) : NULL, st[0], st[1], pd[0], pd[1],
                     (double *)lang_tensor_ptr(r));
  }
  LANG_KEEP(x);
  LANG_KEEP(w);
  LANG_KEEP(b);
  if (!batched) {
    ObjTensor *u;
    if (!lang_tensor_reshape(vm, r, 3, shape + 1, &u)) return false;
    r = u;
  }
  *out = v_obj(r);
  return true;
}

/* max_pool2d(x, kernel, stride=None, padding=0): stride defaults to the kernel */
OP_EVAL(std_max_pool2d) {
  static const char *const names[] = {"x", "kernel", "stride", "padding"};
  Value a[4];
  ObjTensor *x;
  int64_t k[2], st[2], pd[2] = {0, 0};
  if (!std_tensor_parse(vm, "max_pool2d", argc, argv, kw, names, 4, 4, 2, a) ||
      !std_tensor_arg(vm, "max_pool2d", a[0], &x) ||
      !pair_arg(vm, "max_pool2d", "kernel", a[1], k) ||
      (given_nn(a[2]) && !pair_arg(vm, "max_pool2d", "stride", a[2], st)) ||
      (given(a[3]) && !pair_arg(vm, "max_pool2d", "padding", a[3], pd)) ||
      !float_dtype(vm, "max_pool2d", x))
    return false;
  if (!given_nn(a[2])) {
    st[0] = k[0];
    st[1] = k[1];
  }
  bool batched = x->ndim == 4;
  if (!nchw(vm, "max_pool2d", x, x->dtype, &x)) return false;
  if (k[0] < 1 || k[1] < 1 || st[0] < 1 || st[1] < 1)
    return lang_raise(vm, "ValueError", "max_pool2d: kernel and stride must be >= 1");
  if (pd[0] < 0 || pd[1] < 0 || pd[0] > k[0] / 2 || pd[1] > k[1] / 2)
    return lang_raise(vm, "ValueError", "max_pool2d: padding must be between 0 and half the kernel size");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  int64_t ho = dev_conv_out_size(h, k[0], st[0], pd[0]), wo = dev_conv_out_size(w, k[1], st[1], pd[1]);
  if (ho < 1 || wo < 1)
    return lang_raise(vm, "ValueError", "max_pool2d: a kernel of (%lld, %lld) does not fit an input of shape %s",
                      (long long)k[0], (long long)k[1], std_shape_str(x));
  int64_t shape[4] = {n, c, ho, wo};
  ObjTensor *r = lang_tensor_new(vm, x->dtype, 4, shape, false);
  if (!r) return false;
  if (r->size > 0) {
    if (x->dtype == DT_F32)
      dev_maxpool2d_f32(lang_tensor_pool(vm), (const float *)lang_tensor_ptr(x), n, c, h, w, k[0],
                        k[1], st[0], st[1], pd[0], pd[1], (float *)lang_tensor_ptr(r), NULL);
    else
      dev_maxpool2d_f64(lang_tensor_pool(vm), (const double *)lang_tensor_ptr(x), n, c, h, w, k[0],
                        k[1], st[0], st[1], pd[0], pd[1], (double *)lang_tensor_ptr(r), NULL);
  }
  LANG_KEEP(x);
  if (!batched) {
    ObjTensor *u;
    if (!lang_tensor_reshape(vm, r, 3, shape + 1, &u)) return false;
    r = u;
  }
  *out = v_obj(r);
  return true;
}

/* ---- allclose ---- */

typedef struct CloseCtx {
  double rtol, atol;
  bool equal_nan;
  bool far;       /* set by any row: some pair is not close */
} CloseCtx;

static void close_row(void *vctx, char *const *p, const int64_t *s, int64_t n) {
  CloseCtx *c = vctx;
  for (int64_t i = 0; i < n; i++) {
    double x = *(const double *)(p[0] + i * s[0]), y = *(const double *)(p[1] + i * s[1]);
    bool ok;
    if (isnan(x) || isnan(y)) ok = c->equal_nan && isnan(x) && isnan(y);
    else if (isinf(x) || isinf(y)) ok = x == y;
    else ok = fabs(x - y) <= c->atol + c->rtol * fabs(y);
    if (!ok) c->far = true;
  }
}

/* allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
 * |a - b| <= atol + rtol * |b| everywhere, broadcasting */
OP_EVAL(std_allclose) {
  static const char *const names[] = {"a", "b", "rtol", "atol", "equal_nan"};
  Value a[5];
  ObjTensor *x, *y;
  CloseCtx c = {1e-5, 1e-8, false, false};
  if (!std_tensor_parse(vm, "allclose", argc, argv, kw, names, 5, 5, 2, a) ||
      !std_tensor_arg(vm, "allclose", a[0], &x) || !std_tensor_arg(vm, "allclose", a[1], &y) ||
      !std_bool_arg(vm, a[4], false, &c.equal_nan))
    return false;
  for (int i = 2; i < 4; i++) {
    if (!given(a[i])) continue;
    Value v = a[i];
    double d = v.tag == V_FLOAT ? v.f : v.tag == V_INT ? (double)v.i : NAN;
    if (isnan(d))
      return lang_raise(vm, "TypeError", "allclose: %s must be a number", names[i]);
    if (i == 2) c.rtol = d;
    else c.atol = d;
  }
  int nd;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  if (!lang_broadcast_shapes(vm, "allclose", x->ndim, x->shape, y->ndim, y->shape, &nd, shape) ||
      !lang_tensor_astype(vm, x, DT_F64, &x) || !lang_tensor_astype(vm, y, DT_F64, &y))
    return false;
  LangNdLoop l;
  lang_nd_init(&l, 2, nd, shape);
  lang_nd_operand(&l, 0, x);
  lang_nd_operand(&l, 1, y);
  lang_nd_run(NULL, &l, close_row, &c);
  LANG_KEEP(x);
  LANG_KEEP(y);
  *out = v_bool(!c.far);
  return true;
}
