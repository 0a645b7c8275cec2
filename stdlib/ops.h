/* ops.h: the evaluation functions of the ops of ir/builtin_ops.def,
 * defined across stdlib/ (tensor.c, tensor_nn.c, tensor_grad.c,
 * builtins.c) and declared here from the table's eval column, and their
 * registration (ops.c). */
#ifndef MIST_STDLIB_OPS_H
#define MIST_STDLIB_OPS_H

#include "lang/vm.h"

/* The signature of an op's evaluation function (a BuiltinFn). */
#define OP_EVAL(name) bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) OP_EVAL(eval);
#include "ir/builtin_ops.def"
#undef OP

/* Register every op of builtin_ops.def under its name: a builtin, a
 * builtin that is also a tensor method, or a tensor property, with its
 * row number in ObjBuiltin.op.  Called by std_register_builtins. */
void std_register_ops(MistVM *vm);

#endif
