/* tensor.c: the tensor builtins of docs/reference.md section 5 that make,
 * reshape, convert and reduce tensors, the random functions, the
 * properties (t.shape, t.dtype, t.T, t.ndim, t.size, t.device), and
 * the math functions that work on floats and tensors alike (exp, log,
 * sqrt, sin, cos, tanh, sigmoid, relu, maximum, minimum, where, clip).
 * The neural-network ones (concat, stack, softmax, conv2d...) are in
 * tensor_nn.c.
 *
 * Each builtin is a thin layer over lang/tensor.h: it parses and checks
 * its arguments (by position or keyword, as NumPy names them), turns
 * lists and numbers into tensors where a tensor is expected, and words
 * its errors with its own name.  Every method-like builtin is reached
 * as t.f(...) too, since x.f(args) calls the builtin f(x, args).  On
 * plain floats the math functions follow Python's math module (a
 * ValueError "math domain error" for log(0.0)); on tensors they follow
 * NumPy (inf, nan, no error).
 */
#include "stdlib/tensor.h"

#include <math.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/tensor_impl.h"
#include "stdlib/builtins.h"
#include "stdlib/ops.h"

#define BUILTIN(name) \
  static bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
#define NNAMES(names) ((int)(sizeof names / sizeof names[0]))

static bool given(Value v) { return v.tag != V_UNBOUND; }
static bool given_nn(Value v) { return v.tag != V_UNBOUND && v.tag != V_NONE; }
static bool is_number(Value v) { return v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL; }
static bool is_seq(Value v) { return v_is_obj(v, O_LIST) || v_is_obj(v, O_TUPLE); }

/* ---- shared helpers ---- */

bool std_tensor_parse(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw,
                      const char *const *names, int nnames, int npos, int nreq, Value *slots) {
  return std_parse_args(vm, fname, ARGS_CLINIC_NOPOS, argc, argv, kw, names, nnames, npos, nreq,
                        true, slots);
}

const char *std_shape_str(const ObjTensor *t) {
  StrBuf sb;
  sb_init(&sb);
  lang_shape_repr(t->ndim, t->shape, &sb);
  return sb.data;
}

bool std_tensor_arg(MistVM *vm, const char *fname, Value v, ObjTensor **out) {
  if (v_is_tensor(v)) {
    *out = AS_TENSOR(v);
    return true;
  }
  if (is_number(v) || is_seq(v)) return lang_tensor_from_value(vm, fname, v, -1, out);
  return lang_raise(vm, "TypeError", "%s: expected a tensor, not %s", fname, lang_type_name(v));
}

static bool int_arg(MistVM *vm, const char *fname, const char *what, Value v, int64_t *out) {
  if (v_is_tensor(v) && AS_TENSOR(v)->ndim == 0 && !lang_dtype_is_float(AS_TENSOR(v)->dtype))
    v = lang_tensor_load(AS_TENSOR(v)->dtype, lang_tensor_ptr(AS_TENSOR(v)));
  if (v.tag == V_INT) {
    *out = v.i;
    return true;
  }
  if (v.tag == V_BOOL) {
    *out = v.b;
    return true;
  }
  return lang_raise(vm, "TypeError", "%s: %s must be an int, not %s", fname, what,
                    lang_type_name(v));
}

static bool num_arg(MistVM *vm, const char *fname, const char *what, Value v, double *out) {
  if (v_is_tensor(v) && AS_TENSOR(v)->size == 1)
    v = lang_tensor_load(AS_TENSOR(v)->dtype, lang_tensor_ptr(AS_TENSOR(v)));
  if (v.tag == V_FLOAT) *out = v.f;
  else if (v.tag == V_INT) *out = (double)v.i;
  else if (v.tag == V_BOOL) *out = v.b;
  else
    return lang_raise(vm, "TypeError", "%s: %s must be a number, not %s", fname, what,
                      lang_type_name(v));
  return true;
}

bool std_axes_arg(MistVM *vm, const char *fname, Value v, int ndim, bool many, uint64_t *mask) {
  if (!given_nn(v)) {
    *mask = ~(uint64_t)0;
    return true;
  }
  const Value *items = &v;
  size_t n = 1;
  if (is_seq(v)) {
    if (!many) return lang_raise(vm, "TypeError", "%s: axis must be an int, not a tuple", fname);
    items = AS_SEQ(v)->items;
    n = AS_SEQ(v)->len;
  }
  *mask = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t a;
    int ax;
    if (!int_arg(vm, fname, "axis", items[i], &a) || !lang_tensor_axis(vm, a, ndim, &ax))
      return false;
    if (*mask >> ax & 1) return lang_raise(vm, "ValueError", "%s: duplicate value in axis", fname);
    *mask |= (uint64_t)1 << ax;
  }
  return true;
}

bool std_dtype_arg(MistVM *vm, const char *fname, Value v, int dflt, int *out) {
  if (!given_nn(v)) {
    *out = dflt;
    return true;
  }
  DType dt;
  if (!lang_dtype_from_value(vm, fname, v, &dt)) return false;
  *out = (int)dt;
  return true;
}

bool std_bool_arg(MistVM *vm, Value v, bool dflt, bool *out) {
  if (!given(v)) {
    *out = dflt;
    return true;
  }
  return lang_truthy(vm, v, out);
}

static bool shape_arg(MistVM *vm, const char *fname, Value v, int *nd, int64_t *shape) {
  return lang_shape_from_value(vm, fname, v, false, nd, shape);
}

static DType dtype_of_number(Value v) {
  return v.tag == V_FLOAT ? DT_F32 : v.tag == V_INT ? DT_I64 : DT_BOOL;
}

/* ---- making tensors ---- */

/* tensor(data, dtype=None) */
OP_EVAL(std_tensor) {
  static const char *const names[] = {"data", "dtype"};
  Value a[2];
  int dt;
  ObjTensor *t;
  if (!std_tensor_parse(vm, "tensor", argc, argv, kw, names, 2, 2, 1, a) ||
      !std_dtype_arg(vm, "tensor", a[1], -1, &dt) ||
      !lang_tensor_from_value(vm, "tensor", a[0], dt, &t))
    return false;
  *out = v_obj(t);
  return true;
}

/* set_printoptions(precision=None, threshold=None, edgeitems=None,
 * linewidth=None, suppress=None): NumPy's options of those names, for
 * every tensor this VM prints from now on; those not given keep their
 * values.  Returns None. */
BUILTIN(bi_set_printoptions) {
  static const char *const names[] = {"precision", "threshold", "edgeitems", "linewidth", "suppress"};
  Value a[5];
  if (!std_tensor_parse(vm, "set_printoptions", argc, argv, kw, names, 5, 5, 0, a)) return false;
  LangPrintOptions o = vm->print_options;
  int64_t *ints[] = {&o.precision, &o.threshold, &o.edgeitems, &o.linewidth};
  for (int i = 0; i < 4; i++) {
    if (a[i].tag == V_UNBOUND || a[i].tag == V_NONE) continue;
    if (i == 1 && a[i].tag == V_FLOAT) {
      /* threshold=inf: never summarise (NumPy users write sys.maxsize) */
      if (isnan(a[i].f)) return lang_raise(vm, "ValueError", "threshold must be non-NAN, try inf for untruncated representation");
      *ints[i] = a[i].f >= (double)INT64_MAX ? INT64_MAX : (int64_t)a[i].f;
    } else if (a[i].tag == V_INT || a[i].tag == V_BOOL) {
      *ints[i] = a[i].tag == V_INT ? a[i].i : a[i].b;
    } else {
      return lang_raise(vm, "TypeError", "%s must be an integer", names[i]);
    }
    if (*ints[i] < 0) return lang_raise(vm, "ValueError", "%s must be >= 0", names[i]);
  }
  if (o.precision > 40) return lang_raise(vm, "ValueError", "precision must be at most 40");
  /* widths past any screen, kept where int arithmetic cannot overflow */
  if (o.linewidth > (1 << 30)) o.linewidth = 1 << 30;
  if (o.edgeitems > (1 << 30)) o.edgeitems = 1 << 30;
  if (a[4].tag != V_UNBOUND && a[4].tag != V_NONE && !lang_truthy(vm, a[4], &o.suppress)) return false;
  vm->print_options = o;
  *out = v_none();
  return true;
}

static bool filled(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw,
                   Value fillv, Value *out) {
  static const char *const names[] = {"shape", "dtype"};
  Value a[2];
  int nd, dt;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  ObjTensor *t;
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 2, 2, 1, a) ||
      !shape_arg(vm, fname, a[0], &nd, shape) || !std_dtype_arg(vm, fname, a[1], DT_F32, &dt) ||
      !lang_tensor_full(vm, (DType)dt, nd, shape, fillv, &t))
    return false;
  *out = v_obj(t);
  return true;
}

/* zeros(shape, dtype="f32"), ones(shape, dtype="f32") */
OP_EVAL(std_zeros) { return filled(vm, "zeros", argc, argv, kw, v_int(0), out); }
OP_EVAL(std_ones) { return filled(vm, "ones", argc, argv, kw, v_int(1), out); }

static bool fill_value(MistVM *vm, const char *fname, Value v, Value *out) {
  if (v_is_tensor(v) && AS_TENSOR(v)->ndim == 0)
    v = lang_tensor_load(AS_TENSOR(v)->dtype, lang_tensor_ptr(AS_TENSOR(v)));
  if (!is_number(v))
    return lang_raise(vm, "TypeError", "%s: the fill value must be a number or a bool, not %s",
                      fname, lang_type_name(v));
  *out = v;
  return true;
}

/* full(shape, fill_value, dtype=None): the dtype of the value by default */
OP_EVAL(std_full) {
  static const char *const names[] = {"shape", "fill_value", "dtype"};
  Value a[3], fv;
  int nd, dt;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  ObjTensor *t;
  if (!std_tensor_parse(vm, "full", argc, argv, kw, names, 3, 3, 2, a) ||
      !shape_arg(vm, "full", a[0], &nd, shape) || !fill_value(vm, "full", a[1], &fv) ||
      !std_dtype_arg(vm, "full", a[2], dtype_of_number(fv), &dt) ||
      !lang_tensor_full(vm, (DType)dt, nd, shape, fv, &t))
    return false;
  *out = v_obj(t);
  return true;
}

static bool filled_like(MistVM *vm, const char *fname, int argc, const Value *argv,
                        const KwArgs *kw, Value fillv, Value *out) {
  static const char *const names[] = {"t", "dtype"};
  Value a[2];
  int dt;
  ObjTensor *x, *t;
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 2, 2, 1, a) ||
      !std_tensor_arg(vm, fname, a[0], &x) || !std_dtype_arg(vm, fname, a[1], x->dtype, &dt) ||
      !lang_tensor_full(vm, (DType)dt, x->ndim, x->shape, fillv, &t))
    return false;
  *out = v_obj(t);
  return true;
}

/* zeros_like(t, dtype=None), ones_like(t, dtype=None) */
OP_EVAL(std_zeros_like) { return filled_like(vm, "zeros_like", argc, argv, kw, v_int(0), out); }
OP_EVAL(std_ones_like) { return filled_like(vm, "ones_like", argc, argv, kw, v_int(1), out); }

/* arange(stop), arange(start, stop, step=1, dtype=None): i64 for ints,
 * f32 when any argument is a float */
OP_EVAL(std_arange) {
  static const char *const names[] = {"start", "stop", "step", "dtype"};
  Value a[4];
  if (!std_tensor_parse(vm, "arange", argc, argv, kw, names, 4, 3, 1, a)) return false;
  Value start = a[0], stop = a[1], step = given_nn(a[2]) ? a[2] : v_int(1);
  if (!given_nn(stop)) {
    stop = start;
    start = v_int(0);
  }
  const Value parts[3] = {start, stop, step};
  bool all_int = true;
  for (int i = 0; i < 3; i++) {
    if (!is_number(parts[i]))
      return lang_raise(vm, "TypeError", "arange: arguments must be numbers, not %s",
                        lang_type_name(parts[i]));
    if (parts[i].tag == V_FLOAT) all_int = false;
  }
  int dt;
  if (!std_dtype_arg(vm, "arange", a[3], all_int ? DT_I64 : DT_F32, &dt)) return false;
  int64_t n;
  double s0, s2;
  if (all_int) {
    int64_t b = start.tag == V_BOOL ? start.b : start.i, e = stop.tag == V_BOOL ? stop.b : stop.i;
    int64_t st = step.tag == V_BOOL ? step.b : step.i;
    if (st == 0) return lang_raise(vm, "ValueError", "arange: step must not be zero");
    __int128 span = (__int128)e - b;
    __int128 cnt = st > 0 ? (span + st - 1) / st : (span + st + 1) / st;
    if (cnt < 0) cnt = 0;
    if (cnt > LANG_TENSOR_MAX_SIZE)
      return lang_raise(vm, "MemoryError", "arange: too many elements");
    n = (int64_t)cnt;
    if (dt == DT_I64 || dt == DT_I32) {
      ObjTensor *t = lang_tensor_new(vm, (DType)dt, 1, &n, false);
      if (!t) return false;
      for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)((uint64_t)b + (uint64_t)i * (uint64_t)st);
        if (dt == DT_I64) ((int64_t *)lang_tensor_ptr(t))[i] = v;
        else if (!lang_tensor_store(vm, DT_I32, lang_tensor_ptr(t) + 4 * i, v_int(v))) return false;
      }
      *out = v_obj(t);
      return true;
    }
    s0 = (double)b;
    s2 = (double)st;
  } else {
    double e;
    num_arg(vm, "arange", "start", start, &s0);
    num_arg(vm, "arange", "stop", stop, &e);
    num_arg(vm, "arange", "step", step, &s2);
    if (s2 == 0) return lang_raise(vm, "ValueError", "arange: step must not be zero");
    double cnt = ceil((e - s0) / s2);
    if (!(cnt == cnt)) return lang_raise(vm, "ValueError", "arange: the length is not a number");
    if (cnt > (double)LANG_TENSOR_MAX_SIZE)
      return lang_raise(vm, "MemoryError", "arange: too many elements");
    n = cnt > 0 ? (int64_t)cnt : 0;
  }
  ObjTensor *t = lang_tensor_new(vm, (DType)dt, 1, &n, false);
  if (!t) return false;
  size_t es = dev_dtype_size((DType)dt);
  for (int64_t i = 0; i < n; i++)
    if (!lang_tensor_store(vm, (DType)dt, lang_tensor_ptr(t) + (size_t)i * es,
                           v_float(s0 + (double)i * s2)))
      return false;
  *out = v_obj(t);
  return true;
}

/* linspace(start, stop, num=50, endpoint=True, dtype="f32") */
OP_EVAL(std_linspace) {
  static const char *const names[] = {"start", "stop", "num", "endpoint", "dtype"};
  Value a[5];
  double s0, s1;
  int64_t num = 50;
  bool endpoint;
  int dt;
  if (!std_tensor_parse(vm, "linspace", argc, argv, kw, names, 5, 5, 2, a) ||
      !num_arg(vm, "linspace", "start", a[0], &s0) || !num_arg(vm, "linspace", "stop", a[1], &s1) ||
      (given(a[2]) && !int_arg(vm, "linspace", "num", a[2], &num)) ||
      !std_bool_arg(vm, a[3], true, &endpoint) || !std_dtype_arg(vm, "linspace", a[4], DT_F32, &dt))
    return false;
  if (num < 0) return lang_raise(vm, "ValueError", "linspace: num must be >= 0, not %lld", (long long)num);
  ObjTensor *t = lang_tensor_new(vm, (DType)dt, 1, &num, false);
  if (!t) return false;
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (s1 - s0) / (double)div : 0;
  size_t es = dev_dtype_size((DType)dt);
  for (int64_t i = 0; i < num; i++) {
    double v = endpoint && i == num - 1 && num > 1 ? s1 : s0 + (double)i * step;
    if (!lang_tensor_store(vm, (DType)dt, lang_tensor_ptr(t) + (size_t)i * es, v_float(v)))
      return false;
  }
  *out = v_obj(t);
  return true;
}

/* eye(n, m=None, k=0, dtype="f32"): ones on diagonal k */
OP_EVAL(std_eye) {
  static const char *const names[] = {"n", "m", "k", "dtype"};
  Value a[4];
  int64_t n, m, k = 0;
  int dt;
  if (!std_tensor_parse(vm, "eye", argc, argv, kw, names, 4, 4, 1, a) || !int_arg(vm, "eye", "n", a[0], &n) ||
      (given_nn(a[1]) && !int_arg(vm, "eye", "m", a[1], &m)) ||
      (given(a[2]) && !int_arg(vm, "eye", "k", a[2], &k)) ||
      !std_dtype_arg(vm, "eye", a[3], DT_F32, &dt))
    return false;
  if (!given_nn(a[1])) m = n;
  if (n < 0 || m < 0) return lang_raise(vm, "ValueError", "eye: negative dimensions are not allowed");
  int64_t shape[2] = {n, m};
  ObjTensor *t = lang_tensor_new(vm, (DType)dt, 2, shape, true);
  if (!t) return false;
  size_t es = dev_dtype_size((DType)dt);
  if (k >= m || k <= -n) n = 0;   /* the diagonal misses the matrix */
  for (int64_t i = 0; i < n; i++) {
    int64_t j = i + k;
    if (j >= 0 && j < m && !lang_tensor_store(vm, (DType)dt, lang_tensor_ptr(t) + (size_t)(i * m + j) * es, v_int(1)))
      return false;
  }
  *out = v_obj(t);
  return true;
}

/* ---- random numbers ---- */

static bool key_arg(MistVM *vm, const char *fname, Value v, uint32_t key[2]) {
  if (v_is_tensor(v)) {
    ObjTensor *t = AS_TENSOR(v);
    if (t->ndim == 1 && t->shape[0] == 2 && (t->dtype == DT_I64 || t->dtype == DT_I32)) {
      const char *p = lang_tensor_ptr(t);
      int64_t step = t->strides[0] * (int64_t)dev_dtype_size(t->dtype);
      bool ok = true;
      for (int i = 0; i < 2; i++) {
        int64_t w = lang_tensor_load(t->dtype, p + i * step).i;
        if (w < 0 || w > 0xffffffffLL) ok = false;
        key[i] = (uint32_t)w;
      }
      if (ok) return true;
    }
  }
  return lang_raise(vm, "TypeError",
                    "%s: a key must be a tensor of two 32-bit words as key(seed) or split(k) make, "
                    "not %s", fname, lang_type_name(v));
}

static ObjTensor *key_tensor(MistVM *vm, const uint32_t *words) {
  int64_t two = 2;
  ObjTensor *t = lang_tensor_new(vm, DT_I64, 1, &two, false);
  if (!t) return NULL;
  int64_t *p = (int64_t *)lang_tensor_ptr(t);
  p[0] = words[0];
  p[1] = words[1];
  return t;
}

/* key(seed): the two 32-bit words of the int seed (high, low) */
OP_EVAL(std_key) {
  static const char *const names[] = {"seed"};
  Value a[1];
  int64_t seed;
  if (!std_tensor_parse(vm, "key", argc, argv, kw, names, 1, 1, 1, a) || !int_arg(vm, "key", "seed", a[0], &seed))
    return false;
  uint32_t w[2] = {(uint32_t)((uint64_t)seed >> 32), (uint32_t)seed};
  ObjTensor *t = key_tensor(vm, w);
  if (!t) return false;
  *out = v_obj(t);
  return true;
}

/* split(k, n=2): n new keys, as a tensor of shape (n, 2) */
OP_EVAL(std_split) {
  static const char *const names[] = {"key", "n"};
  Value a[2];
  uint32_t key[2];
  int64_t n = 2;
  if (!std_tensor_parse(vm, "split", argc, argv, kw, names, 2, 2, 1, a) || !key_arg(vm, "split", a[0], key) ||
      (given(a[1]) && !int_arg(vm, "split", "n", a[1], &n)))
    return false;
  if (n < 0 || n > ((int64_t)1 << 32))
    return lang_raise(vm, "ValueError", "split: n must be between 0 and 2**32, not %lld", (long long)n);
  int64_t shape[2] = {n, 2};
  ObjTensor *t = lang_tensor_new(vm, DT_I64, 2, shape, false);
  if (!t) return false;
  int64_t *p = (int64_t *)lang_tensor_ptr(t);
  for (int64_t i = 0; i < n; i++) {
    uint32_t w[2];
    lang_random_split(key, (uint64_t)i, w);
    p[2 * i] = w[0];
    p[2 * i + 1] = w[1];
  }
  *out = v_obj(t);
  return true;
}

/* rand/randn(shape, seed=None, key=None, dtype="f32"), or (key, shape) */
static bool random_fn(MistVM *vm, const char *fname, LangRandomKind kind, int argc,
                      const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"shape", "seed", "key", "dtype"};
  Value a[4];
  Value args2[2];
  if (argc == 2 && v_is_tensor(argv[0])) {   /* randn(key, shape), as JAX writes it */
    args2[0] = argv[1];
    args2[1] = argv[0];
    if (!std_tensor_parse(vm, fname, 1, args2, kw, names, 4, 1, 1, a)) return false;
    if (given(a[2])) return lang_raise(vm, "TypeError", "%s: key given twice", fname);
    a[2] = args2[1];
  } else if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 4, 1, 1, a)) {
    return false;
  }
  int nd, dt;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  uint32_t key[2];
  if (!shape_arg(vm, fname, a[0], &nd, shape) || !std_dtype_arg(vm, fname, a[3], DT_F32, &dt))
    return false;
  if (given_nn(a[1]) && given_nn(a[2]))
    return lang_raise(vm, "TypeError", "%s: give seed= or key=, not both", fname);
  if (given_nn(a[1])) {
    int64_t seed;
    if (!int_arg(vm, fname, "seed", a[1], &seed)) return false;
    key[0] = (uint32_t)((uint64_t)seed >> 32);
    key[1] = (uint32_t)seed;
  } else if (given_nn(a[2])) {
    if (!key_arg(vm, fname, a[2], key)) return false;
  } else {
    return lang_raise(vm, "TypeError",
                      "%s: give seed= or key= (Mist has no hidden random state)", fname);
  }
  ObjTensor *t;
  if (!lang_tensor_random(vm, kind, (DType)dt, nd, shape, key, &t)) return false;
  *out = v_obj(t);
  return true;
}

OP_EVAL(std_rand) { return random_fn(vm, "rand", LANG_RANDOM_UNIFORM, argc, argv, kw, out); }
OP_EVAL(std_randn) { return random_fn(vm, "randn", LANG_RANDOM_NORMAL, argc, argv, kw, out); }

/* ---- properties ---- */

static bool self_tensor(MistVM *vm, const char *name, int argc, const Value *argv,
                        ObjTensor **out) {
  if (argc != 1 || !v_is_tensor(argv[0]))
    return lang_raise(vm, "AttributeError", "'%s' object has no attribute '%s'",
                      argc >= 1 ? lang_type_name(argv[0]) : "?", name);
  *out = AS_TENSOR(argv[0]);
  return true;
}

OP_EVAL(std_shape) {
  ObjTensor *t = NULL;
  if (!self_tensor(vm, "shape", argc, argv, &t)) return false;
  *out = lang_shape_tuple(t);
  return true;
}

OP_EVAL(std_dtype) {
  ObjTensor *t = NULL;
  if (!self_tensor(vm, "dtype", argc, argv, &t)) return false;
  *out = v_obj(lang_intern(vm, dev_dtype_name(t->dtype), strlen(dev_dtype_name(t->dtype))));
  return true;
}

OP_EVAL(std_ndim) {
  ObjTensor *t = NULL;
  if (!self_tensor(vm, "ndim", argc, argv, &t)) return false;
  *out = v_int(t->ndim);
  return true;
}

OP_EVAL(std_size) {
  ObjTensor *t = NULL;
  if (!self_tensor(vm, "size", argc, argv, &t)) return false;
  *out = v_int(t->size);
  return true;
}

OP_EVAL(std_device) {
  ObjTensor *t = NULL;
  if (!self_tensor(vm, "device", argc, argv, &t)) return false;
  *out = v_obj(lang_intern(vm, "cpu", 3));
  return true;
}

OP_EVAL(std_T) {
  ObjTensor *t = NULL, *r;
  if (!self_tensor(vm, "T", argc, argv, &t) || !lang_tensor_transpose(vm, t, NULL, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* ---- shapes and conversions ---- */

/* The shape given as f(t, (2, 3)), f(t, 2, 3) or f(t, shape=(2, 3)). */
static bool varshape(MistVM *vm, const char *fname, const char *kwname, int argc,
                     const Value *argv, const KwArgs *kw, bool infer, int *nd, int64_t *shape,
                     bool *none) {
  *none = false;
  *nd = 0;
  Value spec;
  if (kw && kw->n > 0) {
    if (kw->n != 1 || strcmp(kw->names[0]->data, kwname) != 0 || argc != 1)
      return lang_raise(vm, "TypeError", "%s() takes the tensor and its %s", fname, kwname);
    spec = kw->values[0];
  } else if (argc == 2) {
    spec = argv[1];
  } else {
    ObjSeq *s = lang_tuple_new((size_t)(argc > 1 ? argc - 1 : 0));
    for (int i = 1; i < argc; i++) s->items[i - 1] = argv[i];
    spec = v_obj(s);
    if (argc == 1) {
      *none = true;
      *nd = 0;
      return true;
    }
  }
  if (spec.tag == V_NONE) {
    *none = true;
    return true;
  }
  return lang_shape_from_value(vm, fname, spec, infer, nd, shape);
}

/* reshape(t, shape) or t.reshape(2, 3); one -1 is inferred */
OP_EVAL(std_reshape) {
  ObjTensor *t, *r;
  int nd;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  bool none;
  if (argc < 1) return lang_raise(vm, "TypeError", "reshape() missing required argument 't'");
  if (!std_tensor_arg(vm, "reshape", argv[0], &t) ||
      !varshape(vm, "reshape", "shape", argc, argv, kw, true, &nd, shape, &none))
    return false;
  if (none) return lang_raise(vm, "TypeError", "reshape() missing required argument 'shape'");
  if (!lang_tensor_reshape(vm, t, nd, shape, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* transpose(t, axes=None) or t.transpose(1, 0): reversed axes by default */
OP_EVAL(std_transpose) {
  ObjTensor *t, *r;
  if (argc < 1) return lang_raise(vm, "TypeError", "transpose() missing required argument 't'");
  if (!std_tensor_arg(vm, "transpose", argv[0], &t)) return false;
  const Value *axes = argv + 1;
  int n = argc - 1;
  if (kw && kw->n > 0) {
    if (kw->n != 1 || strcmp(kw->names[0]->data, "axes") != 0 || argc != 1)
      return lang_raise(vm, "TypeError", "transpose() takes the tensor and its axes");
    axes = kw->values;
    n = 1;
  }
  if (n == 1 && (is_seq(axes[0]) || axes[0].tag == V_NONE)) {
    if (axes[0].tag == V_NONE) {
      n = 0;
    } else {
      n = (int)AS_SEQ(axes[0])->len;
      axes = AS_SEQ(axes[0])->items;
    }
  }
  if (n == 0) {
    if (!lang_tensor_transpose(vm, t, NULL, &r)) return false;
    *out = v_obj(r);
    return true;
  }
  if (n != t->ndim)
    return lang_raise(vm, "ValueError", "transpose: %d ax%s given for a tensor of %d dimension%s",
                      n, n == 1 ? "is" : "es", t->ndim, t->ndim == 1 ? "" : "s");
  int perm[LANG_TENSOR_MAX_DIMS];
  for (int d = 0; d < n; d++) {
    int64_t ax;
    if (!int_arg(vm, "transpose", "an axis", axes[d], &ax) ||
        !lang_tensor_axis(vm, ax, t->ndim, &perm[d]))
      return false;
  }
  if (!lang_tensor_transpose(vm, t, perm, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* broadcast_to(t, shape) */
OP_EVAL(std_broadcast_to) {
  static const char *const names[] = {"t", "shape"};
  Value a[2];
  ObjTensor *t, *r;
  int nd;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  if (!std_tensor_parse(vm, "broadcast_to", argc, argv, kw, names, 2, 2, 2, a) ||
      !std_tensor_arg(vm, "broadcast_to", a[0], &t) || !shape_arg(vm, "broadcast_to", a[1], &nd, shape) ||
      !lang_tensor_broadcast_to(vm, "broadcast_to", t, nd, shape, &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* flatten(t): reshape(t, -1) */
OP_EVAL(std_flatten) {
  static const char *const names[] = {"t"};
  Value a[1];
  ObjTensor *t, *r;
  int64_t n = -1;
  if (!std_tensor_parse(vm, "flatten", argc, argv, kw, names, 1, 1, 1, a) ||
      !std_tensor_arg(vm, "flatten", a[0], &t) || !lang_tensor_reshape(vm, t, 1, &n, &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* squeeze(t, axis=None): drop axes of size 1 (those given, or all) */
OP_EVAL(std_squeeze) {
  static const char *const names[] = {"t", "axis"};
  Value a[2];
  ObjTensor *t;
  uint64_t mask;
  if (!std_tensor_parse(vm, "squeeze", argc, argv, kw, names, 2, 2, 1, a) ||
      !std_tensor_arg(vm, "squeeze", a[0], &t) ||
      !std_axes_arg(vm, "squeeze", a[1], t->ndim, true, &mask))
    return false;
  int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (mask >> d & 1) {
      if (t->shape[d] == 1) continue;
      if (given_nn(a[1]))
        return lang_raise(vm, "ValueError", "squeeze: axis %d has size %lld, not 1", d,
                          (long long)t->shape[d]);
    }
    sh[nd] = t->shape[d];
    st[nd] = t->strides[d];
    nd++;
  }
  *out = v_obj(lang_tensor_view(t, nd, sh, st, t->offset));
  return true;
}

/* expand_dims(t, axis): a new axis of size 1 at position axis */
OP_EVAL(std_expand_dims) {
  static const char *const names[] = {"t", "axis"};
  Value a[2];
  ObjTensor *t;
  int64_t axis;
  int ax;
  if (!std_tensor_parse(vm, "expand_dims", argc, argv, kw, names, 2, 2, 2, a) ||
      !std_tensor_arg(vm, "expand_dims", a[0], &t) ||
      !int_arg(vm, "expand_dims", "axis", a[1], &axis) ||
      !lang_tensor_axis(vm, axis, t->ndim + 1, &ax))
    return false;
  if (t->ndim + 1 > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "ValueError", "expand_dims: too many dimensions");
  int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS];
  for (int d = 0, o = 0; d <= t->ndim; d++) {
    if (d == ax) {
      sh[d] = 1;
      st[d] = 0;
      continue;
    }
    sh[d] = t->shape[o];
    st[d] = t->strides[o];
    o++;
  }
  *out = v_obj(lang_tensor_view(t, t->ndim + 1, sh, st, t->offset));
  return true;
}

/* astype(t, dtype) */
OP_EVAL(std_astype) {
  static const char *const names[] = {"t", "dtype"};
  Value a[2];
  ObjTensor *t, *r;
  DType dt;
  if (!std_tensor_parse(vm, "astype", argc, argv, kw, names, 2, 2, 2, a) ||
      !std_tensor_arg(vm, "astype", a[0], &t) || !lang_dtype_from_value(vm, "astype", a[1], &dt) ||
      !lang_tensor_astype(vm, t, dt, &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* item(t): the number in a one-element tensor */
OP_EVAL(std_item) {
  static const char *const names[] = {"t"};
  Value a[1];
  ObjTensor *t;
  if (!std_tensor_parse(vm, "item", argc, argv, kw, names, 1, 1, 1, a)) return false;
  if (!v_is_tensor(a[0]))
    return lang_raise(vm, "TypeError", "item: expected a tensor, not %s", lang_type_name(a[0]));
  t = AS_TENSOR(a[0]);
  return lang_tensor_item(vm, "item", t, out);
}

/* tolist(t): nested lists of Python numbers */
OP_EVAL(std_tolist) {
  static const char *const names[] = {"t"};
  Value a[1];
  if (!std_tensor_parse(vm, "tolist", argc, argv, kw, names, 1, 1, 1, a)) return false;
  if (!v_is_tensor(a[0]))
    return lang_raise(vm, "TypeError", "tolist: expected a tensor, not %s", lang_type_name(a[0]));
  return lang_tensor_tolist(vm, AS_TENSOR(a[0]), out);
}

/* ---- reductions ---- */

/* f(t, axis=None, keepdims=False) */
static bool reduction(MistVM *vm, TensorReduction op, int argc, const Value *argv,
                      const KwArgs *kw, Value *out) {
  static const char *const names[] = {"t", "axis", "keepdims"};
  const char *fname = lang_tensor_reduction_name(op);
  Value a[3];
  ObjTensor *t, *r;
  uint64_t mask;
  bool keep;
  bool many = op != TR_ARGMAX && op != TR_ARGMIN;
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 3, 3, 1, a) || !std_tensor_arg(vm, fname, a[0], &t) ||
      !std_axes_arg(vm, fname, a[1], t->ndim, many, &mask) || !std_bool_arg(vm, a[2], false, &keep) ||
      !lang_tensor_reduce(vm, op, t, mask, keep, &r))
    return false;
  *out = v_obj(r);
  return true;
}

bool std_tensor_sum(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return reduction(vm, TR_SUM, argc, argv, kw, out);
}
bool std_tensor_max(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return reduction(vm, TR_MAX, argc, argv, kw, out);
}
bool std_tensor_min(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return reduction(vm, TR_MIN, argc, argv, kw, out);
}
bool std_tensor_any(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return reduction(vm, TR_ANY, argc, argv, kw, out);
}
bool std_tensor_all(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return reduction(vm, TR_ALL, argc, argv, kw, out);
}
OP_EVAL(std_mean) { return reduction(vm, TR_MEAN, argc, argv, kw, out); }
OP_EVAL(std_prod) { return reduction(vm, TR_PROD, argc, argv, kw, out); }
OP_EVAL(std_argmax) { return reduction(vm, TR_ARGMAX, argc, argv, kw, out); }
OP_EVAL(std_argmin) { return reduction(vm, TR_ARGMIN, argc, argv, kw, out); }

/* ---- math on floats and tensors ---- */

bool std_tensor_abs(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  ObjTensor *r;
  if (!std_one_arg(vm, "abs", argc, kw) || !lang_tensor_unary(vm, TU_ABS, AS_TENSOR(argv[0]), &r))
    return false;
  *out = v_obj(r);
  return true;
}

/* round(t, ndigits=None): half to even, as NumPy */
bool std_tensor_round(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"number", "ndigits"};
  Value a[2];
  ObjTensor *t = AS_TENSOR(argv[0]), *r;
  int64_t nd = 0;
  if (!std_tensor_parse(vm, "round", argc, argv, kw, names, 2, 2, 1, a) ||
      (given_nn(a[1]) && !int_arg(vm, "round", "ndigits", a[1], &nd)))
    return false;
  if (nd == 0 || !lang_dtype_is_float(t->dtype)) {
    if (!lang_tensor_unary(vm, TU_ROUND, t, &r)) return false;
    *out = v_obj(r);
    return true;
  }
  /* scaled, as numpy.round does */
  double scale = pow(10.0, (double)(nd < 0 ? -nd : nd));
  Value s, y;
  if (!lang_tensor_binary(vm, nd > 0 ? TB_MUL : TB_TRUEDIV, argv[0], v_float(scale), &s) ||
      !lang_tensor_unary(vm, TU_ROUND, AS_TENSOR(s), &r) ||
      !lang_tensor_binary(vm, nd > 0 ? TB_TRUEDIV : TB_MUL, v_obj(r), v_float(scale), &y))
    return false;
  *out = y;
  return true;
}

static double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

/* f(x): on a number, Python's math (floats out, domain errors); on a
 * tensor or list, elementwise. */
static bool math1(MistVM *vm, const char *fname, TensorUnop op, int argc, const Value *argv,
                  const KwArgs *kw, Value *out) {
  if (!std_one_arg(vm, fname, argc, kw)) return false;
  Value v = argv[0];
  if (v_is_tensor(v) || is_seq(v)) {
    ObjTensor *t, *r;
    if (!std_tensor_arg(vm, fname, v, &t) || !lang_tensor_unary(vm, op, t, &r)) return false;
    *out = v_obj(r);
    return true;
  }
  if (!is_number(v))
    return lang_raise(vm, "TypeError", "%s: must be a number or a tensor, not %s", fname,
                      lang_type_name(v));
  if (op == TU_RELU && v.tag != V_FLOAT) {
    int64_t i = v.tag == V_BOOL ? v.b : v.i;
    *out = v_int(i > 0 ? i : 0);
    return true;
  }
  double x = v.tag == V_FLOAT ? v.f : v.tag == V_INT ? (double)v.i : (double)v.b, r = 0;
  switch (op) {
  case TU_EXP: r = exp(x); break;
  case TU_LOG:
    if (!(x > 0) && !isnan(x)) return lang_raise(vm, "ValueError", "math domain error");
    r = log(x);
    break;
  case TU_SQRT:
    if (x < 0) return lang_raise(vm, "ValueError", "math domain error");
    r = sqrt(x);
    break;
  case TU_SIN:
  case TU_COS:
    if (isinf(x)) return lang_raise(vm, "ValueError", "math domain error");
    r = op == TU_SIN ? sin(x) : cos(x);
    break;
  case TU_TANH: r = tanh(x); break;
  case TU_SIGMOID: r = sigmoid(x); break;
  case TU_RELU: r = x > 0 || isnan(x) ? x : 0.0; break;
  case TU_TAN:
    if (isinf(x)) return lang_raise(vm, "ValueError", "math domain error");
    r = tan(x);
    break;
  case TU_ASIN:
  case TU_ACOS:
    if (fabs(x) > 1) return lang_raise(vm, "ValueError", "math domain error");
    r = op == TU_ASIN ? asin(x) : acos(x);
    break;
  case TU_ATAN: r = atan(x); break;
  case TU_LOG2:
  case TU_LOG10:
    if (!(x > 0) && !isnan(x)) return lang_raise(vm, "ValueError", "math domain error");
    r = op == TU_LOG2 ? log2(x) : log10(x);
    break;
  case TU_LGAMMA: {
    /* poles at 0, -1, -2... */
    if (isfinite(x) && x <= 0 && x == floor(x)) return lang_raise(vm, "ValueError", "math domain error");
    r = lang_lgamma(x);
    break;
  }
  case TU_ERF: r = erf(x); break;
  case TU_FLOOR:
  case TU_CEIL:
    /* Python's math.floor and math.ceil give ints */
    if (v.tag != V_FLOAT) return lang_to_int(vm, v, out);
    return lang_to_int(vm, v_float(op == TU_FLOOR ? floor(x) : ceil(x)), out);
  default: break;
  }
  if (isinf(r) && isfinite(x)) return lang_raise(vm, "OverflowError", "math range error");
  *out = v_float(r);
  return true;
}

#define MATH1(name, op) \
  OP_EVAL(std_##name) { return math1(vm, #name, op, argc, argv, kw, out); }
MATH1(exp, TU_EXP)
MATH1(log, TU_LOG)
MATH1(sqrt, TU_SQRT)
MATH1(sin, TU_SIN)
MATH1(cos, TU_COS)
MATH1(tanh, TU_TANH)
MATH1(sigmoid, TU_SIGMOID)
MATH1(relu, TU_RELU)
MATH1(tan, TU_TAN)
MATH1(asin, TU_ASIN)
MATH1(acos, TU_ACOS)
MATH1(atan, TU_ATAN)
MATH1(log2, TU_LOG2)
MATH1(log10, TU_LOG10)
MATH1(lgamma, TU_LGAMMA)
MATH1(erf, TU_ERF)
MATH1(floor, TU_FLOOR)
MATH1(ceil, TU_CEIL)

/* atan2(y, x): Python's math.atan2 on numbers, NumPy's arctan2 on
 * tensors (floats out, broadcast). */
OP_EVAL(std_atan2) {
  static const char *const names[] = {"y", "x"};
  Value a[2];
  if (!std_tensor_parse(vm, "atan2", argc, argv, kw, names, 2, 2, 2, a)) return false;
  if (v_is_tensor(a[0]) || v_is_tensor(a[1]) || is_seq(a[0]) || is_seq(a[1]))
    return lang_tensor_binary(vm, TB_ATAN2, a[0], a[1], out);
  double y, x;
  if (!num_arg(vm, "atan2", "y", a[0], &y) || !num_arg(vm, "atan2", "x", a[1], &x)) return false;
  *out = v_float(atan2(y, x));
  return true;
}

/* The polygamma function psi^(n)(x) for n >= 0 (n = 0: the digamma
 * function), which lgamma's derivatives are: d lgamma = psi^(0),
 * d psi^(n) = psi^(n+1).  Recurrence up to x >= 10, then the
 * asymptotic series; reflection for negative x when n = 0. */
static double polygamma(int n, double x) {
  if (isnan(x)) return x;
  if (x <= 0 && x == floor(x)) return NAN;   /* a pole */
  if (n == 0 && x < 0) {
    /* psi(1 - x) - psi(x) = pi cot(pi x) */
    return polygamma(0, 1 - x) - M_PI / tan(M_PI * x);
  }
  double acc = 0, fact = 1;   /* n! */
  for (int k = 2; k <= n; k++) fact *= k;
  double sign = n % 2 == 1 ? 1 : -1;   /* (-1)^(n+1) */
  while (x < 10 + n) {
    /* psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1) */
    acc += n == 0 ? -1 / x : sign * fact / pow(x, n + 1);
    x += 1;
  }
  /* Bernoulli numbers B_2k for the asymptotic series */
  static const double b2k[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                               -3617.0 / 510, 43867.0 / 798, -174611.0 / 330};
  double s;
  if (n == 0) {
    s = log(x) - 0.5 / x;
    double x2k = 1;
    for (int k = 1; k <= 10; k++) {
      x2k *= x * x;
      s -= b2k[k - 1] / (2 * k * x2k);
    }
  } else {
    /* (-1)^(n+1) [ (n-1)!/x^n + n!/(2 x^(n+1)) + sum B_2k (2k+n-1)!/((2k)! x^(2k+n)) ] */
    double t = fact / n / pow(x, n) + fact / (2 * pow(x, n + 1));
    double num = fact, den = 1;   /* (2k+n-1)! / (2k)! built up */
    for (int k = 1; k <= 10; k++) {
      /* from k-1 to k: multiply by (2k+n-2)(2k+n-1) / ((2k-1)(2k)) */
      num *= (2.0 * k + n - 2) * (2.0 * k + n - 1);
      den *= (2.0 * k - 1) * (2.0 * k);
      t += b2k[k - 1] * num / den / pow(x, 2 * k + n);
    }
    s = sign * t;
  }
  return s + acc;
}

/* _polygamma(n, x): polygamma(n, x) on a float or elementwise on a float
 * tensor; the derivative rules of lgamma use it (stdlib/ad_rules.ms). */
OP_EVAL(std_polygamma) {
  static const char *const names[] = {"n", "x"};
  Value a[2];
  if (!std_tensor_parse(vm, "_polygamma", argc, argv, kw, names, 2, 2, 2, a)) return false;
  int64_t n;
  if (!int_arg(vm, "_polygamma", "n", a[0], &n)) return false;
  if (n < 0 || n > 20) return lang_raise(vm, "ValueError", "_polygamma: n must be in 0..20, not %lld", (long long)n);
  if (!v_is_tensor(a[1]) && !is_seq(a[1])) {
    double x;
    if (!num_arg(vm, "_polygamma", "x", a[1], &x)) return false;
    *out = v_float(polygamma((int)n, x));
    return true;
  }
  ObjTensor *t, *d;
  if (!std_tensor_arg(vm, "_polygamma", a[1], &t)) return false;
  DType dt = lang_dtype_is_float(t->dtype) ? t->dtype : DT_F32;
  if (!lang_tensor_astype(vm, t, DT_F64, &d)) return false;
  d = lang_tensor_contiguous(vm, d);
  ObjTensor *r = lang_tensor_new(vm, DT_F64, d->ndim, d->shape, false);
  if (!r) return false;
  const double *src = (const double *)lang_tensor_ptr(d);
  double *dst = (double *)lang_tensor_ptr(r);
  for (int64_t i = 0; i < d->size; i++) dst[i] = polygamma((int)n, src[i]);
  LANG_KEEP(d);
  if (!lang_tensor_astype(vm, r, dt, &r)) return false;
  *out = v_obj(r);
  return true;
}

/* maximum(a, b), minimum(a, b): NaN wins; elementwise on tensors */
static bool extremum(MistVM *vm, const char *fname, bool mx, int argc, const Value *argv,
                     const KwArgs *kw, Value *out) {
  static const char *const names[] = {"a", "b"};
  Value a[2];
  if (!std_tensor_parse(vm, fname, argc, argv, kw, names, 2, 2, 2, a)) return false;
  if (v_is_tensor(a[0]) || v_is_tensor(a[1]) || is_seq(a[0]) || is_seq(a[1]))
    return lang_tensor_binary(vm, mx ? TB_MAXIMUM : TB_MINIMUM, a[0], a[1], out);
  if (!is_number(a[0]) || !is_number(a[1]))
    return lang_raise(vm, "TypeError", "%s: expected numbers or tensors, not %s and %s", fname,
                      lang_type_name(a[0]), lang_type_name(a[1]));
  if (a[0].tag == V_FLOAT || a[1].tag == V_FLOAT) {
    double x, y;
    num_arg(vm, fname, "a", a[0], &x);
    num_arg(vm, fname, "b", a[1], &y);
    *out = v_float(isnan(x) ? x : isnan(y) ? y : mx ? (x >= y ? x : y) : (x <= y ? x : y));
    return true;
  }
  int64_t x = a[0].tag == V_BOOL ? a[0].b : a[0].i, y = a[1].tag == V_BOOL ? a[1].b : a[1].i;
  if (a[0].tag == V_BOOL && a[1].tag == V_BOOL) *out = v_bool(mx ? (x || y) : (x && y));
  else *out = v_int(mx ? (x >= y ? x : y) : (x <= y ? x : y));
  return true;
}

OP_EVAL(std_maximum) { return extremum(vm, "maximum", true, argc, argv, kw, out); }
OP_EVAL(std_minimum) { return extremum(vm, "minimum", false, argc, argv, kw, out); }

/* where(cond, a, b) */
OP_EVAL(std_where) {
  static const char *const names[] = {"condition", "x", "y"};
  Value a[3];
  if (!std_tensor_parse(vm, "where", argc, argv, kw, names, 3, 3, 3, a)) return false;
  bool tensors = false;
  for (int i = 0; i < 3; i++) tensors |= v_is_tensor(a[i]) || is_seq(a[i]);
  if (tensors) return lang_tensor_where(vm, a[0], a[1], a[2], out);
  bool c;
  if (!lang_truthy(vm, a[0], &c)) return false;
  *out = c ? a[1] : a[2];
  return true;
}

/* clip(x, lo, hi): each bound may be None */
OP_EVAL(std_clip) {
  static const char *const names[] = {"x", "lo", "hi"};
  Value a[3];
  if (!std_tensor_parse(vm, "clip", argc, argv, kw, names, 3, 3, 3, a)) return false;
  Value x = a[0];
  Value args[2];
  if (given_nn(a[1])) {
    args[0] = x;
    args[1] = a[1];
    if (!extremum(vm, "clip", true, 2, args, NULL, &x)) return false;
  }
  if (given_nn(a[2])) {
    args[0] = x;
    args[1] = a[2];
    if (!extremum(vm, "clip", false, 2, args, NULL, &x)) return false;
  }
  *out = x;
  return true;
}

void std_register_tensor(MistVM *vm) {
  lang_def_builtin(vm, "set_printoptions", bi_set_printoptions, -1, -1);
  /* math's constants, as builtins (and as math.pi... in stdlib/math.ms) */
  static const struct {
    const char *name;
    double value;
  } consts[] = {{"pi", M_PI}, {"e", M_E}, {"inf", INFINITY}, {"nan", NAN}};
  for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
    lang_dict_put(vm->builtins, lang_intern(vm, consts[i].name, strlen(consts[i].name)), v_float(consts[i].value));
}
