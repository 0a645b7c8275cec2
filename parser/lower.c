/* lower.c: from the AST to IR graphs.
 *
 * Variables become SSA bindings: an environment maps each local name to
 * the node holding its current value, and assignment just rebinds.  A
 * nested def or lambda becomes a graph whose uses of enclosing bindings
 * are free variables, so closures capture values, not variables.
 *
 * Control flow is lowered in continuation-passing style, which keeps
 * every jump a tail call:
 *
 *  - `if c: A else: B; REST` becomes `switch(c, @then, @else)()` in tail
 *    position; REST becomes a join graph J whose parameters are the
 *    variables A or B may assign, and both branches end by calling J.
 *  - `while c: BODY; REST` becomes a loop graph L whose parameters are
 *    the variables BODY assigns; L tests c and either runs BODY (which
 *    ends by calling L again: `continue` does the same) or calls the
 *    after-loop graph A holding REST (`break` calls A too).
 *  - `for x in range(a, b, s)` counts with a hidden parameter of L;
 *    `for x in SEQ` indexes iter_seq(SEQ) the same way.
 *  - `return e` simply makes e the output of the graph being built:
 *    every graph on the path is in tail position, so it is the
 *    function's result.
 *  - a comprehension is a loop graph per `for` clause, called as a
 *    value; it builds its result as a chain of pairs (see the
 *    comprehensions section below).
 *
 * Names resolve, innermost first, to a local of the current function (or
 * a variable of a comprehension being lowered in it), a local of an
 * enclosing function (a free variable), a module global (read with
 * global() when the function runs, so top-level functions may refer to
 * each other in any order), or a builtin.  A name found nowhere
 * is read as a global too, which fails with "name 'x' is not defined"
 * only if that code runs, as in Python.
 */
#include <string.h>

#include "lang/gc.h"
#include "parser/lower.h"

typedef struct Binding {
  ObjStr *name;
  IrNode *node;
  bool maybe_unbound;   /* some path reaches here without assigning it */
  bool comp;            /* a comprehension's variable: never a global */
} Binding;

typedef struct Env {
  int n, cap;
  Binding *b;
} Env;

typedef struct Names {
  int n, cap;
  ObjStr **items;
} Names;

typedef struct FnScope {
  struct FnScope *parent;
  IrGraph *root;
  bool is_module;
  Names locals;       /* every name this function assigns */
  Env env;            /* the bindings at the point being lowered */
  int counter;        /* numbers synthetic graphs */
  const char *prefix; /* their name prefix */
} FnScope;

typedef enum { LOOP_WHILE, LOOP_COUNT } LoopKind;

typedef struct Loop {
  struct Loop *outer;
  LoopKind kind;
  IrGraph *header;    /* L */
  IrGraph *after;     /* A: the code after the loop */
  Names vars;         /* carried variables: L's and A's parameters (after the counter) */
  IrNode *counter;    /* LOOP_COUNT: L's first parameter */
  IrNode *step;       /* LOOP_COUNT: added to the counter each iteration */
  FnScope *fn;
} Loop;

typedef enum { K_RETURN_NONE, K_JOIN, K_LOOP_BACK } ContKind;

/* What to do when the statements of a block run out. */
typedef struct Cont {
  ContKind kind;
  IrGraph *join;      /* K_JOIN: call it with the current values of vars */
  Names vars;
  Loop *loop;         /* K_LOOP_BACK */
  IrNode *echo;       /* module in echo mode: return this instead of None */
} Cont;

typedef struct Lower {
  MistVM *vm;
  IrUnit *u;
  ObjModule *module;
  FnScope *fn;
  IrGraph *cur;       /* the graph being appended to */
  IrGraph *stmt_graph; /* the graph of the statement being lowered: where next(it) may rebind it */
  Loop *loop;
  Names module_names; /* names assigned at top level */
  Names globals_read; /* names read as globals (LowerResult.globals) */
  int statement;      /* lowering statement `statement` of a lazily loaded module, else -1 */
  ObjDict *graph_names; /* the names of the unit's first `named` graphs */
  int named;
  bool echo;
  IrNode *echo_value;
} Lower;

static bool lower_block(Lower *L, Ast **stmts, int n, Cont *k);
static IrNode *lower_expr(Lower *L, Ast *e);

/* ---- small sets and environments ---- */

static bool names_has(const Names *s, ObjStr *x) {
  for (int i = 0; i < s->n; i++)
    if (s->items[i] == x) return true;
  return false;
}

static void names_add(Names *s, ObjStr *x) {
  if (names_has(s, x)) return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->items = lang_realloc(s->items, s->cap * sizeof *s->items);
  }
  s->items[s->n++] = x;
}

static Binding *env_find(Env *e, ObjStr *name) {
  for (int i = e->n - 1; i >= 0; i--)
    if (e->b[i].name == name) return &e->b[i];
  return NULL;
}

static void env_set(Env *e, ObjStr *name, IrNode *node, bool maybe_unbound) {
  Binding *b = env_find(e, name);
  if (!b) {
    if (e->n == e->cap) {
      e->cap = e->cap ? 2 * e->cap : 16;
      e->b = lang_realloc(e->b, e->cap * sizeof *e->b);
    }
    b = &e->b[e->n++];
    b->name = name;
  }
  b->node = node;
  b->maybe_unbound = maybe_unbound;
  b->comp = false;
}

static Env env_copy(const Env *e) {
  Env c = {e->n, e->n, NULL};
  if (e->n) {
    c.b = lang_alloc(e->n * sizeof *c.b);
    memcpy(c.b, e->b, e->n * sizeof *c.b);
  }
  return c;
}

/* Names a statement list assigns, not looking into nested functions. */
static void collect_target(Ast *t, Names *out) {
  switch (t->kind) {
  case AST_NAME: names_add(out, t->name); break;
  case AST_TUPLE:
  case AST_LIST:
    for (int i = 0; i < t->seq.nitems; i++) collect_target(t->seq.items[i], out);
    break;
  case AST_SUBSCRIPT: collect_target(t->sub.obj, out); break;
  default: break;
  }
}

/* The iterator name of a call `next(it)` or `next(it, default)`, which
 * rebinds `it` to the iterator one step on, as `x[i] = v` rebinds x
 * (lower_next); NULL for any other expression. */
static Ast *advanced_iterator(const Ast *e) {
  if (e->kind != AST_CALL || e->call.func->kind != AST_NAME || e->call.nkw != 0 ||
      e->call.nargs < 1 || e->call.nargs > 2 || e->call.args[0]->kind != AST_NAME)
    return NULL;
  return strcmp(e->call.func->name->data, "next") == 0 ? e->call.args[0] : NULL;
}

/* The iterators that next() moves in expression e, outside lambdas,
 * comprehensions and branches (where lowering refuses it). */
static void collect_next(const Ast *e, Names *out) {
  if (!e) return;
  switch (e->kind) {
  case AST_CALL:
    if (advanced_iterator(e)) names_add(out, advanced_iterator(e)->name);
    collect_next(e->call.func, out);
    for (int i = 0; i < e->call.nargs; i++) collect_next(e->call.args[i], out);
    for (int i = 0; i < e->call.nkw; i++) collect_next(e->call.kwvalues[i], out);
    break;
  case AST_FSTRING:
    for (int i = 0; i < e->fstr.nparts; i++) collect_next(e->fstr.parts[i], out);
    break;
  case AST_FORMATTED: collect_next(e->fmt.value, out); break;
  case AST_TUPLE: case AST_LIST:
    for (int i = 0; i < e->seq.nitems; i++) collect_next(e->seq.items[i], out);
    break;
  case AST_DICT:
    for (int i = 0; i < e->dict.nitems; i++) {
      collect_next(e->dict.keys[i], out);
      collect_next(e->dict.values[i], out);
    }
    break;
  case AST_BINOP: collect_next(e->binop.left, out); collect_next(e->binop.right, out); break;
  case AST_UNARY: collect_next(e->unary.operand, out); break;
  case AST_COMPARE:
    for (int i = 0; i <= e->cmp.nops; i++) collect_next(e->cmp.operands[i], out);
    break;
  case AST_ATTRIBUTE: collect_next(e->attr.obj, out); break;
  case AST_SUBSCRIPT: collect_next(e->sub.obj, out); collect_next(e->sub.index, out); break;
  case AST_SLICE:
    collect_next(e->slice.start, out);
    collect_next(e->slice.stop, out);
    collect_next(e->slice.step, out);
    break;
  default: break;
  }
}

static void collect_assigned(Ast **stmts, int n, Names *out) {
  for (int i = 0; i < n; i++) {
    Ast *s = stmts[i];
    switch (s->kind) {
    case AST_EXPR_STMT: collect_next(s->expr.value, out); break;
    case AST_RETURN: collect_next(s->return_.value, out); break;
    case AST_ASSIGN:
      for (int j = 0; j < s->assign.ntargets; j++) collect_target(s->assign.targets[j], out);
      collect_next(s->assign.value, out);
      break;
    case AST_AUGASSIGN: collect_target(s->aug.target, out); collect_next(s->aug.value, out); break;
    case AST_IF:
      collect_assigned(s->if_.body, s->if_.nbody, out);
      collect_assigned(s->if_.orelse, s->if_.norelse, out);
      break;
    case AST_WHILE:
      collect_assigned(s->while_.body, s->while_.nbody, out);
      collect_assigned(s->while_.orelse, s->while_.norelse, out);
      break;
    case AST_FOR:
      collect_target(s->for_.target, out);
      collect_assigned(s->for_.body, s->for_.nbody, out);
      collect_assigned(s->for_.orelse, s->for_.norelse, out);
      break;
    case AST_DEF: names_add(out, s->def.name); break;
    case AST_IMPORT: names_add(out, s->import.alias ? s->import.alias : s->import.module); break;
    default: break;
    }
  }
}

/* ---- node helpers ---- */

static IrNode *konst(Lower *L, Value v, Span sp) { return ir_const(L->u, v, sp); }
static IrNode *knone(Lower *L, Span sp) { return konst(L, v_none(), sp); }
static IrNode *kstr(Lower *L, ObjStr *s, Span sp) { return konst(L, v_obj(s), sp); }

static IrNode *prim(Lower *L, IrPrim p, Span sp, int n, ...) {
  IrNode *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, IrNode *);
  va_end(ap);
  return ir_prim_applyv(L->u, L->cur, p, sp, n, args);
}

static IrNode *primv(Lower *L, IrPrim p, Span sp, int n, IrNode **args) {
  return ir_prim_applyv(L->u, L->cur, p, sp, n, args);
}

static IrNode *call(Lower *L, IrNode *f, int n, IrNode **args, Span sp) {
  IrNode **in = lang_alloc((n + 1) * sizeof *in);
  in[0] = f;
  for (int i = 0; i < n; i++) in[i + 1] = args[i];
  return ir_apply(L->u, L->cur, n + 1, in, sp);
}

static bool error_at(Lower *L, Span sp, const char *msg) {
  return lang_raise_at(L->vm, sp, "SyntaxError", "%s", msg);
}

/* A unique graph name in this unit: base, or base.2, base.3... */
/* Whether a graph of the unit is named name.  The set of names is
 * brought up to date with the graphs added since (by anyone), so that
 * naming n graphs costs O(n), where a scan of the unit per name made
 * lowering a module of many functions (stdlib/ad_rules.ms) quadratic. */
static bool name_taken(Lower *L, const char *name) {
  if (!L->graph_names) L->graph_names = lang_dict_new();
  for (; L->named < L->u->ngraphs; L->named++)
    lang_dict_put(L->graph_names, L->u->graphs[L->named]->name, v_none());   /* (its own: no versions) */
  Value v;
  return lang_dict_get(L->graph_names, lang_str(name), &v);
}

static const char *unique_name(Lower *L, const char *base) {
  StrBuf sb;
  sb_init(&sb);
  sb_adds(&sb, base);
  for (int k = 2; name_taken(L, sb.data); k++) {
    sb.len = 0;
    sb_printf(&sb, "%s.%d", base, k);
  }
  return sb.data;
}

static IrGraph *new_graph(Lower *L, const char *kind, unsigned flags, Span sp) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%s.%s%d", L->fn->prefix, kind, ++L->fn->counter);
  IrGraph *g = ir_graph_new(L->u, unique_name(L, sb.data), L->cur, flags, sp);
  g->display = L->fn->root->display;
  return g;
}

/* ---- names ---- */

static IrNode *read_binding(Lower *L, Binding *b, ObjStr *name, Span sp) {
  if (!b->maybe_unbound) return b->node;
  return prim(L, IR_P_CHECK_BOUND, sp, 2, b->node, kstr(L, name, sp));
}

/* Whether name is a global of the module: assigned at its top level,
 * here or by code lowered before, or a definition of its own not loaded
 * yet (ObjModule.lazy) */
static bool is_module_name(Lower *L, ObjStr *name) {
  Value dummy;
  return names_has(&L->module_names, name) || (L->module->names && lang_dict_get(L->module->names, name, &dummy)) ||
         (L->module->lazy && lang_dict_get(L->module->lazy->index, name, &dummy));
}

/* Name, bound by statement `stmt` of a lazily loaded module, read in a
 * later statement: what reading it would give had the module been
 * lowered whole, where the earlier statement's binding is in the module's
 * environment.  A def or a constant is that constant (a def's graph is
 * called directly); anything else, and a def that captures values of
 * its own statement's code (whose graph cannot be used outside it), is
 * read from the global once, at the module level, so that functions
 * capture it.  (The earlier statement is
 * loaded with this one: vm->lower_lazy adds it to the batch.) */
static IrNode *earlier_binding(Lower *L, FnScope *module, ObjStr *name, int stmt, Span sp) {
  ModuleLazy *z = L->module->lazy;
  if (!z->bound_known[stmt] && !L->vm->lower_lazy(L->vm, L->module, stmt)) return NULL;
  IrNode *v = z->bound[stmt];
  IrGraph *g = v ? ir_node_graph(v) : NULL;
  if (g) ir_free_vars(g);
  if (v && v->kind == IR_CONST && !(g && g->nfv))
    return g ? ir_const_graph(L->u, g, sp) : konst(L, v->value, sp);
  if (!v) return prim(L, IR_P_GLOBAL, sp, 1, kstr(L, name, sp));   /* not bound on every path */
  IrGraph *cur = L->cur;
  L->cur = module->root;
  IrNode *r = prim(L, IR_P_GLOBAL, sp, 1, kstr(L, name, sp));
  L->cur = cur;
  env_set(&module->env, name, r, false);
  return r;
}

static IrNode *lookup(Lower *L, ObjStr *name, Span sp) {
  FnScope *f = L->fn;
  for (; !f->is_module; f = f->parent) {
    /* a binding is a local, or a comprehension's variable (not in locals) */
    Binding *b = env_find(&f->env, name);
    if (b) return read_binding(L, b, name, sp);
    if (!names_has(&f->locals, name)) continue;
    /* assigned somewhere in that function, but not before this point */
    return prim(L, IR_P_CHECK_BOUND, sp, 2, konst(L, v_unbound(), sp), kstr(L, name, sp));
  }
  /* A module name already bound where the function is made is captured
   * like any other value; one bound later (a function defined further
   * down, a constant set after the def) is read when the code runs.  A
   * comprehension's variable is always its binding. */
  Binding *b = env_find(&f->env, name);
  if (b && b->comp) return read_binding(L, b, name, sp);
  if (b && !b->maybe_unbound) return b->node;
  Value stmt;
  if (!b && L->statement >= 0 && lang_dict_get(L->module->lazy->index, name, &stmt) && stmt.i < L->statement)
    return earlier_binding(L, f, name, (int)stmt.i, sp);
  Value dummy;
  if (!is_module_name(L, name) && L->vm->builtins && lang_dict_get(L->vm->builtins, name, &dummy))
    return konst(L, dummy, sp);
  if (L->module->lazy) names_add(&L->globals_read, name);
  return prim(L, IR_P_GLOBAL, sp, 1, kstr(L, name, sp));
}

/* Whether name, read here, is the builtin of that name (no local,
 * enclosing or module binding hides it); nothing is emitted. */
static bool is_builtin_name(Lower *L, ObjStr *name) {
  for (FnScope *f = L->fn; f; f = f->parent) {
    if (env_find(&f->env, name) || names_has(&f->locals, name)) return false;
    if (f->is_module) break;
  }
  Value dummy;
  if (is_module_name(L, name)) return false;
  return L->vm->builtins && lang_dict_get(L->vm->builtins, name, &dummy);
}

static void bind(Lower *L, ObjStr *name, IrNode *v, Span sp) {
  if (v->kind == IR_APPLY && !v->name) v->name = name;
  env_set(&L->fn->env, name, v, false);
  if (L->fn->is_module) prim(L, IR_P_SET_GLOBAL, sp, 2, kstr(L, name, sp), v);
}

/* ---- assignment ---- */

static bool assign(Lower *L, Ast *t, IrNode *v);
static IrNode *lower_index(Lower *L, Ast *ix);

static bool assign_subscript(Lower *L, Ast *t, IrNode *v) {
  IrNode *obj = lower_expr(L, t->sub.obj);
  if (!obj) return false;
  IrNode *idx = lower_index(L, t->sub.index);
  if (!idx) return false;
  IrNode *updated = prim(L, IR_P_SETITEM, t->span, 3, obj, idx, v);
  return assign(L, t->sub.obj, updated);
}

static bool assign(Lower *L, Ast *t, IrNode *v) {
  switch (t->kind) {
  case AST_NAME: bind(L, t->name, v, t->span); return true;
  case AST_TUPLE:
  case AST_LIST: {
    int n = t->seq.nitems;
    IrNode *tup = prim(L, IR_P_UNPACK, t->span, 2, v, konst(L, v_int(n), t->span));
    for (int i = 0; i < n; i++) {
      Ast *ti = t->seq.items[i];
      IrNode *item = prim(L, IR_P_GETITEM, ti->span, 2, tup, konst(L, v_int(i), ti->span));
      if (!assign(L, ti, item)) return false;
    }
    return true;
  }
  case AST_SUBSCRIPT: return assign_subscript(L, t, v);
  case AST_ATTRIBUTE:
    return error_at(L, t->span, "cannot assign to an attribute: Mist values are immutable");
  default: return error_at(L, t->span, "cannot assign to expression");
  }
}

/* ---- expressions ---- */

static IrPrim arith_prim(ArithOp op) {
  switch (op) {
  case OP_ADD: return IR_P_ADD;
  case OP_SUB: return IR_P_SUB;
  case OP_MUL: return IR_P_MUL;
  case OP_TRUEDIV: return IR_P_TRUEDIV;
  case OP_FLOORDIV: return IR_P_FLOORDIV;
  case OP_MOD: return IR_P_MOD;
  case OP_POW: return IR_P_POW;
  case OP_MATMUL: return IR_P_MATMUL;
  }
  return IR_P_ADD;
}

static IrPrim cmp_prim(CmpKind k) {
  switch (k) {
  case CMPK_EQ: return IR_P_EQ;
  case CMPK_NE: return IR_P_NE;
  case CMPK_LT: return IR_P_LT;
  case CMPK_LE: return IR_P_LE;
  case CMPK_GT: return IR_P_GT;
  case CMPK_GE: return IR_P_GE;
  case CMPK_IS: return IR_P_IS;
  case CMPK_IS_NOT: return IR_P_IS_NOT;
  default: return IR_P_CONTAINS;
  }
}

static IrNode *compare(Lower *L, CmpKind k, IrNode *a, IrNode *b, Span sp) {
  if (k == CMPK_IN) return prim(L, IR_P_CONTAINS, sp, 2, b, a);
  if (k == CMPK_NOT_IN) return prim(L, IR_P_NOT, sp, 1, prim(L, IR_P_CONTAINS, sp, 2, b, a));
  return prim(L, cmp_prim(k), sp, 2, a, b);
}

/* Evaluate one of two graphs by a condition, as a value:
 * switch(c, @then, @else)() in the current graph. */
static IrNode *branch_value(Lower *L, IrNode *c, IrGraph *then, IrGraph *orelse, Span sp) {
  IrNode *s = prim(L, IR_P_SWITCH, sp, 3, c, ir_const_graph(L->u, then, sp),
                   ir_const_graph(L->u, orelse, sp));
  return call(L, s, 0, NULL, sp);
}

/* A branch graph whose output is the expression e (lowered inside it),
 * or the node `value` when e is NULL. */
static IrGraph *expr_graph(Lower *L, const char *kind, Ast *e, IrNode *value, Span sp, bool *ok) {
  IrGraph *g = new_graph(L, kind, IRG_BRANCH, sp);
  IrGraph *saved = L->cur;
  L->cur = g;
  g->ret = e ? lower_expr(L, e) : value;
  L->cur = saved;
  if (!g->ret) *ok = false;
  return g;
}

static IrNode *lower_boolop(Lower *L, Ast *e) {
  IrNode *a = lower_expr(L, e->boolop.left);
  if (!a) return NULL;
  bool ok = true;
  IrGraph *rhs = expr_graph(L, e->boolop.op == BOOL_AND ? "and" : "or", e->boolop.right, NULL, e->span, &ok);
  IrGraph *lhs = expr_graph(L, "keep", NULL, a, e->span, &ok);
  if (!ok) return NULL;
  return e->boolop.op == BOOL_AND ? branch_value(L, a, rhs, lhs, e->span)
                                  : branch_value(L, a, lhs, rhs, e->span);
}

/* a < b < c: (a < b) and (b < c), with b evaluated once. */
static IrNode *lower_compare_from(Lower *L, Ast *e, int i, IrNode *left) {
  Ast *rast = e->cmp.operands[i + 1];
  IrNode *right = lower_expr(L, rast);
  if (!right) return NULL;
  IrNode *r = compare(L, e->cmp.ops[i], left, right, e->span);
  if (i + 1 == e->cmp.nops) return r;
  IrGraph *rest = new_graph(L, "and", IRG_BRANCH, e->span);
  IrGraph *saved = L->cur;
  L->cur = rest;
  rest->ret = lower_compare_from(L, e, i + 1, right);
  L->cur = saved;
  if (!rest->ret) return NULL;
  bool ok = true;
  IrGraph *keep = expr_graph(L, "keep", NULL, r, e->span, &ok);
  return branch_value(L, r, rest, keep, e->span);
}

static IrNode *lower_fstring(Lower *L, Ast **parts, int nparts, Span sp);

static IrNode *lower_formatted(Lower *L, Ast *f) {
  IrNode *v = lower_expr(L, f->fmt.value);
  if (!v) return NULL;
  if (f->fmt.conv == 'r') v = prim(L, IR_P_REPR, f->span, 1, v);
  else if (f->fmt.conv == 's') v = prim(L, IR_P_STR, f->span, 1, v);
  IrNode *spec;
  if (f->fmt.nspec == 0) spec = kstr(L, lang_str(""), f->span);
  else if (!(spec = lower_fstring(L, f->fmt.spec, f->fmt.nspec, f->span))) return NULL;
  return prim(L, IR_P_FORMAT, f->span, 2, v, spec);
}

static IrNode *lower_fstring(Lower *L, Ast **parts, int nparts, Span sp) {
  if (nparts == 1 && parts[0]->kind == AST_STR) return kstr(L, parts[0]->str, sp);
  IrNode **args = lang_alloc((nparts ? nparts : 1) * sizeof *args);
  for (int i = 0; i < nparts; i++) {
    if (parts[i]->kind == AST_STR) args[i] = kstr(L, parts[i]->str, parts[i]->span);
    else if (!(args[i] = lower_formatted(L, parts[i]))) return NULL;
  }
  if (nparts == 0) return kstr(L, lang_str(""), sp);
  return primv(L, IR_P_CONCAT_STR, sp, nparts, args);
}

static bool lower_args(Lower *L, Ast **args, int n, IrNode **out) {
  for (int i = 0; i < n; i++)
    if (!(out[i] = lower_expr(L, args[i]))) return false;
  return true;
}

/* `next(it)`, `next(it, default)`: the item, with `it` rebound to the
 * iterator one step on.  Only in the straight-line code of a statement:
 * a rebinding made in a branch of `x if c else y`, `and`/`or`, a
 * comprehension or a lambda would not reach the code after it. */
static IrNode *lower_next(Lower *L, Ast *e) {
  if (L->cur != L->stmt_graph) {
    error_at(L, e->span, "next(it) cannot move the iterator here: Mist values are immutable, so next moves one "
                         "by rebinding its name, which a conditional expression, `and`/`or`, a comprehension or "
                         "a lambda cannot do; write `x = next(it)` as a statement of its own");
    return NULL;
  }
  Ast *it = e->call.args[0];
  IrNode *args[2];
  if (!lower_args(L, e->call.args, e->call.nargs, args)) return NULL;
  Value step;
  if (!lang_dict_get(L->vm->builtins, lang_intern(L->vm, "_next_step", 10), &step)) {
    error_at(L, e->span, "next() is missing from the builtins");
    return NULL;
  }
  IrNode *pair = call(L, konst(L, step, e->call.func->span), e->call.nargs, args, e->span);
  bind(L, it->name, prim(L, IR_P_GETITEM, e->span, 2, pair, konst(L, v_int(1), e->span)), it->span);
  return prim(L, IR_P_GETITEM, e->span, 2, pair, konst(L, v_int(0), e->span));
}

static IrNode *lower_call(Lower *L, Ast *e) {
  int na = e->call.nargs, nk = e->call.nkw;
  Ast *fn = e->call.func;
  if (advanced_iterator(e) && is_builtin_name(L, fn->name)) return lower_next(L, e);
  /* x.f(args): a method call, resolved when it runs */
  if (fn->kind == AST_ATTRIBUTE && nk == 0) {
    IrNode **in = lang_alloc((na + 2) * sizeof *in);
    if (!(in[0] = lower_expr(L, fn->attr.obj))) return NULL;
    in[1] = kstr(L, fn->attr.name, fn->attr.name_span);
    if (!lower_args(L, e->call.args, na, in + 2)) return NULL;
    return primv(L, IR_P_CALL_METHOD, e->span, na + 2, in);
  }
  IrNode *f = lower_expr(L, fn);
  if (!f) return NULL;
  if (nk == 0) {
    IrNode **args = lang_alloc((na ? na : 1) * sizeof *args);
    if (!lower_args(L, e->call.args, na, args)) return NULL;
    return call(L, f, na, args, e->span);
  }
  IrNode **in = lang_alloc((na + nk + 2) * sizeof *in);
  in[0] = f;
  ObjSeq *names = lang_tuple_new(nk);
  for (int i = 0; i < nk; i++) names->items[i] = v_obj(e->call.kwnames[i]);
  in[1] = konst(L, v_obj(names), e->span);
  if (!lower_args(L, e->call.args, na, in + 2)) return NULL;
  if (!lower_args(L, e->call.kwvalues, nk, in + 2 + na)) return NULL;
  return primv(L, IR_P_CALL_KW, e->span, na + nk + 2, in);
}

static IrNode *lower_seq(Lower *L, IrPrim p, Ast **items, int n, Span sp) {
  IrNode **args = lang_alloc((n ? n : 1) * sizeof *args);
  if (!lower_args(L, items, n, args)) return NULL;
  return primv(L, p, sp, n, args);
}

static IrNode *lower_index(Lower *L, Ast *ix) {
  if (ix->kind == AST_SLICE) {
    IrNode *parts[3];
    Ast *asts[3] = {ix->slice.start, ix->slice.stop, ix->slice.step};
    for (int i = 0; i < 3; i++) {
      if (!asts[i]) parts[i] = knone(L, ix->span);
      else if (!(parts[i] = lower_expr(L, asts[i]))) return NULL;
    }
    return prim(L, IR_P_SLICE, ix->span, 3, parts[0], parts[1], parts[2]);
  }
  if (ix->kind == AST_TUPLE) {
    int n = ix->seq.nitems;
    IrNode **args = lang_alloc((n ? n : 1) * sizeof *args);
    for (int i = 0; i < n; i++)
      if (!(args[i] = lower_index(L, ix->seq.items[i]))) return NULL;
    return primv(L, IR_P_MAKE_TUPLE, ix->span, n, args);
  }
  return lower_expr(L, ix);
}

/* ---- comprehensions ----
 *
 * [e for x in xs if c for y in ys] builds its result without mutation,
 * as a chain of pairs, newest first: acc starts as None, each element
 * makes acc = (e, acc), and cons_list(acc, kind) turns the chain into
 * the list (kind 0) or, from (key, value) pairs, the dict (kind 1).
 * Each `for` clause is a loop graph C(i, acc) nested in the graph being
 * built, over seq = iter_seq(iterable) and n = len(seq) computed before
 * it (free variables of C), as for a `for` statement:
 *
 *   C(i, acc):  switch(i < n, @body, @exit)()
 *   body:       x = seq[i]
 *               acc2 = the filters (a false one keeps acc), then the next
 *                      clause's loop C'(0, acc) or, in the last, (e, acc)
 *               C(i + 1, acc2)          (a tail call: the loop goes round)
 *   exit:       acc
 *
 * and the comprehension is cons_list(C(0, None), kind).  Its variables
 * are bound in the function's environment only while it is lowered (not
 * as module globals), so inside it they shadow outer names and after it
 * they are gone, as in Python 3; the first iterable is lowered before
 * any of them is bound, in the enclosing scope.  A generator expression
 * is lowered the same way: Mist has no lazy iterators, so
 * `sum(x * x for x in xs)` sums a list. */

/* Bind a comprehension variable: v, or Unbound (not assigned yet). */
static void comp_var(Lower *L, ObjStr *name, IrNode *v, Span sp) {
  if (v && v->kind == IR_APPLY && !v->name) v->name = name;
  env_set(&L->fn->env, name, v ? v : konst(L, v_unbound(), sp), !v);
  env_find(&L->fn->env, name)->comp = true;
}

/* The target t (names, or tuples and lists of them: the parser checked)
 * bound to v, or to Unbound when v is NULL. */
static void comp_assign(Lower *L, Ast *t, IrNode *v) {
  if (t->kind == AST_NAME) {
    comp_var(L, t->name, v, t->span);
    return;
  }
  int n = t->seq.nitems;
  IrNode *tup = v ? prim(L, IR_P_UNPACK, t->span, 2, v, konst(L, v_int(n), t->span)) : NULL;
  for (int i = 0; i < n; i++) {
    Ast *ti = t->seq.items[i];
    comp_assign(L, ti, tup ? prim(L, IR_P_GETITEM, ti->span, 2, tup, konst(L, v_int(i), ti->span)) : NULL);
  }
}

/* acc with this element pushed: ((key, value) or e, acc). */
static IrNode *comp_push(Lower *L, Ast *e, IrNode *acc) {
  IrNode *item = NULL;
  if (e->comp.key) {
    IrNode *k = lower_expr(L, e->comp.key);
    if (!k) return NULL;
    IrNode *v = lower_expr(L, e->comp.elt);
    if (!v) return NULL;
    item = prim(L, IR_P_MAKE_TUPLE, e->span, 2, k, v);
  } else if (!(item = lower_expr(L, e->comp.elt))) {
    return NULL;
  }
  return prim(L, IR_P_MAKE_TUPLE, e->span, 2, item, acc);
}

static IrNode *comp_loop(Lower *L, Ast *e, int k, IrNode *iterable, IrNode *acc0);

/* acc after clause k's filters from the j-th on, then the next clause
 * (or the push, after the last one). */
static IrNode *comp_rest(Lower *L, Ast *e, int k, int j, IrNode *acc) {
  AstCompFor *cl = &e->comp.fors[k];
  if (j == cl->nifs) {
    if (k + 1 == e->comp.nfors) return comp_push(L, e, acc);
    IrNode *it = lower_expr(L, e->comp.fors[k + 1].iter);
    return it ? comp_loop(L, e, k + 1, it, acc) : NULL;
  }
  Ast *cond = cl->ifs[j];
  IrNode *c = lower_expr(L, cond);
  if (!c) return NULL;
  IrGraph *take = new_graph(L, "take", IRG_BRANCH, cond->span);
  IrGraph *saved = L->cur;
  L->cur = take;
  take->ret = comp_rest(L, e, k, j + 1, acc);
  L->cur = saved;
  if (!take->ret) return NULL;
  bool ok = true;
  IrGraph *skip = expr_graph(L, "skip", NULL, acc, cond->span, &ok);
  return branch_value(L, c, take, skip, cond->span);
}

/* Clause k over the value iterable, as a loop graph called here
 * starting from acc0: the chain it returns. */
static IrNode *comp_loop(Lower *L, Ast *e, int k, IrNode *iterable, IrNode *acc0) {
  AstCompFor *cl = &e->comp.fors[k];
  Span sp = e->span, isp = cl->iter->span;
  IrNode *seq = prim(L, IR_P_ITER_SEQ, isp, 1, iterable);
  IrNode *n = prim(L, IR_P_LEN, isp, 1, seq);
  IrGraph *lg = new_graph(L, "comp", IRG_LOOP, sp);
  IrNode *i = ir_param(L->u, lg, NULL, sp);
  IrNode *acc = ir_param(L->u, lg, NULL, sp);
  IrGraph *saved = L->cur;
  L->cur = lg;
  IrNode *c = prim(L, IR_P_LT, sp, 2, i, n);
  IrGraph *bg = new_graph(L, "body", IRG_BRANCH | IRG_BODY, sp);
  bool ok = true;
  IrGraph *eg = expr_graph(L, "exit", NULL, acc, sp, &ok);
  L->cur = bg;
  comp_assign(L, cl->target, prim(L, IR_P_GETITEM, cl->target->span, 2, seq, i));
  IrNode *acc2 = comp_rest(L, e, k, 0, acc);
  if (acc2) {
    IrNode *next[2] = {prim(L, IR_P_ADD, sp, 2, i, konst(L, v_int(1), sp)), acc2};
    bg->ret = call(L, ir_const_graph(L->u, lg, sp), 2, next, sp);
  }
  L->cur = lg;
  lg->ret = branch_value(L, c, bg, eg, sp);
  L->cur = saved;
  if (!acc2) return NULL;
  IrNode *start[2] = {konst(L, v_int(0), sp), acc0};
  return call(L, ir_const_graph(L->u, lg, sp), 2, start, sp);
}

/* LISTCOMP, DICTCOMP, GENEXP. */
static IrNode *lower_comp(Lower *L, Ast *e) {
  IrNode *it = lower_expr(L, e->comp.fors[0].iter);
  if (!it) return NULL;
  Env saved = L->fn->env;
  L->fn->env = env_copy(&saved);
  /* every variable of the comprehension shadows its outer namesake in
   * the whole of it: one read before its clause binds it is unbound */
  for (int k = 0; k < e->comp.nfors; k++) comp_assign(L, e->comp.fors[k].target, NULL);
  IrNode *acc = comp_loop(L, e, 0, it, knone(L, e->span));
  L->fn->env = saved;
  if (!acc) return NULL;
  return prim(L, IR_P_CONS_LIST, e->span, 2, acc, konst(L, v_int(e->kind == AST_DICTCOMP), e->span));
}

static IrGraph *lower_function(Lower *L, ObjStr *name, const char *display, AstParam *params,
                               int nparams, Ast **body, int nbody, Ast *expr_body, Span sp);

static IrNode *lower_expr(Lower *L, Ast *e) {
  switch (e->kind) {
  case AST_NAME: return lookup(L, e->name, e->span);
  case AST_INT: return konst(L, v_int(e->ival), e->span);
  case AST_FLOAT: return konst(L, v_float(e->fval), e->span);
  case AST_STR: return kstr(L, e->str, e->span);
  case AST_NONE: return knone(L, e->span);
  case AST_TRUE: return konst(L, v_bool(true), e->span);
  case AST_ELLIPSIS: return konst(L, lang_ellipsis(), e->span);
  case AST_FALSE: return konst(L, v_bool(false), e->span);
  case AST_FSTRING: return lower_fstring(L, e->fstr.parts, e->fstr.nparts, e->span);
  case AST_FORMATTED: return lower_formatted(L, e);
  case AST_TUPLE: return lower_seq(L, IR_P_MAKE_TUPLE, e->seq.items, e->seq.nitems, e->span);
  case AST_LIST: return lower_seq(L, IR_P_MAKE_LIST, e->seq.items, e->seq.nitems, e->span);
  case AST_DICT: {
    int n = e->dict.nitems;
    IrNode **args = lang_alloc((2 * n + 1) * sizeof *args);
    for (int i = 0; i < n; i++) {
      if (!(args[2 * i] = lower_expr(L, e->dict.keys[i]))) return NULL;
      if (!(args[2 * i + 1] = lower_expr(L, e->dict.values[i]))) return NULL;
    }
    return primv(L, IR_P_MAKE_DICT, e->span, 2 * n, args);
  }
  case AST_BINOP: {
    IrNode *a = lower_expr(L, e->binop.left);
    if (!a) return NULL;
    IrNode *b = lower_expr(L, e->binop.right);
    if (!b) return NULL;
    return prim(L, arith_prim(e->binop.op), e->span, 2, a, b);
  }
  case AST_UNARY: {
    IrNode *a = lower_expr(L, e->unary.operand);
    if (!a) return NULL;
    IrPrim p = e->unary.op == UN_NEG ? IR_P_NEG : e->unary.op == UN_POS ? IR_P_POS : IR_P_NOT;
    return prim(L, p, e->span, 1, a);
  }
  case AST_BOOLOP: return lower_boolop(L, e);
  case AST_COMPARE: {
    IrNode *a = lower_expr(L, e->cmp.operands[0]);
    return a ? lower_compare_from(L, e, 0, a) : NULL;
  }
  case AST_IFEXP: {
    IrNode *c = lower_expr(L, e->ifexp.cond);
    if (!c) return NULL;
    bool ok = true;
    IrGraph *t = expr_graph(L, "then", e->ifexp.then, NULL, e->span, &ok);
    IrGraph *f = expr_graph(L, "else", e->ifexp.orelse, NULL, e->span, &ok);
    return ok ? branch_value(L, c, t, f, e->span) : NULL;
  }
  case AST_LAMBDA: {
    IrGraph *g = lower_function(L, NULL, "<lambda>", e->lambda.params, e->lambda.nparams, NULL, 0,
                                e->lambda.body, e->span);
    return g ? ir_const_graph(L->u, g, e->span) : NULL;
  }
  case AST_CALL: return lower_call(L, e);
  case AST_LISTCOMP:
  case AST_DICTCOMP:
  case AST_GENEXP: return lower_comp(L, e);
  case AST_ATTRIBUTE: {
    IrNode *x = lower_expr(L, e->attr.obj);
    if (!x) return NULL;
    return prim(L, IR_P_GETATTR, e->span, 2, x, kstr(L, e->attr.name, e->attr.name_span));
  }
  case AST_SUBSCRIPT: {
    IrNode *x = lower_expr(L, e->sub.obj);
    if (!x) return NULL;
    IrNode *i = lower_index(L, e->sub.index);
    if (!i) return NULL;
    return prim(L, IR_P_GETITEM, e->span, 2, x, i);
  }
  case AST_SLICE: {
    error_at(L, e->span, "a slice is only allowed inside []");
    return NULL;
  }
  default:
    error_at(L, e->span, "invalid expression");
    return NULL;
  }
}

/* ---- functions ---- */

/* def NAME(params): body, or lambda params: expr.  Default values are
 * evaluated here, in the enclosing graph, and belong to the new graph. */
static IrGraph *lower_function(Lower *L, ObjStr *name, const char *display, AstParam *params,
                               int nparams, Ast **body, int nbody, Ast *expr_body, Span sp) {
  int ndef = 0;
  IrNode **defaults = lang_alloc((nparams ? nparams : 1) * sizeof *defaults);
  for (int i = 0; i < nparams; i++)
    if (params[i].def && !(defaults[ndef++] = lower_expr(L, params[i].def))) return NULL;

  StrBuf sb;
  sb_init(&sb);
  if (L->fn->is_module && name) sb_adds(&sb, name->data);
  else if (name) sb_printf(&sb, "%s.%s", L->fn->prefix, name->data);
  else sb_printf(&sb, "%s.lambda%d", L->fn->prefix, ++L->fn->counter);
  IrGraph *g = ir_graph_new(L->u, unique_name(L, sb.data), L->cur, IRG_FUNCTION, sp);
  g->module = L->module;
  g->display = lang_str(display);
  g->ndefaults = ndef;
  g->defaults = defaults;
  /* a nested def may call itself: its name means its own graph inside
   * (the enclosing binding is made after, possibly decorated) */
  if (name && !L->fn->is_module) env_set(&L->fn->env, name, ir_const_graph(L->u, g, sp), false);

  FnScope fs = {0};
  fs.parent = L->fn;
  fs.root = g;
  fs.prefix = g->name->data;
  for (int i = 0; i < nparams; i++) {
    names_add(&fs.locals, params[i].name);
    IrNode *p = ir_param(L->u, g, params[i].name, params[i].span);
    env_set(&fs.env, params[i].name, p, false);
  }
  if (body) collect_assigned(body, nbody, &fs.locals);

  FnScope *saved_fn = L->fn;
  IrGraph *saved_cur = L->cur;
  Loop *saved_loop = L->loop;
  L->fn = &fs;
  L->cur = g;
  L->loop = NULL;
  bool ok;
  if (expr_body) {
    g->ret = lower_expr(L, expr_body);
    ok = g->ret != NULL;
  } else {
    Cont k = {K_RETURN_NONE};
    ok = lower_block(L, body, nbody, &k);
  }
  L->fn = saved_fn;
  L->cur = saved_cur;
  L->loop = saved_loop;
  return ok ? g : NULL;
}

static bool lower_def(Lower *L, Ast *s) {
  IrGraph *g = lower_function(L, s->def.name, s->def.name->data, s->def.params, s->def.nparams,
                              s->def.body, s->def.nbody, NULL, s->span);
  if (!g) return false;
  IrNode *v = ir_const_graph(L->u, g, s->span);
  for (int i = s->def.ndecorators - 1; i >= 0; i--) {
    IrNode *d = lower_expr(L, s->def.decorators[i]);
    if (!d) return false;
    v = call(L, d, 1, &v, s->def.decorators[i]->span);
  }
  bind(L, s->def.name, v, s->span);
  return true;
}

/* ---- statements ---- */

/* Values of names in the current environment, for a call to a join or
 * loop graph. Unassigned ones pass Unbound. */
static IrNode **current_values(Lower *L, const Names *vars, Span sp) {
  IrNode **args = lang_alloc((vars->n ? vars->n : 1) * sizeof *args);
  for (int i = 0; i < vars->n; i++) {
    Binding *b = env_find(&L->fn->env, vars->items[i]);
    args[i] = b ? b->node : konst(L, v_unbound(), sp);
  }
  return args;
}

/* The graph's output: call g(extra..., values of vars) in tail position. */
static void tail_call(Lower *L, IrGraph *g, IrNode *extra, const Names *vars, Span sp) {
  IrNode **vals = current_values(L, vars, sp);
  int n = vars->n + (extra ? 1 : 0);
  IrNode **args = lang_alloc((n ? n : 1) * sizeof *args);
  int k = 0;
  if (extra) args[k++] = extra;
  for (int i = 0; i < vars->n; i++) args[k++] = vals[i];
  L->cur->ret = call(L, ir_const_graph(L->u, g, sp), n, args, sp);
}

static void finish(Lower *L, Cont *k, Span sp) {
  switch (k->kind) {
  case K_RETURN_NONE:
    L->cur->ret = k->echo ? k->echo : knone(L, sp);
    break;
  case K_JOIN: tail_call(L, k->join, NULL, &k->vars, sp); break;
  case K_LOOP_BACK: {
    Loop *lp = k->loop;
    IrNode *next = NULL;
    if (lp->kind == LOOP_COUNT) next = prim(L, IR_P_ADD, sp, 2, lp->counter, lp->step);
    tail_call(L, lp->header, next, &lp->vars, sp);
    break;
  }
  }
}

/* Parameters for vars in graph g, bound in a fresh environment that
 * otherwise copies `base`.  maybe_unbound is kept from base: a variable
 * assigned before the construct stays assigned on every path. */
static void bind_params(Lower *L, IrGraph *g, const Names *vars, const Env *base, Env *out) {
  *out = env_copy(base);
  for (int i = 0; i < vars->n; i++) {
    IrNode *p = ir_param(L->u, g, vars->items[i], g->span);
    Binding *b = env_find((Env *)base, vars->items[i]);
    env_set(out, vars->items[i], p, !b || b->maybe_unbound);
  }
}

/* Lower stmts into `g` starting from environment env, then k. */
static bool lower_into(Lower *L, IrGraph *g, Env env, Ast **stmts, int n, Cont *k) {
  IrGraph *saved = L->cur;
  Env saved_env = L->fn->env;
  L->cur = g;
  L->fn->env = env;
  bool ok = lower_block(L, stmts, n, k);
  L->cur = saved;
  L->fn->env = saved_env;
  return ok;
}

/* The continuation for what follows a construct: REST with k, as a join
 * graph taking the variables the construct may assign; or k itself when
 * REST is empty. */
static bool make_join(Lower *L, Ast **rest, int nrest, Cont *k, const Names *assigned, Span sp,
                      Cont *out) {
  Names vars = {0};
  for (int i = 0; i < assigned->n; i++)
    if (names_has(&L->fn->locals, assigned->items[i]) || L->fn->is_module)
      names_add(&vars, assigned->items[i]);
  if (nrest == 0 && k->kind != K_RETURN_NONE) {
    *out = *k;
    return true;
  }
  IrGraph *j = new_graph(L, "join", IRG_JOIN, sp);
  Env env;
  bind_params(L, j, &vars, &L->fn->env, &env);
  if (!lower_into(L, j, env, rest, nrest, k)) return false;
  out->kind = K_JOIN;
  out->join = j;
  out->vars = vars;
  out->loop = NULL;
  out->echo = NULL;
  return true;
}

static bool lower_if(Lower *L, Ast *s, Ast **rest, int nrest, Cont *k) {
  IrNode *c = lower_expr(L, s->if_.cond);
  if (!c) return false;
  Names assigned = {0};
  collect_assigned(s->if_.body, s->if_.nbody, &assigned);
  collect_assigned(s->if_.orelse, s->if_.norelse, &assigned);
  Cont after;
  if (!make_join(L, rest, nrest, k, &assigned, s->span, &after)) return false;
  IrGraph *t = new_graph(L, "if", IRG_BRANCH, s->span);
  IrGraph *f = new_graph(L, "else", IRG_BRANCH, s->span);
  if (!lower_into(L, t, env_copy(&L->fn->env), s->if_.body, s->if_.nbody, &after)) return false;
  if (!lower_into(L, f, env_copy(&L->fn->env), s->if_.orelse, s->if_.norelse, &after)) return false;
  L->cur->ret = branch_value(L, c, t, f, s->span);
  return true;
}

/* while c: body   and   for x in ...: body */
static bool lower_loop(Lower *L, Ast *s, Ast **rest, int nrest, Cont *k) {
  bool is_for = s->kind == AST_FOR;
  Ast **body = is_for ? s->for_.body : s->while_.body;
  int nbody = is_for ? s->for_.nbody : s->while_.nbody;
  Ast **orelse = is_for ? s->for_.orelse : s->while_.orelse;
  int norelse = is_for ? s->for_.norelse : s->while_.norelse;
  Loop lp = {0};
  lp.outer = L->loop;
  lp.fn = L->fn;
  lp.kind = is_for ? LOOP_COUNT : LOOP_WHILE;

  Names assigned = {0};
  if (is_for) collect_target(s->for_.target, &assigned);
  collect_assigned(body, nbody, &assigned);
  /* (what the else block assigns reaches after through the exit) */
  collect_assigned(orelse, norelse, &assigned);
  for (int i = 0; i < assigned.n; i++)
    if (names_has(&L->fn->locals, assigned.items[i]) || L->fn->is_module)
      names_add(&lp.vars, assigned.items[i]);

  /* for: what to count over.  range(...) with a constant step counts
   * directly; anything else indexes iter_seq(x) from 0 to len. */
  IrNode *start = NULL, *stop = NULL, *seq = NULL;
  IrPrim test = IR_P_LT;
  if (is_for) {
    Ast *it = s->for_.iter;
    bool is_range = false;
    /* only a call spelled `range` can be one: looking up any other name
     * here would leave a dead global() node behind */
    if (it->kind == AST_CALL && it->call.func->kind == AST_NAME && it->call.nkw == 0 &&
        it->call.nargs >= 1 && it->call.nargs <= 3 && strcmp(it->call.func->name->data, "range") == 0) {
      IrNode *f = lookup(L, it->call.func->name, it->call.func->span);
      Value r;
      is_range = f->kind == IR_CONST && L->vm->builtins &&
                 lang_dict_get(L->vm->builtins, lang_intern(L->vm, "range", 5), &r) &&
                 r.o == f->value.o;
      if (is_range && it->call.nargs == 3) {
        Ast *st = it->call.args[2];
        bool neg = st->kind == AST_UNARY && st->unary.op == UN_NEG && st->unary.operand->kind == AST_INT;
        is_range = (st->kind == AST_INT && st->ival != 0) || neg;
        if (neg) test = IR_P_GT;
      }
    }
    if (is_range) {
      Ast **a = it->call.args;
      int na = it->call.nargs;
      IrNode *v[3];
      for (int i = 0; i < na; i++)
        if (!(v[i] = lower_expr(L, a[i]))) return false;
      /* range's own checks (ints only) run once, as Python's range() does */
      IrNode *r = call(L, lookup(L, it->call.func->name, it->call.func->span), na, v, it->span);
      (void)r;
      start = na == 1 ? konst(L, v_int(0), it->span) : v[0];
      stop = na == 1 ? v[0] : v[1];
      lp.step = na == 3 ? v[2] : konst(L, v_int(1), it->span);
    } else {
      IrNode *x = lower_expr(L, it);
      if (!x) return false;
      seq = prim(L, IR_P_ITER_SEQ, it->span, 1, x);
      stop = prim(L, IR_P_LEN, it->span, 1, seq);
      start = konst(L, v_int(0), it->span);
      lp.step = konst(L, v_int(1), it->span);
    }
  }

  IrGraph *hdr = new_graph(L, is_for ? "for" : "while", IRG_LOOP, s->span);
  lp.header = hdr;
  if (is_for) lp.counter = ir_param(L->u, hdr, NULL, s->span);
  Env hdr_env;
  bind_params(L, hdr, &lp.vars, &L->fn->env, &hdr_env);

  /* the entry: call the header with the current values */
  IrNode *entry_extra = start;
  Env entry_env = L->fn->env;

  /* after: REST with k, taking the carried variables */
  IrGraph *aft = new_graph(L, "after", IRG_JOIN, s->span);
  {
    Env env;
    bind_params(L, aft, &lp.vars, &hdr_env, &env);
    IrGraph *saved_cur = L->cur;
    Loop *saved_loop = L->loop;
    L->loop = lp.outer;
    /* the after graph is lexically in the function, not the loop */
    bool ok = lower_into(L, aft, env, rest, nrest, k);
    L->cur = saved_cur;
    L->loop = saved_loop;
    if (!ok) return false;
  }
  lp.after = aft;

  /* header: test, then body or after */
  L->fn->env = hdr_env;
  IrGraph *saved_cur = L->cur;
  L->cur = hdr;
  IrNode *c;
  if (is_for) {
    c = prim(L, test, s->span, 2, lp.counter, stop);
  } else {
    c = lower_expr(L, s->while_.cond);
    if (!c) return false;
  }
  IrGraph *bg = new_graph(L, "body", IRG_BRANCH | IRG_BODY, s->span);
  IrGraph *eg = new_graph(L, "exit", IRG_BRANCH, s->span);
  if (norelse == 0) {
    /* exit: call after with the header's values */
    IrGraph *sc = L->cur;
    L->cur = eg;
    tail_call(L, aft, NULL, &lp.vars, s->span);
    L->cur = sc;
  } else {
    /* exit: the else block, then after; a break skips it.  The block is
     * lexically outside the loop: its break and continue are an
     * enclosing loop's. */
    Loop *saved_loop = L->loop;
    L->loop = lp.outer;
    Cont to_after = {K_JOIN};
    to_after.join = aft;
    to_after.vars = lp.vars;
    bool ok = lower_into(L, eg, env_copy(&hdr_env), orelse, norelse, &to_after);
    L->loop = saved_loop;
    if (!ok) return false;
  }
  {
    IrGraph *sc = L->cur;
    L->cur = bg;
    L->loop = &lp;
    bool ok = true;
    if (is_for) {
      IrNode *x = seq ? prim(L, IR_P_GETITEM, s->for_.target->span, 2, seq, lp.counter) : lp.counter;
      ok = assign(L, s->for_.target, x);
    }
    Cont back = {K_LOOP_BACK};
    back.loop = &lp;
    if (ok) ok = lower_block(L, body, nbody, &back);
    L->loop = lp.outer;
    L->cur = sc;
    if (!ok) return false;
  }
  hdr->ret = branch_value(L, c, bg, eg, s->span);
  L->cur = saved_cur;
  L->fn->env = entry_env;
  tail_call(L, hdr, entry_extra, &lp.vars, s->span);
  return true;
}

static bool lower_assert(Lower *L, Ast *s) {
  IrNode *c = lower_expr(L, s->assert_.test);
  if (!c) return false;
  IrGraph *ok_g = new_graph(L, "ok", IRG_BRANCH, s->span);
  ok_g->ret = knone(L, s->span);
  IrGraph *fail = new_graph(L, "fail", IRG_BRANCH, s->span);
  IrGraph *saved = L->cur;
  L->cur = fail;
  IrNode *msg = s->assert_.msg ? lower_expr(L, s->assert_.msg) : knone(L, s->span);
  if (!msg) return false;
  fail->ret = prim(L, IR_P_ASSERT_FAIL, s->span, 1, msg);
  L->cur = saved;
  branch_value(L, c, ok_g, fail, s->span);
  return true;
}

/* Lower statements in order; when they run out, k.  A statement that
 * ends the path (return, break, continue, or a construct that moved the
 * rest into a continuation) stops the loop: what follows it is dead or
 * already lowered. */
static bool lower_block(Lower *L, Ast **stmts, int n, Cont *k) {
  for (int i = 0; i < n; i++) {
    Ast *s = stmts[i];
    switch (s->kind) {
    case AST_EXPR_STMT: {
      L->stmt_graph = L->cur;
      IrNode *v = lower_expr(L, s->expr.value);
      if (!v) return false;
      if (L->echo && k->kind == K_RETURN_NONE && L->fn->is_module && n == 1) k->echo = v;
      break;
    }
    case AST_ASSIGN: {
      L->stmt_graph = L->cur;
      IrNode *v = lower_expr(L, s->assign.value);
      if (!v) return false;
      for (int t = 0; t < s->assign.ntargets; t++)
        if (!assign(L, s->assign.targets[t], v)) return false;
      break;
    }
    case AST_AUGASSIGN: {
      L->stmt_graph = L->cur;
      Ast *t = s->aug.target;
      IrPrim p = arith_prim(s->aug.op);
      if (t->kind == AST_NAME) {
        IrNode *old = lookup(L, t->name, t->span);
        IrNode *v = lower_expr(L, s->aug.value);
        if (!v) return false;
        bind(L, t->name, prim(L, p, s->span, 2, old, v), s->span);
      } else if (t->kind == AST_SUBSCRIPT) {
        IrNode *obj = lower_expr(L, t->sub.obj);
        if (!obj) return false;
        IrNode *idx = lower_index(L, t->sub.index);
        if (!idx) return false;
        IrNode *old = prim(L, IR_P_GETITEM, t->span, 2, obj, idx);
        IrNode *v = lower_expr(L, s->aug.value);
        if (!v) return false;
        IrNode *nv = prim(L, p, s->span, 2, old, v);
        if (!assign(L, t->sub.obj, prim(L, IR_P_SETITEM, t->span, 3, obj, idx, nv))) return false;
      } else {
        return error_at(L, t->span, t->kind == AST_ATTRIBUTE
                                        ? "cannot assign to an attribute: Mist values are immutable"
                                        : "illegal expression for augmented assignment");
      }
      break;
    }
    case AST_IF: return lower_if(L, s, stmts + i + 1, n - i - 1, k);
    case AST_WHILE:
    case AST_FOR: return lower_loop(L, s, stmts + i + 1, n - i - 1, k);
    case AST_BREAK:
    case AST_CONTINUE: {
      Loop *lp = L->loop;
      if (!lp) return error_at(L, s->span, s->kind == AST_BREAK ? "'break' outside loop"
                                                                : "'continue' not properly in loop");
      if (s->kind == AST_BREAK) {
        tail_call(L, lp->after, NULL, &lp->vars, s->span);
      } else {
        Cont back = {K_LOOP_BACK};
        back.loop = lp;
        finish(L, &back, s->span);
      }
      return true;
    }
    case AST_RETURN: {
      if (L->fn->is_module) return error_at(L, s->span, "'return' outside function");
      L->stmt_graph = L->cur;
      IrNode *v = s->return_.value ? lower_expr(L, s->return_.value) : knone(L, s->span);
      if (!v) return false;
      L->cur->ret = v;
      return true;
    }
    case AST_PASS: break;
    case AST_ASSERT:
      if (!lower_assert(L, s)) return false;
      break;
    case AST_DEF:
      if (!lower_def(L, s)) return false;
      break;
    case AST_IMPORT: {
      IrNode *m = prim(L, IR_P_IMPORT, s->span, 1, kstr(L, s->import.module, s->span));
      bind(L, s->import.alias ? s->import.alias : s->import.module, m, s->span);
      break;
    }
    default: return error_at(L, s->span, "unsupported statement");
    }
  }
  finish(L, k, n ? stmts[n - 1]->span : L->cur->span);
  return true;
}

static bool lower_top(MistVM *vm, Ast *mod, ObjModule *module, bool echo, int statement, LowerResult *out,
                      ObjStr *name, IrNode **bound) {
  Lower L = {0};
  L.vm = vm;
  L.u = ir_unit_new();
  L.module = module;
  L.echo = echo;
  L.statement = statement;
  collect_assigned(mod->module.body, mod->module.nbody, &L.module_names);
  /* module names get their global slots now, so functions lowered later
   * (and the REPL's later entries) see them as globals */
  Span sp = mod->span;
  IrGraph *main = ir_graph_new(L.u, "__main__", NULL, IRG_MODULE, sp);
  main->module = module;
  main->display = lang_str("<module>");
  FnScope fs = {0};
  fs.root = main;
  fs.is_module = true;
  fs.prefix = "__main__";
  fs.locals = L.module_names;
  L.fn = &fs;
  L.cur = main;
  Cont k = {K_RETURN_NONE};
  if (!lower_block(&L, mod->module.body, mod->module.nbody, &k)) return false;
  out->unit = L.u;
  out->main = main;
  out->globals = L.globals_read.items;
  out->nglobals = L.globals_read.n;
  if (bound) {
    Binding *b = name ? env_find(&fs.env, name) : NULL;
    *bound = b && !b->maybe_unbound ? b->node : NULL;
  }
  return true;
}

bool lower_module(MistVM *vm, Ast *mod, ObjModule *module, bool echo, LowerResult *out) {
  return lower_top(vm, mod, module, echo, -1, out, NULL, NULL);
}

bool lower_statement(MistVM *vm, Ast *mod, ObjModule *module, int statement, ObjStr *name, LowerResult *out,
                     IrNode **bound) {
  return lower_top(vm, mod, module, false, statement, out, name, bound);
}
