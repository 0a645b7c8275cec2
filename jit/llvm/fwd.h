/* fwd.h: forward mode's tangent rules on floats, as LLVM IR (fwd.c;
 * docs/jit.md, "Derivatives"). */
#ifndef MIST_JIT_LLVM_FWD_H
#define MIST_JIT_LLVM_FWD_H

#include <stdbool.h>

#include <llvm-c/Core.h>

/* A float tangent or None: whether it is a float (i1), and the float. */
typedef struct JitTangent {
  LLVMValueRef present, v;
} JitTangent;

/* The pair autodiff/tangents.c computes for the rule of primitive id
 * (op false: + - * / and unary -) or builtin op id (op true: exp log
 * sqrt sin cos tanh) at the doubles x and y (y unused for one argument)
 * with tangents tx and ty: *value and *t, built with B in module M.
 * Returns the i1 that says where that C computes this pair itself;
 * elsewhere (a division by zero, exp's overflow, a domain error) it
 * runs the Mist rule, and the caller must too.  NULL for another op. */
LLVMValueRef jit_fwd_rule(LLVMModuleRef M, LLVMBuilderRef B, bool op, int id, LLVMValueRef x, JitTangent tx,
                          LLVMValueRef y, JitTangent ty, LLVMValueRef *value, JitTangent *t);

#endif
