/* eval.h: the reference interpreter of IR graphs (eager mode). */
#ifndef MIST_IR_EVAL_H
#define MIST_IR_EVAL_H

#include "ir/ir.h"

/* Install the interpreter in vm: vm->call, primitive values. */
void ev_init(MistVM *vm);

/* Run a graph without parameters (a module's top-level code) and store
 * its output in *out.  False with the error (span, traceback) in vm. */
bool ev_run_main(MistVM *vm, IrGraph *g, Value *out);

/* Call any callable value: closure, builtin, primitive, bound method. */
bool ev_call(MistVM *vm, Value fn, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* A closure of g over env (values in g->fv order; NULL if none). */
ObjFunc *ev_closure(MistVM *vm, IrGraph *g, const Value *env);

/* The meaning of primitive p as a C function (ir/prims.c). */
BuiltinFn ev_prim_fn(IrPrim p);

#endif
