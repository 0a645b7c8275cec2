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
 * definition of the same name in stdlib/ad_sens.ms through vm->ad->sens,
 * so that logic lives in one place.  Those definitions are also what the
 * transforms differentiate for second derivatives.  Divisions and powers
 * are IEEE arithmetic, as _fdiv and _fpow are there: at a singular point
 * (sqrt at 0, 0 ** -0.5) a derivative is inf or nan, never an error.
 */
#include <math.h>
#include <string.h>

#include "ir/prims_sens.h"
#include "lang/gc.h"
#include "lang/tensor.h"

/* The Mist definition, for what the fast path leaves. */
static bool general(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "%s: automatic differentiation is not available", ir_prims[p].name);
  return vm->ad->sens(vm, (int)p, argc, argv, out);
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

/* ---- tensors ----
 *
 * The same operations as the Mist definitions, through the same C
 * functions the builtins and primitives they call use (lang_arith for
 * the operators, the builtin itself for cos and sin, _sens_to's
 * lang_tensor_sum_to for unbroadcast), so both give the same bits: a
 * tensor's sensitivity costs no Mist call. */

static bool is_num(Value v) { return v.tag == V_FLOAT || v.tag == V_INT || v.tag == V_BOOL; }
static bool tensor_or_num(Value v) { return v_is_tensor(v) || is_num(v); }

/* unbroadcast(d, x) of ad_rules.ms: d summed to x's shape and dtype;
 * None for an int, a bool or an integer tensor */
static bool unbroadcast(MistVM *vm, Value d, Value x, Value *out) {
  *out = v_none();
  if (d.tag == V_NONE || x.tag == V_INT || x.tag == V_BOOL) return true;
  if (x.tag == V_FLOAT && d.tag == V_FLOAT) {
    *out = d;
    return true;
  }
  if (v_is_tensor(x) && !lang_dtype_is_float(AS_TENSOR(x)->dtype)) return true;
  return lang_tensor_sum_to(vm, d, x, out);
}

static bool builtin_call(MistVM *vm, const char *name, Value x, Value *out) {
  Value fn;
  if (!vm->builtins || !lang_dict_get(vm->builtins, lang_str(name), &fn))
    return lang_raise(vm, "NameError", "name '%s' is not defined", name);
  return vm->call(vm, fn, 1, &x, NULL, out);
}

/* argument i's sensitivity in op(x, y) for tensors and numbers; over_d:
 * d is a temporary that nothing reads afterwards (P_OVER_D) */
static bool binary_tensor(MistVM *vm, IrPrim p, Value d, Value x, Value y, int64_t i, bool over_d, Value *out) {
  Value a, b;
  switch (p) {
  case IR_P_ADD_SENS: return unbroadcast(vm, d, i ? y : x, out);
  case IR_P_SUB_SENS:
    if (!i) return unbroadcast(vm, d, x, out);
    return lang_neg(vm, d, &a) && unbroadcast(vm, a, y, out);
  case IR_P_MUL_SENS: {
    /* d and the other operand alike (the usual case): multiplied directly */
    ObjTensor *r;
    if (i ? lang_tensor_alike_op(vm, TB_MUL, x, d, over_d ? 2 : 0, &r)
          : lang_tensor_alike_op(vm, TB_MUL, d, y, over_d ? 1 : 0, &r)) {
      if (!r) return false;
      a = v_obj(r);
    } else if (!(i ? lang_arith(vm, OP_MUL, x, d, &a) : lang_arith(vm, OP_MUL, d, y, &a))) {
      return false;
    }
    return unbroadcast(vm, a, i ? y : x, out);
  }
  case IR_P_TRUEDIV_SENS:
    if (!i) return lang_arith(vm, OP_TRUEDIV, d, y, &a) && unbroadcast(vm, a, x, out);
    return lang_neg(vm, d, &a) && lang_arith(vm, OP_MUL, a, x, &a) && lang_arith(vm, OP_MUL, y, y, &b) &&
           lang_arith(vm, OP_TRUEDIV, a, b, &a) && unbroadcast(vm, a, y, out);
  default: return false;
  }
}

/* x's sensitivity in y = f(x) for a tensor x; over_d: d is a temporary
 * that nothing reads afterwards (P_OVER_D) */
static bool unary_tensor(MistVM *vm, IrPrim p, Value d, Value x, Value y, bool over_d, Value *out) {
  Value a, b;
  if (p == IR_P_TANH_SENS || p == IR_P_SIGMOID_SENS || p == IR_P_RELU_SENS) {
    /* one pass when d and the value are alike (the usual case), else
     * op by op below */
    ObjTensor *r;
    LangActSens k = p == IR_P_TANH_SENS ? LANG_SENS_TANH : p == IR_P_SIGMOID_SENS ? LANG_SENS_SIGMOID : LANG_SENS_RELU;
    if (lang_tensor_act_sens(vm, k, d, p == IR_P_RELU_SENS ? x : y, over_d, &r)) {
      *out = r ? v_obj(r) : v_none();
      return r != NULL;
    }
  }
  switch (p) {
  case IR_P_NEG_SENS: return lang_neg(vm, d, out);
  case IR_P_POS_SENS: *out = d; return true;
  case IR_P_EXP_SENS: return lang_arith(vm, OP_MUL, d, y, out);
  case IR_P_LOG_SENS: return lang_arith(vm, OP_TRUEDIV, d, x, out);
  case IR_P_SQRT_SENS: return lang_arith(vm, OP_MUL, v_float(2.0), y, &a) && lang_arith(vm, OP_TRUEDIV, d, a, out);
  case IR_P_SIN_SENS: return builtin_call(vm, "cos", x, &a) && lang_arith(vm, OP_MUL, d, a, out);
  case IR_P_COS_SENS:
    return lang_neg(vm, d, &a) && builtin_call(vm, "sin", x, &b) && lang_arith(vm, OP_MUL, a, b, out);
  case IR_P_TANH_SENS:
    return lang_arith(vm, OP_MUL, y, y, &a) && lang_arith(vm, OP_SUB, v_float(1.0), a, &a) &&
           lang_arith(vm, OP_MUL, d, a, out);
  case IR_P_SIGMOID_SENS:
    return lang_arith(vm, OP_MUL, d, y, &a) && lang_arith(vm, OP_SUB, v_float(1.0), y, &b) &&
           lang_arith(vm, OP_MUL, a, b, out);
  case IR_P_RELU_SENS: return lang_compare(vm, CMP_GT, x, v_int(0), &a) && lang_arith(vm, OP_MUL, d, a, out);
  case IR_P_SUM_SENS:
    /* unbroadcast(_unreduce(d, x, None, False), x) */
    return lang_tensor_unreduce(vm, d, AS_TENSOR(x), ~(uint64_t)0, false, &a) && unbroadcast(vm, a, x, out);
  default: return false;
  }
}

/* ---- binary: (d, x, y, i) ---- */

/* (a sensitivity made of parts, from x[i] in a loop, is made whole
 * first: argv[0] is d) */
static const Value *whole_d(MistVM *vm, int argc, const Value *argv) {
  if (!v_is_obj(argv[0], O_SPARSE)) return argv;
  Value *a = lang_alloc(argc * sizeof *a);
  memcpy(a, argv, argc * sizeof *a);
  return ir_sens_dense(vm, argv[0], &a[0]) ? a : NULL;
}

static bool binary(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  /* (d made whole is a new tensor; the flag is about the one given) */
  bool over_d = vm->over_d && v_is_tensor(argv[0]);
  vm->over_d = false;
  if (!(argv = whole_d(vm, argc, argv))) return false;
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
  if (p != IR_P_POW_SENS && tensor_or_num(argv[0]) && tensor_or_num(x) && tensor_or_num(y) &&
      (v_is_tensor(argv[0]) || v_is_tensor(x) || v_is_tensor(y)))
    return binary_tensor(vm, p, argv[0], x, y, i, over_d, out);
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
  if (!(argv = whole_d(vm, argc, argv))) return false;
  if (argv[0].tag == V_NONE) {
    *out = v_none();
    return true;
  }
  Value d = argv[0], a = argv[1], b = argv[2];
  if (v_is_tensor(d) && v_is_tensor(a) && v_is_tensor(b) && AS_TENSOR(a)->ndim == 2 && AS_TENSOR(b)->ndim == 2 &&
      argv[3].tag == V_INT) {
    /* two matrices, as the Mist definition does them: d @ b^T summed to
     * a (sum_to, then unbroadcast), or a^T @ d summed to b */
    bool first = argv[3].i == 0;
    ObjTensor *t;
    Value r;
    if (!lang_tensor_transpose(vm, AS_TENSOR(first ? b : a), NULL, &t)) return false;
    if (!(first ? lang_arith(vm, OP_MATMUL, d, v_obj(t), &r) : lang_arith(vm, OP_MATMUL, v_obj(t), d, &r)) ||
        !lang_tensor_sum_to(vm, r, first ? a : b, &r))
      return false;
    return unbroadcast(vm, r, first ? a : b, out);
  }
  return general(vm, IR_P_MATMUL_SENS, argc, argv, out);
}

/* ---- unary: (d, x, y), y = f(x) ---- */

static bool unary(MistVM *vm, IrPrim p, int argc, const Value *argv, Value *out) {
  /* (d made whole is a new tensor; the flag is about the one given) */
  bool over_d = vm->over_d && v_is_tensor(argv[0]);
  vm->over_d = false;
  if (!(argv = whole_d(vm, argc, argv))) return false;
  if (argv[0].tag == V_NONE || no_sens(argv[1])) {
    *out = v_none();
    return true;
  }
  if (v_is_tensor(argv[1]) && lang_dtype_is_float(AS_TENSOR(argv[1])->dtype) && tensor_or_num(argv[0]) &&
      (tensor_or_num(argv[2]) || p == IR_P_NEG_SENS || p == IR_P_POS_SENS || p == IR_P_LOG_SENS ||
       p == IR_P_SIN_SENS || p == IR_P_COS_SENS || p == IR_P_RELU_SENS || p == IR_P_SUM_SENS))
    return unary_tensor(vm, p, argv[0], argv[1], argv[2], over_d, out);
  if (p == IR_P_SUM_SENS) return general(vm, p, argc, argv, out);   /* a list or tuple summed */
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
SENS_FN(p_sum_sens) { return unary(vm, IR_P_SUM_SENS, argc, argv, out); }
