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
#include "lang/ops.h"

typedef enum { T_ADD, T_SUB, T_MUL, T_TRUEDIV, T_NEG, T_EXP, T_LOG, T_SQRT, T_SIN, T_COS, T_TANH, T_COUNT } TanOp;

/* The operation each rule is for: a primitive of ir/ops.def (op false)
 * or an op of ir/builtin_ops.def (op true), whose name its rule F_name
 * in ad_rules.ms carries. */
static const struct {
  bool op;
  int id;
} rule_of[T_COUNT] = {
  [T_ADD] = {false, IR_P_ADD}, [T_SUB] = {false, IR_P_SUB}, [T_MUL] = {false, IR_P_MUL},
  [T_TRUEDIV] = {false, IR_P_TRUEDIV}, [T_NEG] = {false, IR_P_NEG}, [T_EXP] = {true, IR_B_EXP},
  [T_LOG] = {true, IR_B_LOG}, [T_SQRT] = {true, IR_B_SQRT}, [T_SIN] = {true, IR_B_SIN},
  [T_COS] = {true, IR_B_COS}, [T_TANH] = {true, IR_B_TANH},
};

static const char *rule_name(TanOp op) {
  return rule_of[op].op ? ir_builtin_ops[rule_of[op].id].name : ir_prims[rule_of[op].id].name;
}

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

/* 1 with the pair for floats (or for no tangent at all), 0 when the
 * Mist rule must decide, -1 after an error the operation raised */
static int fast(MistVM *vm, TanOp op, int argc, const Value *argv, Value *out) {
  double x, tx = 0, y, ty = 0;
  bool zx, zy;
  if (op <= T_NEG && argc == (op == T_NEG ? 2 : 4) && argv[1].tag == V_NONE && (op == T_NEG || argv[3].tag == V_NONE)) {
    /* no tangent: the value alone, whatever it is (ints, lists...) */
    static const ArithOp arith[] = {OP_ADD, OP_SUB, OP_MUL, OP_TRUEDIV};
    Value v;
    if (!(op == T_NEG ? lang_neg(vm, argv[0], &v) : lang_arith(vm, arith[op], argv[0], argv[2], &v))) return -1;
    *out = lang_tuple_of(2, v, v_none());
    return 1;
  }
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

/* ---- the same rules under one more forward transform ----
 *
 * A jvp inside a jvp transforms F_mul once more: F(F_mul)(tans, x, tx,
 * y, ty), tans the outer tangents of x, tx, y and ty, returns ((x * y,
 * its inner tangent), (their outer tangents)).  For floats that is
 * computed here too, following F(F_mul) step by step: tscale, tadd and
 * _tfit under the transform, None for zero throughout. */

typedef struct Maybe {
  bool zero;
  double v;
} Maybe;

typedef struct Dual {
  Maybe v, t;   /* a float or None, and its outer tangent */
} Dual;

static Maybe m_scale(Maybe t, double s) { return t.zero ? t : (Maybe){false, t.v * s}; }
static Maybe m_add(Maybe a, Maybe b) { return a.zero ? b : b.zero ? a : (Maybe){false, a.v + b.v}; }
static Value m_value(Maybe m) { return m.zero ? v_none() : v_float(m.v); }

/* tscale(t, s) under the transform, s a float with outer tangent ts */
static Dual d_scale(Dual t, double s, Maybe ts) {
  if (t.v.zero) return t;
  return (Dual){{false, t.v.v * s}, m_add(m_scale(t.t, s), m_scale(ts, t.v.v))};
}

/* tadd(a, b) under the transform */
static Dual d_add(Dual a, Dual b) {
  if (a.v.zero) return b;
  if (b.v.zero) return a;
  return (Dual){{false, a.v.v + b.v.v}, m_add(a.t, b.t)};
}

static bool maybe(Value v, Maybe *m) {
  m->zero = v.tag == V_NONE;
  m->v = v.tag == V_FLOAT ? v.f : 0;
  return v.tag == V_NONE || v.tag == V_FLOAT;
}

/* 1 with ((r, t), (tr, tt)) for floats, 0 when F of the Mist rule must
 * decide */
static int fast2(TanOp op, int argc, const Value *argv, Value *out) {
  int np = op == T_NEG ? 2 : 4;
  if (argc != np + 1 || !(argv[0].tag == V_NONE || v_is_obj(argv[0], O_TUPLE))) return 0;
  Maybe T[4] = {{true, 0}, {true, 0}, {true, 0}, {true, 0}};   /* outer tangents of x, tx, y, ty */
  if (argv[0].tag != V_NONE) {
    ObjSeq *t = AS_SEQ(argv[0]);
    if ((int)t->len > np) return 0;
    for (size_t i = 0; i < t->len; i++)
      if (!maybe(t->items[i], &T[i])) return 0;
  }
  const Value *a = argv + 1;
  double x, y = 0;
  Maybe tx, ty = {true, 0};
  if (!num(a[0], &x) || !maybe(a[1], &tx)) return 0;
  if (np == 4 && (!num(a[2], &y) || !maybe(a[3], &ty) || (a[0].tag != V_FLOAT && a[2].tag != V_FLOAT))) return 0;
  if (np == 2 && a[0].tag != V_FLOAT) return 0;
  Dual dx = {tx, T[1]}, dy = {ty, T[3]};
  double r;
  Maybe tr;
  Dual t;
  switch (op) {
  case T_ADD:
    r = x + y;
    tr = m_add(T[0], T[2]);
    t = d_add(dx, dy);
    break;
  case T_SUB:
    r = x - y;
    tr = m_add(T[0], m_scale(T[2], -1.0));
    t = d_add(dx, d_scale(dy, -1.0, (Maybe){true, 0}));
    break;
  case T_MUL:
    r = x * y;
    tr = m_add(m_scale(T[0], y), m_scale(T[2], x));
    t = d_add(d_scale(dx, y, T[2]), d_scale(dy, x, T[0]));
    break;
  case T_NEG:
    r = -x;
    tr = m_scale(T[0], -1.0);
    t = d_scale(dx, -1.0, (Maybe){true, 0});
    break;
  default: return 0;
  }
  *out = lang_tuple_of(2, lang_tuple_of(2, v_float(r), m_value(t.v)),
                       lang_tuple_of(2, m_value(tr), t.v.zero ? v_none() : m_value(t.t)));
  return 1;
}

/* F_op(args...) at level 1, F(F_op)(tangents, args...) at level 2: in
 * C for floats, else the Mist rule (transformed at level 2) */
static bool rule_call(MistVM *vm, TanOp op, int level, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  int done = kw ? 0 : level == 1 ? fast(vm, op, argc, argv, out) : fast2(op, argc, argv, out);
  if (done) return done > 0;
  Value rule = ad_fast_F_rule_source(vm, v_obj(lang_str(rule_name(op))));
  if (rule.tag == V_UNBOUND || (level == 2 && !ad_state(vm)->transform.F_value(vm, rule, &rule))) return false;
  return vm->call(vm, rule, argc, argv, kw, out);
}

/* one C function each: the interpreter calls a builtin constant directly */
#define RULE(op, level)                                                                              \
  static bool rule##level##_##op(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) { \
    return rule_call(vm, op, level, argc, argv, kw, out);                                            \
  }
RULE(T_ADD, 1)
RULE(T_SUB, 1)
RULE(T_MUL, 1)
RULE(T_TRUEDIV, 1)
RULE(T_NEG, 1)
RULE(T_EXP, 1)
RULE(T_LOG, 1)
RULE(T_SQRT, 1)
RULE(T_SIN, 1)
RULE(T_COS, 1)
RULE(T_TANH, 1)
RULE(T_ADD, 2)
RULE(T_SUB, 2)
RULE(T_MUL, 2)
RULE(T_NEG, 2)

static const BuiltinFn rule_fns[T_COUNT] = {rule1_T_ADD, rule1_T_SUB, rule1_T_MUL, rule1_T_TRUEDIV, rule1_T_NEG, rule1_T_EXP,
                                            rule1_T_LOG, rule1_T_SQRT, rule1_T_SIN, rule1_T_COS, rule1_T_TANH};
static const BuiltinFn rule2_fns[T_COUNT] = {[T_ADD] = rule2_T_ADD, [T_SUB] = rule2_T_SUB, [T_MUL] = rule2_T_MUL,
                                             [T_NEG] = rule2_T_NEG};

/* the operation of a rule here, and at which level (1: F_op's place,
 * 2: F(F_op)'s) */
static int op_of(Value fn, int *level) {
  if (!v_is_obj(fn, O_BUILTIN)) return -1;
  for (int op = 0; op < T_COUNT; op++) {
    *level = AS_BUILTIN(fn)->fn == rule_fns[op] ? 1 : rule2_fns[op] && AS_BUILTIN(fn)->fn == rule2_fns[op] ? 2 : 0;
    if (*level) return op;
  }
  return -1;
}

/* The builtin standing for the rule of primitive id (op false) or of
 * builtin op id (op true), or unbound when there is none. */
Value ad_fast_F_rule(MistVM *vm, bool op, int id) {
  Value v = v_unbound();
  for (int t = 0; t < T_COUNT; t++)
    if (rule_of[t].op == op && rule_of[t].id == id) lang_dict_get(vm->builtins, lang_str_fmt("_F_%s", rule_name(t)), &v);
  return v;
}

bool ad_is_fast_F_rule(Value fn) {
  int level;
  return op_of(fn, &level) >= 0;
}

bool ad_tangent_rule(Value fn, bool *op, int *id) {
  int level, t = op_of(fn, &level);
  if (t < 0 || level != 1) return false;
  *op = rule_of[t].op;
  *id = rule_of[t].id;
  return true;
}

/* The Mist rule F_name behind a rule here (at level 2, its forward
 * transform), or for a name given as a string; unbound after an error. */
Value ad_fast_F_rule_source(MistVM *vm, Value fn) {
  int level = 1, op = op_of(fn, &level);
  const char *name = op >= 0 ? rule_name(op) : AS_STR(fn)->data;
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  if (!m) return v_unbound();
  Value rule = ad_module_global(vm, m, "F_", name);
  if (rule.tag == V_UNBOUND) lang_raise(vm, "NameError", "F_%s is missing from stdlib/ad_rules.ms", name);
  if (level == 2 && rule.tag != V_UNBOUND && !ad_state(vm)->transform.F_value(vm, rule, &rule)) return v_unbound();
  return rule;
}

/* A rule here, once more forward-transformed: the level-2 rule for a
 * level-1 one that has it, else the transform of the Mist rule behind it
 * (called (tangents, args...) as any transformed function). */
Value ad_fast_F_rule_under(MistVM *vm, Value fn) {
  int level, op = op_of(fn, &level);
  if (level == 1 && rule2_fns[op]) {
    Value v = v_unbound();
    lang_dict_get(vm->builtins, lang_str_fmt("_FF_%s", rule_name(op)), &v);
    if (v.tag != V_UNBOUND) return v;
  }
  Value def = ad_fast_F_rule_source(vm, fn), fdef;
  if (def.tag == V_UNBOUND || !ad_state(vm)->transform.F_value(vm, def, &fdef)) return v_unbound();
  return fdef;
}

/* Registered as _F_name and _FF_name, after the Mist rules they stand
 * for. */
void ad_register_tangents(MistVM *vm) {
  for (int op = 0; op < T_COUNT; op++) {
    lang_def_builtin(vm, lang_str_fmt("_F_%s", rule_name(op))->data, rule_fns[op], -1, -1);
    if (rule2_fns[op]) lang_def_builtin(vm, lang_str_fmt("_FF_%s", rule_name(op))->data, rule2_fns[op], -1, -1);
  }
}
