/* api.c: the differentiation builtins of docs/reference.md section 7 and J of
 * values.
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

/* ---- J of values ---- */

typedef struct JBuiltin {
  Value fn;        /* the builtin */
  Value rule;      /* its rule J_name from ad_rules.ms, or unbound */
} JBuiltin;

static bool b_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool jwrap_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_value_and_grad(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_vjp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_jvp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool vjp_rule(MistVM *vm, int n, const Value *argv, Value *t);
static bool b_jacobian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool b_hessian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);
static bool mist_twin_rule(MistVM *vm, const char *name, int n, const Value *argv, Value *t);

/* The primal value behind a transformed one: for a closure of a
 * transform, the closure of the graph it transforms over the primal
 * values of what it captured. */
static Value primal_of(MistVM *vm, Value v) {
  if (v_is_obj(v, O_BUILTIN) && AS_BUILTIN(v)->fn == jwrap_fn) return ((JBuiltin *)AS_BUILTIN(v)->data)->fn;
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

/* The backpropagator of make_tuple called as a function value: the
 * sensitivity of each item is the tuple sensitivity's item. */
static bool tuple_bp_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  int64_t n = (int64_t)(intptr_t)vm->callee->data;
  ObjSeq *r = lang_tuple_new(n + 1);
  r->items[0] = v_none();
  for (int64_t i = 0; i < n; i++) {
    Value args[2] = {argv[0], v_int(i)};
    if (!ev_prim_fn(IR_P_SENS_ITEM)(vm, 2, args, NULL, &r->items[i + 1])) return false;
  }
  *out = v_obj(r);
  return true;
}

/* The backpropagator of a builtin without a derivative rule: None for
 * one whose results carry no derivative (len, print...); otherwise one
 * that stops with an error when a sensitivity reaches it, never a
 * silent zero. */
static bool no_rule_bp_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argv[0].tag == V_NONE) {
    *out = v_none();
    return true;
  }
  return lang_raise(vm, "TypeError", "cannot differentiate through %s(): it has no derivative rule yet",
                    (const char *)vm->callee->data);
}

static Value no_rule_bp(ObjBuiltin *fb) {
  const char *name = fb->prim >= 0 ? ir_prims[fb->prim].name : fb->name;
  if (ad_nondiff_builtin(name) || (fb->prim >= 0 && !(ir_prims[fb->prim].flags & P_DIFF))) return v_none();
  ObjBuiltin *b = lang_builtin_new("backprop", no_rule_bp_fn, 1, 1);
  b->data = (void *)name;
  return v_obj(b);
}

/* A builtin called in a transformed program: (k, args...). */
static bool jbuiltin_call(MistVM *vm, ObjBuiltin *self, int argc, const Value *argv, Value *out) {
  JBuiltin *jb = self->data;
  if (argc < 1) return lang_raise(vm, "TypeError", "internal error: J builtin without continuation");
  int n = argc - 1;
  Value t;
  ObjBuiltin *fb = AS_BUILTIN(jb->fn);
  if (fb->fn == b_vjp) {
    if (!vjp_rule(vm, n, argv + 1, &t)) return false;
  } else if (ad_mist_twin(jb->fn)) {
    if (!mist_twin_rule(vm, ad_mist_twin(jb->fn), n, argv + 1, &t)) return false;
  } else if (jb->rule.tag != V_UNBOUND) {
    if (!vm->call(vm, jb->rule, n, argv + 1, NULL, &t)) return false;
  } else {
    Value y, bp = v_none();
    if (!vm->call(vm, jb->fn, n, argv + 1, NULL, &y)) return false;
    if (fb->prim == IR_P_MAKE_TUPLE) {
      ObjBuiltin *b = lang_builtin_new("make_tuple.backprop", tuple_bp_fn, 1, 1);
      b->data = (void *)(intptr_t)n;
      bp = v_obj(b);
    } else {
      bp = no_rule_bp(fb);
    }
    t = lang_tuple_of(2, y, bp);
  }
  return ad_J_finish(vm, argv[0], AS_SEQ(t)->items[0], AS_SEQ(t)->items[1], n + 1, out);
}

static bool jwrap_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* A module of the standard library written in Mist (ad_rules.ms, ad.ms),
 * loaded once; NULL with an error raised if it cannot be. */
ObjModule *ad_stdlib_module(MistVM *vm, const char *name) {
  if (!vm->import) {
    lang_raise(vm, "ImportError", "the standard library is not available here");
    return NULL;
  }
  ObjModule from = {0};
  from.obj.kind = O_MODULE;
  from.path = lang_str_fmt("%s/%s.ms", MIST_STDLIB_DIR, name);
  Value m;
  if (!vm->import(vm, lang_str(name), &from, &m)) return NULL;
  return v_is_obj(m, O_MODULE) ? AS_MODULE(m) : NULL;
}

/* The global prefix+name of module m (a rule such as J_add), or Unbound. */
Value ad_module_global(ObjModule *m, const char *prefix, const char *name) {
  Value slot;
  if (m && m->names && lang_dict_get(m->names, lang_str_fmt("%s%s", prefix, name), &slot))
    return m->slots[slot.i];
  return v_unbound();
}

/* The rule J_name of a builtin in ad_rules.ms, or Unbound. */
Value ad_builtin_rule(MistVM *vm, const char *name) {
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  if (!m) lang_error_clear(vm);
  return ad_module_global(m, "J_", name);
}

int ad_env_param(const IrGraph *envg, const IrNode *fv) {
  for (int i = 0; i < envg->nparams; i++)
    if (envg->params[i] == fv) return i;
  return -1;
}

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
static bool J_masked(MistVM *vm, Value v, int64_t mask, bool floats, Value *out) {
  if (!v_is_obj(v, O_FUNC)) return ad_J_value(vm, v, out);
  ObjFunc *f = AS_FUNC(v);
  /* f differentiated already (grad(grad(f))) takes a continuation first
   * for each time: the mask counts f's own parameters after them (and
   * the arguments are not all its parameters: no float transform) */
  int depth = 0;
  for (IrGraph *h = f->graph; h->jsource && (h->jorig || h->forig); h = h->jsource) depth++;
  mask = depth >= 63 ? -1 : (int64_t)((uint64_t)mask << depth);
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
  if (v_is_obj(v, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(v);
    if (b->fn == jwrap_fn) {   /* J of J(builtin): the transform of its rule */
      *out = ad_jjwrap(v);
      return true;
    }
    if (ad_is_jjwrap(v))
      return lang_raise(vm, "TypeError", "cannot differentiate %s() three times here yet", b->name);
    JBuiltin *jb = lang_alloc(sizeof *jb);
    jb->fn = v;
    jb->rule = ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
    ObjBuiltin *w = lang_builtin_new(b->name, jwrap_fn, -1, -1);
    w->data = jb;
    *out = v_obj(w);
    return true;
  }
  if (v_is_obj(v, O_BOUND)) {
    Value self, fn;
    if (!ad_J_value(vm, AS_BOUND(v)->self, &self) || !ad_J_value(vm, AS_BOUND(v)->fn, &fn)) return false;
    *out = ad_jbound(self, fn);
    return true;
  }
  *out = v;
  return true;
}

/* The wrapper's C function: vm->callee is the wrapper being called. */
static bool jwrap_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  ObjBuiltin *self = vm->callee;
  if (kw && kw->n) {
    if (argc < 1) return lang_raise(vm, "TypeError", "internal error: J builtin without continuation");
    Value v, bp;
    if (!ad_J_call(vm, v_obj(self), argc - 1, argv + 1, kw, &v, &bp)) return false;
    return ad_J_finish(vm, argv[0], v, bp, argc + kw->n, out);
  }
  return jbuiltin_call(vm, self, argc, argv, out);
}

bool ad_jbuiltin_parts(Value w, Value *fn, Value *rule) {
  if (!v_is_obj(w, O_BUILTIN) || AS_BUILTIN(w)->fn != jwrap_fn) return false;
  JBuiltin *jb = AS_BUILTIN(w)->data;
  *fn = jb->fn;
  *rule = jb->rule;
  return true;
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

/* The derivative builtins, whose calls inside a function being
 * differentiated take their J form (jbuiltin_call). */
bool ad_has_J_form(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return false;
  BuiltinFn c = AS_BUILTIN(fn)->fn;
  return c == b_grad || c == b_value_and_grad || c == b_vjp || c == b_jvp || c == b_jacobian || c == b_hessian;
}

bool ad_is_vjp_builtin(Value fn) { return v_is_obj(fn, O_BUILTIN) && AS_BUILTIN(fn)->fn == b_vjp; }

/* The Mist definition (stdlib/ad.ms) that a derivative builtin is
 * differentiated through, or NULL: jvp's is _jvp_by_vjp. */
const char *ad_mist_twin(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return NULL;
  BuiltinFn c = AS_BUILTIN(fn)->fn;
  return c == b_jvp ? "_jvp_by_vjp" : c == b_jacobian ? "jacobian" : c == b_hessian ? "hessian" : NULL;
}

bool ad_is_grad_builtin(Value fn) {
  return v_is_obj(fn, O_BUILTIN) && (AS_BUILTIN(fn)->fn == b_grad || AS_BUILTIN(fn)->fn == b_value_and_grad);
}


Value ad_no_rule_bp(Value fn) { return no_rule_bp(AS_BUILTIN(fn)); }

static bool p_J_hook(MistVM *vm, Value v, Value *out) { return ad_J_value(vm, v, out); }

/* Builtins whose results carry no derivative (ints, bools, text, None,
 * constants): without a rule they are simply computed.  Any other
 * builtin without a rule stops with an error if a derivative reaches
 * it, rather than passing a silent zero. */
bool ad_nondiff_builtin(const char *name) {
  static const char *const names[] = {
    "print", "len", "range", "int", "round", "str", "repr", "type", "bool", "ord", "chr", "hex",
    "bin", "oct", "any", "all", "args", "time", "show_source", "show_ir", "divmod", "key", "split",
    "zeros", "ones", "full", "arange", "linspace", "eye", "randn", "rand", "argmax", "one_hot",
    "allclose", "isinstance", "dict", "keys", "values", "items", "get", "index", "count", "upper",
    "lower", "strip", "lstrip", "rstrip", "join", "replace", "startswith", "endswith", "find",
    "format", "zfill", "set_mode", "set_device", "title", "capitalize", "swapcase", "isdigit", "isalpha",
    "isalnum", "isspace", "isupper", "islower", "split", "rsplit", "rfind", "rindex", "ljust", "rjust",
    "center", "shape", "dtype", "ndim", "size", "device", "zeros_like", "ones_like", "argmin",
    "_method_rule", "_attr_rule", "_bind_order", NULL,
  };
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

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

/* A builtin b as the Mist function lambda x1..xn: b(x1..xn), so that
 * grad(sin) is the transform of a graph like any other, differentiated
 * again to any order (grad(grad(grad(sin)))) by the rules of the call
 * inside. */
static Value builtin_as_function(MistVM *vm, Value b, int n) {
  IrUnit *u = ir_unit_new();
  Span sp = span_none();
  IrGraph *g = ir_graph_new(u, AS_BUILTIN(b)->name, NULL, IRG_FUNCTION, sp);
  g->display = lang_str(AS_BUILTIN(b)->name);
  IrNode **in = lang_alloc((n + 1) * sizeof *in);
  in[0] = ir_const(u, b, sp);
  for (int i = 0; i < n; i++) in[1 + i] = ir_param(u, g, n == 1 ? lang_str("x") : lang_str_fmt("x%d", i + 1), sp);
  g->ret = ir_apply(u, g, n + 1, in, sp);
  return v_obj(ev_closure(vm, g, NULL));
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
    if (v_is_obj(f, O_BUILTIN) && !ad_jbuiltin_parts(f, &(Value){0}, &(Value){0}) && !ad_is_jjwrap(f)) {
      f = builtin_as_function(vm, f, np);
      func_params(f, &fg);
    }
  }
  int *nums = NULL, nn = 0;
  bool tuple;
  if (!parse_argnums(vm, who, argnums, np, &nums, &nn, &tuple)) return false;

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
  IrGraph *g = ir_graph_new(u, name.data, envg, IRG_FUNCTION, gsp);
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
  /* J(f) computing only the sensitivities of the argnums */
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
  in[1] = ir_const(u, vm->ad_kid, sp);
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
  in[1] = ir_const(u, vm->ad_kid, sp);
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
  *out = v_obj(ev_closure(vm, g, &f));
  return true;
}

/* The ordinary function behind f, a value in a program transformed
 * *depth times (a closure of a transform of a transform... of its
 * graph, or J(b), J(J(b)) of a builtin b).  Only its graph's parameters
 * and defaults matter to the callers: its captured values are None. */
static Value behind(MistVM *vm, Value f, int *depth) {
  *depth = 0;
  if (!v_is_obj(f, O_FUNC)) return ad_builtin_behind(f, depth);   /* sin, as J(sin) or J(J(sin)) */
  IrGraph *h = AS_FUNC(f)->graph;
  while (h->jsource && h->jorig) {
    h = h->jsource;
    (*depth)++;
  }
  ir_free_vars(h);
  Value *none = lang_alloc((h->nfv + 1) * sizeof *none);
  for (int i = 0; i < h->nfv; i++) none[i] = v_none();
  ObjFunc *pf = ev_closure(vm, h, none);
  lang_func_share_defaults(pf, AS_FUNC(f));
  return v_obj(pf);
}

/* The closure of g's graph (a derivative builtin's graph over one free
 * variable, f) transformed depth times, over f itself, already the
 * value of f in that program. */
static bool transformed_over(MistVM *vm, Value g, int depth, Value f, Value *out) {
  IrGraph *G = AS_FUNC(g)->graph;
  for (int i = 0; i < depth; i++)
    if (!(G = ad_reverse(vm, G))) return false;
  *out = v_obj(ev_closure(vm, G, &f));
  return true;
}

/* _grad_closure(f, argnums, kind): the value of grad(f) (kind 0) or
 * value_and_grad(f) (kind 1) in a program transformed as many times as
 * f is.  The rules J_grad and J_value_and_grad (ad_rules.ms) use it, so
 * that a grad call is differentiated again like any code. */
static bool b_grad_closure(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argv[2].tag != V_INT) return lang_raise(vm, "TypeError", "_grad_closure takes a function, argnums and a kind");
  int depth;
  Value a[2] = {behind(vm, argv[0], &depth), argv[1]}, g;
  if (!make_grad(vm, argv[2].i ? "value_and_grad" : "grad", argv[2].i ? W_VALUE_AND_GRAD : W_GRAD, 2, a, NULL, &g))
    return false;
  return transformed_over(vm, g, depth, argv[0], out);
}

/* _vjp_closure(f, n): vjp's graph for f and n arguments (ad_make_vjp) in
 * a program transformed as many times as f is, for the rule J_vjp */
static bool b_vjp_closure(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argv[1].tag != V_INT || argv[1].i < 0) return lang_raise(vm, "TypeError", "_vjp_closure takes a function and a count");
  int depth;
  Value g;
  if (!ad_make_vjp(vm, behind(vm, argv[0], &depth), (int)argv[1].i, &g)) return false;
  return transformed_over(vm, g, depth, argv[0], out);
}

/* vjp(f, *xs) -> (y, pullback); pullback(ct) -> tuple of cotangents. */
static bool b_vjp(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 1) return lang_raise(vm, "TypeError", "vjp() takes a function and its arguments");
  if (kw && kw->n) return lang_raise(vm, "TypeError", "vjp() takes no keyword arguments");
  Value g, r;
  if (!ad_make_vjp(vm, argv[0], argc - 1, &g) || !vm->call(vm, g, argc - 1, argv + 1, NULL, &r)) return false;
  /* a function returned is handed back as the ordinary function */
  *out = lang_tuple_of(2, primal_of(vm, AS_SEQ(r)->items[0]), AS_SEQ(r)->items[1]);
  return true;
}

/* vjp(f, *xs)'s backpropagator inside a function being differentiated:
 * bp(d) = (None, df, dx1..dxn) from the transform of vjp.f, whose own
 * sensitivity (an env keyed by its free variable f) is f's. */
typedef struct VjpBack {
  Value bp;
  int64_t key, n;
} VjpBack;

static bool vjp_bp_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  VjpBack *c = vm->callee->data;
  ObjSeq *res = lang_tuple_new(c->n + 2);
  for (int64_t i = 0; i < c->n + 2; i++) res->items[i] = v_none();
  *out = v_obj(res);
  Value r, call[3] = {c->bp, argv[0], v_int(c->n + 1)};
  if (!ev_prim_fn(IR_P_BP_CALL)(vm, 3, call, NULL, &r)) return false;
  ObjSeq *rs = AS_SEQ(r);
  Value get[2] = {rs->items[0], v_int(c->key)};
  if (!ev_prim_fn(IR_P_ENV_GET)(vm, 2, get, NULL, &res->items[1])) return false;
  for (int64_t i = 1; i <= c->n && (size_t)i < rs->len; i++) res->items[i + 1] = rs->items[i];
  return true;
}

/* vjp(f, *xs) inside a function being differentiated: the transform of
 * vjp.f (make_vjp) over the primal f, called with the xs.  argv holds
 * the transformed f and xs. */
static bool vjp_rule(MistVM *vm, int n, const Value *argv, Value *t) {
  if (n < 1) return lang_raise(vm, "TypeError", "vjp() takes a function and its arguments");
  Value g, jg, v, bp;
  if (!ad_make_vjp(vm, primal_of(vm, argv[0]), n - 1, &g) || !ad_J_value(vm, g, &jg)) return false;
  if (!ad_J_call(vm, jg, n - 1, argv + 1, NULL, &v, &bp)) return false;
  VjpBack *c = lang_alloc(sizeof *c);
  c->bp = bp;
  c->key = (int64_t)(intptr_t)AS_FUNC(g)->graph->fv[0];
  c->n = n - 1;
  ObjBuiltin *b = lang_builtin_new("vjp.backprop", vjp_bp_fn, 1, 1);
  b->data = c;
  *t = lang_tuple_of(2, v, v_obj(b));
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
  Value ff;
  if (!ad_F_value(vm, argv[0], &ff)) return false;
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

/* jvp, jacobian and hessian inside a function being differentiated:
 * the transform of their Mist definitions in stdlib/ad.ms (for jvp,
 * _jvp_by_vjp, which finds the tangent with two vjps, so that reverse
 * mode only ever differentiates reverse mode). */
static bool mist_twin_rule(MistVM *vm, const char *name, int n, const Value *argv, Value *t) {
  ObjModule *mod = ad_stdlib_module(vm, "ad");
  if (!mod) return false;
  Value f = ad_module_global(mod, "", name), jf, v, bp;
  if (f.tag == V_UNBOUND) return lang_raise(vm, "NameError", "%s is missing from the standard library", name);
  if (!ad_J_value(vm, f, &jf) || !ad_J_call(vm, jf, n, argv, NULL, &v, &bp)) return false;
  *t = lang_tuple_of(2, v, bp);
  return true;
}

static bool p_F_hook(MistVM *vm, Value v, Value *out) { return ad_F_value(vm, v, out); }

/* jacobian and hessian are written in Mist (stdlib/ad.ms), loaded on
 * first use. */
static bool call_ad_module(MistVM *vm, const char *name, int argc, const Value *argv, const KwArgs *kw,
                           Value *out) {
  ObjModule *mod = ad_stdlib_module(vm, "ad");
  if (!mod) return false;
  Value f = ad_module_global(mod, "", name);
  if (f.tag == V_UNBOUND) return lang_raise(vm, "NameError", "%s is missing from the standard library", name);
  return vm->call(vm, f, argc, argv, kw, out);
}

static bool b_jacobian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return call_ad_module(vm, "jacobian", argc, argv, kw, out);
}

static bool b_hessian(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return call_ad_module(vm, "hessian", argc, argv, kw, out);
}

void ad_register(MistVM *vm) {
  vm->ad_J = p_J_hook;
  vm->ad_Jmask = J_masked;
  vm->ad_sens = ad_sens_hook;
  /* kid(r) = r: the continuation that hands a backpropagator's results
   * back to its caller */
  IrUnit *u = ir_unit_new();
  IrGraph *kid = ir_graph_new(u, "kid", NULL, IRG_FUNCTION, span_none());
  kid->ret = ir_param(u, kid, lang_str("r"), span_none());
  vm->ad_kid = v_obj(ev_closure(vm, kid, NULL));
  lang_def_builtin(vm, "grad", b_grad, -1, -1);
  lang_def_builtin(vm, "value_and_grad", b_value_and_grad, -1, -1);
  lang_def_builtin(vm, "vjp", b_vjp, -1, -1);
  lang_def_builtin(vm, "jacobian", b_jacobian, -1, -1);
  lang_def_builtin(vm, "jvp", b_jvp, -1, -1);
  vm->ad_F = p_F_hook;
  lang_def_builtin(vm, "hessian", b_hessian, -1, -1);
  lang_dict_put(vm->builtins, lang_str("stop_gradient"), ir_prim_value(vm, IR_P_STOP_GRADIENT));
  /* for the rules in stdlib/ad_rules.ms */
  lang_dict_put(vm->builtins, lang_str("_ad_kid"), vm->ad_kid);
  lang_dict_put(vm->builtins, lang_str("_gadd"), ir_prim_value(vm, IR_P_GADD));
  lang_def_builtin(vm, "_env_first", b_env_first, 1, 1);
  lang_def_builtin(vm, "_grad_closure", b_grad_closure, 3, 3);
  lang_def_builtin(vm, "_vjp_closure", b_vjp_closure, 2, 2);
  lang_def_builtin(vm, "_env_like", b_env_like, 2, 2);
  ad_register_names(vm);
  ad_register_calls(vm);
}
