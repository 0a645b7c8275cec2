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
#include "ir/eval.h"
#include "ir/map.h"
#include "lang/gc.h"

typedef struct Fw {
  MistVM *vm;
  IrUnit *u;
  NodeMap val;             /* original node -> its value in the transform */
  NodeMap tan;             /* original node -> its tangent */
  NodeMap fg;              /* original graph -> its transform */
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

/* Whether h is a block of the parser's without parameters (a branch of
 * an if, a loop's header, body or exit), which is only ever called
 * right where it is named or as a branch of a switch called right away:
 * its transform takes no tangents, so that its calls keep that shape
 * (the interpreter and graph mode run such a switch as blocks of the
 * caller's frame, docs/jit.md) instead of making a closure per turn.
 * Not a backward pass of reverse mode's (jvp of grad), which is a
 * branch but called through a value, as any function is: with tangents. */
static bool bare(const IrGraph *h) {
  return h && h->nparams == 0 && !(h->flags & (IRG_FUNCTION | IRG_BACK)) &&
         (h->flags & (IRG_BRANCH | IRG_LOOP | IRG_JOIN | IRG_BODY));
}

/* Whether a call of x without arguments is a call of bare graphs: x one,
 * or a switch between two */
static bool bare_callee(IrNode *x) {
  if (x->kind == IR_CONST) return bare(ir_node_graph(x));
  return ir_node_prim(x) == IR_P_SWITCH && x->nin == 4 && bare(ir_node_graph(x->in[2])) && bare(ir_node_graph(x->in[3]));
}

/* The transform of h: params (tans, p1'..pn'); parameter tangents are
 * read from tans at the top of the body.  A bare graph's has none. */
static IrGraph *fgraph(Fw *w, IrGraph *h) {
  IrGraph *f = ir_map_get(&w->fg, h);
  if (f) return f;
  IrGraph *parent = h->parent ? ir_map_get(&w->fg, h->parent) : NULL;
  f = ir_graph_new(w->u, fname(h), parent ? parent : w->envg, h->flags & ~IRG_MODULE, h->span);
  f->display = h->display;
  f->module = h->module;
  f->jsource = h;
  ir_map_put(&w->fg, h, f);
  if (bare(h)) {
    queue(w, h);
    return f;
  }
  IrNode *tans = ir_param(w->u, f, lang_str("tans"), h->span);
  for (int i = 0; i < h->nparams; i++) {
    ir_map_put(&w->val, h->params[i], ir_param(w->u, f, h->params[i]->name, h->params[i]->span));
    IrNode *t = prim(w, f, IR_P_TAN_ITEM, h->params[i]->span, 2, tans, kint(w, i));
    if (h->params[i]->name) {
      StrBuf sb;
      sb_init(&sb);
      sb_printf(&sb, "t%s", h->params[i]->name->data);
      t->name = lang_str(sb.data);
    }
    ir_map_put(&w->tan, h->params[i], t);
  }
  queue(w, h);
  return f;
}

static Value rule_for(Fw *w, const char *name) { return ad_module_global(w->vm, w->rules, "F_", name); }

/* The rule a call is made with: F_name, or its float fast path in C
 * (tangents.c) for the hottest */
static Value rule_called(Fw *w, const char *name, bool op, int id) {
  Value fast = ad_fast_F_rule(w->vm, op, id);
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
  IrNode *v = ir_map_get(&w->val, x);
  if (!v) {
    w->failed = true;
    lang_raise_at(w->vm, x->span, "TypeError", "internal error: no forward value for a node");
    return knone(w);
  }
  return v;
}

static IrNode *tangent(Fw *w, IrNode *x) {
  if (x->kind == IR_CONST) return knone(w);
  IrNode *t = ir_map_get(&w->tan, x);
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
  ir_map_put(&w->val, y, v);
  ir_map_put(&w->tan, y, t);
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

/* y = _Fn(op, depth, x1, tx1, x2, tx2...) for y's inputs from the
 * first (nest.c), its value and tangent the result's two items */
static void nested_rule(Fw *w, IrGraph *g, IrNode *y, IrNode *op, IrNode *depth, int first) {
  int n = y->nin - first;
  IrNode **ra = lang_alloc((2 * n + 2) * sizeof *ra);
  ra[0] = op;
  ra[1] = depth;
  for (int j = 0; j < n; j++) {
    ra[2 + 2 * j] = val(w, y->in[first + j], g);
    ra[3 + 2 * j] = tangent(w, y->in[first + j]);
  }
  pair(w, g, y, ir_const(w->u, ad_nested_rule(w->vm), y->span), 2 * n + 2, ra);
}

/* y = fdef(tangents, args...), fdef a forward-transformed function, for
 * y's arguments from its second input */
static void call_transformed(Fw *w, IrGraph *g, IrNode *y, Value fdef) {
  int nargs = y->nin - 1;
  IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
  call_args(w, g, y, 1, ca + 1);
  ca[0] = ir_const(w->u, fdef, y->span);
  IrNode *t = ir_apply(w->u, g, nargs + 2, ca, y->span);
  set(w, y, prim(w, g, IR_P_GETITEM, y->span, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, y->span, 2, t, kint(w, 1)));
}

/* y = rule(x1, tx1, x2, tx2...), the values a of y's inputs from its
 * second and their tangents */
static void call_rule(Fw *w, IrGraph *g, IrNode *y, Value rule, IrNode **a) {
  int nargs = y->nin - 1;
  IrNode **ra = lang_alloc((2 * nargs + 1) * sizeof *ra);
  for (int j = 0; j < nargs; j++) {
    ra[2 * j] = a[j];
    ra[2 * j + 1] = tangent(w, y->in[j + 1]);
  }
  pair(w, g, y, ir_const(w->u, rule, y->span), 2 * nargs, ra);
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
      /* made whole (sens_like): sens_at of a large value is a part
       * (ir/prims.c), which the rules a tangent goes to do not take */
      set(w, y, v, prim(w, g, IR_P_SENS_LIKE, sp, 2, v, t));
      return;
    case IR_P_UNPACK:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_TAN_TUPLE, sp, 1, tangent(w, in[1])));
      return;
    case IR_P_ITER_SEQ:
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      set(w, y, v, prim(w, g, IR_P_SENS_LIKE, sp, 2, v, tangent(w, in[1])));
      return;
    case IR_P_SWITCH: {
      v = ir_prim_applyv(w->u, g, p, sp, nargs, a);
      /* (between graphs: no switch of their tangents, None) */
      IrNode *ta = tangent(w, in[2]), *tb = tangent(w, in[3]);
      bool none = ta->kind == IR_CONST && ta->value.tag == V_NONE && tb->kind == IR_CONST && tb->value.tag == V_NONE;
      set(w, y, v, none ? knone(w) : prim(w, g, IR_P_SWITCH, sp, 3, a[0], ta, tb));
      return;
    }
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
    case IR_P_CALL_KW:
      if (in[1]->kind == IR_CONST && v_is_obj(in[1]->value, O_BUILTIN) &&
          !ad_builtin_binds(w->vm, in[1]->value, in[2]->value)) {
        /* a builtin without a rule (print(x, end="")): computed; a
         * tangent reaching it is an error */
        const char *name = AS_BUILTIN(in[1]->value)->name;
        if (!ad_nondiff_builtin(in[1]->value)) {
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
    case IR_P_GETATTR:
    case IR_P_F:
    case IR_P_J:
    case IR_P_JMASK:
    case IR_P_BP_CALL:
    case IR_P_BP_CALL_J:
      /* a call or a transform, decided when it runs (nest.c): each
       * input with its tangent */
      nested_rule(w, g, y, kint(w, p), kint(w, 1), 1);
      return;
    default: {
      if (ad_prim_forward(p) == AD_DEF) {
        /* a sensitivity primitive of a derivative (jvp of grad): its
         * rule (ad_sens.ms), or a call of its Mist definition,
         * transformed */
        ObjModule *sm = ad_stdlib_module(w->vm, "ad_sens");
        Value srule = sm ? ad_module_global(w->vm, sm, "F_", ir_prims[p].name) : v_unbound();
        if (srule.tag != V_UNBOUND) {
          call_rule(w, g, y, srule, a);
          return;
        }
        Value def = ad_sens_definition(w->vm, p), fdef;
        if (def.tag == V_UNBOUND || !ad_F_value(w->vm, def, &fdef)) {
          w->failed = true;
          return;
        }
        call_transformed(w, g, y, fdef);
        return;
      }
      Value rule = ad_prim_forward(p) == AD_RULE ? rule_called(w, ir_prims[p].name, false, p) : v_unbound();
      if (rule.tag == V_UNBOUND) {
        if (ir_prims[p].flags & P_DIFF) {
          w->failed = true;
          lang_raise_at(w->vm, sp, "TypeError", "no tangent rule for the primitive %s", ir_prims[p].name);
          return;
        }
        set(w, y, ir_prim_applyv(w->u, g, p, sp, nargs, a), knone(w));
        return;
      }
      call_rule(w, g, y, rule, a);
      return;
    }
    }
  }
  IrNode *callee = in[0];
  const char *twin = callee->kind == IR_CONST ? ad_mist_twin(w->vm, callee->value, true) : NULL;
  if (twin) {
    /* jvp, jacobian, hessian: their Mist definitions, transformed */
    ObjModule *m = ad_stdlib_module(w->vm, "ad");
    Value def = m ? ad_module_global(w->vm, m, "", twin) : v_unbound(), fdef;
    if (def.tag == V_UNBOUND || !ad_F_value(w->vm, def, &fdef)) {
      if (def.tag == V_UNBOUND && m) lang_raise(w->vm, "NameError", "%s is missing from stdlib/ad.ms", twin);
      w->failed = true;
      return;
    }
    call_transformed(w, g, y, fdef);
    return;
  }
  if (callee->kind == IR_CONST && ad_is_nested_rule(callee->value) && nargs >= 2 && in[2]->kind == IR_CONST &&
      in[2]->value.tag == V_INT) {
    /* a call or a transform under one more forward transform */
    nested_rule(w, g, y, in[1], kint(w, in[2]->value.i + 1), 3);
    return;
  }
  if (callee->kind == IR_CONST && ad_is_fast_F_rule(callee->value)) {
    /* a forward rule's fast path, in a transform of a forward transform
     * (jvp inside jvp): the transform of the Mist rule it stands for,
     * itself with a fast path at the second level */
    Value fdef = ad_fast_F_rule_under(w->vm, callee->value);
    if (fdef.tag == V_UNBOUND) {
      w->failed = true;
      return;
    }
    call_transformed(w, g, y, fdef);
    return;
  }
  if (callee->kind == IR_CONST && v_is_obj(callee->value, O_BUILTIN)) {
    ObjBuiltin *b = AS_BUILTIN(callee->value);
    Value rule = ad_is_packed(w->vm, callee->value) ? rule_for(w, b->name) : rule_called(w, b->name, true, b->op);
    if (rule.tag != V_UNBOUND && ad_is_packed(w->vm, callee->value) && nargs >= 1) {
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
      for (int j = 0; j < nargs; j++) a[j] = val(w, in[j + 1], g);
      call_rule(w, g, y, rule, a);
    } else {
      for (int j = 0; j < nargs; j++) a[j] = val(w, in[j + 1], g);
      if (!ad_nondiff_builtin(callee->value)) {
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
  /* a graph or a function value (a bare graph without tangents) */
  IrNode **ca = lang_alloc((nargs + 2) * sizeof *ca);
  IrNode *t;
  if (nargs == 0 && bare_callee(callee)) {
    ca[0] = val(w, callee, g);
    t = ir_apply(w->u, g, 1, ca, sp);
  } else {
    call_args(w, g, y, 1, ca + 1);
    ca[0] = val(w, callee, g);
    t = ir_apply(w->u, g, nargs + 2, ca, sp);
  }
  if (tail) {
    g->ret = t;
    ir_map_put(&w->val, y, t);
    return;
  }
  set(w, y, prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 0)), prim(w, g, IR_P_GETITEM, sp, 2, t, kint(w, 1)));
}

static void fill(Fw *w, IrGraph *h) {
  IrGraph *g = ir_map_get(&w->fg, h);
  int n = h->nnodes;
  IrNode *last = n ? h->nodes[n - 1] : NULL;
  bool tail = last && h->ret == last && !(last->in[0]->kind == IR_CONST && v_is_obj(last->in[0]->value, O_BUILTIN));
  /* (the nodes made for y keep the frames y was inlined from) */
  for (int i = 0; i < n && !w->failed; i++) {
    w->u->inlined = h->nodes[i]->inlined;
    step(w, h, g, i, tail && i == n - 1);
  }
  w->u->inlined = NULL;
  if (w->failed || (tail && g->ret)) return;
  IrNode *r = h->ret ? h->ret : knone(w);
  g->ret = prim(w, g, IR_P_MAKE_TUPLE, h->span, 2, val(w, r, g), tangent(w, r));
}

/* The forward transform of g as a root: its free variables become pairs
 * of parameters (value, tangent) of an environment graph, in g->fv
 * order. */
IrGraph *ad_forward(MistVM *vm, IrGraph *g) {
  AdRoots *roots = ad_roots(vm, g);
  if (roots->froot) return roots->froot;
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
    ir_map_put(&w.val, g->fv[i], ir_param(w.u, w.envg, g->fv[i]->name, g->fv[i]->span));
    ir_map_put(&w.tan, g->fv[i], ir_param(w.u, w.envg, NULL, g->fv[i]->span));
  }
  IrGraph *fg = fgraph(&w, g);
  for (int i = 0; i < w.nwork && !w.failed; i++) fill(&w, w.work[i]);
  if (w.failed) return NULL;
  for (int i = 0; i < w.nwork; i++) {
    IrGraph *h = w.work[i], *fh = ir_map_get(&w.fg, h);
    if (!h->ndefaults) continue;
    fh->ndefaults = h->ndefaults;
    fh->defaults = lang_alloc(h->ndefaults * sizeof *fh->defaults);
    for (int d = 0; d < h->ndefaults; d++) {
      IrNode *x = h->defaults[d];
      IrNode *m = x->kind == IR_CONST ? x : ir_map_get(&w.val, x);
      if (m == x && x->kind == IR_CONST && (v_is_obj(x->value, O_FUNC) || v_is_obj(x->value, O_BUILTIN))) {
        Value fv;
        if (!ad_F_value(vm, x->value, &fv)) return NULL;
        m = ir_const(w.u, fv, x->span);
      }
      fh->defaults[d] = m ? m : x;
    }
  }
  /* remember what each transform's free variables stand for, so J(f)
   * or F(f) can be built from an F closure (nest.c): the free variable of the
   * source whose value or tangent it is.  Several nodes can share one
   * value or tangent (check_bound(v) has v's), so the source's own free
   * variables are looked for first; the inverse maps settle the rest. */
  NodeMap inv = {0}, invt = {0};
  for (size_t i = 0; i < w.val.cap; i++)
    if (w.val.keys[i]) ir_map_put(&inv, w.val.vals[i], (void *)w.val.keys[i]);
  for (size_t i = 0; i < w.tan.cap; i++)
    if (w.tan.keys[i]) ir_map_put(&invt, w.tan.vals[i], (void *)w.tan.keys[i]);
  for (int i = 0; i < w.nwork; i++) {
    IrGraph *h = w.work[i], *fh = ir_map_get(&w.fg, h);
    ir_free_vars(h);
    ir_free_vars(fh);
    fh->forig = lang_alloc((fh->nfv ? fh->nfv : 1) * sizeof *fh->forig);
    fh->ftan = lang_alloc_atomic((fh->nfv ? fh->nfv : 1) * sizeof *fh->ftan);
    for (int k = 0; k < fh->nfv; k++) {
      fh->forig[k] = NULL;
      for (int j = 0; j < h->nfv && !fh->forig[k]; j++) {
        if (ir_map_get(&w.val, h->fv[j]) == fh->fv[k]) fh->forig[k] = h->fv[j], fh->ftan[k] = false;
        else if (ir_map_get(&w.tan, h->fv[j]) == fh->fv[k]) fh->forig[k] = h->fv[j], fh->ftan[k] = true;
      }
      if (fh->forig[k]) continue;
      fh->forig[k] = ir_map_get(&inv, fh->fv[k]);
      fh->ftan[k] = !fh->forig[k];
      if (!fh->forig[k]) fh->forig[k] = ir_map_get(&invt, fh->fv[k]);
    }
  }
#ifndef NDEBUG
  if (!ir_verify_unit(vm, w.u)) return NULL;
#endif
  roots->froot = fg;
  return fg;
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
