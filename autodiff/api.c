/* api.c: the differentiation builtins of docs/reference.md section 7,
 * and ad_register, which installs them and ties the layers of autodiff/
 * together (vm->ad for the interpreter, AdState's transforms for the
 * rules of builtins).
 *
 * grad(f) and value_and_grad(f) return ordinary Mist functions: a small
 * graph, built here with the IR builder, that calls J(f) with the
 * identity continuation, seeds the output's sensitivity with 1 and
 * calls the backpropagator.  Because the result is a graph like any
 * other, grad(grad(f)) is the same transformation applied to it, and
 * show_ir(grad(f)) prints it.  vjp(f, *xs) runs the forward pass at once
 * and returns the output with a pullback function.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"

/* ---- values and graphs ---- */

static bool b_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_value_and_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_vjp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_jvp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_jacobian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_hessian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* The primal value behind a transformed one: for a closure of a
 * transform, the closure of the graph it transforms over the primal
 * values of what it captured. */
static Value primal_of(MistVM *vm, Value v) {
  if (!v_is_obj(v, O_FUNC)) return v;
  ObjFunc *jf = AS_FUNC(v);
  if (jf->x && jf->x->primal) return v_obj(jf->x->primal);
  IrGraph *jg = jf->graph, *h = jg->jsource;
  if (!h || !jg->jorig) return v;
  ir_free_vars(h);
  Value *env = lang_alloc((h->nfv ? h->nfv : 1) * sizeof *env);
  for (int i = 0; i < h->nfv; i++) {
    env[i] = v_unbound();
    for (int k = 0; k < jg->nfv && k < jf->nenv; k++)
      if (jg->jorig[k] == h->fv[i]) env[i] = primal_of(vm, jf->env[k]);
  }
  ObjFunc *f = ev_closure(vm, h, env);
  lang_func_extra(jf)->primal = f;
  return v_obj(f);
}

/* _env_first(e): the sensitivity in an env of one entry (None for None):
 * grad(f)'s closure captures f alone, so its sensitivity is f's */
static bool b_env_first(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  *out = v_none();
  if (!v_is_obj(argv[0], O_ENV) || AS_ENV(argv[0])->len == 0) return true;
  if (AS_ENV(argv[0])->len > 1) return lang_raise(vm, "TypeError", "internal error: _env_first of an env of %zu entries", AS_ENV(argv[0])->len);
  *out = AS_ENV(argv[0])->items[0].value;
  return true;
}

/* _env_like(e, v): v under e's one key, the transpose of _env_first */
static bool b_env_like(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  *out = v_none();
  if (!v_is_obj(argv[0], O_ENV) || AS_ENV(argv[0])->len == 0 || argv[1].tag == V_NONE) return true;
  Value args[3] = {v_none(), v_int(AS_ENV(argv[0])->items[0].key), argv[1]};
  return ev_prim_fn(IR_P_ENV_SET)(vm, 3, args, NULL, out);
}

/* _tree_dot(a, b): the sum over the leaves of a * b (a cotangent
 * against a tangent, trees of floats and tensors alike; None is zero),
 * in order from 0.0; _tree_scale(t, d): each leaf of t times d (None
 * for a zero d).  What
 * jvp by vjps (stdlib/ad.ms) computes per output scalar, in C for speed
 * under a further transform; their rules are in ad_rules.ms. */
static bool tree_dot(MistVM *vm, Value a, Value b, Value *out) {
  if (a.tag == V_NONE || b.tag == V_NONE) {
    *out = v_float(0.0);
    return true;
  }
  if (v_is_obj(a, O_TUPLE) || v_is_obj(a, O_LIST)) {
    ObjSeq *s = AS_SEQ(a);
    Value sum = v_float(0.0), x, bi;
    for (size_t i = 0; i < s->len; i++)
      if (!lang_getitem(vm, b, v_int((int64_t)i), &bi) || !tree_dot(vm, s->items[i], bi, &x) ||
          !lang_arith(vm, OP_ADD, sum, x, &sum))
        return false;
    *out = sum;
    return true;
  }
  if (v_is_tensor(a) || v_is_tensor(b)) {
    Value p, sum;
    return lang_arith(vm, OP_MUL, a, b, &p) && lang_dict_get(vm->builtins, lang_str("sum"), &sum) &&
           vm->call(vm, sum, 1, &p, NULL, out);
  }
  return lang_arith(vm, OP_MUL, a, b, out);
}

static bool b_tree_dot(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return tree_dot(vm, argv[0], argv[1], out);
}

static bool tree_scale(MistVM *vm, Value t, Value d, Value *out) {
  if (t.tag == V_NONE || d.tag == V_NONE) {
    *out = v_none();
    return true;
  }
  if (v_is_obj(t, O_TUPLE) || v_is_obj(t, O_LIST)) {
    ObjSeq *s = AS_SEQ(t), *r = v_is_obj(t, O_TUPLE) ? lang_tuple_new(s->len) : lang_list_new(s->len);
    for (size_t i = 0; i < s->len; i++)
      if (!tree_scale(vm, s->items[i], d, &r->items[i])) return false;
    *out = v_obj(r);
    return true;
  }
  return lang_arith(vm, OP_MUL, t, d, out);
}

static bool b_tree_scale(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return tree_scale(vm, argv[0], argv[1], out);
}

static bool p_J_hook(MistVM *vm, Value v, Value *out) { return ad_J_value(vm, v, out); }

/* ---- grad and value_and_grad ---- */

enum { W_GRAD, W_VALUE_AND_GRAD };

static bool parse_argnums(MistVM *vm, const char *who, Value a, int nparams, int **nums, int *n, bool *tuple) {
  *tuple = false;
  if (a.tag == V_INT) {
    *nums = lang_alloc_atomic(sizeof **nums);
    (*nums)[0] = (int)a.i;
    *n = 1;
  } else if (v_is_obj(a, O_TUPLE)) {
    ObjSeq *t = AS_SEQ(a);
    *tuple = true;
    *n = (int)t->len;
    *nums = lang_alloc_atomic((t->len ? t->len : 1) * sizeof **nums);
    for (size_t i = 0; i < t->len; i++) {
      if (t->items[i].tag != V_INT) return lang_raise(vm, "TypeError", "%s: argnums must be an int or a tuple of ints", who);
      (*nums)[i] = (int)t->items[i].i;
    }
  } else {
    return lang_raise(vm, "TypeError", "%s: argnums must be an int or a tuple of ints", who);
  }
  for (int i = 0; i < *n; i++) {
    int given = (*nums)[i];
    if ((*nums)[i] < 0) (*nums)[i] += nparams;
    if ((*nums)[i] < 0 || (*nums)[i] >= nparams)
      return lang_raise(vm, "ValueError", "%s: argnums %d is out of range for a function of %d parameter%s", who,
                        given, nparams, nparams == 1 ? "" : "s");
  }
  return true;
}

/* The parameters of f as a function value: names and defaults. */
static int func_params(Value f, IrGraph **g) {
  if (v_is_obj(f, O_FUNC)) {
    *g = AS_FUNC(f)->graph;
    return (*g)->nparams;
  }
  *g = NULL;
  return 1;
}

static bool make_grad(MistVM *vm, const char *who, int kind, int argc, const Value *argv, const KwArgs *kw,
                      Value *out);

/* grad(max), value_and_grad(min), jacobian(max), hessian(min): max and
 * min take any number of items, so their derivative is made for the
 * count of arguments each call gives, by `make` (grad's, jacobian's)
 * from the graph of max for that count (ad_builtin_function, cached, and
 * with it its derivative).  Such a derivative is a builtin:
 * differentiating it again is an error that says so. */
typedef struct PerCount {
  Value f, argnums;
  BuiltinFn make;
} PerCount;

static bool per_count_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  PerCount *p = vm->callee->data;
  Value a[2], g;
  if (!ad_builtin_function(vm, p->f, argc, &a[0])) return false;
  a[1] = p->argnums;
  return p->make(vm, 2, a, NULL, &g) && vm->call(vm, g, argc, argv, kw, out);
}

static bool takes_items(Value f) {
  return v_is_obj(f, O_BUILTIN) && (AS_BUILTIN(f)->op == IR_B_MAX || AS_BUILTIN(f)->op == IR_B_MIN);
}

/* a builtin itself (not one in a transformed world) */
static bool is_builtin_value(Value f) { return v_is_obj(f, O_BUILTIN) && !ad_is_shaped_builtin(f); }

/* make's derivative of max or min (per_count_fn), named who(max) */
static Value per_count(const char *who, Value f, Value argnums, BuiltinFn make) {
  PerCount *p = lang_alloc(sizeof *p);
  p->f = f;
  p->argnums = argnums;
  p->make = make;
  ObjBuiltin *b = lang_builtin_new(lang_str_fmt("%s(%s)", who, AS_BUILTIN(f)->name)->data, per_count_fn, -1, -1);
  b->data = p;
  return v_obj(b);
}

/* Build the graph of grad(f) / value_and_grad(f). */
static bool make_grad(MistVM *vm, const char *who, int kind, int argc, const Value *argv, const KwArgs *kw,
                      Value *out) {
  if (argc < 1 || argc > 2) return lang_raise(vm, "TypeError", "%s() takes 1 or 2 arguments (%d given)", who, argc);
  Value f = argv[0], argnums = argc > 1 ? argv[1] : v_int(0);
  for (int i = 0; kw && i < kw->n; i++) {
    if (strcmp(kw->names[i]->data, "argnums") == 0) argnums = kw->values[i];
    else return lang_raise(vm, "TypeError", "%s() got an unexpected keyword argument '%s'", who, kw->names[i]->data);
  }
  if (!(v_is_obj(f, O_FUNC) || v_is_obj(f, O_BUILTIN) || v_is_obj(f, O_BOUND)))
    return lang_raise(vm, "TypeError", "%s: expected a function, got %s", who, lang_type_name(f));
  if (takes_items(f)) {
    int *nums, nn;
    bool tuple;
    if (!parse_argnums(vm, who, argnums, INT32_MAX, &nums, &nn, &tuple)) return false;
    *out = per_count(who, f, argnums, kind == W_GRAD ? b_grad : b_value_and_grad);
    return true;
  }
  IrGraph *fg;
  int np = func_params(f, &fg);
  if (!fg) {
    /* a builtin: as many parameters as argnums reaches */
    if (argnums.tag == V_INT && argnums.i >= np) np = (int)argnums.i + 1;
    if (v_is_obj(argnums, O_TUPLE))
      for (size_t i = 0; i < AS_SEQ(argnums)->len; i++) {
        Value a = AS_SEQ(argnums)->items[i];
        if (a.tag == V_INT && a.i >= np) np = (int)a.i + 1;
      }
    if (v_is_obj(f, O_BUILTIN) && !ad_is_shaped_builtin(f)) {
      /* grad(sin) is the derivative of a graph like any other (builtins.c),
       * differentiated again to any order by the rules of the call inside */
      if (!ad_builtin_function(vm, f, np, &f)) return false;
      np = func_params(f, &fg);
    }
  }
  int *nums = NULL, nn = 0;
  bool tuple;
  if (!parse_argnums(vm, who, argnums, np, &nums, &nn, &tuple)) return false;

  /* the graph depends on f's graph, argnums and f's default values: made
   * once for them (a derivative differentiated again transforms it once) */
  StrBuf key;
  sb_init(&key);
  sb_printf(&key, "%s/", who);
  if (!lang_repr(vm, argnums, &key)) return false;
  int nd = fg ? lang_func_ndefaults(AS_FUNC(f)) : 0;
  ObjSeq *defaults = lang_tuple_new(nd);
  for (int i = 0; i < nd; i++) {
    Value d = AS_FUNC(f)->x->defaults[i];
    defaults->items[i] = d;
    sb_printf(&key, "/%d:%llx", (int)d.tag, (unsigned long long)d.i);
  }
  IrGraph *cached = ad_cache_get(vm, fg, key.data);
  if (cached) {
    *out = v_obj(ev_closure(vm, cached, &f));
    return true;
  }

  IrUnit *u = ir_unit_new();
  /* the graph is where f is; its nodes are nowhere, so that an error in
   * them (an int argument, a tuple output) is placed at the call */
  Span gsp = fg ? fg->span : span_none(), sp = span_none();
  StrBuf name;
  sb_init(&name);
  sb_printf(&name, "%s.%s", who, fg ? fg->name->data : AS_BUILTIN(f)->name);
  /* f is a free variable of the result (a parameter of an enclosing
   * graph that is never run), so that differentiating grad(f) itself
   * sends sensitivity back to what f captured */
  IrGraph *envg = ir_graph_new(u, "grad.env", NULL, 0, sp);
  IrNode *fparam = ir_param(u, envg, lang_str("f"), sp);
  envg->ret = ir_const(u, v_none(), sp);
  IrGraph *g = ir_graph_new(u, name.data, envg, IRG_FUNCTION | IRG_ZERO_FRAME | IRG_PASS, gsp);
  g->module = fg ? fg->module : NULL;
  StrBuf disp;
  sb_init(&disp);
  sb_printf(&disp, "%s(%s)", who, fg ? fg->display->data : AS_BUILTIN(f)->name);
  g->display = lang_str(disp.data);
  IrNode **x = lang_alloc((np + 1) * sizeof *x);
  for (int i = 0; i < np; i++) {
    ObjStr *pn = fg ? fg->params[i]->name : lang_str("x");
    x[i] = ir_param(u, g, pn, sp);
  }
  if (fg && lang_func_ndefaults(AS_FUNC(f))) {
    ObjFuncExtra *fx = AS_FUNC(f)->x;
    g->ndefaults = fx->ndefaults;
    g->defaults = lang_alloc(fx->ndefaults * sizeof *g->defaults);
    for (int i = 0; i < fx->ndefaults; i++) g->defaults[i] = ir_const(u, fx->defaults[i], sp);
  }
  IrNode **checked = lang_alloc((np + 1) * sizeof *checked);
  memcpy(checked, x, np * sizeof *x);
  for (int i = 0; i < nn; i++) {
    int a = nums[i];
    ObjStr *pn = x[a]->name ? x[a]->name : lang_str("x");
    checked[a] = ir_prim_apply(u, g, IR_P_CHECK_DIFF, sp, 2, x[a], ir_const(u, v_obj(pn), sp));
  }
  /* J(f) computing only the sensitivities of the argnums: a mask of 64
   * bits, which only spares work, so an argnum past 63 makes it compute
   * them all (grad still returns those asked for) */
  uint64_t mask = 0;
  for (int i = 0; i < nn; i++) mask |= nums[i] < 64 ? (uint64_t)1 << nums[i] : ~(uint64_t)0;
  /* (given the arguments too: for floats, the transform made for floats) */
  IrNode **jm = lang_alloc((np + 2) * sizeof *jm);
  jm[0] = fparam;
  jm[1] = ir_const(u, v_int((int64_t)mask), sp);
  memcpy(jm + 2, checked, np * sizeof *checked);
  IrNode *fj = ir_prim_applyv(u, g, IR_P_JMASK, sp, np + 2, jm);
  IrNode **in = lang_alloc((np + 2) * sizeof *in);
  in[0] = fj;
  in[1] = ir_const(u, ad_state(vm)->kid, sp);
  /* arguments enter the transformed world: J(x) is x but for functions */
  for (int i = 0; i < np; i++) in[2 + i] = ir_prim_apply(u, g, IR_P_J, sp, 1, checked[i]);
  IrNode *t = ir_apply(u, g, np + 2, in, sp);
  IrNode *y = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(0), sp));
  y->name = lang_str("y");
  IrNode *B = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(1), sp));
  B->name = lang_str("backprop");
  IrNode *s = ir_prim_apply(u, g, IR_P_SEED, sp, 2, y, ir_const(u, v_obj(lang_str(who)), sp));
  IrNode *r = ir_apply(u, g, 2, (IrNode *[]){B, s}, sp);
  IrNode **grads = lang_alloc((nn ? nn : 1) * sizeof *grads);
  for (int i = 0; i < nn; i++) {
    int a = nums[i];
    IrNode *d = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, r, ir_const(u, v_int(a + 1), sp));
    IrNode *z = ir_prim_apply(u, g, IR_P_ZEROS_LIKE, sp, 1, checked[a]);
    grads[i] = ir_prim_apply(u, g, IR_P_GADD, sp, 2, z, d);
    StrBuf dn;
    sb_init(&dn);
    sb_printf(&dn, "d%s", x[a]->name ? x[a]->name->data : "x");
    grads[i]->name = lang_str(dn.data);
  }
  IrNode *res = tuple ? ir_prim_applyv(u, g, IR_P_MAKE_TUPLE, sp, nn, grads) : grads[0];
  if (kind == W_VALUE_AND_GRAD) res = ir_prim_apply(u, g, IR_P_MAKE_TUPLE, sp, 2, y, res);
  g->ret = res;
#ifndef NDEBUG
  if (!ir_verify_graph(vm, g)) return false;
#endif
  ad_cache_put(vm, fg, key.data, g, v_none(), v_obj(defaults), v_none());
  *out = v_obj(ev_closure(vm, g, &f));
  return true;
}

static bool b_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return make_grad(vm, "grad", W_GRAD, argc, argv, kw, out);
}

static bool b_value_and_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return make_grad(vm, "value_and_grad", W_VALUE_AND_GRAD, argc, argv, kw, out);
}

/* The graph of vjp with f and n arguments, as grad's: vjp.f(x1..xn) =
 * (y, pullback) with t = J(f)(kid, J(x1)..J(xn)), y = t[0] and
 * pullback(ct) = (zeros_like(x_i) + t[1](ct)[i + 1], ...).  f is a free
 * variable, so that differentiating vjp.f sends sensitivity back to
 * what f captured (a vjp inside a function being differentiated). */
bool ad_make_vjp(MistVM *vm, Value f, int n, Value *out) {
  IrGraph *fg = v_is_obj(f, O_FUNC) ? AS_FUNC(f)->graph : NULL;
  /* made once per graph of f (or builtin) and n */
  StrBuf key;
  sb_init(&key);
  if (fg) sb_printf(&key, "vjp/%d", n);
  else sb_printf(&key, "vjp/%p/%d", (void *)f.o, n);
  IrGraph *cached = ad_cache_get(vm, fg, key.data);
  if (cached) {
    *out = v_obj(ev_closure(vm, cached, &f));
    return true;
  }
  IrUnit *u = ir_unit_new();
  /* the graph is where f is; its nodes are nowhere, so that an error in
   * them (an int argument, a tuple output) is placed at the call */
  Span gsp = fg ? fg->span : span_none(), sp = span_none();
  IrGraph *envg = ir_graph_new(u, "vjp.env", NULL, 0, sp);
  IrNode *fparam = ir_param(u, envg, lang_str("f"), sp);
  envg->ret = ir_const(u, v_none(), sp);
  StrBuf name;
  sb_init(&name);
  sb_printf(&name, "vjp.%s", fg ? fg->name->data : v_is_obj(f, O_BUILTIN) ? AS_BUILTIN(f)->name : "f");
  IrGraph *g = ir_graph_new(u, name.data, envg, IRG_FUNCTION, gsp);
  g->module = fg ? fg->module : NULL;
  g->display = lang_str("vjp");
  IrNode **x = lang_alloc((n + 1) * sizeof *x);
  IrNode **in = lang_alloc((n + 2) * sizeof *in);
  in[0] = ir_prim_apply(u, g, IR_P_J, sp, 1, fparam);
  in[1] = ir_const(u, ad_state(vm)->kid, sp);
  for (int i = 0; i < n; i++) {
    ObjStr *pn = fg && i < fg->nparams && fg->params[i]->name ? fg->params[i]->name : lang_str_fmt("x%d", i + 1);
    x[i] = ir_param(u, g, pn, sp);
    in[2 + i] = ir_prim_apply(u, g, IR_P_J, sp, 1, x[i]);
  }
  IrNode *t = ir_apply(u, g, n + 2, in, sp);
  IrNode *y = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(0), sp));
  y->name = lang_str("y");
  IrNode *B = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(1), sp));
  B->name = lang_str("backprop");
  IrGraph *pg = ir_graph_new(u, "pullback", g, IRG_FUNCTION, sp);
  IrNode *ct = ir_param(u, pg, lang_str("ct"), sp);
  IrNode *r = ir_apply(u, pg, 2, (IrNode *[]){B, ct}, sp);
  IrNode **ds = lang_alloc((n ? n : 1) * sizeof *ds);
  for (int i = 0; i < n; i++) {
    IrNode *d = ir_prim_apply(u, pg, IR_P_GETITEM, sp, 2, r, ir_const(u, v_int(i + 1), sp));
    IrNode *z = ir_prim_apply(u, pg, IR_P_ZEROS_LIKE, sp, 1, x[i]);
    ds[i] = ir_prim_apply(u, pg, IR_P_GADD, sp, 2, z, d);
  }
  pg->ret = ir_prim_applyv(u, pg, IR_P_MAKE_TUPLE, sp, n, ds);
  g->ret = ir_prim_apply(u, g, IR_P_MAKE_TUPLE, sp, 2, y, ir_const_graph(u, pg, sp));
#ifndef NDEBUG
  if (!ir_verify_graph(vm, g)) return false;
#endif
  ad_cache_put(vm, fg, key.data, g, fg ? v_none() : f, v_none(), v_none());
  *out = v_obj(ev_closure(vm, g, &f));
  return true;
}

/* The ordinary function behind f, a value in a program transformed
 * along chain (written there, innermost transform first: a closure of
 * a transform of a transform... of its graph).  Only its graph's
 * parameters and defaults matter to the callers: its captured values
 * are None. */
static bool behind(MistVM *vm, Value f, char *chain, Value *out) {
  char rev[16];
  int n = 0;
  if (!v_is_obj(f, O_FUNC)) {
    if (ad_is_shaped_builtin(f)) return lang_raise(vm, "TypeError", "cannot differentiate a derivative of this builtin here");
    chain[0] = 0;
    *out = f;
    return true;
  }
  IrGraph *h = AS_FUNC(f)->graph;
  while (h->jsource && (h->jorig || h->forig)) {
    if (n == (int)sizeof rev - 1) return lang_raise(vm, "TypeError", "cannot differentiate %s so many times", h->display->data);
    rev[n++] = h->forig ? 'F' : 'J';
    h = h->jsource;
  }
  for (int i = 0; i < n; i++) chain[i] = rev[n - 1 - i];
  chain[n] = 0;
  ir_free_vars(h);
  Value *none = lang_alloc((h->nfv + 1) * sizeof *none);
  for (int i = 0; i < h->nfv; i++) none[i] = v_none();
  ObjFunc *pf = ev_closure(vm, h, none);
  lang_func_share_defaults(pf, AS_FUNC(f));
  *out = v_obj(pf);
  return true;
}

/* _grad_closure(f, argnums, kind): the value of grad(f) (kind 0) or
 * value_and_grad(f) (kind 1) in a program transformed as many times as
 * f is.  The rules J_grad and J_value_and_grad (ad_rules.ms) use it, so
 * that a grad call is differentiated again like any code. */
static bool b_grad_closure(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argv[2].tag != V_INT) return lang_raise(vm, "TypeError", "_grad_closure takes a function, argnums and a kind");
  char chain[16];
  Value a[2] = {v_none(), argv[1]}, g;
  if (!behind(vm, argv[0], chain, &a[0])) return false;
  if (!make_grad(vm, argv[2].i ? "value_and_grad" : "grad", argv[2].i ? W_VALUE_AND_GRAD : W_GRAD, 2, a, NULL, &g))
    return false;
  return ad_close_transformed(vm, AS_FUNC(g)->graph, chain, argv[0], v_none(), out);
}

/* _vjp_closure(f, n): vjp's graph for f and n arguments (ad_make_vjp) in
 * a program transformed as many times as f is, for the rules J_vjp and
 * F_vjp */
static bool b_vjp_closure(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argv[1].tag != V_INT || argv[1].i < 0) return lang_raise(vm, "TypeError", "_vjp_closure takes a function and a count");
  char chain[16];
  Value g, pf;
  if (!behind(vm, argv[0], chain, &pf) || !ad_make_vjp(vm, pf, (int)argv[1].i, &g)) return false;
  return ad_close_transformed(vm, AS_FUNC(g)->graph, chain, argv[0], v_none(), out);
}

/* _n_ary(g, f, argnums, who): a function with f's parameters (names and
 * defaults) that calls g with them as one tuple, argnums checked against
 * them as grad checks its own: jacobian's result (stdlib/ad.ms), since
 * Mist has no *args.  g is the graph's one free variable, so the result
 * is differentiated like any closure, in a world transformed as often as
 * g is (its rules J__n_ary and F__n_ary call this again). */
static bool b_n_ary(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 4 || !v_is_obj(argv[3], O_STR)) return lang_raise(vm, "TypeError", "_n_ary takes g, f, argnums and a name");
  const char *who = AS_STR(argv[3])->data;
  char chain[16], fchain[16];
  Value pg, pf;
  if (!behind(vm, argv[0], chain, &pg) || !behind(vm, argv[1], fchain, &pf)) return false;
  if (!(v_is_obj(pf, O_FUNC) || v_is_obj(pf, O_BUILTIN) || v_is_obj(pf, O_BOUND)))
    return lang_raise(vm, "TypeError", "%s: expected a function, got %s", who, lang_type_name(pf));
  IrGraph *fg;
  int np = func_params(pf, &fg);
  if (!fg) {
    /* a builtin: as many parameters as argnums reaches */
    Value a = argv[2];
    if (a.tag == V_INT && a.i >= np) np = (int)a.i + 1;
    for (size_t i = 0; v_is_obj(a, O_TUPLE) && i < AS_SEQ(a)->len; i++)
      if (AS_SEQ(a)->items[i].tag == V_INT && AS_SEQ(a)->items[i].i >= np) np = (int)AS_SEQ(a)->items[i].i + 1;
    if (!ad_builtin_function(vm, pf, np, &pf)) return false;
    np = func_params(pf, &fg);
  }
  int *nums, nn;
  bool tuple;
  if (!parse_argnums(vm, who, argv[2], np, &nums, &nn, &tuple)) return false;
  StrBuf key;
  sb_init(&key);
  sb_printf(&key, "%s/", who);
  if (!lang_repr(vm, argv[2], &key)) return false;
  int nd0 = lang_func_ndefaults(AS_FUNC(pf));
  ObjSeq *defs = lang_tuple_new(nd0);
  for (int i = 0; i < nd0; i++) {
    defs->items[i] = lang_func_defaults(AS_FUNC(pf))[i];
    sb_printf(&key, "/%d:%llx", (int)defs->items[i].tag, (unsigned long long)defs->items[i].i);
  }
  IrGraph *h = ad_cache_get(vm, fg, key.data);
  if (h) return ad_close_transformed(vm, h, chain, argv[0], v_none(), out);
  IrUnit *u = ir_unit_new();
  Span sp = span_none();
  IrGraph *envg = ir_graph_new(u, "n_ary.env", NULL, 0, sp);
  IrNode *gp = ir_param(u, envg, lang_str("g"), sp);
  envg->ret = ir_const(u, v_none(), sp);
  h = ir_graph_new(u, lang_str_fmt("%s.%s", who, fg->name->data)->data, envg, IRG_FUNCTION, fg->span);
  h->display = lang_str_fmt("%s(%s)", who, fg->display->data);
  h->module = fg->module;
  IrNode **ps = lang_alloc((np + 1) * sizeof *ps);
  for (int i = 0; i < np; i++) ps[i] = ir_param(u, h, fg->params[i]->name, sp);
  int nd = lang_func_ndefaults(AS_FUNC(pf));
  if (nd) {
    h->ndefaults = nd;
    h->defaults = lang_alloc(nd * sizeof *h->defaults);
    for (int i = 0; i < nd; i++) h->defaults[i] = ir_const(u, lang_func_defaults(AS_FUNC(pf))[i], sp);
  }
  /* the arguments differentiated are checked as grad checks them, so
   * that an int one is an error naming it (jacobian(f)(1) is not 0.0) */
  for (int i = 0; i < nn; i++)
    ps[nums[i]] = ir_prim_apply(u, h, IR_P_CHECK_DIFF, sp, 2, ps[nums[i]], ir_const(u, v_obj(fg->params[nums[i]]->name), sp));
  IrNode *args = ir_prim_applyv(u, h, IR_P_MAKE_TUPLE, sp, np, ps);
  h->ret = ir_apply(u, h, 2, (IrNode *[]){gp, args}, sp);
#ifndef NDEBUG
  if (!ir_verify_unit(vm, u)) return false;
#endif
  ad_cache_put(vm, fg, key.data, h, v_none(), v_obj(defs), v_none());
  return ad_close_transformed(vm, h, chain, argv[0], v_none(), out);
}

/* vjp(f, *xs) -> (y, pullback); pullback(ct) -> tuple of cotangents. */
static bool b_vjp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 1) return lang_raise(vm, "TypeError", "vjp() takes a function and its arguments");
  if (kw && kw->n) return lang_raise(vm, "TypeError", "vjp() takes no keyword arguments");
  Value g, r, f = argv[0];
  /* a builtin as the graph of a call of it with as many arguments as
   * given (any number for max and min; a wrong count is the builtin's
   * own error, not that of its rule's signature) */
  if (is_builtin_value(f) && !ad_builtin_call(vm, f, argc - 1, &f)) return false;
  if (!ad_make_vjp(vm, f, argc - 1, &g) || !vm->call(vm, g, argc - 1, argv + 1, NULL, &r)) return false;
  /* a function returned is handed back as the ordinary function */
  *out = lang_tuple_of(2, primal_of(vm, AS_SEQ(r)->items[0]), AS_SEQ(r)->items[1]);
  return true;
}

/* jvp(f, xs, ts) -> (f(*xs), tangent of the output along ts) */
static bool b_jvp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 3 || (kw && kw->n)) return lang_raise(vm, "TypeError", "jvp() takes a function, a tuple of arguments and a tuple of tangents");
  Value xs = argv[1], ts = argv[2];
  if (!(v_is_obj(xs, O_TUPLE) || v_is_obj(xs, O_LIST)) || !(v_is_obj(ts, O_TUPLE) || v_is_obj(ts, O_LIST)))
    return lang_raise(vm, "TypeError", "jvp: the arguments and their tangents must be given as tuples");
  ObjSeq *x = AS_SEQ(xs), *t = AS_SEQ(ts);
  if (x->len != t->len)
    return lang_raise(vm, "ValueError", "jvp: %zu arguments but %zu tangents", x->len, t->len);
  Value ff, f = argv[0];
  if (is_builtin_value(f) && !ad_builtin_call(vm, f, (int)x->len, &f)) return false;
  if (!ad_F_value(vm, f, &ff)) return false;
  Value *args = lang_alloc((x->len + 1) * sizeof *args);
  ObjSeq *tt = lang_tuple_new(t->len);
  memcpy(tt->items, t->items, t->len * sizeof(Value));
  args[0] = v_obj(tt);
  memcpy(args + 1, x->items, x->len * sizeof(Value));
  Value r;
  if (!vm->call(vm, ff, (int)x->len + 1, args, NULL, &r)) return false;
  Value y = AS_SEQ(r)->items[0], ty = AS_SEQ(r)->items[1];
  if (ty.tag == V_NONE && !ev_prim_fn(IR_P_ZEROS_LIKE)(vm, 1, &y, NULL, &ty)) return false;
  /* a function returned is handed back as the ordinary function */
  *out = lang_tuple_of(2, ad_F_primal(vm, y), ty);
  return true;
}

static bool p_F_hook(MistVM *vm, Value v, Value *out) { return ad_F_value(vm, v, out); }

/* jacobian and hessian are written in Mist (stdlib/ad.ms), loaded on
 * first use. */
static bool call_ad_module(MistVM *vm, const char *name, int argc, const Value *argv, const KwArgs *kw,
                           Value *out) {
  ObjModule *mod = ad_stdlib_module(vm, "ad");
  if (!mod) return false;
  Value f = ad_module_global(vm, mod, "", name);
  if (f.tag == V_UNBOUND) return lang_raise(vm, "NameError", "%s is missing from the standard library", name);
  return vm->call(vm, f, argc, argv, kw, out);
}

/* jacobian(f, argnums=0) and hessian(f, argnums=0): f and argnums
 * checked here as grad checks them, so that a mistake is reported at the
 * call, then their Mist definitions. */
static bool check_jacobian_args(MistVM *vm, const char *who, int argc, const Value *argv, const KwArgs *kw,
                                int *nparams, Value *argnums_out) {
  if (argc < 1 || argc > 2) return lang_raise(vm, "TypeError", "%s() takes 1 or 2 arguments (%d given)", who, argc);
  Value f = argv[0], argnums = argc > 1 ? argv[1] : v_int(0);
  for (int i = 0; kw && i < kw->n; i++) {
    if (strcmp(kw->names[i]->data, "argnums") == 0 && argc == 1) argnums = kw->values[i];
    else return lang_raise(vm, "TypeError", "%s() got an unexpected keyword argument '%s'", who, kw->names[i]->data);
  }
  if (!(v_is_obj(f, O_FUNC) || v_is_obj(f, O_BUILTIN) || v_is_obj(f, O_BOUND)))
    return lang_raise(vm, "TypeError", "%s: expected a function, got %s", who, lang_type_name(f));
  IrGraph *fg;
  int np = func_params(f, &fg), *nums, nn;
  bool tuple;
  if (!fg) {
    /* a builtin: as many parameters as argnums reaches */
    if (argnums.tag == V_INT && argnums.i >= np) np = (int)argnums.i + 1;
    for (size_t i = 0; v_is_obj(argnums, O_TUPLE) && i < AS_SEQ(argnums)->len; i++)
      if (AS_SEQ(argnums)->items[i].tag == V_INT && AS_SEQ(argnums)->items[i].i >= np)
        np = (int)AS_SEQ(argnums)->items[i].i + 1;
  }
  *nparams = np;
  *argnums_out = argnums;
  return parse_argnums(vm, who, argnums, np, &nums, &nn, &tuple);
}

/* jacobian's or hessian's Mist definition, of a builtin f as the graph
 * of a call of it with the np arguments argnums reaches (as grad's), so
 * that a call with too many is the builtin's own error */
static bool call_jacobian(MistVM *vm, const char *who, int np, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Value a[2] = {argv[0], argc > 1 ? argv[1] : v_none()};
  if (is_builtin_value(a[0]) && !ad_builtin_function(vm, a[0], np, &a[0])) return false;
  return call_ad_module(vm, who, argc, a, kw, out);
}

/* jacobian(f, argnums) or hessian(f, argnums) (who, whose builtin is
 * self): of max or min, made per call's count of items as grad's is */
static bool jacobian_or_hessian(MistVM *vm, const char *who, BuiltinFn self, int argc, const Value *argv,
                                const KwArgs *kw, Value *out) {
  int np = 0;
  Value argnums = v_none();
  if (!check_jacobian_args(vm, who, argc, argv, kw, &np, &argnums)) return false;
  if (takes_items(argv[0])) {
    *out = per_count(who, argv[0], argnums, self);
    return true;
  }
  return call_jacobian(vm, who, np, argc, argv, kw, out);
}

static bool b_jacobian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return jacobian_or_hessian(vm, "jacobian", b_jacobian, argc, argv, kw, out);
}

static bool b_hessian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return jacobian_or_hessian(vm, "hessian", b_hessian, argc, argv, kw, out);
}

void ad_register(MistVM *vm) {
  static const IrAdInterface interface = {p_J_hook, ad_J_masked, p_F_hook, ad_sens_hook, ad_rekey_env, ad_tangent_rule};
  vm->ad = &interface;
  AdState *st = ad_state(vm);
  st->transform = (AdTransforms){ad_J_value, ad_F_value, ad_reverse, ad_forward};
  st->vjp = b_vjp;
  st->jvp = b_jvp;
  st->jacobian = b_jacobian;
  st->hessian = b_hessian;
  /* kid(r) = r: the continuation that hands a backpropagator's results
   * back to its caller */
  IrUnit *u = ir_unit_new();
  IrGraph *kid = ir_graph_new(u, "kid", NULL, IRG_FUNCTION, span_none());
  kid->ret = ir_param(u, kid, lang_str("r"), span_none());
  ad_state(vm)->kid = v_obj(ev_closure(vm, kid, NULL));
  lang_def_builtin(vm, "grad", b_grad, -1, -1);
  lang_def_builtin(vm, "value_and_grad", b_value_and_grad, -1, -1);
  lang_def_builtin(vm, "vjp", b_vjp, -1, -1);
  lang_def_builtin(vm, "jacobian", b_jacobian, -1, -1);
  lang_def_builtin(vm, "jvp", b_jvp, -1, -1);
  lang_def_builtin(vm, "hessian", b_hessian, -1, -1);
  lang_dict_put(vm->builtins, lang_str("stop_gradient"), ir_prim_value(vm, IR_P_STOP_GRADIENT));
  /* for the rules in stdlib/ad_rules.ms */
  lang_dict_put(vm->builtins, lang_str("_ad_kid"), ad_state(vm)->kid);
  lang_dict_put(vm->builtins, lang_str("_gadd"), ir_prim_value(vm, IR_P_GADD));
  lang_def_builtin(vm, "_env_first", b_env_first, 1, 1);
  lang_def_builtin(vm, "_grad_closure", b_grad_closure, 3, 3);
  lang_def_builtin(vm, "_vjp_closure", b_vjp_closure, 2, 2);
  lang_def_builtin(vm, "_n_ary", b_n_ary, 4, 4);
  lang_def_builtin(vm, "_env_like", b_env_like, 2, 2);
  lang_def_builtin(vm, "_tree_dot", b_tree_dot, 2, 2);
  lang_def_builtin(vm, "_tree_scale", b_tree_scale, 2, 2);
  ad_register_names(vm);
  ad_register_calls(vm);
  ad_register_builtins(vm);
  ad_register_tangents(vm);
  ad_register_nest(vm);
  ad_mark_nondiff(vm);   /* last: every builtin is registered */
}
