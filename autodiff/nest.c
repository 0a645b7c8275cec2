/* nest.c: forward mode's rules for the primitives whose meaning is a
 * call or a transform, at any depth of forward transforms.
 *
 * Most forward rules are Mist code, which a further forward transform
 * (a jvp inside a jvp) simply differentiates again.  A few must look at
 * values when they run: a call with keyword arguments binds them to the
 * callee's parameters, x.name finds a method or a property, J(f) and F(f)
 * transform the function f is, bp_call calls a backpropagator unless it
 * or its argument is None.  Those are one builtin here, _Fn(op, d, ...),
 * for a program forward-transformed d times: each input of the primitive
 * comes with its tangents, 2^d values (the order the transforms
 * interleave them in: value, then for each transform from the outermost
 * in, the same again for its tangent), and the result is the output with
 * its tangents as the transforms nest them: (lower, upper) pairs, upper
 * holding the outermost transform's tangents.  A transform of a call of
 * _Fn(op, d, ...) is _Fn(op, d + 1, ...) with each input followed by its
 * tangent (forward.c), so these rules nest to any depth.
 *
 * Within such a world, a value with its tangents is a "tower": c[mask],
 * mask's bit j set for the tangent in the j-th transform, innermost
 * first.  A function value's tangents travel inside it (its captured
 * values' towers); its own are None.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"

/* ---- towers ---- */

/* Input i's tower from the interleaved arguments: position p holds mask
 * p with its d bits reversed (the outermost transform's bit last). */
static Value *tower_at(const Value *args, int d) {
  int n = 1 << d;
  Value *c = lang_alloc(n * sizeof *c);
  for (int p = 0; p < n; p++) {
    int mask = 0;
    for (int b = 0; b < d; b++)
      if (p >> (d - 1 - b) & 1) mask |= 1 << b;
    c[mask] = args[p];
  }
  return c;
}

static bool all_none(const Value *c, int n) {
  for (int i = 0; i < n; i++)
    if (c[i].tag != V_NONE) return false;
  return true;
}

/* The nested (value, tangent) pairs of a tower of depth d. */
static Value nested(const Value *c, int d) {
  if (d == 0) return c[0];
  int half = 1 << (d - 1);
  Value upper = all_none(c + half, half) ? v_none() : nested(c + half, d - 1);
  return lang_tuple_of(2, nested(c, d - 1), upper);
}

/* A tower from nested pairs (a None upper: zeros). */
static void unnest(Value v, int d, Value *c) {
  if (d == 0) {
    c[0] = v;
    return;
  }
  int half = 1 << (d - 1);
  if (v.tag == V_NONE) {
    for (int i = 0; i < 2 * half; i++) c[i] = v_none();
    return;
  }
  ObjSeq *p = AS_SEQ(v);
  unnest(p->items[0], d - 1, c);
  unnest(p->items[1], d - 1, c + half);
}

/* A tower of value v with zero tangents, nested. */
static Value constant(Value v, int d) {
  int n = 1 << d;
  Value *c = lang_alloc(n * sizeof *c);
  for (int i = 0; i < n; i++) c[i] = v_none();
  c[0] = v;
  return nested(c, d);
}

/* ---- calls ---- */

/* The leading arguments of a call in a world of d forward transforms:
 * the tangent tuples, outermost first, of the n towers ts (NULL: a
 * parameter left to its default), in the callee's order.  The outermost
 * one holds the tangents of everything after it: the inner tuples and
 * the arguments. */
static void leading(Value **ts, int n, int d, Value *out) {
  if (d == 0) return;
  int half = 1 << (d - 1);
  /* the outermost transform's tangents of the inner call's arguments */
  Value **upper = lang_alloc((n + 1) * sizeof *upper), **lower = lang_alloc((n + 1) * sizeof *lower);
  for (int j = 0; j < n; j++) {
    upper[j] = ts[j] ? ts[j] + half : NULL;
    lower[j] = ts[j];
  }
  ObjSeq *t = lang_tuple_new((size_t)(d - 1 + n));
  leading(upper, n, d - 1, t->items);
  for (int j = 0; j < n; j++) t->items[d - 1 + j] = upper[j] ? upper[j][0] : v_none();
  out[0] = v_obj(t);
  leading(lower, n, d - 1, out + 1);
}

/* f(args...) in a world of d forward transforms, the arguments' towers
 * ts in the call's order, the last nkw of them by keyword (names) */
static bool call_in(MistVM *vm, Value f, int d, Value **ts, int argc, ObjSeq *names, Value *out) {
  int nkw = names ? (int)names->len : 0, npos = argc - nkw;
  KwArgs k = {0};
  if (nkw) {
    k.n = nkw;
    k.names = lang_alloc(nkw * sizeof *k.names);
    k.values = lang_alloc(nkw * sizeof *k.values);
    for (int i = 0; i < nkw; i++) {
      k.names[i] = AS_STR(names->items[i]);
      k.values[i] = ts[npos + i][0];
    }
  }
  Value *in = lang_alloc((d + argc + 1) * sizeof *in);
  if (v_is_obj(f, O_FUNC) && AS_FUNC(f)->graph->nparams >= d) {
    /* a transformed closure: its tangents come in its parameters' order */
    ObjFunc *fn = AS_FUNC(f);
    int np = fn->graph->nparams;
    int *where = lang_alloc_atomic((argc + 1) * sizeof *where);
    for (int i = 0; i < d; i++) in[i] = v_none();
    for (int j = 0; j < npos; j++) in[d + j] = ts[j][0];
    Value *params = lang_alloc((np + 1) * sizeof *params);
    if (!ev_bind(vm, fn, NULL, d, d + npos, in, nkw ? &k : NULL, params, where)) return false;
    Value **byparam = lang_alloc((np - d + 1) * sizeof *byparam);
    for (int i = 0; i < np - d; i++) byparam[i] = NULL;
    for (int j = 0; j < argc; j++) byparam[where[j]] = ts[j];
    leading(byparam, np - d, d, params);
    return vm->call(vm, f, np, params, NULL, out);
  }
  /* a builtin of the world taking each call's shape: in the call's order */
  leading(ts, argc, d, in);
  for (int j = 0; j < npos; j++) in[d + j] = ts[j][0];
  return vm->call(vm, f, d + npos, in, nkw ? &k : NULL, out);
}

/* ---- transforms of function values ---- */

static bool lift(MistVM *vm, Value xf, int d, char kind, Value *out);

static bool lift_items(MistVM *vm, Value v, int d, char kind, Value *out) {
  *out = v;
  if (!lang_holds_function(v)) return true;
  if (v_is_obj(v, O_DICT)) {
    ObjDict *dv = AS_DICT(v), *r = lang_dict_new();
    for (size_t i = 0; i < dv->len; i++) {
      Value x;
      if (!lift(vm, dv->entries[i].value, d, kind, &x)) return false;
      lang_dict_put(r, dv->entries[i].key, x);
    }
    *out = v_obj(r);
    return true;
  }
  ObjSeq *s = AS_SEQ(v), *r = v_is_obj(v, O_TUPLE) ? lang_tuple_new(s->len) : lang_list_new(s->len);
  for (size_t i = 0; i < s->len; i++)
    if (!lift(vm, s->items[i], d, kind, &r->items[i])) return false;
  *out = v_obj(r);
  return true;
}

/* kind (J or F) of the function xf is, in a world of d forward
 * transforms (xf's value there).  xf is a closure of F^d(h), capturing
 * the towers of h's free variables; the result a closure of
 * F^d(J(h)), or of F^(d+1)(h) with the new transform innermost (its
 * tangents of what h captured are zero), over the same towers, the
 * functions among them lifted the same way. */
static bool lift(MistVM *vm, Value xf, int d, char kind, Value *out) {
  if (v_is_obj(xf, O_TUPLE) || v_is_obj(xf, O_LIST) || v_is_obj(xf, O_DICT)) return lift_items(vm, xf, d, kind, out);
  if (ad_is_shaped_builtin(xf)) return ad_builtin_lift(vm, xf, d, kind, lift, out);
  if (v_is_obj(xf, O_BUILTIN)) return kind == 'J' ? ad_state(vm)->transform.J_value(vm, xf, out) : ad_state(vm)->transform.F_value(vm, xf, out);
  if (!v_is_obj(xf, O_FUNC)) {
    *out = xf;
    return true;
  }
  ObjFunc *ff = AS_FUNC(xf);
  /* down the d transforms to h: each captured value of xf is the tower
   * entry (h's free variable, mask) */
  int n = ff->nenv;
  IrNode **node = lang_alloc((n + 1) * sizeof *node);
  int *mask = lang_alloc_atomic((n + 1) * sizeof *mask);
  IrGraph *g = ff->graph;
  ir_free_vars(g);
  for (int k = 0; k < n; k++) node[k] = k < g->nfv ? g->fv[k] : NULL, mask[k] = 0;
  for (int level = d - 1; level >= 0; level--) {
    IrGraph *below = g->jsource;
    if (!below || !g->forig) return lang_raise(vm, "TypeError", "cannot differentiate this function inside %s yet", kind == 'J' ? "jvp" : "jvp twice");
    ir_free_vars(below);
    for (int k = 0; k < n; k++) {
      int i = 0;
      while (i < g->nfv && g->fv[i] != node[k]) i++;
      if (i == g->nfv || !g->forig[i]) return lang_raise(vm, "TypeError", "internal error: a captured value of %s", g->name->data);
      if (g->ftan[i]) mask[k] |= 1 << level;
      node[k] = g->forig[i];
    }
    g = below;
  }
  IrGraph *h = g;
  Value **caps = lang_alloc((h->nfv + 1) * sizeof *caps);
  Value *caps0 = lang_alloc((h->nfv + 1) * sizeof *caps0);
  int m = kind == 'F' ? 2 << d : 1 << d;
  for (int i = 0; i < h->nfv; i++) {
    caps0[i] = v_none();
    caps[i] = lang_alloc(m * sizeof **caps);
    for (int j = 0; j < m; j++) caps[i][j] = v_none();
  }
  for (int k = 0; k < n; k++) {
    int i = 0;
    while (i < h->nfv && h->fv[i] != node[k]) i++;
    if (i == h->nfv) return lang_raise(vm, "TypeError", "internal error: a captured value of %s", h->name->data);
    /* (an F: the new transform's bit, 0, is zero; the others move up) */
    int at = kind == 'F' ? mask[k] << 1 : mask[k];
    Value v = ff->env[k];
    if (at == 0 && !lift(vm, v, d, kind, &v)) return false;
    caps[i][at] = v;
  }
  char chain[MAX_TRANSFORMS + 2];
  int len = 0;
  chain[len++] = kind;
  for (int i = 0; i < d && len < MAX_TRANSFORMS; i++) chain[len++] = 'F';
  chain[len] = 0;
  return ad_close_chain(vm, h, chain, caps, caps0, out);
}

/* ---- the rule ---- */

/* _Fn(op, d, towers...): op a primitive (call_kw, call_method, getattr,
 * J, jmask, F, bp_call, bp_call_j), d the depth, then each of the
 * primitive's inputs with its tangents (tower_at); the output's nested
 * tower. */
static bool b_Fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 2 || argv[0].tag != V_INT || argv[1].tag != V_INT || argv[1].i < 1 || argv[1].i > MAX_TRANSFORMS ||
      (argc - 2) % (1 << argv[1].i))
    return lang_raise(vm, "TypeError", "internal error: bad _Fn");
  int op = (int)argv[0].i, d = (int)argv[1].i, n = (argc - 2) >> d;
  Value **in = lang_alloc((n + 1) * sizeof *in);
  for (int i = 0; i < n; i++) in[i] = tower_at(argv + 2 + (i << d), d);
  Value r;
  switch (op) {
  case IR_P_CALL_KW:
    /* (f, names, args...) */
    if (n < 2 || !v_is_obj(in[1][0], O_TUPLE)) return lang_raise(vm, "TypeError", "internal error: bad call_kw");
    return call_in(vm, in[0][0], d, in + 2, n - 2, AS_SEQ(in[1][0]), out);
  case IR_P_CALL_METHOD:
  case IR_P_GETATTR: {
    /* (x, name, args...): x.name in this world, then called */
    if (n < 2 || !v_is_obj(in[1][0], O_STR)) return lang_raise(vm, "TypeError", "internal error: bad %s", ir_prims[op].name);
    ObjStr *name = AS_STR(in[1][0]);
    Value x = in[0][0], prop, f;
    char chain[MAX_TRANSFORMS + 1];
    memset(chain, 'F', d);
    chain[d] = 0;
    if (!v_is_obj(x, O_MODULE) && vm->properties && lang_dict_get(vm->properties, name, &prop)) {
      /* a property: its builtin in this world, applied to x */
      Value pf;
      for (int i = 0; i < d; i++)
        if (!ad_state(vm)->transform.F_value(vm, i ? pf : prop, &pf)) return false;
      if (!call_in(vm, pf, d, in, 1, NULL, &r)) return false;
      if (op == IR_P_GETATTR) {
        *out = r;
        return true;
      }
      Value *c = lang_alloc((1 << d) * sizeof *c);
      unnest(r, d, c);
      return call_in(vm, c[0], d, in + 2, n - 2, NULL, out);
    }
    if (op == IR_P_CALL_METHOD && !ad_method_binds(vm, x, name, n - 2, NULL)) {
      /* arguments x.name's rule does not bind: the call made plainly,
       * for the builtin's own error */
      Value *a = lang_alloc((n + 1) * sizeof *a);
      bool bound;
      if (!ev_lookup_attr(vm, x, name, &f, &bound)) return false;
      int k = 0;
      if (bound) a[k++] = x;
      for (int i = 2; i < n; i++) a[k++] = in[i][0];
      if (!vm->call(vm, f, k, a, NULL, &r)) return false;
      return lang_raise(vm, "TypeError", "cannot differentiate through %s(): it has no derivative rule for these arguments", name->data);
    }
    if (!ad_attr_caps(vm, in[0], name, chain, &f)) return false;
    if (op == IR_P_GETATTR) {
      *out = constant(f, d);
      return true;
    }
    return call_in(vm, f, d, in + 2, n - 2, NULL, out);
  }
  case IR_P_J:
  case IR_P_JMASK:
  case IR_P_F:
    /* (f[, mask, args...]): a mask only saves work */
    if (n < 1) return lang_raise(vm, "TypeError", "internal error: bad %s", ir_prims[op].name);
    if (!lift(vm, in[0][0], d, op == IR_P_F ? 'F' : 'J', &r)) return false;
    /* (the tangents of data pass: its J and its F are itself) */
    in[0][0] = r;
    *out = nested(in[0], d);
    return true;
  case IR_P_BP_CALL:
  case IR_P_BP_CALL_J: {
    /* (bp, dv, n[, k1..km]): bp([k1..km,] dv), or the plain primitive's
     * result when bp or dv is None */
    if (n < 3) return lang_raise(vm, "TypeError", "internal error: bad %s", ir_prims[op].name);
    if (in[0][0].tag == V_NONE || in[1][0].tag == V_NONE) {
      Value *a = lang_alloc(n * sizeof *a);
      for (int i = 0; i < n; i++) a[i] = in[i][0];
      if (!ev_prim_fn((IrPrim)op)(vm, n, a, NULL, &r)) return false;
      *out = constant(r, d);
      return true;
    }
    int m = n - 3;
    Value **ts = lang_alloc((m + 2) * sizeof *ts);
    for (int j = 0; j < m; j++) ts[j] = in[3 + j];
    /* dv and its tangents made whole, as bp_call makes dv: a part of a
     * sensitivity (ir/prims.c) is for the primitives that add them */
    ts[m] = lang_alloc((1 << d) * sizeof(Value));
    for (int k = 0; k < 1 << d; k++)
      if (!ir_sens_dense(vm, in[1][k], &ts[m][k])) return false;
    return call_in(vm, in[0][0], d, ts, m + 1, NULL, out);
  }
  default: return lang_raise(vm, "TypeError", "internal error: no nested forward rule for %s", ir_prims[op].name);
  }
}

bool ad_is_nested_rule(Value fn) { return v_is_obj(fn, O_BUILTIN) && AS_BUILTIN(fn)->fn == b_Fn; }

Value ad_nested_rule(MistVM *vm) {
  Value v = v_unbound();
  lang_dict_get(vm->builtins, lang_str("_Fn"), &v);
  return v;
}

void ad_register_nest(MistVM *vm) { lang_def_builtin(vm, "_Fn", b_Fn, -1, -1); }
