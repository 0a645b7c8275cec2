/* eval.h: the reference interpreter of IR graphs (eager mode). */
#ifndef MIST_IR_EVAL_H
#define MIST_IR_EVAL_H

#include "ir/ir.h"

/* Install the interpreter in vm: vm->call, primitive values. */
/* What the interpreter's primitives need of autodiff/, which lies above
 * ir/: one interface, which autodiff's ad_register installs in vm->ad.
 * Without it (a build or test of ir/ alone) those primitives raise. */
typedef struct IrAdInterface {
  /* primitive J: the reverse-mode transform of a value */
  bool (*J)(MistVM *vm, Value v, Value *out);
  /* primitive jmask: J(v) whose backpropagator gives only the
   * parameters in mask; made for float arguments when floats is set */
  bool (*Jmask)(MistVM *vm, Value v, int64_t mask, bool floats, Value *out);
  /* primitive F: the forward-mode transform of a value */
  bool (*F)(MistVM *vm, Value v, Value *out);
  /* a sensitivity primitive (add_sens, sin_sens...) on what its C fast
   * path does not handle: its Mist definition in stdlib/ad_sens.ms */
  bool (*sens)(MistVM *vm, int prim, int argc, const Value *argv, Value *out);
  /* primitives jenv and jinv_env: an env of sensitivities re-keyed
   * between J(f)'s free variables and f's own (to_f: towards f's) */
  bool (*rekey_env)(MistVM *vm, Value f, Value e, bool to_f, Value *out);
  /* whether fn is one of forward mode's tangent rules in C (_F_mul...,
   * autodiff/tangents.c), and of which operation: a builtin op of
   * builtin_ops.def (*op true) or a primitive of ops.def, as *id; type
   * inference and the lowering do its float case themselves */
  bool (*tangent_rule)(Value fn, bool *op, int *id);
} IrAdInterface;

/* What the interpreter needs of graph mode (jit/, which lies above
 * ir/): one interface, which jit's jit_register installs in vm->jit.
 * While vm->jit_calls is set, a call of a closure of a user function
 * (in graph mode) or of a closure made by jit(f) is offered to call
 * first, which runs the code compiled for the signature of its
 * arguments (EV_JIT_DONE, or EV_JIT_FAILED with the error raised), or
 * hands the call back (EV_JIT_INTERPRET) when there is none: the
 * interpreter then runs it as in eager mode. */
enum { EV_JIT_FAILED, EV_JIT_DONE, EV_JIT_INTERPRET };
typedef struct IrJitInterface {
  int (*call)(MistVM *vm, ObjFunc *f, int argc, const Value *argv, const KwArgs *kw, Value *out);
} IrJitInterface;

void ev_init(MistVM *vm);

/* How the interpreter shapes a graph's frame, which graph mode's
 * compiled code copies (jit/llvm/lower.c) so that recursion depth and
 * tracebacks are the same: the uses of each node in g and the graphs
 * its graph constants name (into uses), and whether a switch is run as
 * blocks of the frame (its only use a call without arguments in its
 * graph, of two graphs without parameters). */
struct NodeMap;
void ev_count_uses(IrGraph *g, struct NodeMap *uses);
bool ev_switch_inlined(const struct NodeMap *uses, const IrNode *s);
/* ev_count_uses, and of those uses the ones that read only a shape
 * (P_SHAPE_XY) into shape_uses; and whether x, read by `at`, is a
 * temporary that nothing reads afterwards (the result, in at's graph, of
 * a P_FRESH primitive, used once apart from reads of its shape), whose
 * buffer the arithmetic of `at` may write its result into
 * (lang_arith_reusing): the interpreter's rule (docs/tensors.md,
 * "Memory"), which graph mode follows. */
void ev_count_uses_shapes(IrGraph *g, struct NodeMap *uses, struct NodeMap *shape_uses);
bool ev_dead_temporary(const struct NodeMap *uses, const struct NodeMap *shape_uses, const IrNode *x,
                       const IrNode *at);

/* Whether a call of closure f goes to vm->jit (see IrJitInterface). */
static inline bool ev_jit_takes(MistVM *vm, const ObjFunc *f) {
  return (vm->graph_mode && (f->graph->flags & IRG_FUNCTION)) || (f->x && f->x->jit);
}

/* A failing frame's lines in the traceback, innermost first: `name`'s
 * at span, or, when the node failing there (or making the call that
 * failed) was inlined from other functions (IrNode.inlined), a line for
 * each of them, as their calls would have shown, then `name`'s at the
 * outermost call.  Both modes (fail_at here, mist_rt_fail in jit/rt.c). */
void ev_trace_frame(MistVM *vm, Span span, const IrInlined *inlined, const char *name);

/* Run a graph without parameters (a module's top-level code) and store
 * its output in *out.  False with the error (span, traceback) in vm. */
bool ev_run_main(MistVM *vm, IrGraph *g, Value *out);

/* Call any callable value: closure, builtin, primitive, bound method. */
bool ev_call(MistVM *vm, Value fn, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* Bind a call's arguments to closure f's parameters as a call would
 * (params: f's nparams values), naming f `name` in errors (NULL: its
 * own name).  The first `skip` parameters come from
 * the first `skip` arguments and cannot be named; where[j] (when not
 * NULL) is the parameter, counted after those, that argument j went to,
 * positional arguments first, then keywords.  False with the call's
 * TypeError raised. */
bool ev_bind(MistVM *vm, ObjFunc *f, const char *name, int skip, int argc, const Value *argv, const KwArgs *kw,
             Value *params, int *where);

/* A closure of g over env (values in g->fv order; NULL if none). */
ObjFunc *ev_closure(MistVM *vm, IrGraph *g, const Value *env);

/* Let go of the chunk that closures of backward passes are cut from
 * (make_closure), so that it dies with the chain it holds. */
void ev_tape_forget(MistVM *vm);

/* What x.name is: a property's value or a module's attribute (*bound
 * false), or the method or builtin `name` that takes x first (*bound
 * true).  False with AttributeError raised. */
bool ev_lookup_attr(MistVM *vm, Value x, ObjStr *name, Value *out, bool *bound);

/* str.upper: a method taken from its type (str, tuple, list, dict),
 * unbound: true with the method in *out, false where x.name is not one. */
bool ev_type_method(MistVM *vm, Value x, ObjStr *name, Value *out);

/* Bind the module global name to v (the REPL's `_`). */
void ev_set_global(ObjModule *m, ObjStr *name, Value v);

/* The meaning of primitive p as a C function (ir/prims.c). */
BuiltinFn ev_prim_fn(IrPrim p);

/* A sensitivity made whole: one made of parts (O_SPARSE, a large value's
 * sensitivity from x[i] in a loop) summed into a value of x's shape;
 * anything else as it is (ir/prims.c). */
bool ir_sens_dense(MistVM *vm, Value v, Value *out);

/* gadd(a, b) (the primitive, ir/prims.c), where a (dead & 1) or b
 * (dead & 2) is a temporary that nothing reads afterwards: a sum of two
 * tensors may be written over its buffer (lang_tensor_alike_op). */
bool ir_gadd(MistVM *vm, Value a, Value b, unsigned dead, Value *out);
/* gadd(acc, sens_at(x, i, d)), acc a temporary that nothing reads
 * afterwards and the sensitivity read nowhere else, with d added into
 * acc's block i in place (lang_tensor_add_block): the same bits, no
 * scatter made.  True when done, *out being acc; false, doing nothing,
 * for operands of any other kind (the two primitives then run). */
bool ir_gadd_sens_at(Value acc, Value x, Value i, Value d, Value *out);

#endif
