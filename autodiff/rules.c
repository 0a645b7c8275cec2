/* rules.c: where the transforms find what they need, below them all:
 * autodiff's state and caches (hung off the VM), the standard library's
 * modules of derivative rules (ad_rules.ms, ad_sens.ms, ad.ms) and the
 * rules in them, the builtins that need no rule, and which derivative
 * builtins have a Mist definition to differentiate instead.  It calls
 * no other file of autodiff/: the files that make transforms (reverse.c,
 * forward.c) and those that give builtins their rules (builtins.c,
 * nest.c, tangents.c, calls.c) sit above it, and the rules reach the
 * transforms through AdState's `transform` (set by ad_register). */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* ---- autodiff's state ---- */

AdState *ad_state(MistVM *vm) {
  if (!vm->ad_state) {
    AdState *s = lang_alloc(sizeof *s);
    s->shaped = lang_dict_new();
    s->modules = lang_dict_new();
    vm->ad_state = s;
  }
  return vm->ad_state;
}

AdRoots *ad_roots_of(MistVM *vm, IrGraph *g) {
  (void)vm;
  return ir_side(g, IR_SIDE_AD);
}

AdRoots *ad_roots(MistVM *vm, IrGraph *g) {
  AdRoots *r = ad_roots_of(vm, g);
  return r ? r : ir_side_claim(g, IR_SIDE_AD, lang_alloc(sizeof *r));
}

/* ---- a cache of the graphs the derivative builtins make ----
 *
 * grad(f), vjp(f, ...), a method's rule...: each call would make a new
 * graph, which a derivative differentiated again would transform anew
 * on every call.  Made once per key instead; the key names the objects
 * it depends on by address, and the entry keeps those objects alive
 * (keep), so that no other object can take their address.  A graph made
 * of a function's graph (grad(f)) is kept with that graph's transforms
 * (AdRoots.made) and dies with it; those made of builtins and method
 * names (a set the program cannot grow without bound) stay in the VM's
 * cache. */

typedef struct CacheEntry {
  Obj obj;               /* an O_GRAPH, so that a dict can hold it */
  IrGraph *graph;
  Value keep[3];
} CacheEntry;

ObjDict *ad_module_cache(MistVM *vm) { return ad_state(vm)->modules; }

/* The cache for graphs made of `of` (NULL: the VM's); made when `make`. */
static ObjDict *cache_of(MistVM *vm, IrGraph *of, bool make) {
  if (!of) return ad_state(vm)->shaped;
  AdRoots *r = make ? ad_roots(vm, of) : ad_roots_of(vm, of);
  if (r && !r->made && make) r->made = lang_dict_new();
  return r ? r->made : NULL;
}

IrGraph *ad_cache_get(MistVM *vm, IrGraph *of, const char *key) {
  ObjDict *cache = cache_of(vm, of, false);
  Value v;
  if (!cache || !lang_dict_get(cache, lang_str(key), &v)) return NULL;
  return ((CacheEntry *)v.o)->graph;
}

void ad_cache_put(MistVM *vm, IrGraph *of, const char *key, IrGraph *g, Value keep0, Value keep1, Value keep2) {
  CacheEntry *e = lang_alloc(sizeof *e);
  e->obj.kind = O_GRAPH;
  e->graph = g;
  e->keep[0] = keep0;
  e->keep[1] = keep1;
  e->keep[2] = keep2;
  lang_dict_put(cache_of(vm, of, true), lang_str(key), v_obj((Obj *)e));
}


static void install_sens_rules(MistVM *vm, ObjModule *rules);

/* A module of the standard library written in Mist (ad_rules.ms, ad.ms),
 * loaded once; NULL with an error raised if it cannot be. */
ObjModule *ad_stdlib_module(MistVM *vm, const char *name) {
  /* (asked for on every rule lookup: an import would find the file
   * again each time) */
  Value m;
  ObjDict *cache = ad_module_cache(vm);
  if (lang_dict_get(cache, lang_str(name), &m)) return AS_MODULE(m);
  if (!vm->import) {
    lang_raise(vm, "ImportError", "the standard library is not available here");
    return NULL;
  }
  ObjModule from = {0};
  from.obj.kind = O_MODULE;
  from.path = lang_str_fmt("%s/%s.ms", lang_stdlib_dir(), name);
  if (!vm->import(vm, lang_str(name), &from, &m)) return NULL;
  if (!v_is_obj(m, O_MODULE)) return NULL;
  if (strcmp(name, "ad_rules") == 0 || strcmp(name, "ad_sens") == 0 || strcmp(name, "ad") == 0) {
    /* the rules, and jvp/jacobian/hessian's definitions, run for the
     * user's code, which an error in them is shown at
     * (lang_error_render) */
    int file = AS_MODULE(m)->file_id;
    if (file >= 0 && file < vm->nfiles) vm->files[file].internal = true;
  }
  if (strcmp(name, "ad_rules") == 0) install_sens_rules(vm, AS_MODULE(m));
  lang_dict_put(cache, lang_str(name), m);
  return AS_MODULE(m);
}


/* The global prefix+name of module m (a rule such as J_add), or Unbound
 * (with an error raised only if the rules' file could not be loaded). */
Value ad_module_global(MistVM *vm, ObjModule *m, const char *prefix, const char *name) {
  Value slot;
  ObjStr *key = lang_str_fmt("%s%s", prefix, name);
  if (m && lang_module_load(vm, m, key) && m->names && lang_dict_get(m->names, key, &slot))
    return m->slots[slot.i];
  return v_unbound();
}


/* The rule J_name of a builtin in ad_rules.ms, or Unbound. */
Value ad_builtin_rule(MistVM *vm, const char *name) {
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  if (!m) lang_error_clear(vm);
  return ad_module_global(vm, m, "J_", name);
}


int ad_env_param(const IrGraph *envg, const IrNode *fv) {
  for (int i = 0; i < envg->nparams; i++)
    if (envg->params[i] == fv) return i;
  return -1;
}


/* A container with the functions in it mapped by fn (J or F of a value):
 * the same kind of container, keys and order; v itself when it holds no
 * function, so that J of a container of floats costs nothing. */
bool ad_map_functions(MistVM *vm, Value v, bool (*fn)(MistVM *, Value, Value *), Value *out) {
  *out = v;
  if (!lang_holds_function(v)) return true;
  if (v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v), *r = lang_dict_new();
    for (size_t i = 0; i < d->len; i++) {
      Value x;
      if (!fn(vm, d->entries[i].value, &x)) return false;
      lang_dict_put(r, d->entries[i].key, x);
    }
    *out = v_obj(r);
    return true;
  }
  if (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) {
    ObjSeq *s = AS_SEQ(v), *r = v_is_obj(v, O_TUPLE) ? lang_tuple_new(s->len) : lang_list_new(s->len);
    for (size_t i = 0; i < s->len; i++)
      if (!fn(vm, s->items[i], &r->items[i])) return false;
    *out = v_obj(r);
    return true;
  }
  return fn(vm, v, out);
}


/* The derivative builtin whose calls in a differentiated program are
 * those of its Mist definition (stdlib/ad.ms), or NULL.  jvp's, in
 * reverse mode, is _jvp_by_vjp, which finds the tangent with vjps, so
 * that reverse mode only ever differentiates reverse mode; in forward
 * mode it is _jvp_by_F, f's own forward transform, so that a jvp of a
 * function calling jvp is forward over forward (F of F, nest.c),
 * as cheap as the two jvps. */
const char *ad_mist_twin(MistVM *vm, Value fn, bool forward) {
  if (!v_is_obj(fn, O_BUILTIN)) return NULL;
  BuiltinFn c = AS_BUILTIN(fn)->fn;
  const AdState *st = ad_state(vm);
  if (c == st->jvp) return forward ? "_jvp_by_F" : "_jvp_by_vjp";
  return c == st->jacobian ? "jacobian" : c == st->hessian ? "hessian" : NULL;
}

/* A builtin whose rules take its arguments after the first packed in a
 * tuple: vjp(f, *xs) has J_vjp(f, xs) and F_vjp(f, tf, xs, txs). */
bool ad_is_packed(MistVM *vm, Value fn) { return v_is_obj(fn, O_BUILTIN) && AS_BUILTIN(fn)->fn == ad_state(vm)->vjp; }


/* Whether rule, a Mist function, binds n positional arguments.  A call
 * that its builtin's rule cannot bind is computed plainly instead, so
 * that the builtin says what is wrong in its own words (exp(x, 2.0):
 * "exp() takes exactly one argument", where J_exp's binding would name
 * the rule). */
bool ad_rule_takes(Value rule, int n) {
  if (!v_is_obj(rule, O_FUNC)) return true;
  ObjFunc *f = AS_FUNC(rule);
  int np = f->graph->nparams, nd = lang_func_ndefaults(f);
  return n <= np && n >= np - nd;
}

/* max(a, b, c, d...) and min(...) of four items or more: their rules
 * (J_max(t, axis, keepdims, key, default) in ad_rules.ms) have three
 * positional places, so the transforms hand them the items as one
 * tuple, which max treats as it treats the items.  (Calls through max
 * as a value bind its rule's parameters: a fourth item there is key.) */
bool ad_packs_items(MistVM *vm, const ObjBuiltin *b, int nargs, const IrGraph *in) {
  /* (the graph standing for max as a value passes it the five parameters
   * of its rule, which bind as they are) */
  return (b->op == IR_B_MAX || b->op == IR_B_MIN) && nargs >= 4 && !ad_is_wrapper(vm, in);
}


/* Builtins whose results carry no derivative (ints, bools, text, None,
 * constants): without a rule they are simply computed.  Any other
 * builtin without a rule stops with an error if a derivative reaches
 * it, rather than passing a silent zero.  The ops among them say so in
 * their row of ir/builtin_ops.def (no B_DIFF, stdlib/ops.c marks them);
 * these are the builtins and methods that are not ops (str.split, not
 * the random split).  Marked on the builtin objects once, so a
 * transform asks the object, not its name. */
void ad_mark_nondiff(MistVM *vm) {
  static const char *const names[] = {
    "print", "round", "str", "repr", "type", "bool", "ord", "chr", "hex", "bin", "oct", "any",
    "all", "args", "time", "show_source", "show_ir", "isinstance", "keys",
    "values", "items", "get", "index", "count", "upper", "lower", "strip", "lstrip", "rstrip",
    "join", "replace", "startswith", "endswith", "find", "format", "zfill", "set_mode",
    "set_device", "title", "capitalize", "swapcase", "casefold", "isdigit", "isalpha", "isalnum", "isspace",
    "isupper", "islower", "split", "rsplit", "rfind", "rindex", "ljust", "rjust", "center", "_method_rule",
    "_attr_rule", "_bind_order", "_attr_kind", "_property", NULL,
  };
  ObjDict *tables[] = {vm->builtins, vm->methods, vm->properties};
  for (int i = 0; names[i]; i++)
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
      Value v;
      if (tables[t] && lang_dict_get(tables[t], lang_str(names[i]), &v) && v_is_obj(v, O_BUILTIN))
        AS_BUILTIN(v)->nondiff = true;
    }
}

bool ad_nondiff_builtin(Value fn) { return v_is_obj(fn, O_BUILTIN) && AS_BUILTIN(fn)->nondiff; }

/* How an op or primitive is differentiated in one mode: a column of
 * ir/builtin_ops.def or ir/ops.def, read through the macros below. */
typedef struct AdRule {
  AdRuleKind kind;
  int sens;             /* AD_SENS: the sensitivity primitive; else -1 */
} AdRule;

#define SENS(p) {AD_SENS, IR_P_##p}
#define RULE {AD_RULE, -1}
#define DEF {AD_DEF, -1}
#define INLINE {AD_INLINE, -1}
#define NONE {AD_NONE, -1}

/* each builtin op's reverse rule */
static const AdRule op_reverse[IR_NBUILTIN_OPS] = {
#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) [IR_B_##e] = rev,
#include "ir/builtin_ops.def"
#undef OP
};

/* each primitive's reverse and forward rules */
static const struct {
  AdRule reverse, forward;
} prim_rules[IR_NPRIMS] = {
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) [IR_P_##e] = {rev, fwd},
#include "ir/ops.def"
#undef PRIM
};

#undef NONE
#undef INLINE
#undef DEF
#undef RULE
#undef SENS

int ad_sens_prim(const ObjBuiltin *b) { return b->op >= 0 ? op_reverse[b->op].sens : -1; }
AdRuleKind ad_prim_reverse(int p) { return prim_rules[p].reverse.kind; }
AdRuleKind ad_prim_forward(int p) { return prim_rules[p].forward.kind; }
int ad_prim_sens(int p) { return prim_rules[p].reverse.sens; }

bool ad_sens_reads_result(int p) { return p == IR_P_RELU_SENS; }

/* The rule J_name of an op whose reverse column is SENS(P), made from P
 * (ad_rules.ms has none, so that the derivative is written once, in P):
 *
 *     J_name(x)    = (y, lambda d: (None, P(d, x, y)))                y = name(x)
 *                    (P(d, y, y) where ad_sens_reads_result(P))
 *     J_name(a, b) = (y, lambda d: (None, P(d, a, b, 0), P(d, a, b, 1)))  y = name(a, b)
 *
 * It is what a call that is no plain call finds (x.exp(), grad(exp),
 * exp passed as a value), and Mist code like any rule, differentiated
 * again through P's Mist definition. */
static Value sens_rule(MistVM *vm, ObjBuiltin *b, int p) {
  IrUnit *u = ir_unit_new();
  Span sp = span_none();
  bool unary = ir_prims[p].arity == 3;
  int n = unary ? 1 : 2;
  IrGraph *g = ir_graph_new(u, lang_str_fmt("J_%s", b->name)->data, NULL, IRG_FUNCTION, sp);
  IrNode *x[2], *in[3] = {ir_const(u, v_obj(b), sp)};
  for (int i = 0; i < n; i++) in[1 + i] = x[i] = ir_param(u, g, lang_str(unary ? "x" : i ? "b" : "a"), sp);
  IrNode *y = ir_apply(u, g, n + 1, in, sp);
  IrGraph *back = ir_graph_new(u, lang_str_fmt("J_%s_back", b->name)->data, g, IRG_FUNCTION, sp);
  IrNode *d = ir_param(u, back, lang_str("d"), sp);
  IrNode *items[3] = {ir_const(u, v_none(), sp)};
  if (unary) items[1] = ir_prim_apply(u, back, p, sp, 3, d, ad_sens_reads_result(p) ? y : x[0], y);
  else
    for (int i = 0; i < 2; i++) items[1 + i] = ir_prim_apply(u, back, p, sp, 4, d, x[0], x[1], ir_const(u, v_int(i), sp));
  back->ret = ir_prim_applyv(u, back, IR_P_MAKE_TUPLE, sp, n + 1, items);
  g->ret = ir_prim_apply(u, g, IR_P_MAKE_TUPLE, sp, 2, y, ir_const_graph(u, back, sp));
#ifndef NDEBUG
  if (!ir_verify_unit(vm, u)) return v_unbound();
#endif
  return v_obj(ev_closure(vm, g, NULL));
}

/* Whether module m binds name, loaded or not (ObjModule.lazy): a rule
 * asked about is not loaded */
static bool module_defines(ObjModule *m, ObjStr *name) {
  Value v;
  if (m->lazy && lang_dict_get(m->lazy->index, name, &v)) return true;
  return m->names && lang_dict_get(m->names, name, &v) && m->slots[v.i].tag != V_UNBOUND;
}

/* ad_rules' J_name for each SENS op it does not define itself (sum's
 * J_sum covers its axis and start arguments too) */
static void install_sens_rules(MistVM *vm, ObjModule *rules) {
  for (int op = 0; op < IR_NBUILTIN_OPS; op++) {
    const char *name = ir_builtin_ops[op].name;
    Value b;
    if (op_reverse[op].sens < 0 || module_defines(rules, lang_str_fmt("J_%s", name))) continue;
    if (!lang_dict_get(vm->builtins, lang_str(name), &b) || !v_is_obj(b, O_BUILTIN)) continue;
    Value rule = sens_rule(vm, AS_BUILTIN(b), op_reverse[op].sens);
    if (rule.tag != V_UNBOUND) ev_set_global(rules, lang_str_fmt("J_%s", name), rule);
  }
}


/* The Mist definition of sensitivity primitive p (stdlib/ad_sens.ms),
 * Unbound with an error raised when it cannot be had. */
Value ad_sens_definition(MistVM *vm, int p) {
  AdState *st = ad_state(vm);
  if (!st->sens_fns) {
    Value *fns = lang_alloc(IR_NPRIMS * sizeof *fns);
    for (int i = 0; i < IR_NPRIMS; i++) fns[i] = v_unbound();
    st->sens_fns = fns;
  }
  if (st->sens_fns[p].tag != V_UNBOUND) return st->sens_fns[p];
  ObjModule *m = ad_stdlib_module(vm, "ad_sens");
  if (!m) return v_unbound();
  Value fn = ad_module_global(vm, m, "", ir_prims[p].name);
  if (fn.tag == V_UNBOUND) {
    lang_raise(vm, "NameError", "%s is missing from stdlib/ad_sens.ms", ir_prims[p].name);
    return fn;
  }
  st->sens_fns[p] = fn;
  return fn;
}


/* vm->ad->sens: what the C fast paths of prims_sens.c leave (set when
 * the builtins are registered, so that a printed derivative runs). */
bool ad_sens_hook(MistVM *vm, int p, int argc, const Value *argv, Value *out) {
  Value fn = ad_sens_definition(vm, p);
  if (fn.tag == V_UNBOUND) return false;
  return vm->call(vm, fn, argc, argv, NULL, out);
}
