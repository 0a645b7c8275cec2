/* fwd.c: forward mode's tangent rules on floats, as LLVM IR.
 *
 * A jvp program calls _F_mul(x, tx, y, ty) and the like for every
 * operation (autodiff/forward.c): builtins in C (autodiff/tangents.c)
 * that return the pair (value, tangent) for floats, None a zero
 * tangent.  The lowering (lower.c, call_tangent_rule) does that case
 * inline, the pair in registers: this file builds its arithmetic with
 * the same operations in the same order as tangents.c, so the bits are
 * eager mode's, and the condition under which tangents.c computes it
 * itself; elsewhere the builtin is called as before.  A tangent here is
 * (present, float): None where present is false.
 */
#include "jit/llvm/fwd.h"

#include "ir/ir.h"

static LLVMValueRef real(LLVMModuleRef M, double v) { return LLVMConstReal(LLVMDoubleTypeInContext(LLVMGetModuleContext(M)), v); }

/* libm's function name of a double */
static LLVMValueRef libm(LLVMModuleRef M, LLVMBuilderRef B, const char *name, LLVMValueRef x) {
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(LLVMGetModuleContext(M));
  LLVMTypeRef fty = LLVMFunctionType(f64, &f64, 1, false);
  LLVMValueRef f = LLVMGetNamedFunction(M, name);
  if (!f) f = LLVMAddFunction(M, name, fty);
  return LLVMBuildCall2(B, fty, f, &x, 1, "");
}

static LLVMValueRef fabs_of(LLVMModuleRef M, LLVMBuilderRef B, LLVMValueRef x) { return libm(M, B, "llvm.fabs.f64", x); }

/* isfinite(x): neither infinite nor NaN */
static LLVMValueRef is_finite(LLVMModuleRef M, LLVMBuilderRef B, LLVMValueRef x) {
  return LLVMBuildFCmp(B, LLVMRealONE, fabs_of(M, B, x), real(M, __builtin_inf()), "");
}

/* tscale(t, s): None stays None */
static JitTangent scale(LLVMBuilderRef B, JitTangent t, LLVMValueRef s) {
  return (JitTangent){t.present, LLVMBuildFMul(B, t.v, s, "")};
}

/* tadd(a, b): a None side gives the other, unchanged */
static JitTangent add(LLVMBuilderRef B, JitTangent a, JitTangent b) {
  LLVMValueRef sum = LLVMBuildFAdd(B, a.v, b.v, "");
  LLVMValueRef v = LLVMBuildSelect(B, a.present, LLVMBuildSelect(B, b.present, sum, a.v, ""), b.v, "");
  return (JitTangent){LLVMBuildOr(B, a.present, b.present, ""), v};
}

LLVMValueRef jit_fwd_rule(LLVMModuleRef M, LLVMBuilderRef B, bool op, int id, LLVMValueRef x, JitTangent tx,
                          LLVMValueRef y, JitTangent ty, LLVMValueRef *value, JitTangent *t) {
  LLVMValueRef yes = LLVMConstInt(LLVMInt1TypeInContext(LLVMGetModuleContext(M)), 1, false), r;
  if (!op) {
    switch (id) {
    case IR_P_ADD:
      *value = LLVMBuildFAdd(B, x, y, "");
      *t = add(B, tx, ty);
      return yes;
    case IR_P_SUB:
      *value = LLVMBuildFSub(B, x, y, "");
      *t = add(B, tx, scale(B, ty, real(M, -1.0)));
      return yes;
    case IR_P_MUL:
      *value = LLVMBuildFMul(B, x, y, "");
      *t = add(B, scale(B, tx, y), scale(B, ty, x));
      return yes;
    case IR_P_TRUEDIV:
      /* (by zero: ZeroDivisionError, from the rule) */
      *value = LLVMBuildFDiv(B, x, y, "");
      *t = add(B, scale(B, tx, LLVMBuildFDiv(B, real(M, 1.0), y, "")),
               scale(B, ty, LLVMBuildFDiv(B, LLVMBuildFNeg(B, x, ""), LLVMBuildFMul(B, y, y, ""), "")));
      return LLVMBuildFCmp(B, LLVMRealUNE, y, real(M, 0.0), "");
    case IR_P_NEG:
      *value = LLVMBuildFNeg(B, x, "");
      *t = scale(B, tx, real(M, -1.0));
      return yes;
    default: return NULL;
    }
  }
  switch (id) {
  case IR_B_EXP: {
    /* (an overflow of a finite x: OverflowError, from the rule) */
    r = libm(M, B, "exp", x);
    *value = r;
    *t = scale(B, tx, r);
    LLVMValueRef inf = LLVMBuildFCmp(B, LLVMRealOEQ, fabs_of(M, B, r), real(M, __builtin_inf()), "");
    return LLVMBuildNot(B, LLVMBuildAnd(B, inf, is_finite(M, B, x), ""), "");
  }
  case IR_B_LOG:
    *value = libm(M, B, "log", x);
    *t = scale(B, tx, LLVMBuildFDiv(B, real(M, 1.0), x, ""));
    return LLVMBuildFCmp(B, LLVMRealOGT, x, real(M, 0.0), "");
  case IR_B_SQRT:
    r = libm(M, B, "sqrt", x);
    *value = r;
    *t = scale(B, tx, LLVMBuildFDiv(B, real(M, 0.5), r, ""));
    return LLVMBuildFCmp(B, LLVMRealOGE, x, real(M, 0.0), "");
  case IR_B_SIN:
    *value = libm(M, B, "sin", x);
    *t = scale(B, tx, libm(M, B, "cos", x));
    return is_finite(M, B, x);
  case IR_B_COS:
    *value = libm(M, B, "cos", x);
    *t = scale(B, tx, LLVMBuildFNeg(B, libm(M, B, "sin", x), ""));
    return is_finite(M, B, x);
  case IR_B_TANH:
    r = libm(M, B, "tanh", x);
    *value = r;
    *t = scale(B, tx, LLVMBuildFSub(B, real(M, 1.0), LLVMBuildFMul(B, r, r, ""), ""));
    return yes;
  default: return NULL;
  }
}
