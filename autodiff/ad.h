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
IrGraph *ad_reverse_masked(MistVM *vm, IrGraph *g, uint64_t mask, bool floats);

/* The forward-mode transform of g taken as a root: F(g)(tans, p1..pn)
 * returns (value, tangent), where tans is a tuple of the parameters'
 * tangents.  Made once per graph. */
IrGraph *ad_forward(MistVM *vm, IrGraph *g);
bool ad_F_value(MistVM *vm, Value v, Value *out);

/* A root transform's free variables are parameters of its parent, the
 * env graph: fv's index among them, -1 if it is none of them. */
int ad_env_param(const IrGraph *envg, const IrNode *fv);

/* J of a value: closures become closures of their transformed graphs
 * (over J of their captured values); other values are themselves. */
bool ad_J_value(MistVM *vm, Value v, Value *out);

/* A standard-library module written in Mist, loaded once (NULL with an
 * error raised), and its global prefix+name (Unbound if absent): the
 * derivative rules live in "ad_rules" as J_name and F_name. */
ObjModule *ad_stdlib_module(MistVM *vm, const char *name);
Value ad_module_global(ObjModule *m, const char *prefix, const char *name);

/* The Mist definition (stdlib/ad_sens.ms) of a sensitivity primitive of
 * ops.def (add_sens, sin_sens...), cached on the VM; Unbound with an
 * error raised when it cannot be loaded.  (reverse.c) */
Value ad_sens_definition(MistVM *vm, int prim);

/* Is this builtin one whose results carry no derivative? */
bool ad_nondiff_builtin(const char *name);

/* Keyword and method calls under reverse mode (calls.c).  ad_J_call
 * calls the J-value fj with a call's own arguments (argc positional,
 * then kw) and gives the value and a backpropagator whose result is
 * (d fj, d arg 1, ..., d arg argc+nkw), in the call's order.
 * ad_J_finish hands (v, bp) to continuation k as a transformed call
 * does (n: how many items bp's result has).  ad_jbound is J of
 * x.method: called (k, args...) as transforms are, its sensitivity is
 * x's.  The three rules are what the transform
 * calls for call_kw, call_method and getattr nodes. */
bool ad_J_call(MistVM *vm, Value fj, int argc, const Value *argv, const KwArgs *kw, Value *v, Value *bp);
bool ad_J_finish(MistVM *vm, Value k, Value v, Value bp, int n, Value *out);
Value ad_jbound(Value self, Value fj);
Value ad_call_rule(MistVM *vm, const char *name);
/* The builtins the transform lowers keyword and method calls with
 * (calls.c): _method_rule and _attr_rule return a rule, a function that
 * a further transform must transform too; _bind_order binds a call. */
enum { AD_RULE_OF = 1, AD_BIND_ORDER };
int ad_lowering_builtin(Value fn);
Value ad_builtin_rule(MistVM *vm, const char *name);
bool ad_is_call_rule(Value fn);
void ad_register_calls(MistVM *vm);

/* J of J(builtin), and whether v is one (calls.c). */
Value ad_jjwrap(Value jw);
bool ad_is_jjwrap(Value v);
Value ad_builtin_behind(Value v, int *depth);

/* Forward mode: ff(tangents, params...) called with a call's own
 * arguments, tans their tangents in the call's order; and the rule the
 * forward transform calls for a call_kw, call_method or getattr node. */
bool ad_F_call(MistVM *vm, Value ff, Value tans, int argc, const Value *argv, const KwArgs *kw, Value *out);
Value ad_f_call_rule(MistVM *vm, int prim);
bool ad_fbuiltin_parts(Value w, Value *fn, Value *rule);
Value ad_fbound(Value self, Value tself, Value ff);

/* Forward over reverse (forward.c): the F forms of J(x) and bp_call. */
bool ad_F_J_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool ad_F_bp_call_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
bool ad_F_grad_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* For calls.c, from api.c: the builtin and rule inside J(builtin) (false
 * if w is not one), grad/value_and_grad and their J form, and the
 * backpropagator of a builtin without a rule. */
bool ad_jbuiltin_parts(Value w, Value *fn, Value *rule);
bool ad_is_grad_builtin(Value fn);
bool ad_has_J_form(Value fn);
bool ad_sens_hook(MistVM *vm, int p, int argc, const Value *argv, Value *out);
bool ad_is_vjp_builtin(Value fn);
const char *ad_mist_twin(Value fn);
bool ad_make_vjp(MistVM *vm, Value f, int n, Value *out);
Value ad_F_primal(MistVM *vm, Value v);
Value ad_no_rule_bp(Value fn);

/* Install vm->ad_J and the differentiation builtins: grad,
 * value_and_grad, vjp, jacobian, hessian, stop_gradient. */
void ad_register(MistVM *vm);

/* Register each primitive as the builtin `_name` (names.c), so derived
 * programs printed as source can call them. */
void ad_register_names(MistVM *vm);

#endif
