/* prims_sens.c: the sensitivity primitives of ops.def (add_sens,
 * mul_sens, sin_sens...), which reverse-mode backward passes use in
 * place of a backpropagator closure for the hot arithmetic primitives
 * and math builtins.
 *
 * Each computes one argument's sensitivity directly: op_sens(d, x, y, i)
 * for argument i of the binary op(x, y), f_sens(d, x, y) for x in
 * y = f(x), d being the sensitivity of the result.  None when d is None
 * or the argument is an int, bool or str (not differentiable).  Floats
 * (with ints as the other operand) are computed here, with the same
 * operations in the same order as the Mist definitions, so both give the
 * same bits; everything else (tensors, which broadcast, lists and
 * tuples, which concatenate and repeat, mixed kinds) goes to the Mist
 * definition of the same name in stdlib/ad_sens.ms through vm->ad_sens,
 * so that logic lives in one place.  Those definitions are also what the
 * transforms differentiate for second derivatives.  Divisions and powers
 * are IEEE arithmetic, as _fdiv and _fpow are there: at a singular point
 * (sqrt at 0, 0 ** -0.5) a derivative is inf or nan, never an error.
 */
#include <math.h>

#include "ir/prims_sens.h"

/* The Mist definition, for what the fast path leaves. */
static bool general(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  if (!vm->ad_sens) return lang_raise(vm, "TypeError", "%s: automatic differentiation is not available", ir_prims[p].name);
  return vm->ad_sens(vm, (int)p, argc, argv, out);
}

static bool no_sens(Value x) { return x.tag == V_INT || x.tag == V_BOOL || v_is_obj(x, O_STR); }

/* A float or int operand as a double (false for anything else). */
static bool num(Value v, double *f) {
  if (v.tag == V_FLOAT) *f = v.f;
  else if (v.tag == V_INT) *f = (double)v.i;
  else return false;
  return true;
}

#define SENS_FN(name) bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

/* ---- binary: (d, x, y, i) ---- */

static bool binary(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  Value x = argv[1], y = argv[2];
  if (argv[3].tag != V_INT || (argv[3].i != 0 && argv[3].i != 1))
    return lang_raise(vm, "TypeError", "%s: the argument number must be 0 or 1", ir_prims[p].name);
  int64_t i = argv[3].i;
  Value t = i ? y : x;
  if (argv[0].tag == V_NONE) {
    *out = v_none();
    return true;
  }
  /* a concatenation or a repetition of a sequence: the Mist definition */
  if ((p == IR_P_ADD_SENS || p == IR_P_MUL_SENS) && (v_is_obj(x, O_LIST) || v_is_obj(x, O_TUPLE) ||
                                                    v_is_obj(y, O_LIST) || v_is_obj(y, O_TUPLE)))
    return general(vm, p, argc, argv, out);
  if (no_sens(t)) {
    *out = v_none();
    return true;
  }
  if (argv[0].tag != V_FLOAT || t.tag != V_FLOAT) return general(vm, p, argc, argv, out);
  double d = argv[0].f, a, b;
  if (!num(x, &a) || !num(y, &b)) return general(vm, p, argc, argv, out);
  double r;
  switch (p) {
  case IR_P_ADD_SENS: r = d; break;
  case IR_P_SUB_SENS: r = i ? -d : d; break;
  case IR_P_MUL_SENS: r = i ? a * d : d * b; break;
  case IR_P_TRUEDIV_SENS: r = i ? -d * a / (b * b) : d / b; break;
  case IR_P_POW_SENS: {
    /* x ** y and x ** (y - 1) as Mist computes them (lang_arith) */
    Value py;
    if (i == 0) {
      if (y.tag == V_INT && y.i == 0) {
        *out = v_none();
        return true;
      }
      /* d y x^(y-1) with IEEE's pow (_fpow), 0 where y is 0 */
      if (y.tag == V_INT && y.i == INT64_MIN) return general(vm, p, argc, argv, out);
      double ym1 = y.tag == V_INT ? (double)(y.i - 1) : b - 1.0;
      r = b == 0.0 ? d * 0.0 : d * b * pow(a, ym1);
    } else {
      if (!(a > 0)) {
        r = 0.0 * d;
      } else {
        if (!lang_arith(vm, OP_POW, x, y, &py)) return false;
        double w;
        if (!num(py, &w)) return general(vm, p, argc, argv, out);
        r = d * w * log(a);
      }
    }
    break;
  }
  default: return lang_raise(vm, "TypeError", "internal error: %s is not a binary sensitivity", ir_prims[p].name);
  }
  *out = v_float(r);
  return true;
}

SENS_FN(p_add_sens) { return binary(vm, IR_P_ADD_SENS, argc, argv, out); }
SENS_FN(p_sub_sens) { return binary(vm, IR_P_SUB_SENS, argc, argv, out); }
SENS_FN(p_mul_sens) { return binary(vm, IR_P_MUL_SENS, argc, argv, out); }
SENS_FN(p_truediv_sens) { return binary(vm, IR_P_TRUEDIV_SENS, argc, argv, out); }
SENS_FN(p_pow_sens) { return binary(vm, IR_P_POW_SENS, argc, argv, out); }

/* a @ b is tensors only: its Mist definition, one side at a time, so
 * that a side nobody asks about (an MLP's input batch) costs nothing */
SENS_FN(p_matmul_sens) {
  if (argv[0].tag == V_NONE) {
    *out = v_none();
    return true;
  }
  return general(vm, IR_P_MATMUL_SENS, argc, argv, out);
}

/* ---- unary: (d, x, y), y = f(x) ---- */

static bool unary(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  if (argv[0].tag == V_NONE || no_sens(argv[1])) {
    *out = v_none();
    return true;
  }
  if (argv[0].tag != V_FLOAT || argv[1].tag != V_FLOAT) return general(vm, p, argc, argv, out);
  double d = argv[0].f, x = argv[1].f, y;
  if (p != IR_P_NEG_SENS && p != IR_P_POS_SENS && p != IR_P_SIN_SENS && p != IR_P_COS_SENS &&
      p != IR_P_LOG_SENS && p != IR_P_RELU_SENS) {
    if (argv[2].tag != V_FLOAT) return general(vm, p, argc, argv, out);
    y = argv[2].f;
  } else {
    y = 0.0;
  }
  double r;
  switch (p) {
  case IR_P_NEG_SENS: r = -d; break;
  case IR_P_POS_SENS: r = d; break;
  case IR_P_EXP_SENS: r = d * y; break;
  case IR_P_LOG_SENS: r = d / x; break;
  case IR_P_SQRT_SENS: r = d / (2.0 * y); break;
  case IR_P_SIN_SENS: r = d * cos(x); break;
  case IR_P_COS_SENS: r = -d * sin(x); break;
  case IR_P_TANH_SENS: r = d * (1.0 - y * y); break;
  case IR_P_SIGMOID_SENS: r = d * y * (1.0 - y); break;
  case IR_P_RELU_SENS: r = d * (double)(x > 0); break;
  default: return lang_raise(vm, "TypeError", "internal error: %s is not a unary sensitivity", ir_prims[p].name);
  }
  *out = v_float(r);
  return true;
}

SENS_FN(p_neg_sens) { return unary(vm, IR_P_NEG_SENS, argc, argv, out); }
SENS_FN(p_pos_sens) { return unary(vm, IR_P_POS_SENS, argc, argv, out); }
SENS_FN(p_exp_sens) { return unary(vm, IR_P_EXP_SENS, argc, argv, out); }
SENS_FN(p_log_sens) { return unary(vm, IR_P_LOG_SENS, argc, argv, out); }
SENS_FN(p_sqrt_sens) { return unary(vm, IR_P_SQRT_SENS, argc, argv, out); }
SENS_FN(p_sin_sens) { return unary(vm, IR_P_SIN_SENS, argc, argv, out); }
SENS_FN(p_cos_sens) { return unary(vm, IR_P_COS_SENS, argc, argv, out); }
SENS_FN(p_tanh_sens) { return unary(vm, IR_P_TANH_SENS, argc, argv, out); }
SENS_FN(p_sigmoid_sens) { return unary(vm, IR_P_SIGMOID_SENS, argc, argv, out); }
SENS_FN(p_relu_sens) { return unary(vm, IR_P_RELU_SENS, argc, argv, out); }
