/* ops.c: the builtins that are ops of ir/builtin_ops.def, registered
 * from the table's rows, so that each carries its row (ObjBuiltin.op):
 * type inference, autodiff and later the compiler find the op's rules
 * there, never by its name. */
#include "ir/ir.h"
#include "stdlib/ops.h"

void std_register_ops(MistVM *vm) {
  static const BuiltinFn evals[IR_NBUILTIN_OPS] = {
#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) [IR_B_##e] = eval,
#include "ir/builtin_ops.def"
#undef OP
  };
  for (int op = 0; op < IR_NBUILTIN_OPS; op++) {
    const IrBuiltinOpInfo *info = &ir_builtin_ops[op];
    ObjBuiltin *b = info->kind == IR_OP_PROP ? lang_def_property(vm, info->name, evals[op])
                                             : lang_def_builtin(vm, info->name, evals[op], -1, -1);
    b->op = op;
    b->nondiff = !(info->flags & B_DIFF);
    if (info->kind == IR_OP_METHOD) b->self_kinds = SELF_TENSOR;
  }
}
