/* builtins.c: builtins as Mist functions, for the transforms.
 *
 * The transforms work on graphs.  A builtin used as a value in a program
 * being differentiated (sin passed to map, a list [tanh, sq], grad taken
 * of sum, x.sum as a bound method) becomes, in a transformed world, the
 * transform of a small graph that calls it:
 *
 *     lambda p1..pn: b(p1..pn)          (b(x, p1..pn) for x.b, over x)
 *
 * Its reverse transform calls b's rule J_b (stdlib/ad_rules.ms), its
 * forward transform F_b, and a transform of a transform transforms
 * those rules, which are Mist code: so a builtin passed as a value
 * differentiates to any order, in either mode and any mix of them, with
 * no C rule that works at one level only.  The parameters are those of
 * b's rule (names and defaults, so that keyword calls bind) or of its
 * Mist definition (jvp, jacobian, hessian in stdlib/ad.ms).  A builtin
 * with neither (print, range, str.format...) takes the parameters of
 * each call: a graph per count of positional arguments and keyword
 * names, made when the call comes.
 *
 * A world is named by its chain of transforms, innermost first: "J" is
 * reverse mode's, "JJ" a derivative differentiated again, "JF" forward
 * over reverse.  ad_close_transformed closes a transformed graph over
 * the value of its one free variable in that world; grad's and vjp's
 * rules (_grad_closure, _vjp_closure) use it too.
 */
#include <stdio.h>
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "ir/map.h"
#include "lang/gc.h"

enum { MAX_CHAIN = MAX_TRANSFORMS };

/* ---- the graphs ---- */

/* lambda [self] p1..pn: b([self,] p1..pn), the last nkw of the
 * parameters passed by keyword; defaults for the last ndefaults. */
static IrGraph *call_graph(ObjBuiltin *b, bool self, int n, ObjStr **names, int nkw, int ndefaults,
                           const Value *defaults) {
  IrUnit *u = ir_unit_new();
  Span sp = span_none();
  IrGraph *envg = NULL;
  IrNode *selfp = NULL;
  if (self) {
    /* x is a free variable: a parameter of an enclosing graph never run */
    envg = ir_graph_new(u, "bound.env", NULL, 0, sp);
    selfp = ir_param(u, envg, lang_str("self"), sp);
    envg->ret = ir_const(u, v_none(), sp);
  }
  IrGraph *g = ir_graph_new(u, b->name, envg, IRG_FUNCTION, sp);
  g->display = lang_str(b->name);
  int first = self ? 1 : 0;
  IrNode **in = lang_alloc((n + 3) * sizeof *in);
  int k = 0;
  in[k++] = ir_const(u, v_obj(b), sp);
  if (self) in[k++] = selfp;
  for (int i = 0; i < n; i++) in[k++] = ir_param(u, g, names ? names[i] : lang_str_fmt("x%d", i + 1), sp);
  if (ndefaults) {
    g->ndefaults = ndefaults;
    g->defaults = lang_alloc(ndefaults * sizeof *g->defaults);
    for (int i = 0; i < ndefaults; i++) g->defaults[i] = ir_const(u, defaults[i], sp);
  }
  if (nkw) {
    /* call_kw(b, names, args...): the last nkw arguments by keyword */
    ObjSeq *kn = lang_tuple_new(nkw);
    for (int i = 0; i < nkw; i++) kn->items[i] = v_obj(names[n - nkw + i]);
    IrNode **a = lang_alloc((k + 2) * sizeof *a);
    a[0] = in[0];
    a[1] = ir_const(u, v_obj(kn), sp);
    memcpy(a + 2, in + 1, (k - 1) * sizeof *a);
    g->ret = ir_prim_applyv(u, g, IR_P_CALL_KW, sp, k + 1, a);
  } else {
    g->ret = ir_apply(u, g, k, in, sp);
  }
  (void)first;
  return g;
}

/* The Mist function whose parameters b takes: its rule, or its Mist
 * definition; unbound if none. */
static Value signature_of(MistVM *vm, ObjBuiltin *b) {
  const char *twin = ad_mist_twin(vm, v_obj(b), false);   /* (the same parameters in both) */
  if (twin) {
    ObjModule *m = ad_stdlib_module(vm, "ad");
    if (!m) {
      lang_error_clear(vm);
      return v_unbound();
    }
    return ad_module_global(vm, m, "", twin);
  }
  if (ad_is_packed(vm, v_obj(b))) return v_unbound();   /* vjp(f, *xs): by call shape */
  return ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
}

/* The graph of b (of x.b when bound) with its rule's signature, NULL when
 * b has none (then each call shape has its own, see shaped()). */
static IrGraph *wrapper(MistVM *vm, ObjBuiltin *b, bool bound) {
  AdState *s = ad_state(vm);
  NodeMap *cache = bound ? &s->bound : &s->wrappers;
  IrGraph *g = ir_map_get(cache, b);
  if (g || (!bound && ir_map_get(&s->tried, b))) return g;
  if (!bound) ir_map_put(&s->tried, b, b);
  Value sig = signature_of(vm, b);
  if (!v_is_obj(sig, O_FUNC)) return NULL;
  ObjFunc *f = AS_FUNC(sig);
  int np = f->graph->nparams - (bound ? 1 : 0), nd = lang_func_ndefaults(f);
  if (np < 0) return NULL;
  if (nd > np) nd = np;
  ObjStr **names = lang_alloc((np + 1) * sizeof *names);
  for (int i = 0; i < np; i++) names[i] = f->graph->params[i + (bound ? 1 : 0)]->name;
  g = call_graph(b, bound, np, names, 0, nd, lang_func_defaults(f) + (lang_func_ndefaults(f) - nd));
  ir_map_put(cache, b, g);
  return g;
}

/* The graph of b for a call with n positional arguments and the keyword
 * names of kw (x.b over x when bound), made once per shape. */
static IrGraph *shaped(MistVM *vm, ObjBuiltin *b, bool bound, int n, const KwArgs *kw) {
  int nkw = kw ? kw->n : 0;
  StrBuf key;
  sb_init(&key);
  sb_printf(&key, "shaped/%p/%d/%d", (void *)b, bound, n);
  for (int i = 0; i < nkw; i++) sb_printf(&key, "/%s", kw->names[i]->data);
  IrGraph *g = ad_cache_get(vm, NULL, key.data);
  if (g) return g;
  ObjStr **names = lang_alloc((n + nkw + 1) * sizeof *names);
  for (int i = 0; i < n; i++) names[i] = n == 1 && !nkw ? lang_str("x") : lang_str_fmt("x%d", i + 1);
  for (int i = 0; i < nkw; i++) names[n + i] = kw->names[i];
  g = call_graph(b, bound, n + nkw, names, nkw, 0, NULL);
  ad_cache_put(vm, NULL, key.data, g, v_obj(b), v_none(), v_none());
  return g;
}

/* ---- worlds ---- */

int ad_chain_forwards(const char *chain) {
  int n = 0;
  for (const char *c = chain; *c; c++) n += *c == 'F';
  return n;
}

/* g transformed by each transform of chain in turn, closed over what g
 * captured as it is in that world: caps[m][mask] for g's free variable
 * m, mask's bit j set for its tangent in the chain's j-th forward
 * transform (2^F entries, F the chain's forward transforms; caps[m]
 * NULL: the value caps0[m] alone, every tangent zero).  Each level's
 * free variables are parameters of its environment graph: one per free
 * variable of the level below for J, a (value, tangent) pair for F. */
bool ad_close_chain(MistVM *vm, IrGraph *g, const char *chain, Value **caps, const Value *caps0, Value *out) {
  ir_free_vars(g);
  int n = g->nfv ? g->nfv : 1;
  int *from = lang_alloc_atomic(n * sizeof *from), *mask = lang_alloc_atomic(n * sizeof *mask);
  for (int m = 0; m < g->nfv; m++) from[m] = m, mask[m] = 0;
  int fwd = 0;
  for (const char *c = chain; *c; c++) {
    IrGraph *t = *c == 'J' ? ad_state(vm)->transform.reverse(vm, g) : ad_state(vm)->transform.forward(vm, g);
    if (!t) return false;
    ir_free_vars(t);
    int *tfrom = lang_alloc_atomic((t->nfv + 1) * sizeof *tfrom), *tmask = lang_alloc_atomic((t->nfv + 1) * sizeof *tmask);
    for (int k = 0; k < t->nfv; k++) {
      int i = t->parent ? ad_env_param(t->parent, t->fv[k]) : -1, below = *c == 'J' ? i : i / 2;
      if (i < 0 || below >= g->nfv) return lang_raise(vm, "TypeError", "internal error: a free variable of %s", t->name->data);
      tfrom[k] = from[below];
      tmask[k] = mask[below] | (*c == 'F' && i % 2 ? 1 << fwd : 0);
    }
    fwd += *c == 'F';
    g = t;
    from = tfrom;
    mask = tmask;
  }
  Value *env = lang_alloc((g->nfv + 1) * sizeof *env);
  for (int k = 0; k < g->nfv; k++)
    env[k] = caps[from[k]] ? caps[from[k]][mask[k]] : mask[k] ? v_none() : caps0[from[k]];
  *out = v_obj(ev_closure(vm, g, env));
  return true;
}

/* The caps of one value: x, and tx as its tangent in the last forward
 * transform of chain (if any), the other tangents zero. */
static Value *caps_of(const char *chain, Value x, Value tx) {
  int nf = ad_chain_forwards(chain);
  Value *c = lang_alloc(((size_t)1 << nf) * sizeof *c);
  for (int i = 0; i < 1 << nf; i++) c[i] = v_none();
  c[0] = x;
  if (nf) c[1 << (nf - 1)] = tx;
  return c;
}

bool ad_close_transformed(MistVM *vm, IrGraph *g, const char *chain, Value x, Value tx, Value *out) {
  Value *caps = caps_of(chain, x, tx);
  return ad_close_chain(vm, g, chain, &caps, &x, out);
}

/* A builtin that takes any arguments, in a world: the graph for each
 * call's shape is made and transformed when the call comes. */
typedef struct Shaped {
  ObjBuiltin *b;
  Value *caps;   /* for x.b: x in this world and its tangents (ad_close_chain) */
  bool bound;
  char chain[MAX_CHAIN + 1];
} Shaped;

static bool shaped_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Shaped *s = vm->callee->data;
  int lead = (int)strlen(s->chain), n = argc - lead;
  if (n < 0) return lang_raise(vm, "TypeError", "internal error: %s() called without its continuations", s->b->name);
  IrGraph *g = shaped(vm, s->b, s->bound, n, kw);
  Value f;
  if (!ad_close_chain(vm, g, s->chain, &s->caps, s->caps, &f)) return false;
  return vm->call(vm, f, argc, argv, kw, out);
}

static bool is_shaped(Value v) { return v_is_obj(v, O_BUILTIN) && AS_BUILTIN(v)->fn == shaped_fn; }

static Value shaped_value(ObjBuiltin *b, bool bound, Value *caps, const char *chain) {
  Shaped *s = lang_alloc(sizeof *s);
  s->b = b;
  s->bound = bound;
  s->caps = caps;
  snprintf(s->chain, sizeof s->chain, "%s", chain);
  ObjBuiltin *w = lang_builtin_new(b->name, shaped_fn, -1, -1);
  w->data = s;
  return v_obj(w);
}

/* The value of b (a builtin, or x.b as a bound method with x's value
 * and tangents caps in that world) in the world of chain. */
static bool builtin_in(MistVM *vm, ObjBuiltin *b, bool bound, Value *caps, const char *chain, Value *out) {
  if (strlen(chain) > MAX_CHAIN) return lang_raise(vm, "TypeError", "cannot differentiate %s() %d times", b->name, MAX_CHAIN + 1);
  IrGraph *g = wrapper(vm, b, bound);
  if (!g) {
    *out = shaped_value(b, bound, caps, chain);
    return true;
  }
  return ad_close_chain(vm, g, chain, &caps, caps, out);
}

/* J or F (kind) of a builtin value v: a builtin, a bound method, or a
 * builtin already in a world (extended by one transform, outermost: x
 * enters it with zero tangents). */
bool ad_builtin_transform(MistVM *vm, Value v, char kind, Value *out) {
  char chain[2] = {kind, 0};
  if (v_is_obj(v, O_BOUND)) {
    ObjBound *bm = AS_BOUND(v);
    if (!v_is_obj(bm->fn, O_BUILTIN)) return lang_raise(vm, "TypeError", "cannot differentiate this bound method");
    Value self;
    if (!(kind == 'J' ? ad_state(vm)->transform.J_value(vm, bm->self, &self) : ad_state(vm)->transform.F_value(vm, bm->self, &self))) return false;
    return builtin_in(vm, AS_BUILTIN(bm->fn), true, caps_of(chain, self, v_none()), chain, out);
  }
  if (is_shaped(v)) {
    Shaped *s = AS_BUILTIN(v)->data;
    char longer[MAX_CHAIN + 2];
    snprintf(longer, sizeof longer, "%s%c", s->chain, kind);
    if (strlen(longer) > MAX_CHAIN) return lang_raise(vm, "TypeError", "cannot differentiate %s() %d times", s->b->name, MAX_CHAIN + 1);
    int nf = ad_chain_forwards(s->chain), m = kind == 'F' ? 2 << nf : 1 << nf;
    Value *caps = lang_alloc(m * sizeof *caps);
    for (int i = 0; i < m; i++) caps[i] = i < 1 << nf ? s->caps[i] : v_none();
    /* x in the next world: the values' transform (J of x is x but for
     * functions) */
    if (s->bound && !(kind == 'J' ? ad_state(vm)->transform.J_value(vm, caps[0], &caps[0]) : ad_state(vm)->transform.F_value(vm, caps[0], &caps[0]))) return false;
    *out = shaped_value(s->b, s->bound, caps, longer);
    return true;
  }
  return builtin_in(vm, AS_BUILTIN(v), false, caps_of("", v_none(), v_none()), chain, out);
}

/* kind (J or F) of a builtin xf in a forward world whose last d
 * transforms are forward ones: the same builtin with kind inserted
 * before those d (an F there has zero tangents of x; x itself lifted by
 * lift, which does the same to a function). */
bool ad_builtin_lift(MistVM *vm, Value xf, int d, char kind, bool (*lift)(MistVM *, Value, int, char, Value *),
                     Value *out) {
  Shaped *s = AS_BUILTIN(xf)->data;
  size_t n = strlen(s->chain);
  if (n + 1 > MAX_CHAIN) return lang_raise(vm, "TypeError", "cannot differentiate %s() %d times", s->b->name, MAX_CHAIN + 1);
  if ((size_t)d > n) return lang_raise(vm, "TypeError", "internal error: %s() lifted past its world", s->b->name);
  size_t at = n - (size_t)d;
  char chain[MAX_CHAIN + 2];
  memcpy(chain, s->chain, at);
  chain[at] = kind;
  memcpy(chain + at + 1, s->chain + at, (size_t)d);
  chain[n + 1] = 0;
  Value *caps = s->caps;
  if (kind == 'F') {
    /* bit b, the new transform's, is zero; the bits above move up */
    int nf = ad_chain_forwards(s->chain), b = nf - d, m = 2 << nf;
    caps = lang_alloc(m * sizeof *caps);
    for (int i = 0; i < m; i++) {
      int low = i & ((1 << b) - 1), high = i >> (b + 1);
      caps[i] = i >> b & 1 ? v_none() : s->caps[low | high << b];
    }
  }
  if (s->bound) {
    Value self;
    if (!lift(vm, caps[0], d, kind, &self)) return false;
    if (caps == s->caps) {
      int m = 1 << ad_chain_forwards(s->chain);
      caps = lang_alloc(m * sizeof *caps);
      memcpy(caps, s->caps, m * sizeof *caps);
    }
    caps[0] = self;
  }
  *out = shaped_value(s->b, s->bound, caps, chain);
  return true;
}

bool ad_is_shaped_builtin(Value v) { return is_shaped(v); }

bool ad_builtin_has_signature(MistVM *vm, Value b) {
  return v_is_obj(b, O_BUILTIN) && wrapper(vm, AS_BUILTIN(b), false) != NULL;
}

/* Whether a keyword call of builtin b with the keyword names (a tuple of
 * strs) binds to b's rule: it has one, with a parameter of each name.
 * dict(a=x) does not (J_dict takes no keywords): it is computed, and a
 * derivative reaching it is an error. */
bool ad_builtin_binds(MistVM *vm, Value b, Value names) {
  if (!v_is_obj(b, O_BUILTIN) || !v_is_obj(names, O_TUPLE)) return false;
  IrGraph *g = wrapper(vm, AS_BUILTIN(b), false);
  if (!g) return false;
  ObjSeq *ns = AS_SEQ(names);
  for (size_t i = 0; i < ns->len; i++) {
    bool found = false;
    for (int j = 0; j < g->nparams && !found; j++)
      found = v_is_obj(ns->items[i], O_STR) && g->params[j]->name && lang_str_eq(g->params[j]->name, AS_STR(ns->items[i]));
    if (!found) return false;
  }
  return true;
}

/* A builtin as a primal Mist function of n parameters (grad(sin), or
 * grad(pow, argnums=1), differentiates it). */
bool ad_builtin_function(MistVM *vm, Value b, int n, Value *out) {
  /* at least the parameters its rule requires: grad(maximum)(a, b) and
   * grad(pow)(x, y) take two (argnums alone would say one) */
  Value sig = signature_of(vm, AS_BUILTIN(b));
  if (v_is_obj(sig, O_FUNC)) {
    int required = AS_FUNC(sig)->graph->nparams - lang_func_ndefaults(AS_FUNC(sig));
    if (n < required) n = required;
  }
  *out = v_obj(ev_closure(vm, shaped(vm, AS_BUILTIN(b), false, n, NULL), NULL));
  return true;
}

/* x.name in the world of chain, x's value and tangents there caps
 * (ad_close_chain) */
bool ad_attr_caps(MistVM *vm, Value *caps, ObjStr *name, const char *chain, Value *out) {
  Value fn, x = caps[0];
  bool bound;
  if (!ev_lookup_attr(vm, x, name, &fn, &bound)) return false;
  if (!bound) {
    /* a module's function: the primal value, transformed along the chain */
    for (const char *c = chain; *c; c++)
      if (!(*c == 'J' ? ad_state(vm)->transform.J_value(vm, fn, &fn) : ad_state(vm)->transform.F_value(vm, fn, &fn))) return false;
    *out = fn;
    return true;
  }
  if (!v_is_obj(fn, O_BUILTIN)) return lang_raise(vm, "TypeError", "cannot differentiate the method %s", name->data);
  return builtin_in(vm, AS_BUILTIN(fn), true, caps, chain, out);
}

/* _attr_J(x, name, chain[, caps]): x.name in the world of chain, caps
 * x's tangents there (masks 1, 2...; None for zeros) */
static bool b_attr_J(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 3 || argc > 4 || !v_is_obj(argv[1], O_STR) || !v_is_obj(argv[2], O_STR) ||
      (argc == 4 && argv[3].tag != V_NONE && !v_is_obj(argv[3], O_TUPLE)))
    return lang_raise(vm, "TypeError", "_attr_J takes x, a name, a chain and x's tangents");
  const char *chain = AS_STR(argv[2])->data;
  int m = 1 << ad_chain_forwards(chain);
  Value *caps = lang_alloc(m * sizeof *caps);
  for (int i = 0; i < m; i++) caps[i] = v_none();
  caps[0] = argv[0];
  if (argc == 4 && argv[3].tag != V_NONE) {
    ObjSeq *t = AS_SEQ(argv[3]);
    if ((int)t->len != m - 1) return lang_raise(vm, "TypeError", "internal error: _attr_J given %zu tangents for %d", t->len, m - 1);
    memcpy(caps + 1, t->items, t->len * sizeof(Value));
  }
  return ad_attr_caps(vm, caps, AS_STR(argv[1]), chain, out);
}

/* _attr_kind(x, name): 0 for a property (x.T), 1 for a module's
 * attribute, 2 for a method */
static bool b_attr_kind(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 2 || !v_is_obj(argv[1], O_STR)) return lang_raise(vm, "TypeError", "_attr_kind takes x and a name");
  Value prop;
  if (!v_is_obj(argv[0], O_MODULE) && vm->properties && lang_dict_get(vm->properties, AS_STR(argv[1]), &prop)) {
    *out = v_int(0);
    return true;
  }
  *out = v_int(v_is_obj(argv[0], O_MODULE) ? 1 : 2);
  return true;
}

/* _property(name): the builtin behind the property x.name */
static bool b_property(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 1 || !v_is_obj(argv[0], O_STR) || !vm->properties || !lang_dict_get(vm->properties, AS_STR(argv[0]), out))
    return lang_raise(vm, "TypeError", "_property takes the name of a property");
  return true;
}

/* _apply(fn, args): fn(*args), for rules and stdlib/ad.ms, which take
 * a function's arguments as a tuple (Mist has no f(*args)) */
static bool b_apply(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 2 || !(v_is_obj(argv[1], O_TUPLE) || v_is_obj(argv[1], O_LIST)))
    return lang_raise(vm, "TypeError", "_apply takes a function and a tuple of arguments");
  ObjSeq *a = AS_SEQ(argv[1]);
  return vm->call(vm, argv[0], (int)a->len, a->items, NULL, out);
}

/* _type_error(message): stdlib/ad.ms's errors of use (a jacobian of a
 * string, too few tangents), raised as the C builtins raise theirs: a
 * TypeError, which an assert would have shown as "assertion failed" */
static bool b_type_error(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  (void)kw, (void)out;
  if (argc != 1 || !v_is_obj(argv[0], O_STR)) return lang_raise(vm, "TypeError", "_type_error takes a message");
  return lang_raise(vm, "TypeError", "%s", AS_STR(argv[0])->data);
}

void ad_register_builtins(MistVM *vm) {
  lang_def_builtin(vm, "_apply", b_apply, 2, 2);
  lang_def_builtin(vm, "_type_error", b_type_error, 1, 1);
  lang_def_builtin(vm, "_attr_J", b_attr_J, 3, 4);
  lang_def_builtin(vm, "_attr_kind", b_attr_kind, 2, 2);
  lang_def_builtin(vm, "_property", b_property, 1, 1);
}
