/* calls.c: what the transforms need at run time for calls whose meaning
 * depends on the callee: calls with keyword arguments (f(x, s=2.0)),
 * method calls (x.sum(axis=0), d.get("w")) and attributes (x.T).
 *
 * Reverse mode lowers them to ordinary code (reverse.c) around three
 * builtins defined here: _method_rule and _attr_rule find the rule of
 * x.name when the call runs, and _bind_order binds a keyword call as
 * Python would and says where each argument's sensitivity is.  A rule is
 * always Mist code, so a further transform differentiates it again: the
 * builtin's own rule from stdlib/ad_rules.ms when it has one, else a
 * small graph made here that calls x.name as it is in the transformed
 * world (_attr_J, builtins.c) and hands its sensitivity back to x.
 * Forward mode decides the same three kinds of call when they run too,
 * at any depth of forward transforms (nest.c).
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"

/* ---- the rules made here ---- */

/* How x.name was found. */
enum { ATTR_PROPERTY, ATTR_MODULE, ATTR_METHOD };

typedef struct Gb {
  IrUnit *u;
  IrGraph *g;
  Span sp;
} Gb;

static IrNode *kc(Gb *b, Value v) { return ir_const(b->u, v, b->sp); }
static IrNode *kstr(Gb *b, const char *s) { return kc(b, v_obj(lang_str(s))); }

static IrNode *prim(Gb *b, IrGraph *g, IrPrim p, int n, ...) {
  IrNode *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, IrNode *);
  va_end(ap);
  return ir_prim_applyv(b->u, g, p, b->sp, n, args);
}

static IrNode *call(Gb *b, IrGraph *g, Value fn, int n, IrNode **args) {
  IrNode **in = lang_alloc((n + 1) * sizeof *in);
  in[0] = kc(b, fn);
  memcpy(in + 1, args, n * sizeof *args);
  return ir_apply(b->u, g, n + 1, in, b->sp);
}

static Value builtin_named(MistVM *vm, const char *name) {
  Value v = v_none();
  lang_dict_get(vm->builtins, lang_str(name), &v);
  return v;
}

/* x.name's value in the J world of this rule, _attr_J(x, name, "J") */
static IrNode *attr_J(MistVM *vm, Gb *b, IrGraph *g, IrNode *x, ObjStr *name) {
  return call(b, g, builtin_named(vm, "_attr_J"), 3, (IrNode *[]){x, kc(b, v_obj(name)), kstr(b, "J")});
}

/* The rule of x.name(p1..pn) where x.name has no rule of its own (a
 * module's function, a builtin method without one), as a graph:
 *
 *     rule(x, p1..pn) = (v, back)   where (v, bp) = x.name'(kid, p1..pn)
 *     back(d) = (None, dx, r[1]..r[n]),  r = bp(d)
 *
 * x.name' being x.name in the J world, dx the sensitivity of x: that of
 * the bound method's closure (an env of one entry, x's) for a method,
 * None for a module.  The parameters are names[0..n) with the last
 * ndefaults defaulting to defaults. */
static Value call_rule(MistVM *vm, ObjStr *name, int kind, int n, ObjStr **names, int ndefaults, const Value *defaults) {
  /* made once per signature */
  StrBuf key;
  sb_init(&key);
  sb_printf(&key, "call_rule/%d/%s/%d", kind, name->data, n);
  ObjSeq *keep = lang_tuple_new(n + ndefaults);
  for (int i = 0; i < n; i++) {
    sb_printf(&key, "/%s", names[i]->data);
    keep->items[i] = v_obj(names[i]);
  }
  for (int i = 0; i < ndefaults; i++) {
    sb_printf(&key, "/%d:%llx", (int)defaults[i].tag, (unsigned long long)defaults[i].i);
    keep->items[n + i] = defaults[i];
  }
  IrGraph *cached = ad_cache_get(vm, NULL, key.data);
  if (cached) return v_obj(ev_closure(vm, cached, NULL));
  Gb b = {ir_unit_new(), NULL, span_none()};
  IrGraph *g = ir_graph_new(b.u, lang_str_fmt("J_%s", name->data)->data, NULL, IRG_FUNCTION | IRG_ZERO_FRAME, b.sp);
  b.g = g;
  IrNode *x = ir_param(b.u, g, lang_str("x"), b.sp);
  IrNode **in = lang_alloc((n + 2) * sizeof *in);
  in[0] = attr_J(vm, &b, g, x, name);
  in[1] = kc(&b, ad_state(vm)->kid);
  for (int i = 0; i < n; i++) in[2 + i] = ir_param(b.u, g, names[i], b.sp);
  if (ndefaults) {
    g->ndefaults = ndefaults;
    g->defaults = lang_alloc(ndefaults * sizeof *g->defaults);
    for (int i = 0; i < ndefaults; i++) g->defaults[i] = kc(&b, defaults[i]);
  }
  IrNode *t = ir_apply(b.u, g, n + 2, in, b.sp);
  IrNode *v = prim(&b, g, IR_P_GETITEM, 2, t, kc(&b, v_int(0)));
  IrNode *bp = prim(&b, g, IR_P_GETITEM, 2, t, kc(&b, v_int(1)));
  IrGraph *back = ir_graph_new(b.u, lang_str_fmt("J_%s_back", name->data)->data, g, IRG_FUNCTION, b.sp);
  IrNode *d = ir_param(b.u, back, lang_str("d"), b.sp);
  IrNode *r = prim(&b, back, IR_P_BP_CALL, 3, bp, d, kc(&b, v_int(n + 1)));
  IrNode **items = lang_alloc((n + 2) * sizeof *items);
  items[0] = kc(&b, v_none());
  items[1] = kind == ATTR_METHOD ? call(&b, back, builtin_named(vm, "_env_first"), 1,
                                        (IrNode *[]){prim(&b, back, IR_P_GETITEM, 2, r, kc(&b, v_int(0)))})
                                 : kc(&b, v_none());
  for (int i = 0; i < n; i++) items[2 + i] = prim(&b, back, IR_P_GETITEM, 2, r, kc(&b, v_int(i + 1)));
  back->ret = ir_prim_applyv(b.u, back, IR_P_MAKE_TUPLE, b.sp, n + 2, items);
  g->ret = prim(&b, g, IR_P_MAKE_TUPLE, 2, v, ir_const_graph(b.u, back, b.sp));
#ifndef NDEBUG
  if (!ir_verify_unit(vm, b.u)) return v_unbound();
#endif
  ad_cache_put(vm, NULL, key.data, g, v_obj(keep), v_none(), v_none());
  return v_obj(ev_closure(vm, g, NULL));
}

/* The rule of x.name (an attribute, not called) where it has no rule of
 * its own, as a graph: rule(x) = (x.name', back), back(d) = (None, dx),
 * dx as in call_rule; for a property without a rule (x.shape), the
 * property's value and no sensitivity. */
static Value attr_rule(MistVM *vm, ObjStr *name, int kind, Value prop) {
  StrBuf key;
  sb_init(&key);
  sb_printf(&key, "attr_rule/%d/%s", kind, name->data);
  IrGraph *cached = ad_cache_get(vm, NULL, key.data);
  if (cached) return v_obj(ev_closure(vm, cached, NULL));
  Gb b = {ir_unit_new(), NULL, span_none()};
  IrGraph *g = ir_graph_new(b.u, lang_str_fmt("J_%s", name->data)->data, NULL, IRG_FUNCTION, b.sp);
  IrNode *x = ir_param(b.u, g, lang_str("x"), b.sp);
  if (kind == ATTR_PROPERTY) {
    IrNode *v = call(&b, g, prop, 1, &x);
    g->ret = prim(&b, g, IR_P_MAKE_TUPLE, 2, v, kc(&b, v_none()));
  } else {
    IrNode *v = attr_J(vm, &b, g, x, name), *bp = kc(&b, v_none());
    if (kind == ATTR_METHOD) {
      IrGraph *back = ir_graph_new(b.u, lang_str_fmt("J_%s_back", name->data)->data, g, IRG_FUNCTION, b.sp);
      IrNode *d = ir_param(b.u, back, lang_str("d"), b.sp);
      back->ret = prim(&b, back, IR_P_MAKE_TUPLE, 2, kc(&b, v_none()),
                       call(&b, back, builtin_named(vm, "_env_first"), 1, &d));
      bp = ir_const_graph(b.u, back, b.sp);
    }
    g->ret = prim(&b, g, IR_P_MAKE_TUPLE, 2, v, bp);
  }
#ifndef NDEBUG
  if (!ir_verify_unit(vm, b.u)) return v_unbound();
#endif
  ad_cache_put(vm, NULL, key.data, g, v_obj(name), prop, v_none());
  return v_obj(ev_closure(vm, g, NULL));
}

/* The rule of a call x.name(...) that x.name's own rule cannot bind:
 * the call made plainly, so that the builtin says what is wrong in its
 * own words (x.exp(2.0): "exp() takes exactly one argument (2 given)",
 * where binding J_exp would name the rule); were the call to return, a
 * sensitivity reaching it is an error, never a silent zero.  n
 * positional arguments, then the keywords kw (a tuple of names). */
static Value plain_call_rule(MistVM *vm, ObjStr *name, int n, ObjSeq *kw) {
  int nkw = kw ? (int)kw->len : 0;
  Gb b = {ir_unit_new(), NULL, span_none()};
  IrGraph *g = ir_graph_new(b.u, name->data, NULL, IRG_FUNCTION, b.sp);
  b.g = g;
  IrNode *x = ir_param(b.u, g, lang_str("x"), b.sp);
  IrNode **in = lang_alloc((n + nkw + 3) * sizeof *in);
  for (int i = 0; i < n + nkw; i++)
    in[2 + i] = ir_param(b.u, g, i < n ? lang_str_fmt("a%d", i + 1) : AS_STR(kw->items[i - n]), b.sp);
  IrNode *v;
  if (nkw) {
    /* call_kw(x.name, names, args...) */
    in[0] = prim(&b, g, IR_P_GETATTR, 2, x, kc(&b, v_obj(name)));
    in[1] = kc(&b, v_obj(kw));
    v = ir_prim_applyv(b.u, g, IR_P_CALL_KW, b.sp, n + nkw + 2, in);
  } else {
    /* call_method(x, name, args...) */
    in[0] = x;
    in[1] = kc(&b, v_obj(name));
    v = ir_prim_applyv(b.u, g, IR_P_CALL_METHOD, b.sp, n + 2, in);
  }
  IrGraph *back = ir_graph_new(b.u, "back", g, IRG_FUNCTION, b.sp);
  ir_param(b.u, back, lang_str("d"), b.sp);
  StrBuf msg;
  sb_init(&msg);
  sb_printf(&msg, "cannot differentiate through %s(): it has no derivative rule for these arguments", name->data);
  back->ret = call(&b, back, builtin_named(vm, "_type_error"), 1, (IrNode *[]){kstr(&b, msg.data)});
  g->ret = prim(&b, g, IR_P_MAKE_TUPLE, 2, v, ir_const_graph(b.u, back, b.sp));
#ifndef NDEBUG
  if (!ir_verify_unit(vm, b.u)) return v_unbound();
#endif
  return v_obj(ev_closure(vm, g, NULL));
}

/* _method_rule(x, name, n[, names]): the rule of x.name(...) for a call
 * with n positional arguments and the keyword names given, called (x,
 * args...) */
static bool b_method_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 3 || argc > 4 || !v_is_obj(argv[1], O_STR) || argv[2].tag != V_INT ||
      (argc == 4 && !v_is_obj(argv[3], O_TUPLE)))
    return lang_raise(vm, "TypeError", "_method_rule takes x, a name, a count and keyword names");
  ObjStr *name = AS_STR(argv[1]);
  Value fn;
  bool bound;
  if (!ev_lookup_attr(vm, argv[0], name, &fn, &bound)) return false;
  if (bound && v_is_obj(fn, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(fn);
    Value rule = ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
    if (v_is_obj(rule, O_FUNC)) {
      /* (called x first, then the arguments) */
      ObjSeq *kw = argc == 4 ? AS_SEQ(argv[3]) : NULL;
      int npos = 1 + (int)argv[2].i;
      *out = ad_graph_binds(AS_FUNC(rule)->graph, npos, kw) ? rule : plain_call_rule(vm, name, npos - 1, kw);
      return out->tag != V_UNBOUND;
    }
  }
  if (!bound && v_is_obj(fn, O_FUNC)) {
    /* a module's function: its own parameters, so keywords bind */
    ObjFunc *f = AS_FUNC(fn);
    int np = f->graph->nparams;
    ObjStr **names = lang_alloc((np + 1) * sizeof *names);
    for (int i = 0; i < np; i++) names[i] = f->graph->params[i]->name;
    *out = call_rule(vm, name, ATTR_MODULE, np, names, lang_func_ndefaults(f), lang_func_defaults(f));
    return out->tag != V_UNBOUND;
  }
  /* anything else takes the call's shape */
  int n = (int)argv[2].i, nkw = argc == 4 ? (int)AS_SEQ(argv[3])->len : 0;
  ObjStr **names = lang_alloc((n + nkw + 1) * sizeof *names);
  for (int i = 0; i < n; i++) names[i] = lang_str_fmt("a%d", i + 1);
  for (int i = 0; i < nkw; i++) names[n + i] = AS_STR(AS_SEQ(argv[3])->items[i]);
  *out = call_rule(vm, name, bound ? ATTR_METHOD : ATTR_MODULE, n + nkw, names, 0, NULL);
  return out->tag != V_UNBOUND;
}

/* _attr_rule(x, name): the rule of x.name, called (x): a property's rule
 * in ad_rules.ms (x.T: J_T), else a graph made here */
static bool b_attr_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 2 || !v_is_obj(argv[1], O_STR)) return lang_raise(vm, "TypeError", "_attr_rule takes x and a name");
  ObjStr *name = AS_STR(argv[1]);
  bool module = v_is_obj(argv[0], O_MODULE);
  /* a differentiated loop reads x.shape on every turn: the name is a
   * constant of the transformed graph, so its rule is found once */
  NodeMap *found = &ad_state(vm)->attr_rules[module];
  Obj *rule = ir_map_get(found, name);
  if (rule) {
    *out = v_obj(rule);
    return true;
  }
  Value prop = v_none();
  int kind = module ? ATTR_MODULE : ATTR_METHOD;
  if (!module && vm->properties && lang_dict_get(vm->properties, name, &prop)) {
    kind = ATTR_PROPERTY;
    if (v_is_obj(prop, O_BUILTIN)) {
      ObjBuiltin *b = AS_BUILTIN(prop);
      *out = ad_builtin_rule(vm, b->prim >= 0 ? ir_prims[b->prim].name : b->name);
      if (v_is_obj(*out, O_FUNC)) {
        ir_map_put(found, name, out->o);
        return true;
      }
    }
  }
  *out = attr_rule(vm, name, kind, prop);
  if (out->tag == V_UNBOUND) return false;
  ir_map_put(found, name, out->o);
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

static const struct {
  const char *name;
  BuiltinFn fn;
} rules[] = {
  {"_method_rule", b_method_rule},
  {"_attr_rule", b_attr_rule},
  {"_bind_order", b_bind_order},
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
bool ad_is_call_rule(Value fn) {
  if (!v_is_obj(fn, O_BUILTIN)) return false;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (AS_BUILTIN(fn)->fn == rules[i].fn) return true;
  return false;
}

void ad_register_calls(MistVM *vm) {
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) lang_def_builtin(vm, rules[i].name, rules[i].fn, -1, -1);
}
