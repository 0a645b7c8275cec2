/* matmul.h: matrix products in compiled code (matmul.c): the test the
 * lowering makes, and the runtime functions its code calls. */
#ifndef MIST_JIT_MATMUL_H
#define MIST_JIT_MATMUL_H
#include "ir/types.h"
#include "jit/backend.h"

/* Whether x @ y, typed x and y, is a product of two float matrices of
 * one dtype whose dims are known and align: the products matmul.c
 * computes without the interpreter's primitive. */
bool jit_matmul_typed(const IrType *x, const IrType *y);

/* a @ b (ab: the two operands) into *out, for a site typed with the
 * result's type (a float matrix); false with the error raised.  A
 * result of the primitive (operands of another kind) is checked against
 * that type where `checked`. */
bool mist_rt_matmul(const JitCx *cx, int32_t site, const Value *ab, bool checked, Value *out);
/* matmul_sens(d, a, b, i) (args: the four), the site typed with its
 * result's type, or where inference did not type it (not `checked`),
 * with the type of the operand whose sensitivity it is. */
bool mist_rt_matmul_sens(const JitCx *cx, int32_t site, const Value *args, bool checked, Value *out);
#endif
