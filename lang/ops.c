/* ops.c: what Mist's operators mean on values, following Python 3:
 * arithmetic on int (int64, every overflow an OverflowError, floor
 * division and modulo taking the divisor's sign) and float (CPython's
 * own algorithms for //, % and **), concatenation and repetition of
 * str, tuple and list, comparisons (exact between int and float,
 * lexicographic on sequences), equality, truthiness, indexing, slicing
 * and functional item assignment (O(1) on lists and dicts through their
 * versions, value.c), membership, len, and int()/float().
 * When an operand is a tensor, each operation hands over to
 * lang/tensor_ops.c (elementwise, with NumPy's broadcasting).
 *
 * The interpreter inlines the int and float cases of the hot operators
 * and calls here for the rest, so this file favours plain, checkable
 * code over speed except in lang_getitem on lists and tuples.
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"

/* The largest tuple, list or str that repetition or concatenation may
 * build, in bytes: beyond it the program gets a MemoryError instead of
 * the collector's out-of-memory exit. */
#define MAX_BUILD_BYTES ((size_t)1 << 34)

static bool is_intlike(Value v) { return v.tag == V_INT || v.tag == V_BOOL; }
static bool is_num(Value v) { return v.tag == V_INT || v.tag == V_BOOL || v.tag == V_FLOAT; }
static int64_t as_int(Value v) { return v.tag == V_BOOL ? (int64_t)v.b : v.i; }
static double as_float(Value v) {
  return v.tag == V_FLOAT ? v.f : v.tag == V_BOOL ? (double)v.b : (double)v.i;
}
static bool is_seq(Value v) { return v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST); }

static bool overflow(MistVM *vm) {
  return lang_raise(vm, "OverflowError", "integer overflow");
}

const char *lang_arith_symbol(ArithOp op) {
  static const char *const names[] = {"+", "-", "*", "/", "//", "%", "**", "@"};
  return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

const char *lang_cmp_symbol(CmpOp op) {
  static const char *const names[] = {"==", "!=", "<", "<=", ">", ">="};
  return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static bool unsupported(MistVM *vm, ArithOp op, Value a, Value b) {
  return lang_raise(vm, "TypeError", "unsupported operand type(s) for %s: '%s' and '%s'",
                    op == OP_POW ? "** or pow()" : lang_arith_symbol(op), lang_type_name(a), lang_type_name(b));
}

/* ---- float arithmetic (CPython's floatobject.c) ---- */

static bool is_odd_integer(double x) { return fmod(fabs(x), 2.0) == 1.0; }

static bool float_pow(MistVM *vm, double iv, double iw, Value *out) {
  bool negate = false;
  if (iw == 0) { *out = v_float(1.0); return true; }
  if (isnan(iv)) { *out = v_float(iv); return true; }
  if (isnan(iw)) { *out = v_float(iv == 1.0 ? 1.0 : iw); return true; }
  if (isinf(iw)) {
    iv = fabs(iv);
    if (iv == 1.0) *out = v_float(1.0);
    else if ((iw > 0.0) == (iv > 1.0)) *out = v_float(fabs(iw));
    else *out = v_float(0.0);
    return true;
  }
  if (isinf(iv)) {
    bool odd = is_odd_integer(iw);
    if (iw > 0.0) *out = v_float(odd ? iv : fabs(iv));
    else *out = v_float(odd ? copysign(0.0, iv) : 0.0);
    return true;
  }
  if (iv == 0.0) {
    if (iw < 0.0)
      return lang_raise(vm, "ZeroDivisionError", "0.0 cannot be raised to a negative power");
    *out = v_float(is_odd_integer(iw) ? iv : 0.0);
    return true;
  }
  if (iv < 0.0) {
    if (iw != floor(iw))
      return lang_raise(vm, "ValueError",
                        "negative number cannot be raised to a fractional power");
    iv = -iv;
    negate = is_odd_integer(iw);
  }
  if (iv == 1.0) { *out = v_float(negate ? -1.0 : 1.0); return true; }
  double r = pow(iv, iw);
  if (isinf(r)) return lang_raise(vm, "OverflowError", "(34, 'Numerical result out of range')");
  *out = v_float(negate ? -r : r);
  return true;
}

static bool float_arith(MistVM *vm, ArithOp op, double a, double b, Value *out) {
  switch (op) {
  case OP_ADD: *out = v_float(a + b); return true;
  case OP_SUB: *out = v_float(a - b); return true;
  case OP_MUL: *out = v_float(a * b); return true;
  case OP_TRUEDIV:
    if (b == 0.0) return lang_raise(vm, "ZeroDivisionError", "float division by zero");
    *out = v_float(a / b);
    return true;
  case OP_MOD: {
    if (b == 0.0) return lang_raise(vm, "ZeroDivisionError", "float modulo");
    double mod = fmod(a, b);
    if (mod) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = copysign(0.0, b);
    }
    *out = v_float(mod);
    return true;
  }
  case OP_FLOORDIV: {
    if (b == 0.0) return lang_raise(vm, "ZeroDivisionError", "float floor division by zero");
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod) {
      if ((b < 0) != (mod < 0)) div -= 1.0;
    }
    double fd;
    if (div) {
      fd = floor(div);
      if (div - fd > 0.5) fd += 1.0;
    } else {
      fd = copysign(0.0, a / b);
    }
    *out = v_float(fd);
    return true;
  }
  case OP_POW: return float_pow(vm, a, b, out);
  case OP_MATMUL: break;
  }
  return lang_raise(vm, "TypeError", "unsupported operand type(s) for @: 'float' and 'float'");
}

/* ---- int arithmetic ---- */

/* a / b correctly rounded, as Python divides ints too big for a
 * double to hold exactly: a 128-bit quotient with at least 62
 * significant bits, rounded half-even to 53 with the remainder as a
 * sticky bit. */
static double int_true_divide(int64_t a, int64_t b) {
  bool neg = (a < 0) != (b < 0);
  uint64_t x = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
  uint64_t y = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
  if (x == 0) return neg ? -0.0 : 0.0;
  int s = 63 + __builtin_clzll(x);
  unsigned __int128 n = (unsigned __int128)x << s;
  unsigned __int128 q = n / y;
  bool sticky = n % y != 0;
  int bits = 128 - ((uint64_t)(q >> 64) ? __builtin_clzll((uint64_t)(q >> 64))
                                        : 64 + __builtin_clzll((uint64_t)q));
  int extra = bits - 53;
  unsigned __int128 keep = q >> extra, rem = q & (((unsigned __int128)1 << extra) - 1);
  unsigned __int128 half = (unsigned __int128)1 << (extra - 1);
  if (rem > half || (rem == half && (sticky || (keep & 1)))) keep++;
  double r = ldexp((double)(uint64_t)keep, extra - s);
  return neg ? -r : r;
}

static bool int_arith(MistVM *vm, ArithOp op, int64_t a, int64_t b, Value *out) {
  int64_t r;
  switch (op) {
  case OP_ADD:
    if (__builtin_add_overflow(a, b, &r)) return overflow(vm);
    *out = v_int(r);
    return true;
  case OP_SUB:
    if (__builtin_sub_overflow(a, b, &r)) return overflow(vm);
    *out = v_int(r);
    return true;
  case OP_MUL:
    if (__builtin_mul_overflow(a, b, &r)) return overflow(vm);
    *out = v_int(r);
    return true;
  case OP_TRUEDIV: {
    if (b == 0) return lang_raise(vm, "ZeroDivisionError", "division by zero");
    const int64_t exact = (int64_t)1 << 53;
    if (a >= -exact && a <= exact && b >= -exact && b <= exact)
      *out = v_float((double)a / (double)b);
    else
      *out = v_float(int_true_divide(a, b));
    return true;
  }
  case OP_FLOORDIV:
    if (b == 0) return lang_raise(vm, "ZeroDivisionError", "integer division or modulo by zero");
    if (a == INT64_MIN && b == -1) return overflow(vm);
    r = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) r--;
    *out = v_int(r);
    return true;
  case OP_MOD:
    if (b == 0) return lang_raise(vm, "ZeroDivisionError", "integer modulo by zero");
    if (b == -1) { *out = v_int(0); return true; }
    r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    *out = v_int(r);
    return true;
  case OP_POW: {
    if (b < 0) return float_pow(vm, (double)a, (double)b, out);
    int64_t base = a, res = 1;
    uint64_t e = (uint64_t)b;
    while (e) {
      if ((e & 1) && __builtin_mul_overflow(res, base, &res)) return overflow(vm);
      e >>= 1;
      if (e && __builtin_mul_overflow(base, base, &base)) return overflow(vm);
    }
    *out = v_int(res);
    return true;
  }
  case OP_MATMUL: break;
  }
  return unsupported(vm, op, v_int(a), v_int(b));
}

/* ---- sequences ---- */

static bool too_big(MistVM *vm) {
  return lang_raise(vm, "MemoryError", "result too large");
}

static bool concat(MistVM *vm, Value a, Value b, Value *out) {
  if (v_is_obj(a, O_STR)) {
    ObjStr *x = AS_STR(a), *y = AS_STR(b);
    if (x->len + y->len > MAX_BUILD_BYTES) return too_big(vm);
    ObjStr *s = lang_alloc_atomic(sizeof(ObjStr) + x->len + y->len + 1);
    s->obj.kind = O_STR;
    s->hash = 0;
    s->ascii = x->ascii && y->ascii;
    s->len = x->len + y->len;
    s->nchars = x->nchars + y->nchars;
    memcpy(s->data, x->data, x->len);
    memcpy(s->data + x->len, y->data, y->len);
    s->data[s->len] = '\0';
    *out = v_obj(s);
    return true;
  }
  ObjSeq *x = AS_SEQ(a), *y = AS_SEQ(b);
  if ((x->len + y->len) > MAX_BUILD_BYTES / sizeof(Value)) return too_big(vm);
  if (a.o->kind == O_LIST) {
    *out = v_obj(lang_list_concat(x, y, lang_updates_in_place(vm)));
    return true;
  }
  ObjSeq *r = lang_tuple_new(x->len + y->len);
  memcpy(r->items, x->items, x->len * sizeof(Value));
  memcpy(r->items + x->len, y->items, y->len * sizeof(Value));
  *out = v_obj(r);
  return true;
}

static bool repeat(MistVM *vm, Value seq, int64_t n, Value *out) {
  if (v_is_obj(seq, O_STR)) {
    ObjStr *x = AS_STR(seq);
    if (n <= 0 || x->len == 0) { *out = v_obj(lang_str_new("", 0)); return true; }
    if ((uint64_t)n > MAX_BUILD_BYTES / x->len) return too_big(vm);
    size_t total = x->len * (size_t)n;
    ObjStr *s = lang_alloc_atomic(sizeof(ObjStr) + total + 1);
    s->obj.kind = O_STR;
    s->hash = 0;
    s->ascii = x->ascii;
    s->len = total;
    s->nchars = x->nchars * (size_t)n;
    for (int64_t i = 0; i < n; i++) memcpy(s->data + (size_t)i * x->len, x->data, x->len);
    s->data[total] = '\0';
    *out = v_obj(s);
    return true;
  }
  ObjSeq *x = AS_SEQ(seq);
  bool tuple = seq.o->kind == O_TUPLE;
  if (n <= 0 || x->len == 0) {
    *out = v_obj(tuple ? lang_tuple_new(0) : lang_list_new(0));
    return true;
  }
  if ((uint64_t)n > MAX_BUILD_BYTES / sizeof(Value) / x->len) return too_big(vm);
  size_t total = x->len * (size_t)n;
  ObjSeq *r = tuple ? lang_tuple_new(total) : lang_list_new(total);
  for (int64_t i = 0; i < n; i++)
    memcpy(r->items + (size_t)i * x->len, x->items, x->len * sizeof(Value));
  *out = v_obj(r);
  return true;
}

static bool is_repeatable(Value v) {
  return v_is_obj(v, O_STR) || v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST);
}

bool lang_arith(MistVM *vm, ArithOp op, Value a, Value b, Value *out) {
  if (is_intlike(a) && is_intlike(b)) {
    if (op == OP_MATMUL) return unsupported(vm, op, a, b);
    return int_arith(vm, op, as_int(a), as_int(b), out);
  }
  if (is_num(a) && is_num(b)) {
    if (op == OP_MATMUL) return unsupported(vm, op, a, b);
    return float_arith(vm, op, as_float(a), as_float(b), out);
  }
  if (op == OP_MOD && v_is_obj(a, O_STR)) return lang_percent_format(vm, AS_STR(a), b, out);
  if (v_is_tensor(a) || v_is_tensor(b)) return lang_tensor_arith(vm, op, a, b, out);
  if (op == OP_ADD && a.tag == V_OBJ &&
      (a.o->kind == O_STR || a.o->kind == O_TUPLE || a.o->kind == O_LIST)) {
    if (b.tag == V_OBJ && b.o->kind == a.o->kind) return concat(vm, a, b, out);
    return lang_raise(vm, "TypeError", "can only concatenate %s (not \"%s\") to %s",
                      lang_type_name(a), lang_type_name(b), lang_type_name(a));
  }
  if (op == OP_MUL) {
    if (is_repeatable(a)) {
      if (is_intlike(b)) return repeat(vm, a, as_int(b), out);
      return lang_raise(vm, "TypeError", "can't multiply sequence by non-int of type '%s'",
                        lang_type_name(b));
    }
    if (is_repeatable(b)) {
      if (is_intlike(a)) return repeat(vm, b, as_int(a), out);
      return lang_raise(vm, "TypeError", "can't multiply sequence by non-int of type '%s'",
                        lang_type_name(a));
    }
  }
  return unsupported(vm, op, a, b);
}

bool lang_arith_reusing(MistVM *vm, ArithOp op, Value a, Value b, unsigned dead, Value *out) {
  /* (lang_arith gives every operation with a tensor operand to
   * lang_tensor_arith: a tensor is neither an int nor a float) */
  if (dead && (v_is_tensor(a) || v_is_tensor(b))) return lang_tensor_arith_reusing(vm, op, a, b, dead, out);
  return lang_arith(vm, op, a, b, out);
}

int lang_arith_scaled(MistVM *vm, ArithOp op, Value x, Value a, Value b, unsigned how, Value *out) {
  ObjTensor *r;
  if ((op != OP_ADD && op != OP_SUB) || !v_is_tensor(x) ||
      !lang_tensor_scaled_op(vm, op == OP_ADD ? TB_ADD : TB_SUB, x, a, b, how, &r))
    return 0;
  if (!r) return -1;
  *out = v_obj(r);
  return 1;
}

bool lang_neg(MistVM *vm, Value a, Value *out) {
  if (is_intlike(a)) {
    int64_t i = as_int(a);
    if (i == INT64_MIN) return overflow(vm);
    *out = v_int(-i);
    return true;
  }
  if (a.tag == V_FLOAT) { *out = v_float(-a.f); return true; }
  if (v_is_tensor(a)) {
    ObjTensor *r;
    if (!lang_tensor_unary(vm, TU_NEG, AS_TENSOR(a), &r)) return false;
    *out = v_obj(r);
    return true;
  }
  return lang_raise(vm, "TypeError", "bad operand type for unary -: '%s'", lang_type_name(a));
}

bool lang_pos(MistVM *vm, Value a, Value *out) {
  if (is_intlike(a)) { *out = v_int(as_int(a)); return true; }
  if (a.tag == V_FLOAT || v_is_tensor(a)) { *out = a; return true; }
  return lang_raise(vm, "TypeError", "bad operand type for unary +: '%s'", lang_type_name(a));
}

/* ---- comparison ---- */

/* -1, 0, 1, or 2 when unordered (a NaN).  Exact, as Python: an int and
 * a float compare by their mathematical values. */
static int int_float_cmp(int64_t i, double f) {
  if (isnan(f)) return 2;
  if (f >= 9223372036854775808.0) return -1;
  if (f < -9223372036854775808.0) return 1;
  int64_t t = (int64_t)f;   /* truncates toward zero; exact in range */
  if (i != t) return i < t ? -1 : 1;
  double frac = f - (double)t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static int num_cmp(Value a, Value b) {
  if (is_intlike(a) && is_intlike(b)) {
    int64_t x = as_int(a), y = as_int(b);
    return x < y ? -1 : x > y;
  }
  if (a.tag == V_FLOAT && b.tag == V_FLOAT) {
    if (isnan(a.f) || isnan(b.f)) return 2;
    return a.f < b.f ? -1 : a.f > b.f;
  }
  if (a.tag == V_FLOAT) {
    int c = int_float_cmp(as_int(b), a.f);
    return c == 2 ? 2 : -c;
  }
  return int_float_cmp(as_int(a), b.f);
}

static bool cmp_holds(CmpOp op, int c) {
  if (c == 2) return op == CMP_NE;
  switch (op) {
  case CMP_EQ: return c == 0;
  case CMP_NE: return c != 0;
  case CMP_LT: return c < 0;
  case CMP_LE: return c <= 0;
  case CMP_GT: return c > 0;
  case CMP_GE: return c >= 0;
  }
  return false;
}

static int str_cmp(const ObjStr *a, const ObjStr *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->data, b->data, n);
  if (c) return c < 0 ? -1 : 1;
  return a->len < b->len ? -1 : a->len > b->len;
}

bool lang_equal(Value a, Value b) {
  if (is_num(a) && is_num(b)) return num_cmp(a, b) == 0;
  if (a.tag != b.tag) return false;
  if (a.tag != V_OBJ) return true;   /* None, unbound */
  if (a.o == b.o) return true;
  if (a.o->kind != b.o->kind) return false;
  switch (a.o->kind) {
  case O_STR: return lang_str_eq(AS_STR(a), AS_STR(b));
  case O_TUPLE:
  case O_LIST: {
    ObjSeq *x = AS_SEQ(a), *y = AS_SEQ(b);
    if (x->len != y->len) return false;
    for (size_t i = 0; i < x->len; i++)
      if (!lang_equal(x->items[i], y->items[i])) return false;
    return true;
  }
  case O_DICT: {
    ObjDict *x = AS_DICT(a), *y = AS_DICT(b);
    if (x->len != y->len) return false;
    for (size_t i = 0; i < x->len; i++) {
      Value w;
      if (!lang_dict_get(y, x->entries[i].key, &w) || !lang_equal(x->entries[i].value, w))
        return false;
    }
    return true;
  }
  case O_RANGE: {
    ObjRange *x = AS_RANGE(a), *y = AS_RANGE(b);
    uint64_t n = lang_range_count(x);
    if (n != lang_range_count(y)) return false;
    if (n == 0) return true;
    if (x->start != y->start) return false;
    return n == 1 || x->step == y->step;
  }
  case O_SLICE: {
    ObjSlice *x = AS_SLICE(a), *y = AS_SLICE(b);
    return lang_equal(x->start, y->start) && lang_equal(x->stop, y->stop) &&
           lang_equal(x->step, y->step);
  }
  default: return false;   /* functions, builtins, modules: identity */
  }
}

static bool order(MistVM *vm, CmpOp op, Value a, Value b, bool *res) {
  if (is_num(a) && is_num(b)) { *res = cmp_holds(op, num_cmp(a, b)); return true; }
  if (a.tag == V_OBJ && b.tag == V_OBJ && a.o->kind == b.o->kind) {
    if (a.o->kind == O_STR) {
      *res = cmp_holds(op, str_cmp(AS_STR(a), AS_STR(b)));
      return true;
    }
    if (a.o->kind == O_TUPLE || a.o->kind == O_LIST) {
      ObjSeq *x = AS_SEQ(a), *y = AS_SEQ(b);
      size_t n = x->len < y->len ? x->len : y->len;
      for (size_t i = 0; i < n; i++)
        if (!lang_equal(x->items[i], y->items[i])) {
          if (!lang_check_stack(vm)) return false;
          return order(vm, op, x->items[i], y->items[i], res);
        }
      *res = cmp_holds(op, x->len < y->len ? -1 : x->len > y->len);
      return true;
    }
  }
  return lang_raise(vm, "TypeError", "'%s' not supported between instances of '%s' and '%s'",
                    lang_cmp_symbol(op), lang_type_name(a), lang_type_name(b));
}

bool lang_compare(MistVM *vm, CmpOp op, Value a, Value b, Value *out) {
  if (v_is_tensor(a) || v_is_tensor(b)) return lang_tensor_compare(vm, op, a, b, out);
  if (op == CMP_EQ || op == CMP_NE) {
    bool eq = lang_equal(a, b);
    *out = v_bool(op == CMP_EQ ? eq : !eq);
    return true;
  }
  bool r;
  if (!order(vm, op, a, b, &r)) return false;
  *out = v_bool(r);
  return true;
}

bool lang_truthy(MistVM *vm, Value a, bool *out) {
  switch (a.tag) {
  case V_UNBOUND:
  case V_NONE: *out = false; return true;
  case V_BOOL: *out = a.b; return true;
  case V_INT: *out = a.i != 0; return true;
  case V_FLOAT: *out = a.f != 0.0; return true;
  case V_OBJ: break;
  }
  switch (a.o->kind) {
  case O_STR: *out = AS_STR(a)->len != 0; return true;
  case O_TUPLE:
  case O_LIST: *out = AS_SEQ(a)->len != 0; return true;
  case O_DICT: *out = AS_DICT(a)->len != 0; return true;
  case O_RANGE: *out = lang_range_count(AS_RANGE(a)) != 0; return true;
  case O_TENSOR: return lang_tensor_truthy(vm, AS_TENSOR(a), out);
  default: *out = true; return true;
  }
}

/* ---- indexing and slicing ---- */

Value lang_slice_new(Value start, Value stop, Value step) {
  ObjSlice *s = lang_alloc(sizeof(ObjSlice));
  s->obj.kind = O_SLICE;
  s->start = start;
  s->stop = stop;
  s->step = step;
  return v_obj(s);
}

/* Python's PySlice_GetIndicesEx: clamp a slice to a sequence of length
 * len; *count is the number of elements selected. */
static bool slice_indices(MistVM *vm, const ObjSlice *s, int64_t len, int64_t *pstart,
                          int64_t *pstop, int64_t *pstep, int64_t *count) {
  const Value parts[3] = {s->start, s->stop, s->step};
  for (int i = 0; i < 3; i++)
    if (parts[i].tag != V_NONE && !is_intlike(parts[i]))
      return lang_raise(vm, "TypeError",
                        "slice indices must be integers or None or have an __index__ method");
  int64_t step = 1;
  if (s->step.tag != V_NONE) {
    step = as_int(s->step);
    if (step == 0) return lang_raise(vm, "ValueError", "slice step cannot be zero");
    if (step < -INT64_MAX) step = -INT64_MAX;
  }
  int64_t start, stop;
  if (s->start.tag == V_NONE) {
    start = step < 0 ? len - 1 : 0;
  } else {
    start = as_int(s->start);
    if (start < 0) {
      start += len;
      if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= len) {
      start = step < 0 ? len - 1 : len;
    }
  }
  if (s->stop.tag == V_NONE) {
    stop = step < 0 ? -1 : len;
  } else {
    stop = as_int(s->stop);
    if (stop < 0) {
      stop += len;
      if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= len) {
      stop = step < 0 ? len - 1 : len;
    }
  }
  if (step < 0) *count = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  else *count = start < stop ? (stop - start - 1) / step + 1 : 0;
  *pstart = start;
  *pstop = stop;
  *pstep = step;
  return true;
}

static Value str_char(const ObjStr *s, size_t byte) {
  uint32_t cp;
  size_t n = lang_utf8_decode(s->data + byte, s->len - byte, &cp);
  return v_obj(lang_str_new(s->data + byte, n));
}

static bool index_of(MistVM *vm, Value idx, size_t len, const char *what, size_t *out) {
  int64_t i = as_int(idx);
  if (i < 0) i += (int64_t)len;
  if (i < 0 || (uint64_t)i >= len) return lang_raise(vm, "IndexError", "%s", what);
  *out = (size_t)i;
  return true;
}

static bool getitem_slice(MistVM *vm, Value x, const ObjSlice *sl, Value *out) {
  int64_t start, stop, step, n;
  switch (x.o->kind) {
  case O_TUPLE:
  case O_LIST: {
    ObjSeq *s = AS_SEQ(x);
    if (!slice_indices(vm, sl, (int64_t)s->len, &start, &stop, &step, &n)) return false;
    ObjSeq *r = x.o->kind == O_TUPLE ? lang_tuple_new((size_t)n) : lang_list_new((size_t)n);
    if (step == 1) {
      memcpy(r->items, s->items + start, (size_t)n * sizeof(Value));
    } else {
      for (int64_t k = 0; k < n; k++) r->items[k] = s->items[start + k * step];
    }
    *out = v_obj(r);
    return true;
  }
  case O_STR: {
    ObjStr *s = AS_STR(x);
    if (!slice_indices(vm, sl, (int64_t)s->nchars, &start, &stop, &step, &n)) return false;
    if (s->ascii) {
      if (step == 1) {
        *out = v_obj(lang_str_new(s->data + start, (size_t)n));
        return true;
      }
      char *buf = lang_alloc_atomic((size_t)n + 1);
      for (int64_t k = 0; k < n; k++) buf[k] = s->data[start + k * step];
      *out = v_obj(lang_str_new(buf, (size_t)n));
      return true;
    }
    if (step == 1) {
      size_t b0 = lang_str_offset(s, (size_t)start);
      size_t i = b0;
      for (int64_t k = 0; k < n; k++) {
        i++;
        while (i < s->len && ((unsigned char)s->data[i] & 0xc0) == 0x80) i++;
      }
      *out = v_obj(lang_str_new(s->data + b0, i - b0));
      return true;
    }
    /* a general step on non-ASCII text: index the code points once */
    size_t *offs = lang_alloc_atomic((s->nchars + 1) * sizeof(size_t));
    size_t c = 0;
    for (size_t i = 0; i < s->len; i++)
      if (((unsigned char)s->data[i] & 0xc0) != 0x80) offs[c++] = i;
    offs[c] = s->len;
    StrBuf sb;
    sb_init(&sb);
    for (int64_t k = 0; k < n; k++) {
      size_t ci = (size_t)(start + k * step);
      sb_add(&sb, s->data + offs[ci], offs[ci + 1] - offs[ci]);
    }
    *out = v_obj(sb_to_str(&sb));
    return true;
  }
  case O_RANGE: {
    ObjRange *r = AS_RANGE(x);
    uint64_t len = lang_range_count(r);
    if (len > (uint64_t)INT64_MAX) return lang_raise(vm, "OverflowError", "range too large");
    if (!slice_indices(vm, sl, (int64_t)len, &start, &stop, &step, &n)) return false;
    __int128 a = (__int128)r->start + (__int128)start * r->step;
    __int128 b = (__int128)r->start + (__int128)stop * r->step;
    __int128 c = (__int128)r->step * step;
    if (a < INT64_MIN || a > INT64_MAX || b < INT64_MIN || b > INT64_MAX || c < INT64_MIN ||
        c > INT64_MAX)
      return overflow(vm);
    *out = v_obj(lang_range_new((int64_t)a, (int64_t)b, (int64_t)c));
    return true;
  }
  default:
    return lang_raise(vm, "TypeError", "'%s' object is not subscriptable", lang_type_name(x));
  }
}

static bool key_error(MistVM *vm, Value key) {
  StrBuf sb;
  sb_init(&sb);
  if (!lang_repr(vm, key, &sb)) return false;
  return lang_raise(vm, "KeyError", "%s", sb.data);
}

bool lang_getitem(MistVM *vm, Value x, Value index, Value *out) {
  if (x.tag != V_OBJ)
    return lang_raise(vm, "TypeError", "'%s' object is not subscriptable", lang_type_name(x));
  OKind k = x.o->kind;
  if ((k == O_LIST || k == O_TUPLE) && index.tag == V_INT) {
    ObjSeq *s = AS_SEQ(x);
    int64_t i = index.i;
    if (i < 0) i += (int64_t)s->len;
    if (i < 0 || (uint64_t)i >= s->len)
      return lang_raise(vm, "IndexError", k == O_LIST ? "list index out of range"
                                                      : "tuple index out of range");
    *out = s->items[i];
    return true;
  }
  if (k == O_TENSOR) return lang_tensor_getitem(vm, AS_TENSOR(x), index, out);
  if (k == O_NATIVE && AS_NATIVE(x)->cls->getitem) return AS_NATIVE(x)->cls->getitem(vm, x, index, out);
  if (k == O_DICT) {
    if (v_is_obj(index, O_STR) && lang_dict_get(AS_DICT(x), AS_STR(index), out)) return true;
    return key_error(vm, index);
  }
  if (v_is_obj(index, O_SLICE) && k != O_DICT) return getitem_slice(vm, x, AS_SLICE(index), out);
  size_t i = 0;
  switch (k) {
  case O_TUPLE:
  case O_LIST: {
    if (!is_intlike(index))
      return lang_raise(vm, "TypeError", "%s indices must be integers or slices, not %s",
                        lang_type_name(x), lang_type_name(index));
    ObjSeq *s = AS_SEQ(x);
    if (!index_of(vm, index, s->len,
                  k == O_LIST ? "list index out of range" : "tuple index out of range", &i))
      return false;
    *out = s->items[i];
    return true;
  }
  case O_STR: {
    if (!is_intlike(index))
      return lang_raise(vm, "TypeError", "string indices must be integers, not '%s'",
                        lang_type_name(index));
    ObjStr *s = AS_STR(x);
    if (!index_of(vm, index, s->nchars, "string index out of range", &i)) return false;
    if (s->ascii) {
      *out = v_obj(lang_str_new(s->data + i, 1));
      return true;
    }
    *out = str_char(s, lang_str_offset(s, i));
    return true;
  }
  case O_RANGE: {
    if (!is_intlike(index))
      return lang_raise(vm, "TypeError", "range indices must be integers or slices, not %s",
                        lang_type_name(index));
    ObjRange *r = AS_RANGE(x);
    uint64_t n = lang_range_count(r);
    int64_t j = as_int(index);
    if (j < 0) {
      if ((uint64_t)0 - (uint64_t)j > n)
        return lang_raise(vm, "IndexError", "range object index out of range");
      *out = v_int((int64_t)((uint64_t)r->start + (uint64_t)r->step * (n - ((uint64_t)0 - (uint64_t)j))));
      return true;
    }
    if ((uint64_t)j >= n) return lang_raise(vm, "IndexError", "range object index out of range");
    *out = v_int((int64_t)((uint64_t)r->start + (uint64_t)r->step * (uint64_t)j));
    return true;
  }
  default:
    return lang_raise(vm, "TypeError", "'%s' object is not subscriptable", lang_type_name(x));
  }
}

/* ---- iteration helper ---- */

bool lang_iter_items(MistVM *vm, Value v, ObjSeq **out) {
  if (is_seq(v)) { *out = AS_SEQ(v); return true; }
  if (v.tag == V_OBJ) {
    switch (v.o->kind) {
    case O_NATIVE: {
      /* what a for loop would walk: its sequence, indexed in order */
      const NativeClass *c = AS_NATIVE(v)->cls;
      Value seq;
      int64_t n;
      if (!c->iter) break;
      if (!c->iter(vm, v, &seq)) return false;
      if (!v_is_obj(seq, O_NATIVE)) return lang_iter_items(vm, seq, out);
      if (!lang_len(vm, seq, &n)) return false;
      if ((uint64_t)n > MAX_BUILD_BYTES / sizeof(Value)) return too_big(vm);
      ObjSeq *r = lang_list_new((size_t)n);
      for (int64_t i = 0; i < n; i++)
        if (!lang_getitem(vm, seq, v_int(i), &r->items[i])) return false;
      *out = r;
      return true;
    }
    case O_STR: {
      ObjStr *s = AS_STR(v);
      ObjSeq *r = lang_list_new(s->nchars);
      size_t b = 0;
      for (size_t i = 0; i < s->nchars; i++) {
        uint32_t cp;
        size_t n = lang_utf8_decode(s->data + b, s->len - b, &cp);
        r->items[i] = v_obj(lang_str_new(s->data + b, n));
        b += n;
      }
      *out = r;
      return true;
    }
    case O_DICT: {
      ObjDict *d = AS_DICT(v);
      ObjSeq *r = lang_list_new(d->len);
      for (size_t i = 0; i < d->len; i++) r->items[i] = v_obj(d->entries[i].key);
      *out = r;
      return true;
    }
    case O_RANGE: {
      ObjRange *rg = AS_RANGE(v);
      uint64_t n = lang_range_count(rg);
      if (n > MAX_BUILD_BYTES / sizeof(Value)) return too_big(vm);
      ObjSeq *r = lang_list_new((size_t)n);
      int64_t x = rg->start;
      for (uint64_t i = 0; i < n; i++, x = (int64_t)((uint64_t)x + (uint64_t)rg->step))
        r->items[i] = v_int(x);
      *out = r;
      return true;
    }
    case O_TENSOR: {
      ObjTensor *t = AS_TENSOR(v);
      if (t->ndim == 0) return lang_raise(vm, "TypeError", "iteration over a 0-d tensor");
      if ((uint64_t)t->shape[0] > MAX_BUILD_BYTES / sizeof(Value)) return too_big(vm);
      ObjSeq *r = lang_list_new((size_t)t->shape[0]);
      for (int64_t i = 0; i < t->shape[0]; i++)
        if (!lang_tensor_getitem(vm, t, v_int(i), &r->items[i])) return false;
      *out = r;
      return true;
    }
    default: break;
    }
  }
  return lang_raise(vm, "TypeError", "'%s' object is not iterable", lang_type_name(v));
}

/* ---- functional item assignment ---- */

static bool list_setslice(MistVM *vm, ObjSeq *s, const ObjSlice *sl, Value v, Value *out) {
  int64_t start, stop, step, n;
  if (!slice_indices(vm, sl, (int64_t)s->len, &start, &stop, &step, &n)) return false;
  ObjSeq *items;
  if (!is_seq(v) && !(v.tag == V_OBJ && (v.o->kind == O_STR || v.o->kind == O_DICT ||
                                         v.o->kind == O_RANGE)))
    return lang_raise(vm, "TypeError", "can only assign an iterable");
  if (!lang_iter_items(vm, v, &items)) return false;
  if (step == 1) {
    if (stop < start) stop = start;
    size_t keep = s->len - (size_t)(stop - start);
    if (items->len > MAX_BUILD_BYTES / sizeof(Value) - keep) return too_big(vm);
    ObjSeq *r = lang_list_new(keep + items->len);
    memcpy(r->items, s->items, (size_t)start * sizeof(Value));
    memcpy(r->items + start, items->items, items->len * sizeof(Value));
    memcpy(r->items + start + items->len, s->items + stop, (s->len - (size_t)stop) * sizeof(Value));
    *out = v_obj(r);
    return true;
  }
  if ((int64_t)items->len != n)
    return lang_raise(vm, "ValueError",
                      "attempt to assign sequence of size %zu to extended slice of size %lld",
                      items->len, (long long)n);
  ObjSeq *r = lang_list_new(s->len);
  memcpy(r->items, s->items, s->len * sizeof(Value));
  for (int64_t k = 0; k < n; k++) r->items[start + k * step] = items->items[k];
  *out = v_obj(r);
  return true;
}

bool lang_setitem(MistVM *vm, Value x, Value index, Value v, Value *out) {
  if (v_is_obj(x, O_LIST)) {
    ObjSeq *s = AS_SEQ(x);
    if (v_is_obj(index, O_SLICE)) return list_setslice(vm, s, AS_SLICE(index), v, out);
    if (!is_intlike(index))
      return lang_raise(vm, "TypeError", "list indices must be integers or slices, not %s",
                        lang_type_name(index));
    size_t i = 0;
    if (!index_of(vm, index, s->len, "list assignment index out of range", &i)) return false;
    *out = v_obj(lang_list_set(s, i, v, lang_updates_in_place(vm)));
    return true;
  }
  if (v_is_obj(x, O_DICT)) {
    if (!v_is_obj(index, O_STR))
      return lang_raise(vm, "TypeError", "dict keys must be str, not '%s'", lang_type_name(index));
    *out = v_obj(lang_dict_set(AS_DICT(x), AS_STR(index), v, lang_updates_in_place(vm)));
    return true;
  }
  if (v_is_tensor(x)) return lang_tensor_setitem(vm, AS_TENSOR(x), index, v, out);
  return lang_raise(vm, "TypeError", "'%s' object does not support item assignment",
                    lang_type_name(x));
}

/* ---- membership and length ---- */

bool lang_contains(MistVM *vm, Value c, Value item, bool *out) {
  if (c.tag == V_OBJ) {
    switch (c.o->kind) {
    case O_STR: {
      if (!v_is_obj(item, O_STR))
        return lang_raise(vm, "TypeError", "'in <string>' requires string as left operand, not %s",
                          lang_type_name(item));
      ObjStr *h = AS_STR(c), *n = AS_STR(item);
      *out = n->len == 0 || memmem(h->data, h->len, n->data, n->len) != NULL;
      return true;
    }
    case O_TUPLE:
    case O_LIST: {
      ObjSeq *s = AS_SEQ(c);
      *out = false;
      for (size_t i = 0; i < s->len; i++)
        if (lang_equal(s->items[i], item)) { *out = true; break; }
      return true;
    }
    case O_DICT: {
      Value dummy;
      *out = v_is_obj(item, O_STR) && lang_dict_get(AS_DICT(c), AS_STR(item), &dummy);
      return true;
    }
    case O_TENSOR: return lang_tensor_contains(vm, AS_TENSOR(c), item, out);
    case O_RANGE: {
      ObjRange *r = AS_RANGE(c);
      int64_t x;
      *out = false;
      if (is_intlike(item)) {
        x = as_int(item);
      } else if (item.tag == V_FLOAT && item.f == floor(item.f) &&
                 item.f >= -9223372036854775808.0 && item.f < 9223372036854775808.0) {
        x = (int64_t)item.f;
      } else {
        return true;
      }
      if (r->step > 0 ? (x < r->start || x >= r->stop) : (x > r->start || x <= r->stop))
        return true;
      __int128 d = (__int128)x - r->start;
      *out = d % r->step == 0;
      return true;
    }
    default: break;
    }
  }
  return lang_raise(vm, "TypeError", "argument of type '%s' is not iterable", lang_type_name(c));
}

bool lang_len(MistVM *vm, Value x, int64_t *out) {
  if (x.tag == V_OBJ) {
    switch (x.o->kind) {
    case O_STR: *out = (int64_t)AS_STR(x)->nchars; return true;
    case O_TUPLE:
    case O_LIST: *out = (int64_t)AS_SEQ(x)->len; return true;
    case O_DICT: *out = (int64_t)AS_DICT(x)->len; return true;
    case O_TENSOR:
      if (AS_TENSOR(x)->ndim == 0) return lang_raise(vm, "TypeError", "len() of a 0-d tensor");
      *out = AS_TENSOR(x)->shape[0];
      return true;
    case O_RANGE: {
      uint64_t n = lang_range_count(AS_RANGE(x));
      if (n > (uint64_t)INT64_MAX) return lang_raise(vm, "OverflowError", "range too large");
      *out = (int64_t)n;
      return true;
    }
    case O_NATIVE:
      if (AS_NATIVE(x)->cls->len) return AS_NATIVE(x)->cls->len(vm, x, out);
      break;
    default: break;
    }
  }
  return lang_raise(vm, "TypeError", "object of type '%s' has no len()", lang_type_name(x));
}

/* ---- conversions ---- */

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= 0x1c && c <= 0x1f);
}

static void strip(const ObjStr *s, const char **b, const char **e) {
  const char *p = s->data, *q = s->data + s->len;
  while (p < q && is_space(*p)) p++;
  while (q > p && is_space(q[-1])) q--;
  *b = p;
  *e = q;
}

static bool bad_literal(MistVM *vm, const char *fmt, Value v) {
  StrBuf sb;
  sb_init(&sb);
  lang_str_repr(AS_STR(v), &sb);
  return lang_raise(vm, "ValueError", fmt, sb.data);
}

static bool parse_int(MistVM *vm, Value v, Value *out) {
  const char *p, *e;
  strip(AS_STR(v), &p, &e);
  bool neg = false;
  if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
  if (p == e || !isdigit((unsigned char)*p)) goto bad;
  int64_t r = 0;
  bool big = false;
  while (p < e) {
    if (*p == '_') {
      p++;
      if (p == e || !isdigit((unsigned char)*p)) goto bad;
    }
    if (!isdigit((unsigned char)*p)) goto bad;
    int d = *p++ - '0';
    /* accumulate negatively so INT64_MIN parses */
    if (__builtin_mul_overflow(r, 10, &r) || __builtin_sub_overflow(r, d, &r)) big = true;
  }
  if (big) return overflow(vm);
  if (!neg) {
    if (r == INT64_MIN) return overflow(vm);
    r = -r;
  }
  *out = v_int(r);
  return true;
bad:
  return bad_literal(vm, "invalid literal for int() with base 10: %s", v);
}

bool lang_to_int(MistVM *vm, Value v, Value *out) {
  switch (v.tag) {
  case V_INT: *out = v; return true;
  case V_BOOL: *out = v_int(v.b); return true;
  case V_FLOAT:
    if (isnan(v.f)) return lang_raise(vm, "ValueError", "cannot convert float NaN to integer");
    if (isinf(v.f))
      return lang_raise(vm, "OverflowError", "cannot convert float infinity to integer");
    if (!(v.f >= -9223372036854775808.0 && v.f < 9223372036854775808.0)) return overflow(vm);
    *out = v_int((int64_t)v.f);
    return true;
  default: break;
  }
  if (v_is_obj(v, O_STR)) return parse_int(vm, v, out);
  if (v_is_tensor(v)) {
    Value x;
    return lang_tensor_item(vm, "int", AS_TENSOR(v), &x) && lang_to_int(vm, x, out);
  }
  return lang_raise(vm, "TypeError",
                    "int() argument must be a string, a bytes-like object or a real number, "
                    "not '%s'", lang_type_name(v));
}

static bool word_ci(const char *p, const char *e, const char *w) {
  size_t n = strlen(w);
  return (size_t)(e - p) == n && strncasecmp(p, w, n) == 0;
}

static bool parse_float(MistVM *vm, Value v, Value *out) {
  const char *p, *e;
  strip(AS_STR(v), &p, &e);
  const char *q = p;
  bool neg = false;
  if (q < e && (*q == '+' || *q == '-')) neg = *q++ == '-';
  if (word_ci(q, e, "inf") || word_ci(q, e, "infinity")) {
    *out = v_float(neg ? -INFINITY : INFINITY);
    return true;
  }
  if (word_ci(q, e, "nan")) {
    *out = v_float(neg ? -NAN : NAN);
    return true;
  }
  /* digits with single underscores between digits, '.', exponent;
   * copied without the underscores for strtod */
  char small[128];
  size_t cap = (size_t)(e - p) + 1;
  char *buf = cap <= sizeof small ? small : lang_alloc_atomic(cap);
  size_t n = 0;
  if (p < q) buf[n++] = *p;
  int ndigits = 0;
  bool seen_dot = false;
  for (;;) {
    if (q < e && isdigit((unsigned char)*q)) {
      buf[n++] = *q++;
      ndigits++;
      if (q < e && *q == '_') {
        if (q + 1 >= e || !isdigit((unsigned char)q[1])) goto bad;
        q++;
      }
    } else if (q < e && *q == '.' && !seen_dot) {
      seen_dot = true;
      buf[n++] = *q++;
    } else {
      break;
    }
  }
  if (ndigits == 0) goto bad;
  if (q < e && (*q == 'e' || *q == 'E')) {
    buf[n++] = *q++;
    if (q < e && (*q == '+' || *q == '-')) buf[n++] = *q++;
    if (q == e || !isdigit((unsigned char)*q)) goto bad;
    while (q < e && isdigit((unsigned char)*q)) {
      buf[n++] = *q++;
      if (q < e && *q == '_') {
        if (q + 1 >= e || !isdigit((unsigned char)q[1])) goto bad;
        q++;
      }
    }
  }
  if (q != e) goto bad;
  buf[n] = '\0';
  *out = v_float(strtod(buf, NULL));
  return true;
bad:
  return bad_literal(vm, "could not convert string to float: %s", v);
}

bool lang_to_float(MistVM *vm, Value v, Value *out) {
  switch (v.tag) {
  case V_FLOAT: *out = v; return true;
  case V_INT: *out = v_float((double)v.i); return true;
  case V_BOOL: *out = v_float(v.b ? 1.0 : 0.0); return true;
  default: break;
  }
  if (v_is_obj(v, O_STR)) return parse_float(vm, v, out);
  if (v_is_tensor(v)) {
    Value x;
    return lang_tensor_item(vm, "float", AS_TENSOR(v), &x) && lang_to_float(vm, x, out);
  }
  return lang_raise(vm, "TypeError", "float() argument must be a string or a real number, not '%s'",
                    lang_type_name(v));
}
