/* prims_sens.h: the sensitivity primitives of ops.def (prims_sens.c),
 * for the primitive table in prims.c. */
#ifndef MIST_IR_PRIMS_SENS_H
#define MIST_IR_PRIMS_SENS_H

#include "ir/eval.h"
#include "lang/ops.h"

#define SENS_DECL(name) bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
SENS_DECL(p_add_sens)
SENS_DECL(p_sub_sens)
SENS_DECL(p_mul_sens)
SENS_DECL(p_truediv_sens)
SENS_DECL(p_pow_sens)
SENS_DECL(p_matmul_sens)
SENS_DECL(p_neg_sens)
SENS_DECL(p_pos_sens)
SENS_DECL(p_exp_sens)
SENS_DECL(p_log_sens)
SENS_DECL(p_sqrt_sens)
SENS_DECL(p_sin_sens)
SENS_DECL(p_cos_sens)
SENS_DECL(p_tanh_sens)
SENS_DECL(p_sigmoid_sens)
SENS_DECL(p_relu_sens)
SENS_DECL(p_sum_sens)
#undef SENS_DECL

#endif
