/* ad.h: automatic differentiation as IR transformations. */
#ifndef MIST_AUTODIFF_AD_H
#define MIST_AUTODIFF_AD_H

#include "ir/ir.h"

/* The reverse-mode transform of graph g taken as a root: a graph
 * J(g)(k, p1..pn) returning (value, backpropagator), where the
 * backpropagator, given the output's sensitivity, ends by calling
 * k(env, dp1..dpn): env holds the sensitivities of g's free variables
 * (keyed by node), dpi those of the parameters.  Made once per graph.
 * NULL with an error raised when g uses something with no derivative
 * rule. */
IrGraph *ad_reverse(MistVM *vm, IrGraph *g);

/* The forward-mode transform of g taken as a root: F(g)(tans, p1..pn)
 * returns (value, tangent), where tans is a tuple of the parameters'
 * tangents.  Made once per graph. */
IrGraph *ad_forward(MistVM *vm, IrGraph *g);
bool ad_F_value(MistVM *vm, Value v, Value *out);

/* J of a value: closures become closures of their transformed graphs
 * (over J of their captured values); other values are themselves. */
bool ad_J_value(MistVM *vm, Value v, Value *out);

/* A standard-library module written in Mist, loaded once (NULL with an
 * error raised), and its global prefix+name (Unbound if absent): the
 * derivative rules live in "ad_rules" as J_name and F_name. */
ObjModule *ad_stdlib_module(MistVM *vm, const char *name);
Value ad_module_global(ObjModule *m, const char *prefix, const char *name);

/* Is this builtin one whose results carry no derivative? */
bool ad_nondiff_builtin(const char *name);

/* Install vm->ad_J and the differentiation builtins: grad,
 * value_and_grad, vjp, jacobian, hessian, stop_gradient. */
void ad_register(MistVM *vm);

#endif
