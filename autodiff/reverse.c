/* reverse.c: reverse-mode automatic differentiation as a graph
 * transformation (Pearlmutter and Siskind's construction, as in Myia and
 * MindSpore), with one twist that keeps loops in constant C stack.
 *
 * For a graph G(p1..pn) the transform makes JG(k, p1'..pn'), which runs
 * G's computation on "J-values" (the same numbers; functions replaced by
 * their transforms) and returns (value, B).  B is a closure: given the
 * sensitivity of G's output it walks G's nodes backwards, calling the
 * backpropagator each node's forward step produced and adding up
 * sensitivities (None stands for zero), and ends by calling
 * k((env, dp1..dpn)), where env maps G's free variables to their
 * sensitivities.  A call in non-tail position passes the identity
 * function as k (ad_state(vm)->kid), so the caller gets the tuple back.  A call in tail position passes as k a
 * closure holding the rest of G's backward pass, so the call stays a
 * tail call forward, and the backward pass continues with a tail call:
 * a loop of a million iterations runs in constant C stack both ways,
 * keeping only its backpropagators (linear memory).
 *
 * Each node's forward step is, by callee:
 *  - a primitive with a rule in stdlib/ad_rules.ms (add, mul, ...):
 *    t = J_add(a, b); the rule returns (value, backpropagator);
 *  - a structural primitive (tuples, indexing, switch, sensitivities):
 *    the primitive itself, with its backward step written here;
 *  - a builtin with a rule J_name in ad_rules.ms: as a primitive;
 *    without one: the builtin, with no derivative (print, len, range...);
 *  - a graph or any function value: t = f'(kid, a'...).
 * Free variables of nested graphs are the forward values of the
 * enclosing transform, and the sensitivity of a closure (an env) flows
 * back to the nodes it captured.  J of a value (a closure's transform
 * over J of its captures, containers item by item) is at the end.
 *
 * Within autodiff/, this file and forward.c make the transforms: they
 * use the rules of builtins (builtins.c, calls.c, nest.c, tangents.c)
 * and rules.c, and only api.c uses them.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "ir/map.h"
#include "ir/marks.h"
#include "ir/passes.h"
#include "lang/gc.h"

typedef struct Ad {
  MistVM *vm;
  IrUnit *u;
  NodeMap fwd;             /* original node -> its forward value in the transform */
  NodeMap jg;              /* original graph -> its transform */
  IrGraph **work;      /* transforms whose bodies are still to fill */
  int nwork, capwork;
  ObjModule *rules;
  IrGraph *envg;       /* holds the root's free variables as parameters */
  NodeMap kfix;            /* branch graph -> the continuation its transform uses */
  IrGraph *root;       /* the graph transformed */
  uint64_t mask;       /* the parameters of root whose sensitivity is wanted */
  bool kid;            /* root's continuation is the identity (grad's jmask) */
  NodeMap spread;          /* graphs whose continuation takes the sensitivities spread */
  NodeMap active;          /* nodes that depend on what is differentiated (activity()) */
  NodeMap nok;             /* a call of such a branch: called with no continuation */
  bool failed;
} Ad;

/* How a node's backward step goes. */
typedef enum {
  BK_NONE,      /* no sensitivity flows through it */
  BK_BP,        /* r = bp(d): r[0] for the callee, r[i] for argument i */
  BK_BPCALL,    /* a backpropagator called in a transformed program */
  BK_INLINE,    /* a structural primitive: written out in backward() */
  BK_NODIFF,    /* sensitivity reaching it is an error */
  BK_SENS,      /* a hot primitive or math builtin: its sensitivity primitives */
  BK_METHOD,    /* call_method(x, name, args): r[1] for x, r[1 + j] for argument j */
  BK_KW,        /* call_kw(f, names, args): r[0] for f, r[order[j]] for argument j */
  BK_KW_METHOD, /* the same for x.name(...): r[order[0]] for x */
  BK_PACKED,    /* a rule taking (f, (x1..xn)): r[1] for f, r[2][j] for argument j */
} BackKind;

typedef struct Fill {
  Ad *ad;
  IrGraph *h, *jh;     /* the graph and its transform */
  IrNode *k;           /* jh's continuation parameter */
  BackKind *kind;      /* per scheduled node */
  IrNode **bp;         /* per scheduled node: its backpropagator (BK_BP) */
  IrNode **order;      /* per scheduled node: _bind_order's result (BK_KW) */
  /* backward pass */
  IrGraph *b;          /* the graph being built */
  NodeMap sens;            /* original node -> accumulated sensitivity in b */
  IrNode **fvs;        /* free variables of h that received sensitivity */
  int nfvs;
} Fill;

static Span nospan(void) { return span_none(); }

static IrNode *kconst(Ad *ad, Value v) { return ir_const(ad->u, v, nospan()); }
static IrNode *knone(Ad *ad) { return kconst(ad, v_none()); }
static IrNode *kint(Ad *ad, int64_t i) { return kconst(ad, v_int(i)); }

static IrNode *prim_in(Ad *ad, IrGraph *g, IrPrim p, Span sp, int n, ...) {
  IrNode *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, IrNode *);
  va_end(ap);
  return ir_prim_applyv(ad->u, g, p, sp, n, args);
}

static IrNode *call_in(Ad *ad, IrGraph *g, IrNode *f, int n, IrNode **args, Span sp) {
  IrNode **in = lang_alloc((n + 1) * sizeof *in);
  in[0] = f;
  memcpy(in + 1, args, n * sizeof *args);
  return ir_apply(ad->u, g, n + 1, in, sp);
}

static bool ad_error(Ad *ad, Span sp, const char *fmt, const char *what) {
  ad->failed = true;
  return lang_raise_at(ad->vm, sp, "TypeError", fmt, what);
}

/* ---- graphs ---- */

static IrGraph *jgraph(Ad *ad, IrGraph *h);

static const char *jname(IrGraph *h) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "J.%s", h->name->data);
  return sb.data;
}

/* The transform of h, made (empty, queued for filling) on first use.
 * Its parent is the transform of h's parent. */
/* The name of a transform's continuation parameter: k, or k2, k3...
 * when h has a parameter of that name, since a keyword call binds by
 * name after passing the continuation first (forward_kw). */
static ObjStr *cont_name(IrGraph *h) {
  for (int n = 1;; n++) {
    ObjStr *k = n == 1 ? lang_str("k") : lang_str_fmt("k%d", n);
    int i = 0;
    while (i < h->nparams && !(h->params[i]->name && lang_str_eq(h->params[i]->name, k))) i++;
    if (i == h->nparams) return k;
  }
}

static IrGraph *jgraph(Ad *ad, IrGraph *h) {
  IrGraph *j = ir_map_get(&ad->jg, h);
  if (j) return j;
  /* a graph nested in the function goes into its parent's transform; one
   * from outside (a top-level function named by constant) hangs off the
   * environment graph, where the free variables it shares are */
  IrGraph *jp = h->parent ? ir_map_get(&ad->jg, h->parent) : NULL;
  if (!jp) jp = ad->envg;
  j = ir_graph_new(ad->u, jname(h), jp, h->flags & ~IRG_MODULE, h->span);
  j->display = h->display;
  j->module = h->module;
  ir_map_put(&ad->jg, h, j);
  if (!ir_map_get(&ad->kfix, h)) ir_param(ad->u, j, cont_name(h), h->span);
  for (int i = 0; i < h->nparams; i++) ir_map_put(&ad->fwd, h->params[i], ir_param(ad->u, j, h->params[i]->name, h->params[i]->span));
  if (ad->nwork == ad->capwork) {
    ad->capwork = ad->capwork ? 2 * ad->capwork : 16;
    ad->work = lang_realloc(ad->work, ad->capwork * sizeof *ad->work);
  }
  ad->work[ad->nwork++] = h;
  return j;
}

/* ---- forward ---- */

/* The forward value of input x in the transform, emitted into jg. */
static IrNode *fwd(Fill *f, IrNode *x, IrGraph *jg) {
  Ad *ad = f->ad;
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    if (h) {
      IrGraph *j = jgraph(ad, h);
      return j ? ir_const_graph(ad->u, j, x->span) : knone(ad);
    }
    if (lang_holds_function(x->value))
      return prim_in(ad, jg, IR_P_J, x->span, 1, x);   /* a function value (or a container of some): J of it */
    return x;
  }
  IrNode *y = ir_map_get(&ad->fwd, x);
  if (!y) {
    ad_error(ad, x->span, "internal error: no forward value for %s", x->name ? x->name->data : "a node");
    return knone(ad);
  }
  return y;
}

static Value rule_for(Ad *ad, const char *name) { return ad_module_global(ad->vm, ad->rules, "J_", name); }

/* ---- the fast rules: sensitivity primitives ---- */

/* The sensitivity primitive (ops.def) of call y, when y is one of the
 * hot primitives or math builtins with one argument per parameter: its
 * forward step is y itself and its backward step one sensitivity
 * primitive per argument, no tuple, closure or call.  -1 otherwise. */
static int sens_prim_of(Ad *ad, IrNode *y) {
  int p = ir_node_prim(y);
  switch (p) {
  case IR_P_CALL_METHOD: {
    /* x.sum(): builtin sum's for anything but a module, whose function
     * of no argument has no sensitivity to give (sum_sens says None;
     * the other ops' sensitivities take x to be a number or tensor, so
     * their methods go by their rules) */
    Value b;
    MistVM *vm = ad->vm;
    if (y->nin != 3 || y->in[2]->kind != IR_CONST || !v_is_obj(y->in[2]->value, O_STR)) return -1;
    ObjStr *name = AS_STR(y->in[2]->value);
    if (vm->methods && lang_dict_get(vm->methods, name, &b)) return -1;
    if (!vm->builtins || !lang_dict_get(vm->builtins, name, &b) || !v_is_obj(b, O_BUILTIN)) return -1;
    return AS_BUILTIN(b)->op == IR_B_SUM ? ad_sens_prim(AS_BUILTIN(b)) : -1;
  }
  case -1: break;
  default: return ad_prim_sens(p);
  }
  IrNode *c = y->in[0];
  if (y->kind != IR_APPLY || c->kind != IR_CONST || !v_is_obj(c->value, O_BUILTIN)) return -1;
  int sp = ad_sens_prim(AS_BUILTIN(c->value));
  return sp >= 0 && y->nin == (ir_prims[sp].arity == 3 ? 2 : 3) ? sp : -1;
}

static bool is_sens_prim(int p) { return p >= 0 && ad_prim_reverse(p) == AD_DEF; }
static bool is_unary_sens(int p) { return ir_prims[p].arity == 3; }

/* t = callee(args...); value = t[0]; bp = t[1] */
static IrNode *forward_pair(Fill *f, IrNode *y, IrNode *callee, int n, IrNode **args, int i) {
  Ad *ad = f->ad;
  IrNode *t = call_in(ad, f->jh, callee, n, args, y->span);
  IrNode *v = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 0));
  v->name = y->name;
  f->bp[i] = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 1));
  f->kind[i] = BK_BP;
  return v;
}

static IrNode *mapped_args(Fill *f, IrNode *y, int from, IrNode **out) {
  for (int j = from; j < y->nin; j++) out[j - from] = fwd(f, y->in[j], f->jh);
  return NULL;
}

/* Is y used only as the callee of keyword calls in h (x.name(k=v))? */
static bool only_called_with_keywords(IrGraph *h, IrNode *y) {
  bool used = false;
  for (int i = 0; i < h->nnodes; i++) {
    IrNode *n = h->nodes[i];
    for (int j = 0; j < n->nin; j++) {
      if (n->in[j] != y) continue;
      if (j != 1 || ir_node_prim(n) != IR_P_CALL_KW) return false;
      used = true;
    }
  }
  return used && h->ret != y;
}

/* A call with keyword arguments, call_kw(callee, names, args...): which
 * parameter an argument goes to is known only when the call runs.  It
 * stays a call_kw, of the transformed callee with the identity
 * continuation first, or for a method x.name(..., k=v) of the rule of
 * x.name with x first; _bind_order(callee', names, n, offset, 0)
 * gives, when it runs, the item of the backpropagator's result for each
 * argument and the result's length (a further transform of this code
 * raises the last argument, the depth: see the constant-builtin case of
 * forward()). */
static IrNode *forward_kw(Fill *f, IrNode *y, int i) {
  Ad *ad = f->ad;
  IrNode *callee = y->in[1], *names = y->in[2];
  int nargs = y->nin - 3;
  if (callee->kind == IR_CONST && v_is_obj(callee->value, O_BUILTIN) &&
      !ad_builtin_binds(ad->vm, callee->value, names->value)) {
    /* a builtin without a rule (print(x, end="")): computed; a
     * sensitivity reaching it is an error */
    IrNode **a = lang_alloc((nargs + 3) * sizeof *a);
    a[0] = callee;
    a[1] = names;
    for (int j = 0; j < nargs; j++) a[2 + j] = fwd(f, y->in[3 + j], f->jh);
    if (!ad_nondiff_builtin(callee->value)) f->kind[i] = BK_NODIFF;
    return ir_prim_applyv(ad->u, f->jh, IR_P_CALL_KW, y->span, nargs + 2, a);
  }
  bool method = ir_node_prim(callee) == IR_P_GETATTR && callee->graph == f->h;
  IrNode **a = lang_alloc((nargs + 4) * sizeof *a);
  IrNode *fn;
  if (method) {
    IrNode *x = fwd(f, callee->in[1], f->jh);
    fn = call_in(ad, f->jh, kconst(ad, ad_call_rule(ad->vm, "_method_rule")), 4,
                 (IrNode *[]){x, fwd(f, callee->in[2], f->jh), kint(ad, nargs - (int)AS_SEQ(names->value)->len), names},
                 y->span);
    a[2] = x;
  } else {
    fn = fwd(f, callee, f->jh);
    a[2] = kconst(ad, ad_state(ad->vm)->kid);
  }
  a[0] = fn;
  a[1] = names;
  for (int j = 0; j < nargs; j++) a[3 + j] = fwd(f, y->in[3 + j], f->jh);
  IrNode *t = ir_prim_applyv(ad->u, f->jh, IR_P_CALL_KW, y->span, nargs + 3, a);
  IrNode *v = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 0));
  v->name = y->name;
  f->bp[i] = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 1));
  f->order[i] = call_in(ad, f->jh, kconst(ad, ad_call_rule(ad->vm, "_bind_order")), 5,
                        (IrNode *[]){fn, names, kint(ad, nargs + 1), kint(ad, method ? 1 : 0), kint(ad, 0)}, y->span);
  f->kind[i] = method ? BK_KW_METHOD : BK_KW;
  return v;
}

/* The forward step of scheduled node i (not a tail call). */
static void forward(Fill *f, int i) {
  Ad *ad = f->ad;
  IrNode *y = f->h->nodes[i];
  IrNode *callee = y->in[0];
  int nargs = y->nin - 1;
  IrNode **args = lang_alloc((nargs + 2) * sizeof *args);
  IrNode *v = NULL;
  int p = ir_node_prim(y);
  f->kind[i] = BK_NONE;
  if (p >= 0) {
    switch (p) {
    case IR_P_GLOBAL: {
      IrNode *g = prim_in(ad, f->jh, IR_P_GLOBAL, y->span, 1, y->in[1]);
      v = prim_in(ad, f->jh, IR_P_J, y->span, 1, g);
      break;
    }
    case IR_P_STOP_GRADIENT:
      /* kept in the transform, so a second derivative stops here too */
      v = prim_in(ad, f->jh, IR_P_STOP_GRADIENT, y->span, 1, fwd(f, y->in[1], f->jh));
      break;
    case IR_P_JMASK: {
      /* grad's J(f) leaving out the parameters nobody asks about, in a
       * derivative differentiated again: plain J, since this transform
       * needs the sensitivities the mask leaves out of the inner one */
      v = prim_in(ad, f->jh, IR_P_J, y->span, 1, fwd(f, y->in[1], f->jh));
      f->kind[i] = BK_INLINE;
      break;
    }
    case IR_P_MAKE_TUPLE: case IR_P_MAKE_LIST: case IR_P_MAKE_DICT: case IR_P_GETITEM:
    case IR_P_SETITEM: case IR_P_UNPACK: case IR_P_ITER_SEQ: case IR_P_SWITCH: case IR_P_GADD:
    case IR_P_ENV_GET: case IR_P_ENV_SET: case IR_P_MAKE_ENV: case IR_P_SENS_ITEM: case IR_P_SENS_AT:
    case IR_P_SENS_WITHOUT: case IR_P_SENS_LIKE: case IR_P_CHECK_BOUND: case IR_P_CHECK_DIFF:
    case IR_P_FLOAT_ARG: case IR_P_J: case IR_P_CONS_LIST: case IR_P_CONS_SENS: case IR_P_CONS_TAN: case IR_P_JINV_ENV:
    case IR_P_JENV:
      mapped_args(f, y, 1, args);
      v = ir_prim_applyv(ad->u, f->jh, p, y->span, nargs, args);
      f->kind[i] = BK_INLINE;
      break;
    case IR_P_BP_CALL:
    case IR_P_BP_CALL_J: {
      /* a backpropagator called in the program: in the transform it is
       * called with one more continuation in front */
      IrNode **a = lang_alloc((nargs + 2) * sizeof *a);
      mapped_args(f, y, 1, a);
      memmove(a + 4, a + 3, (nargs - 3 > 0 ? nargs - 3 : 0) * sizeof *a);
      a[3] = kconst(ad, ad_state(ad->vm)->kid);
      IrNode *t = ir_prim_applyv(ad->u, f->jh, IR_P_BP_CALL_J, y->span, nargs + 1, a);
      v = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 0));
      f->bp[i] = prim_in(ad, f->jh, IR_P_GETITEM, y->span, 2, t, kint(ad, 1));
      f->kind[i] = BK_BPCALL;
      break;
    }
    case IR_P_CALL_METHOD: {
      if (sens_prim_of(ad, y) >= 0) {
        /* x.sum(): the value, plainly; the backward step is sum_sens */
        mapped_args(f, y, 1, args);
        v = ir_prim_applyv(ad->u, f->jh, p, y->span, nargs, args);
        f->kind[i] = BK_SENS;
        break;
      }
      /* x.name(args): the rule of what x.name is, known when the call
       * runs (calls.c), called (x, args...); its result has no item for
       * the name */
      IrNode *x = fwd(f, y->in[1], f->jh);
      IrNode *r = call_in(ad, f->jh, kconst(ad, ad_call_rule(ad->vm, "_method_rule")), 3,
                          (IrNode *[]){x, fwd(f, y->in[2], f->jh), kint(ad, y->nin - 3)}, y->span);
      args[0] = x;
      for (int j = 3; j < y->nin; j++) args[j - 2] = fwd(f, y->in[j], f->jh);
      v = forward_pair(f, y, r, nargs - 1, args, i);
      f->kind[i] = BK_METHOD;
      break;
    }
    case IR_P_GETATTR: {
      /* x.name(..., k=v): forward_kw calls the method's rule itself */
      if (only_called_with_keywords(f->h, y)) return;
      /* x.name: its rule, known when it runs, called (x) */
      IrNode *x = fwd(f, y->in[1], f->jh);
      IrNode *r = call_in(ad, f->jh, kconst(ad, ad_call_rule(ad->vm, "_attr_rule")), 2,
                          (IrNode *[]){x, fwd(f, y->in[2], f->jh)}, y->span);
      v = forward_pair(f, y, r, 1, &x, i);
      break;
    }
    case IR_P_CALL_KW:
      v = forward_kw(f, y, i);
      break;
    default: {
      if (sens_prim_of(ad, y) >= 0) {
        /* the value, plainly; the backward step is sensitivity primitives */
        mapped_args(f, y, 1, args);
        v = ir_prim_applyv(ad->u, f->jh, p, y->span, nargs, args);
        f->kind[i] = BK_SENS;
        break;
      }
      if (is_sens_prim(p)) {
        /* in a derivative being differentiated: its rule (ad_sens.ms),
         * or a call of its Mist definition, whose transform gives the
         * higher derivative */
        ObjModule *sm = ad_stdlib_module(ad->vm, "ad_sens");
        Value srule = sm ? ad_module_global(f->ad->vm, sm, "J_", ir_prims[p].name) : v_unbound();
        if (srule.tag != V_UNBOUND) {
          mapped_args(f, y, 1, args);
          v = forward_pair(f, y, kconst(ad, srule), nargs, args, i);
          break;
        }
        Value def = ad_sens_definition(ad->vm, p), jdef;
        if (def.tag == V_UNBOUND || !ad_J_value(ad->vm, def, &jdef)) {
          ad->failed = true;
          return;
        }
        args[0] = kconst(ad, ad_state(ad->vm)->kid);
        mapped_args(f, y, 1, args + 1);
        v = forward_pair(f, y, kconst(ad, jdef), nargs + 1, args, i);
        break;
      }
      Value rule = ad_prim_reverse(p) == AD_RULE ? rule_for(ad, ir_prims[p].name) : v_unbound();
      mapped_args(f, y, 1, args);
      if (rule.tag != V_UNBOUND) {
        v = forward_pair(f, y, kconst(ad, rule), nargs, args, i);
      } else {
        if (ir_prims[p].flags & P_DIFF) {
          ad_error(ad, y->span, "no derivative rule for the primitive %s", ir_prims[p].name);
          return;
        }
        v = ir_prim_applyv(ad->u, f->jh, p, y->span, nargs, args);
      }
    }
    }
  } else if (sens_prim_of(ad, y) >= 0) {
    /* a math builtin with a fast rule: the value, plainly */
    mapped_args(f, y, 1, args);
    v = call_in(ad, f->jh, callee, nargs, args, y->span);
    f->kind[i] = BK_SENS;
  } else if (callee->kind == IR_CONST && v_is_obj(callee->value, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(callee->value);
    Value rule = rule_for(ad, b->name);
    const char *twin = ad_mist_twin(ad->vm, callee->value, false);
    mapped_args(f, y, 1, args);
    if (twin) {
      /* jvp, jacobian, hessian: their Mist definitions (stdlib/ad.ms),
       * transformed like any function */
      ObjModule *m = ad_stdlib_module(ad->vm, "ad");
      Value def = m ? ad_module_global(f->ad->vm, m, "", twin) : v_unbound(), jdef;
      if (def.tag == V_UNBOUND || !ad_J_value(ad->vm, def, &jdef)) {
        if (def.tag == V_UNBOUND && m) lang_raise(ad->vm, "NameError", "%s is missing from stdlib/ad.ms", twin);
        ad->failed = true;
        return;
      }
      IrNode **a2 = lang_alloc((nargs + 1) * sizeof *a2);
      a2[0] = kconst(ad, ad_state(ad->vm)->kid);
      memcpy(a2 + 1, args, nargs * sizeof *args);
      v = forward_pair(f, y, kconst(ad, jdef), nargs + 1, a2, i);
    } else if (rule.tag != V_UNBOUND && ad_is_packed(ad->vm, callee->value)) {
      /* vjp(f, x1..xn): the rule takes (f, (x1..xn)) */
      if (nargs < 1) {
        ad_error(ad, y->span, "%s() takes a function and its arguments", b->name);
        return;
      }
      IrNode *xs = ir_prim_applyv(ad->u, f->jh, IR_P_MAKE_TUPLE, y->span, nargs - 1, args + 1);
      v = forward_pair(f, y, kconst(ad, rule), 2, (IrNode *[]){args[0], xs}, i);
      f->kind[i] = BK_PACKED;
    } else if (rule.tag != V_UNBOUND) {
      v = forward_pair(f, y, kconst(ad, rule), nargs, args, i);
    } else if (ad_lowering_builtin(callee->value) == AD_BIND_ORDER) {
      /* in a derivative differentiated again: the callee is transformed
       * once more, with one more continuation first */
      if (nargs == 5 && y->in[5]->kind == IR_CONST && y->in[5]->value.tag == V_INT)
        args[4] = kint(ad, y->in[5]->value.i + 1);
      v = call_in(ad, f->jh, callee, nargs, args, y->span);
    } else {
      /* without a rule: computed, and a sensitivity reaching it is an
       * error */
      v = call_in(ad, f->jh, callee, nargs, args, y->span);
      if (!ad_nondiff_builtin(callee->value)) f->kind[i] = BK_NODIFF;
      /* a rule found for a method call is a function of this world */
      if (ad_lowering_builtin(callee->value) == AD_RULE_OF) v = prim_in(ad, f->jh, IR_P_J, y->span, 1, v);
    }
  } else {
    /* a graph or a function value: f'(kid, args'), or a branch of an
     * if, whose transform knows its continuation: J(switch)() */
    args[0] = kconst(ad, ad_state(ad->vm)->kid);
    mapped_args(f, y, 1, args + 1);
    if (ir_map_get(&ad->nok, y)) v = forward_pair(f, y, fwd(f, callee, f->jh), 0, args, i);
    else v = forward_pair(f, y, fwd(f, callee, f->jh), nargs + 1, args, i);
  }
  if (v->kind == IR_APPLY && !v->name) v->name = y->name;
  ir_map_put(&ad->fwd, y, v);
}

/* ---- backward ---- */

/* A free variable's key in an env sensitivity: its node's serial, not
 * its address, so that derivative programs (which hold keys as
 * constants) are the same from run to run, as the compile cache needs */
static int64_t key_of(IrNode *x) { return (int64_t)x->serial; }

static bool in_transform(Fill *f, IrNode *x) { return ir_map_get(&f->ad->fwd, x) != NULL; }

/* Add sensitivity v to x. */
static void contribute(Fill *f, IrNode *x, IrNode *v) {
  Ad *ad = f->ad;
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    if (!h) return;
    /* a closure's sensitivity is an env: hand each captured node its part */
    ir_free_vars(h);
    for (int i = 0; i < h->nfv; i++) {
      IrNode *z = h->fv[i];
      if (!in_transform(f, z)) continue;
      contribute(f, z, prim_in(ad, f->b, IR_P_ENV_GET, x->span, 2, v, kint(ad, key_of(z))));
    }
    return;
  }
  if (!in_transform(f, x) || !ir_map_get(&ad->active, x)) return;
  IrNode *old = ir_map_get(&f->sens, x);
  if (!old && x->graph != f->h) {
    f->fvs = lang_realloc(f->fvs, (f->nfvs + 1) * sizeof *f->fvs);
    f->fvs[f->nfvs++] = x;
  }
  IrNode *s = old ? prim_in(ad, f->b, IR_P_GADD, x->span, 2, old, v) : v;
  if (s->kind == IR_APPLY && !s->name && x->name) {
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "d%s", x->name->data);
    s->name = lang_str(sb.data);
  }
  ir_map_put(&f->sens, x, s);
}

static IrNode *bfwd(Fill *f, IrNode *x) {
  /* a forward value used in the backward graph: constants stay, nodes
   * are free variables of b */
  if (x->kind == IR_CONST && !ir_node_graph(x)) return x;
  return fwd(f, x, f->jh);
}

static void backward_inline(Fill *f, IrNode *y, IrNode *d) {
  Ad *ad = f->ad;
  IrGraph *b = f->b;
  Span sp = y->span;
  IrNode **in = y->in;
  switch (ir_node_prim(y)) {
  case IR_P_MAKE_TUPLE:
  case IR_P_MAKE_LIST:
    for (int j = 1; j < y->nin; j++) contribute(f, in[j], prim_in(ad, b, IR_P_SENS_ITEM, sp, 2, d, kint(ad, j - 1)));
    break;
  case IR_P_MAKE_DICT:
    for (int j = 1; j + 1 < y->nin; j += 2)
      contribute(f, in[j + 1], prim_in(ad, b, IR_P_SENS_ITEM, sp, 2, d, bfwd(f, in[j])));
    break;
  case IR_P_GETITEM:
    contribute(f, in[1], prim_in(ad, b, IR_P_SENS_AT, sp, 3, bfwd(f, in[1]), bfwd(f, in[2]), d));
    break;
  case IR_P_SETITEM: {
    /* v may have been broadcast into place (x[i] = 0.5 on a row): its
     * sensitivity is summed back to its own shape.  It reads d before
     * x's sensitivity is made from d: that update writes in place
     * (lang/value.c, "Versions"), and reading d after it would copy d
     * back, at every turn of a loop. */
    IrNode *dv = prim_in(ad, b, IR_P_SENS_ITEM, sp, 2, d, bfwd(f, in[2]));
    Value to = v_none();
    lang_dict_get(ad->vm->builtins, lang_str("_sens_to"), &to);
    if (v_is_obj(to, O_BUILTIN)) dv = call_in(ad, b, kconst(ad, to), 2, (IrNode *[]){dv, bfwd(f, in[3])}, sp);
    contribute(f, in[3], dv);
    contribute(f, in[1], prim_in(ad, b, IR_P_SENS_WITHOUT, sp, 2, d, bfwd(f, in[2])));
    break;
  }
  case IR_P_UNPACK:
  case IR_P_ITER_SEQ:
    contribute(f, in[1], prim_in(ad, b, IR_P_SENS_LIKE, sp, 2, bfwd(f, in[1]), d));
    break;
  case IR_P_SWITCH: {
    IrNode *c = bfwd(f, in[1]);
    contribute(f, in[2], prim_in(ad, b, IR_P_SWITCH, sp, 3, c, d, knone(ad)));
    contribute(f, in[3], prim_in(ad, b, IR_P_SWITCH, sp, 3, c, knone(ad), d));
    break;
  }
  case IR_P_GADD:
    contribute(f, in[1], d);
    contribute(f, in[2], d);
    break;
  case IR_P_ENV_GET:
    contribute(f, in[1], prim_in(ad, b, IR_P_ENV_SET, sp, 3, knone(ad), bfwd(f, in[2]), d));
    break;
  case IR_P_ENV_SET:
    contribute(f, in[1], d);
    contribute(f, in[3], prim_in(ad, b, IR_P_ENV_GET, sp, 2, d, bfwd(f, in[2])));
    break;
  case IR_P_MAKE_ENV:
    for (int j = 1; j + 1 < y->nin; j += 2)
      contribute(f, in[j + 1], prim_in(ad, b, IR_P_ENV_GET, sp, 2, d, bfwd(f, in[j])));
    break;
  case IR_P_SENS_ITEM:
    contribute(f, in[1], prim_in(ad, b, IR_P_SENS_AT, sp, 3, bfwd(f, in[1]), bfwd(f, in[2]), d));
    break;
  case IR_P_SENS_AT:
    contribute(f, in[3], prim_in(ad, b, IR_P_SENS_ITEM, sp, 2, d, bfwd(f, in[2])));
    break;
  case IR_P_SENS_WITHOUT:
    contribute(f, in[1], prim_in(ad, b, IR_P_SENS_WITHOUT, sp, 2, d, bfwd(f, in[2])));
    break;
  case IR_P_SENS_LIKE:
    contribute(f, in[2], d);
    break;
  case IR_P_CHECK_BOUND:
  case IR_P_CHECK_DIFF:
  case IR_P_FLOAT_ARG:
    contribute(f, in[1], d);
    break;
  case IR_P_J:
  case IR_P_JMASK:
    contribute(f, in[1], prim_in(ad, b, IR_P_JINV_ENV, sp, 2, bfwd(f, in[1]), d));
    break;
  case IR_P_CONS_LIST:
    contribute(f, in[1], prim_in(ad, b, IR_P_CONS_SENS, sp, 3, d, bfwd(f, in[1]), bfwd(f, in[2])));
    break;
  case IR_P_JINV_ENV:   /* linear in the env: its transpose re-keys back */
    contribute(f, in[2], prim_in(ad, b, IR_P_JENV, sp, 2, bfwd(f, in[1]), d));
    break;
  case IR_P_JENV:
    contribute(f, in[2], prim_in(ad, b, IR_P_JINV_ENV, sp, 2, bfwd(f, in[1]), d));
    break;
  case IR_P_CONS_TAN:
    /* linear in the chain: its transpose is cons_sens */
    contribute(f, in[1], prim_in(ad, b, IR_P_CONS_SENS, sp, 3, d, bfwd(f, in[2]), bfwd(f, in[3])));
    break;
  case IR_P_CONS_SENS:
    /* linear in d: its transpose turns a chain back into a list (or
     * dict) as long as acc, the chain's Nones standing for zeros */
    contribute(f, in[1], prim_in(ad, b, IR_P_CONS_TAN, sp, 3, d, bfwd(f, in[2]), bfwd(f, in[3])));
    break;
  default: break;
  }
}

/* The end of the backward pass of a graph whose continuation takes the
 * sensitivities spread (a loop's header, a join: see spreads()):
 * k(dfv1..dfvm, dp1..dpn), h's free variables in h->fv order, then its
 * parameters; no tuple or env is made. */
static void spread_end(Fill *f) {
  Ad *ad = f->ad;
  IrGraph *h = f->h;
  ir_free_vars(h);
  for (int i = 0; i < f->nfvs; i++) {
    int k = 0;
    while (k < h->nfv && h->fv[k] != f->fvs[i]) k++;
    if (k == h->nfv) {
      ad_error(ad, h->span, "internal error: the backward pass of %s has a sensitivity for a value it does not capture",
               h->name->data);
      return;
    }
  }
  IrNode **args = lang_alloc((h->nfv + h->nparams + 1) * sizeof *args);
  for (int i = 0; i < h->nfv; i++) {
    IrNode *s = ir_map_get(&f->sens, h->fv[i]);
    args[i] = s ? s : knone(ad);
  }
  for (int i = 0; i < h->nparams; i++) {
    IrNode *s = ir_map_get(&f->sens, h->params[i]);
    args[h->nfv + i] = s ? s : knone(ad);
  }
  f->b->ret = call_in(ad, f->b, f->k, h->nfv + h->nparams, args, h->span);
}

/* Walk nodes last..0 of h backwards, then end b by calling k. */
static void backward(Fill *f, int last) {
  Ad *ad = f->ad;
  IrGraph *b = f->b;
  for (int i = last; i >= 0 && !ad->failed; i--) {
    IrNode *y = f->h->nodes[i];
    IrNode *d = ir_map_get(&f->sens, y);
    if (!d) continue;
    switch (f->kind[i]) {
    case BK_NONE: break;
    case BK_NODIFF: {
      StrBuf sb;
      sb_init(&sb);
      int p = ir_node_prim(y);
      if (p < 0 && ad_is_call_rule(y->in[0]->value))
        sb_printf(&sb, "a keyword or method call twice (line %d): higher derivatives through them are not supported yet",
                  y->span.line);
      else if (p < 0 || (p == IR_P_CALL_KW && v_is_obj(y->in[1]->value, O_BUILTIN)))
        sb_printf(&sb, "through %s() (line %d): it has no derivative rule yet",
                  AS_BUILTIN(y->in[p < 0 ? 0 : 1]->value)->name, y->span.line);
      else
        sb_printf(&sb, "through %s (line %d)", ir_prims[p].name, y->span.line);
      prim_in(ad, b, IR_P_NO_DERIVATIVE, y->span, 2, d, kconst(ad, v_obj(lang_str(sb.data))));
      break;
    }
    case BK_INLINE: backward_inline(f, y, d); break;
    case BK_SENS: {
      /* one sensitivity primitive per argument that can take one */
      int sp = sens_prim_of(ad, y);
      for (int j = 1; j < y->nin; j++) {
        IrNode *x = y->in[j];
        if (x->kind == IR_CONST || !in_transform(f, x)) continue;
        IrNode *fy = ir_map_get(&ad->fwd, y);
        IrNode *s = !is_unary_sens(sp) ? prim_in(ad, b, sp, y->span, 4, d, bfwd(f, y->in[1]), bfwd(f, y->in[2]), kint(ad, j - 1))
                                       : prim_in(ad, b, sp, y->span, 3, d, ad_sens_reads_result(sp) ? fy : bfwd(f, x), fy);
        contribute(f, x, s);
      }
      break;
    }
    case BK_METHOD: {
      /* the rule's result: (None, dx, dargs...) */
      int na = y->nin - 3;
      IrNode *r = prim_in(ad, b, IR_P_BP_CALL, y->span, 3, f->bp[i], d, kint(ad, na + 2));
      contribute(f, y->in[1], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 1)));
      for (int j = 0; j < na; j++)
        contribute(f, y->in[3 + j], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 2 + j)));
      break;
    }
    case BK_KW:
    case BK_KW_METHOD: {
      /* items picked by _bind_order's result, whose last item is the
       * length of the backpropagator's result */
      int na = y->nin - 3;
      IrNode *o = f->order[i];
      IrNode *len = prim_in(ad, b, IR_P_GETITEM, y->span, 2, o, kint(ad, na + 1));
      IrNode *r = prim_in(ad, b, IR_P_BP_CALL, y->span, 3, f->bp[i], d, len);
      IrNode *callee = y->in[1];
      /* the order's item 0 is the continuation's, or x's for a method */
      if (f->kind[i] == BK_KW)
        contribute(f, callee, prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 0)));
      else
        contribute(f, callee->in[1], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r,
                                             prim_in(ad, b, IR_P_GETITEM, y->span, 2, o, kint(ad, 0))));
      for (int j = 0; j < na; j++) {
        IrNode *at = prim_in(ad, b, IR_P_GETITEM, y->span, 2, o, kint(ad, 1 + j));
        contribute(f, y->in[3 + j], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, at));
      }
      break;
    }
    case BK_PACKED: {
      IrNode *r = prim_in(ad, b, IR_P_BP_CALL, y->span, 3, f->bp[i], d, kint(ad, 3));
      contribute(f, y->in[1], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 1)));
      IrNode *dxs = prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 2));
      for (int j = 2; j < y->nin; j++)
        contribute(f, y->in[j], prim_in(ad, b, IR_P_SENS_ITEM, y->span, 2, dxs, kint(ad, j - 2)));
      break;
    }
    case BK_BP:
    case BK_BPCALL: {
      /* bp_call(bp, d, n, k1..km): sensitivities for bp, k1..km and d */
      int m = y->nin - 4;
      int n = f->kind[i] == BK_BPCALL ? m + 2 : y->nin;
      IrNode *r = prim_in(ad, b, IR_P_BP_CALL, y->span, 3, f->bp[i], d, kint(ad, n));
      if (f->kind[i] == BK_BPCALL) {
        contribute(f, y->in[1], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, 0)));
        contribute(f, y->in[2], prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, m + 1)));
      } else {
        for (int j = 0; j < y->nin; j++) {
          IrNode *x = y->in[j];
          if (x->kind == IR_CONST && !ir_node_graph(x)) continue;
          contribute(f, x, prim_in(ad, b, IR_P_GETITEM, y->span, 2, r, kint(ad, j)));
        }
      }
      break;
    }
    }
  }
  if (ir_map_get(&ad->spread, f->h)) {
    spread_end(f);
    return;
  }
  /* k(env, dp1..dpn), env = make_env(key1, dfv1, ...) over the free
   * variables that got a sensitivity */
  IrNode *env = knone(ad);
  IrNode **kv = lang_alloc((2 * f->nfvs + 1) * sizeof *kv);
  int nkv = 0;
  for (int i = 0; i < f->nfvs; i++) {
    IrNode *s = ir_map_get(&f->sens, f->fvs[i]);
    if (!s) continue;
    kv[nkv++] = kint(ad, key_of(f->fvs[i]));
    kv[nkv++] = s;
  }
  if (nkv) env = ir_prim_applyv(ad->u, b, IR_P_MAKE_ENV, f->h->span, nkv, kv);
  int np = f->h->nparams;
  IrNode **args = lang_alloc((np + 1) * sizeof *args);
  args[0] = env;
  for (int i = 0; i < np; i++) {
    IrNode *s = ir_map_get(&f->sens, f->h->params[i]);
    /* a parameter nobody asks about gets None, and prune_backward drops
     * what computed its sensitivity (an MLP's input batch: a product) */
    bool wanted = f->h != ad->root || i >= 64 || (ad->mask >> i & 1);
    args[i + 1] = s && wanted ? s : knone(ad);
  }
  IrNode *r = ir_prim_applyv(ad->u, b, IR_P_MAKE_TUPLE, f->h->span, np + 1, args);
  b->ret = call_in(ad, b, f->k, 1, &r, f->h->span);
}

/* May a node the backward pass made go when nothing uses it?  Only
 * sensitivity arithmetic and picking apart results the transform built
 * itself: never a call (a backpropagator, the continuation), nor
 * no_derivative, whose point is the error it raises. */
static bool prunable(const IrNode *n) {
  int p = ir_node_prim(n);
  if (is_sens_prim(p)) return true;
  switch (p) {
  case IR_P_GETITEM: case IR_P_ENV_GET: case IR_P_GADD: case IR_P_MAKE_TUPLE: case IR_P_MAKE_ENV:
  case IR_P_SENS_ITEM: case IR_P_JINV_ENV: case IR_P_JENV:
    return true;
  default:
    return false;
  }
}

static void count_use(IrMarks *uses, const IrNode *x) {
  if (x && x->kind == IR_APPLY) ++*ir_mark(uses, x);
}

/* Drop what the backward graphs (the unit's graphs that are not
 * transforms: no jsource) computed for nothing: the sensitivity a
 * constant or an int would have got, the parts of a result nobody reads.
 * Uses are counted over the whole unit, since graphs nested in a
 * backward pass read its nodes. */
static void prune_backward(Ad *ad) {
  IrUnit *u = ad->u;
  IrMarks uses;   /* an application -> its uses (only theirs are read) */
  ir_marks_for_unit(&uses, u);
  bool again = true;
  while (again) {
    again = false;
    for (int g = 0; g < u->ngraphs; g++)
      for (int i = 0; i < u->graphs[g]->nnodes; i++) *ir_mark(&uses, u->graphs[g]->nodes[i]) = 0;
    for (int g = 0; g < u->ngraphs; g++) {
      IrGraph *h = u->graphs[g];
      for (int i = 0; i < h->nnodes; i++)
        for (int j = 0; j < h->nodes[i]->nin; j++) count_use(&uses, h->nodes[i]->in[j]);
      count_use(&uses, h->ret);
      for (int k = 0; k < h->ndefaults; k++) count_use(&uses, h->defaults[k]);
    }
    for (int g = 0; g < u->ngraphs; g++) {
      IrGraph *h = u->graphs[g];
      if (h->jsource) continue;
      int k = 0;
      for (int i = 0; i < h->nnodes; i++) {
        IrNode *n = h->nodes[i];
        if (*ir_mark(&uses, n) == 0 && prunable(n)) {
          again = true;
          continue;
        }
        h->nodes[k++] = n;
      }
      h->nnodes = k;
    }
  }
  ir_marks_free(&uses);
  for (int g = 0; g < u->ngraphs; g++) ir_forget_free_vars(u->graphs[g]);
}

/* Is node y (h's last) a call that can stay a tail call? */
static bool is_tail_call(IrGraph *h, IrNode *y) {
  if (h->ret != y) return false;
  IrNode *c = y->in[0];
  if (c->kind == IR_CONST && v_is_obj(c->value, O_BUILTIN)) return false;
  return true;
}

/* Is y, a node of h, the call switch(c, @a, @b)() of an if's branches,
 * the only use of that switch?  The branches' transforms then take no
 * continuation: they use the one this call would pass (the rest of h's
 * backward pass for a tail call, the identity otherwise), so the
 * transform is again switch(c', @Ja, @Jb)(), which the interpreter runs
 * as blocks of one frame, with no closure made for either branch and,
 * backward, a direct call of the continuation. */
static bool is_branch_call(IrGraph *h, IrNode *y) {
  if (y->kind != IR_APPLY || y->nin != 1) return false;
  IrNode *s = y->in[0];
  if (ir_node_prim(s) != IR_P_SWITCH || s->graph != h) return false;
  for (int j = 2; j <= 3; j++) {
    IrGraph *a = ir_node_graph(s->in[j]);
    if (!a || a->parent != h || !(a->flags & IRG_BRANCH) || a->nparams || a->ndefaults) return false;
  }
  if (ir_node_graph(s->in[2]) == ir_node_graph(s->in[3]) || h->ret == s) return false;
  for (int i = 0; i < h->nnodes; i++)
    for (int j = 0; j < h->nodes[i]->nin; j++)
      if (h->nodes[i]->in[j] == s && h->nodes[i] != y) return false;
  return true;
}

/* Is h run on each turn of a loop: a loop's header or body, or code
 * inside one, short of a function defined there? */
static bool in_loop(const IrGraph *h) {
  for (; h && !(h->flags & (IRG_FUNCTION | IRG_MODULE)); h = h->parent)
    if (h->flags & (IRG_LOOP | IRG_BODY)) return true;
  return false;
}

static void fill(Ad *ad, IrGraph *h) {
  Fill f = {0};
  f.ad = ad;
  f.h = h;
  f.jh = ir_map_get(&ad->jg, h);
  IrNode *kfix = ir_map_get(&ad->kfix, h);
  /* grad calls its masked transform with the identity continuation, so
   * there the backward pass simply returns (the optimiser inlines it) */
  f.k = kfix ? kfix : h == ad->root && ad->kid ? kconst(ad, ad_state(ad->vm)->kid) : f.jh->params[0];
  int n = h->nnodes;
  f.kind = lang_alloc_atomic((n ? n : 1) * sizeof *f.kind);
  f.bp = lang_alloc((n ? n : 1) * sizeof *f.bp);
  f.order = lang_alloc((n ? n : 1) * sizeof *f.order);
  bool tail = n > 0 && is_tail_call(h, h->nodes[n - 1]);
  int nfwd = tail ? n - 1 : n;

  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%s.back", f.jh->name->data);
  f.b = ir_graph_new(ad->u, sb.data, f.jh, IRG_BRANCH | IRG_BACK | (in_loop(h) ? IRG_TAPE : 0), h->span);
  f.b->display = h->display;
  f.b->module = h->module;
  /* the branches of an if called here get their continuation now, before
   * their transforms are made */
  for (int i = 0; i < n; i++) {
    IrNode *y = h->nodes[i];
    if (!is_branch_call(h, y)) continue;
    IrNode *k = tail && i == n - 1 ? ir_const_graph(ad->u, f.b, y->span) : kconst(ad, ad_state(ad->vm)->kid);
    for (int j = 2; j <= 3; j++) {
      IrGraph *a = ir_node_graph(y->in[0]->in[j]);
      /* (a branch has one switch; were it shared, the first call would
       * keep it, and the others pass a continuation, which fails loudly) */
      if (ir_map_get(&ad->jg, a) || ir_map_get(&ad->kfix, a)) continue;
      ir_map_put(&ad->kfix, a, k);
    }
    if (ir_map_get(&ad->kfix, ir_node_graph(y->in[0]->in[2])) == k && ir_map_get(&ad->kfix, ir_node_graph(y->in[0]->in[3])) == k)
      ir_map_put(&ad->nok, y, y);
  }
  /* (the forward pass's nodes keep the frames y was inlined from) */
  for (int i = 0; i < nfwd && !ad->failed; i++) {
    ad->u->inlined = h->nodes[i]->inlined;
    forward(&f, i);
  }
  ad->u->inlined = NULL;
  if (ad->failed) return;

  if (tail) {
    /* JH: return f'(K, args'); K((denv, da...)) runs the rest backwards */
    IrNode *y = h->nodes[n - 1];
    int nargs = y->nin - 1;
    IrGraph *callee = ir_node_graph(y->in[0]);
    if (callee && ir_map_get(&ad->spread, callee)) {
      /* the callee's backward pass sends its sensitivities spread (its
       * free variables', then its parameters'): one parameter each */
      ir_free_vars(callee);
      for (int i = 0; i < callee->nfv; i++) {
        IrNode *z = callee->fv[i];
        contribute(&f, z, ir_param(ad->u, f.b, z->name ? lang_str_fmt("d%s", z->name->data) : NULL, y->span));
      }
      for (int j = 0; j < nargs; j++) {
        IrNode *p = callee->params[j];
        contribute(&f, y->in[j + 1], ir_param(ad->u, f.b, p->name ? lang_str_fmt("d%s", p->name->data) : NULL, y->span));
      }
    } else {
      IrNode *r = ir_param(ad->u, f.b, lang_str("r"), y->span);
      contribute(&f, y->in[0], prim_in(ad, f.b, IR_P_GETITEM, y->span, 2, r, kint(ad, 0)));
      for (int j = 0; j < nargs; j++)
        contribute(&f, y->in[j + 1], prim_in(ad, f.b, IR_P_GETITEM, y->span, 2, r, kint(ad, j + 1)));
    }
    backward(&f, n - 2);
    IrNode **args = lang_alloc((nargs + 1) * sizeof *args);
    args[0] = ir_const_graph(ad->u, f.b, y->span);
    for (int j = 0; j < nargs; j++) args[j + 1] = fwd(&f, y->in[j + 1], f.jh);
    ad->u->inlined = y->inlined;
    if (ir_map_get(&ad->nok, y)) f.jh->ret = call_in(ad, f.jh, fwd(&f, y->in[0], f.jh), 0, args, y->span);
    else f.jh->ret = call_in(ad, f.jh, fwd(&f, y->in[0], f.jh), nargs + 1, args, y->span);
    ad->u->inlined = NULL;
    ir_map_put(&ad->fwd, y, f.jh->ret);
  } else {
    /* JH: return (value', B); B(dout) runs everything backwards */
    IrNode *dout = ir_param(ad->u, f.b, lang_str("dout"), h->span);
    IrNode *r = h->ret ? h->ret : knone(ad);
    IrNode *rv = r->kind == IR_CONST ? fwd(&f, r, f.jh) : ir_map_get(&ad->fwd, r);
    if (!rv) rv = fwd(&f, r, f.jh);
    contribute(&f, r, dout);
    backward(&f, n - 1);
    f.jh->ret = prim_in(ad, f.jh, IR_P_MAKE_TUPLE, h->span, 2, rv, ir_const_graph(ad->u, f.b, h->span));
  }
}

static IrGraph *reverse(MistVM *vm, IrGraph *g, uint64_t mask, bool floats, bool optimize);

/* ---- spread continuations ---- */

typedef struct Reach {
  NodeMap seen;
  IrGraph **list;
  int n, cap;
} Reach;

static void reach_add(Reach *r, IrGraph *h) {
  if (!h || ir_map_get(&r->seen, h)) return;
  ir_map_put(&r->seen, h, h);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 32;
    r->list = lang_realloc(r->list, r->cap * sizeof *r->list);
  }
  r->list[r->n++] = h;
}

/* ad->spread: the loop headers and joins reachable from the root that
 * are only ever tail-called directly, with one argument per parameter.
 * Their transforms' continuations are always the backward passes the
 * transform makes for those tail calls (never the identity, never a
 * caller's), so they can take the sensitivities as separate arguments:
 * a differentiated loop then makes no tuple and no env per iteration on
 * its way back. */
static void spreads(Ad *ad) {
  Reach r = {0};
  reach_add(&r, ad->root);
  NodeMap refused = {0}, called = {0};
  for (int k = 0; k < r.n; k++) {
    IrGraph *p = r.list[k];
    for (int i = 0; i < p->nnodes; i++) {
      IrNode *n = p->nodes[i];
      for (int j = 0; j < n->nin; j++) {
        IrGraph *h = ir_node_graph(n->in[j]);
        if (!h) continue;
        reach_add(&r, h);
        /* (the last node, as fill() needs for a tail call) */
        bool tail = j == 0 && n == p->ret && i == p->nnodes - 1 && is_tail_call(p, n) && n->nin - 1 == h->nparams;
        ir_map_put(tail ? &called : &refused, h, h);
      }
    }
    if (p->ret && ir_node_graph(p->ret)) {
      reach_add(&r, ir_node_graph(p->ret));
      ir_map_put(&refused, ir_node_graph(p->ret), p);
    }
    for (int d = 0; d < p->ndefaults; d++)
      if (ir_node_graph(p->defaults[d])) {
        reach_add(&r, ir_node_graph(p->defaults[d]));
        ir_map_put(&refused, ir_node_graph(p->defaults[d]), p);
      }
  }
  for (int k = 0; k < r.n; k++) {
    IrGraph *h = r.list[k];
    if (h == ad->root || (h->flags & IRG_FUNCTION) || !(h->flags & (IRG_LOOP | IRG_JOIN)) || h->ndefaults ||
        ir_map_get(&refused, h) || !ir_map_get(&called, h))
      continue;
    ir_map_put(&ad->spread, h, h);
  }
}

/* ---- activity ----
 *
 * Only a value that depends on what is differentiated needs a
 * sensitivity: the parameters asked for (all of them, and what the
 * function captured, for a transform that is not masked), and whatever
 * is computed from them.  A table read row by row in a loop, a constant,
 * an argument nobody asks about or a stop_gradient get none, so their
 * reads cost nothing backwards (without this, every rows[t] made a
 * sensitivity the size of the table).  A graph's parameter is active
 * when a call passes it an active argument, or when the graph escapes
 * as a value (its callers are unknown); a closure is active when it
 * captures an active value.  A fixpoint over the graphs the root
 * reaches. */

typedef struct Act {
  Ad *ad;
  Reach r;
  NodeMap escaped;         /* graphs used other than as a known callee */
  bool changed;
} Act;

static bool active_node(Act *a, IrNode *x) {
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    if (!h) return false;
    ir_free_vars(h);
    for (int i = 0; i < h->nfv; i++)
      if (ir_map_get(&a->ad->active, h->fv[i])) return true;
    return false;
  }
  return ir_map_get(&a->ad->active, x) != NULL;
}

static void set_active(Act *a, IrNode *x) {
  if (ir_map_get(&a->ad->active, x)) return;
  ir_map_put(&a->ad->active, x, x);
  a->changed = true;
}

static void all_params_active(Act *a, IrGraph *h) {
  for (int i = 0; i < h->nparams; i++) set_active(a, h->params[i]);
}

static void activity(Ad *ad) {
  Act a = {0};
  a.ad = ad;
  reach_add(&a.r, ad->root);
  /* the graphs reached, and those that escape */
  for (int k = 0; k < a.r.n; k++) {
    IrGraph *p = a.r.list[k];
    for (int i = 0; i < p->nnodes; i++) {
      IrNode *n = p->nodes[i];
      bool sw = ir_node_prim(n) == IR_P_SWITCH;
      for (int j = 0; j < n->nin; j++) {
        IrGraph *h = ir_node_graph(n->in[j]);
        if (!h) continue;
        reach_add(&a.r, h);
        /* a known callee, or an if's branch (no parameters) */
        if (!(j == 0 && n->kind == IR_APPLY) && !(sw && j >= 2)) ir_map_put(&a.escaped, h, h);
      }
    }
    if (p->ret && ir_node_graph(p->ret)) {
      reach_add(&a.r, ir_node_graph(p->ret));
      ir_map_put(&a.escaped, ir_node_graph(p->ret), p);
    }
    for (int d = 0; d < p->ndefaults; d++)
      if (ir_node_graph(p->defaults[d])) {
        reach_add(&a.r, ir_node_graph(p->defaults[d]));
        ir_map_put(&a.escaped, ir_node_graph(p->defaults[d]), p);
      }
  }
  /* the seeds */
  IrGraph *g = ad->root;
  bool all = ad->mask == ~(uint64_t)0;
  for (int i = 0; i < g->nparams; i++)
    if (all || i >= 64 || (ad->mask >> i & 1)) set_active(&a, g->params[i]);
  if (all) {
    ir_free_vars(g);
    for (int i = 0; i < g->nfv; i++) set_active(&a, g->fv[i]);
  }
  for (int k = 0; k < a.r.n; k++)
    if (a.r.list[k] != g && ir_map_get(&a.escaped, a.r.list[k])) all_params_active(&a, a.r.list[k]);
  do {
    a.changed = false;
    for (int k = 0; k < a.r.n; k++) {
      IrGraph *p = a.r.list[k];
      for (int i = 0; i < p->nnodes; i++) {
        IrNode *n = p->nodes[i];
        bool act = false;
        for (int j = 0; j < n->nin && !act; j++) act = active_node(&a, n->in[j]);
        if (act) set_active(&a, n);
        /* a known graph called: its parameters take the arguments' activity */
        IrGraph *h = n->kind == IR_APPLY ? ir_node_graph(n->in[0]) : NULL;
        if (h && h != g)
          for (int j = 1; j < n->nin && j - 1 < h->nparams; j++)
            if (active_node(&a, n->in[j])) set_active(&a, h->params[j - 1]);
        if (h && n->nin - 1 != h->nparams) all_params_active(&a, h);
      }
    }
  } while (a.changed);
}

IrGraph *ad_reverse(MistVM *vm, IrGraph *g) {
  AdRoots *r = ad_roots(vm, g);
  if (!r->jroot) r->jroot = reverse(vm, g, ~(uint64_t)0, false, true);
  return r->jroot;
}

/* The transform of g whose backpropagator gives only the sensitivities
 * of the parameters in mask (bit i: parameter i), None for the others;
 * with floats, made for calls whose arguments are all floats (each
 * parameter goes through float_arg, so the optimiser knows its kind).
 * The last one made of each kind is kept. */
IrGraph *ad_reverse_masked(MistVM *vm, IrGraph *g, uint64_t mask, bool floats) {
  if (!floats && mask == ~(uint64_t)0) return ad_reverse(vm, g);
  AdRoots *r = ad_roots(vm, g);
  if (r->jmroot[floats] && r->jmask[floats] == mask) return r->jmroot[floats];
  IrGraph *jg = reverse(vm, g, mask, floats, true);
  if (jg) {
    r->jmroot[floats] = jg;
    r->jmask[floats] = mask;
  }
  return jg;
}

/* The graphs of u that may become closures: named by a graph constant
 * anywhere but as a callee, or as a branch of a switch that is only
 * called (the interpreter runs those as blocks of the caller's frame). */
static void closure_graphs(IrUnit *u, NodeMap *out) {
  NodeMap escapes = {0};   /* switch nodes used as values */
  for (int g = 0; g < u->ngraphs; g++) {
    IrGraph *h = u->graphs[g];
    for (int i = 0; i < h->nnodes; i++)
      for (int j = 1; j < h->nodes[i]->nin; j++)
        if (ir_node_prim(h->nodes[i]->in[j]) == IR_P_SWITCH) ir_map_put(&escapes, h->nodes[i]->in[j], h);
    if (h->ret && ir_node_prim(h->ret) == IR_P_SWITCH) ir_map_put(&escapes, h->ret, h);
  }
  for (int g = 0; g < u->ngraphs; g++) {
    IrGraph *h = u->graphs[g];
    for (int i = 0; i < h->nnodes; i++) {
      IrNode *n = h->nodes[i];
      bool sw = ir_node_prim(n) == IR_P_SWITCH && !ir_map_get(&escapes, n);
      for (int j = 1; j < n->nin; j++)
        if (ir_node_graph(n->in[j]) && !(sw && j >= 2)) ir_map_put(out, ir_node_graph(n->in[j]), h);
    }
    if (h->ret && ir_node_graph(h->ret)) ir_map_put(out, ir_node_graph(h->ret), h);
    for (int k = 0; k < h->ndefaults; k++)
      if (ir_node_graph(h->defaults[k])) ir_map_put(out, ir_node_graph(h->defaults[k]), h);
  }
}

/* Does each transform that may become a closure capture exactly the free
 * variables of the graph it transforms (jorig), so that the primal closure
 * can be rebuilt and sensitivities re-keyed?  The optimiser may drop a
 * captured value the transform no longer needs, replace it by an equal
 * one (cse), or read what it captured through a value of the enclosing
 * function instead (c[0] folded to w). */
static bool captures_sources(Ad *ad) {
  NodeMap closures = {0};
  closure_graphs(ad->u, &closures);
  for (int w = 0; w < ad->nwork; w++) {
    IrGraph *h = ad->work[w], *jh = ir_map_get(&ad->jg, h);
    if (!ir_map_get(&closures, jh)) continue;
    ir_free_vars(h);
    for (int i = 0; i < h->nfv; i++) {
      int k = 0;
      while (k < jh->nfv && jh->jorig[k] != h->fv[i]) k++;
      if (k == jh->nfv) return false;
    }
    /* and nothing its source does not: a sensitivity for a value the
     * optimiser folded in (c[0] read as w), or for a product it now
     * shares with the enclosing function (x * 1.5 computed there too,
     * which stands for no source node at all), would be keyed by a node
     * the source's closure does not have, and lost */
    for (int k = 0; k < jh->nfv; k++) {
      if (!jh->jorig[k]) return false;
      int i = 0;
      while (i < h->nfv && h->fv[i] != jh->jorig[k]) i++;
      if (i == h->nfv) return false;
    }
  }
  return true;
}

/* The transform of g, simplified by ir_optimize when optimize is set (the
 * backward passes of a loop's header and body become one, tuples built
 * and taken apart at once go, ...): what reads best and runs fastest.
 * Should the simplified transform lose what a closure of it captures, the
 * transform is made again without. */
enum { AD_OPTIMIZE_MAX = 10000 };   /* nodes of a transform's unit */

static IrGraph *reverse(MistVM *vm, IrGraph *g, uint64_t mask, bool floats, bool optimize) {
  Ad ad = {0};
  ad.vm = vm;
  ad.root = g;
  ad.mask = mask;
  ad.kid = mask != ~(uint64_t)0 || floats;
  ad.u = ir_unit_new();
  if (!(ad.rules = ad_stdlib_module(vm, "ad_rules"))) return NULL;
  ir_free_vars(g);
  /* the free variables of g become parameters of an environment graph
   * that encloses the transform, in g->fv order */
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "J.%s.env", g->name->data);
  IrGraph *envg = ir_graph_new(ad.u, sb.data, NULL, 0, g->span);
  envg->module = g->module;
  envg->ret = knone(&ad);   /* never run: it only holds the free variables */
  ad.envg = envg;
  for (int i = 0; i < g->nfv; i++) ir_map_put(&ad.fwd, g->fv[i], ir_param(ad.u, envg, g->fv[i]->name, g->fv[i]->span));
  IrGraph *jg = ir_graph_new(ad.u, jname(g), envg, g->flags & ~IRG_MODULE, g->span);
  jg->display = g->display;
  jg->module = g->module;
  ir_map_put(&ad.jg, g, jg);
  ir_param(ad.u, jg, cont_name(g), g->span);
  for (int i = 0; i < g->nparams; i++) {
    IrNode *p = ir_param(ad.u, jg, g->params[i]->name, g->params[i]->span);
    if (floats) p = prim_in(&ad, jg, IR_P_FLOAT_ARG, g->params[i]->span, 1, p);
    ir_map_put(&ad.fwd, g->params[i], p);
  }
  spreads(&ad);
  activity(&ad);
  ad.work = lang_alloc(16 * sizeof *ad.work);
  ad.capwork = 16;
  ad.work[ad.nwork++] = g;
  for (int w = 0; w < ad.nwork && !ad.failed; w++) fill(&ad, ad.work[w]);
  if (ad.failed) return NULL;
  /* defaults: the forward values of each graph's defaults (a graph
   * given as a default is transformed too, so fill again until done) */
  for (int done = 0; done < ad.nwork && !ad.failed;) {
    int upto = ad.nwork;
    for (int w = done; w < upto; w++) {
      IrGraph *h = ad.work[w];
      if (!h->ndefaults) continue;
      IrGraph *jh = ir_map_get(&ad.jg, h);
      jh->ndefaults = h->ndefaults;
      jh->defaults = lang_alloc(h->ndefaults * sizeof *jh->defaults);
      for (int i = 0; i < h->ndefaults; i++) {
        IrNode *d = h->defaults[i];
        IrNode *m = d->kind == IR_CONST ? d : ir_map_get(&ad.fwd, d);
        if (m == d && d->kind == IR_CONST && ir_node_graph(d)) {
          m = ir_const_graph(ad.u, jgraph(&ad, ir_node_graph(d)), d->span);
        } else if (m == d && d->kind == IR_CONST && (v_is_obj(d->value, O_FUNC) || v_is_obj(d->value, O_BUILTIN))) {
          /* a function as a default value: its transform, made now */
          Value jv;
          if (!ad_J_value(vm, d->value, &jv)) return NULL;
          m = ir_const(ad.u, jv, d->span);
        }
        jh->defaults[i] = m ? m : d;
      }
    }
    done = upto;
    for (int w = upto; w < ad.nwork && !ad.failed; w++) fill(&ad, ad.work[w]);
  }
  if (ad.failed) return NULL;
  /* (the inliner copies no graph with a jsource; prune_backward works on
   * the others) */
  for (int w = 0; w < ad.nwork; w++) {
    IrGraph *jg = ir_map_get(&ad.jg, ad.work[w]);
    jg->jsource = ad.work[w];
    jg->flags |= IRG_ZERO_FRAME;
  }
  prune_backward(&ad);
  /* The optimiser's passes cost more than linear time in the size of
   * a unit, and a transform of a transform of library code (a hessian
   * inside a derivative taken three times) runs to 10^5 nodes: those are
   * left as the transform made them, which changes their speed, never
   * what they compute. */
  int size = 0;
  for (int k = 0; k < ad.u->ngraphs; k++) size += ad.u->graphs[k]->nnodes;
  if (optimize && size <= AD_OPTIMIZE_MAX) {
    if (!ir_optimize(vm, ad.u, jg)) return NULL;
    /* again, for what inlining exposed in the backward passes and their
     * copies: a sensitivity computed for a constant argument, say */
    prune_backward(&ad);
  }
  /* remember what each transform's free variables stand for, so the
   * primal closure can be rebuilt from a transformed one (api.c) */
  NodeMap inv = {0};
  for (size_t i = 0; i < ad.fwd.cap; i++)
    if (ad.fwd.keys[i]) ir_map_put(&inv, ad.fwd.vals[i], (void *)ad.fwd.keys[i]);
  for (int w = 0; w < ad.nwork; w++) {
    IrGraph *h = ad.work[w], *jh = ir_map_get(&ad.jg, h);
    ir_free_vars(h);
    ir_free_vars(jh);
    jh->jorig = lang_alloc((jh->nfv ? jh->nfv : 1) * sizeof *jh->jorig);
    for (int k = 0; k < jh->nfv; k++) {
      /* (h's own free variables first: several nodes may share a value) */
      jh->jorig[k] = NULL;
      for (int j = 0; j < h->nfv && !jh->jorig[k]; j++)
        if (ir_map_get(&ad.fwd, h->fv[j]) == jh->fv[k]) jh->jorig[k] = h->fv[j];
      if (!jh->jorig[k]) jh->jorig[k] = ir_map_get(&inv, jh->fv[k]);
    }
  }
  if (optimize && !captures_sources(&ad)) return reverse(vm, g, mask, floats, false);
#ifndef NDEBUG
  if (!ir_verify_unit(vm, ad.u)) return NULL;
#endif
  return jg;
}

/* ---- J of values ---- */

/* The closure of f's transform (computing only the sensitivities of the
 * parameters in mask; made for float arguments when floats is set) over
 * the J-values of what f captured. */
static bool J_closure(MistVM *vm, ObjFunc *f, uint64_t mask, bool floats, Value *out) {
  IrGraph *jg = ad_reverse_masked(vm, f->graph, mask, floats);
  if (!jg) return false;
  IrGraph *envg = jg->parent;
  ir_free_vars(jg);
  Value *env = lang_alloc((jg->nfv ? jg->nfv : 1) * sizeof *env);
  for (int k = 0; k < jg->nfv; k++) {
    int i = ad_env_param(envg, jg->fv[k]);
    if (i < 0 || i >= f->nenv)
      return lang_raise(vm, "TypeError", "internal error: free variable of J(%s)", f->graph->name->data);
    if (!ad_J_value(vm, f->env[i], &env[k])) return false;
  }
  ObjFunc *jf = ev_closure(vm, jg, env);
  lang_func_extra(jf)->primal = f;
  *out = v_obj(jf);
  return true;
}


/* jmask(f, mask, xs...): J(f) for grad(f, argnums), whose backpropagator
 * leaves out the sensitivities of the other parameters; made once per
 * mask, and apart for calls whose arguments are all floats (floats), for
 * which a transform that knows its parameters are floats is simpler: no
 * sensitivity of an addition needs its operands, say. */
bool ad_J_masked(MistVM *vm, Value v, int64_t mask, bool floats, Value *out) {
  if (!v_is_obj(v, O_FUNC)) return ad_J_value(vm, v, out);
  ObjFunc *f = AS_FUNC(v);
  /* f differentiated already (grad(grad(f))) takes a continuation first
   * for each time: the mask counts f's own parameters after them (and
   * the arguments are not all its parameters: no float transform) */
  int depth = 0;
  for (IrGraph *h = f->graph; h->jsource && (h->jorig || h->forig); h = h->jsource) depth++;
  /* the mask only spares work: where a bit would not fit (more than 64
   * parameters with the continuations), every sensitivity is computed
   * and grad returns those asked for */
  uint64_t bits = (uint64_t)mask;
  mask = depth >= 64 || (depth && bits >> (64 - depth)) ? -1 : (int64_t)(bits << depth);
  floats &= depth == 0;
  ObjFuncExtra *x = f->x;
  if (x && x->jmform[floats] && x->jmbits[floats] == (uint64_t)mask) {
    *out = v_obj(x->jmform[floats]);
    return true;
  }
  if (!J_closure(vm, f, (uint64_t)mask, floats, out)) return false;
  x = lang_func_extra(f);
  x->jmform[floats] = AS_FUNC(*out);
  x->jmbits[floats] = (uint64_t)mask;
  return true;
}


bool ad_J_value(MistVM *vm, Value v, Value *out) {
  if (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST) || v_is_obj(v, O_DICT)) return ad_map_functions(vm, v, ad_J_value, out);
  if (v_is_obj(v, O_FUNC)) {
    ObjFunc *f = AS_FUNC(v);
    /* a closure's captured values never change: its J is made once
     * (grad(f) asks for it on every call) */
    if (f->x && f->x->jform) {
      *out = v_obj(f->x->jform);
      return true;
    }
    if (!J_closure(vm, f, ~(uint64_t)0, false, out)) return false;
    lang_func_extra(f)->jform = AS_FUNC(*out);
    return true;
  }
  if (v_is_obj(v, O_BUILTIN) || v_is_obj(v, O_BOUND)) return ad_builtin_transform(vm, v, 'J', out);
  *out = v;
  return true;
}

/* ---- sensitivities re-keyed between a transform and its source ---- */

/* The value closure f holds for free variable i of graph g, where f is
 * a closure of g or of a transform (of a transform...) of g, each free
 * variable of a transform standing for one of its source's (jorig);
 * unbound if it cannot tell. */
static Value captured(ObjFunc *f, IrGraph *g, int i) {
  IrGraph *fg = f->graph;
  if (fg == g) return i < f->nenv ? f->env[i] : v_unbound();
  ir_free_vars(fg);
  for (int k = 0; k < fg->nfv && k < f->nenv; k++) {
    /* what fg's free variable k stands for, down the chain to g */
    IrGraph *x = fg;
    IrNode *z = fg->fv[k];
    if (x != g && x->jsource && x->forig) {
      /* a forward transform (the outermost one): its values stand for
       * its source's, its tangents for nothing here */
      if (x->ftan[k]) continue;
      z = x->forig[k];
      x = x->jsource;
    }
    while (x != g && z && x->jsource && x->jorig) {
      ir_free_vars(x);
      int m = 0;
      while (m < x->nfv && x->fv[m] != z) m++;
      z = m < x->nfv ? x->jorig[m] : NULL;
      x = x->jsource;
    }
    if (x == g && z == g->fv[i]) return f->env[k];
  }
  return v_unbound();
}

/* Re-key an env between J(f)'s free variables (the parameters of the
 * environment graph of f's graph's root transform) and f's own, in
 * either direction.  J is the identity on everything but functions, and
 * so is this on a non-function.  A captured function's own sensitivity,
 * an env itself, is re-keyed the same way, since J transformed it too. */
bool ad_rekey_env(MistVM *vm, Value f, Value e, bool to_f, Value *out) {
  *out = v_is_obj(f, O_FUNC) || v_is_obj(f, O_BUILTIN) ? v_none() : e;
  if (lang_holds_function(f) && !v_is_obj(f, O_FUNC) && !v_is_obj(f, O_BUILTIN) && !v_is_obj(f, O_BOUND)) {
    /* a container: J transformed the functions in it, so the
     * sensitivities of those items are re-keyed one by one */
    if (v_is_obj(f, O_DICT) && v_is_obj(e, O_DICT)) {
      ObjDict *fd = AS_DICT(f), *ed = AS_DICT(e), *r = lang_dict_new();
      for (size_t i = 0; i < ed->len; i++) {
        Value fi = v_none(), ri;
        lang_dict_get(fd, ed->entries[i].key, &fi);
        if (!ad_rekey_env(vm, fi, ed->entries[i].value, to_f, &ri)) return false;
        lang_dict_put(r, ed->entries[i].key, ri);
      }
      *out = v_obj(r);
      return true;
    }
    if ((v_is_obj(f, O_TUPLE) || v_is_obj(f, O_LIST)) && (v_is_obj(e, O_TUPLE) || v_is_obj(e, O_LIST))) {
      ObjSeq *fs = AS_SEQ(f), *es = AS_SEQ(e);
      ObjSeq *r = v_is_obj(e, O_TUPLE) ? lang_tuple_new(es->len) : lang_list_new(es->len);
      for (size_t i = 0; i < es->len; i++)
        if (!ad_rekey_env(vm, i < fs->len ? fs->items[i] : v_none(), es->items[i], to_f, &r->items[i])) return false;
      *out = v_obj(r);
      return true;
    }
    return true;
  }
  if (!v_is_obj(f, O_FUNC) || !v_is_obj(e, O_ENV)) return true;
  ObjFunc *fn = AS_FUNC(f);
  ObjEnv *d = AS_ENV(e);
  /* f is a closure of a transform (the root one, or one nested in
   * another transform), maybe of a transform of a transform: J(f)'s
   * sensitivity is keyed by the free variables of one graph x of that
   * chain, f's own by the nodes of x's source they stand for.  Which x
   * is the level of the derivative this runs in, and d's keys say it
   * (nodes are unique). */
  /* (an env is keyed alike in a forward world: the forward transform of
   * a J world keeps its keys, so f's forward transform counts as its
   * source) */
  IrGraph *top = fn->graph->forig && fn->graph->jsource ? fn->graph->jsource : fn->graph;
  for (IrGraph *x = top; d->len && x->jsource && x->jorig; x = x->jsource) {
    ir_free_vars(x);
    int k0 = 0;
    while (k0 < x->nfv && key_of(to_f ? x->fv[k0] : x->jorig[k0]) != d->items[0].key) k0++;
    if (k0 == x->nfv) continue;
    Value r = v_none();
    for (int k = 0; k < x->nfv; k++) {
      int64_t from = key_of(to_f ? x->fv[k] : x->jorig[k]);
      int64_t to = key_of(to_f ? x->jorig[k] : x->fv[k]);
      for (size_t j = 0; j < d->len; j++) {
        if (d->items[j].key != from) continue;
        Value v = d->items[j].value, c = captured(fn, x, k);
        if (v_is_obj(v, O_ENV) && v_is_obj(c, O_FUNC) && !ad_rekey_env(vm, c, v, to_f, &v)) return false;
        Value args[3] = {r, v_int(to), v};
        if (!ev_prim_fn(IR_P_ENV_SET)(vm, 3, args, NULL, &r)) return false;
      }
    }
    *out = r;
    return true;
  }
  /* f is a closure of an ordinary graph (or of a forward transform, by
   * its source): J(f)'s sensitivity is keyed by the parameters of the
   * environment graph of its root transform */
  IrGraph *g = fn->graph->jsource ? fn->graph->jsource : fn->graph;
  AdRoots *roots = ad_roots_of(vm, g);
  if (!roots || !roots->jroot || !roots->jroot->parent) return true;
  IrGraph *envg = roots->jroot->parent;
  ir_free_vars(g);
  Value r = v_none();
  for (int i = 0; i < envg->nparams && i < g->nfv; i++) {
    int64_t from = key_of(to_f ? envg->params[i] : g->fv[i]);
    int64_t to = key_of(to_f ? g->fv[i] : envg->params[i]);
    for (size_t j = 0; j < d->len; j++) {
      if (d->items[j].key != from) continue;
      Value v = d->items[j].value, c = captured(AS_FUNC(f), g, i);
      if (v_is_obj(v, O_ENV) && v_is_obj(c, O_FUNC) && !ad_rekey_env(vm, c, v, to_f, &v)) return false;
      Value args[3] = {r, v_int(to), v};
      if (!ev_prim_fn(IR_P_ENV_SET)(vm, 3, args, NULL, &r)) return false;
    }
  }
  *out = r;
  return true;
}
