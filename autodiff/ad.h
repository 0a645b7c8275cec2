/* ad.h: automatic differentiation as IR transformations. */
#ifndef MIST_AUTODIFF_AD_H
#define MIST_AUTODIFF_AD_H

#include "ir/ir.h"
#include "ir/map.h"

/* autodiff's state and caches, hung off the VM (vm->ad_state), made on
 * first use */
/* The transforms, as the rules of builtins (builtins.c, nest.c,
 * tangents.c), which sit below them, reach them: set by ad_register. */
typedef struct AdTransforms {
  bool (*J_value)(MistVM *vm, Value v, Value *out);   /* ad_J_value, reverse.c */
  bool (*F_value)(MistVM *vm, Value v, Value *out);   /* ad_F_value, forward.c */
  IrGraph *(*reverse)(MistVM *vm, IrGraph *g);        /* ad_reverse */
  IrGraph *(*forward)(MistVM *vm, IrGraph *g);        /* ad_forward */
} AdTransforms;

/* The transforms of a graph taken as a root, made once each. */
typedef struct AdRoots {
  IrGraph *jroot;      /* reverse mode (its free variables become parameters
                          of its parent, the env graph, in g->fv order) */
  /* the last transform made with a mask of parameters (grad's argnums),
   * whose backpropagator computes only their sensitivities, and that
   * mask: [0] the general one, [1] the one made for float arguments */
  IrGraph *jmroot[2];
  uint64_t jmask[2];
  IrGraph *froot;      /* forward mode */
  ObjDict *made;       /* graphs the derivative builtins made of it (ad_cache_get) */
} AdRoots;

typedef struct AdState {
  AdTransforms transform;
  /* the derivative builtins of api.c, known by their C functions */
  BuiltinFn vjp, jvp, jacobian, hessian;
  Value kid;          /* the identity continuation, a closure (ad_register) */
  Value *sens_fns;    /* the Mist definitions of the sensitivity primitives, by primitive */
  NodeMap wrappers;   /* ObjBuiltin -> IrGraph: b with its rule's signature (NULL: none) */
  NodeMap bound;      /* ObjBuiltin -> IrGraph: x.b over x */
  NodeMap tried;      /* ObjBuiltin -> itself once its signature was looked for */
  ObjDict *shaped;    /* a key -> a CacheEntry (ad_cache_get) */
  ObjDict *modules;   /* stdlib modules autodiff loaded, by name (ad_stdlib_module) */
  /* ObjStr name -> the rule of x.name that _attr_rule found (calls.c),
   * [0] for x not a module, [1] for a module: it depends on nothing else */
  NodeMap attr_rules[2];
} AdState;

AdState *ad_state(MistVM *vm);

/* g's root transforms (made empty on first use); ad_roots_of: NULL when
 * none was ever asked for.  They live in g's side slot IR_SIDE_AD, so
 * they die with g. */
AdRoots *ad_roots(MistVM *vm, IrGraph *g);
AdRoots *ad_roots_of(MistVM *vm, IrGraph *g);

/* Re-key an env of sensitivities between J(f)'s free variables and f's
 * own, in either direction (to_f: towards f's): the primitives jenv and
 * jinv_env, through vm->ad (reverse.c). */
bool ad_rekey_env(MistVM *vm, Value f, Value e, bool to_f, Value *out);

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
 * (over J of their captured values), containers hold J of their items;
 * other values are themselves. */
bool ad_J_value(MistVM *vm, Value v, Value *out);
/* jmask(f, mask, xs...): J(f) for grad(f, argnums), whose
 * backpropagator gives only the sensitivities of the parameters in
 * mask; made for float arguments when floats is set (reverse.c). */
bool ad_J_masked(MistVM *vm, Value v, int64_t mask, bool floats, Value *out);
/* v with each function in it (at any depth of tuples, lists and dicts)
 * mapped by fn; v itself when it holds none. */
bool ad_map_functions(MistVM *vm, Value v, bool (*fn)(MistVM *, Value, Value *), Value *out);

/* A standard-library module written in Mist, loaded once (NULL with an
 * error raised), and its global prefix+name (Unbound if absent): the
 * derivative rules live in "ad_rules" as J_name and F_name. */
ObjModule *ad_stdlib_module(MistVM *vm, const char *name);
Value ad_module_global(MistVM *vm, ObjModule *m, const char *prefix, const char *name);

/* The Mist definition (stdlib/ad_sens.ms) of a sensitivity primitive of
 * ops.def (add_sens, sin_sens...), cached in AdState; Unbound with an
 * error raised when it cannot be loaded.  (rules.c) */
Value ad_sens_definition(MistVM *vm, int prim);

/* Is this builtin one whose results carry no derivative?  (Marked on
 * the builtins by ad_mark_nondiff, when ad_register installs autodiff.) */
bool ad_nondiff_builtin(Value fn);
void ad_mark_nondiff(MistVM *vm);
/* The sensitivity primitive reverse mode uses for a call of builtin b
 * with one positional argument (its op's reverse column in
 * ir/builtin_ops.def), -1 for none. */
int ad_sens_prim(const ObjBuiltin *b);
/* Whether unary sensitivity primitive p is given the result y in place
 * of the argument x, as p(d, y, y): relu_sens, whose mask x > 0 is
 * y > 0 for y = relu(x) (NaN and -0.0 included, and an integer or bool
 * argument's result is an integer, no sensitivity either way), so that
 * the backward pass holds the result only and the argument is dead
 * after the forward pass (graph mode fuses x + b into relu's loop). */
bool ad_sens_reads_result(int p);

/* How a primitive is differentiated (the reverse and forward columns of
 * ir/ops.def): AD_SENS, by the sensitivity primitive ad_prim_sens(p)
 * (reverse only); AD_RULE, by the rule J_name or F_name of
 * stdlib/ad_rules.ms; AD_DEF, a sensitivity primitive, by its Mist
 * definition (stdlib/ad_sens.ms); AD_INLINE, by the transform itself;
 * AD_NONE, not at all: computed plainly. */
typedef enum { AD_NONE, AD_RULE, AD_DEF, AD_INLINE, AD_SENS } AdRuleKind;
AdRuleKind ad_prim_reverse(int p);
AdRuleKind ad_prim_forward(int p);
int ad_prim_sens(int p);   /* -1 unless ad_prim_reverse(p) is AD_SENS */

/* Keyword and method calls under the transforms (calls.c): the builtins
 * the reverse transform lowers them with (_method_rule and _attr_rule
 * return a rule, a function that a further transform must transform
 * too; _bind_order binds a call). */
enum { AD_RULE_OF = 1, AD_BIND_ORDER };
int ad_lowering_builtin(Value fn);
Value ad_call_rule(MistVM *vm, const char *name);
Value ad_builtin_rule(MistVM *vm, const char *name);
bool ad_is_call_rule(Value fn);
void ad_register_calls(MistVM *vm);

/* Builtins as Mist functions in transformed worlds (builtins.c).  A world
 * is a chain of transforms, innermost first ("J", "JJ", "JF"), at most
 * MAX_TRANSFORMS long.  ad_builtin_transform is J or F (kind) of a
 * builtin, a bound method or a builtin already in a world;
 * ad_builtin_lift kind inserted before the last d (forward) transforms
 * of a builtin's world (nest.c's lift, which lifts x too);
 * ad_builtin_function a builtin as a primal Mist function (n: its arity
 * if it has no rule); ad_close_chain the closure of graph g transformed
 * along chain over what g captured, with its tangents in the forward
 * transforms (caps[m][mask], bit j for the j-th forward transform; a
 * NULL caps[m]: caps0[m] with zero tangents); ad_close_transformed the
 * same for g's one free variable x, tx its tangent in the last forward
 * transform. */
enum { MAX_TRANSFORMS = 15 };
bool ad_builtin_transform(MistVM *vm, Value v, char kind, Value *out);
bool ad_builtin_function(MistVM *vm, Value b, int n, Value *out);
bool ad_builtin_lift(MistVM *vm, Value xf, int d, char kind, bool (*lift)(MistVM *, Value, int, char, Value *),
                     Value *out);
bool ad_is_shaped_builtin(Value v);
int ad_chain_forwards(const char *chain);
bool ad_close_chain(MistVM *vm, IrGraph *g, const char *chain, Value **caps, const Value *caps0, Value *out);
/* Does b have a signature of its own (a rule, a Mist definition), or
 * does it take the shape of each call? */
bool ad_builtin_has_signature(MistVM *vm, Value b);
/* Does a keyword call of b with those names (a tuple) bind to its rule? */
bool ad_builtin_binds(MistVM *vm, Value b, Value names);
bool ad_close_transformed(MistVM *vm, IrGraph *g, const char *chain, Value x, Value tx, Value *out);
/* x.name in the world of chain, x's value and tangents there caps (as
 * ad_close_chain's): a module's attribute transformed along the chain,
 * or the builtin method bound to x, a transformed graph over x */
bool ad_attr_caps(MistVM *vm, Value *caps, ObjStr *name, const char *chain, Value *out);
void ad_register_builtins(MistVM *vm);

/* Forward rules of arithmetic and math builtins on floats in C
 * (tangents.c): the builtin standing for ad_rules' F_name (unbound if
 * none), whether a value is one of those (or of their forms under a
 * second transform), the Mist rule behind one, and what stands for one
 * under one more forward transform. */
Value ad_fast_F_rule(MistVM *vm, bool op, int id);
bool ad_is_fast_F_rule(Value fn);
Value ad_fast_F_rule_source(MistVM *vm, Value fn);
Value ad_fast_F_rule_under(MistVM *vm, Value fn);
/* Whether fn is a rule here at the first level (F_name's place), and
 * the operation it is for: IrAdInterface.tangent_rule. */
bool ad_tangent_rule(Value fn, bool *op, int *id);
void ad_register_tangents(MistVM *vm);
/* Graphs the derivative builtins make, once per key; an entry keeps the
 * objects named in its key (by address) alive.  A graph made of graph
 * `of` (grad(f) of f's graph) is kept with of's transforms, so it dies
 * with of; with `of` NULL (a builtin's), in the VM's cache. */
IrGraph *ad_cache_get(MistVM *vm, IrGraph *of, const char *key);
ObjDict *ad_module_cache(MistVM *vm);
void ad_cache_put(MistVM *vm, IrGraph *of, const char *key, IrGraph *g, Value keep0, Value keep1, Value keep2);

/* Forward rules of calls and transforms decided when they run, at any
 * depth of forward transforms (nest.c): the builtin _Fn, and whether a
 * value is it. */
Value ad_nested_rule(MistVM *vm);
bool ad_is_nested_rule(Value fn);
void ad_register_nest(MistVM *vm);

/* From rules.c: the Mist definition a derivative builtin is
 * differentiated through in reverse mode (jvp: _jvp_by_vjp) or forward
 * mode (forward set; jvp: _jvp_by_F), or NULL; whether a builtin's
 * rules take its arguments after the first as a tuple (vjp); a
 * sensitivity primitive computed by its Mist definition (vm->ad->sens). */
const char *ad_mist_twin(MistVM *vm, Value fn, bool forward);
bool ad_is_packed(MistVM *vm, Value fn);
bool ad_sens_hook(MistVM *vm, int p, int argc, const Value *argv, Value *out);

/* From api.c: vjp's graph; the ordinary value behind a
 * forward-transformed one. */
bool ad_make_vjp(MistVM *vm, Value f, int n, Value *out);
Value ad_F_primal(MistVM *vm, Value v);

/* Install vm->ad (IrAdInterface) and the differentiation builtins: grad,
 * value_and_grad, vjp, jacobian, hessian, stop_gradient. */
void ad_register(MistVM *vm);

/* Register each primitive as the builtin `_name` (names.c), so derived
 * programs printed as source can call them. */
void ad_register_names(MistVM *vm);

#endif
