/* infer.c: type and shape inference, and the specialised copies it makes
 * (infer.h; the rule of each primitive and typed builtin is in
 * infer_rules.c; docs/types.md).
 *
 * An abstract interpretation over specialisations.  A specialisation is
 * a graph with the types of its arguments and the context its closure
 * was made in (a specialisation of the enclosing graph, whose node types
 * are the types of the free variables).  Analysing one types its
 * parameters and then each application in schedule order by the rule
 * of what it calls: a primitive's rule, a builtin's, or, for a closure,
 * the specialisation of the closure's graph for the argument types,
 * whose result type is the call's.  Every specialisation is analysed in
 * rounds until no type changes: a recursive call or a loop's call of
 * its own header uses the result type known so far (never at first),
 * and types only grow (each is joined with the last round's), so the
 * rounds reach a fixed point.  To keep their number finite, a graph
 * nested in another has one specialisation per context, its arguments
 * joined over its calls (a loop's header, its body, a branch, a
 * backpropagator), and a top-level graph at most four exact ones and
 * then one whose arguments are the join of the rest.
 *
 * Then the specialisations the asked-for one reaches become copies of
 * their graphs in a new unit: each graph constant naming the copy of the
 * specialisation it makes, each node's type kept in the result
 * (IrTyped.types), never in the graph; the result is kept, by
 * signature, in the side slot of the graph asked for (IR_SIDE_INFER,
 * ir.h), which it dies with.  Errors the rules prove (a
 * shape that cannot broadcast) are raised when the node certainly runs
 * once the asked-for graph is called: it is in its schedule, or in the
 * schedule of a graph it calls directly, before anything that never
 * returns.
 */
#include <string.h>

#include "ir/eval.h"
#include "ir/infer_int.h"
#include "lang/gc.h"

enum {
  MAX_EXACT = 4,        /* exact specialisations of one top-level graph */
  MAX_SPECS = 4000,     /* in one inference: beyond, calls are `any` */
  MAX_ROUNDS = 400,
  /* node typings in one inference, unless its options say fewer:
   * beyond, it gives up with an error, so that a program whose fixed
   * point takes very long (a derivative of a derivative of a loop)
   * costs a bounded time, the same on every run */
  MAX_WORK = 20000000,
};

typedef struct SpecList {
  int n;
  InferSpec **items;
} SpecList;

struct InferSession {
  MistVM *vm;
  const IrInferOpts *opts;
  InferSpec **specs;
  int nspecs, capspecs;
  NodeMap by_graph;     /* graph -> SpecList */
  bool changed;
  bool full;            /* MAX_SPECS reached */
  long work;            /* nodes typed so far (MAX_WORK) */
  InferSpec *reading;   /* the specialisation being analysed */
  NodeMap fv;           /* free variables of the graph asked for: their types */
};

/* What inference keeps about a graph it was asked for, in the graph's
 * side slot IR_SIDE_INFER, so that it dies with the graph: the results
 * by signature, and the one closure of it used when it captures
 * nothing. */
typedef struct CacheEntry {
  int epoch;            /* InferState.epoch when it was made */
  int nargs;
  IrType **args;
  IrTyped *result;
  struct CacheEntry *next;
} CacheEntry;

typedef struct InferSide {
  CacheEntry *entries;
  ObjFunc *plain;
} InferSide;

static InferSide *side_of(IrGraph *g) {
  InferSide *s = ir_side(g, IR_SIDE_INFER);
  return s ? s : ir_side_claim(g, IR_SIDE_INFER, lang_alloc(sizeof *s));
}

/* What the VM keeps while an inference runs, from the first
 * ir_infer_value_type before it until ir_infer returns, so that a value
 * has one type throughout: the context of each closure value typed, and
 * the transforms autodiff made of values.  Emptied when ir_infer
 * returns (keeping them longer would keep every closure ever typed
 * alive). */
typedef struct SigContext {
  IrGraph *g;
  IrType *type;         /* the closure type, its context's types those of g's free variables */
  struct SigContext *next;
} SigContext;

typedef struct InferState {
  NodeMap closures;     /* a closure value -> the context of its captured values */
  SigContext *sigs;     /* the closure types of signatures (kept) */
  struct Transform *transforms;   /* J, F and jmask of values, made once */
  int depth;            /* ir_infer calls running */
  int epoch;            /* ir_infer_forget calls: older cache entries are stale */
} InferState;

/* A transform autodiff made for inference: the same value each time it
 * is asked for, so that its type (a closure's context) is the same in
 * every round of the fixed point. */
typedef struct Transform {
  int kind;
  Obj *of;
  int64_t mask;
  bool floats;
  Value result;
  struct Transform *next;
} Transform;

static InferState *state(MistVM *vm) {
  if (!vm->infer) vm->infer = lang_alloc(sizeof(InferState));
  return vm->infer;
}

/* ---- closure values ---- */

static IrType *closure_value_type(void *ud, ObjFunc *f, int depth) {
  MistVM *vm = ud;
  InferState *st = state(vm);
  InferSpec *ctx = ir_map_get(&st->closures, f);
  if (!ctx) {
    ctx = lang_alloc(sizeof *ctx);
    ctx->value = f;
    ir_map_put(&st->closures, f, ctx);
    IrGraph *g = f->graph;
    if (!g->fv_done) ir_free_vars(g);
    for (int i = 0; i < g->nfv && i < f->nenv; i++)
      ir_map_put(&ctx->types, g->fv[i], ir_type_of_value_with(f->env[i], closure_value_type, vm, depth));
  }
  return ir_type_closure(f->graph, ctx);
}

IrType *ir_infer_closure_sig(MistVM *vm, IrGraph *g, IrType **fvtypes) {
  InferState *st = state(vm);
  if (!g->fv_done) ir_free_vars(g);
  for (SigContext *c = st->sigs; c; c = c->next) {
    if (c->g != g) continue;
    int i = 0;
    while (i < g->nfv && ir_type_eq(ir_map_get(&c->type->ctx->types, g->fv[i]), fvtypes[i])) i++;
    if (i == g->nfv) return c->type;
  }
  /* a closure value's context (no graph), without the value */
  InferSpec *ctx = lang_alloc(sizeof *ctx);
  for (int i = 0; i < g->nfv; i++) ir_map_put(&ctx->types, g->fv[i], fvtypes[i]);
  SigContext *c = lang_alloc(sizeof *c);
  *c = (SigContext){g, ir_type_closure(g, ctx), st->sigs};
  st->sigs = c;
  return c->type;
}

IrType *ir_infer_closure_fv(const IrType *t, int i) {
  if (t->kind != IT_CLOSURE || !t->ctx || t->ctx->g || t->ctx->value || i < 0 || i >= t->graph->nfv) return NULL;
  return ir_map_get(&t->ctx->types, t->graph->fv[i]);
}

IrType *ir_infer_value_type(MistVM *vm, Value v) {
  return ir_type_of_value_with(v, closure_value_type, vm, 0);
}

IrType *ir_infer_value(InferCx *cx, Value v) { return ir_infer_value_type(cx->vm, v); }

ObjFunc *ir_infer_closure_object(InferCx *cx, const IrType *f) {
  if (f->kind != IT_CLOSURE) return NULL;
  if (f->ctx) return f->ctx->g ? NULL : f->ctx->value;
  if (!f->graph->fv_done) ir_free_vars(f->graph);
  if (f->graph->nfv) return NULL;
  InferSide *side = side_of(f->graph);
  if (!side->plain) side->plain = ev_closure(cx->vm, f->graph, NULL);
  return side->plain;
}

bool ir_infer_transform(InferCx *cx, int kind, Value v, int64_t mask, bool floats, Value *out) {
  MistVM *vm = cx->vm;
  InferState *st = state(vm);
  if (!vm->ad || v.tag != V_OBJ) return false;
  for (Transform *t = st->transforms; t; t = t->next)
    if (t->kind == kind && t->of == v.o && t->mask == mask && t->floats == floats) {
      *out = t->result;
      return true;
    }
  bool ok = kind == IR_P_J ? vm->ad->J(vm, v, out)
          : kind == IR_P_F ? vm->ad->F(vm, v, out)
          : vm->ad->Jmask(vm, v, mask, floats, out);
  if (!ok) {
    lang_error_clear(vm);
    return false;
  }
  Transform *t = lang_alloc(sizeof *t);
  *t = (Transform){kind, v.o, mask, floats, *out, st->transforms};
  st->transforms = t;
  return true;
}

/* ---- specialisations ---- */

/* The context a closure of h made in spec S has: the specialisation of
 * h's parent in S's chain; none for a top-level def (its parent is the
 * module's code, which it reads through global) or when not found. */
static InferSpec *context_for(InferSpec *S, IrGraph *h) {
  if (!h->parent || (h->parent->flags & IRG_MODULE)) return NULL;
  for (InferSpec *s = S; s; s = s->ctx)
    if (s->g == h->parent) return s;
  return NULL;
}

static IrType *const_type(InferSpec *S, Value v) {
  if (v_is_obj(v, O_GRAPH)) {
    IrGraph *h = AS_GRAPH(v)->graph;
    return ir_type_closure(h, context_for(S, h));
  }
  return ir_type_of_value(v);
}

/* The specialisation being analysed reads what owner inferred (its
 * types or its result): it is analysed again when that changes. */
static void depends_on(InferSession *ses, InferSpec *owner) {
  if (ses && ses->reading && owner != ses->reading) ir_map_put(&owner->readers, ses->reading, ses->reading);
}

/* S changed what it inferred: its readers are analysed again, and S
 * itself (a node may read one after it). */
static void touch(InferSpec *S) {
  S->dirty = true;
  for (size_t i = 0; i < S->readers.cap; i++)
    if (S->readers.keys[i]) ((InferSpec *)S->readers.vals[i])->dirty = true;
}

/* The type of node x as S sees it: its own, or a free variable's in
 * the context chain; `any` for a free variable of the graph asked for. */
static IrType *node_type(InferSession *ses, InferSpec *S, IrNode *x) {
  if (x->kind == IR_CONST) return const_type(S, x->value);
  for (InferSpec *s = S; s; s = s->ctx) {
    if (!s->g) {
      /* a closure value's context: the captured values' types */
      IrType *t = ir_map_get(&s->types, x);
      return t ? t : &ir_t_any;
    }
    if (x->graph == s->g) {
      depends_on(ses, s);
      IrType *t = ir_map_get(&s->types, x);
      return t ? t : &ir_t_never;
    }
  }
  IrType *t = ses ? ir_map_get(&ses->fv, x) : NULL;
  return t ? t : &ir_t_any;
}

static bool args_eq(int n, IrType **a, IrType **b) {
  for (int i = 0; i < n; i++)
    if (!ir_type_eq(a[i], b[i])) return false;
  return true;
}

static void widen(InferSession *s, InferSpec *T, IrType **args) {
  for (int i = 0; i < T->nargs; i++) {
    IrType *j = ir_type_join(T->args[i], args[i]);
    if (!ir_type_eq(j, T->args[i])) {
      T->args[i] = j;
      T->dirty = true;
      s->changed = true;
    }
  }
}

static InferSpec *spec_new(InferSession *s, SpecList *l, IrGraph *h, InferSpec *ctx, IrType **args) {
  if (s->nspecs >= MAX_SPECS) {
    s->full = true;
    return NULL;
  }
  InferSpec *T = lang_alloc(sizeof *T);
  T->g = h;
  T->ctx = ctx;
  T->nargs = h->nparams;
  T->args = lang_alloc((size_t)(h->nparams ? h->nparams : 1) * sizeof *T->args);
  if (h->nparams) memcpy(T->args, args, (size_t)h->nparams * sizeof *args);
  T->ret = &ir_t_never;
  T->dirty = true;
  if (s->nspecs == s->capspecs) {
    s->capspecs = s->capspecs ? 2 * s->capspecs : 32;
    s->specs = lang_realloc(s->specs, (size_t)s->capspecs * sizeof *s->specs);
  }
  s->specs[s->nspecs++] = T;
  l->items = lang_realloc(l->items, (size_t)(l->n + 1) * sizeof *l->items);
  l->items[l->n++] = T;
  s->changed = true;
  return T;
}

static SpecList *specs_of(InferSession *s, IrGraph *h) {
  SpecList *l = ir_map_get(&s->by_graph, h);
  if (!l) {
    l = lang_alloc(sizeof *l);
    ir_map_put(&s->by_graph, h, l);
  }
  return l;
}

/* The specialisation a call of a closure of h (made in ctx) with these
 * parameter types runs; NULL when there may be no more. */
static InferSpec *spec_for(InferSession *s, IrGraph *h, InferSpec *ctx, IrType **args) {
  SpecList *l = specs_of(s, h);
  if (ctx) {
    for (int i = 0; i < l->n; i++)
      if (l->items[i]->ctx == ctx) {
        widen(s, l->items[i], args);
        return l->items[i];
      }
    return spec_new(s, l, h, ctx, args);
  }
  int exact = 0;
  InferSpec *wide = NULL;
  for (int i = 0; i < l->n; i++) {
    InferSpec *T = l->items[i];
    if (T->ctx) continue;
    if (T->wide) wide = T;
    else if (exact++, args_eq(h->nparams, T->args, args)) return T;
  }
  if (exact < MAX_EXACT) return spec_new(s, l, h, NULL, args);
  if (wide) {
    widen(s, wide, args);
    return wide;
  }
  InferSpec *T = spec_new(s, l, h, NULL, args);
  if (T) T->wide = true;
  return T;
}

/* ---- calls ---- */

/* The parameter types of a call of h (closure made in ctx): the
 * arguments, keywords by parameter name, defaults from the context.
 * False when the call would not bind (a TypeError when it runs). */
static bool bind(InferSession *ses, InferSpec *ctx, IrGraph *h, int nargs, IrType **args, int nkw,
                 ObjStr **kwnames, IrType **kwtypes, IrType **params) {
  int np = h->nparams;
  if (nargs > np) return false;
  for (int i = 0; i < np; i++) params[i] = i < nargs ? args[i] : NULL;
  for (int k = 0; k < nkw; k++) {
    int i = nargs;
    while (i < np && !(h->params[i]->name && lang_str_eq(h->params[i]->name, kwnames[k]))) i++;
    if (i == np || params[i]) return false;
    params[i] = kwtypes[k];
  }
  for (int i = 0; i < np; i++) {
    if (params[i]) continue;
    int d = i - (np - h->ndefaults);
    if (d < 0) return false;
    IrNode *dn = h->defaults[d];
    params[i] = dn->kind == IR_CONST ? ir_type_of_value(dn->value) : ctx ? node_type(ses, ctx, dn) : &ir_t_any;
  }
  return true;
}

/* A primitive's rule on arguments that may be None (T?): a rule that
 * takes None is tried with each such argument as None and as T (the
 * first few), the results joined; the others get T. */
static IrType *prim_call(InferCx *cx, int p, IrType **args, int n) {
  int maybe[4], k = 0;
  IrType **a = lang_alloc((size_t)(n ? n : 1) * sizeof *a);
  IrType **given = args;
  args = lang_alloc((size_t)(n ? n : 1) * sizeof *args);
  for (int i = 0; i < n; i++) {
    /* Unbound reaches only check_bound, the lowering's guard */
    a[i] = args[i] = p == IR_P_CHECK_BOUND ? given[i] : ir_type_strip_unbound(given[i]);
    if (!args[i]->or_none) continue;
    a[i] = ir_type_strip_none(args[i]);
    if (ir_infer_prim_takes_none[p] && k < 4) maybe[k++] = i;
  }
  IrType *r = &ir_t_never;
  bool safe = true;
  for (int bits = 0; bits < (1 << k); bits++) {
    for (int j = 0; j < k; j++)
      a[maybe[j]] = bits & (1 << j) ? &ir_t_none : ir_type_strip_none(args[maybe[j]]);
    cx->safe = false;
    r = ir_type_join(r, ir_infer_prim_rules[p](cx, a, n));
    safe &= cx->safe;
  }
  cx->safe = safe;
  return r;
}

IrType *ir_infer_call(InferCx *cx, IrType *f, int nargs, IrType **args, int nkw, ObjStr **kwnames,
                      IrType **kwtypes) {
  switch (f->kind) {
  case IT_NEVER: return &ir_t_never;
  case IT_CLOSURE: {
    IrGraph *h = f->graph;
    IrType **params = lang_alloc((size_t)(h->nparams ? h->nparams : 1) * sizeof *params);
    if (!bind(cx->s, f->ctx, h, nargs, args, nkw, kwnames, kwtypes, params)) return &ir_t_never;
    InferSpec *T = spec_for(cx->s, h, f->ctx, params);
    if (!T) return &ir_t_any;
    depends_on(cx->s, T);
    if (cx->node) ir_map_put(&cx->spec->calls, cx->node, T);
    cx->safe = true;   /* it binds: what the body does is the body's */
    return T->ret;
  }
  case IT_FNSET: {
    IrType *r = &ir_t_never;
    InferCx sub = *cx;
    sub.node = NULL;   /* no single callee to note */
    bool safe = true;
    for (int i = 0; i < f->n; i++) {
      sub.safe = false;
      r = ir_type_join(r, ir_infer_call(&sub, f->items[i], nargs, args, nkw, kwnames, kwtypes));
      safe &= sub.safe;
    }
    cx->safe = safe;
    return r;
  }
  case IT_BUILTIN: {
    ObjBuiltin *b = f->builtin;
    if (f->n == 1) {
      /* a method bound to x: x first */
      IrType **all = lang_alloc((size_t)(nargs + 1) * sizeof *all);
      all[0] = f->items[0];
      if (nargs) memcpy(all + 1, args, (size_t)nargs * sizeof *args);
      args = all;
      nargs++;
    }
    if (b->prim >= 0) {
      if (nkw) return &ir_t_any;
      int ar = ir_prims[b->prim].arity;
      if (ar >= 0 && ar != nargs) return &ir_t_never;
      return prim_call(cx, b->prim, args, nargs);
    }
    return ir_infer_builtin(cx, b, args, nargs, nkw, kwnames, kwtypes);
  }
  case IT_ANY: return &ir_t_any;
  default: return &ir_t_never;   /* calling a number, a tuple...: a TypeError */
  }
}

IrType *ir_infer_fail(InferCx *cx) {
  MistVM *vm = cx->vm;
  if (cx->node && vm->err.set && !ir_map_get(&cx->spec->errors, cx->node)) {
    InferError *e = lang_alloc(sizeof *e);
    e->kind = vm->err.kind;
    e->message = vm->err.message;
    ir_map_put(&cx->spec->errors, cx->node, e);
  }
  lang_error_clear(vm);
  return &ir_t_never;
}

/* A global bound once by the module's code to a def. */
static IrGraph *module_def(IrGraph *code, ObjStr *name) {
  IrGraph *found = NULL;
  int n = 0;
  for (int i = 0; i < code->nnodes; i++) {
    IrNode *x = code->nodes[i];
    if (ir_node_prim(x) != IR_P_SET_GLOBAL || x->nin != 3 || x->in[1]->kind != IR_CONST ||
        !v_is_obj(x->in[1]->value, O_STR) || !lang_str_eq(AS_STR(x->in[1]->value), name))
      continue;
    n++;
    found = ir_node_graph(x->in[2]);
  }
  return n == 1 ? found : NULL;
}

IrType *ir_infer_global(InferCx *cx, ObjStr *name) {
  const IrInferOpts *o = cx->s->opts;
  if (o && o->module_code) {
    IrGraph *h = module_def(o->module_code, name);
    if (h && !(h->parent && !(h->parent->flags & IRG_MODULE))) return ir_type_closure(h, NULL);
  }
  ObjModule *m = cx->spec->g->module;
  Value slot;
  if (!m || !m->names || !lang_dict_get(m->names, name, &slot) || slot.tag != V_INT) return &ir_t_any;
  Value v = m->slots[slot.i];
  if (v_is_obj(v, O_FUNC) || v_is_obj(v, O_BUILTIN) || v_is_obj(v, O_MODULE))
    return ir_infer_value(cx, v);
  return &ir_t_any;
}

/* ---- analysis ---- */

static void set_type(InferSession *s, InferSpec *S, IrNode *n, IrType *t) {
  IrType *old = ir_map_get(&S->types, n);
  if (old) t = ir_type_join(old, t);
  if (!old || !ir_type_eq(old, t)) {
    ir_map_put(&S->types, n, t);
    s->changed = true;
    touch(S);
  }
}

static IrType *apply_type(InferSession *s, InferSpec *S, IrNode *n) {
  InferCx cx = {s, S, n, s->vm, false};
  IrType *f = node_type(s, S, n->in[0]);
  int na = n->nin - 1;
  IrType **a = lang_alloc((size_t)(na ? na : 1) * sizeof *a);
  for (int i = 0; i < na; i++) {
    a[i] = node_type(s, S, n->in[i + 1]);
    if (a[i]->kind == IT_NEVER) return &ir_t_never;   /* the arguments come first */
  }
  IrType *t = ir_infer_call(&cx, f, na, a, 0, NULL, NULL);
  if (!cx.safe) ir_map_put(&S->unsafe, n, n);
  return t;
}

static void analyse(InferSession *s, InferSpec *S) {
  IrGraph *g = S->g;
  /* the calls of this round (one made when a branch was known may be
   * a choice of two now) */
  memset(&S->calls, 0, sizeof S->calls);
  memset(&S->unsafe, 0, sizeof S->unsafe);
  for (int i = 0; i < g->nparams; i++) set_type(s, S, g->params[i], S->args[i]);
  for (int i = 0; i < g->nnodes; i++) set_type(s, S, g->nodes[i], apply_type(s, S, g->nodes[i]));
  IrType *r = g->ret ? node_type(s, S, g->ret) : &ir_t_none;
  IrType *j = ir_type_join(S->ret, r);
  if (!ir_type_eq(j, S->ret)) {
    S->ret = j;
    s->changed = true;
    touch(S);
  }
}

/* The fixed point: the specialisations analysed, in the order they
 * were made, again while any is to be (its arguments widened, or what
 * it read changed: a type of a graph around it, a callee's result), so
 * that one whose inputs stay the same is not typed again. */
static bool settle(InferSession *s) {
  for (int round = 0;; round++) {
    s->changed = false;
    bool any = false;
    for (int i = 0; i < s->nspecs; i++) {
      InferSpec *S = s->specs[i];
      if (!S->dirty) continue;
      S->dirty = false;
      any = true;
      s->reading = S;
      analyse(s, S);
      s->reading = NULL;
      s->work += S->g->nnodes + 1;
    }
    if (!any) return true;
    if (round == MAX_ROUNDS)
      return lang_raise(s->vm, "RuntimeError", "type inference did not reach a fixed point");
    if (s->work > (s->opts && s->opts->max_work > 0 ? s->opts->max_work : MAX_WORK))
      return lang_raise(s->vm, "RuntimeError", "type inference gave up after typing %ld nodes (%d specialisations, %d rounds)",
                        s->work, s->nspecs, round + 1);
  }
}

/* Closures made but never called (a backpropagator returned to the
 * caller): specialised for arguments of any type, so their bodies are
 * typed too.  True when it made any. */
static bool type_uncalled(InferSession *s) {
  bool made = false;
  int n = s->nspecs;
  for (int i = 0; i < n; i++) {
    InferSpec *S = s->specs[i];
    for (int k = 0; k <= S->g->nnodes; k++) {
      IrNode *x = k < S->g->nnodes ? S->g->nodes[k] : NULL;
      int nin = x ? x->nin : 1;
      for (int j = 0; j < nin; j++) {
        IrNode *c = x ? x->in[j] : S->g->ret;
        IrGraph *h = c ? ir_node_graph(c) : NULL;
        if (!h || (j == 0 && x && ir_map_get(&S->calls, x))) continue;
        InferSpec *ctx = context_for(S, h);
        SpecList *l = specs_of(s, h);
        bool have = false;
        for (int m = 0; m < l->n && !have; m++) have = l->items[m]->ctx == ctx;
        if (have) continue;
        IrType **any = lang_alloc((size_t)(h->nparams ? h->nparams : 1) * sizeof *any);
        for (int m = 0; m < h->nparams; m++) any[m] = &ir_t_any;
        if (spec_new(s, l, h, ctx, any)) made = true;
      }
    }
  }
  return made;
}

/* Errors that certainly happen.  What running a specialisation's
 * schedule comes to, as far as inference can tell: */
typedef enum {
  RUNS,        /* it returns (or may), with no error proven */
  FAILS,       /* it certainly fails with the error *err (at *where) */
  STOPS,       /* it never returns, and no one error is proven */
  LOOPS,       /* it goes back to a specialisation being run (a loop's
                  next turn): the turn that leaves decides */
  UNSURE,      /* an operation on the way may fail first (its rule could
                  not tell), so no later error is certain */
} Outcome;

typedef struct Proof {
  InferSession *s;
  NodeMap active;     /* specialisations on the path */
  NodeMap done;       /* outcome + 1 of those finished */
  NodeMap err_of;     /* their proven error's node */
  NodeMap spec_of;    /* and its specialisation */
} Proof;

static Outcome outcome(Proof *pf, InferSpec *S, IrNode **where, InferSpec **wspec, int depth);
static InferSpec *closure_spec(InferSession *s, IrGraph *h, InferSpec *ctx);

/* Where a call of a closure set ends: the members that leave the loop
 * all fail with one error, or all stop. */
static Outcome set_outcome(Proof *pf, InferSpec *S, IrNode *n, IrNode **where, InferSpec **wspec,
                           int depth) {
  InferSession *s = pf->s;
  IrType *f = node_type(s, S, n->in[0]);
  if (f->kind != IT_FNSET || n->nin != 1) return RUNS;
  IrNode *w = NULL;
  InferSpec *ws = NULL;
  bool any_fails = false, all_fail = true, any_stops = false;
  for (int i = 0; i < f->n; i++) {
    InferSpec *T = closure_spec(s, f->items[i]->graph, f->items[i]->ctx);
    if (!T) return RUNS;
    IrNode *w2;
    InferSpec *ws2;
    Outcome o = outcome(pf, T, &w2, &ws2, depth + 1);
    if (o == RUNS || o == UNSURE) return o;
    if (o == FAILS) {
      if (any_fails && (w2 != w || ws2 != ws)) all_fail = false;
      any_fails = true;
      w = w2;
      ws = ws2;
    } else if (o == STOPS) {
      all_fail = false;
      any_stops = true;
    }
  }
  if (any_fails && all_fail) {
    *where = w;
    *wspec = ws;
    return FAILS;
  }
  /* all go round the loop again: LOOPS; else none returns, and no one
   * error is certain */
  return any_fails || any_stops ? STOPS : LOOPS;
}

static Outcome outcome(Proof *pf, InferSpec *S, IrNode **where, InferSpec **wspec, int depth) {
  intptr_t d = (intptr_t)ir_map_get(&pf->done, S);
  if (d) {
    *where = ir_map_get(&pf->err_of, S);
    *wspec = ir_map_get(&pf->spec_of, S);
    return (Outcome)(d - 1);
  }
  if (ir_map_get(&pf->active, S) == S || depth > 200) return LOOPS;
  ir_map_put(&pf->active, S, S);
  Outcome r = RUNS;
  *where = NULL;
  *wspec = NULL;
  for (int i = 0; i < S->g->nnodes && r == RUNS; i++) {
    IrNode *n = S->g->nodes[i];
    if (ir_map_get(&S->errors, n)) {
      *where = n;
      *wspec = S;
      r = FAILS;
      break;
    }
    InferSpec *T = ir_map_get(&S->calls, n);
    Outcome o = T ? outcome(pf, T, where, wspec, depth + 1) : set_outcome(pf, S, n, where, wspec, depth);
    if (o != RUNS) {
      r = o;
      break;
    }
    IrType *t = ir_map_get(&S->types, n);
    if (!t || t->kind == IT_NEVER) r = STOPS;
    else if (ir_map_get(&S->unsafe, n)) r = UNSURE;
  }
  ir_map_put(&pf->active, S, NULL);
  if (r != LOOPS) {
    ir_map_put(&pf->done, S, (void *)(intptr_t)(r + 1));
    ir_map_put(&pf->err_of, S, *where);
    ir_map_put(&pf->spec_of, S, *wspec);
  }
  return r;
}

/* Raise the first error proven on the path that certainly runs. */
static bool certain_errors(InferSession *s, InferSpec *root) {
  Proof pf = {.s = s};
  IrNode *where;
  InferSpec *ws;
  if (outcome(&pf, root, &where, &ws, 0) != FAILS) return true;
  InferError *e = ir_map_get(&ws->errors, where);
  return lang_raise_at(s->vm, where->span, e->kind, "%s", e->message->data);
}

/* ---- the specialised copies ---- */

static InferSpec *closure_spec(InferSession *s, IrGraph *h, InferSpec *ctx) {
  SpecList *l = ir_map_get(&s->by_graph, h);
  if (!l || !ctx) return NULL;
  for (int i = 0; i < l->n; i++)
    if (l->items[i]->ctx == ctx) return l->items[i];
  return NULL;
}

/* The specialisation a graph constant used by node x (at input j; j -1
 * for the output) names in the copy: the one a direct call runs, or the
 * one closures made there run; NULL: the original graph. */
static InferSpec *const_target(InferSession *s, InferSpec *S, IrNode *x, int j, IrGraph *h) {
  if (x && j == 0) {
    InferSpec *T = ir_map_get(&S->calls, x);
    if (T && T->g == h) return T;
  }
  return closure_spec(s, h, context_for(S, h));
}

static void reach(InferSession *s, InferSpec *S) {
  if (S->reached) return;
  S->reached = true;
  /* its context is copied too: its copy is the parent of S's (a
   * context met in an earlier round may be reached only this way) */
  if (S->ctx && S->ctx->g) reach(s, S->ctx);
  IrGraph *g = S->g;
  for (int k = 0; k < g->nnodes; k++) {
    /* a specialisation called through a value (a global's function, a
     * closure passed in) is copied too, for the printout and for the
     * callers that look it up (ir_infer with its signature) */
    InferSpec *C = ir_map_get(&S->calls, g->nodes[k]);
    if (C) reach(s, C);
  }
  for (int k = 0; k < g->nnodes; k++)
    for (int j = 0; j < g->nodes[k]->nin; j++) {
      IrGraph *h = ir_node_graph(g->nodes[k]->in[j]);
      InferSpec *T = h ? const_target(s, S, g->nodes[k], j, h) : NULL;
      if (T) reach(s, T);
    }
  IrGraph *h = g->ret ? ir_node_graph(g->ret) : NULL;
  InferSpec *T = h ? const_target(s, S, NULL, -1, h) : NULL;
  if (T) reach(s, T);
}

typedef struct Copier {
  InferSession *s;
  IrTyped *r;           /* the result being made: its node types */
  IrUnit *u;
  ObjDict *names;       /* the names of u's graphs (the copies made so far) */
} Copier;

/* t with each closure naming the copy of its specialisation. */
static IrType *export_type(Copier *c, IrType *t) {
  switch (t->kind) {
  case IT_CLOSURE: {
    InferSpec *T = closure_spec(c->s, t->graph, t->ctx);
    return ir_type_closure(T && T->copy ? T->copy : t->graph, NULL);
  }
  case IT_TUPLE: case IT_LIST: case IT_DICT: case IT_ENV: case IT_FNSET: {
    int m = t->kind == IT_LIST && t->n < 0 ? 1 : t->n;
    IrType **items = lang_alloc((size_t)(m ? m : 1) * sizeof *items);
    for (int i = 0; i < m; i++) items[i] = export_type(c, t->items[i]);
    IrType *r = lang_alloc(sizeof *r);
    *r = *t;
    r->items = items;
    return r;
  }
  default: return t;
  }
}

static void note_type(Copier *c, IrNode *n, IrType *t) {
  ir_map_put(&c->r->types, n, export_type(c, t));
}

static IrNode *copy_input(Copier *c, InferSpec *S, IrNode *x, IrNode *user, int j) {
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    IrNode *k;
    if (h) {
      InferSpec *T = const_target(c->s, S, user, j, h);
      k = ir_const_graph(c->u, T && T->copy ? T->copy : h, x->span);
    } else {
      k = ir_const(c->u, x->value, x->span);
    }
    k->name = x->name;
    note_type(c, k, const_type(S, x->value));
    return k;
  }
  for (InferSpec *t = S; t; t = t->ctx) {
    IrNode *m = ir_map_get(&t->map, x);
    if (m) return m;
  }
  return x;   /* a free variable of the graph asked for */
}

/* base, or base.2, base.3...: the first no copy has yet (looked up in
 * a table, not by a scan of the unit: a nested derivative's copy holds
 * thousands of graphs) */
static const char *unique_name(Copier *c, const char *base) {
  StrBuf sb;
  sb_init(&sb);
  sb_adds(&sb, base);
  for (int k = 2;; k++) {
    ObjStr *name = lang_str_new(sb.data, sb.len);
    Value taken;
    if (!lang_dict_get(c->names, name, &taken)) {
      lang_dict_put(c->names, name, v_bool(true));
      return sb.data;
    }
    sb.len = 0;
    sb_printf(&sb, "%s.%d", base, k);
  }
}

static void make_copy(Copier *c, InferSpec *S) {
  IrGraph *g = S->g;
  IrGraph *parent = S->ctx && S->ctx->g ? S->ctx->copy : g->parent;
  IrGraph *k = ir_graph_new(c->u, unique_name(c, g->name->data), parent, g->flags, g->span);
  k->display = g->display;
  k->module = g->module;
  k->copy_of = g;
  S->copy = k;
}

static void fill_copy(Copier *c, InferSpec *S) {
  IrGraph *g = S->g, *k = S->copy;
  if (S->ctx && !S->ctx->g) {
    /* a closure value's: its free variables (which the copy keeps) have
     * the types of its captured values, for the lowering's calls of it
     * (joined, where closures of g over other types are copied too) */
    if (!g->fv_done) ir_free_vars(g);
    for (int i = 0; i < g->nfv; i++) {
      IrType *t = ir_map_get(&S->ctx->types, g->fv[i]), *old = ir_map_get(&c->r->types, g->fv[i]);
      t = export_type(c, t ? t : &ir_t_any);
      ir_map_put(&c->r->types, g->fv[i], old ? ir_type_join(old, t) : t);
    }
  }
  for (int i = 0; i < g->nparams; i++) {
    IrNode *p = ir_param(c->u, k, g->params[i]->name, g->params[i]->span);
    ir_map_put(&S->map, g->params[i], p);
    ir_map_put(&c->r->origin, p, g->params[i]);
    note_type(c, p, S->args[i]);
  }
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *x = g->nodes[i];
    IrNode **in = lang_alloc((size_t)x->nin * sizeof *in);
    IrNode *y = ir_apply(c->u, k, x->nin, in, x->span);
    y->name = x->name;
    y->inlined = x->inlined;
    ir_map_put(&S->map, x, y);
    ir_map_put(&c->r->origin, y, x);
    IrType *t = ir_map_get(&S->types, x);
    note_type(c, y, t ? t : &ir_t_never);
  }
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *x = g->nodes[i], *y = ir_map_get(&S->map, x);
    for (int j = 0; j < x->nin; j++) y->in[j] = copy_input(c, S, x->in[j], x, j);
  }
  if (g->ndefaults) {
    k->ndefaults = g->ndefaults;
    k->defaults = lang_alloc((size_t)g->ndefaults * sizeof *k->defaults);
    InferSpec *outer = S->ctx;
    for (int d = 0; d < g->ndefaults; d++)
      k->defaults[d] = outer ? copy_input(c, outer, g->defaults[d], NULL, -1) : g->defaults[d];
  }
  if (g->ret) k->ret = copy_input(c, S, g->ret, NULL, -1);
}

static IrTyped *copy_all(InferSession *s, InferSpec *root) {
  IrTyped *r = lang_alloc(sizeof *r);
  Copier c = {s, r, ir_unit_new(), lang_dict_new()};
  reach(s, root);
  for (int i = 0; i < s->nspecs; i++)
    if (s->specs[i]->reached) make_copy(&c, s->specs[i]);
  for (int i = 0; i < s->nspecs; i++)
    if (s->specs[i]->reached) fill_copy(&c, s->specs[i]);
  /* the free variables of the graph asked for keep the types given
   * (opts->fv), for the lowering's calls of them */
  IrGraph *g = root->g;
  for (int i = 0; s->fv.n && i < g->nfv; i++) {
    IrType *t = ir_map_get(&s->fv, g->fv[i]);
    if (t && !ir_map_get(&r->types, g->fv[i])) ir_map_put(&r->types, g->fv[i], export_type(&c, t));
  }
  r->graph = root->copy;
  r->unit = c.u;
  r->ret = export_type(&c, root->ret);
  return r;
}

/* ---- the entry points ---- */

static IrTyped *infer(MistVM *vm, IrGraph *g, int nargs, IrType **args, const IrInferOpts *opts) {
  bool cached = !opts || !opts->fv;   /* the cache is keyed by the arguments alone */
  InferSide *side = cached ? side_of(g) : NULL;
  for (CacheEntry *e = side ? side->entries : NULL; e; e = e->next)
    if (e->epoch == state(vm)->epoch && e->nargs == nargs && args_eq(nargs, e->args, args)) return e->result;
  if (nargs != g->nparams) {
    lang_raise(vm, "TypeError", "%s() takes %d argument%s but the signature gives %d",
               g->display->data, g->nparams, g->nparams == 1 ? "" : "s", nargs);
    return NULL;
  }
  InferSession s = {.vm = vm, .opts = opts};
  if (opts && opts->fv) {
    ir_free_vars(g);
    for (int i = 0; i < g->nfv; i++) ir_map_put(&s.fv, g->fv[i], opts->fv[i]);
  }
  InferSpec *root = spec_new(&s, specs_of(&s, g), g, NULL, args);
  for (int pass = 0; pass < 16; pass++) {
    if (!settle(&s)) return NULL;
    if (!type_uncalled(&s)) break;
  }
  if (!certain_errors(&s, root)) return NULL;
  IrTyped *r = copy_all(&s, root);
  if (!cached) return r;
  CacheEntry *e = lang_alloc(sizeof *e);
  e->epoch = state(vm)->epoch;
  e->nargs = nargs;
  e->args = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *e->args);
  if (nargs) memcpy(e->args, args, (size_t)nargs * sizeof *args);
  e->result = r;
  e->next = side->entries;
  side->entries = e;
  return r;
}

IrTyped *ir_infer(MistVM *vm, IrGraph *g, int nargs, IrType **args, const IrInferOpts *opts) {
  InferState *st = state(vm);
  st->depth++;
  IrTyped *r = infer(vm, g, nargs, args, opts);
  if (--st->depth == 0) {
    memset(&st->closures, 0, sizeof st->closures);
    st->transforms = NULL;
  }
  return r;
}

void ir_infer_forget(MistVM *vm) { state(vm)->epoch++; }

IrType *ir_infer_type(const IrTyped *t, const IrNode *n) { return ir_map_get(&t->types, n); }

static IrType *typed_node(void *ud, const IrNode *n) { return ir_infer_type(ud, n); }

void ir_print_typed(MistVM *vm, const IrTyped *t, StrBuf *out) {
  ir_print_unit_typed(vm, t->unit, out, typed_node, (void *)t);
}

IrType *ir_parse_argtype(MistVM *vm, const char *text) {
  size_t used, len = strlen(text);
  const char *err;
  IrType *t = ir_type_parse(vm, text, len, &used, &err, NULL, NULL);
  if (t && used != len) {
    while (used < len && (text[used] == ' ' || text[used] == '\t')) used++;
    if (used != len) t = NULL, err = "unexpected text after the type";
  }
  if (!t) {
    lang_raise(vm, "ValueError", "bad argument type '%s': %s at offset %zu", text, err, used);
    return NULL;
  }
  return t;
}
