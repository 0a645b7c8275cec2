/* forward.c: forward-mode automatic differentiation (jvp) as a graph
 * transformation of its own.
 *
 * For a graph G(p1..pn) the transform makes FG(tans, p1..pn): the same
 * computation, with every node y paired with a node for its tangent ty,
 * returning (value, tangent).  `tans` is a tuple of the parameters'
 * tangents (None, or shorter than n, means zero for the rest), so
 * parameters with default values still work.  None is a zero tangent.
 *
 * No backward pass means no continuations: a tail call stays a plain
 * tail call and loops run in constant stack.  Function values become
 * transformed functions; a closure's tangent travels inside it, as the
 * tangents of the values it captured are free variables of its
 * transform, next to the values.
 *
 * Tangent rules: arithmetic and math builtins in stdlib/ad_rules.ms
 * (F_name(x, tx, y, ty...) returns (value, tangent)); structural
 * primitives here, where the tangent follows the structure.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "autodiff/map.h"
#include "ir/eval.h"

typedef struct Fw {
  MistVM *vm;
  IrUnit *u;
  Map val;             /* original node -> its value in the transform */
  Map tan;             /* original node -> its tangent */
  Map fg;              /* original graph -> its transform */
  IrGraph **work;
  int nwork, capwork;
  ObjModule *rules;
  IrGraph *envg;
  bool failed;
} Fw;

static IrNode *knone(Fw *w) { return ir_const(w->u, v_none(), span_none()); }
static IrNode *kint(Fw *w, int64_t i) { return ir_const(w->u, v_int(i), span_none()); }

static IrNode *prim(Fw *w, IrGraph *g, IrPrim p, Span sp, int n, ...) {
  IrNode *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, IrNode *);
  va_end(ap);
  return ir_prim_applyv(w->u, g, p, sp, n, args);
}

static void queue(Fw *w, IrGraph *h) {
  if (w->nwork == w->capwork) {
    w->capwork = w->capwork ? 2 * w->capwork : 16;
    w->work = lang_realloc(w->work, w->capwork * sizeof *w->work);
  }
  w->work[w->nwork++] = h;
}

static const char *fname(IrGraph *h) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "F.%s", h->name->data);
  return sb.data;
}

/* The transform of h: params (tans, p1'..pn'); parameter tangents are
 * read from tans at the top of the body. */
static IrGraph *fgraph(Fw *w, IrGraph *h) {
  IrGraph *f = map_get(&w->fg, h);
  if (f) return f;
  IrGraph *parent = h->parent ? map_get(&w->fg, h->parent) : NULL;
  f = ir_graph_new(w->u, fname(h), parent ? parent : w->envg, h->flags & ~IRG_MODULE, h->span);
  f->display = h->display;
  f->module = h->module;
  f->jsource = h;
  map_put(&w->fg, h, f);
  IrNode *tans = ir_param(w->u, f, lang_str("tans"), h->span);
  for (int i = 0; i < h->nparams; i++) {
    map_put(&w->val, h->params[i], ir_param(w->u, f, h->params[i]->name, h->params[i]->span));
    IrNode *t = prim(w, f, IR_P_TAN_ITEM, h->params[i]->span, 2, tans, kint(w, i));
    if (h->params[i]->name) {
      StrBuf sb;
      sb_init(&sb);
      sb_printf(&sb, "t%s", h->params[i]->name->data);
      t->name = lang_str(sb.data);
    }
    map_put(&w->tan, h->params[i], t);
  }
  queue(w, h);
  return f;
}

static Value rule_for(Fw *w, const char *name) { return ad_module_global(w->rules, "F_", name); }

/* The rule a call is made with: F_name, or its float fast path in C
 * (tangents.c) for the hottest */
static Value rule_called(Fw *w, const char *name) {
  Value fast = ad_fast_F_rule(w->vm, name);
  return fast.tag != V_UNBOUND ? fast : rule_for(w, name);
}

/* The value of input x in the transform of graph g (emitting into g). */
static IrNode *val(Fw *w, IrNode *x, IrGraph *g) {
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    if (h) return ir_const_graph(w->u, fgraph(w, h), x->span);
    if (lang_holds_function(x->value)) return prim(w, g, IR_P_F, x->span, 1, x);
    return x;
  }
  IrNode *v = map_get(&w->val, x);
  if (!v) {
    w->failed = true;
    lang_raise_at(w->vm, x->span, "TypeError", "internal error: no forward value for a node");
    return knone(w);
  }
  return v;
}

static IrNode *tangent(Fw *w, IrNode *x) {
  if (x->kind == IR_CONST) return knone(w);
  IrNode *t = map_get(&w->tan, x);
  return t ? t : knone(w);
}

static void set(Fw *w, IrNode *y, IrNode *v, IrNode *t) {
  if (v->kind == IR_APPLY && !v->name) v->name = y->name;
  if (t->kind == IR_APPLY && !t->name && y->name) {
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "t%s", y->name->data);
    t->name = lang_str(sb.data);
  }
  map_put(&w->val, y, v);
  map_put(&w->tan, y, t);
}

/* t = callee(args); value t[0], tangent t[1] */
static void pair(Fw *w, IrGraph *g, IrNode *y, IrNode *callee, int n, IrNode **args) {
  IrNode **in = lang_alloc((n + 1) * sizeof *in);
  in[0] = callee;
  memcpy(in + 1, args, n * sizeof *args);
  IrNode *t = ir_apply(w->u, g, n + 1, in, y->span);
  set(w, y, prim(w, g, IR_P_GETITEM, y->span, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, y->span, 2, t, kint(w, 1)));
}

/* A call of a function value or graph: f'((ta...), a...) */
static IrNode *call_args(Fw *w, IrGraph *g, IrNode *y, int from, IrNode **args) {
  int n = y->nin - from;
  IrNode **ts = lang_alloc((n ? n : 1) * sizeof *ts);
  for (int j = 0; j < n; j++) {
    args[j + 1] = val(w, y->in[from + j], g);
    ts[j] = tangent(w, y->in[from + j]);
  }
  args[0] = ir_prim_applyv(w->u, g, IR_P_MAKE_TUPLE, y->span, n, ts);
  return args[0];
}

static void step(Fw *w, IrGraph *h, IrGraph *g, int i, bool tail) {
  IrNode *y = h->nodes[i];
  Span sp = y->span;
  int p = ir_node_prim(y);
  int nargs = y->nin - 1;
  IrNode **a = lang_alloc((2 * nargs + 2) * sizeof *a);
  IrNode **in = y->in;
  if (p >= 0) {
    for (int j = 0; j < nargs; j++) a[j] = val(w, in[j + 1], g);
    IrNode *v, *t;
    switch (p) {
    case IR_P_GLOBAL:
      v = prim(w, g, IR_P_F, sp, 1, prim(w, g, IR_P_GLOBAL, sp, 1, in[1]));
      set(w, y, v, knone(w));
      return;
    case IR_P_STOP_GRADIENT: set(w, y, prim(w, g, IR_P_STOP_GRADIENT, sp, 1, a[0]), knone(w)); return;
    case IR_P_CHECK_BOUND:
    case IR_P_CHECK_DIFF:
    case IR_P_FLOAT_ARG:
      set(w, y, ir_prim_applyv(w->u, g, p, sp, nargs, a), tangent(w, in[1]));
      return;
    case IR_P_MAKE_TUPLE:
    case IR_P_MAKE_LIST: {
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      IrNode **ts = lang_alloc((nargs ? nargs : 1) * sizeof *ts);
      for (int j = 0; j < nargs; j++) ts[j] = tangent(w, in[j + 1]);
      set(w, y, v, ir_prim_applyv(w->u, g, p, sp, nargs, ts));
      return;
    }
    case IR_P_MAKE_DICT: {
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      IrNode **ts = lang_alloc((nargs ? nargs : 1) * sizeof *ts);
      for (int j = 0; j < nargs; j++) ts[j] = j % 2 == 0 ? a[j] : tangent(w, in[j + 1]);
      set(w, y, v, ir_prim_applyv(w->u, g, p, sp, nargs, ts));
      return;
    }
    case IR_P_GETITEM:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SENS_ITEM, sp, 2, tangent(w, in[1]), a[1]));
      return;
    case IR_P_SETITEM:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      t = prim(w, g, IR_P_GADD, sp, 2, prim(w, g, IR_P_SENS_WITHOUT, sp, 2, tangent(w, in[1]), a[1]),
               prim(w, g, IR_P_SENS_AT, sp, 3, a[0], a[1], tangent(w, in[3])));
      set(w, y, v, t);
      return;
    case IR_P_UNPACK:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_TAN_TUPLE, sp, 1, tangent(w, in[1])));
      return;
    case IR_P_ITER_SEQ:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SENS_LIKE, sp, 2, v, tangent(w, in[1])));
      return;
    case IR_P_SWITCH:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SWITCH, sp, 3, a[0], tangent(w, in[2]), tangent(w, in[3])));
      return;
    case IR_P_GADD:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_GADD, sp, 2, tangent(w, in[1]), tangent(w, in[2])));
      return;
    /* linear in their sensitivity argument: the tangent is the same
     * operation on tangents */
    case IR_P_ENV_GET:
    case IR_P_SENS_ITEM:
    case IR_P_SENS_WITHOUT:
    case IR_P_TAN_ITEM:
    case IR_P_TAN_TUPLE:
    case IR_P_CONS_TAN:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      a[0] = tangent(w, in[1]);
      set(w, y, v, ir_prim_applyv(w->u, g, p, sp, nargs, a));
      return;
    case IR_P_ENV_SET:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_ENV_SET, sp, 3, tangent(w, in[1]), a[1], tangent(w, in[3])));
      return;
    case IR_P_MAKE_ENV: {
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      IrNode **t = lang_alloc((nargs + 1) * sizeof *t);
      for (int j = 0; j < nargs; j++) t[j] = j % 2 ? tangent(w, in[j + 1]) : a[j];
      set(w, y, v, ir_prim_applyv(w->u, g, IR_P_MAKE_ENV, sp, nargs, t));
      return;
    }
    case IR_P_CONS_LIST:
      /* the tangent chain has the chain's shape */
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_CONS_TAN, sp, 3, tangent(w, in[1]), a[0], a[1]));
      return;
    case IR_P_SENS_AT:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SENS_AT, sp, 3, a[0], a[1], tangent(w, in[3])));
      return;
    case IR_P_JINV_ENV:
    case IR_P_JENV:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, (IrPrim)p, sp, 2, a[0], tangent(w, in[2])));
      return;
    case IR_P_CONS_SENS:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_CONS_SENS, sp, 3, tangent(w, in[1]), a[1], a[2]));
      return;
    case IR_P_SENS_LIKE:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SENS_LIKE, sp, 2, a[0], tangent(w, in[2])));
      return;
    case IR_P_F:
      /* forward over forward (jvp of a function that calls jvp): the
       * F-world value of F(f) is F of F(f), built when it runs (ad_F_F_rule) */
      pair(w, g, y, ir_const(w->u, ad_f_call_rule(w->vm, IR_P_F), sp), 2, (IrNode *[]){a[0], tangent(w, in[1])});
      return;
    case IR_P_J:
    case IR_P_JMASK:
      /* forward over reverse (jvp of grad): the F-world value of J(f) is
       * F of J(f), built when it runs (ad_F_J); a mask only saves work */
      pair(w, g, y, ir_const(w->u, ad_f_call_rule(w->vm, IR_P_J), sp), 2, (IrNode *[]){a[0], tangent(w, in[1])});
      return;
    case IR_P_BP_CALL: {
      /* bp_call(bp, d, n): the call bp(d) (None for a zero d or bp) */
      IrNode *ra[4] = {a[0], a[1], tangent(w, in[2]), a[2]};
      pair(w, g, y, ir_const(w->u, ad_f_call_rule(w->vm, IR_P_BP_CALL), sp), 4, ra);
      return;
    }
    case IR_P_CALL_KW:
      if (in[1]->kind == IR_CONST && v_is_obj(in[1]->value, O_BUILTIN) &&
          !ad_builtin_has_signature(w->vm, in[1]->value)) {
        /* a builtin without a rule (print(x, end="")): computed; a
         * tangent reaching it is an error */
        const char *name = AS_BUILTIN(in[1]->value)->name;
        if (!ad_nondiff_builtin(name)) {
          StrBuf sb;
          sb_init(&sb);
          sb_printf(&sb, "through %s() (line %d): it has no derivative rule yet", name, sp.line);
          for (int j = 3; j < y->nin; j++)
            if (in[j]->kind != IR_CONST)
              prim(w, g, IR_P_NO_DERIVATIVE, sp, 2, tangent(w, in[j]), ir_const(w->u, v_obj(lang_str(sb.data)), sp));
        }
        a[0] = in[1];
        set(w, y, ir_prim_applyv(w->u, g, p, sp, nargs, a), knone(w));
        return;
      }
      /* fall through */
    case IR_P_CALL_METHOD:
    case IR_P_GETATTR: {
      /* bound when the call runs (calls.c): call_kw(f, names, tans, args...);
       * the others (x, tx, name, [tans, args...]) */
      IrNode **ra = lang_alloc((nargs + 3) * sizeof *ra);
      int m = 0;
      ra[m++] = a[0];
      if (p != IR_P_CALL_KW) ra[m++] = tangent(w, in[1]);
      ra[m++] = a[1];
      if (p != IR_P_GETATTR) {
        IrNode **ts = lang_alloc((nargs ? nargs : 1) * sizeof *ts);
        for (int j = 2; j < nargs; j++) ts[j - 2] = tangent(w, in[j + 1]);
        ra[m++] = ir_prim_applyv(w->u, g, IR_P_MAKE_TUPLE, sp, nargs - 2, ts);
        for (int j = 2; j < nargs; j++) ra[m++] = a[j];
      }
      pair(w, g, y, ir_const(w->u, ad_f_call_rule(w->vm, p), sp), m, ra);
      return;
    }
    case IR_P_BP_CALL_J: {
      /* bp_call_j(bp, d, n, k1..km): the call bp(k1..km, d), with the
       * tangents of d and of the continuations:
       * _F_bp_call_j(bp, d, td, n, k1, tk1, ..., km, tkm) */
      int m = nargs - 3;
      IrNode **ra = lang_alloc((2 * m + 5) * sizeof *ra);
      ra[0] = a[0];
      ra[1] = a[1];
      ra[2] = tangent(w, in[2]);
      ra[3] = a[2];
      for (int j = 0; j < m; j++) {
        ra[4 + 2 * j] = a[3 + j];
        ra[5 + 2 * j] = tangent(w, in[4 + j]);
      }
      pair(w, g, y, ir_const(w->u, ad_f_call_rule(w->vm, IR_P_BP_CALL_J), sp), 4 + 2 * m, ra);
      return;
    }
    default: {
      if (p >= IR_P_ADD_SENS && p <= IR_P_RELU_SENS) {
        /* a sensitivity primitive of a derivative (jvp of grad): a call
         * of its Mist definition, transformed */
        Value def = ad_sens_definition(w->vm, p), fdef;
        if (def.tag == V_UNBOUND || !ad_F_value(w->vm, def, &fdef)) {
          w->failed = true;
          return;
        }
        IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
        call_args(w, g, y, 1, ca + 1);
        ca[0] = ir_const(w->u, fdef, sp);
        IrNode *t = ir_apply(w->u, g, nargs + 2, ca, sp);
        set(w, y, prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 1)));
        return;
      }
      Value rule = (ir_prims[p].flags & P_DIFF) ? rule_called(w, ir_prims[p].name) : v_unbound();
      if (rule.tag == V_UNBOUND) {
        if (ir_prims[p].flags & P_DIFF) {
          w->failed = true;
          lang_raise_at(w->vm, sp, "TypeError", "no tangent rule for the primitive %s", ir_prims[p].name);
          return;
        }
        set(w, y, ir_prim_applyv(w->u, g, p, sp, nargs, a), knone(w));
        return;
      }
      IrNode **ra = lang_alloc((2 * nargs + 1) * sizeof *ra);
      for (int j = 0; j < nargs; j++) {
        ra[2 * j] = a[j];
        ra[2 * j + 1] = tangent(w, in[j + 1]);
      }
      pair(w, g, y, ir_const(w->u, rule, sp), 2 * nargs, ra);
      return;
    }
    }
  }
  IrNode *callee = in[0];
  const char *twin = callee->kind == IR_CONST ? ad_mist_twin(callee->value, true) : NULL;
  if (twin) {
    /* jvp, jacobian, hessian: their Mist definitions, transformed */
    ObjModule *m = ad_stdlib_module(w->vm, "ad");
    Value def = m ? ad_module_global(m, "", twin) : v_unbound(), fdef;
    if (def.tag == V_UNBOUND || !ad_F_value(w->vm, def, &fdef)) {
      if (def.tag == V_UNBOUND && m) lang_raise(w->vm, "NameError", "%s is missing from stdlib/ad.ms", twin);
      w->failed = true;
      return;
    }
    IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
    call_args(w, g, y, 1, ca + 1);
    ca[0] = ir_const(w->u, fdef, sp);
    IrNode *t = ir_apply(w->u, g, nargs + 2, ca, sp);
    set(w, y, prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 1)));
    return;
  }
  if (callee->kind == IR_CONST && ad_is_fast_F_rule(callee->value)) {
    /* a forward rule's fast path, in a transform of a forward transform
     * (jvp inside jvp): the transform of the Mist rule it stands for */
    Value def = ad_fast_F_rule_source(w->vm, callee->value), fdef;
    if (def.tag == V_UNBOUND || !ad_F_value(w->vm, def, &fdef)) {
      w->failed = true;
      return;
    }
    IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
    call_args(w, g, y, 1, ca + 1);
    ca[0] = ir_const(w->u, fdef, sp);
    IrNode *t = ir_apply(w->u, g, nargs + 2, ca, sp);
    set(w, y, prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 1)));
    return;
  }
  if (callee->kind == IR_CONST && v_is_obj(callee->value, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(callee->value);
    Value rule = ad_is_packed(callee->value) ? rule_for(w, b->name) : rule_called(w, b->name);
    if (rule.tag != V_UNBOUND && ad_is_packed(callee->value) && nargs >= 1) {
      /* vjp(f, x1..xn): F_vjp(f, tf, (x1..xn), (tx1..txn)) */
      IrNode **xs = lang_alloc(nargs * sizeof *xs), **ts = lang_alloc(nargs * sizeof *ts);
      for (int j = 1; j < nargs; j++) {
        xs[j - 1] = val(w, in[j + 1], g);
        ts[j - 1] = tangent(w, in[j + 1]);
      }
      IrNode *ra[4] = {val(w, in[1], g), tangent(w, in[1]), ir_prim_applyv(w->u, g, IR_P_MAKE_TUPLE, sp, nargs - 1, xs),
                       ir_prim_applyv(w->u, g, IR_P_MAKE_TUPLE, sp, nargs - 1, ts)};
      pair(w, g, y, ir_const(w->u, rule, sp), 4, ra);
    } else if (rule.tag != V_UNBOUND) {
      IrNode **ra = lang_alloc((2 * nargs + 1) * sizeof *ra);
      for (int j = 0; j < nargs; j++) {
        ra[2 * j] = val(w, in[j + 1], g);
        ra[2 * j + 1] = tangent(w, in[j + 1]);
      }
      pair(w, g, y, ir_const(w->u, rule, sp), 2 * nargs, ra);
    } else {
      for (int j = 0; j < nargs; j++) a[j] = val(w, in[j + 1], g);
      if (!ad_nondiff_builtin(b->name)) {
        /* no rule: a tangent reaching it is an error, never a silent zero */
        StrBuf sb;
        sb_init(&sb);
        sb_printf(&sb, "through %s() (line %d): it has no derivative rule yet", b->name, sp.line);
        for (int j = 1; j < y->nin; j++)
          if (in[j]->kind != IR_CONST)
            prim(w, g, IR_P_NO_DERIVATIVE, sp, 2, tangent(w, in[j]), ir_const(w->u, v_obj(lang_str(sb.data)), sp));
      }
      int low = ad_lowering_builtin(callee->value);
      /* a keyword call's binding, in a derivative: its callee is
       * transformed once more here, with tangents first */
      if (low == AD_BIND_ORDER && nargs == 5 && in[5]->kind == IR_CONST && in[5]->value.tag == V_INT)
        a[4] = kint(w, in[5]->value.i + 1);
      IrNode **ci = lang_alloc((nargs + 1) * sizeof *ci);
      ci[0] = callee;
      memcpy(ci + 1, a, nargs * sizeof *a);
      IrNode *v = ir_apply(w->u, g, nargs + 1, ci, sp);
      /* a rule found for a method call is a function of this world */
      if (low == AD_RULE_OF) v = prim(w, g, IR_P_F, sp, 1, v);
      set(w, y, v, knone(w));
    }
    return;
  }
  /* a graph or a function value */
  IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
  call_args(w, g, y, 1, ca + 1);
  ca[0] = val(w, callee, g);
  IrNode *t = ir_apply(w->u, g, nargs + 2, ca, sp);
  if (tail) {
    g->ret = t;
    map_put(&w->val, y, t);
    return;
  }
  set(w, y, prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 1)));
}

static void fill(Fw *w, IrGraph *h) {
  IrGraph *g = map_get(&w->fg, h);
  int n = h->nnodes;
  IrNode *last = n ? h->nodes[n - 1] : NULL;
  bool tail = last && h->ret == last && !(last->in[0]->kind == IR_CONST && v_is_obj(last->in[0]->value, O_BUILTIN));
  for (int i = 0; i < n && !w->failed; i++) step(w, h, g, i, tail && i == n - 1);
  if (w->failed || (tail && g->ret)) return;
  IrNode *r = h->ret ? h->ret : knone(w);
  g->ret = prim(w, g, IR_P_MAKE_TUPLE, h->span, 2, val(w, r, g), tangent(w, r));
}

/* The forward transform of g as a root: its free variables become pairs
 * of parameters (value, tangent) of an environment graph, in g->fv
 * order. */
IrGraph *ad_forward(MistVM *vm, IrGraph *g) {
  if (g->froot) return g->froot;
  Fw w = {0};
  w.vm = vm;
  w.u = ir_unit_new();
  if (!(w.rules = ad_stdlib_module(vm, "ad_rules"))) return NULL;
  ir_free_vars(g);
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "F.%s.env", g->name->data);
  w.envg = ir_graph_new(w.u, sb.data, NULL, 0, g->span);
  w.envg->module = g->module;
  w.envg->ret = knone(&w);
  for (int i = 0; i < g->nfv; i++) {
    map_put(&w.val, g->fv[i], ir_param(w.u, w.envg, g->fv[i]->name, g->fv[i]->span));
    map_put(&w.tan, g->fv[i], ir_param(w.u, w.envg, NULL, g->fv[i]->span));
  }
  IrGraph *fg = fgraph(&w, g);
  for (int i = 0; i < w.nwork && !w.failed; i++) fill(&w, w.work[i]);
  if (w.failed) return NULL;
  for (int i = 0; i < w.nwork; i++) {
    IrGraph *h = w.work[i], *fh = map_get(&w.fg, h);
    if (!h->ndefaults) continue;
    fh->ndefaults = h->ndefaults;
    fh->defaults = lang_alloc(h->ndefaults * sizeof *fh->defaults);
    for (int d = 0; d < h->ndefaults; d++) {
      IrNode *x = h->defaults[d];
      IrNode *m = x->kind == IR_CONST ? x : map_get(&w.val, x);
      if (m == x && x->kind == IR_CONST && (v_is_obj(x->value, O_FUNC) || v_is_obj(x->value, O_BUILTIN))) {
        Value fv;
        if (!ad_F_value(vm, x->value, &fv)) return NULL;
        m = ir_const(w.u, fv, x->span);
      }
      fh->defaults[d] = m ? m : x;
    }
  }
  /* remember what each transform's free variables stand for, so F(J(f))
   * can be built from an F closure (F_of_J): the free variable of the
   * source whose value or tangent it is.  Several nodes can share one
   * value or tangent (check_bound(v) has v's), so the source's own free
   * variables are looked for first; the inverse maps settle the rest. */
  Map inv = {0}, invt = {0};
  for (size_t i = 0; i < w.val.cap; i++)
    if (w.val.keys[i]) map_put(&inv, w.val.vals[i], (void *)w.val.keys[i]);
  for (size_t i = 0; i < w.tan.cap; i++)
    if (w.tan.keys[i]) map_put(&invt, w.tan.vals[i], (void *)w.tan.keys[i]);
  for (int i = 0; i < w.nwork; i++) {
    IrGraph *h = w.work[i], *fh = map_get(&w.fg, h);
    ir_free_vars(h);
    ir_free_vars(fh);
    fh->forig = lang_alloc((fh->nfv ? fh->nfv : 1) * sizeof *fh->forig);
    fh->ftan = lang_alloc_atomic((fh->nfv ? fh->nfv : 1) * sizeof *fh->ftan);
    for (int k = 0; k < fh->nfv; k++) {
      fh->forig[k] = NULL;
      for (int j = 0; j < h->nfv && !fh->forig[k]; j++) {
        if (map_get(&w.val, h->fv[j]) == fh->fv[k]) fh->forig[k] = h->fv[j], fh->ftan[k] = false;
        else if (map_get(&w.tan, h->fv[j]) == fh->fv[k]) fh->forig[k] = h->fv[j], fh->ftan[k] = true;
      }
      if (fh->forig[k]) continue;
      fh->forig[k] = map_get(&inv, fh->fv[k]);
      fh->ftan[k] = !fh->forig[k];
      if (!fh->forig[k]) fh->forig[k] = map_get(&invt, fh->fv[k]);
    }
  }
#ifndef NDEBUG
  if (!ir_verify_unit(vm, w.u)) return NULL;
#endif
  g->froot = fg;
  return fg;
}

static bool F_of_J(MistVM *vm, Value xf, Value tx, Value *vout, Value *tout);

/* F_of_J of a value that is not a function: J of the functions inside
 * a container, the tangents of the others kept */
static bool F_of_J_item(MistVM *vm, Value xf, Value *out) {
  Value t;
  return F_of_J(vm, xf, v_none(), out, &t);
}

static bool F_of_J(MistVM *vm, Value xf, Value tx, Value *vout, Value *tout) {
  *tout = tx;
  if (v_is_obj(xf, O_TUPLE) || v_is_obj(xf, O_LIST) || v_is_obj(xf, O_DICT))
    return ad_map_functions(vm, xf, F_of_J_item, vout);
  if (!v_is_obj(xf, O_FUNC)) {
    /* a builtin in a forward world takes the graph for each call's shape
     * (builtins.c); one of no world is its own J */
    if (ad_is_shaped_builtin(xf)) return ad_builtin_F_of_J(vm, xf, vout);
    if (v_is_obj(xf, O_BUILTIN)) return ad_J_value(vm, xf, vout);
    *vout = xf;
    return true;
  }
  ObjFunc *ff = AS_FUNC(xf);
  IrGraph *fg = ff->graph, *h = fg->jsource;
  if (!h || !fg->forig)
    return lang_raise(vm, "TypeError", "cannot take jvp of a derivative of this function yet");
  /* the captured values of h and their tangents, from the F closure */
  ir_free_vars(h);
  ir_free_vars(fg);
  if (!fg->forig) return lang_raise(vm, "TypeError", "cannot take jvp of a derivative of this function yet");
  Value *hv = lang_alloc((2 * h->nfv + 1) * sizeof *hv);
  for (int i = 0; i < 2 * h->nfv; i++) hv[i] = v_none();
  for (int k = 0; k < fg->nfv && k < ff->nenv; k++)
    for (int i = 0; i < h->nfv; i++)
      if (fg->forig[k] == h->fv[i]) hv[2 * i + fg->ftan[k]] = ff->env[k];
  IrGraph *jg = ad_reverse(vm, h);
  if (!jg) return false;
  IrGraph *fjg = ad_forward(vm, jg);
  if (!fjg) return false;
  IrGraph *jenv = jg->parent, *fjenv = fjg->parent;
  ir_free_vars(jg);
  ir_free_vars(fjg);
  Value *env = lang_alloc((fjg->nfv ? fjg->nfv : 1) * sizeof *env);
  for (int k = 0; k < fjg->nfv; k++) {
    int i = ad_env_param(fjenv, fjg->fv[k]);
    env[k] = v_none();
    if (i < 0 || i / 2 >= jg->nfv) continue;
    /* J(h)'s free variable i/2 is parameter m of its env graph: h's m-th */
    int m = ad_env_param(jenv, jg->fv[i / 2]);
    if (m < 0 || m >= h->nfv) continue;
    Value jv, jt;
    if (!F_of_J(vm, hv[2 * m], hv[2 * m + 1], &jv, &jt)) return false;
    env[k] = i % 2 == 0 ? jv : jt;
  }
  *vout = v_obj(ev_closure(vm, fjg, env));
  *tout = v_none();
  return true;
}

static bool F_of_F(MistVM *vm, Value xf, Value *out);

static bool F_of_F_item(MistVM *vm, Value xf, Value *out) { return F_of_F(vm, xf, out); }

/* F of F(x) in a forward world: x's value there is xf, a closure of F(h)
 * capturing, for each free variable of h, its value and its tangent in
 * that (outer) world.  F(x) there is a closure of the inner transform,
 * whose own tangents of what it captured are zero; its value in the
 * outer world is a closure of F(F(h)), the outer transform outermost:
 * called as (outer tangents, inner tangents, args...), it returns
 * ((y, inner ty), (outer Ty, its inner tangent)).  Its environment: for
 * each free variable of F(h) (a value v or an inner tangent t of h's),
 * the value and the outer tangent: v's value lifted the same way, v's
 * outer tangent from xf, and zeros for t. */
static bool F_of_F(MistVM *vm, Value xf, Value *out) {
  if (v_is_obj(xf, O_TUPLE) || v_is_obj(xf, O_LIST) || v_is_obj(xf, O_DICT))
    return ad_map_functions(vm, xf, F_of_F_item, out);
  if (ad_is_shaped_builtin(xf)) return ad_builtin_F_of_F(vm, xf, F_of_F, out);
  if (v_is_obj(xf, O_BUILTIN)) return ad_F_value(vm, xf, out);
  if (!v_is_obj(xf, O_FUNC)) {
    *out = xf;
    return true;
  }
  ObjFunc *ff = AS_FUNC(xf);
  IrGraph *fg = ff->graph, *h = fg->jsource;
  if (!h || !fg->forig) return lang_raise(vm, "TypeError", "cannot take jvp inside jvp of this function yet");
  ir_free_vars(h);
  ir_free_vars(fg);
  /* h's captured values and their outer tangents, from the closure */
  Value *hv = lang_alloc((2 * h->nfv + 1) * sizeof *hv);
  for (int i = 0; i < 2 * h->nfv; i++) hv[i] = v_none();
  for (int k = 0; k < fg->nfv && k < ff->nenv; k++)
    for (int i = 0; i < h->nfv; i++)
      if (fg->forig[k] == h->fv[i]) hv[2 * i + fg->ftan[k]] = ff->env[k];
  IrGraph *f1 = ad_forward(vm, h);
  IrGraph *f2 = f1 ? ad_forward(vm, f1) : NULL;
  if (!f2) return false;
  ir_free_vars(f1);
  ir_free_vars(f2);
  Value *env = lang_alloc((f2->nfv ? f2->nfv : 1) * sizeof *env);
  for (int k = 0; k < f2->nfv; k++) {
    env[k] = v_none();
    /* f2's free variable k: F(h)'s free variable j, or its outer tangent */
    int i2 = ad_env_param(f2->parent, f2->fv[k]), j = i2 / 2;
    if (i2 < 0 || j >= f1->nfv) return lang_raise(vm, "TypeError", "internal error: a free variable of F(F(%s))", h->name->data);
    /* which is h's free variable m, or its inner tangent (zero) */
    int i1 = ad_env_param(f1->parent, f1->fv[j]), m = i1 / 2;
    if (i1 < 0 || m >= h->nfv) return lang_raise(vm, "TypeError", "internal error: a free variable of F(%s)", h->name->data);
    if (i1 % 2) continue;
    if (i2 % 2) env[k] = hv[2 * m + 1];
    else if (!F_of_F(vm, hv[2 * m], &env[k])) return false;
  }
  *out = v_obj(ev_closure(vm, f2, env));
  return true;
}

/* _F_F(xf, tx) -> (F-world value of F(x), tangent): a function's
 * tangent travels inside it */
bool ad_F_F_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Value v;
  if (argc != 2) return lang_raise(vm, "TypeError", "bad _F_F");
  if (!F_of_F(vm, argv[0], &v)) return false;
  *out = lang_tuple_of(2, v, v_none());
  return true;
}

/* The ordinary value behind a forward-transformed one: for a closure of
 * F(h), the closure of h over the (ordinary) values it captured, their
 * tangents dropped.  jvp hands back a function output this way. */
Value ad_F_primal(MistVM *vm, Value v) {
  if (!v_is_obj(v, O_FUNC)) return v;
  ObjFunc *ff = AS_FUNC(v);
  IrGraph *fg = ff->graph, *h = fg->jsource;
  if (!h || !fg->forig) return v;
  ir_free_vars(h);
  ir_free_vars(fg);
  Value *env = lang_alloc((h->nfv ? h->nfv : 1) * sizeof *env);
  for (int i = 0; i < h->nfv; i++) {
    env[i] = v_unbound();
    for (int k = 0; k < fg->nfv && k < ff->nenv; k++)
      if (!fg->ftan[k] && fg->forig[k] == h->fv[i]) env[i] = ad_F_primal(vm, ff->env[k]);
  }
  ObjFunc *f = ev_closure(vm, h, env);
  lang_func_share_defaults(f, ff);
  return v_obj(f);
}

/* _F_J(xf, tx) -> (F-world value of J(x), tangent) */
bool ad_F_J_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Value v, t;
  if (argc != 2 || !F_of_J(vm, argv[0], argv[1], &v, &t)) return argc == 2 ? false : lang_raise(vm, "TypeError", "bad _F_J");
  *out = lang_tuple_of(2, v, t);
  return true;
}

/* _F_bp_call(bp, d, td, n) -> (bp(d), its tangent): bp is an F-world function */
bool ad_F_bp_call_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 4) return lang_raise(vm, "TypeError", "bad _F_bp_call");
  if (argv[0].tag == V_NONE || argv[1].tag == V_NONE) {
    Value r, a[3] = {argv[0], argv[1], argv[3]};
    if (!ev_prim_fn(IR_P_BP_CALL)(vm, 3, a, NULL, &r)) return false;
    *out = lang_tuple_of(2, r, v_none());
    return true;
  }
  Value in[2] = {lang_tuple_of(1, argv[2]), argv[1]};
  return vm->call(vm, argv[0], 2, in, NULL, out);
}

/* _F_bp_call_j(bp, d, td, n, k1, tk1, ..., km, tkm) -> (bp(k1..km, d),
 * its tangent): bp_call_j under jvp, bp an F-world function */
bool ad_F_bp_call_j_rule(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc < 4 || argc % 2) return lang_raise(vm, "TypeError", "bad _F_bp_call_j");
  int m = (argc - 4) / 2;
  if (argv[0].tag == V_NONE || argv[1].tag == V_NONE) {
    Value *a = lang_alloc((m + 3) * sizeof *a), r;
    a[0] = argv[0];
    a[1] = argv[1];
    a[2] = argv[3];
    for (int j = 0; j < m; j++) a[3 + j] = argv[4 + 2 * j];
    if (!ev_prim_fn(IR_P_BP_CALL_J)(vm, m + 3, a, NULL, &r)) return false;
    *out = lang_tuple_of(2, r, v_none());
    return true;
  }
  ObjSeq *tans = lang_tuple_new(m + 1);
  Value *in = lang_alloc((m + 2) * sizeof *in);
  for (int j = 0; j < m; j++) {
    in[1 + j] = argv[4 + 2 * j];
    tans->items[j] = argv[5 + 2 * j];
  }
  in[1 + m] = argv[1];
  tans->items[m] = argv[2];
  in[0] = v_obj(tans);
  return vm->call(vm, argv[0], m + 2, in, NULL, out);
}

/* F of a value: closures become closures of their forward transforms,
 * captured values paired with zero tangents. */
bool ad_F_value(MistVM *vm, Value v, Value *out) {
  if (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST) || v_is_obj(v, O_DICT)) return ad_map_functions(vm, v, ad_F_value, out);
  if (v_is_obj(v, O_BUILTIN) || v_is_obj(v, O_BOUND)) return ad_builtin_transform(vm, v, 'F', out);
  if (v_is_obj(v, O_FUNC)) {
    ObjFunc *f = AS_FUNC(v);
    IrGraph *fg = ad_forward(vm, f->graph);
    if (!fg) return false;
    IrGraph *envg = fg->parent;
    ir_free_vars(fg);
    Value *env = lang_alloc((fg->nfv ? fg->nfv : 1) * sizeof *env);
    for (int k = 0; k < fg->nfv; k++) {
      int i = ad_env_param(envg, fg->fv[k]);
      if (i < 0)
        return lang_raise(vm, "TypeError", "internal error: free variable of F(%s)", f->graph->name->data);
      env[k] = v_none();   /* a tangent parameter (odd position) is zero */
      if (i % 2 == 0 && i / 2 < f->nenv && !ad_F_value(vm, f->env[i / 2], &env[k])) return false;
    }
    *out = v_obj(ev_closure(vm, fg, env));
    return true;
  }
  *out = v;
  return true;
}
