/* infer_rules.c: the type and shape rule of every primitive (one table,
 * indexed by IrPrim and checked complete when compiled) and of the math
 * and tensor builtins (named in the type column of ir/builtin_ops.def,
 * whose row a builtin carries in ObjBuiltin.op: no name is compared
 * while inferring).  A builtin without a rule gives `any`.
 *
 * The rules follow the interpreter's (ir/prims.c, lang/ops.c,
 * lang/tensor*.c): Python's numbers (int op int is an int, with a float
 * a float, / always a float), NumPy's broadcasting, matmul, reductions
 * with axis= and keepdims=, reshape with -1, indexing by ints, slices,
 * None and tuples of them.  Where shapes are known the rule calls the
 * interpreter's own check (lang_broadcast_shapes, lang_matmul_shape),
 * so a proven error has its message; where a dimension is unknown the
 * result's is too.  The sensitivity primitives of autodiff type None (a
 * zero) as None, so that a derivative program's bookkeeping of zeros is
 * typed precisely enough to be removed.
 */
#include <string.h>

#include "ir/eval.h"
#include "ir/infer_int.h"
#include "lang/gc.h"
#include "lang/tensor.h"
#include "lang/tensor_impl.h"

#define RULE(name) static IrType *name(InferCx *cx, IrType **a, int n)
#define UNUSED (void)cx, (void)a, (void)n

static bool is_num(const IrType *t) { return ir_type_is_number(t); }
static bool is_tensor(const IrType *t) { return t->kind == IT_TENSOR; }
static bool is_fn(const IrType *t) {
  return t->kind == IT_CLOSURE || t->kind == IT_FNSET || t->kind == IT_BUILTIN;
}
static bool known_int(const IrType *t) { return t->kind == IT_INT && t->has_val; }
static bool known_bool(const IrType *t) {
  return (t->kind == IT_BOOL || t->kind == IT_INT) && t->has_val;
}

/* Truthiness, when the type decides it: 1 true, 0 false, -1 unknown. */
static int truth(const IrType *t) {
  if (t->kind == IT_NONE) return 0;
  if (known_bool(t)) return t->ival != 0;
  if (is_fn(t) || t->kind == IT_MODULE) return 1;
  if ((t->kind == IT_TUPLE || t->kind == IT_DICT) && t->n >= 0) return t->n > 0;
  if (t->kind == IT_LIST && t->n >= 0) return t->n > 0;
  return -1;
}

static IrType *tensor_like(const IrType *t, int dt) { return ir_type_tensor(dt, t->n, t->dims); }

static IrType *none_tuple(int64_t n) {
  if (n < 0 || n > 64) return &ir_t_any;
  IrType *items[64];
  for (int64_t i = 0; i < n; i++) items[i] = &ir_t_none;
  return ir_type_tuple((int)n, items);
}

/* ---- tensors: dtypes and broadcasting ---- */

/* A Python number's dtype beside a tensor of dtype dt (tensor_ops.c). */
static int scalar_with(int dt, const IrType *s) {
  if (dt < 0) return -1;
  if (s->kind == IT_FLOAT) return lang_dtype_is_float(dt) ? dt : DT_F32;
  if (s->kind == IT_INT) return dt == DT_BOOL ? DT_I64 : dt;
  return dt;
}

/* The dtype op computes in for operands x and y (one a tensor). */
static int binop_dtype(TensorBinop op, const IrType *x, const IrType *y) {
  int dt;
  if (is_tensor(x) && is_tensor(y))
    dt = x->dtype < 0 || y->dtype < 0 ? -1 : (int)lang_dtype_promote(x->dtype, y->dtype);
  else if (is_tensor(x)) dt = scalar_with(x->dtype, y);
  else dt = scalar_with(y->dtype, x);
  if (dt < 0) return -1;
  bool arith = op <= TB_POW;
  if (arith && dt == DT_BOOL) dt = DT_I64;
  if ((op == TB_TRUEDIV || op == TB_ATAN2) && !lang_dtype_is_float(dt)) dt = DT_F32;
  return dt;
}

static bool all_known(const IrType *t) {
  if (t->n < 0) return false;
  for (int i = 0; i < t->n; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* The broadcast shape of x and y (tensors or numbers) as a tensor of
 * dtype dt; never, with the interpreter's error, when they cannot. */
static IrType *broadcast(InferCx *cx, const char *fname, const IrType *x, const IrType *y, int dt) {
  static const IrType scalar = {.kind = IT_TENSOR, .n = 0};
  if (!is_tensor(x)) x = &scalar;
  if (!is_tensor(y)) y = &scalar;
  if (x->n < 0 || y->n < 0) return ir_type_tensor(dt, -1, NULL);
  int nd = x->n > y->n ? x->n : y->n;
  int64_t out[LANG_TENSOR_MAX_DIMS];
  if (all_known(x) && all_known(y)) {
    if (!lang_broadcast_shapes(cx->vm, fname, x->n, x->dims, y->n, y->dims, &nd, out))
      return ir_infer_fail(cx);
    cx->safe = true;
    return ir_type_tensor(dt, nd, out);
  }
  for (int i = 0; i < nd; i++) {
    int64_t p = i < nd - x->n ? 1 : x->dims[i - (nd - x->n)];
    int64_t q = i < nd - y->n ? 1 : y->dims[i - (nd - y->n)];
    if (p >= 0 && q >= 0 && p != q && p != 1 && q != 1) return &ir_t_never;
    out[i] = p == 1 ? q : q == 1 ? p : p >= 0 ? p : q;
  }
  return ir_type_tensor(dt, nd, out);
}

/* op on two operands of which one is a tensor (numbers, tensors, lists) */
static IrType *tensor_binop(InferCx *cx, TensorBinop op, IrType *x, IrType *y) {
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_any;
  if (!(is_tensor(x) || is_num(x)) || !(is_tensor(y) || is_num(y))) return &ir_t_any;
  int dt = binop_dtype(op, x, y);
  if (op >= TB_EQ) dt = DT_BOOL;
  IrType *r = broadcast(cx, lang_tensor_binop_name(op), x, y, dt);
  /* integer division, modulo and powers may fail on the values */
  if (dt < 0 || ((op == TB_FLOORDIV || op == TB_MOD || op == TB_POW) && !lang_dtype_is_float(dt)))
    cx->safe = false;
  return r;
}

/* ---- arithmetic ---- */

static TensorBinop binop_of(int p) {
  switch (p) {
  case IR_P_ADD: return TB_ADD;
  case IR_P_SUB: return TB_SUB;
  case IR_P_MUL: return TB_MUL;
  case IR_P_TRUEDIV: return TB_TRUEDIV;
  case IR_P_FLOORDIV: return TB_FLOORDIV;
  case IR_P_MOD: return TB_MOD;
  case IR_P_POW: return TB_POW;
  case IR_P_EQ: return TB_EQ;
  case IR_P_NE: return TB_NE;
  case IR_P_LT: return TB_LT;
  case IR_P_LE: return TB_LE;
  case IR_P_GT: return TB_GT;
  default: return TB_GE;
  }
}

/* int op int with both known: the value, when it fits. */
static IrType *fold_int(int p, int64_t x, int64_t y) {
  int64_t r;
  switch (p) {
  case IR_P_ADD: if (__builtin_add_overflow(x, y, &r)) return &ir_t_int; break;
  case IR_P_SUB: if (__builtin_sub_overflow(x, y, &r)) return &ir_t_int; break;
  case IR_P_MUL: if (__builtin_mul_overflow(x, y, &r)) return &ir_t_int; break;
  case IR_P_FLOORDIV:
    if (y == 0 || (x == INT64_MIN && y == -1)) return &ir_t_int;
    r = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) r--;
    break;
  case IR_P_MOD:
    if (y == 0 || y == -1) return &ir_t_int;
    r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    break;
  default: return &ir_t_int;
  }
  return ir_type_int_val(r);
}

static IrType *arith(InferCx *cx, int p, IrType *x, IrType *y) {
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_any;
  if (is_tensor(x) || is_tensor(y)) return tensor_binop(cx, binop_of(p), x, y);
  if (is_num(x) && is_num(y)) {
    /* floats add, subtract and multiply without failing; a division may
     * divide by zero, ints may overflow unless their values are known */
    bool plain = p == IR_P_ADD || p == IR_P_SUB || p == IR_P_MUL;
    if (p == IR_P_TRUEDIV) return &ir_t_float;
    if (x->kind == IT_FLOAT || y->kind == IT_FLOAT) {
      cx->safe = plain;
      return &ir_t_float;
    }
    if (p == IR_P_POW) {
      if (known_bool(y)) return y->ival >= 0 ? &ir_t_int : &ir_t_float;
      return &ir_t_any;   /* an int, or a float for a negative power */
    }
    if (known_bool(x) && known_bool(y)) {
      IrType *r = fold_int(p, x->ival, y->ival);
      cx->safe = r->has_val;
      return r;
    }
    /* a counter's step, i + 1, is taken not to overflow (it would pass
     * 2**63 - 1 first), so an error after a loop can be proven */
    cx->safe = (p == IR_P_ADD || p == IR_P_SUB) &&
               ((known_bool(y) && (y->ival == 1 || y->ival == -1)) ||
                (p == IR_P_ADD && known_bool(x) && (x->ival == 1 || x->ival == -1)));
    return &ir_t_int;
  }
  IrType *s = x->kind == IT_STR ? x : y;
  IrType *o = s == x ? y : x;
  if (s->kind == IT_STR) {
    if (p == IR_P_ADD && o->kind == IT_STR) return cx->safe = true, &ir_t_str;
    if (p == IR_P_MUL && (o->kind == IT_INT || o->kind == IT_BOOL)) return &ir_t_str;
    if (p == IR_P_MOD && s == x) return &ir_t_str;
    return &ir_t_never;
  }
  if (p == IR_P_ADD && x->kind == y->kind && (x->kind == IT_TUPLE || x->kind == IT_LIST)) {
    cx->safe = true;
    if (x->n >= 0 && y->n >= 0 && x->n + y->n <= 64) {
      IrType *items[128];
      if (x->n) memcpy(items, x->items, (size_t)x->n * sizeof *items);   /* (no items: maybe NULL) */
      if (y->n) memcpy(items + x->n, y->items, (size_t)y->n * sizeof *items);
      return x->kind == IT_TUPLE ? ir_type_tuple(x->n + y->n, items) : ir_type_list(x->n + y->n, items);
    }
    if (x->kind == IT_TUPLE) return &ir_t_any;
    IrType *item = &ir_t_never;
    for (int i = 0; i < (x->n < 0 ? 1 : x->n); i++) item = ir_type_join(item, x->items[i]);
    for (int i = 0; i < (y->n < 0 ? 1 : y->n); i++) item = ir_type_join(item, y->items[i]);
    return ir_type_list(-1, &item);
  }
  if (p == IR_P_MUL && ((x->kind == IT_LIST && is_num(y)) || (y->kind == IT_LIST && is_num(x)))) {
    IrType *l = x->kind == IT_LIST ? x : y, *item = &ir_t_never;
    for (int i = 0; i < (l->n < 0 ? 1 : l->n); i++) item = ir_type_join(item, l->items[i]);
    return ir_type_list(-1, &item);
  }
  return &ir_t_any;
}

RULE(r_add) { (void)n; return arith(cx, IR_P_ADD, a[0], a[1]); }
RULE(r_sub) { (void)n; return arith(cx, IR_P_SUB, a[0], a[1]); }
RULE(r_mul) { (void)n; return arith(cx, IR_P_MUL, a[0], a[1]); }
RULE(r_truediv) { (void)n; return arith(cx, IR_P_TRUEDIV, a[0], a[1]); }
RULE(r_floordiv) { (void)n; return arith(cx, IR_P_FLOORDIV, a[0], a[1]); }
RULE(r_mod) { (void)n; return arith(cx, IR_P_MOD, a[0], a[1]); }
RULE(r_pow) { (void)n; return arith(cx, IR_P_POW, a[0], a[1]); }

static IrType *matmul(InferCx *cx, IrType *x, IrType *y) {
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_any;
  if (!is_tensor(x) || !is_tensor(y)) return &ir_t_any;
  int dt = x->dtype < 0 || y->dtype < 0 ? -1 : (int)lang_dtype_promote(x->dtype, y->dtype);
  if (dt == DT_BOOL) dt = DT_I64;
  if (x->n < 0 || y->n < 0) return ir_type_tensor(dt, -1, NULL);
  int64_t out[LANG_TENSOR_MAX_DIMS];
  int nd;
  if (all_known(x) && all_known(y)) {
    if (!lang_matmul_shape(cx->vm, x->n, x->dims, y->n, y->dims, &nd, out)) return ir_infer_fail(cx);
    cx->safe = dt >= 0;
    return ir_type_tensor(dt, nd, out);
  }
  if (x->n == 0 || y->n == 0) return &ir_t_never;
  /* with unknown dims: the shape's rank, and the dims that are known */
  int xb = x->n > 2 ? x->n - 2 : 0, yb = y->n > 2 ? y->n - 2 : 0, nb = xb > yb ? xb : yb;
  int64_t k1 = x->dims[x->n - 1], k2 = y->n == 1 ? y->dims[0] : y->dims[y->n - 2];
  if (k1 >= 0 && k2 >= 0 && k1 != k2) return &ir_t_never;
  nd = 0;
  for (int i = 0; i < nb; i++) out[nd++] = -1;
  if (x->n > 1) out[nd++] = x->dims[x->n - 2];
  if (y->n > 1) out[nd++] = y->dims[y->n - 1];
  return ir_type_tensor(dt, nd, out);
}

RULE(r_matmul) {
  (void)n;
  if (is_num(a[0]) || is_num(a[1])) return &ir_t_never;
  return matmul(cx, a[0], a[1]);
}

RULE(r_neg) {
  UNUSED;
  IrType *x = a[0];
  if (known_bool(x) && x->ival != INT64_MIN) return cx->safe = true, ir_type_int_val(-x->ival);
  if (x->kind == IT_BOOL || x->kind == IT_INT) return &ir_t_int;
  cx->safe = x->kind == IT_FLOAT || (is_tensor(x) && x->dtype >= 0 && x->dtype != DT_BOOL);
  if (is_tensor(x) && x->dtype == DT_BOOL) return tensor_like(x, DT_I64);   /* -bools: i64, as eager mode */
  if (x->kind == IT_FLOAT || is_tensor(x)) return x;
  return x->kind == IT_ANY ? x : &ir_t_any;
}

RULE(r_pos) {
  UNUSED;
  IrType *x = a[0];
  cx->safe = is_num(x) || is_tensor(x);
  if (x->kind == IT_BOOL) return x->has_val ? ir_type_int_val(x->ival) : &ir_t_int;
  if (x->kind == IT_INT || x->kind == IT_FLOAT || is_tensor(x)) return x;
  return &ir_t_any;
}

RULE(r_not) {
  UNUSED;
  int t = truth(a[0]);
  cx->safe = !is_tensor(a[0]) && a[0]->kind != IT_ANY;
  if (is_tensor(a[0])) return &ir_t_any;   /* a tensor's truth may raise */
  return t < 0 ? &ir_t_bool : ir_type_bool_val(!t);
}

RULE(r_truth) {
  UNUSED;
  int t = truth(a[0]);
  cx->safe = !is_tensor(a[0]) && a[0]->kind != IT_ANY;
  return t < 0 ? &ir_t_bool : ir_type_bool_val(t);
}

static IrType *compare(InferCx *cx, int p, IrType *x, IrType *y) {
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_any;
  if (is_tensor(x) || is_tensor(y)) return tensor_binop(cx, binop_of(p), x, y);
  /* == and != never fail; an order between numbers or between strs does not */
  cx->safe = p == IR_P_EQ || p == IR_P_NE || (is_num(x) && is_num(y)) ||
             (x->kind == IT_STR && y->kind == IT_STR);
  if (known_bool(x) && known_bool(y)) {
    int64_t u = x->ival, v = y->ival;
    bool r = p == IR_P_EQ ? u == v : p == IR_P_NE ? u != v : p == IR_P_LT ? u < v
           : p == IR_P_LE ? u <= v : p == IR_P_GT ? u > v : u >= v;
    return ir_type_bool_val(r);
  }
  return &ir_t_bool;
}

RULE(r_eq) { (void)n; return compare(cx, IR_P_EQ, a[0], a[1]); }
RULE(r_ne) { (void)n; return compare(cx, IR_P_NE, a[0], a[1]); }
RULE(r_lt) { (void)n; return compare(cx, IR_P_LT, a[0], a[1]); }
RULE(r_le) { (void)n; return compare(cx, IR_P_LE, a[0], a[1]); }
RULE(r_gt) { (void)n; return compare(cx, IR_P_GT, a[0], a[1]); }
RULE(r_ge) { (void)n; return compare(cx, IR_P_GE, a[0], a[1]); }

/* is: decided when one side is None and the other is known to be or
 * not to be None */
static IrType *identity(IrType *x, IrType *y, bool is) {
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_bool;
  if (x->kind == IT_NONE && y->kind == IT_NONE) return ir_type_bool_val(is);
  if ((x->kind == IT_NONE) != (y->kind == IT_NONE)) return ir_type_bool_val(!is);
  return &ir_t_bool;
}

RULE(r_is) { UNUSED; cx->safe = true; return identity(a[0], a[1], true); }
RULE(r_is_not) { UNUSED; cx->safe = true; return identity(a[0], a[1], false); }
RULE(r_contains) { UNUSED; return &ir_t_bool; }

/* ---- structures ---- */

RULE(r_make_tuple) {
  cx->safe = true;
  return n > 64 ? &ir_t_any : ir_type_tuple(n, a);
}

RULE(r_make_list) {
  cx->safe = true;
  if (n <= 64) return ir_type_list(n, a);
  IrType *item = &ir_t_never;
  for (int i = 0; i < n; i++) item = ir_type_join(item, a[i]);
  return ir_type_list(-1, &item);
}

RULE(r_make_dict) {
  (void)cx;
  if (n % 2 || n / 2 > 64) return &ir_t_any;
  ObjStr *keys[64];
  IrType *vals[64];
  int k = 0;
  for (int i = 0; i < n; i += 2) {
    if (a[i]->kind != IT_STR) return a[i]->kind == IT_ANY ? &ir_t_any : &ir_t_never;
    if (!a[i]->sval) return &ir_t_any;
    int j = 0;
    while (j < k && !lang_str_eq(keys[j], a[i]->sval)) j++;
    keys[j] = a[i]->sval;
    vals[j] = a[i + 1];
    if (j == k) k++;
  }
  cx->safe = true;
  return ir_type_dict(k, keys, vals);
}

static IrType *items_join(const IrType *t) {
  IrType *r = &ir_t_never;
  for (int i = 0; i < (t->n < 0 ? 1 : t->n); i++) r = ir_type_join(r, t->items[i]);
  return r;
}

/* t[i] of a tensor: i an int, a slice, None or a tuple of them */
static IrType *tensor_index(const IrType *t, const IrType *i, bool *safe) {
  *safe = false;
  if (t->n < 0) return ir_type_tensor(t->dtype, -1, NULL);
  bool sure = true;   /* every int index known and in range */
  const IrType *const *idx = (const IrType *const *)&i;
  int ni = 1;
  if (i->kind == IT_TUPLE) {
    idx = (const IrType *const *)i->items;
    ni = i->n;
  }
  int64_t out[LANG_TENSOR_MAX_DIMS];
  int nd = 0, axis = 0;
  for (int k = 0; k < ni; k++) {
    const IrType *x = idx[k];
    if (x->kind == IT_NONE) {
      if (nd == LANG_TENSOR_MAX_DIMS) return &ir_t_any;
      out[nd++] = 1;
      continue;
    }
    if (axis >= t->n) return x->kind == IT_INT || x->kind == IT_SLICE ? &ir_t_never : &ir_t_any;
    if (x->kind == IT_INT || x->kind == IT_BOOL) {
      if (x->kind == IT_BOOL) return &ir_t_any;
      int64_t d = t->dims[axis];
      if (x->has_val && d >= 0 && (x->ival >= d || x->ival < -d)) return &ir_t_never;
      sure &= x->has_val && d >= 0;
      axis++;
    } else if (x->kind == IT_SLICE) {
      int64_t first, step, k = ir_type_slice_count(x, t->dims[axis], &first, &step);
      out[nd++] = k;   /* -1 when the slice or the dim is not known */
      sure &= k >= 0;
      axis++;
    } else {
      /* an array index, Ellipsis, a bool mask: the rank is not known here */
      return ir_type_tensor(t->dtype, -1, NULL);
    }
  }
  while (axis < t->n && nd < LANG_TENSOR_MAX_DIMS) out[nd++] = t->dims[axis++];
  *safe = sure;
  return ir_type_tensor(t->dtype, nd, out);
}

static IrType *getitem(InferCx *cx, IrType *x, IrType *i) {
  if (x->kind == IT_ANY || i->kind == IT_ANY) return &ir_t_any;
  switch (x->kind) {
  case IT_TUPLE: case IT_LIST:
    if (i->kind == IT_SLICE) {
      int64_t first, step, k = x->n >= 0 ? ir_type_slice_count(i, x->n, &first, &step) : -1;
      if (k >= 0 && k <= 64) {
        /* the items it takes */
        IrType *items[64];
        for (int64_t j = 0; j < k; j++) items[j] = x->items[first + j * step];
        cx->safe = true;
        return x->kind == IT_TUPLE ? ir_type_tuple((int)k, items) : ir_type_list((int)k, items);
      }
      if (x->kind == IT_TUPLE) return &ir_t_any;
      IrType *item = items_join(x);
      return ir_type_list(-1, &item);
    }
    if (i->kind != IT_INT && i->kind != IT_BOOL) return &ir_t_never;
    if (x->n < 0) return x->items[0];
    if (i->has_val) {
      int64_t k = i->ival < 0 ? i->ival + x->n : i->ival;
      cx->safe = k >= 0 && k < x->n;
      return k >= 0 && k < x->n ? x->items[k] : &ir_t_never;
    }
    return x->n ? items_join(x) : &ir_t_never;
  case IT_DICT:
    if (i->kind != IT_STR) return &ir_t_never;
    if (i->sval) {
      for (int k = 0; k < x->n; k++)
        if (lang_str_eq(x->keys[k], i->sval)) return cx->safe = true, x->items[k];
      return &ir_t_never;
    }
    return x->n ? items_join(x) : &ir_t_never;
  case IT_STR: return i->kind == IT_INT || i->kind == IT_SLICE ? &ir_t_str : &ir_t_never;
  case IT_RANGE: return i->kind == IT_INT || i->kind == IT_BOOL ? &ir_t_int : i->kind == IT_SLICE ? x : &ir_t_never;
  case IT_TENSOR: return tensor_index(x, i, &cx->safe);
  case IT_NONE: return &ir_t_never;
  default: return &ir_t_any;
  }
}

RULE(r_getitem) { (void)n; return getitem(cx, a[0], a[1]); }

RULE(r_setitem) {
  UNUSED;
  IrType *x = a[0], *i = a[1], *v = a[2];
  if (x->kind == IT_ANY) return x;
  if (x->kind == IT_TUPLE || x->kind == IT_LIST) {
    if (x->kind == IT_TUPLE) return &ir_t_never;   /* tuples cannot be updated */
    if (i->kind != IT_INT) return &ir_t_any;
    if (x->n >= 0 && i->has_val) {
      int64_t k = i->ival < 0 ? i->ival + x->n : i->ival;
      if (k < 0 || k >= x->n) return &ir_t_never;
      IrType **items = lang_alloc((size_t)x->n * sizeof *items);
      memcpy(items, x->items, (size_t)x->n * sizeof *items);
      items[k] = v;
      cx->safe = true;
      return ir_type_list(x->n, items);
    }
    if (x->n >= 0) {
      IrType **items = lang_alloc((size_t)(x->n ? x->n : 1) * sizeof *items);
      for (int k = 0; k < x->n; k++) items[k] = ir_type_join(x->items[k], v);
      return ir_type_list(x->n, items);
    }
    IrType *item = ir_type_join(x->items[0], v);
    return ir_type_list(-1, &item);
  }
  if (x->kind == IT_DICT && i->kind == IT_STR && i->sval && x->n < 64) {
    ObjStr *keys[64];
    IrType *vals[64];
    if (x->n) {   /* {} has no keys */
      memcpy(keys, x->keys, (size_t)x->n * sizeof *keys);
      memcpy(vals, x->items, (size_t)x->n * sizeof *vals);
    }
    int k = 0;
    while (k < x->n && !lang_str_eq(keys[k], i->sval)) k++;
    keys[k] = i->sval;
    vals[k] = v;
    cx->safe = true;
    return ir_type_dict(k == x->n ? x->n + 1 : x->n, keys, vals);
  }
  if (is_tensor(x)) return x;
  return &ir_t_any;
}

RULE(r_slice) {
  UNUSED;
  cx->safe = true;
  int64_t d[3];
  bool known = n == 3;
  for (int i = 0; i < n; i++) {
    cx->safe &= a[i]->kind == IT_INT || a[i]->kind == IT_NONE;
    if (a[i]->kind == IT_NONE) d[i] = IR_SLICE_NONE;
    else if (known_int(a[i]) && a[i]->ival != IR_SLICE_NONE) d[i] = a[i]->ival;
    else known = false;
  }
  return known ? ir_type_slice_val(d[0], d[1], d[2]) : &ir_t_slice;
}

RULE(r_unpack) {
  UNUSED;
  IrType *x = a[0], *k = a[1];
  if (!known_int(k) || k->ival < 0 || k->ival > 64) return &ir_t_any;
  int m = (int)k->ival;
  IrType *items[64];
  switch (x->kind) {
  case IT_TUPLE: case IT_LIST:
    if (x->n >= 0) {
      if (x->n != m) return &ir_t_never;
      cx->safe = true;
      return ir_type_tuple(m, x->items);
    }
    for (int i = 0; i < m; i++) items[i] = x->items[0];
    return ir_type_tuple(m, items);
  case IT_TENSOR: {
    if (x->n == 0) return &ir_t_never;
    if (x->n > 0 && x->dims[0] >= 0 && x->dims[0] != m) return &ir_t_never;
    IrType *row = x->n < 0 ? ir_type_tensor(x->dtype, -1, NULL) : ir_type_tensor(x->dtype, x->n - 1, x->dims + 1);
    for (int i = 0; i < m; i++) items[i] = row;
    return ir_type_tuple(m, items);
  }
  case IT_NONE: case IT_INT: case IT_FLOAT: case IT_BOOL: return &ir_t_never;
  default:
    for (int i = 0; i < m; i++)
      items[i] = x->kind == IT_STR ? &ir_t_str : x->kind == IT_RANGE ? &ir_t_int : &ir_t_any;
    return ir_type_tuple(m, items);
  }
}

RULE(r_len) {
  UNUSED;
  IrType *x = a[0];
  if ((x->kind == IT_TUPLE || x->kind == IT_LIST || x->kind == IT_DICT) && x->n >= 0)
    return cx->safe = true, ir_type_int_val(x->n);
  if (is_tensor(x)) {
    if (x->n == 0) return &ir_t_never;
    cx->safe = x->n > 0;
    return x->n > 0 && x->dims[0] >= 0 ? ir_type_int_val(x->dims[0]) : &ir_t_int;
  }
  if (is_num(x) || x->kind == IT_NONE) return &ir_t_never;
  return &ir_t_int;
}

RULE(r_iter_seq) {
  UNUSED;
  IrType *x = a[0];
  cx->safe = x->kind == IT_DICT || x->kind == IT_TUPLE || x->kind == IT_LIST || x->kind == IT_STR ||
             x->kind == IT_RANGE || is_tensor(x);
  if (x->kind == IT_DICT) {
    IrType *items[64];
    for (int i = 0; i < x->n; i++) items[i] = ir_type_str_val(x->keys[i]);
    return ir_type_list(x->n, items);
  }
  if (x->kind == IT_TUPLE || x->kind == IT_LIST || x->kind == IT_STR || x->kind == IT_RANGE || is_tensor(x))
    return x;
  if (is_num(x) || x->kind == IT_NONE) return &ir_t_never;
  return &ir_t_any;
}

RULE(r_str) { UNUSED; return &ir_t_str; }
RULE(r_str_safe) { UNUSED; cx->safe = true; return &ir_t_str; }

/* ---- control and functions ---- */

RULE(r_switch) {
  UNUSED;
  cx->safe = true;
  int t = truth(a[0]);
  if (t >= 0) return t ? a[1] : a[2];
  return ir_type_join(a[1], a[2]);
}

RULE(r_call_kw) {
  IrType *names = a[1];
  if (names->kind != IT_TUPLE) return &ir_t_any;
  int nkw = names->n, npos = n - 2 - nkw;
  if (npos < 0) return &ir_t_never;
  ObjStr **kw = lang_alloc((size_t)(nkw ? nkw : 1) * sizeof *kw);
  for (int i = 0; i < nkw; i++) {
    if (names->items[i]->kind != IT_STR || !names->items[i]->sval) return &ir_t_any;
    kw[i] = names->items[i]->sval;
  }
  return ir_infer_call(cx, a[0], npos, a + 2, nkw, kw, a + 2 + npos);
}

static IrType *attr_type(InferCx *cx, IrType *x, ObjStr *name, bool *bound);

RULE(r_getattr) {
  (void)n;
  if (a[1]->kind != IT_STR || !a[1]->sval) return &ir_t_any;
  bool bound;
  return attr_type(cx, a[0], a[1]->sval, &bound);
}

RULE(r_call_method) {
  if (n < 2 || a[1]->kind != IT_STR || !a[1]->sval) return &ir_t_any;
  bool bound;
  IrType *m = attr_type(cx, a[0], a[1]->sval, &bound);
  if (!bound) return m->kind == IT_NEVER ? m : &ir_t_any;
  return ir_infer_call(cx, m, n - 2, a + 2, 0, NULL, NULL);
}

RULE(r_global) {
  (void)n;
  if (a[0]->kind != IT_STR || !a[0]->sval) return &ir_t_any;
  IrType *t = ir_infer_global(cx, a[0]->sval);
  cx->safe = t->kind != IT_ANY;   /* bound to a value (an unbound one raises) */
  return t;
}

RULE(r_set_global) { UNUSED; cx->safe = true; return a[1]; }
RULE(r_import) { UNUSED; return &ir_t_module; }
RULE(r_never) { UNUSED; return &ir_t_never; }

RULE(r_check_bound) {
  UNUSED;
  cx->safe = !a[0]->or_unbound && a[0]->kind != IT_ANY;
  return a[0]->kind == IT_UNBOUND ? &ir_t_never : ir_type_strip_unbound(a[0]);
}

/* ---- autodiff ---- */

static IrType *gadd(InferCx *cx, IrType *x, IrType *y) {
  cx->safe = true;
  if (x->kind == IT_NONE) return y;
  if (y->kind == IT_NONE) return x;
  /* an item that may be None (a key of an env or an item of a tuple
   * only some paths give a sensitivity): the sum with it as None, and
   * with it as the rest (the rule's row handles this only at the top) */
  if (x->or_none || y->or_none) {
    IrType *xs = x->or_none ? ir_type_strip_none(x) : x, *ys = y->or_none ? ir_type_strip_none(y) : y;
    IrType *r = gadd(cx, xs, ys);
    if (x->or_none) r = ir_type_join(r, y);
    if (y->or_none) r = ir_type_join(r, x);
    cx->safe = false;
    return r;
  }
  cx->safe = false;
  if (x->kind == IT_ANY || y->kind == IT_ANY) return &ir_t_any;
  if (x->kind == y->kind && (x->kind == IT_TUPLE || x->kind == IT_LIST) && x->n == y->n && x->n >= 0) {
    IrType **items = lang_alloc((size_t)(x->n ? x->n : 1) * sizeof *items);
    bool safe = true;
    for (int i = 0; i < x->n; i++) {
      items[i] = gadd(cx, x->items[i], y->items[i]);
      safe &= cx->safe;
    }
    cx->safe = safe;
    return x->kind == IT_TUPLE ? ir_type_tuple(x->n, items) : ir_type_list(x->n, items);
  }
  if (x->kind == IT_ENV && y->kind == IT_ENV) {
    IrType *j = ir_type_join(x, y);   /* the union of the keys */
    if (j->kind != IT_ENV) return &ir_t_any;
    /* a new type: types are shared, never changed */
    IrType **items = lang_alloc((size_t)(j->n ? j->n : 1) * sizeof *items);
    for (int i = 0; i < j->n; i++) {
      IrType *p = &ir_t_none, *q = &ir_t_none;
      for (int k = 0; k < x->n; k++)
        if (x->ekeys[k] == j->ekeys[i]) p = x->items[k];
      for (int k = 0; k < y->n; k++)
        if (y->ekeys[k] == j->ekeys[i]) q = y->items[k];
      items[i] = gadd(cx, p, q);
    }
    cx->safe = false;
    return ir_type_env(j->n, j->ekeys, items);
  }
  if (x->kind == IT_DICT || x->kind == IT_ENV || y->kind == IT_ENV) return &ir_t_any;
  if (is_tensor(x) && is_tensor(y) && ir_type_eq(x, y)) return cx->safe = all_known(x), x;
  /* a tensor sensitivity and its float or tensor parts add as numbers */
  IrType *r = arith(cx, IR_P_ADD, x, y);
  return r;
}

RULE(r_gadd) { (void)n; return gadd(cx, a[0], a[1]); }

RULE(r_env_get) {
  UNUSED;
  cx->safe = true;
  IrType *e = a[0], *k = a[1];
  if (e->kind == IT_NONE) return &ir_t_none;
  if (e->kind != IT_ENV || !known_int(k)) return &ir_t_any;
  for (int i = 0; i < e->n; i++)
    if (e->ekeys[i] == k->ival) return e->items[i];
  return &ir_t_none;
}

static IrType *env_with(InferCx *cx, IrType *e, IrType *k, IrType *v) {
  cx->safe = true;
  if (v->kind == IT_NONE) return e;
  if (!known_int(k) || (e->kind != IT_NONE && e->kind != IT_ENV)) return &ir_t_any;
  IrType *one = ir_type_env(1, &k->ival, &v);
  cx->safe = e->kind == IT_NONE;
  return e->kind == IT_NONE ? one : gadd(cx, e, one);
}

RULE(r_env_set) { (void)n; return env_with(cx, a[0], a[1], a[2]); }

RULE(r_make_env) {
  if (n % 2) return &ir_t_never;
  IrType *e = &ir_t_none;
  bool safe = true;
  for (int i = 0; i < n; i += 2) {
    if (a[i + 1]->kind == IT_ANY) {
      /* present or not: under its key, any */
      if (!known_int(a[i])) return &ir_t_any;
      e = env_with(cx, e, a[i], a[i + 1]);
      safe &= cx->safe;
      continue;
    }
    e = env_with(cx, e, a[i], a[i + 1]);
    safe &= cx->safe;
    if (e->kind == IT_ANY) return e;
  }
  cx->safe = safe;
  return e;
}

/* Whether every value of type t is data that holds no function: its
 * own J and F (autodiff's ad_map_functions gives such a value back as
 * it is), so a dict of parameters keeps its type under grad. */
static bool no_function(const IrType *t) {
  if (is_num(t) || is_tensor(t) || t->kind == IT_NONE || t->kind == IT_STR) return true;
  if (t->kind != IT_TUPLE && t->kind != IT_LIST && t->kind != IT_DICT) return false;
  int m = t->kind == IT_LIST && t->n < 0 ? 1 : t->n;
  for (int i = 0; i < m; i++)
    if (!no_function(t->items[i])) return false;
  return true;
}

/* J or F of a value: what the transform gives, for a function that
 * captures nothing or a builtin (the transform is made now, as the
 * interpreter would make it, and cached by autodiff); non-functions are
 * their own transform. */
static IrType *transform(InferCx *cx, IrType *f, int kind) {
  Value v, out;
  ObjFunc *fn = ir_infer_closure_object(cx, f);
  if (fn) {
    v = v_obj(fn);
  } else if (f->kind == IT_BUILTIN && f->n == 0 && f->builtin->fn) {
    v = v_obj(f->builtin);
  } else if (no_function(f)) {
    return f;
  } else {
    return &ir_t_any;
  }
  if (!ir_infer_transform(cx, kind, v, 0, false, &out)) return &ir_t_any;
  /* a builtin without a wrapper graph transforms to a new builtin object
   * on every call (autodiff/builtins.c, shaped_value): typed by its
   * identity, the one made here is never the one the program makes */
  if (v_is_obj(out, O_BUILTIN) && !(v_is_obj(v, O_BUILTIN) && AS_BUILTIN(out) == AS_BUILTIN(v))) return &ir_t_any;
  return ir_infer_value(cx, out);
}

RULE(r_J) {
  (void)n;
  IrType *t = transform(cx, a[0], IR_P_J);
  cx->safe = t->kind != IT_ANY;
  return t;
}

RULE(r_F) {
  (void)n;
  IrType *t = transform(cx, a[0], IR_P_F);
  cx->safe = t->kind != IT_ANY;
  return t;
}
/* jmask(f, mask, x1..xn): J(f) for a mask of parameters, made for
 * float arguments when the xi are all floats */
RULE(r_jmask) {
  IrType *f = a[0];
  ObjFunc *fn = ir_infer_closure_object(cx, f);
  if (n < 2 || !known_int(a[1]) || !fn) return &ir_t_any;
  bool floats = n > 2;
  for (int i = 2; i < n; i++) {
    if (a[i]->kind == IT_ANY) return &ir_t_any;
    floats &= a[i]->kind == IT_FLOAT;
  }
  Value out;
  if (!ir_infer_transform(cx, IR_P_JMASK, v_obj(fn), a[1]->ival, floats, &out)) return &ir_t_any;
  cx->safe = true;
  return ir_infer_value(cx, out);
}

RULE(r_bp_call) {
  (void)n;
  IrType *bp = a[0], *d = a[1];
  if (d->kind == IT_NONE || bp->kind == IT_NONE) {
    cx->safe = known_int(a[2]);
    return known_int(a[2]) ? none_tuple(a[2]->ival) : &ir_t_any;
  }
  IrType *r = ir_infer_call(cx, bp, 1, &d, 0, NULL, NULL);
  if (d->kind == IT_ANY || bp->kind == IT_ANY) return &ir_t_any;
  return r;
}

RULE(r_bp_call_j) {
  IrType *bp = a[0], *d = a[1];
  int m = n - 3;
  if (d->kind == IT_NONE || bp->kind == IT_NONE) {
    if (!known_int(a[2])) return &ir_t_any;
    IrType *r = none_tuple(a[2]->ival);
    for (int i = 0; i < m; i++) {
      IrType *pair[2] = {r, &ir_t_none};
      r = ir_type_tuple(2, pair);
    }
    return r;
  }
  IrType **args = lang_alloc((size_t)(m + 1) * sizeof *args);
  memcpy(args, a + 3, (size_t)m * sizeof *args);
  args[m] = d;
  IrType *r = ir_infer_call(cx, bp, m + 1, args, 0, NULL, NULL);
  return d->kind == IT_ANY || bp->kind == IT_ANY ? &ir_t_any : r;
}

RULE(r_sens_item) {
  (void)n;
  if (a[0]->kind == IT_NONE) return cx->safe = true, &ir_t_none;
  if (a[0]->kind == IT_TUPLE || a[0]->kind == IT_LIST || a[0]->kind == IT_DICT) {
    IrType *r = getitem(cx, a[0], a[1]);
    if (r->kind == IT_NEVER) return &ir_t_none;
    /* a dict's sensitivity may lack a key (p_sens_item gives None) */
    return a[0]->kind == IT_DICT ? ir_type_or_none(r) : r;
  }
  return &ir_t_any;
}

static IrType *sens_at_type(IrType *x, IrType *i, IrType *d) {
  if (d->kind == IT_NONE) return &ir_t_none;
  if ((x->kind == IT_TUPLE || x->kind == IT_LIST) && x->n >= 0 && known_int(i)) {
    int64_t k = i->ival < 0 ? i->ival + x->n : i->ival;
    if (k < 0 || k >= x->n) return &ir_t_any;
    IrType **items = lang_alloc((size_t)x->n * sizeof *items);
    for (int j = 0; j < x->n; j++) items[j] = j == k ? d : &ir_t_none;
    return x->kind == IT_TUPLE ? ir_type_tuple(x->n, items) : ir_type_list(x->n, items);
  }
  if (is_tensor(x) && x->dtype >= 0 && lang_dtype_is_float(x->dtype)) return x;
  return &ir_t_any;
}

RULE(r_sens_at) {
  UNUSED;
  IrType *r = sens_at_type(a[0], a[1], a[2]);
  /* a d typed `any` may be None, which gives None */
  return a[2]->kind == IT_ANY && r->kind != IT_ANY ? ir_type_or_none(r) : r;
}

RULE(r_sens_like) {
  UNUSED;
  IrType *x = a[0], *d = a[1];
  if (x->kind == IT_LIST && d->kind == IT_TUPLE) return ir_type_list(d->n, d->items);
  if (d->kind == IT_NONE || (x->kind == IT_TUPLE && d->kind == IT_TUPLE)) return d;
  return &ir_t_any;
}

/* zero shaped like x: 0.0 for a number, zeros of a float tensor, and so
 * for each leaf of a tuple or list */
static IrType *zero_like(IrType *x) {
  if (is_num(x)) return &ir_t_float;
  if (is_tensor(x)) return x;
  if ((x->kind == IT_TUPLE || x->kind == IT_LIST) && x->n >= 0) {
    IrType **items = lang_alloc((size_t)(x->n ? x->n : 1) * sizeof *items);
    for (int i = 0; i < x->n; i++) items[i] = zero_like(x->items[i]);
    return x->kind == IT_TUPLE ? ir_type_tuple(x->n, items) : ir_type_list(x->n, items);
  }
  if (x->kind == IT_NONE) return &ir_t_none;
  return &ir_t_any;
}

RULE(r_zeros_like) {
  UNUSED;
  IrType *t = zero_like(a[0]);
  cx->safe = t->kind != IT_ANY;
  return t;
}

RULE(r_seed) {
  UNUSED;
  if (a[0]->kind == IT_FLOAT) return cx->safe = true, &ir_t_float;
  if (is_tensor(a[0])) {
    if (a[0]->dtype >= 0 && !lang_dtype_is_float(a[0]->dtype)) return &ir_t_never;
    return a[0];
  }
  if (a[0]->kind == IT_ANY) return &ir_t_any;
  return &ir_t_never;
}

RULE(r_identity) { UNUSED; cx->safe = true; return a[0]; }

RULE(r_check_diff) {
  UNUSED;
  IrTypeKind k = a[0]->kind;
  if (k == IT_INT || k == IT_BOOL || k == IT_STR) return &ir_t_never;
  if (is_tensor(a[0]) && a[0]->dtype >= 0 && !lang_dtype_is_float(a[0]->dtype)) return &ir_t_never;
  cx->safe = k == IT_FLOAT || (is_tensor(a[0]) && a[0]->dtype >= 0);
  return a[0];
}

RULE(r_float_arg) {
  UNUSED;
  cx->safe = a[0]->kind == IT_FLOAT;
  if (a[0]->kind == IT_FLOAT || a[0]->kind == IT_ANY) return &ir_t_float;
  return &ir_t_never;
}

RULE(r_sens_without) {
  UNUSED;
  IrType *d = a[0], *i = a[1];
  if (d->kind == IT_NONE) return d;
  if ((d->kind == IT_TUPLE || d->kind == IT_LIST) && d->n >= 0 && known_int(i)) {
    int64_t k = i->ival < 0 ? i->ival + d->n : i->ival;
    IrType **items = lang_alloc((size_t)(d->n ? d->n : 1) * sizeof *items);
    for (int j = 0; j < d->n; j++) items[j] = j == k ? &ir_t_none : d->items[j];
    return d->kind == IT_TUPLE ? ir_type_tuple(d->n, items) : ir_type_list(d->n, items);
  }
  if (is_tensor(d) && d->dtype >= 0 && lang_dtype_is_float(d->dtype)) return d;
  return &ir_t_any;
}

RULE(r_rekey_env) {
  UNUSED;
  return a[1]->kind == IT_NONE ? &ir_t_none : &ir_t_any;
}

RULE(r_no_derivative) {
  UNUSED;
  return a[0]->kind == IT_NONE ? &ir_t_none : a[0]->kind == IT_ANY ? &ir_t_any : &ir_t_never;
}

RULE(r_tan_item) {
  UNUSED;
  IrType *t = a[0], *i = a[1];
  if (t->kind == IT_NONE) return t;
  if (t->kind == IT_TUPLE && known_int(i)) return i->ival >= 0 && i->ival < t->n ? t->items[i->ival] : &ir_t_none;
  return &ir_t_any;
}

RULE(r_tan_tuple) {
  UNUSED;
  IrType *t = a[0];
  if (t->kind == IT_LIST) return t->n >= 0 ? ir_type_tuple(t->n, t->items) : &ir_t_any;
  return t->kind == IT_ANY ? t : t;
}

/* cons_list(acc, 0): the chain (e_n, (... (e_1, None))) as a list */
RULE(r_cons_list) {
  UNUSED;
  if (!known_int(a[1]) || a[1]->ival != 0) return &ir_t_any;
  IrType *items[64];
  int k = 0;
  IrType *c = a[0];
  while (c->kind == IT_TUPLE && c->n == 2 && k < 64) {
    items[k++] = c->items[0];
    c = c->items[1];
  }
  if (c->kind != IT_NONE) {
    IrType *item = &ir_t_any;
    return ir_type_list(-1, &item);
  }
  for (int i = 0; i < k / 2; i++) {
    IrType *t = items[i];
    items[i] = items[k - 1 - i];
    items[k - 1 - i] = t;
  }
  return ir_type_list(k, items);
}

RULE(r_cons_sens) { UNUSED; return a[0]->kind == IT_NONE ? &ir_t_none : &ir_t_any; }

/* The sensitivity of one argument of an operation: None for a zero
 * sensitivity or an argument that has none (an int, bool or str), else
 * shaped like the argument (and of its dtype, where d's is the same or
 * d is a number). */
static IrType *sens_like_arg(const IrType *d, const IrType *x) {
  if (d->kind == IT_NONE) return &ir_t_none;
  if (x->kind == IT_INT || x->kind == IT_BOOL || x->kind == IT_STR || x->kind == IT_NONE) return &ir_t_none;
  if (d->kind == IT_ANY || x->kind == IT_ANY) return &ir_t_any;
  if (x->kind == IT_FLOAT) return &ir_t_float;
  /* (a sensitivity of another dtype than x's computes in the wider) */
  if (is_tensor(x) && x->dtype >= 0 && lang_dtype_is_float(x->dtype) && !(is_tensor(d) && d->dtype != x->dtype))
    return (IrType *)x;
  return &ir_t_any;
}

/* safe for a zero or between floats (tensors may not fit each other) */
static IrType *sens_result(InferCx *cx, IrType *d, IrType *t) {
  cx->safe = t->kind == IT_NONE || (t->kind == IT_FLOAT && d->kind == IT_FLOAT);
  return t;
}

RULE(r_binary_sens) {
  UNUSED;
  if (!known_int(a[3]) || (a[3]->ival != 0 && a[3]->ival != 1)) return &ir_t_any;
  return sens_result(cx, a[0], sens_like_arg(a[0], a[1 + a[3]->ival]));
}

/* pow_sens(d, x, y, 0) is None for an int y of 0 (x ** 0 is 1) */
RULE(r_pow_sens) {
  IrType *t = r_binary_sens(cx, a, n);
  if (n == 4 && known_int(a[3]) && a[3]->ival == 0 && a[2]->kind == IT_INT && t->kind == IT_FLOAT) {
    cx->safe = false;
    if (a[2]->has_val && !a[2]->or_none && !a[2]->or_unbound) return a[2]->ival == 0 ? &ir_t_none : t;
    return ir_type_or_none(t);
  }
  return t;
}

RULE(r_unary_sens) { UNUSED; return sens_result(cx, a[0], sens_like_arg(a[0], a[1])); }

/* ---- the rules of ops.def's rows ----
 *
 * Each row of ops.def names its rule here and says whether the rule
 * takes None itself (1: None is a value it takes, a sensitivity's zero,
 * a test's subject).  The rule of a primitive that raises on None (0)
 * is given the types without their None (`float?` as float), since its
 * result only exists when they are not None. */

#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) [IR_P_##e] = type,
const InferRule ir_infer_prim_rules[IR_NPRIMS] = {
#include "ir/ops.def"
};
#undef PRIM
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) [IR_P_##e] = none,
const bool ir_infer_prim_takes_none[IR_NPRIMS] = {
#include "ir/ops.def"
};
#undef PRIM

/* ---- builtins ---- */

typedef IrType *(*BuiltinRule)(InferCx *cx, IrType **a, int n, int nkw, ObjStr **kwn, IrType **kwt);
#define BRULE(name) \
  static IrType *name(InferCx *cx, IrType **a, int n, int nkw, ObjStr **kwn, IrType **kwt)

/* keyword argument `name`, or NULL */
static IrType *kwarg(int nkw, ObjStr **kwn, IrType **kwt, const char *name) {
  for (int i = 0; i < nkw; i++)
    if (strcmp(kwn[i]->data, name) == 0) return kwt[i];
  return NULL;
}

/* exp, log, sqrt, sin...: a float for a number, a float tensor of the
 * same shape for a tensor */
BRULE(b_float_unary) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  IrType *x = a[0];
  if (is_num(x)) return &ir_t_float;   /* math.exp(1000.0) fails: not safe */
  cx->safe = is_tensor(x) && x->dtype >= 0;
  if (is_tensor(x)) return tensor_like(x, x->dtype < 0 ? -1 : lang_dtype_is_float(x->dtype) ? x->dtype : DT_F32);
  return x->kind == IT_NONE || x->kind == IT_STR ? &ir_t_never : &ir_t_any;
}

/* relu, abs: the same type for a float or tensor (bools give i64) */
BRULE(b_same_unary) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  if (is_tensor(a[0]) && a[0]->dtype == DT_BOOL) return cx->safe = true, tensor_like(a[0], DT_I64);
  if (a[0]->kind == IT_FLOAT || is_tensor(a[0])) return cx->safe = true, a[0];
  return &ir_t_any;
}

/* floor, ceil: a tensor keeps its type (ints and bools are whole
 * already); a number gives an int, as Python's math.floor (a float's
 * may fail: NaN, inf) */
BRULE(b_round_unary) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  if (is_tensor(a[0]) && a[0]->dtype >= 0) return cx->safe = true, a[0];
  if (a[0]->kind == IT_INT || a[0]->kind == IT_BOOL) return cx->safe = true, &ir_t_int;
  if (a[0]->kind == IT_FLOAT) return &ir_t_int;
  return &ir_t_any;
}

/* maximum, minimum: elementwise with broadcasting */
BRULE(b_extremum) {
  (void)kwn, (void)kwt;
  if (n != 2 || nkw) return &ir_t_any;
  if (is_tensor(a[0]) || is_tensor(a[1])) return tensor_binop(cx, TB_MAXIMUM, a[0], a[1]);
  if (is_num(a[0]) && is_num(a[1])) {
    cx->safe = true;
    if (a[0]->kind == IT_FLOAT || a[1]->kind == IT_FLOAT) return &ir_t_float;
    return a[0]->kind == IT_BOOL && a[1]->kind == IT_BOOL ? &ir_t_bool : &ir_t_int;
  }
  return &ir_t_any;
}

/* softmax(x, axis=-1), log_softmax: a float tensor of x's shape (an
 * int or bool tensor as f32, as stdlib/tensor_nn.c's float_arg); safe
 * where the axis is a known one of x's */
BRULE(b_softmax) {
  IrType *x = n > 0 ? a[0] : NULL, *axis = n > 1 ? a[1] : kwarg(nkw, kwn, kwt, "axis");
  if (!x || !is_tensor(x) || n > 2 || nkw > (n > 1 ? 0 : 1) || (nkw && !axis) || x->dtype < 0) return &ir_t_any;
  int d;
  cx->safe = x->n >= 1 && (!axis || known_int(axis));
  if (cx->safe && axis && !lang_tensor_axis(cx->vm, axis->ival, x->n, &d)) {
    lang_error_clear(cx->vm);   /* it fails when it runs, with its own error */
    cx->safe = false;
  }
  return tensor_like(x, lang_dtype_is_float(x->dtype) ? x->dtype : DT_F32);
}

/* where(c, x, y): x's and y's dtype as for maximum (bools stay bools),
 * the three shapes broadcast (x with y first, as tensor_ops.c does);
 * without a tensor, Python's choice of x or y */
BRULE(b_where) {
  (void)kwn, (void)kwt;
  if (n != 3 || nkw) return &ir_t_any;
  bool tensor = false;
  for (int i = 0; i < 3; i++) {
    if (!(is_tensor(a[i]) || is_num(a[i])) || a[i]->or_none) return &ir_t_any;
    tensor |= is_tensor(a[i]);
  }
  if (!tensor) return &ir_t_any;
  int dt;
  if (is_tensor(a[1]) || is_tensor(a[2])) {
    dt = binop_dtype(TB_MAXIMUM, a[1], a[2]);
  } else {
    int x = a[1]->kind == IT_FLOAT ? DT_F32 : a[1]->kind == IT_INT ? DT_I64 : DT_BOOL;
    int y = a[2]->kind == IT_FLOAT ? DT_F32 : a[2]->kind == IT_INT ? DT_I64 : DT_BOOL;
    dt = x > y ? x : y;
  }
  IrType *xy = broadcast(cx, "where", a[1], a[2], dt);
  if (xy->kind != IT_TENSOR) return xy;
  IrType *r = broadcast(cx, "where", a[0], xy, dt);
  if (dt < 0) cx->safe = false;
  return r;
}

/* clip(x, lo, hi) of a tensor x: maximum with lo, then minimum with hi
 * (either None: that step left out) */
BRULE(b_clip) {
  (void)kwn, (void)kwt;
  if (n != 3 || nkw || !is_tensor(a[0])) return &ir_t_any;
  for (int i = 1; i < 3; i++)
    if (a[i]->kind != IT_NONE && (!(is_tensor(a[i]) || is_num(a[i])) || a[i]->or_none)) return &ir_t_any;
  IrType *r = a[0];
  cx->safe = true;
  if (a[1]->kind != IT_NONE) r = tensor_binop(cx, TB_MAXIMUM, r, a[1]);
  if (r->kind != IT_TENSOR) return r;
  if (a[2]->kind != IT_NONE) r = tensor_binop(cx, TB_MINIMUM, r, a[2]);
  return r;
}

/* The axes a reduction's axis argument names (None: all), or -1. */
static int reduce_axes(InferCx *cx, const IrType *t, const IrType *axis, bool *which) {
  for (int d = 0; d < t->n; d++) which[d] = axis == NULL || axis->kind == IT_NONE;
  if (!axis || axis->kind == IT_NONE) return t->n;
  const IrType *const *items = (const IrType *const *)&axis;
  int k = 1;
  if (axis->kind == IT_TUPLE) items = (const IrType *const *)axis->items, k = axis->n;
  for (int i = 0; i < k; i++) {
    if (!known_int(items[i])) return -1;
    int d;
    if (!lang_tensor_axis(cx->vm, items[i]->ival, t->n, &d)) return -2;
    which[d] = true;
  }
  return k;
}

/* What a reduction's result is: a sum's or product's (bools and i32
 * to i64), a mean's (a float), an index (argmax: i64), an element (max,
 * min: the tensor's dtype). */
typedef enum { RK_SUM, RK_MEAN, RK_ARG, RK_EXTREMUM } ReduceKind;

/* sum, mean, prod, argmax, max, min of a tensor, with axis= and
 * keepdims= (positional too: t.sum(1, True)) */
static IrType *reduce(InferCx *cx, IrType **a, int n, int nkw, ObjStr **kwn, IrType **kwt, ReduceKind kind) {
  bool mean = kind == RK_MEAN, arg = kind == RK_ARG;
  IrType *t = a[0];
  if (!is_tensor(t)) return &ir_t_any;
  IrType *axis = n > 1 ? a[1] : kwarg(nkw, kwn, kwt, "axis");
  IrType *keep = n > 2 ? a[2] : kwarg(nkw, kwn, kwt, "keepdims");
  if (n > 3 || (keep && !known_bool(keep))) return &ir_t_any;
  bool keepdims = keep && keep->ival;
  int dt = t->dtype;
  if (arg) dt = DT_I64;
  else if (mean) dt = dt < 0 ? -1 : lang_dtype_is_float(dt) ? dt : DT_F32;
  else if (kind == RK_SUM && (dt == DT_BOOL || dt == DT_I32)) dt = DT_I64;
  if (t->n < 0) return ir_type_tensor(dt, -1, NULL);
  bool which[LANG_TENSOR_MAX_DIMS];
  int k = reduce_axes(cx, t, axis, which);
  if (k == -2) return ir_infer_fail(cx);
  if (k < 0) return ir_type_tensor(dt, keepdims ? t->n : -1, NULL);
  int64_t out[LANG_TENSOR_MAX_DIMS];
  int nd = 0;
  bool empty = false;   /* max and argmax of an empty axis fail */
  for (int d = 0; d < t->n; d++) {
    if (!which[d]) out[nd++] = t->dims[d];
    else if (keepdims) out[nd++] = 1;
    if (which[d] && t->dims[d] <= 0) empty = true;
  }
  cx->safe = !((arg || kind == RK_EXTREMUM) && empty);
  return ir_type_tensor(dt, nd, out);
}

BRULE(b_sum) {
  if (n >= 1 && (a[0]->kind == IT_LIST || a[0]->kind == IT_TUPLE) && !nkw && n == 1) {
    IrType *item = items_join(a[0]);
    /* (sum of no items is the int 0: of floats, a float only when some
     * item is sure to be there) */
    if (item->kind == IT_FLOAT) return a[0]->n > 0 ? &ir_t_float : ir_type_join(&ir_t_float, &ir_t_int);
    if (item->kind == IT_INT || item->kind == IT_BOOL) return &ir_t_int;
    return &ir_t_any;
  }
  return reduce(cx, a, n, nkw, kwn, kwt, RK_SUM);
}
BRULE(b_mean) { return reduce(cx, a, n, nkw, kwn, kwt, RK_MEAN); }
BRULE(b_prod) { return reduce(cx, a, n, nkw, kwn, kwt, RK_SUM); }
BRULE(b_argmax) { return reduce(cx, a, n, nkw, kwn, kwt, RK_ARG); }

/* max and min of a tensor as a reduction (stdlib/builtins.c's
 * minmax_is_reduction: (t), (t, axis), (t, axis, keepdims), axis= and
 * keepdims=); Python's max of items or of an iterable is left `any` */
BRULE(b_minmax) {
  if (n < 1 || n > 3 || !is_tensor(a[0])) return &ir_t_any;
  for (int i = 0; i < nkw; i++)
    if (strcmp(kwn[i]->data, "axis") != 0 && strcmp(kwn[i]->data, "keepdims") != 0) return &ir_t_any;
  if (n > 1 && (a[1]->or_none || (a[1]->kind != IT_INT && a[1]->kind != IT_NONE && a[1]->kind != IT_TUPLE)))
    return &ir_t_any;
  return reduce(cx, a, n, nkw, kwn, kwt, RK_EXTREMUM);
}

/* The shape a shape argument gives: an int or a tuple of ints; known[i]
 * false for a dimension whose value is not known.  -1 when not a shape. */
static int shape_arg(const IrType *s, int64_t *dims) {
  if (s->kind == IT_INT) {
    dims[0] = s->has_val ? s->ival : -2;
    return 1;
  }
  if ((s->kind != IT_TUPLE && s->kind != IT_LIST) || s->n < 0 || s->n > LANG_TENSOR_MAX_DIMS) return -1;
  for (int i = 0; i < s->n; i++) {
    if (s->items[i]->kind != IT_INT) return -1;
    dims[i] = s->items[i]->has_val ? s->items[i]->ival : -2;
  }
  return s->n;
}

BRULE(b_reshape) {
  (void)cx;
  if (n < 1 || !is_tensor(a[0])) return &ir_t_any;
  IrType *t = a[0], *s = n == 2 ? a[1] : kwarg(nkw, kwn, kwt, "shape");
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  int nd;
  if (n > 2) {
    /* t.reshape(2, 3) */
    if (n - 1 > LANG_TENSOR_MAX_DIMS) return &ir_t_any;
    IrType *items[LANG_TENSOR_MAX_DIMS];
    for (int i = 1; i < n; i++) items[i - 1] = a[i];
    s = ir_type_tuple(n - 1, items);
  }
  if (!s || (nd = shape_arg(s, dims)) < 0) return ir_type_tensor(t->dtype, -1, NULL);
  int infer = -1;
  int64_t known = 1;
  bool unknown = false;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == -1) {
      if (infer >= 0) return &ir_t_any;
      infer = d;
    } else if (dims[d] < 0) {
      unknown = true;
      dims[d] = -1;
    } else if (__builtin_mul_overflow(known, dims[d], &known)) {
      return &ir_t_any;
    }
  }
  int64_t size = -1;
  if (all_known(t)) {
    size = 1;
    for (int d = 0; d < t->n; d++) size *= t->dims[d];
  }
  if (infer >= 0) {
    dims[infer] = -1;
    if (!unknown && size >= 0 && known > 0 && size % known == 0) dims[infer] = size / known;
  }
  /* certain when every size is known and they agree */
  cx->safe = !unknown && size >= 0 && (infer >= 0 ? dims[infer] >= 0 : known == size);
  /* a size that cannot match is left to the interpreter's error */
  return ir_type_tensor(t->dtype, nd, dims);
}

BRULE(b_transpose) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw || !is_tensor(a[0])) return &ir_t_any;
  IrType *t = a[0];
  cx->safe = true;
  if (t->n < 0) return t;
  int64_t d[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < t->n; i++) d[i] = t->dims[t->n - 1 - i];
  return ir_type_tensor(t->dtype, t->n, d);
}

/* conv2d's stride= or padding= (an int or a pair of ints; absent: dflt)
 * into v[2], -1 where the value is not known; false when it is no such
 * argument (it fails when it runs). */
static bool conv_pair(const IrType *t, int64_t dflt, int64_t v[2]) {
  v[0] = v[1] = dflt;
  if (!t) return true;
  if (t->kind == IT_INT || t->kind == IT_BOOL) {
    v[0] = v[1] = t->has_val ? t->ival : -1;
    return true;
  }
  if ((t->kind != IT_TUPLE && t->kind != IT_LIST) || t->n != 2) return false;
  for (int i = 0; i < 2; i++) {
    if (t->items[i]->kind != IT_INT) return false;
    v[i] = t->items[i]->has_val ? t->items[i]->ival : -1;
  }
  return true;
}

/* conv2d(x, w, bias=None, stride=1, padding=0) of float tensors x (N,
 * Cin, H, W) or (Cin, H, W) and w (Cout, Cin, kh, kw): the dtype they
 * (and bias) promote to, shape (N, Cout, Ho, Wo) or (Cout, Ho, Wo) with
 * Ho = (H + 2 * padding - kh) // stride + 1 as stdlib/tensor_nn.c
 * computes it; a dim not known where an input's is not.  What does not
 * fit fails when it runs, with conv2d's error. */
BRULE(b_conv2d) {
  static const char *const names[] = {"x", "w", "bias", "stride", "padding"};
  if (n > 5) return &ir_t_any;
  for (int i = 0; i < nkw; i++) {
    bool known = false;
    for (int j = n; j < 5; j++) known |= strcmp(kwn[i]->data, names[j]) == 0;
    if (!known) return &ir_t_any;
  }
  IrType *arg[5];
  for (int i = 0; i < 5; i++) arg[i] = i < n ? a[i] : kwarg(nkw, kwn, kwt, names[i]);
  IrType *x = arg[0], *w = arg[1], *b = arg[2] && arg[2]->kind != IT_NONE ? arg[2] : NULL;
  if (!x || !w || !is_tensor(x) || !is_tensor(w) || x->or_none || w->or_none || (b && (!is_tensor(b) || b->or_none)))
    return &ir_t_any;
  if (!lang_dtype_is_float(x->dtype) || !lang_dtype_is_float(w->dtype) || (b && !lang_dtype_is_float(b->dtype)))
    return &ir_t_any;
  if ((x->n != 3 && x->n != 4) || w->n != 4 || (b && b->n != 1)) return &ir_t_any;
  int64_t st[2], pd[2];
  if (!conv_pair(arg[3], 1, st) || !conv_pair(arg[4], 0, pd)) return &ir_t_any;
  int dt = (int)lang_dtype_promote((DType)x->dtype, (DType)w->dtype);
  if (b) dt = (int)lang_dtype_promote((DType)dt, (DType)b->dtype);
  int batched = x->n == 4;
  int64_t out[4];
  if (batched) out[0] = x->dims[0];
  out[batched] = w->dims[0];
  for (int d = 0; d < 2; d++) {
    int64_t in = x->dims[batched + 1 + d], k = w->dims[2 + d];
    int64_t o = -1;
    if (in >= 0 && k >= 1 && st[d] >= 1 && pd[d] >= 0 && in + 2 * pd[d] >= k) o = (in + 2 * pd[d] - k) / st[d] + 1;
    out[batched + 1 + d] = o;
  }
  return ir_type_tensor(dt, 3 + batched, out);
}

BRULE(b_matmul) {
  (void)kwn, (void)kwt;
  if (n != 2 || nkw) return &ir_t_any;
  return matmul(cx, a[0], a[1]);
}

static int dtype_kw(IrType *dt, int dflt) {
  if (!dt) return dflt;
  if (dt->kind != IT_STR || !dt->sval) return -1;
  static const char *names[] = {"bool", "i32", "i64", "f32", "f64"};
  for (int i = 0; i < 5; i++)
    if (strcmp(dt->sval->data, names[i]) == 0) return i;
  return -2;
}

/* zeros(shape, dtype='f32'), ones, rand, randn */
BRULE(b_filled) {
  IrType *s = n >= 1 ? a[0] : kwarg(nkw, kwn, kwt, "shape");
  int dt = dtype_kw(n >= 2 ? a[1] : kwarg(nkw, kwn, kwt, "dtype"), DT_F32);
  if (!s || dt == -2) return &ir_t_any;
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  int nd = shape_arg(s, dims);
  if (nd < 0) return ir_type_tensor(dt, -1, NULL);
  cx->safe = dt >= 0;
  for (int i = 0; i < nd; i++)
    if (dims[i] < -1) dims[i] = -1, cx->safe = false;
    else if (dims[i] == -1) return cx->safe = false, &ir_t_never;
  return ir_type_tensor(dt, nd, dims);
}

/* _log_softmax_sens(d, y, axis): y's type for a tensor d (broadcast to
 * y's shape and given its dtype, as _broadcast_like does) */
BRULE(b_log_softmax_sens) {
  (void)cx, (void)kwn, (void)kwt;
  if (n != 3 || nkw || !is_tensor(a[0]) || !is_tensor(a[1]) || a[1]->dtype < 0 ||
      !lang_dtype_is_float(a[1]->dtype))
    return &ir_t_any;
  return a[1];
}

BRULE(b_like) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  if (is_tensor(a[0])) return cx->safe = true, a[0];
  return &ir_t_any;
}

BRULE(b_astype) {
  (void)cx;
  if (n < 1 || !is_tensor(a[0])) return &ir_t_any;
  int dt = dtype_kw(n >= 2 ? a[1] : kwarg(nkw, kwn, kwt, "dtype"), -2);
  if (dt == -2) return &ir_t_any;
  return tensor_like(a[0], dt);
}

BRULE(b_item) {
  (void)cx, (void)kwn, (void)kwt;
  if (n != 1 || nkw || !is_tensor(a[0])) return &ir_t_any;
  int dt = a[0]->dtype;
  if (dt < 0) return &ir_t_any;
  return lang_dtype_is_float(dt) ? &ir_t_float : dt == DT_BOOL ? &ir_t_bool : &ir_t_int;
}

/* The dtype and dims of tensor(data): nested lists of numbers */
static bool data_shape(const IrType *t, int depth, int64_t *dims, int *nd, int *dt) {
  if (is_num(t)) {
    if (*nd < 0) *nd = depth;
    else if (*nd != depth) return false;
    int k = t->kind == IT_FLOAT ? DT_F32 : t->kind == IT_INT ? DT_I64 : DT_BOOL;
    if (k > *dt) *dt = k;
    return true;
  }
  if ((t->kind != IT_LIST && t->kind != IT_TUPLE) || t->n < 0 || depth >= LANG_TENSOR_MAX_DIMS) return false;
  if (*nd >= 0 && depth >= *nd) return false;
  if (dims[depth] == -3) dims[depth] = t->n;
  else if (dims[depth] != t->n) return false;
  if (t->n == 0) {
    if (*nd < 0) *nd = depth + 1;
    return *nd == depth + 1;
  }
  for (int i = 0; i < t->n; i++)
    if (!data_shape(t->items[i], depth + 1, dims, nd, dt)) return false;
  return true;
}

BRULE(b_tensor) {
  if (n < 1) return &ir_t_any;
  IrType *dtk = n >= 2 ? a[1] : kwarg(nkw, kwn, kwt, "dtype");
  /* -3: no dtype given, the data's; -1: a str whose value inference
   * does not know (a loop over ["f32", "f64"]): a dtype not known */
  int want = dtype_kw(dtk, -3);
  if (want == -2) return &ir_t_any;
  if (is_tensor(a[0])) return tensor_like(a[0], want != -3 ? want : a[0]->dtype);
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < LANG_TENSOR_MAX_DIMS; i++) dims[i] = -3;
  int nd = -1, dt = DT_BOOL;
  if (!data_shape(a[0], 0, dims, &nd, &dt)) return ir_type_tensor(want == -3 ? -1 : want, -1, NULL);
  if (nd > 0 && dims[nd - 1] == 0) dt = DT_F32;   /* tensor([]) is f32 */
  cx->safe = want != -1;
  return ir_type_tensor(want != -3 ? want : dt, nd, dims);
}

BRULE(b_float) {
  (void)cx, (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  return is_num(a[0]) || a[0]->kind == IT_STR || is_tensor(a[0]) ? &ir_t_float : &ir_t_any;
}

BRULE(b_int) {
  (void)cx, (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  if (a[0]->kind == IT_INT) return a[0];
  return is_num(a[0]) || a[0]->kind == IT_STR || is_tensor(a[0]) ? &ir_t_int : &ir_t_any;
}

/* bool(x) is a bool or an error (a tensor of several elements has no
 * truth); bool() is False */
BRULE(b_bool) {
  (void)kwn, (void)kwt;
  if (n > 1 || nkw) return &ir_t_any;
  cx->safe = n == 0 || is_num(a[0]) || a[0]->kind == IT_NONE || a[0]->kind == IT_STR;
  return &ir_t_bool;
}

/* len(x): as the primitive */
BRULE(b_len) {
  (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  return r_len(cx, a, n);
}

/* range(stop), range(start, stop[, step]) of ints */
BRULE(b_range) {
  (void)kwn, (void)kwt;
  if (n < 1 || n > 3 || nkw) return &ir_t_any;
  for (int i = 0; i < n; i++)
    if (a[i]->kind != IT_INT && a[i]->kind != IT_BOOL) return &ir_t_any;
  cx->safe = n < 3;   /* a step of 0 fails */
  return &ir_t_range;
}

BRULE(b_abs) {
  (void)cx, (void)kwn, (void)kwt;
  if (n != 1 || nkw) return &ir_t_any;
  if (is_tensor(a[0]) && a[0]->dtype == DT_BOOL) return tensor_like(a[0], DT_I64);
  if (a[0]->kind == IT_FLOAT || is_tensor(a[0])) return a[0];
  if (a[0]->kind == IT_INT || a[0]->kind == IT_BOOL) return &ir_t_int;
  return &ir_t_any;
}

/* the properties of tensors: t.shape, t.ndim, t.size, t.dtype, t.T */
BRULE(b_shape) {
  (void)n, (void)nkw, (void)kwn, (void)kwt;
  IrType *x = a[0];
  if (!is_tensor(x) || x->n < 0) return &ir_t_any;
  cx->safe = true;
  IrType *items[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < x->n; i++) items[i] = x->dims[i] >= 0 ? ir_type_int_val(x->dims[i]) : &ir_t_int;
  return ir_type_tuple(x->n, items);
}

BRULE(b_ndim) {
  (void)cx, (void)n, (void)nkw, (void)kwn, (void)kwt;
  if (!is_tensor(a[0])) return &ir_t_any;
  return a[0]->n >= 0 ? ir_type_int_val(a[0]->n) : &ir_t_int;
}

BRULE(b_size) {
  (void)cx, (void)n, (void)nkw, (void)kwn, (void)kwt;
  if (!is_tensor(a[0])) return &ir_t_any;
  if (!all_known(a[0])) return &ir_t_int;
  int64_t k = 1;
  for (int i = 0; i < a[0]->n; i++) k *= a[0]->dims[i];
  return ir_type_int_val(k);
}

BRULE(b_text) {
  (void)cx, (void)n, (void)nkw, (void)kwn, (void)kwt;
  return is_tensor(a[0]) ? &ir_t_str : &ir_t_any;
}

BRULE(b_T) {
  (void)cx, (void)n, (void)nkw, (void)kwn, (void)kwt;
  IrType *x = a[0];
  if (!is_tensor(x) || x->n < 0) return is_tensor(x) ? x : &ir_t_any;
  int64_t d[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < x->n; i++) d[i] = x->dims[x->n - 1 - i];
  return ir_type_tensor(x->dtype, x->n, d);
}

/* Each op's rule, from its row of builtin_ops.def (NO_TYPE: any). */
#define NO_TYPE NULL
static const BuiltinRule builtin_rules[IR_NBUILTIN_OPS] = {
#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) [IR_B_##e] = type,
#include "ir/builtin_ops.def"
#undef OP
};
#undef NO_TYPE

/* x.name as the interpreter finds it (ev_lookup_attr): a property's
 * value, else the method or builtin `name` bound to x (*bound). */
static IrType *attr_type(InferCx *cx, IrType *x, ObjStr *name, bool *bound) {
  MistVM *vm = cx->vm;
  *bound = false;
  if (x->kind == IT_ANY || x->kind == IT_MODULE) return &ir_t_any;
  Value b;
  if (x->kind == IT_BUILTIN && x->n == 0 && x->builtin) {
    if (ev_type_method(vm, v_obj(x->builtin), name, &b)) {   /* str.upper */
      if (!v_is_obj(b, O_BUILTIN)) return &ir_t_any;
      cx->safe = true;
      return ir_type_builtin(AS_BUILTIN(b));
    }
  }
  if (vm->properties && lang_dict_get(vm->properties, name, &b) && v_is_obj(b, O_BUILTIN))
    return ir_infer_builtin(cx, AS_BUILTIN(b), &x, 1, 0, NULL, NULL);
  if (((vm->methods && lang_dict_get(vm->methods, name, &b)) ||
       (vm->builtins && lang_dict_get(vm->builtins, name, &b))) && v_is_obj(b, O_BUILTIN)) {
    *bound = true;
    cx->safe = true;
    return ir_type_bound(AS_BUILTIN(b), x);
  }
  return &ir_t_any;
}

/* ---- forward mode's tangent rules ----
 *
 * A jvp calls _F_mul(x, tx, y, ty) and the like (autodiff/tangents.c),
 * which return the pair (value, tangent).  Typed here where that C
 * computes the pair itself: numbers without tangents (the operation
 * alone, typed as the primitive), and floats (an int beside one, for
 * + - * /) with float or None tangents, the tangent None where both are
 * None.  Anything else runs the Mist rule F_name: `any`. */

static bool plain(const IrType *t) { return !t->or_none && !t->or_unbound; }
static bool plain_num(const IrType *t) { return plain(t) && (t->kind == IT_INT || t->kind == IT_FLOAT); }
static bool float_tangent(const IrType *t) { return t->kind == IT_NONE || (t->kind == IT_FLOAT && !t->or_unbound); }

static IrType *tangent_rule(InferCx *cx, bool op, int id, IrType **a, int n) {
  bool binary = !op && id != IR_P_NEG;
  if (n != (binary ? 4 : 2)) return &ir_t_any;
  IrType *x = a[0], *tx = a[1], *y = binary ? a[2] : NULL, *ty = binary ? a[3] : &ir_t_none, *v, *t;
  if (!op && tx->kind == IT_NONE && ty->kind == IT_NONE) {
    /* no tangent: the primitive on the values */
    if (!plain(x) || !is_num(x) || (binary && (!plain(y) || !is_num(y)))) return &ir_t_any;
    IrType *xy[2] = {x, y};
    v = ir_infer_prim_rules[id](cx, xy, binary ? 2 : 1);
    if (v->kind == IT_NEVER) return &ir_t_any;   /* the rule raises it */
  } else {
    if (!float_tangent(tx) || !float_tangent(ty)) return &ir_t_any;
    if (binary ? !plain_num(x) || !plain_num(y) || (x->kind != IT_FLOAT && y->kind != IT_FLOAT)
               : !plain(x) || x->kind != IT_FLOAT)
      return &ir_t_any;
    v = &ir_t_float;
    /* (a division by zero, exp's overflow and a domain error are raised
     * by the Mist rule) */
    cx->safe = !op ? id != IR_P_TRUEDIV : id == IR_B_TANH;
  }
  bool none = tx->kind == IT_NONE && ty->kind == IT_NONE;
  bool sure = (tx->kind == IT_FLOAT && !tx->or_none) || (ty->kind == IT_FLOAT && !ty->or_none);
  t = none ? &ir_t_none : sure ? &ir_t_float : ir_type_or_none(&ir_t_float);
  IrType *items[2] = {v, t};
  return ir_type_tuple(2, items);
}

IrType *ir_infer_builtin(InferCx *cx, ObjBuiltin *b, IrType **args, int n, int nkw,
                         ObjStr **kwnames, IrType **kwtypes) {
  bool op;
  int id;
  if (b->op < 0 && !nkw && cx->vm->ad && cx->vm->ad->tangent_rule && cx->vm->ad->tangent_rule(v_obj(b), &op, &id))
    return tangent_rule(cx, op, id, args, n);
  if (b->op < 0 || !builtin_rules[b->op]) return &ir_t_any;
  for (int i = 0; i < n; i++)
    if (args[i]->kind == IT_ANY) return &ir_t_any;
  return builtin_rules[b->op](cx, args, n, nkw, kwnames, kwtypes);
}
