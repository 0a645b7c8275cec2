/* simplify.c: local rewrites of primitive applications, to a fixpoint.
 *
 * Each primitive with rules has one function below, which looks at an
 * application whose inputs are already simplified and returns what it
 * equals (a constant, one of its inputs, or a node it was built from),
 * or NULL.  A rule fires only when the application certainly computes
 * that value without failing and without an effect, so the application
 * is then taken out of its schedule and its uses see the replacement.
 * Errors stay where they were: folding calls the primitive's own C
 * function (prims.c, so folding means exactly what running means) and
 * keeps the application when that raises: `1 / 0` still fails when it
 * runs, at its line.
 *
 * Types are unknown in general, and `x * 1` is not x for a str, a bool
 * or a tensor of ints, so algebraic identities need a known kind: an
 * int or a float, tracked from constants through arithmetic (an int op
 * an int is an int or an error, never anything else), and into the
 * parameters of a loop whose every call passes that kind (an analysis to
 * a fixpoint before each sweep, param_kinds).  What matters most
 * is the algebra of sensitivities that autodiff produces, where None is
 * zero: gadd(None, x) is x, and so on.
 *
 * The sweep visits a scope's graphs ancestors first and each schedule in
 * order, resolving inputs through the replacements made so far, so one
 * sweep settles chains; sweeps repeat until nothing changes.
 */
#include <string.h>

#include "ir/eval.h"
#include "ir/scope.h"
#include "lang/gc.h"
#include "lang/ops.h"

enum { MAX_SWEEPS = 16, MAX_FOLDED_STR = 256 };

/* K_TOP: not known yet, during the analysis of loop parameters only */
typedef enum { K_UNKNOWN, K_INT, K_FLOAT, K_BOOL, K_TOP } Kind;

typedef struct Simp {
  MistVM *vm;
  IrUnit *u;           /* where new constants are made */
  NodeMap repl;        /* rewritten node -> what it equals */
  NodeMap dead;        /* the rewritten nodes, to unschedule */
  NodeMap kinds;       /* node -> Kind, where known */
  NodeMap entry;       /* branch graph -> its switch (see scan_refs) */
} Simp;

/* ---- small helpers ---- */

static IrNode *arg(IrNode *n, int i) { return n->in[i + 1]; }

static IrNode *konst(Simp *s, Value v, IrNode *at) { return ir_const(s->u, v, at->span); }

static bool is_const(const IrNode *x, VTag tag) { return x->kind == IR_CONST && x->value.tag == tag; }
static bool is_none(const IrNode *x) { return is_const(x, V_NONE); }
static bool is_int(const IrNode *x, int64_t k) { return is_const(x, V_INT) && x->value.i == k; }
static bool is_float(const IrNode *x, double f) { return is_const(x, V_FLOAT) && x->value.f == f; }

static Kind kind_of(Simp *s, const IrNode *x) {
  if (x->kind == IR_CONST) {
    switch (x->value.tag) {
    case V_INT: return K_INT;
    case V_FLOAT: return K_FLOAT;
    case V_BOOL: return K_BOOL;
    default: return K_UNKNOWN;
    }
  }
  return (Kind)ir_map_int(&s->kinds, x, K_UNKNOWN);
}

static bool numeric(Kind k) { return k == K_INT || k == K_FLOAT || k == K_BOOL; }
static bool int_or_float(Kind k) { return k == K_INT || k == K_FLOAT; }

static bool numeric_const(const IrNode *x) {
  return x->kind == IR_CONST &&
         (x->value.tag == V_INT || x->value.tag == V_FLOAT || x->value.tag == V_BOOL);
}

/* Run primitive p on n's constant inputs; the result as a constant, or
 * NULL when it raises (the error is forgotten: it will happen when the
 * program runs) or is not a plain constant. */
static IrNode *fold(Simp *s, IrNode *n, int p) {
  int argc = n->nin - 1;
  Value argv[8];
  if (argc > 8 || !ev_prim_fn(p)) return NULL;
  for (int i = 0; i < argc; i++) {
    if (!ir_plain_const(arg(n, i))) return NULL;
    argv[i] = arg(n, i)->value;
  }
  MistError saved = s->vm->err;
  Value out;
  if (!ev_prim_fn(p)(s->vm, argc, argv, NULL, &out)) {
    s->vm->err = saved;
    return NULL;
  }
  IrNode *k = konst(s, out, n);
  if (!ir_plain_const(k)) return NULL;
  if (v_is_obj(out, O_STR) && AS_STR(out)->len > MAX_FOLDED_STR) return NULL;
  return k;
}

/* fold when both operands are numbers (so `"ab" * 3` never is) */
static IrNode *fold_numeric(Simp *s, IrNode *n) {
  if (!numeric_const(arg(n, 0)) || !numeric_const(arg(n, 1))) return NULL;
  return fold(s, n, ir_node_prim(n));
}

/* ---- one function per primitive ---- */

/* 1 + 2 -> 3;  x + 0 -> x and 0 + x -> x for an int x (not a float:
 * -0.0 + 0 is 0.0) */
static IrNode *simp_add(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0), *b = arg(n, 1), *r;
  if ((r = fold_numeric(s, n))) return r;
  if (kind_of(s, a) == K_INT && is_int(b, 0)) return a;
  if (kind_of(s, b) == K_INT && is_int(a, 0)) return b;
  return NULL;
}

/* x - 0 -> x for an int or float x (and x - 0.0 for a float) */
static IrNode *simp_sub(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0), *b = arg(n, 1), *r;
  if ((r = fold_numeric(s, n))) return r;
  Kind k = kind_of(s, a);
  if (int_or_float(k) && is_int(b, 0)) return a;
  if (k == K_FLOAT && is_float(b, 0.0)) return a;
  return NULL;
}

/* x * 1 -> x and 1 * x -> x for an int or float x; x * 1.0 only for a
 * float (for an int it makes a float) */
static bool is_one_for(Kind k, const IrNode *one) {
  return (int_or_float(k) && is_int(one, 1)) || (k == K_FLOAT && is_float(one, 1.0));
}

static IrNode *simp_mul(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0), *b = arg(n, 1), *r;
  if ((r = fold_numeric(s, n))) return r;
  if (is_one_for(kind_of(s, a), b)) return a;
  if (is_one_for(kind_of(s, b), a)) return b;
  return NULL;
}

/* x / 1 -> x for a float x (an int divided is a float) */
static IrNode *simp_truediv(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0), *b = arg(n, 1), *r;
  if ((r = fold_numeric(s, n))) return r;
  if (kind_of(s, a) == K_FLOAT && (is_int(b, 1) || is_float(b, 1.0))) return a;
  return NULL;
}

/* x // 1 -> x for an int x */
static IrNode *simp_floordiv(Simp *s, IrNode *n) {
  IrNode *r;
  if ((r = fold_numeric(s, n))) return r;
  if (kind_of(s, arg(n, 0)) == K_INT && is_int(arg(n, 1), 1)) return arg(n, 0);
  return NULL;
}

/* x ** 1 -> x for an int or float x */
static IrNode *simp_pow(Simp *s, IrNode *n) {
  IrNode *r;
  if ((r = fold_numeric(s, n))) return r;
  if (int_or_float(kind_of(s, arg(n, 0))) && is_int(arg(n, 1), 1)) return arg(n, 0);
  return NULL;
}

static IrNode *simp_mod(Simp *s, IrNode *n) { return fold_numeric(s, n); }

/* -3 -> a constant;  -(-x) -> x for an int or float x (the inner
 * negation stays, so an overflow still fails there) */
static IrNode *simp_neg(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0);
  if (numeric_const(a)) return fold(s, n, IR_P_NEG);
  if (ir_node_prim(a) == IR_P_NEG && int_or_float(kind_of(s, a->in[1]))) return a->in[1];
  return NULL;
}

/* +x -> x for an int or float x (+True is 1) */
static IrNode *simp_pos(Simp *s, IrNode *n) {
  IrNode *a = arg(n, 0);
  if (numeric_const(a)) return fold(s, n, IR_P_POS);
  if (int_or_float(kind_of(s, a))) return a;
  return NULL;
}

/* not / truth of a constant;  truth(x) -> x for a bool x */
static IrNode *simp_truth(Simp *s, IrNode *n) {
  int p = ir_node_prim(n);
  if (ir_plain_const(arg(n, 0))) return fold(s, n, p);
  if (p == IR_P_TRUTH && kind_of(s, arg(n, 0)) == K_BOOL) return arg(n, 0);
  return NULL;
}

/* ==, <, is, in... of two constants */
static IrNode *simp_compare(Simp *s, IrNode *n) { return fold(s, n, ir_node_prim(n)); }

/* The k-th item of a sequence of len items, for a constant index; -1
 * when out of range or not a constant int. */
static int64_t index_in(const IrNode *k, int64_t len) {
  if (!is_const(k, V_INT)) return -1;
  int64_t i = k->value.i < 0 ? k->value.i + len : k->value.i;
  return i >= 0 && i < len ? i : -1;
}

/* make_tuple(a0, ..., an)[k] -> ak (make_list too);  a constant tuple
 * or str indexed by a constant -> the item */
static IrNode *simp_getitem(Simp *s, IrNode *n) {
  IrNode *t = arg(n, 0), *k = arg(n, 1);
  if (ir_node_prim(t) == IR_P_MAKE_TUPLE || ir_node_prim(t) == IR_P_MAKE_LIST) {
    int64_t i = index_in(k, t->nin - 1);
    return i >= 0 ? t->in[i + 1] : NULL;
  }
  if (ir_plain_const(t) && is_const(k, V_INT)) return fold(s, n, IR_P_GETITEM);
  return NULL;
}

/* unpack(t, n) -> t for a tuple t of n items (built here or constant) */
static IrNode *simp_unpack(Simp *s, IrNode *n) {
  IrNode *t = arg(n, 0), *k = arg(n, 1);
  if (!is_const(k, V_INT)) return NULL;
  if (ir_node_prim(t) == IR_P_MAKE_TUPLE && t->nin - 1 == k->value.i) return t;
  if (ir_plain_const(t) && v_is_obj(t->value, O_TUPLE) && (int64_t)AS_SEQ(t->value)->len == k->value.i)
    return t;
  (void)s;
  return NULL;
}

/* make_tuple(t[0], ..., t[n-1]) -> t for a tuple t of n items: built
 * here, or unpack(x, n) (always a tuple of n items);  make_tuple of
 * constants -> a constant tuple */
static IrNode *simp_make_tuple(Simp *s, IrNode *n) {
  int len = n->nin - 1;
  IrNode *t = NULL;
  for (int i = 0; i < len; i++) {
    IrNode *x = arg(n, i);
    if (ir_node_prim(x) != IR_P_GETITEM || !is_int(x->in[2], i) || (t && x->in[1] != t)) {
      t = NULL;
      break;
    }
    t = x->in[1];
  }
  if (t && ir_node_prim(t) == IR_P_MAKE_TUPLE && t->nin - 1 == len) return t;
  if (t && ir_node_prim(t) == IR_P_UNPACK && is_int(t->in[2], len)) return t;
  if (len <= 16) return fold(s, n, IR_P_MAKE_TUPLE);
  return NULL;
}

/* iter_seq(x) -> x for a tuple or list built here, or a constant tuple
 * or str (what `for` indexes is then x itself) */
static IrNode *simp_iter_seq(Simp *s, IrNode *n) {
  IrNode *t = arg(n, 0);
  int p = ir_node_prim(t);
  (void)s;
  if (p == IR_P_MAKE_TUPLE || p == IR_P_MAKE_LIST) return t;
  if (ir_plain_const(t) && (v_is_obj(t->value, O_TUPLE) || v_is_obj(t->value, O_STR))) return t;
  return NULL;
}

/* len of a tuple or list built here, or of a constant */
static IrNode *simp_len(Simp *s, IrNode *n) {
  IrNode *t = arg(n, 0);
  int p = ir_node_prim(t);
  if (p == IR_P_MAKE_TUPLE || p == IR_P_MAKE_LIST) return konst(s, v_int(t->nin - 1), n);
  if (ir_plain_const(t)) return fold(s, n, IR_P_LEN);
  return NULL;
}

/* The switch n's value inside graph g, when g runs only after a switch
 * on the same condition chose one of its branches, g or an ancestor of
 * g (entry); NULL when unknown. */
static IrNode *switch_in_branch(Simp *s, IrNode *n, IrGraph *g) {
  for (IrGraph *a = g; a; a = a->parent) {
    IrNode *sw = ir_map_get(&s->entry, a);
    if (!sw || sw == n || sw->in[1] != arg(n, 0)) continue;
    return ir_node_graph(sw->in[2]) == a ? arg(n, 1) : arg(n, 2);
  }
  return NULL;
}

/* switch(c, a, b) -> a or b for a constant c, or inside a branch that a
 * switch on c chose */
static IrNode *simp_switch(Simp *s, IrNode *n) {
  IrNode *c = arg(n, 0);
  if (c->kind == IR_APPLY) return switch_in_branch(s, n, n->graph);
  if (!ir_plain_const(c)) return NULL;
  MistError saved = s->vm->err;
  bool t;
  if (!lang_truthy(s->vm, c->value, &t)) {
    s->vm->err = saved;
    return NULL;
  }
  return t ? arg(n, 1) : arg(n, 2);
}

/* check_bound(x, name) -> x when x cannot be Unbound */
static IrNode *simp_check_bound(Simp *s, IrNode *n) {
  (void)s;
  return ir_never_unbound(arg(n, 0)) ? arg(n, 0) : NULL;
}

/* ---- the sensitivity algebra (autodiff/): None is zero ---- */

/* gadd(None, x) -> x;  gadd(x, None) -> x */
static IrNode *simp_gadd(Simp *s, IrNode *n) {
  (void)s;
  if (is_none(arg(n, 0))) return arg(n, 1);
  if (is_none(arg(n, 1))) return arg(n, 0);
  return NULL;
}

/* sens_item(None, i), sens_without(None, i), env_get(None, key) and
 * no_derivative(None, what) -> None */
static IrNode *simp_none_first(Simp *s, IrNode *n) {
  return is_none(arg(n, 0)) ? konst(s, v_none(), n) : NULL;
}

/* env_get(make_env(k1, v1, ...), k) -> vi for the one key ki equal to k
 * (all constants), None when no key is k: what the env holds there (a
 * key given twice holds the sum, left to run) */
static IrNode *simp_env_get(Simp *s, IrNode *n) {
  IrNode *e = arg(n, 0), *k = arg(n, 1);
  if (is_none(e)) return konst(s, v_none(), n);
  if (ir_node_prim(e) != IR_P_MAKE_ENV || !is_const(k, V_INT)) return NULL;
  IrNode *hit = NULL;
  for (int j = 1; j + 1 < e->nin; j += 2) {
    if (!is_const(e->in[j], V_INT)) return NULL;
    if (e->in[j]->value.i != k->value.i) continue;
    if (hit) return NULL;
    hit = e->in[j + 1];
  }
  return hit ? hit : konst(s, v_none(), n);
}

/* make_env(k1, None, k2, None...) -> None (an env of no sensitivities) */
static IrNode *simp_make_env(Simp *s, IrNode *n) {
  for (int j = 1; j + 1 < n->nin; j += 2)
    if (!is_const(n->in[j], V_INT) || !is_none(n->in[j + 1])) return NULL;
  return (n->nin - 1) % 2 == 0 ? konst(s, v_none(), n) : NULL;
}

/* op_sens(d, x, y, i) -> None when argument i is an int or a bool: they
 * take no sensitivity (a loop's counter), whatever the other argument
 * (ir/prims_sens.c);  add_sens(d, x, y, i) and sub_sens(d, x, y, 0) -> d
 * when argument i is a float and the other a number (nothing to sum
 * back to a shape) */
static IrNode *simp_binary_sens(Simp *s, IrNode *n) {
  IrNode *i = arg(n, 3);
  if (!is_int(i, 0) && !is_int(i, 1)) return NULL;
  Kind t = kind_of(s, arg(n, 1 + (int)i->value.i)), o = kind_of(s, arg(n, 2 - (int)i->value.i));
  if (t == K_INT || t == K_BOOL) return konst(s, v_none(), n);
  int p = ir_node_prim(n);
  bool same = p == IR_P_ADD_SENS || (p == IR_P_SUB_SENS && i->value.i == 0);
  return same && t == K_FLOAT && numeric(o) ? arg(n, 0) : NULL;
}

/* sens_at(x, i, d) -> None when x or d is None */
static IrNode *simp_sens_at(Simp *s, IrNode *n) {
  return is_none(arg(n, 0)) || is_none(arg(n, 2)) ? konst(s, v_none(), n) : NULL;
}

/* env_set(e, key, None) -> e */
static IrNode *simp_env_set(Simp *s, IrNode *n) {
  (void)s;
  return is_none(arg(n, 2)) ? arg(n, 0) : NULL;
}

/* bp_call(bp, d, n) with bp or d None -> a tuple of n Nones (no call
 * happens);  bp_call_j the same, paired with None */
static IrNode *simp_bp_call(Simp *s, IrNode *n) {
  IrNode *k = arg(n, 2);
  if (!(is_none(arg(n, 0)) || is_none(arg(n, 1))) || !is_const(k, V_INT) || k->value.i < 0 ||
      k->value.i > 64)
    return NULL;
  ObjSeq *t = lang_tuple_new((size_t)k->value.i);
  for (int64_t i = 0; i < k->value.i; i++) t->items[i] = v_none();
  if (ir_node_prim(n) == IR_P_BP_CALL) return konst(s, v_obj(t), n);
  return konst(s, lang_tuple_of(2, v_obj(t), v_none()), n);
}

/* The rule for n's primitive, if any. */
static IrNode *simplify_node(Simp *s, IrNode *n) {
  int p = ir_node_prim(n);
  switch (p) {
  case -1: return NULL;
  case IR_P_ADD: return simp_add(s, n);
  case IR_P_SUB: return simp_sub(s, n);
  case IR_P_MUL: return simp_mul(s, n);
  case IR_P_TRUEDIV: return simp_truediv(s, n);
  case IR_P_FLOORDIV: return simp_floordiv(s, n);
  case IR_P_MOD: return simp_mod(s, n);
  case IR_P_POW: return simp_pow(s, n);
  case IR_P_NEG: return simp_neg(s, n);
  case IR_P_POS: return simp_pos(s, n);
  case IR_P_NOT:
  case IR_P_TRUTH: return simp_truth(s, n);
  case IR_P_EQ: case IR_P_NE: case IR_P_LT: case IR_P_LE: case IR_P_GT: case IR_P_GE:
  case IR_P_IS: case IR_P_IS_NOT: case IR_P_CONTAINS: return simp_compare(s, n);
  case IR_P_GETITEM: return simp_getitem(s, n);
  case IR_P_UNPACK: return simp_unpack(s, n);
  case IR_P_MAKE_TUPLE: return simp_make_tuple(s, n);
  case IR_P_LEN: return simp_len(s, n);
  case IR_P_ITER_SEQ: return simp_iter_seq(s, n);
  case IR_P_SWITCH: return simp_switch(s, n);
  case IR_P_CHECK_BOUND: return simp_check_bound(s, n);
  case IR_P_GADD: return simp_gadd(s, n);
  case IR_P_ADD_SENS: case IR_P_SUB_SENS: case IR_P_MUL_SENS: case IR_P_TRUEDIV_SENS:
  case IR_P_POW_SENS: return n->nin == 5 ? simp_binary_sens(s, n) : NULL;
  case IR_P_ENV_GET: return simp_env_get(s, n);
  case IR_P_MAKE_ENV: return simp_make_env(s, n);
  case IR_P_SENS_ITEM: case IR_P_SENS_WITHOUT: case IR_P_NO_DERIVATIVE: return simp_none_first(s, n);
  case IR_P_SENS_AT: return simp_sens_at(s, n);
  case IR_P_ENV_SET: return simp_env_set(s, n);
  case IR_P_BP_CALL: case IR_P_BP_CALL_J: return simp_bp_call(s, n);
  default: return NULL;
  }
}

/* ---- kinds ---- */

/* What n computes, if it computes anything, judging by its inputs. */
static Kind infer_kind(Simp *s, IrNode *n) {
  int p = ir_node_prim(n);
  Kind a = n->nin > 1 ? kind_of(s, arg(n, 0)) : K_UNKNOWN;
  Kind b = n->nin > 2 ? kind_of(s, arg(n, 1)) : K_UNKNOWN;
  switch (p) {
  case IR_P_ADD: case IR_P_SUB: case IR_P_MUL: case IR_P_FLOORDIV: case IR_P_MOD:
    if (!numeric(a) || !numeric(b)) return K_UNKNOWN;
    return a == K_FLOAT || b == K_FLOAT ? K_FLOAT : K_INT;
  case IR_P_TRUEDIV: return numeric(a) && numeric(b) ? K_FLOAT : K_UNKNOWN;
  case IR_P_POW: return a == K_FLOAT && numeric(b) ? K_FLOAT : K_UNKNOWN;
  case IR_P_NEG:
  case IR_P_POS: return a == K_FLOAT ? K_FLOAT : numeric(a) ? K_INT : K_UNKNOWN;
  case IR_P_EQ: case IR_P_NE: case IR_P_LT: case IR_P_LE: case IR_P_GT: case IR_P_GE:
    return numeric(a) && numeric(b) ? K_BOOL : K_UNKNOWN;
  case IR_P_NOT: case IR_P_TRUTH: case IR_P_IS: case IR_P_IS_NOT: case IR_P_CONTAINS:
    return K_BOOL;
  case IR_P_LEN: return K_INT;
  case IR_P_FLOAT_ARG: return K_FLOAT;
  default: return K_UNKNOWN;
  }
}

/* ---- the kinds of loop parameters ---- */

/* A graph of u that is not a user's function (a loop's header, a join)
 * and that only direct calls with one argument per parameter refer to
 * gets its parameters' kinds from the arguments at those calls: i = 0
 * and i = i + 1 make an int.  The analysis is optimistic (K_TOP until
 * shown otherwise) and runs to a fixpoint before any rewriting, so what
 * it finds holds on every run. */
typedef struct Calls {
  IrGraph *g;      /* the graph whose references are being noted */
  NodeMap sites;   /* graph -> NodeList of its calls */
  NodeMap escaped; /* graphs referred to otherwise: their parameters stay unknown */
} Calls;

typedef struct NodeList {
  int n, cap;
  IrNode **items;
} NodeList;

static void note_call(void *ctx, IrGraph *h, int pos) {
  Calls *c = ctx;
  if (ir_map_get(&c->escaped, h)) return;
  IrNode *n = pos >= 0 && pos < c->g->nnodes ? c->g->nodes[pos] : NULL;
  bool call = n && ir_node_graph(n->in[0]) == h && n->nin - 1 == h->nparams && !h->ndefaults;
  for (int j = 1; call && j < n->nin; j++) call = ir_node_graph(n->in[j]) != h;
  if (!call) {
    ir_map_put(&c->escaped, h, h);
    return;
  }
  NodeList *l = ir_map_get(&c->sites, h);
  if (!l) {
    l = lang_alloc(sizeof *l);
    ir_map_put(&c->sites, h, l);
  }
  if (l->n && l->items[l->n - 1] == n) return;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 4;
    l->items = lang_realloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  l->items[l->n++] = n;
}

static Kind meet(Kind a, Kind b) { return a == K_TOP ? b : b == K_TOP ? a : a == b ? a : K_UNKNOWN; }

/* infer_kind, with K_TOP for an operand not known yet */
static Kind infer_kind_top(Simp *s, IrNode *n) {
  int p = ir_node_prim(n);
  bool top = (n->nin > 1 && kind_of(s, arg(n, 0)) == K_TOP) || (n->nin > 2 && kind_of(s, arg(n, 1)) == K_TOP);
  if (top && p != IR_P_NOT && p != IR_P_TRUTH && p != IR_P_IS && p != IR_P_IS_NOT && p != IR_P_CONTAINS &&
      p != IR_P_LEN)
    return K_TOP;
  return infer_kind(s, n);
}

/* The kinds of the parameters of the graphs whose calls c lists, into
 * s->kinds. */
static void param_kinds(Simp *s, const Calls *cs, const IrScope *scope) {
  NodeMap *k = &s->kinds;
  for (int g = 0; g < scope->n; g++) {
    IrGraph *h = scope->graphs[g];
    bool calls = ir_map_get(&cs->sites, h) && !ir_map_get(&cs->escaped, h) && !(h->flags & IRG_FUNCTION);
    for (int i = 0; calls && i < h->nparams; i++) ir_map_set_int(k, h->params[i], K_TOP);
    for (int i = 0; i < h->nnodes; i++) ir_map_set_int(k, h->nodes[i], K_TOP);
  }
  bool changed = true;
  for (int round = 0; changed && round < MAX_SWEEPS; round++) {
    changed = false;
    for (int g = 0; g < scope->n; g++) {
      IrGraph *h = scope->graphs[g];
      NodeList *l = ir_map_get(&cs->escaped, h) || (h->flags & IRG_FUNCTION) ? NULL : ir_map_get(&cs->sites, h);
      for (int i = 0; l && i < h->nparams; i++) {
        Kind m = K_TOP;
        for (int j = 0; j < l->n; j++) m = meet(m, kind_of(s, l->items[j]->in[1 + i]));
        if (m != kind_of(s, h->params[i])) {
          ir_map_set_int(k, h->params[i], m);
          changed = true;
        }
      }
      for (int i = 0; i < h->nnodes; i++) {
        Kind m = infer_kind_top(s, h->nodes[i]);
        if (m != kind_of(s, h->nodes[i])) {
          ir_map_set_int(k, h->nodes[i], m);
          changed = true;
        }
      }
    }
  }
  /* keep the parameters' kinds only (the sweep works out the rest as it
   * rewrites); none if the analysis did not settle */
  NodeMap params = {0};
  for (int g = 0; g < scope->n && !changed; g++) {
    IrGraph *h = scope->graphs[g];
    for (int i = 0; i < h->nparams; i++) {
      Kind m = kind_of(s, h->params[i]);
      if (m != K_UNKNOWN && m != K_TOP) ir_map_set_int(&params, h->params[i], m);
    }
  }
  *k = params;
}

/* ---- what a branch knows ---- */

/* A condition whose truthiness, once taken, stays the same: a
 * comparison's or a test's result is a bool or an (immutable) tensor,
 * never a list that could be emptied in between. */
static bool stable_condition(const IrNode *c) {
  switch (ir_node_prim(c)) {
  case IR_P_LT: case IR_P_LE: case IR_P_GT: case IR_P_GE: case IR_P_EQ: case IR_P_NE:
  case IR_P_NOT: case IR_P_TRUTH: case IR_P_IS: case IR_P_IS_NOT: case IR_P_CONTAINS:
    return true;
  default:
    return false;
  }
}

typedef struct Refs {
  NodeMap *entry;
  IrGraph *g;
  NodeMap bad;    /* graphs referred to other than as a branch of one switch */
} Refs;

static void note_ref(void *ctx, IrGraph *a, int pos) {
  Refs *r = ctx;
  if (!(a->flags & IRG_BRANCH) || ir_map_get(&r->bad, a)) return;
  IrNode *n = pos >= 0 && pos < r->g->nnodes ? r->g->nodes[pos] : NULL;
  bool as_branch = n && ir_node_prim(n) == IR_P_SWITCH && stable_condition(n->in[1]) &&
                   ir_node_graph(n->in[2]) != ir_node_graph(n->in[3]) &&
                   (ir_node_graph(n->in[2]) == a || ir_node_graph(n->in[3]) == a);
  IrNode *had = ir_map_get(r->entry, a);
  if (as_branch && (!had || had == n)) {
    ir_map_put(r->entry, a, n);
    return;
  }
  ir_map_put(&r->bad, a, a);
  ir_map_put(r->entry, a, NULL);
}

/* One walk over the references of the graphs of u (of the scope when u
 * is NULL) for both: s->entry gets each branch graph that only a switch
 * on a stable condition refers to (so it runs only when the condition
 * had that truthiness) -> that switch, and *c the direct calls of each
 * graph (only with u: calls from graphs outside the scope are not seen,
 * so then no parameter gets a kind). */
typedef struct BothRefs {
  Refs r;
  Calls *c;
} BothRefs;

static void note_both(void *ctx, IrGraph *h, int pos) {
  BothRefs *b = ctx;
  note_ref(&b->r, h, pos);
  if (b->c) note_call(b->c, h, pos);
}

static void scan_refs(Simp *s, IrUnit *u, const IrScope *scope, Calls *c) {
  BothRefs b = {{&s->entry, NULL, {0}}, u ? c : NULL};
  int n = u ? u->ngraphs : scope->n;
  for (int i = 0; i < n; i++) {
    b.r.g = c->g = u ? u->graphs[i] : scope->graphs[i];
    ir_each_ref(b.r.g, note_both, &b);
  }
}

/* ---- the sweep ---- */

static bool sweep_graph(Simp *s, IrGraph *g) {
  bool changed = false;
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++) n->in[j] = ir_repl_resolve(&s->repl, n->in[j]);
    IrNode *r = simplify_node(s, n);
    if (r && r != n) {
      ir_map_put(&s->repl, n, r);
      ir_map_put(&s->dead, n, n);
      changed = true;
      continue;
    }
    Kind k = infer_kind(s, n);
    if (k != K_UNKNOWN) ir_map_set_int(&s->kinds, n, k);
  }
  return changed;
}

bool ir_simplify(MistVM *vm, IrUnit *u, IrGraph *g) {
  Simp s = {vm, u ? u : ir_unit_new(), {0}, {0}, {0}, {0}};
  bool any = false;
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    IrScope scope;
    ir_scope_collect(&scope, u, g);
    memset(&s.repl, 0, sizeof s.repl);
    memset(&s.dead, 0, sizeof s.dead);
    memset(&s.kinds, 0, sizeof s.kinds);
    memset(&s.entry, 0, sizeof s.entry);
    Calls calls = {0};
    scan_refs(&s, u, &scope, &calls);
    if (u) param_kinds(&s, &calls, &scope);
    bool changed = false;
    for (int k = 0; k < scope.n; k++) changed |= sweep_graph(&s, scope.graphs[k]);
    if (!changed) break;
    any = true;
    ir_scope_rewrite(&scope, &s.repl);
    ir_scope_unschedule(&scope, &s.dead);
    ir_scope_forget_free_vars(&scope, u);
  }
  return any;
}
