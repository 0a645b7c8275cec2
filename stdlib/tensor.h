/* tensor.h: the tensor builtins of stdlib/ (tensor.c, tensor_nn.c), and
 * the tensor forms of core builtins that builtins.c hands over to when
 * their first argument is a tensor (sum(t) is t.sum(), abs(t) is
 * elementwise...).  All have the BuiltinFn signature and raise errors
 * that name the function and, for shape errors, the shapes. */
#ifndef MIST_STDLIB_TENSOR_H
#define MIST_STDLIB_TENSOR_H

#include "lang/tensor.h"

/* Register set_printoptions and the constants pi, e, inf, nan (the
 * tensor ops are rows of ir/builtin_ops.def, registered by ops.c).
 * Called by std_register_builtins. */
void std_register_tensor(MistVM *vm);

/* sum/max/min(t, axis=None, keepdims=False), abs(t), round(t, ndigits),
 * any(t), all(t), pow(a, b) with a tensor. */
bool std_tensor_sum(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_max(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_min(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_any(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_all(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_abs(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool std_tensor_round(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* ---- helpers shared by tensor.c, tensor_nn.c and tensor_grad.c ---- */

/* A builtin's arguments, as std_parse_args parses them for the tensor
 * builtins (keywords allowed for every parameter). */
bool std_tensor_parse(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw,
                      const char *const *names, int nnames, int npos, int nreq, Value *slots);
/* A tensor's shape as Python prints a tuple, for error messages. */
const char *std_shape_str(const ObjTensor *t);

/* A tensor argument: a tensor, or a number or nested list made into one
 * (floats f32, ints i64). */
bool std_tensor_arg(MistVM *vm, const char *fname, Value v, ObjTensor **out);
/* An axis argument (an int, or a tuple/list of ints when many is true;
 * None or not given: every axis) as a bit mask over ndim axes. */
bool std_axes_arg(MistVM *vm, const char *fname, Value v, int ndim, bool many, uint64_t *mask);
/* An optional dtype argument (unbound or None: dflt; -1 allowed as dflt). */
bool std_dtype_arg(MistVM *vm, const char *fname, Value v, int dflt, int *out);
/* A truth-valued argument (unbound: dflt). */
bool std_bool_arg(MistVM *vm, Value v, bool dflt, bool *out);

#endif
