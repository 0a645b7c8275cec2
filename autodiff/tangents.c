/* tangents.c: forward mode's rules for the hottest operations on floats,
 * in C.
 *
 * A forward rule is Mist code (stdlib/ad_rules.ms): F_mul(x, tx, y, ty)
 * returns (x * y, tx * y + ty * x) by way of tscale, tadd and _tfit, so
 * a jvp of scalar code made four Mist calls per multiplication.  When
 * the values are floats (an int beside a float is one too) and the
 * tangents floats or None (zero), the builtins here compute the same
 * pair with the same operations in the same order; anything else
 * (tensors, sequences, two ints, a domain error to raise) is handed to
 * the Mist rule.  The forward transform (forward.c) calls these in its
 * place; a transform of a forward transform (a jvp inside a jvp) takes
 * each as a call of its Mist rule, so they nest to any order.
 */
#include <math.h>
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"

typedef enum { T_ADD, T_SUB, T_MUL, T_TRUEDIV, T_NEG, T_EXP, T_LOG, T_SQRT, T_SIN, T_COS, T_TANH, T_COUNT } TanOp;

static const char *const rule_names[T_COUNT] = {"add", "sub", "mul", "truediv", "neg", "exp",
                                                 "log", "sqrt", "sin", "cos", "tanh"};

/* a float, or an int a float meets exactly */
static bool num(Value v, double *f) {
  if (v.tag == V_FLOAT) *f = v.f;
  else if (v.tag == V_INT && v.i > -(INT64_C(1) << 53) && v.i < (INT64_C(1) << 53)) *f = (double)v.i;
  else return false;
  return true;
}

/* a tangent: a float, or None for zero (*zero set) */
static bool tan_of(Value v, double *f, bool *zero) {
  *zero = v.tag == V_NONE;
  if (*zero) return true;
  if (v.tag != V_FLOAT) return false;
  *f = v.f;
  return true;
}

static Value pair(double v, double t, bool zero) { return lang_tuple_of(2, v_float(v), zero ? v_none() : v_float(t)); }

/* tadd(tscale(ta, a), tscale(tb, b)) of ad_rules.ms, None for zero */
static Value tan_sum(double v, double ta, bool za, double a, double tb, bool zb, double b) {
  if (za && zb) return pair(v, 0, true);
  if (za) return pair(v, tb * b, false);
  if (zb) return pair(v, ta * a, false);
  return pair(v, ta * a + tb * b, false);
}

/* the pair for floats, or false when the Mist rule must decide */
static bool fast(TanOp op, int argc, const Value *argv, Value *out) {
  double x, tx = 0, y, ty = 0;
  bool zx, zy;
  if (argc < 2 || !num(argv[0], &x) || !tan_of(argv[1], &tx, &zx)) return false;
  if (op <= T_TRUEDIV) {
    if (argc != 4 || !num(argv[2], &y) || !tan_of(argv[3], &ty, &zy)) return false;
    if (argv[0].tag != V_FLOAT && argv[2].tag != V_FLOAT) return false;   /* int op int */
    switch (op) {
    case T_ADD: /* tadd(tx, ty) */ *out = zx ? pair(x + y, ty, zy) : zy ? pair(x + y, tx, false) : pair(x + y, tx + ty, false); return true;
    case T_SUB: /* tadd(tx, tscale(ty, -1.0)) */ *out = zx ? pair(x - y, ty * -1.0, zy) : zy ? pair(x - y, tx, false) : pair(x - y, tx + ty * -1.0, false); return true;
    case T_MUL: *out = tan_sum(x * y, tx, zx, y, ty, zy, x); return true;
    case T_TRUEDIV:
      if (y == 0) return false;   /* ZeroDivisionError, from the rule */
      /* tadd(tscale(tx, _fdiv(1.0, y)), tscale(ty, _fdiv(-x, y * y))) */
      *out = tan_sum(x / y, tx, zx, 1.0 / y, ty, zy, -x / (y * y));
      return true;
    default: return false;
    }
  }
  if (argc != 2 || argv[0].tag != V_FLOAT) return false;
  double r;
  switch (op) {
  case T_NEG: *out = pair(-x, tx * -1.0, zx); return true;
  case T_EXP:
    r = exp(x);
    if (isinf(r) && isfinite(x)) return false;   /* OverflowError */
    *out = pair(r, tx * r, zx);
    return true;
  case T_LOG:
    if (!(x > 0)) return false;
    *out = pair(log(x), tx * (1.0 / x), zx);
    return true;
  case T_SQRT:
    if (!(x >= 0)) return false;
    r = sqrt(x);
    *out = pair(r, tx * (0.5 / r), zx);
    return true;
  case T_SIN:
    if (!isfinite(x)) return false;
    *out = pair(sin(x), tx * cos(x), zx);
    return true;
  case T_COS:
    if (!isfinite(x)) return false;
    *out = pair(cos(x), tx * -sin(x), zx);
    return true;
  case T_TANH:
    r = tanh(x);
    *out = pair(r, tx * (1.0 - r * r), zx);
    return true;
  default: return false;
  }
}

static bool rule_call(MistVM *vm, TanOp op, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (!kw && fast(op, argc, argv, out)) return true;
  Value rule = ad_fast_F_rule_source(vm, v_obj(lang_str(rule_names[op])));
  if (rule.tag == V_UNBOUND) return false;
  return vm->call(vm, rule, argc, argv, kw, out);
}

/* one C function each: the interpreter calls a builtin constant directly */
#define RULE(op) \
  static bool rule_##op(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) { \
    return rule_call(vm, op, argc, argv, kw, out);                                                 \
  }
RULE(T_ADD)
RULE(T_SUB)
RULE(T_MUL)
RULE(T_TRUEDIV)
RULE(T_NEG)
RULE(T_EXP)
RULE(T_LOG)
RULE(T_SQRT)
RULE(T_SIN)
RULE(T_COS)
RULE(T_TANH)

static const BuiltinFn rule_fns[T_COUNT] = {rule_T_ADD, rule_T_SUB, rule_T_MUL, rule_T_TRUEDIV, rule_T_NEG, rule_T_EXP,
                                            rule_T_LOG, rule_T_SQRT, rule_T_SIN, rule_T_COS, rule_T_TANH};

static int op_of(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return -1;
  for (int op = 0; op < T_COUNT; op++)
    if (AS_BUILTIN(fn)->fn == rule_fns[op]) return op;
  return -1;
}

/* The builtin standing for F_name, or unbound when there is none. */
Value ad_fast_F_rule(MistVM *vm, const char *name) {
  Value v = v_unbound();
  for (int op = 0; op < T_COUNT; op++)
    if (strcmp(rule_names[op], name) == 0) lang_dict_get(vm->builtins, lang_str_fmt("_F_%s", name), &v);
  return v;
}

bool ad_is_fast_F_rule(Value fn) { return op_of(fn) >= 0; }

/* The Mist rule F_name behind one of these builtins, or for a name given
 * as a string; unbound after an error. */
Value ad_fast_F_rule_source(MistVM *vm, Value fn) {
  int op = op_of(fn);
  const char *name = op >= 0 ? rule_names[op] : AS_STR(fn)->data;
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  if (!m) return v_unbound();
  Value rule = ad_module_global(m, "F_", name);
  if (rule.tag == V_UNBOUND) lang_raise(vm, "NameError", "F_%s is missing from stdlib/ad_rules.ms", name);
  return rule;
}

/* Registered as _F_name, after the Mist rules they stand for. */
void ad_register_tangents(MistVM *vm) {
  for (int op = 0; op < T_COUNT; op++) lang_def_builtin(vm, lang_str_fmt("_F_%s", rule_names[op])->data, rule_fns[op], -1, -1);
}
