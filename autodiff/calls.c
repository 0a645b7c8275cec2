/* calls.c: what the transforms need at run time for calls whose meaning
 * depends on the callee: calls with keyword arguments (f(x, s=2.0)),
 * method calls (x.sum(axis=0), d.get("w")) and attributes (x.T).
 *
 * Reverse mode lowers them to ordinary code (reverse.c) around three
 * builtins defined here: _method_rule and _attr_rule find the rule of
 * x.name when the call runs, and _bind_order binds a keyword call as
 * Python would and says where each argument's sensitivity is.  Only
 * what has no rule in Mist (a module's function, a builtin without a
 * rule, a bound method as a value) is differentiated by C code here,
 * with backpropagators that remap an inner one's result item by item;
 * those are first-order.  ad_J_call, J of x.method (jbound) and J of
 * J(builtin) (jjwrap) live here too, and forward mode's rules for the
 * same three kinds of call.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"

/* out[i] = r[map[i]] (None where map[i] < 0), r = bp(d); an unbound bp
 * stands for the identity, r = (d,). */
typedef struct Remap {
  Value bp;
  int nout;
  int map[];
} Remap;

static bool remap_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Remap *m = vm->callee->data;
  if (argc != 1)   /* called as a transform, with a continuation */
    return lang_raise(vm, "TypeError", "cannot differentiate this call twice yet: its derivative is computed in C");
  Value d = argv[0];
  ObjSeq *res = lang_tuple_new(m->nout);
  for (int i = 0; i < m->nout; i++) res->items[i] = v_none();
  *out = v_obj(res);
  if (d.tag == V_NONE || m->bp.tag == V_NONE) return true;
  Value r;
  if (m->bp.tag == V_UNBOUND) r = lang_tuple_of(1, d);
  else if (!vm->call(vm, m->bp, 1, &d, NULL, &r)) return false;
  if (!v_is_obj(r, O_TUPLE)) return lang_raise(vm, "TypeError", "internal error: a backpropagator returned %s", lang_type_name(r));
  ObjSeq *rs = AS_SEQ(r);
  for (int i = 0; i < m->nout; i++)
    if (m->map[i] >= 0 && (size_t)m->map[i] < rs->len) res->items[i] = rs->items[m->map[i]];
  return true;
}

static Remap *remap_new(Value bp, int nout) {
  Remap *m = lang_alloc(sizeof *m + (nout ? nout : 1) * sizeof(int));
  m->bp = bp;
  m->nout = nout;
  for (int i = 0; i < nout; i++) m->map[i] = -1;
  return m;
}

static Value remap_value(Remap *m) {
  ObjBuiltin *b = lang_builtin_new("backprop", remap_fn, 1, 1);
  b->data = m;
  return v_obj(b);
}

/* ---- calling a J-value with a call's own arguments ---- */

/* J(x.method): self and J(method); called (k, args...). */
typedef struct JBound {
  Value self, fj;
} JBound;

static bool jbound_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 1) return lang_raise(vm, "TypeError", "internal error: J method without continuation");
  Value v, bp;
  if (!ad_J_call(vm, v_obj(vm->callee), argc - 1, argv + 1, kw, &v, &bp)) return false;
  return ad_J_finish(vm, argv[0], v, bp, argc + (kw ? kw->n : 0), out);
}

Value ad_jbound(Value self, Value fj) {
  JBound *jb = lang_alloc(sizeof *jb);
  jb->self = self;
  jb->fj = fj;
  ObjBuiltin *b = lang_builtin_new("method", jbound_fn, -1, -1);
  b->data = jb;
  return v_obj(b);
}

/* Call the closure f (skipping `skip` leading parameters, given in
 * lead) with the call's arguments bound to its parameters (named
 * `name` in errors); where[j] is the parameter argument j went to. */
static bool call_bound(MistVM *vm, ObjFunc *f, const char *name, int skip, const Value *lead, int argc,
                       const Value *argv, const KwArgs *kw, Value *t, int *where) {
  Value *in = lang_alloc((skip + argc + 1) * sizeof *in);
  if (skip) memcpy(in, lead, skip * sizeof *in);
  if (argc) memcpy(in + skip, argv, argc * sizeof *in);
  Value *params = lang_alloc((f->graph->nparams + 1) * sizeof *params);
  if (!ev_bind(vm, f, name, skip, skip + argc, in, kw, params, where)) return false;
  return vm->call(vm, v_obj(f), f->graph->nparams, params, NULL, t);
}

static bool split_pair(MistVM *vm, Value t, Value *v, Value *bp) {
  if (!v_is_obj(t, O_TUPLE) || AS_SEQ(t)->len != 2)
    return lang_raise(vm, "TypeError", "internal error: a derivative rule returned %s", lang_type_name(t));
  *v = AS_SEQ(t)->items[0];
  *bp = AS_SEQ(t)->items[1];
  return true;
}

bool ad_J_call(MistVM *vm, Value fj, int argc, const Value *argv, const KwArgs *kw, Value *v, Value *bp) {
  int nkw = kw ? kw->n : 0, n = argc + nkw;
  Value fn, rule, t;
  int *where = lang_alloc_atomic((n ? n : 1) * sizeof *where);
  if (v_is_obj(fj, O_BUILTIN) && AS_BUILTIN(fj)->fn == jbound_fn) {
    /* x.method(args): the method's J with x first; x's sensitivity is
     * the bound method's own */
    JBound *jb = AS_BUILTIN(fj)->data;
    Value *in = lang_alloc((argc + 1) * sizeof *in);
    in[0] = jb->self;
    if (argc) memcpy(in + 1, argv, argc * sizeof *in);
    Value ibp;
    if (!ad_J_call(vm, jb->fj, argc + 1, in, kw, v, &ibp)) return false;
    Remap *m = remap_new(ibp, n + 1);
    for (int i = 0; i <= n; i++) m->map[i] = i + 1;
    *bp = remap_value(m);
    return true;
  }
  if (ad_jbuiltin_parts(fj, &fn, &rule)) {
    if (v_is_obj(rule, O_FUNC)) {
      /* the rule takes the builtin's parameters: bind to its names */
      if (!call_bound(vm, AS_FUNC(rule), AS_BUILTIN(fn)->name, 0, NULL, argc, argv, kw, &t, where) || !split_pair(vm, t, v, bp))
        return false;
      Remap *m = remap_new(*bp, n + 1);
      m->map[0] = 0;
      for (int j = 0; j < n; j++) m->map[1 + j] = 1 + where[j];
      *bp = remap_value(m);
      return true;
    }
    /* no rule: computed, with no derivative or an error if one comes */
    if (!vm->call(vm, fn, argc, argv, kw, v)) return false;
    Value nb = ad_no_rule_bp(fn);
    Remap *m = remap_new(nb, n + 1);
    for (int i = 0; i <= n; i++) m->map[i] = i;
    *bp = nb.tag == V_NONE ? v_none() : remap_value(m);
    return true;
  }
  if (v_is_obj(fj, O_FUNC) && AS_FUNC(fj)->graph->jsource) {
    /* a transformed closure: J(f)(kid, params...) */
    if (AS_FUNC(fj)->graph->jsource->jsource)
      return lang_raise(vm, "TypeError", "cannot differentiate a call with keyword arguments twice yet: "
                        "pass the arguments by position");
    if (!call_bound(vm, AS_FUNC(fj), NULL, 1, &vm->ad_kid, argc, argv, kw, &t, where) || !split_pair(vm, t, v, bp))
      return false;
    Remap *m = remap_new(*bp, n + 1);
    m->map[0] = 0;
    for (int j = 0; j < n; j++) m->map[1 + j] = 1 + where[j];
    *bp = remap_value(m);
    return true;
  }
  /* anything else cannot be called: the call raises its own error */
  if (!vm->call(vm, fj, argc, argv, kw, v)) return false;
  return lang_raise(vm, "TypeError", "internal error: calling %s in a derivative", lang_type_name(fj));
}

/* A backpropagator followed by continuation k: k(bp(d)), bp's result
 * having n items (all None for a zero d or a missing bp). */
typedef struct Then {
  Value bp, k;
  int64_t n;
} Then;

static bool then_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Then *c = vm->callee->data;
  Value r, call[3] = {c->bp, argv[0], v_int(c->n)};
  if (!ev_prim_fn(IR_P_BP_CALL)(vm, 3, call, NULL, &r)) return false;
  return vm->call(vm, c->k, 1, &r, NULL, out);
}

bool ad_J_finish(MistVM *vm, Value k, Value v, Value bp, int n, Value *out) {
  if (k.tag == V_OBJ && k.o == vm->ad_kid.o) {
    *out = lang_tuple_of(2, v, bp);
    return true;
  }
  /* a tail call: the continuation runs after this backpropagator */
  Then *c = lang_alloc(sizeof *c);
  c->bp = bp;
  c->k = k;
  c->n = n;
  ObjBuiltin *b = lang_builtin_new("backprop", then_fn, 1, 1);
  b->data = c;
  *out = lang_tuple_of(2, v, v_obj(b));
  return true;
}

/* ---- what the transform calls ----
 *
 * The transform (reverse.c) lowers a method call x.name(args) to a call
 * of the rule for what x.name is, found when it runs (_method_rule):
 * for a builtin with a rule in ad_rules.ms, that rule itself, a Mist
 * function, called (x, args...).  A call with keyword arguments stays a
 * call_kw of the transformed callee with the identity continuation
 * passed first, and _bind_order says, when it runs, which item of the
 * backpropagator's result belongs to each argument.  Everything the
 * backward pass does is then ordinary code the transform knows, so a
 * second derivative transforms it again.  What has no Mist rule (a
 * module's function, a builtin without a rule, a bound method as a
 * value) is a C rule here, first-order only: a second derivative
 * through it stops with an error. */

/* How x.name was found. */
enum { ATTR_PROPERTY, ATTR_MODULE, ATTR_METHOD };

/* J of what x.name is, as a value (a property's value, a module's
 * function, a bound method) with a backpropagator from its sensitivity
 * to (None, dx): a method's sensitivity is x's (see ad_jbound). */
static bool j_attr(MistVM *vm, Value x, ObjStr *name, Value *v, Value *bp, int *kind) {
  Value prop;
  if (!v_is_obj(x, O_MODULE) && vm->properties && lang_dict_get(vm->properties, name, &prop)) {
    /* x.T: the property's rule (J_T), or none (x.shape) */
    Value jp;
    *kind = ATTR_PROPERTY;
    return ad_J_value(vm, prop, &jp) && ad_J_call(vm, jp, 1, &x, NULL, v, bp);
  }
  Value fn;
  bool bound;
  if (!ev_lookup_attr(vm, x, name, &fn, &bound) || !ad_J_value(vm, fn, v)) return false;
  if (!bound) {
    /* a module's attribute: no sensitivity goes back to the module */
    *kind = ATTR_MODULE;
    *bp = v_none();
    return true;
  }
  *kind = ATTR_METHOD;
  *v = ad_jbound(x, *v);
  Remap *m = remap_new(v_unbound(), 2);
  m->map[1] = 0;
  *bp = remap_value(m);
  return true;
}

/* A rule made here in C: data is what it needs. */
typedef struct CRule {
  Value fn;        /* the J-value called, or the attribute's name */
  bool module;     /* fn is a module's function: x gets no sensitivity */
} CRule;

/* (x, args..., kw) -> (value, bp), bp(d) = (None, dx, dargs...) */
static bool crule_method_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  CRule *c = vm->callee->data;
  if (argc < 1) return lang_raise(vm, "TypeError", "internal error: a method rule without x");
  int nkw = kw ? kw->n : 0, n = argc + nkw;
  Value v, ibp;
  if (c->module) {
    /* m.f(args): f's own J, called without m */
    if (!ad_J_call(vm, c->fn, argc - 1, argv + 1, kw, &v, &ibp)) return false;
    Remap *m = remap_new(ibp, n + 1);
    for (int j = 1; j < n; j++) m->map[1 + j] = j;
    *out = lang_tuple_of(2, v, ibp.tag == V_NONE ? v_none() : remap_value(m));
    return true;
  }
  if (!ad_J_call(vm, c->fn, argc, argv, kw, &v, &ibp)) return false;
  *out = lang_tuple_of(2, v, ibp);
  return true;
}

/* The rule of m.f(a1..an), m a module, as a Mist graph over f, so that
 * a further transform differentiates it again: rule(m, a1..an) =
 * (v, back) with (v, bp) = J(f)(kid, a1..an) and back(d) = (None, None,
 * bp(d)[1..n]), m getting no sensitivity. */
static bool module_rule(MistVM *vm, Value f, int n, Value *out) {
  IrUnit *u = ir_unit_new();
  Span sp = span_none();
  IrGraph *envg = ir_graph_new(u, "rule.env", NULL, 0, sp);
  IrNode *fp = ir_param(u, envg, lang_str("f"), sp);
  envg->ret = ir_const(u, v_none(), sp);
  IrGraph *g = ir_graph_new(u, "J_module_call", envg, IRG_FUNCTION, sp);
  ir_param(u, g, lang_str("m"), sp);
  IrNode **in = lang_alloc((n + 2) * sizeof *in);
  in[0] = ir_prim_apply(u, g, IR_P_J, sp, 1, fp);
  in[1] = ir_const(u, vm->ad_kid, sp);
  for (int i = 0; i < n; i++) in[2 + i] = ir_param(u, g, lang_str_fmt("a%d", i + 1), sp);
  IrNode *t = ir_apply(u, g, n + 2, in, sp);
  IrNode *v = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(0), sp));
  IrNode *bp = ir_prim_apply(u, g, IR_P_GETITEM, sp, 2, t, ir_const(u, v_int(1), sp));
  IrGraph *b = ir_graph_new(u, "J_module_call_back", g, IRG_FUNCTION, sp);
  IrNode *d = ir_param(u, b, lang_str("d"), sp);
  IrNode *r = ir_prim_apply(u, b, IR_P_BP_CALL, sp, 3, bp, d, ir_const(u, v_int(n + 1), sp));
  IrNode **items = lang_alloc((n + 2) * sizeof *items);
  items[0] = items[1] = ir_const(u, v_none(), sp);
  for (int i = 0; i < n; i++) items[2 + i] = ir_prim_apply(u, b, IR_P_GETITEM, sp, 2, r, ir_const(u, v_int(i + 1), sp));
  b->ret = ir_prim_applyv(u, b, IR_P_MAKE_TUPLE, sp, n + 2, items);
  g->ret = ir_prim_apply(u, g, IR_P_MAKE_TUPLE, sp, 2, v, ir_const_graph(u, b, sp));
#ifndef NDEBUG
  if (!ir_verify_unit(vm, u)) return false;
#endif
  *out = v_obj(ev_closure(vm, g, &f));
  return true;
}

/* _method_rule(x, name[, n]): the rule of x.name(...), called (x,
 * args...); n, the number of positional arguments, when the call has
 * no keywords */
static bool b_method_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 2 || argc > 3 || !v_is_obj(argv[1], O_STR) || (argc == 3 && argv[2].tag != V_INT))
    return lang_raise(vm, "TypeError", "_method_rule takes x, a name and a count");
  Value fn;
  bool bound;
  if (!ev_lookup_attr(vm, argv[0], AS_STR(argv[1]), &fn, &bound)) return false;
  if (!bound && argc == 3 && (v_is_obj(fn, O_FUNC) || v_is_obj(fn, O_BUILTIN)))
    return module_rule(vm, fn, (int)argv[2].i, out);
  if (bound && v_is_obj(fn, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(fn);
    Value rule = ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
    if (v_is_obj(rule, O_FUNC)) {
      *out = rule;
      return true;
    }
  }
  CRule *c = lang_alloc(sizeof *c);
  c->module = !bound;
  if (!ad_J_value(vm, fn, &c->fn)) return false;
  /* named for the error a second derivative through it gives */
  ObjBuiltin *r = lang_builtin_new(lang_str_fmt("x.%s", AS_STR(argv[1])->data)->data, crule_method_fn, -1, -1);
  r->data = c;
  *out = v_obj(r);
  return true;
}

/* (x) -> (x.name, bp), bp(d) = (None, dx) */
static bool crule_attr_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  CRule *c = vm->callee->data;
  if (argc != 1) return lang_raise(vm, "TypeError", "internal error: an attribute rule takes x");
  Value v, bp;
  int kind;
  if (!j_attr(vm, argv[0], AS_STR(c->fn), &v, &bp, &kind)) return false;
  *out = lang_tuple_of(2, v, bp);
  return true;
}

/* _attr_rule(x, name): the rule of x.name, called (x): a property's
 * rule in ad_rules.ms (x.T: J_T), else a C rule */
static bool b_attr_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 2 || !v_is_obj(argv[1], O_STR)) return lang_raise(vm, "TypeError", "_attr_rule takes x and a name");
  Value prop;
  if (!v_is_obj(argv[0], O_MODULE) && vm->properties && lang_dict_get(vm->properties, AS_STR(argv[1]), &prop) &&
      v_is_obj(prop, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(prop);
    Value rule = ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
    if (v_is_obj(rule, O_FUNC)) {
      *out = rule;
      return true;
    }
  }
  CRule *c = lang_alloc(sizeof *c);
  c->fn = argv[1];
  ObjBuiltin *r = lang_builtin_new(lang_str_fmt("x.%s", AS_STR(argv[1])->data)->data, crule_attr_fn, 1, 1);
  r->data = c;
  *out = v_obj(r);
  return true;
}

/* _bind_order(f, names, nargs, offset, depth): for a call f(args...) of nargs
 * arguments, the last len(names) of them keywords, the item of f's
 * backpropagator's result that holds each argument's sensitivity, then
 * how many items that result has.  A closure's result is in parameter
 * order (offset 0 for a transform, whose continuation's place holds the
 * env; 1 for a rule, whose first item is its own); the C rules' are in
 * the call's order already.  depth counts the transforms a derivative
 * differentiated again has applied to f since (each takes a continuation
 * or tangents first). */
static bool b_bind_order(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 5 || !v_is_obj(argv[1], O_TUPLE) || argv[2].tag != V_INT || argv[3].tag != V_INT || argv[4].tag != V_INT)
    return lang_raise(vm, "TypeError", "_bind_order takes a function, names, a count, an offset and a depth");
  ObjSeq *names = AS_SEQ(argv[1]);
  int n = (int)argv[2].i, off = (int)argv[3].i, nkw = (int)names->len, depth = (int)argv[4].i;
  if (nkw > n) return lang_raise(vm, "TypeError", "_bind_order: more names than arguments");
  ObjSeq *r = lang_tuple_new(n + 1);
  if (v_is_obj(argv[0], O_FUNC)) {
    ObjFunc *f = AS_FUNC(argv[0]);
    KwArgs k;
    k.n = nkw;
    k.names = lang_alloc((nkw ? nkw : 1) * sizeof *k.names);
    for (int i = 0; i < nkw; i++) k.names[i] = AS_STR(names->items[i]);
    /* only the binding matters: the arguments are stand-ins, after one
     * for each continuation (or tangents) that depth more transforms of
     * the callee take first */
    int m = n + depth;
    Value *in = lang_alloc((m + 1) * sizeof *in);
    for (int i = 0; i < m; i++) in[i] = v_none();
    k.values = in + m - nkw;
    Value *params = lang_alloc((f->graph->nparams + 1) * sizeof *params);
    int *where = lang_alloc_atomic((m + 1) * sizeof *where);
    if (!ev_bind(vm, f, NULL, 0, m - nkw, in, &k, params, where)) return false;
    for (int j = 0; j < n; j++) r->items[j] = v_int(where[depth + j] - depth + off);
    r->items[n] = v_int(f->graph->nparams - depth + off);
  } else {
    for (int j = 0; j < n; j++) r->items[j] = v_int(j + off);
    r->items[n] = v_int(n + off);
  }
  *out = v_obj(r);
  return true;
}

/* ---- J of J(builtin) ----
 *
 * A derivative differentiated again meets J(b), b a builtin, as a
 * function of the transformed world, called (k, args...).  Its own
 * transform is called (K, k, args...): with k the identity, J(b)(k,
 * args) is the rule J_b(args), so J(J(b)) is the transform of the rule,
 * a Mist function, whose backpropagator gives (env, dargs...); k, a
 * constant, gets None. */
static bool jjwrap_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Value jw = *(Value *)vm->callee->data, fn, rule, t, v, bp;
  if (argc < 2) return lang_raise(vm, "TypeError", "internal error: bad call of J(J(%s))", vm->callee->name);
  ad_jbuiltin_parts(jw, &fn, &rule);
  Value k = argv[1];
  if (!(v_is_obj(k, O_FUNC) && AS_FUNC(k)->x && AS_FUNC(k)->x->primal == AS_FUNC(vm->ad_kid)))
    return lang_raise(vm, "TypeError", "cannot differentiate %s() three times here yet", AS_BUILTIN(fn)->name);
  int n = argc - 2;
  if (ad_mist_twin(fn)) {
    /* jvp, jacobian, hessian: their Mist definitions transformed twice,
     * called as the program transformed twice calls */
    ObjModule *mod = ad_stdlib_module(vm, "ad");
    if (!mod) return false;
    Value twin = ad_module_global(mod, "", ad_mist_twin(fn)), j1, j2;
    if (twin.tag == V_UNBOUND) return lang_raise(vm, "NameError", "%s is missing from the standard library", ad_mist_twin(fn));
    if (!ad_J_value(vm, twin, &j1) || !ad_J_value(vm, j1, &j2)) return false;
    return vm->call(vm, j2, argc, argv, kw, out);
  }
  if (ad_has_J_form(fn) && !v_is_obj(rule, O_FUNC))
    return lang_raise(vm, "TypeError", "cannot differentiate %s() inside a function differentiated twice yet",
                      AS_BUILTIN(fn)->name);
  if (kw && kw->n) {
    /* with keywords: the rule's transform bound to the call, its
     * sensitivities in the call's order after k's (None) */
    Value jr;
    if (!v_is_obj(rule, O_FUNC))
      return lang_raise(vm, "TypeError", "cannot differentiate %s() twice: it has no derivative rule in Mist",
                        AS_BUILTIN(fn)->name);
    if (!ad_J_value(vm, rule, &jr) || !ad_J_call(vm, jr, n, argv + 2, kw, &v, &bp)) return false;
    int nall = n + kw->n;
    Remap *m = remap_new(bp, nall + 2);
    for (int j = 0; j < nall; j++) m->map[2 + j] = 1 + j;
    return ad_J_finish(vm, argv[0], v, remap_value(m), nall + 2, out);
  }
  if (v_is_obj(rule, O_FUNC)) {
    Value jr, *in = lang_alloc((n + 1) * sizeof *in);
    if (!ad_J_value(vm, rule, &jr)) return false;
    in[0] = vm->ad_kid;
    if (n) memcpy(in + 1, argv + 2, n * sizeof *in);
    if (!vm->call(vm, jr, n + 1, in, NULL, &t) || !split_pair(vm, t, &v, &bp)) return false;
    Remap *m = remap_new(bp, n + 2);
    for (int i = 0; i < n; i++) m->map[2 + i] = 1 + i;
    return ad_J_finish(vm, argv[0], v, remap_value(m), n + 2, out);
  }
  /* no rule: the inner pair (value, its backpropagator), with none */
  if (!vm->call(vm, fn, n, argv + 2, NULL, &v)) return false;
  Value nb = ad_no_rule_bp(fn);
  Remap *m = remap_new(nb, n + 2);
  return ad_J_finish(vm, argv[0], lang_tuple_of(2, v, nb), nb.tag == V_NONE ? v_none() : remap_value(m), n + 2, out);
}

Value ad_jjwrap(Value jw) {
  Value *data = lang_alloc(sizeof *data);
  *data = jw;
  ObjBuiltin *b = lang_builtin_new(AS_BUILTIN(jw)->name, jjwrap_fn, -1, -1);
  b->data = data;
  return v_obj(b);
}

bool ad_is_jjwrap(Value v) { return v_is_obj(v, O_BUILTIN) && AS_BUILTIN(v)->fn == jjwrap_fn; }

/* The builtin behind J(b) or J(J(b)), and how many transforms wrap it
 * (0 for anything else, which is returned as it is). */
Value ad_builtin_behind(Value v, int *depth) {
  Value fn, rule;
  *depth = 0;
  if (ad_is_jjwrap(v)) {
    v = *(Value *)AS_BUILTIN(v)->data;
    *depth = 1;
  }
  if (ad_jbuiltin_parts(v, &fn, &rule)) {
    (*depth)++;
    return fn;
  }
  return v;
}

/* ---- forward mode ----
 *
 * The same three calls in the forward transform (forward.c).  There a
 * function value carries its captured values' tangents inside it, so
 * F(x.method) holds x's tangent; the call's tangents come as a tuple in
 * the call's argument order and are put in parameter order here. */

typedef struct FBound {
  Value self, tself, ff;
} FBound;

static bool fbound_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* ff(tangents in parameter order, params...) for the call's arguments. */
bool ad_F_call(MistVM *vm, Value ff, Value tans, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  int nkw = kw ? kw->n : 0, n = argc + nkw;
  ObjSeq *ts = v_is_obj(tans, O_TUPLE) ? AS_SEQ(tans) : NULL;
  Value fn, rule;
  if (v_is_obj(ff, O_BUILTIN) && AS_BUILTIN(ff)->fn == fbound_fn) {
    FBound *fb = AS_BUILTIN(ff)->data;
    Value *in = lang_alloc((argc + 1) * sizeof *in);
    in[0] = fb->self;
    if (argc) memcpy(in + 1, argv, argc * sizeof *in);
    ObjSeq *t2 = lang_tuple_new(n + 1);
    t2->items[0] = fb->tself;
    for (int j = 0; j < n; j++) t2->items[j + 1] = ts && (size_t)j < ts->len ? ts->items[j] : v_none();
    return ad_F_call(vm, fb->ff, v_obj(t2), argc + 1, in, kw, out);
  }
  if (ad_fbuiltin_parts(ff, &fn, &rule)) {
    if (!v_is_obj(rule, O_FUNC)) {
      Value y;
      if (!vm->call(vm, fn, argc, argv, kw, &y)) return false;
      for (int j = 0; ts && j < (int)ts->len; j++)
        if (ts->items[j].tag != V_NONE && !ad_nondiff_builtin(AS_BUILTIN(fn)->name))
          return lang_raise(vm, "TypeError", "cannot differentiate through %s(): it has no derivative rule yet",
                            AS_BUILTIN(fn)->name);
      *out = lang_tuple_of(2, y, v_none());
      return true;
    }
    /* F_name(x, tx, y, ty...): the builtin's parameters at even places */
    ObjFunc *r = AS_FUNC(rule);
    int np = r->graph->nparams / 2, nreq = r->graph->nparams - lang_func_ndefaults(r);
    Value *ra = lang_alloc((2 * np + 1) * sizeof *ra);
    for (int i = 0; i < 2 * np; i++) ra[i] = v_unbound();
    const char *name = AS_BUILTIN(fn)->name;
    if (argc > np)
      return lang_raise(vm, "TypeError", "%s() takes at most %d argument%s (%d given)", name, np, np == 1 ? "" : "s", argc);
    for (int j = 0; j < n; j++) {
      int i = j;
      if (j >= argc) {
        ObjStr *kn = kw->names[j - argc];
        for (i = 0; i < np && !lang_str_eq(r->graph->params[2 * i]->name, kn); i++) {}
        if (i == np) return lang_raise(vm, "TypeError", "%s() got an unexpected keyword argument '%s'", name, kn->data);
        if (ra[2 * i].tag != V_UNBOUND)
          return lang_raise(vm, "TypeError", "%s() got multiple values for argument '%s'", name, kn->data);
      }
      ra[2 * i] = j < argc ? argv[j] : kw->values[j - argc];
      ra[2 * i + 1] = ts && (size_t)j < ts->len ? ts->items[j] : v_none();
    }
    for (int i = 0; i < 2 * np; i++)
      if (ra[i].tag == V_UNBOUND) {
        if (i < nreq) return lang_raise(vm, "TypeError", "%s() missing required argument '%s'", name,
                                        r->graph->params[i]->name->data);
        ra[i] = r->x->defaults[i - nreq];
      }
    return vm->call(vm, rule, 2 * np, ra, NULL, out);
  }
  if (v_is_obj(ff, O_FUNC) && AS_FUNC(ff)->graph->nparams >= 1) {
    /* a transformed closure: F(f)(tangents, params...) */
    ObjFunc *f = AS_FUNC(ff);
    int *where = lang_alloc_atomic((n ? n : 1) * sizeof *where);
    Value *in = lang_alloc((argc + 1) * sizeof *in);
    in[0] = v_none();
    if (argc) memcpy(in + 1, argv, argc * sizeof *in);
    Value *params = lang_alloc((f->graph->nparams + 1) * sizeof *params);
    if (!ev_bind(vm, f, NULL, 1, argc + 1, in, kw, params, where)) return false;
    ObjSeq *tp = lang_tuple_new(f->graph->nparams - 1);
    for (size_t i = 0; i < tp->len; i++) tp->items[i] = v_none();
    for (int j = 0; j < n; j++) tp->items[where[j]] = ts && (size_t)j < ts->len ? ts->items[j] : v_none();
    params[0] = v_obj(tp);
    return vm->call(vm, ff, f->graph->nparams, params, NULL, out);
  }
  return vm->call(vm, ff, argc, argv, kw, out);
}

static bool fbound_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 1) return lang_raise(vm, "TypeError", "internal error: F method without tangents");
  return ad_F_call(vm, v_obj(vm->callee), argv[0], argc - 1, argv + 1, kw, out);
}

Value ad_fbound(Value self, Value tself, Value ff) {
  FBound *fb = lang_alloc(sizeof *fb);
  fb->self = self;
  fb->tself = tself;
  fb->ff = ff;
  ObjBuiltin *b = lang_builtin_new("method", fbound_fn, -1, -1);
  b->data = fb;
  return v_obj(b);
}

/* F of what x.name is: (value, tangent). */
static bool f_attr(MistVM *vm, Value x, Value tx, ObjStr *name, Value *out) {
  Value prop;
  if (!v_is_obj(x, O_MODULE) && vm->properties && lang_dict_get(vm->properties, name, &prop)) {
    Value fp;
    return ad_F_value(vm, prop, &fp) && ad_F_call(vm, fp, lang_tuple_of(1, tx), 1, &x, NULL, out);
  }
  Value fn, f;
  bool bound;
  if (!ev_lookup_attr(vm, x, name, &fn, &bound) || !ad_F_value(vm, fn, &f)) return false;
  *out = lang_tuple_of(2, bound ? ad_fbound(x, tx, f) : f, v_none());
  return true;
}

/* F form of call_kw: (f, names, tangents, args...) -> (value, tangent) */
static bool frule_call_kw(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 3 || !v_is_obj(argv[1], O_TUPLE)) return lang_raise(vm, "TypeError", "internal error: bad call_kw");
  ObjSeq *names = AS_SEQ(argv[1]);
  int nkw = (int)names->len, npos = argc - 3 - nkw;
  KwArgs k;
  k.n = nkw;
  k.names = lang_alloc((nkw ? nkw : 1) * sizeof *k.names);
  for (int i = 0; i < nkw; i++) k.names[i] = AS_STR(names->items[i]);
  k.values = (Value *)argv + 3 + npos;
  return ad_F_call(vm, argv[0], argv[2], npos, argv + 3, &k, out);
}

/* (x, tx, name, tangents, args...) -> (value, tangent) */
static bool frule_call_method(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 4 || !v_is_obj(argv[2], O_STR)) return lang_raise(vm, "TypeError", "internal error: bad call_method");
  Value ft;
  if (!f_attr(vm, argv[0], argv[1], AS_STR(argv[2]), &ft)) return false;
  return ad_F_call(vm, AS_SEQ(ft)->items[0], argv[3], argc - 4, argv + 4, NULL, out);
}

/* (x, tx, name) -> (value, tangent) */
static bool frule_getattr(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 3 || !v_is_obj(argv[2], O_STR)) return lang_raise(vm, "TypeError", "internal error: bad getattr");
  return f_attr(vm, argv[0], argv[1], AS_STR(argv[2]), out);
}

static const struct {
  const char *name;
  BuiltinFn fn;
} rules[] = {
  {"_method_rule", b_method_rule},
  {"_attr_rule", b_attr_rule},
  {"_bind_order", b_bind_order},
  {"_F_call_kw", frule_call_kw},
  {"_F_call_method", frule_call_method},
  {"_F_getattr", frule_getattr},
  {"_F_J", ad_F_J_rule},
  {"_F_bp_call", ad_F_bp_call_rule},
  {"_F_grad", ad_F_grad_rule},
};

static Value rule_named(MistVM *vm, const char *name) {
  Value v = v_none();
  lang_dict_get(vm->builtins, lang_str(name), &v);
  return v;
}

Value ad_call_rule(MistVM *vm, const char *name) { return rule_named(vm, name); }

int ad_lowering_builtin(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return 0;
  BuiltinFn c = AS_BUILTIN(fn)->fn;
  return c == b_method_rule || c == b_attr_rule ? AD_RULE_OF : c == b_bind_order ? AD_BIND_ORDER : 0;
}
Value ad_f_call_rule(MistVM *vm, int prim) {
  return rule_named(vm, prim == IR_P_CALL_KW       ? "_F_call_kw"
                        : prim == IR_P_CALL_METHOD ? "_F_call_method"
                        : prim == IR_P_J           ? "_F_J"
                        : prim == IR_P_BP_CALL     ? "_F_bp_call"
                        : prim < 0                 ? "_F_grad"
                                                   : "_F_getattr");
}

bool ad_is_call_rule(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return false;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (AS_BUILTIN(fn)->fn == rules[i].fn) return true;
  return false;
}

void ad_register_calls(MistVM *vm) {
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) lang_def_builtin(vm, rules[i].name, rules[i].fn, -1, -1);
}
