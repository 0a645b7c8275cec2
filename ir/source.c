/* source.c: IR graphs printed back as Mist source that parses, runs
 * and gives the same results (docs/ir.md, "As Mist source"), so graphs
 * that no parser made -- derivatives above all -- can be read and run.
 *
 * The printout of a function F is one `def F(...)`.  Each scheduled
 * application is one statement `name = EXPR`, in schedule order, with a
 * primitive written as the operator or call it means and one without a
 * spelling as a call of its builtin (`_gadd`: autodiff/names.c), a
 * value that is a builtin (the continuation kid) by that builtin's name.
 * Every node gets one identifier,
 * unique in the whole printout (its source variable's name, `acc_2` for
 * a repeat, `t1`, `t2`... for nameless nodes), so a name never means
 * two things; the only exception is a parameter of a def, which keeps
 * its source name where that is safe, so keyword calls still work.
 *
 * Control flow is structured back: switch(c, @a, @b)() ending a graph
 * is an if/else (or elif) with both branches in place; a join is
 * printed after its if, its parameters assigned in the branches; a
 * graph calling itself is a `while` loop entered where it is called,
 * with continue and break (the code after it following the while), so
 * loops run in constant stack as in the IR.  A value computed only to
 * be passed on to such a parameter is assigned to it directly where
 * that is safe (out of SSA: `s = s + x`).  Every other graph is a
 * nested def, placed just before the first statement that needs it,
 * where every node it uses as a free variable is assigned (closures
 * capture values).  Small shapes are folded back too: a lazy
 * `(a() if c else b())`, `assert c, m`, `a, b = x`, a slice in its
 * subscript, a format in its f-string, a condition in its `if`, the
 * output in its `return`; each only where moving it past what lies
 * between cannot change what runs.
 *
 * Printed as a function value (ir_print_source_value), the printout
 * also knows the values the function captured, so J of a function
 * whose value is known is folded into the function's transform, printed
 * as a top-level def beside the root: show_source(grad(f)) is the whole
 * derived program (see fold).  Globals of another module (the rules'
 * ad_rules) are read through that module, imported at the top.
 *
 * The analysis runs once over the printout: uses, then each node's role
 * (its own statement, or printed inside another's), then how each graph
 * is printed (structure), dead parameters and coalescing, then names.
 * The printer then walks the graphs from the root.  It only reads them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/source.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* ---- pointer and name tables ---- */

/* A map from pointers to small ints (open addressing). */
typedef struct PtrMap {
  const void **keys;
  int *vals;
  size_t cap, n;
} PtrMap;

static size_t ptr_hash(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull); }

static int map_get(const PtrMap *m, const void *k) {
  if (!m->cap) return -1;
  for (size_t i = ptr_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return -1;
    if (m->keys[i] == k) return m->vals[i];
  }
}

static void map_put(PtrMap *m, const void *k, int v) {
  if (2 * (m->n + 1) > m->cap) {
    PtrMap big = {0};
    big.cap = m->cap ? 2 * m->cap : 64;
    big.keys = lang_alloc(big.cap * sizeof *big.keys);
    big.vals = lang_alloc_atomic(big.cap * sizeof *big.vals);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) map_put(&big, m->keys[i], m->vals[i]);
    *m = big;
  }
  size_t i = ptr_hash(k) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = k;
  m->vals[i] = v;
}

/* The identifiers in use.  For each: the nodes named by it (owners),
 * the graphs that read it as a name from outside the printout (a
 * global, a builtin: readers), and whether it is a keyword (fixed). */
typedef struct Name {
  const char *text;
  IrNode **owners;
  int nowners;
  IrGraph **readers;
  int nreaders;
  bool fixed;
} Name;

typedef struct Taken {
  Name **slots;        /* open addressing by text */
  size_t cap, n;
} Taken;

static size_t str_hash(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static Name *find_name(const Taken *t, const char *text) {
  if (!t->cap) return NULL;
  for (size_t i = str_hash(text) & (t->cap - 1);; i = (i + 1) & (t->cap - 1))
    if (!t->slots[i] || strcmp(t->slots[i]->text, text) == 0) return t->slots[i];
}

static bool is_taken(const Taken *t, const char *text) { return find_name(t, text) != NULL; }

static void slot_in(Taken *t, Name *nm) {
  size_t i = str_hash(nm->text) & (t->cap - 1);
  while (t->slots[i]) i = (i + 1) & (t->cap - 1);
  t->slots[i] = nm;
  t->n++;
}

/* The entry of text, made if new. */
static Name *name_entry(Taken *t, const char *text) {
  Name *nm = find_name(t, text);
  if (nm) return nm;
  if (2 * (t->n + 1) > t->cap) {
    Taken big = {0};
    big.cap = t->cap ? 2 * t->cap : 128;
    big.slots = lang_alloc(big.cap * sizeof *big.slots);
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i]) slot_in(&big, t->slots[i]);
    *t = big;
  }
  nm = lang_alloc(sizeof *nm);
  nm->text = text;
  slot_in(t, nm);
  return nm;
}

/* text names node owner (NULL: a name nothing may share, such as a def's). */
static void take(Taken *t, const char *text, IrNode *owner) {
  Name *nm = name_entry(t, text);
  if (!owner) {
    nm->fixed = true;
    return;
  }
  nm->owners = lang_realloc(nm->owners, (nm->nowners + 1) * sizeof *nm->owners);
  nm->owners[nm->nowners++] = owner;
}

static const char *const keywords[] = {
  "def", "lambda", "return", "if", "elif", "else", "while", "for", "in", "is", "break",
  "continue", "and", "or", "not", "True", "False", "None", "import", "as", "pass", "assert",
  /* reserved by the lexer, or Python's, kept out so a printout stays Python too */
  "class", "del", "global", "nonlocal", "try", "except", "finally", "raise", "with", "yield",
  "async", "await", "from",
};

static bool is_keyword(const char *s) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (strcmp(keywords[i], s) == 0) return true;
  return false;
}

static bool is_ident(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || (unsigned char)*p >= 0x80))
      return false;
  return !is_keyword(s);
}

/* raw as an identifier: other characters become '_', a leading digit
 * or a keyword gets '_' added. */
static const char *sanitize(const char *raw) {
  StrBuf sb;
  sb_init(&sb);
  if (*raw >= '0' && *raw <= '9') sb_addc(&sb, '_');
  for (const char *p = raw; *p; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    sb_addc(&sb, ok ? c : '_');
  }
  if (sb.len == 0) sb_addc(&sb, '_');
  if (is_keyword(sb.data)) sb_addc(&sb, '_');
  return sb.data;
}

/* ---- the printout's analysis ---- */

typedef struct Use {
  IrNode *user;       /* NULL: a graph's output or a default value */
  int pos;            /* index in user->in; -1 for a default value */
  IrGraph *where;     /* the graph of the user, or whose output or default it is */
} Use;

/* How a node is printed. */
enum {
  R_STMT,     /* its own statement */
  R_ALIAS,    /* as its argument: check_bound(x, name) is x */
  R_INDEX,    /* a slice, or a tuple of indices: inside its [] */
  R_TARGET,   /* an item of an unpack: a target of `a, b = x` */
  R_SWITCH,   /* a switch called at once: inside its call */
  R_COND,     /* a condition used once, at once: inside its if or conditional */
  R_FIELD,    /* a format: a field of the f-string of the concat_str after it */
  R_GLOBAL,   /* a global read used once, soon after: the bare name there */
  R_CONV,     /* repr or str of a field: {v!r} or {v!s} there */
  R_TUPLE,    /* a tuple unpacked at once: a, b = x, y */
  R_RETURN,   /* a graph's output computed last: return EXPR */
  R_NEG,      /* minus a number: -1 in place */
  R_ASSERT,   /* the assert_fail of an assert's branch: in its assert */
  R_KNOWN,    /* J of a known function, folded: its transform's def name in place */
  R_DROP,     /* a pure read only a folded J used: not printed */
};

typedef struct Info {
  IrNode *node;
  const char *name;     /* its identifier, or NULL when it needs none */
  int role;
  int pos;              /* index in its graph's schedule; -1 for others */
  bool outer;           /* a node of a graph outside the printout */
  bool assert_form;     /* a switch call printed as `assert c, m`, or
                           `if not c:` and the message's statements */
  bool tail;            /* a switch call printed as if/else */
  int nuses;
  Use *uses;
  IrNode **targets;     /* an unpack: the getitem reading item i, or NULL */
  const char **tnames;  /* an unpack: the name of item i */
  bool need_tuple;      /* an unpack used other than item by item */
  bool dead;            /* a parameter of a join or loop nothing reads */
  IrNode *as;           /* assigned straight to this parameter of a join or loop */
  bool value_entry;     /* a call entering an M_LOOP for its value: a while */
  bool fed;             /* an input of a folded J */
} Info;

/* How a graph is printed, besides as a def (M_DEF). */
enum {
  M_DEF,
  M_BRANCH,   /* a branch of an if/else, in place */
  M_JOIN,     /* the code after an if: after the if/else, which assigns its parameters */
  M_LOOP,     /* a loop: `while True:`, continue and break */
  M_EXIT,     /* the code after a loop: after the while */
};

typedef struct GInfo {
  IrGraph *g;
  const char *name;     /* its def's name */
  int refs;             /* graph constants naming it in the printout */
  int nchildren;        /* graphs of the printout whose parent it is */
  bool in_place;        /* printed where it is used, never as a def */
  bool trivial;         /* a branch that only returns a value */
  bool emitted;
  int mode;             /* M_DEF... */
  IrNode *tail;         /* the call ending it, printed as if/else */
  IrGraph *join;        /* its if's M_JOIN graph, printed after the if */
  IrGraph *loop;        /* M_EXIT: the loop it follows */
  IrGraph *exit;        /* M_LOOP: its M_EXIT graph */
  int nsites;
  IrNode **sites;       /* the calls of it */
  IrNode *entry_value;  /* M_LOOP: its entry, when a call whose value is used */
} GInfo;

typedef struct Src {
  MistVM *vm;
  IrGraph *root;
  IrGraph *vloop;       /* the loop entered for its value being printed */
  const char *vname;    /* where its value goes */
  int ngraphs;
  GInfo *gs;
  PtrMap gmap;          /* graph -> index in gs */
  int ninfos, capinfos;
  Info **infos;         /* each allocated alone, so pointers to them stay valid */
  PtrMap nmap;          /* node -> index in infos */
  Taken taken;
  int next_temp;
  StrBuf *out;
  size_t start;         /* where this printout starts in out */
  StrBuf pre;           /* lines to print before the statement being built */
  int ind;              /* its indentation */
  bool unbound;         /* it passes an Unbound value (printed as None) */
  /* values known when printing a function value (see fold) */
  const Value *env;     /* the root's captured values, in its fv order */
  int nenv;
  PtrMap known;         /* node -> index in kv */
  struct Known *kv;
  int nkv, capkv;
  PtrMap mat;           /* closures printed as their graph's def */
  bool derived;         /* something was folded: top-level names avoid the program's */
  PtrMap named;         /* builtin object -> index in bnames: its name */
  const char **bnames;
  ObjModule *home;      /* the root's module: its globals print bare */
  ObjModule **mods;     /* other modules read, imported as _name */
  int nmods;
  int64_t *keys;        /* env keys, printed as their index + 1 */
  int nkeys;
  Taken globals;        /* the program's globals, when its module has not run */
} Src;

/* A value known for a node: the root's captured value of a free
 * variable, a J folded to its transform, or a captured value of a
 * closure printed as its graph's def.  subst: printed as the value. */
typedef struct Known {
  Value v;
  bool subst;
} Known;

static GInfo *ginfo(Src *s, const IrGraph *g) {
  int i = g ? map_get(&s->gmap, g) : -1;
  return i < 0 ? NULL : &s->gs[i];
}

static Info *info(Src *s, IrNode *x) {
  int i = map_get(&s->nmap, x);
  if (i >= 0) return s->infos[i];
  if (s->ninfos == s->capinfos) {
    s->capinfos = s->capinfos ? 2 * s->capinfos : 64;
    s->infos = lang_realloc(s->infos, s->capinfos * sizeof *s->infos);
  }
  Info *in = lang_alloc(sizeof *in);
  s->infos[s->ninfos] = in;
  in->node = x;
  in->pos = -1;
  in->outer = x->kind != IR_CONST && !ginfo(s, x->graph);
  map_put(&s->nmap, x, s->ninfos++);
  return in;
}

static int prim_of(const IrNode *n) { return ir_node_prim(n); }

/* n applies primitive p with its table's arity. */
static bool is_prim(const IrNode *n, IrPrim p) {
  if (prim_of(n) != (int)p) return false;
  return ir_prims[p].arity < 0 || n->nin == ir_prims[p].arity + 1;
}

/* The graph a constant holds: a graph, or a closure that captured
 * nothing (a transformation may put one in), which is the same. */
static IrGraph *graph_const(const IrNode *x) {
  if (x->kind == IR_CONST && v_is_obj(x->value, O_FUNC) && AS_FUNC(x->value)->nenv == 0 &&
      AS_FUNC(x->value)->ndefaults == 0)
    return AS_FUNC(x->value)->graph;
  return ir_node_graph(x);
}

static IrGraph *const_graph(Src *s, const IrNode *x) {
  IrGraph *h = graph_const(x);
  return h && ginfo(s, h) ? h : NULL;
}

static bool const_int(const IrNode *x, int64_t *v) {
  if (x->kind != IR_CONST || x->value.tag != V_INT) return false;
  *v = x->value.i;
  return true;
}

static bool const_str(const IrNode *x) { return x->kind == IR_CONST && v_is_obj(x->value, O_STR); }

/* check_bound(x, name) and set_global(name, x) are x. */
static IrNode *resolve(IrNode *x) {
  for (;;) {
    if (is_prim(x, IR_P_CHECK_BOUND)) x = x->in[1];
    else if (is_prim(x, IR_P_SET_GLOBAL)) x = x->in[2];
    else return x;
  }
}

/* Whether a graph referred to by constant is printed with root: any but
 * a module's own graph and its top-level defs, which are called by name
 * (as globals).  So nested graphs, synthetic ones, lambdas bound at top
 * level and the graphs a transformation made are printed. */
static bool belongs(IrGraph *root, IrGraph *h) {
  if (!h || (h->flags & IRG_MODULE)) return false;
  bool top_def = h->parent && (h->parent->flags & IRG_MODULE) && (h->flags & IRG_FUNCTION) &&
                 is_ident(h->name->data);
  return !top_def || ir_is_ancestor(root, h);
}

static const char *value_name(Src *s, Value v);
static bool materialize(Src *s, Value v, int depth);

static void add_graph(Src *s, IrGraph *g) {
  if (ginfo(s, g)) return;
  s->gs = lang_realloc(s->gs, (s->ngraphs + 1) * sizeof *s->gs);
  memset(&s->gs[s->ngraphs], 0, sizeof *s->gs);
  s->gs[s->ngraphs].g = g;
  map_put(&s->gmap, g, s->ngraphs++);
  for (int i = 0; i < g->nnodes; i++)
    for (int j = 0; j < g->nodes[i]->nin; j++) {
      IrNode *x = g->nodes[i]->in[j];
      IrGraph *h = graph_const(x);
      if (belongs(s->root, h) && !(x->kind == IR_CONST && value_name(s, x->value))) add_graph(s, h);
      else if (!h && x->kind == IR_CONST && v_is_obj(x->value, O_FUNC)) materialize(s, x->value, 0);
    }
  if (g->ret && belongs(s->root, graph_const(g->ret)) && !value_name(s, g->ret->value.tag == V_OBJ && g->ret->kind == IR_CONST ? g->ret->value : v_none()))
    add_graph(s, graph_const(g->ret));
  for (int d = 0; d < g->ndefaults; d++) {
    IrGraph *h = g->defaults[d] ? graph_const(g->defaults[d]) : NULL;
    if (h && h->parent && ir_is_ancestor(h->parent, g)) add_graph(s, h);
  }
}

/* ---- known values: J of a known function folded to its transform ----
 *
 * A derivative's graphs call J on function values: grad(f)'s graph on
 * its captured f, a transform on the global functions it calls and on
 * the rules.  When the printout is of a function value, many of those
 * values are known: the root's captured values, constants, the current
 * value of a module's global.  J of a known function is then folded:
 * its value, the closure of the transform graph, is printed as the name
 * of that graph's def, and the graph joins the printout (at top level),
 * its own captured values known in turn.  So the printout holds the
 * derived program itself, not a call that makes it at run time.  A
 * captured value of such a graph is printed in place as a literal or a
 * def's name where it has one, else by name with a comment. */

static Known *known(Src *s, const IrNode *x) {
  int i = map_get(&s->known, x);
  return i < 0 ? NULL : &s->kv[i];
}

static void set_known(Src *s, IrNode *x, Value v, bool subst) {
  if (s->nkv == s->capkv) {
    s->capkv = s->capkv ? 2 * s->capkv : 32;
    s->kv = lang_realloc(s->kv, s->capkv * sizeof *s->kv);
  }
  s->kv[s->nkv] = (Known){v, subst};
  map_put(&s->known, x, s->nkv++);
}

/* The name under which v is a builtin (`_ad_kid`), or NULL. */
static const char *value_name(Src *s, Value v) {
  if (v.tag != V_OBJ) return NULL;
  int i = map_get(&s->named, v.o);
  return i < 0 ? NULL : s->bnames[i];
}

static bool same_value(Value a, Value b) {
  if (a.tag != b.tag) return false;
  switch (a.tag) {
  case V_OBJ: return a.o == b.o;
  case V_INT: return a.i == b.i;
  case V_FLOAT: return memcmp(&a.f, &b.f, sizeof a.f) == 0;
  case V_BOOL: return a.b == b.b;
  default: return true;
  }
}

/* A top-level def of a module: printed by name, as that module's global. */
static bool top_def(const IrGraph *h) {
  return h->parent && (h->parent->flags & IRG_MODULE) && (h->flags & IRG_FUNCTION) && is_ident(h->name->data);
}

/* Whether const_text writes v as a literal that makes it again. */
static bool literal(Value v, int depth) {
  if (depth > 32) return false;
  switch (v.tag) {
  case V_NONE: case V_BOOL: case V_INT: case V_FLOAT: return true;
  case V_OBJ:
    switch (v.o->kind) {
    case O_STR: case O_RANGE: return true;
    case O_TUPLE:
    case O_LIST:
      for (size_t i = 0; i < AS_SEQ(v)->len; i++)
        if (!literal(AS_SEQ(v)->items[i], depth + 1)) return false;
      return true;
    case O_DICT:
      for (size_t i = 0; i < AS_DICT(v)->len; i++)
        if (!literal(AS_DICT(v)->entries[i].value, depth + 1)) return false;
      return true;
    default: return false;
    }
  default: return false;
  }
}

/* What x is known to be when the printout runs. */
static bool value_of(Src *s, IrNode *x, Value *v) {
  x = resolve(x);
  if (x->kind == IR_CONST) {
    *v = x->value;
    return !v_is_obj(x->value, O_GRAPH);
  }
  Known *k = known(s, x);
  if (k) {
    *v = k->v;
    return true;
  }
  ObjModule *m = x->kind == IR_APPLY ? x->graph->module : NULL;
  Value slot;
  if (m && m->names && is_prim(x, IR_P_GLOBAL) && const_str(x->in[1]) &&
      lang_dict_get(m->names, AS_STR(x->in[1]->value), &slot) && slot.tag == V_INT && slot.i >= 0 &&
      (size_t)slot.i < m->nslots && m->slots[slot.i].tag != V_UNBOUND) {
    *v = m->slots[slot.i];   /* a global as it is now */
    return true;
  }
  return false;
}

/* A captured value of a printed def (node x): in place where it can be. */
static void know_captured(Src *s, IrNode *x, Value v, int depth) {
  if (x->kind == IR_CONST || known(s, x)) return;
  bool fn = v_is_obj(v, O_FUNC) || v_is_obj(v, O_BUILTIN);
  set_known(s, x, v, fn ? materialize(s, v, depth + 1) : literal(v, 0));
}

/* Whether function value v can be printed as a name that means it,
 * adding its graph to the printout where it must be. */
static bool materialize(Src *s, Value v, int depth) {
  if (value_name(s, v)) return true;
  if (!v_is_obj(v, O_FUNC) || depth > 64) return false;
  ObjFunc *f = AS_FUNC(v);
  IrGraph *h = f->graph;
  if (map_get(&s->mat, f) >= 0) return true;
  if (top_def(h)) return true;   /* a global of its module, by name */
  if (h->flags & IRG_MODULE) return false;
  /* its def must be at top level, and one def is one closure */
  if (h->parent && ginfo(s, h->parent)) return false;
  ir_free_vars(h);
  if (f->nenv < h->nfv || f->ndefaults < h->ndefaults) return false;
  for (int i = 0; i < h->nfv; i++) {
    Known *k = known(s, h->fv[i]);
    if (k && !same_value(k->v, f->env[i])) return false;
  }
  map_put(&s->mat, f, 1);
  if (h == s->root) return true;
  for (int i = 0; i < h->nfv; i++) know_captured(s, h->fv[i], f->env[i], depth);
  for (int i = 0; i < h->ndefaults; i++)
    if (h->defaults[i]) know_captured(s, h->defaults[i], f->defaults[f->ndefaults - h->ndefaults + i], depth);
  add_graph(s, h);
  return true;
}

/* Whether node n is only ever called (a callee), never passed on as a
 * value: only then may its J be folded, since a value passed on may
 * reach code that needs the transform's record of what it transforms
 * (grad inside a function being differentiated), which a def printed
 * and run again does not have; there J stays a call. */
static bool only_called(Src *s, IrNode *n) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++)
      for (int j = 1; j < g->nodes[i]->nin; j++)
        if (resolve(g->nodes[i]->in[j]) == n) return false;
    if (g->ret && resolve(g->ret) == n) return false;
    for (int d = 0; d < g->ndefaults; d++)
      if (g->defaults[d] && resolve(g->defaults[d]) == n) return false;
  }
  return true;
}

/* Fold every J of a known function in the printout, until none is
 * left: the graphs folding adds may hold more. */
static void fold(Src *s) {
  /* what a transformation's graph captured (grad(f)'s f, in a graph
   * that only holds it) is written in place where it has a name or a
   * literal: f there is no name of the program's */
  IrGraph *p = s->root->parent;
  bool made = p && p->flags == 0 && !p->nnodes;
  for (int i = 0; i < s->nenv && i < s->root->nfv; i++) {
    Value v = s->env[i];
    bool named = value_name(s, v) || (v_is_obj(v, O_FUNC) && top_def(AS_FUNC(v)->graph));
    set_known(s, s->root->fv[i], v, made && (named || literal(v, 0)));
  }
  if (!s->vm->ad_J) return;
  for (bool more = true; more;) {
    more = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      IrGraph *g = s->gs[gx].g;
      for (int i = 0; i < g->nnodes; i++) {
        IrNode *n = g->nodes[i];
        Value v, jv;
        if (!is_prim(n, IR_P_J) || known(s, n) || !value_of(s, n->in[1], &v) || !v_is_obj(v, O_FUNC) ||
            !only_called(s, n))
          continue;
        if (!s->vm->ad_J(s->vm, v, &jv)) {
          lang_error_clear(s->vm);   /* left as a call of J, which raises it when run */
          continue;
        }
        if (!materialize(s, jv, 0)) continue;
        set_known(s, n, jv, true);
        s->derived = more = true;
      }
    }
  }
}

static void add_use(Src *s, IrNode *x, IrNode *user, int pos, IrGraph *where) {
  if (!x) return;
  if (x->kind == IR_CONST) {
    GInfo *gi = ginfo(s, graph_const(x));
    if (gi) gi->refs++;
    return;
  }
  Info *in = info(s, x);
  in->uses = lang_realloc(in->uses, (in->nuses + 1) * sizeof *in->uses);
  in->uses[in->nuses++] = (Use){user, pos, where};
}

static void count_uses(Src *s) {
  for (int gi = 0; gi < s->ngraphs; gi++) {
    IrGraph *g = s->gs[gi].g;
    GInfo *pg = ginfo(s, g->parent);
    if (pg) pg->nchildren++;
    for (int i = 0; i < g->nparams; i++) info(s, g->params[i]);
    for (int i = 0; i < g->nnodes; i++) info(s, g->nodes[i])->pos = i;
  }
  for (int gi = 0; gi < s->ngraphs; gi++) {
    IrGraph *g = s->gs[gi].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *n = g->nodes[i];
      bool folded = known(s, n) != NULL;
      for (int j = 0; j < n->nin; j++) {
        if (!folded) add_use(s, n->in[j], n, j, g);
        else if (n->in[j]->kind != IR_CONST) info(s, n->in[j])->fed = true;
      }
    }
    add_use(s, g->ret, NULL, 0, g);
    for (int d = 0; d < g->ndefaults; d++) add_use(s, g->defaults[d], NULL, -1, g);
  }
  /* a folded J is its value; what only it read is not needed */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    if (in->outer || n->kind != IR_APPLY) continue;
    int p = prim_of(n);
    if (known(s, n)) in->role = R_KNOWN;
    else if (in->fed && in->nuses == 0 && p >= 0 && (ir_prims[p].flags & P_PURE)) in->role = R_DROP;
  }
}

static bool index_use(const Use *u) {
  return u->user && u->pos == 2 && (is_prim(u->user, IR_P_GETITEM) || is_prim(u->user, IR_P_SETITEM));
}

/* A graph that may be printed in place of its one use: a branch with no
 * parameters and no defs of its own. */
static bool placeable(Src *s, const IrNode *x, IrGraph *owner) {
  IrGraph *h = const_graph(s, x);
  if (!h) return false;
  GInfo *gi = ginfo(s, h);
  return gi->refs == 1 && h->nparams == 0 && h->ndefaults == 0 && !(h->flags & IRG_FUNCTION) &&
         h->parent == owner && !gi->in_place && !gi->trivial;
}

/* A branch that only returns a value: written as that value. */
static bool returns_only(Src *s, const IrNode *x, IrGraph *owner) {
  if (!placeable(s, x, owner)) return false;
  IrGraph *h = const_graph(s, x);
  return h->nnodes == 0 && ginfo(s, h)->nchildren == 0;
}

/* What a condition may be written as in place: any one expression that
 * binds tighter than a conditional. */
static bool cond_spelled(const IrNode *c) {
  int p = prim_of(c);
  if (p < 0) return true;
  switch (p) {
  case IR_P_SWITCH: case IR_P_UNPACK: case IR_P_SETITEM: case IR_P_SLICE: case IR_P_IMPORT:
  case IR_P_ASSERT_FAIL: case IR_P_SET_GLOBAL: case IR_P_CHECK_BOUND: case IR_P_FORMAT:
  case IR_P_CONCAT_STR: case IR_P_ITER_SEQ:
    return false;
  default: return p < IR_NPRIMS && (ir_prims[p].arity < 0 || c->nin == ir_prims[p].arity + 1);
  }
}

static void find_roles(Src *s) {
  /* aliases, slices and tuples of indices */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (in->outer || in->node->kind != IR_APPLY) continue;
    if (is_prim(in->node, IR_P_CHECK_BOUND)) in->role = R_ALIAS;
    IrNode *x = in->node->nin == 2 ? in->node->in[1] : NULL;
    if (is_prim(in->node, IR_P_NEG) && x->kind == IR_CONST &&
        ((x->value.tag == V_INT && x->value.i != INT64_MIN) || x->value.tag == V_FLOAT))
      in->role = R_NEG;   /* cannot fail: written where it is used */
    if (is_prim(in->node, IR_P_MAKE_TUPLE) && in->node->nin > 1 && in->nuses > 0) {
      bool all = true;
      for (int u = 0; u < in->nuses; u++) all &= index_use(&in->uses[u]);
      if (all) in->role = R_INDEX;   /* it cannot fail: written in its [] */
    }
  }
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (in->outer || !is_prim(in->node, IR_P_SLICE) || in->nuses == 0) continue;
    bool all = true;
    for (int u = 0; u < in->nuses; u++) {
      Use *us = &in->uses[u];
      all &= index_use(us) || (us->user && info(s, us->user)->role == R_INDEX);
    }
    if (all) in->role = R_INDEX;
  }
  /* unpacks read item by item */
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    int64_t cnt;
    if (in->outer || !is_prim(n, IR_P_UNPACK) || !const_int(n->in[2], &cnt) || cnt < 1 || cnt > 4096)
      continue;
    in->targets = lang_alloc((size_t)cnt * sizeof *in->targets);
    in->tnames = lang_alloc((size_t)cnt * sizeof *in->tnames);
    for (int u = 0; u < in->nuses; u++) {
      Use *us = &in->uses[u];
      int64_t i;
      Info *gi = us->user ? info(s, us->user) : NULL;
      if (gi && us->pos == 1 && is_prim(us->user, IR_P_GETITEM) && const_int(us->user->in[2], &i) &&
          i >= 0 && i < cnt && !in->targets[i] && us->user->graph == n->graph && gi->role == R_STMT) {
        in->targets[i] = us->user;
        gi->role = R_TARGET;
      } else {
        in->need_tuple = true;
      }
    }
  }
  /* switches called at once, their conditions, tail ifs, asserts */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 1; i < g->nnodes; i++) {
      IrNode *sw = g->nodes[i - 1], *call = g->nodes[i];
      Info *si = info(s, sw), *ci = info(s, call);
      if (!is_prim(sw, IR_P_SWITCH) || si->role != R_STMT || si->nuses != 1 ||
          si->uses[0].user != call || si->uses[0].pos != 0 || ci->role != R_STMT)
        continue;
      si->role = R_SWITCH;
      if (i >= 2) {
        IrNode *c = g->nodes[i - 2];
        Info *cinfo = info(s, c);
        if (sw->in[1] == c && cinfo->role == R_STMT && cinfo->nuses == 1 && cond_spelled(c))
          cinfo->role = R_COND;
      }
      if (call->nin != 1) continue;
      IrNode *a = sw->in[2], *b = sw->in[3];
      if (i == g->nnodes - 1 && g->ret == call && ci->nuses == 1 && placeable(s, a, g) &&
          placeable(s, b, g) && const_graph(s, a) != const_graph(s, b)) {
        s->gs[gx].tail = call;
        ci->tail = true;
        ginfo(s, const_graph(s, a))->in_place = true;
        ginfo(s, const_graph(s, b))->in_place = true;
        ginfo(s, const_graph(s, a))->mode = M_BRANCH;
        ginfo(s, const_graph(s, b))->mode = M_BRANCH;
        continue;
      }
      if (ci->nuses == 0 && returns_only(s, a, g) && placeable(s, b, g)) {
        /* an assert: switch(c, @ok, @fail)() whose value is dropped,
         * @ok returning None, @fail ending in assert_fail */
        IrGraph *ok = const_graph(s, a), *fail = const_graph(s, b);
        IrNode *af = fail->nnodes ? fail->nodes[fail->nnodes - 1] : NULL;
        bool none = !ok->ret || (ok->ret->kind == IR_CONST && ok->ret->value.tag == V_NONE);
        if (none && af && is_prim(af, IR_P_ASSERT_FAIL) && fail->ret == af && info(s, af)->nuses == 1 &&
            ginfo(s, fail)->nchildren == 0) {
          ci->assert_form = true;
          info(s, af)->role = R_ASSERT;
          ginfo(s, ok)->trivial = true;
          ginfo(s, fail)->in_place = true;
          continue;
        }
      }
      if (returns_only(s, a, g)) ginfo(s, const_graph(s, a))->trivial = true;
      if (returns_only(s, b, g)) ginfo(s, const_graph(s, b))->trivial = true;
    }
  }
  /* formats in their f-string */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *c = g->nodes[i];
      if (prim_of(c) != IR_P_CONCAT_STR || info(s, c)->role != R_STMT) continue;
      for (int k = i - 1; k >= 0; k--) {
        IrNode *f = g->nodes[k];
        Info *fi = info(s, f);
        if (fi->role != R_STMT || fi->nuses != 1) break;
        IrNode *u = fi->uses[0].user;
        if (is_prim(f, IR_P_FORMAT) && u == c) {
          fi->role = R_FIELD;
        } else if ((is_prim(f, IR_P_REPR) || is_prim(f, IR_P_STR)) && u && u->in[1] == f &&
                   info(s, u)->role == R_FIELD && fi->uses[0].pos == 1) {
          fi->role = R_CONV;
        } else {
          break;
        }
      }
    }
  }
  /* a, b = x, y; and return EXPR for an output computed last */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 1; i < g->nnodes; i++) {
      IrNode *t = g->nodes[i - 1], *u = g->nodes[i];
      Info *ti = info(s, t), *ui = info(s, u);
      if (is_prim(t, IR_P_MAKE_TUPLE) && t->nin > 1 && ti->role == R_STMT && ti->nuses == 1 &&
          ti->uses[0].user == u && ti->uses[0].pos == 1 && ui->targets && ui->role == R_STMT)
        ti->role = R_TUPLE;
    }
    IrNode *r = g->ret;
    Info *ri = r && g->nnodes && g->nodes[g->nnodes - 1] == r ? info(s, r) : NULL;
    if (ri && ri->role == R_STMT && ri->nuses == 1 && !s->gs[gx].tail && !ri->targets && !ri->assert_form &&
        !is_prim(r, IR_P_SETITEM) && !is_prim(r, IR_P_IMPORT) && !is_prim(r, IR_P_ASSERT_FAIL) &&
        !is_prim(r, IR_P_SET_GLOBAL) && !is_prim(r, IR_P_SLICE))
      ri->role = R_RETURN;
  }
  /* global reads used once soon after, with nothing but pure
   * primitives between (which cannot change a global) */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int i = 0; i < g->nnodes; i++) {
      IrNode *x = g->nodes[i];
      Info *xi = info(s, x);
      if (!is_prim(x, IR_P_GLOBAL) || !const_str(x->in[1]) || !is_ident(AS_STR(x->in[1]->value)->data) ||
          xi->role != R_STMT || xi->nuses != 1 || !xi->uses[0].user)
        continue;
      IrNode *u = xi->uses[0].user;
      Info *ui = info(s, u);
      if (u->graph != g || (ui->role != R_STMT && ui->role != R_RETURN) || ui->pos <= i) continue;
      bool pure = true;
      for (int k = i + 1; k < ui->pos && pure; k++) {
        int p = prim_of(g->nodes[k]);
        pure = p >= 0 && (ir_prims[p].flags & P_PURE);
      }
      if (pure) xi->role = R_GLOBAL;
    }
  }
}

/* ---- structure: joins after their if, loops as while ----
 *
 * A synthetic graph called only in tail position, from code printed in
 * place, need not be a def: a join (the code after an if) is printed
 * after the if/else, each branch assigning its parameters and falling
 * through; a loop (a graph calling itself) as `while True:` where it is
 * entered, its calls of itself `continue`, and the code after it, when
 * only the loop calls that, after the while, reached by `break`.  A loop
 * may also be entered by a call whose value is used (a comprehension):
 * then each `return v` in it is `x = v` and `break`.  Loops then run in
 * constant stack, as in the IR.  Each call site must be where falling
 * through (or break, continue) gets there: the site's graph and the
 * graphs around it up to the target's place must all be printed in
 * place.  Candidates start optimistic and are made defs until every
 * site checks (a fixpoint). */

static bool needs_name(Src *s, Info *in);

static IrGraph *jump_target(Src *s, IrNode *call) {
  if (call->kind != IR_APPLY || info(s, call)->role != R_RETURN || prim_of(call) >= 0) return NULL;
  IrGraph *h = const_graph(s, call->in[0]);
  return h && call->nin - 1 == h->nparams ? h : NULL;
}

/* Whether control leaving the end of x's body, or a break or continue
 * in it, reaches `top` (x's graph or one around it) through code printed
 * in place.  fall: by falling through, to top's if (which must not
 * host a join of its own below top); else within top's while body. */
static bool reaches(Src *s, IrGraph *x, IrGraph *top, bool fall) {
  for (IrGraph *y = x; y; y = y->parent) {
    GInfo *gy = ginfo(s, y);
    if (!gy || y == top) return false;
    int m = gy->mode;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return false;
    if (y->parent == top) return !fall || m == M_BRANCH;
    if (fall && m == M_BRANCH && ginfo(s, y->parent) && ginfo(s, y->parent)->join) return false;
  }
  return false;
}

static IrGraph *jump_of(Src *s, IrNode *call);

/* The loop whose while a `return` printed in place in graph y is in, or
 * NULL where it returns from a def. */
static IrGraph *owner_loop(Src *s, IrGraph *y) {
  for (; y; y = y->parent) {
    int m = ginfo(s, y) ? ginfo(s, y)->mode : M_DEF;
    if (m == M_LOOP) return y;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return NULL;
  }
  return NULL;
}

/* The loop entered for its value that a `return` in graph y gives the
 * value of (through loops entered in tail position), or NULL. */
static IrGraph *value_owner(Src *s, IrGraph *y) {
  IrGraph *l = owner_loop(s, y);
  while (l && !ginfo(s, l)->entry_value) l = owner_loop(s, l->parent);
  return l;
}

/* A loop entered for its value: each `return` of that value is
 * `name = value` and `break`, which must leave this very while. */
static bool returns_ok(Src *s, IrGraph *l) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *y = s->gs[gx].g;
    if (!ir_is_ancestor(l, y) || s->gs[gx].tail || jump_of(s, y->ret)) continue;
    if (value_owner(s, y) == l && owner_loop(s, y) != l) return false;
  }
  return true;
}

static bool tail_site(Src *s, IrNode *call) {
  return call->graph->ret == call && info(s, call)->role == R_RETURN;
}

static bool site_ok(Src *s, GInfo *h, IrNode *call) {
  IrGraph *x = call->graph;
  switch (h->mode) {
  case M_LOOP:
    if (!ir_is_ancestor(h->g, x))   /* the entry */
      return x == h->g->parent && (call != h->entry_value || (!h->exit && returns_ok(s, h->g)));
    return tail_site(s, call) && reaches(s, x, h->g, false);   /* continue */
  case M_EXIT:
    return tail_site(s, call) && ginfo(s, h->loop)->mode == M_LOOP && !ginfo(s, h->loop)->entry_value &&
           reaches(s, x, h->loop, false);   /* break */
  case M_JOIN:
    return tail_site(s, call) && ginfo(s, h->g->parent)->join == h->g && reaches(s, x, h->g->parent, true);
  default: return true;
  }
}

static void structure(Src *s) {
  /* the calls of graphs of the printout, with all their arguments */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *x = s->gs[gx].g;
    for (int i = 0; i < x->nnodes; i++) {
      IrNode *c = x->nodes[i];
      IrGraph *h = prim_of(c) < 0 ? const_graph(s, c->in[0]) : NULL;
      int r = info(s, c)->role;
      if (!h || c->nin - 1 != h->nparams || (r != R_RETURN && r != R_STMT)) continue;
      if (r == R_RETURN && c != x->ret) continue;
      GInfo *gh = ginfo(s, h);
      gh->sites = lang_realloc(gh->sites, (gh->nsites + 1) * sizeof *gh->sites);
      gh->sites[gh->nsites++] = c;
    }
  }
  /* candidates: synthetic graphs only called, from the end of a graph;
   * loops first (they call themselves), then the code after each loop,
   * then joins */
  for (int pass = 0; pass < 3; pass++)
    for (int gx = 0; gx < s->ngraphs; gx++) {
      GInfo *gh = &s->gs[gx];
      IrGraph *h = gh->g, *p = h->parent;
      if (gh->mode != M_DEF || h == s->root || gh->in_place || gh->trivial || !gh->nsites ||
          gh->nsites != gh->refs || h->ndefaults || (h->flags & (IRG_FUNCTION | IRG_MODULE)) || !ginfo(s, p))
        continue;
      int outside = 0;
      IrNode *entry = NULL;
      for (int i = 0; i < gh->nsites; i++)
        if (!ir_is_ancestor(h, gh->sites[i]->graph)) {
          outside++;
          entry = gh->sites[i];
        }
      if (pass == 0 && outside == 1 && gh->nsites > 1) {
        gh->mode = M_LOOP;
        if (!tail_site(s, entry)) gh->entry_value = entry;
      } else if (pass == 1) {
        /* called only in a loop that is its sibling */
        IrGraph *loop = NULL;
        for (IrGraph *y = gh->sites[0]->graph; y && !loop; y = y->parent)
          if (y->parent == p && ginfo(s, y) && ginfo(s, y)->mode == M_LOOP && !ginfo(s, y)->exit &&
              !ginfo(s, y)->entry_value)
            loop = y;
        bool all = loop != NULL;
        for (int i = 0; all && i < gh->nsites; i++) all = ir_is_ancestor(loop, gh->sites[i]->graph);
        if (all) {
          gh->mode = M_EXIT;
          gh->loop = loop;
          ginfo(s, loop)->exit = h;
        }
      } else if (pass == 2 && outside == gh->nsites && ginfo(s, p)->tail && !ginfo(s, p)->join) {
        gh->mode = M_JOIN;
        ginfo(s, p)->join = h;
      }
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      GInfo *gh = &s->gs[gx];
      if (gh->mode != M_JOIN && gh->mode != M_LOOP && gh->mode != M_EXIT) continue;
      bool ok = true;
      for (int i = 0; ok && i < gh->nsites; i++) ok = site_ok(s, gh, gh->sites[i]);
      if (ok) continue;
      if (gh->mode == M_JOIN) ginfo(s, gh->g->parent)->join = NULL;
      if (gh->mode == M_LOOP && gh->exit) {
        ginfo(s, gh->exit)->mode = M_DEF;   /* break needs the while */
        ginfo(s, gh->exit)->loop = NULL;
        gh->exit = NULL;
      }
      if (gh->mode == M_EXIT) {
        ginfo(s, gh->loop)->exit = NULL;
        gh->loop = NULL;
      }
      gh->mode = M_DEF;
      changed = true;
    }
  }
  for (int gx = 0; gx < s->ngraphs; gx++) {
    if (s->gs[gx].mode >= M_JOIN) s->gs[gx].in_place = true;
    if (s->gs[gx].mode == M_LOOP && s->gs[gx].entry_value) info(s, s->gs[gx].entry_value)->value_entry = true;
  }
}

/* The call of an in-place join or loop that ends graph x, or NULL. */
static IrGraph *jump_of(Src *s, IrNode *call) {
  IrGraph *h = call ? jump_target(s, call) : NULL;
  return h && ginfo(s, h)->mode >= M_JOIN ? h : NULL;
}

/* Parameters of joins and loops that nothing reads but jumps passing
 * them on to parameters nothing reads: they are never assigned. */
static void find_dead(Src *s) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *h = s->gs[gx].g;
    if (s->gs[gx].mode < M_JOIN) continue;
    for (int i = 0; i < h->nparams; i++) {
      Info *pi = info(s, h->params[i]);
      pi->dead = true;
      for (int u = 0; u < pi->nuses && pi->dead; u++) {
        Use *us = &pi->uses[u];
        pi->dead = us->user && us->pos >= 1 && jump_of(s, us->user) && us->user->graph->ret == us->user;
      }
    }
  }
  /* a parameter passed on to a live one is live */
  for (bool changed = true; changed;) {
    changed = false;
    for (int gx = 0; gx < s->ngraphs; gx++) {
      IrNode *c = s->gs[gx].g->ret;
      IrGraph *h = jump_of(s, c);
      if (!h) continue;
      for (int i = 0; i < h->nparams; i++) {
        IrNode *a = resolve(c->in[i + 1]);
        if (a->kind != IR_PARAM || info(s, h->params[i])->dead || !info(s, a)->dead) continue;
        info(s, a)->dead = false;
        changed = true;
      }
    }
  }
}

/* Where n is printed in its graph's schedule: its own statement, or the
 * statement it is printed inside; past the end when a nested graph
 * reads it. */
static int printed_pos(Src *s, IrNode *n) {
  Info *in = info(s, n);
  if (in->role == R_STMT || in->role == R_RETURN || in->role == R_TARGET || !in->nuses) return in->pos;
  int at = in->pos;
  for (int u = 0; u < in->nuses; u++) {
    Use *us = &in->uses[u];
    if (!us->user || us->user->graph != n->graph) return 1 << 30;
    int q = printed_pos(s, us->user);
    if (q > at) at = q;
  }
  return at;
}

/* Whether a use of a loop's parameter, at graph u (position upos there,
 * -1 for its end), reads the old value only before node x (in graph gx)
 * assigns the new one, or on another path. */
static bool before_or_apart(Src *s, IrGraph *u, int upos, IrNode *x) {
  IrGraph *gx = x->graph;
  /* an item of an unpack is assigned where the unpack is */
  int xpos = info(s, x)->role == R_TARGET ? info(s, x->in[1])->pos : info(s, x)->pos;
  if (u == gx) return upos >= 0 && upos <= xpos;
  if (ir_is_ancestor(u, gx)) return true;   /* printed before the branch holding x */
  /* u and gx under different branches of one if */
  for (IrGraph *t = u->parent; t; t = t->parent) {
    if (!ir_is_ancestor(t, gx)) continue;
    IrGraph *cu = u, *cx = gx;
    while (cu->parent != t) cu = cu->parent;
    if (cx == t) return false;
    while (cx->parent != t) cx = cx->parent;
    if (cu == cx || !ginfo(s, cu) || !ginfo(s, cx)) return false;
    int mu = ginfo(s, cu)->mode, mx = ginfo(s, cx)->mode;
    IrGraph *join = ginfo(s, t)->join;
    /* the branches of t run apart, and before t's join; x's path goes
     * on to continue the loop, never into the join; a loop runs before
     * the code after it */
    return (mu == M_BRANCH && (mx == M_BRANCH || cx == join)) || (cu == join && mx == M_BRANCH) ||
           (mu == M_LOOP && ginfo(s, cu)->exit == cx);
  }
  return false;
}

/* Out of SSA, for the common case: a value computed only to be passed
 * to a parameter of a join or loop, in the statement just before the
 * jump's graph ends, is assigned to that parameter directly (`s = s + x`
 * rather than `s_3 = s + x` and `s = s_3`).  For a loop's parameter,
 * only where nothing reads its old value after. */
static void coalesce(Src *s) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    IrNode *c = g->ret;
    IrGraph *h = jump_of(s, c);
    if (!h) continue;
    for (int i = 0; i < h->nparams; i++) {
      IrNode *x = c->in[i + 1], *p = h->params[i];
      Info *xi = info(s, x), *pi = info(s, p);
      if (x->kind != IR_APPLY || x->graph != g || (xi->role != R_STMT && xi->role != R_TARGET) ||
          xi->nuses != 1 || xi->as || xi->targets || xi->assert_form || !needs_name(s, xi) || pi->dead)
        continue;
      int pr = prim_of(x);
      if (pr == IR_P_IMPORT || pr == IR_P_ASSERT_FAIL || pr == IR_P_SET_GLOBAL || pr == IR_P_SLICE) continue;
      bool ok = true;
      /* (entering the loop, the parameter has no old value) */
      if (ginfo(s, h)->mode == M_LOOP && ir_is_ancestor(h, g))
        for (int u = 0; u < pi->nuses && ok; u++) {
          Use *us = &pi->uses[u];
          if (us->user == c) ok = us->pos == i + 1 || info(s, h->params[us->pos - 1])->dead;
          else if (us->pos < 0) ok = false;
          else ok = before_or_apart(s, us->where, us->user ? printed_pos(s, us->user) : -1, x);
        }
      if (ok) xi->as = p;
    }
  }
  /* a parameter of a join, or of the code after a loop, that every
   * call passes the same value (a variable not changed on the way) is
   * that variable */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    GInfo *gh = &s->gs[gx];
    IrGraph *h = gh->g;
    if (gh->mode != M_JOIN && gh->mode != M_EXIT) continue;
    for (int i = 0; i < h->nparams; i++) {
      IrNode *y = resolve(gh->sites[0]->in[i + 1]);
      Info *pi = info(s, h->params[i]);
      bool same = !pi->dead && y->kind != IR_CONST && !info(s, y)->outer;
      for (int k = 1; same && k < gh->nsites; k++) same = resolve(gh->sites[k]->in[i + 1]) == y;
      /* in scope where h is printed: the loop's own parameter, or a
       * node of a graph around h's place, printed in place up to it */
      if (same && gh->mode == M_EXIT) same = y->kind == IR_PARAM && y->graph == gh->loop;
      if (same && gh->mode == M_JOIN) {
        same = ir_is_ancestor(y->graph, h->parent);
        for (IrGraph *t = h->parent; same && t != y->graph; t = t->parent) same = ginfo(s, t)->mode != M_DEF;
      }
      if (same) pi->as = y;
    }
  }
}

/* ---- names ---- */

static const char *binop(int p);

static bool call_like(const IrNode *n) {
  int p = prim_of(n);
  return p < 0 || p == IR_P_CALL_KW || p == IR_P_CALL_METHOD;
}

static bool needs_name(Src *s, Info *in) {
  IrNode *n = in->node;
  if (in->outer || in->dead || in->as) return false;
  if (n->kind == IR_PARAM) return true;
  if (n->kind != IR_APPLY) return false;
  if (in->role == R_TARGET || in->value_entry) return true;
  if (in->role != R_STMT || in->tail) return false;
  if (in->targets) return in->need_tuple;
  if (is_prim(n, IR_P_SET_GLOBAL)) return false;
  if (is_prim(n, IR_P_ASSERT_FAIL)) return in->nuses > 0;
  if (is_prim(n, IR_P_IMPORT) || is_prim(n, IR_P_SETITEM)) return true;
  return !(in->nuses == 0 && call_like(n));
}

static const char *fresh(Src *s) {
  for (;;) {
    const char *name = lang_str_fmt("t%d", ++s->next_temp)->data;
    if (!is_taken(&s->taken, name)) {
      take(&s->taken, name, NULL);
      return name;
    }
  }
}

/* base, or base_2, base_3... whichever is free first. */
static const char *unique(Src *s, const char *base, IrNode *owner) {
  const char *name = base;
  for (int k = 2; is_taken(&s->taken, name); k++) name = lang_str_fmt("%s_%d", base, k)->data;
  take(&s->taken, name, owner);
  return name;
}

/* Whether node x is read in graph g or in a graph nested in it. */
static bool read_within(Src *s, IrNode *x, IrGraph *g) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *d = s->gs[gx].g;
    if (!ir_is_ancestor(g, d)) continue;
    for (int i = 0; i < d->nnodes; i++)
      for (int j = 0; j < d->nodes[i]->nin; j++)
        if (resolve(d->nodes[i]->in[j]) == x) return true;
    if (d->ret && resolve(d->ret) == x) return true;
    if (d != g)
      for (int k = 0; k < d->ndefaults; k++)
        if (resolve(d->defaults[k]) == x) return true;
  }
  return false;
}

/* A def's parameter keeps its source name, so keyword calls work, also
 * when another node has it: the def's own scope then hides that node,
 * which is fine when nothing in the def reads it. */
static bool can_share(Src *s, const char *name, IrGraph *g) {
  Name *nm = find_name(&s->taken, name);
  if (nm->fixed) return false;
  for (int k = 0; k < nm->nowners; k++)
    if (read_within(s, nm->owners[k], g)) return false;
  for (int k = 0; k < nm->nreaders; k++)
    if (ir_is_ancestor(g, nm->readers[k])) return false;
  return true;
}

/* A def's name: a function's own (`inner`; `lambda3` nested, else the
 * whole name, `grad_f`), a synthetic graph's last two components
 * (`fib.if1` -> `fib_if1`). */
static const char *graph_base(Src *s, IrGraph *g) {
  const char *full = g->name->data, *dot = strrchr(full, '.');
  if (g->flags & (IRG_FUNCTION | IRG_MODULE)) {
    const char *own = g->display && is_ident(g->display->data) ? g->display->data
                    : sanitize(dot && g != s->root && ginfo(s, g->parent) ? dot + 1 : full);
    /* a transform of a function (J.f, J.f.inner): never the function's own name */
    return g->jsource && !ginfo(s, g->parent) ? sanitize(full)
         : g->jsource ? lang_str_fmt("J_%s", own)->data : own;
  }
  const char *from = full;
  for (const char *p = full; dot && p < dot; p++)
    if (*p == '.') from = p + 1;
  return sanitize(from);
}

/* Whether expr or emit_stmt writes primitive p other than as a call of
 * its own name. */
static bool spelled(int p) {
  return binop(p) || p == IR_P_NEG || p == IR_P_POS || p == IR_P_NOT || p == IR_P_TRUTH ||
         p == IR_P_CONTAINS || p == IR_P_MAKE_TUPLE || p == IR_P_MAKE_LIST || p == IR_P_MAKE_DICT ||
         p == IR_P_GETITEM || p == IR_P_SETITEM || p == IR_P_UNPACK || p == IR_P_ITER_SEQ ||
         p == IR_P_FORMAT || p == IR_P_CONCAT_STR || p == IR_P_SWITCH || p == IR_P_CALL_KW ||
         p == IR_P_CALL_METHOD || p == IR_P_GETATTR || p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL ||
         p == IR_P_IMPORT || p == IR_P_ASSERT_FAIL || p == IR_P_CHECK_BOUND;
}

/* The name a primitive is called by: its builtin, `_gadd` (see
 * autodiff/names.c), or its plain name where it is a builtin so
 * (stop_gradient) or where there is none. */
static const char *prim_text(Src *s, int p) {
  const char *plain = ir_prims[p].name;
  Value v = ir_prim_value(s->vm, (IrPrim)p), b;
  if (lang_dict_get(s->vm->builtins, lang_str(plain), &b) && b.tag == V_OBJ && b.o == v.o) return plain;
  const char *nm = value_name(s, v);
  return nm ? nm : plain;
}

/* A builtin by the name it is bound to. */
static const char *builtin_text(Src *s, ObjBuiltin *b) {
  if (b->prim >= 0) return prim_text(s, b->prim);
  Value v = v_obj(b), old;
  if (lang_dict_get(s->vm->builtins, lang_str(b->name), &old) && old.tag == V_OBJ && old.o == v.o) return b->name;
  const char *nm = value_name(s, v);
  return nm ? nm : b->name;
}

/* Whether module m's globals are read from outside the root's module:
 * then as attributes of m, imported under module_alias. */
static bool foreign(Src *s, ObjModule *m) {
  return m && s->home && m != s->home && m->name && is_ident(m->name->data);
}

static const char *module_alias(Src *s, ObjModule *m) {
  const char *alias = lang_str_fmt("_%s", m->name->data)->data;
  for (int i = 0; i < s->nmods; i++)
    if (s->mods[i] == m) return alias;
  s->mods = lang_realloc(s->mods, (s->nmods + 1) * sizeof *s->mods);
  s->mods[s->nmods++] = m;
  return alias;
}

/* name is read in graph where (NULL: outside the printout) as a name
 * of the program's: a global, a builtin, a def printed elsewhere. */
static void reserve(Src *s, const char *name, IrGraph *where) {
  Name *nm = name_entry(&s->taken, name);
  if (!where) return;
  nm->readers = lang_realloc(nm->readers, (nm->nreaders + 1) * sizeof *nm->readers);
  nm->readers[nm->nreaders++] = where;
}

static void reserve_const(Src *s, Value v, IrGraph *where) {
  if (v.tag == V_FLOAT && !isfinite(v.f)) reserve(s, "float", where);
  if (v.tag != V_OBJ) return;
  switch (v.o->kind) {
  case O_BUILTIN: reserve(s, builtin_text(s, AS_BUILTIN(v)), where); break;
  case O_GRAPH:
    if (!ginfo(s, AS_GRAPH(v)->graph)) reserve(s, sanitize(AS_GRAPH(v)->graph->name->data), where);
    break;
  case O_FUNC: {
    IrGraph *h = AS_FUNC(v)->graph;
    if (value_name(s, v)) reserve(s, value_name(s, v), where);
    else if (top_def(h) && foreign(s, h->module)) reserve(s, module_alias(s, h->module), where);
    else if (!ginfo(s, h)) reserve(s, sanitize(h->name->data), where);
    break;
  }
  case O_MODULE: reserve(s, sanitize(AS_MODULE(v)->name->data), where); break;
  case O_RANGE: reserve(s, "range", where); break;
  case O_TUPLE:
  case O_LIST:
    for (size_t i = 0; i < AS_SEQ(v)->len; i++) reserve_const(s, AS_SEQ(v)->items[i], where);
    break;
  default: break;
  }
}

/* The names the printout reads but does not bind: globals, builtins
 * (also those a spelling uses, such as len), free variables of the root
 * from outside it, graphs printed elsewhere. */
static void reserve_names(Src *s) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) take(&s->taken, keywords[i], NULL);
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    Known *kn = known(s, n);
    if (in->outer && kn && kn->subst) {
      for (int u = 0; u < in->nuses; u++) reserve_const(s, kn->v, in->uses[u].where);
      continue;
    }
    if (in->outer) {
      /* named as the comments before the printout list captured values */
      in->name = n->name && is_ident(n->name->data) ? n->name->data : lang_str_fmt("free_%u", n->id)->data;
      take(&s->taken, in->name, n);
      continue;
    }
    if (n->kind != IR_APPLY) continue;
    IrGraph *at = n->graph;
    if (in->role == R_KNOWN) {
      reserve_const(s, kn->v, at);
      continue;
    }
    if (in->role == R_DROP) continue;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j]->kind == IR_CONST && !(j == 0 && prim_of(n) >= 0)) reserve_const(s, n->in[j]->value, at);
    int p = prim_of(n);
    if (p == IR_P_LEN) reserve(s, "len", at);
    else if (p == IR_P_TRUTH) reserve(s, "bool", at);
    else if (p == IR_P_REPR) reserve(s, "repr", at);
    else if (p == IR_P_STR) reserve(s, "str", at);
    else if (p == IR_P_ITER_SEQ) {
      reserve(s, "list", at);
      reserve(s, "type", at);
    } else if (p == IR_P_GLOBAL && n->nin > 1 && const_str(n->in[1]) && foreign(s, at->module)) {
      reserve(s, module_alias(s, at->module), at);
    } else if ((p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL || p == IR_P_IMPORT) && n->nin > 1 &&
               const_str(n->in[1])) {
      reserve(s, sanitize(AS_STR(n->in[1]->value)->data), at);
    } else if (p >= 0 && !spelled(p)) {
      reserve(s, prim_text(s, p), at);   /* printed as a call of its name (see expr) */
    }
  }
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int d = 0; d < g->ndefaults; d++)
      if (g->defaults[d] && g->defaults[d]->kind == IR_CONST)
        reserve_const(s, g->defaults[d]->value, ginfo(s, g->parent) ? g->parent : NULL);
    if (g->ret && g->ret->kind == IR_CONST) reserve_const(s, g->ret->value, g);
  }
}

/* Whether a derived printout's top-level def may not be called name:
 * a global of the program it is to run in has it. */
static bool program_global(Src *s, const char *name) {
  Value slot;
  if (!s->derived) return false;
  if (s->home && s->home->names && lang_dict_get(s->home->names, lang_str(name), &slot)) return true;
  return find_name(&s->globals, name) != NULL;
}

/* The globals a module's code assigns, for program_global when the
 * module has not run (`mist ir`): found from the module graphs that the
 * printed graphs, or the graphs they transform, are nested in. */
static void program_globals(Src *s) {
  PtrMap seen = {0};
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *m = s->gs[gx].g;
    while (m && !(m->flags & IRG_MODULE)) m = m->jsource ? m->jsource : m->parent;
    if (!m || m->module != s->home || map_get(&seen, m) >= 0) continue;
    map_put(&seen, m, 1);
    for (int i = 0; i < m->nnodes; i++)
      if (is_prim(m->nodes[i], IR_P_SET_GLOBAL) && const_str(m->nodes[i]->in[1]))
        name_entry(&s->globals, AS_STR(m->nodes[i]->in[1]->value)->data);
  }
}

/* A top-level def's name: unique, and in a derived printout none of
 * the program's globals, which pasting it after the program would
 * replace. */
static const char *unique_top(Src *s, const char *base) {
  const char *name = base;
  for (int k = 2; is_taken(&s->taken, name) || program_global(s, name); k++)
    name = lang_str_fmt("%s_%d", base, k)->data;
  take(&s->taken, name, NULL);
  return name;
}

static void name_all(Src *s) {
  reserve_names(s);
  if (s->derived) program_globals(s);
  /* the root keeps its name unless a free variable from outside has it
   * (grad.f reads f); a global of that name is itself, called again */
  GInfo *root = ginfo(s, s->root);
  const char *base = graph_base(s, s->root);
  Name *nm = find_name(&s->taken, base);
  root->name = (nm && (nm->fixed || nm->nowners)) || program_global(s, base) ? unique_top(s, base) : base;
  take(&s->taken, root->name, NULL);
  /* parameters of defs first, with their own names where possible */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    if (!(g->flags & IRG_FUNCTION)) continue;
    for (int i = 0; i < g->nparams; i++) {
      IrNode *p = g->params[i];
      if (!p->name || !is_ident(p->name->data)) continue;
      const char *nm = p->name->data;
      if (!is_taken(&s->taken, nm) || can_share(s, nm, g)) {
        take(&s->taken, nm, p);
        info(s, p)->name = nm;
      }
    }
  }
  /* a def printed at top level beside the root (a lambda it uses) is
   * a global of the program it is run in: its full name, to keep out
   * of the way of the program's own */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *h = s->gs[gx].g;
    if (!s->gs[gx].name && !s->gs[gx].in_place && !s->gs[gx].trivial)
      s->gs[gx].name = ginfo(s, h->parent) ? unique(s, graph_base(s, h), NULL) : unique_top(s, sanitize(h->name->data));
  }
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < s->ninfos; k++) {
      Info *in = s->infos[k];
      if (in->name || !needs_name(s, in)) continue;
      IrNode *n = in->node;
      if (pass == 0 && n->name) in->name = unique(s, sanitize(n->name->data), n);
      else if (pass == 1) in->name = fresh(s);
    }
  for (int k = 0; k < s->ninfos; k++) {
    IrNode *to = s->infos[k]->as;
    while (to && info(s, to)->as) to = info(s, to)->as;
    if (to) s->infos[k]->name = info(s, to)->name;
  }
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (!in->targets || in->role != R_STMT) continue;
    int64_t cnt = in->node->in[2]->value.i;
    for (int64_t i = 0; i < cnt; i++)
      in->tnames[i] = in->targets[i] ? info(s, in->targets[i])->name : fresh(s);
  }
}

/* ---- expressions ---- */

enum { C_FREE, C_OPERAND, C_POSTFIX };   /* where a value is written */

static void str_lit(StrBuf *out, const char *p, size_t len, bool fstr) {
  sb_addc(out, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)p[i];
    switch (c) {
    case '\n': sb_adds(out, "\\n"); break;
    case '\t': sb_adds(out, "\\t"); break;
    case '\r': sb_adds(out, "\\r"); break;
    case '\\': sb_adds(out, "\\\\"); break;
    case '"': sb_adds(out, "\\\""); break;
    case '{': sb_adds(out, fstr ? "{{" : "{"); break;
    case '}': sb_adds(out, fstr ? "}}" : "}"); break;
    default:
      if (c < 0x20 || c == 0x7f) sb_printf(out, "\\x%02x", c);
      else sb_addc(out, (char)c);
    }
  }
  sb_addc(out, '"');
}

static void const_text(Src *s, Value v, int ctx, StrBuf *out) {
  size_t start = out->len;
  bool negative = false;
  switch (v.tag) {
  case V_NONE: sb_adds(out, "None"); return;
  case V_UNBOUND:
    s->unbound = true;
    sb_adds(out, "None");
    return;
  case V_BOOL: sb_adds(out, v.b ? "True" : "False"); return;
  case V_INT:
    sb_printf(out, "%lld", (long long)v.i);
    negative = v.i < 0;
    break;
  case V_FLOAT:
    if (isnan(v.f)) sb_adds(out, "float(\"nan\")");
    else if (isinf(v.f)) sb_adds(out, v.f > 0 ? "float(\"inf\")" : "-float(\"inf\")");
    else lang_float_repr(v.f, out);
    negative = signbit(v.f) && !isnan(v.f);
    if (isinf(v.f) && !negative) return;
    break;
  case V_OBJ:
    switch (v.o->kind) {
    case O_STR: str_lit(out, AS_STR(v)->data, AS_STR(v)->len, false); return;
    case O_TUPLE:
    case O_LIST: {
      ObjSeq *t = AS_SEQ(v);
      bool tuple = v.o->kind == O_TUPLE;
      sb_addc(out, tuple ? '(' : '[');
      for (size_t i = 0; i < t->len; i++) {
        if (i) sb_adds(out, ", ");
        const_text(s, t->items[i], C_FREE, out);
      }
      if (tuple && t->len == 1) sb_addc(out, ',');
      sb_addc(out, tuple ? ')' : ']');
      return;
    }
    case O_DICT: {
      ObjDict *d = AS_DICT(v);
      sb_addc(out, '{');
      for (size_t i = 0; i < d->len; i++) {
        if (i) sb_adds(out, ", ");
        str_lit(out, d->entries[i].key->data, d->entries[i].key->len, false);
        sb_adds(out, ": ");
        const_text(s, d->entries[i].value, C_FREE, out);
      }
      sb_addc(out, '}');
      return;
    }
    case O_RANGE: {
      ObjRange *r = AS_RANGE(v);
      sb_printf(out, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop, (long long)r->step);
      return;
    }
    case O_GRAPH: {
      GInfo *gi = ginfo(s, AS_GRAPH(v)->graph);
      sb_adds(out, gi && gi->name ? gi->name : sanitize(AS_GRAPH(v)->graph->name->data));
      return;
    }
    case O_FUNC: {
      ObjFunc *f = AS_FUNC(v);
      bool plain = (f->nenv == 0 && f->ndefaults == 0) || map_get(&s->mat, f) >= 0;
      GInfo *gi = plain ? ginfo(s, f->graph) : NULL;
      if (value_name(s, v)) sb_adds(out, value_name(s, v));
      else if (gi && gi->name) sb_adds(out, gi->name);
      else if (top_def(f->graph) && foreign(s, f->graph->module))
        sb_printf(out, "%s.%s", module_alias(s, f->graph->module), f->graph->name->data);
      else sb_adds(out, sanitize(f->graph->name->data));
      return;
    }
    case O_MODULE: sb_adds(out, sanitize(AS_MODULE(v)->name->data)); return;
    case O_BUILTIN: sb_adds(out, builtin_text(s, AS_BUILTIN(v))); return;
    default:
      /* a tensor or another value the parser does not make: its repr,
       * which is what a program would write to build it */
      if (!lang_repr(s->vm, v, out)) {
        out->len = start;
        sb_printf(out, "None  # error: a %s constant has no source form\n", lang_type_name(v));
      }
      return;
    }
  }
  if (ctx == C_POSTFIX || (negative && ctx == C_OPERAND)) {
    /* (-1) ** 2, (1).real */
    char *num = lang_alloc_atomic(out->len - start + 1);
    memcpy(num, out->data + start, out->len - start + 1);
    out->len = start;
    sb_printf(out, "(%s)", num);
  }
}

/* global("name") read in its graph: bare in the root's module, else an
 * attribute of the module imported under its alias. */
static void global_text(Src *s, IrNode *n, StrBuf *out) {
  const char *name = AS_STR(n->in[1]->value)->data;
  if (foreign(s, n->graph->module)) sb_printf(out, "%s.%s", module_alias(s, n->graph->module), sanitize(name));
  else sb_adds(out, sanitize(name));
}

/* An env key (a node's address as an int) as a small number, the same
 * for the same key throughout the printout. */
static bool key_text(Src *s, IrNode *x, StrBuf *out) {
  int64_t key;
  if (!const_int(resolve(x), &key)) return false;
  int i = 0;
  while (i < s->nkeys && s->keys[i] != key) i++;
  if (i == s->nkeys) {
    s->keys = lang_realloc(s->keys, (s->nkeys + 1) * sizeof *s->keys);
    s->keys[s->nkeys++] = key;
  }
  sb_printf(out, "%d", i + 1);
  return true;
}

/* x as an atom: a name or a literal. */
static void atom(Src *s, IrNode *x, int ctx, StrBuf *out);
static void expr(Src *s, IrNode *n, StrBuf *out);

static void atom(Src *s, IrNode *x, int ctx, StrBuf *out) {
  x = resolve(x);
  Known *k = x->kind != IR_CONST ? known(s, x) : NULL;
  if (x->kind == IR_CONST || (k && k->subst)) {
    const_text(s, k ? k->v : x->value, ctx, out);
    return;
  }
  Info *in = info(s, x);
  if (in->role == R_GLOBAL) {
    global_text(s, x, out);
  } else if (in->role == R_NEG) {
    sb_adds(out, ctx == C_FREE ? "-" : "(-");
    const_text(s, x->in[1]->value, C_OPERAND, out);
    if (ctx != C_FREE) sb_addc(out, ')');
  } else if (in->name) {
    sb_adds(out, in->name);
  } else {
    /* printed in place: only reached for shapes the roles did not expect */
    sb_addc(out, '(');
    expr(s, x, out);
    sb_addc(out, ')');
  }
}

static void args_text(Src *s, IrNode **in, int n, StrBuf *out) {
  for (int i = 0; i < n; i++) {
    if (i) sb_adds(out, ", ");
    atom(s, in[i], C_FREE, out);
  }
}

/* A line before the statement being built: name = value. */
static const char *hoist(Src *s, Value v) {
  const char *name = fresh(s);
  for (int i = 0; i < s->ind; i++) sb_adds(&s->pre, "    ");
  sb_printf(&s->pre, "%s = ", name);
  const_text(s, v, C_FREE, &s->pre);
  sb_addc(&s->pre, '\n');
  return name;
}

static bool simple_const(Value v) {
  return v.tag == V_INT || v.tag == V_BOOL || v.tag == V_NONE || (v.tag == V_FLOAT && isfinite(v.f));
}

/* A spec written as is after ':' in an f-string field. */
static bool plain_spec(const ObjStr *spec) {
  for (size_t i = 0; i < spec->len; i++) {
    unsigned char c = (unsigned char)spec->data[i];
    if (c < 0x20 || c == 0x7f || c == '{' || c == '}' || c == '"' || c == '\'' || c == '\\') return false;
  }
  return true;
}

/* {v} or {v:spec} of an f-string */
static void field(Src *s, IrNode *v, IrNode *spec, StrBuf *out) {
  v = resolve(v);
  const char *conv = "";
  if (v->kind != IR_CONST && info(s, v)->role == R_CONV) {
    conv = is_prim(v, IR_P_REPR) ? "!r" : "!s";
    v = resolve(v->in[1]);
  }
  sb_addc(out, '{');
  if (v->kind == IR_CONST && !simple_const(v->value)) sb_adds(out, hoist(s, v->value));
  else atom(s, v, C_OPERAND, out);
  sb_adds(out, conv);
  if (spec) {
    spec = resolve(spec);
    if (const_str(spec) && plain_spec(AS_STR(spec->value))) {
      if (AS_STR(spec->value)->len) sb_printf(out, ":%s", AS_STR(spec->value)->data);
    } else {
      sb_adds(out, ":{");
      if (spec->kind == IR_CONST) sb_adds(out, hoist(s, spec->value));
      else atom(s, spec, C_OPERAND, out);
      sb_addc(out, '}');
    }
  }
  sb_addc(out, '}');
}

/* concat_str(parts...) as one f-string */
static void fstring(Src *s, IrNode **parts, int n, StrBuf *out) {
  sb_adds(out, "f\"");
  for (int i = 0; i < n; i++) {
    IrNode *p = resolve(parts[i]);
    if (const_str(p)) {
      StrBuf lit;
      sb_init(&lit);
      str_lit(&lit, AS_STR(p->value)->data, AS_STR(p->value)->len, true);
      sb_add(out, lit.data + 1, lit.len - 2);
    } else if (p->kind != IR_CONST && info(s, p)->role == R_FIELD) {
      field(s, p->in[1], p->in[2], out);
    } else {
      field(s, p, NULL, out);
    }
  }
  sb_addc(out, '"');
}

/* a[IDX]: a slice as a:b:c, a tuple of indices as i, j */
static void index_text(Src *s, IrNode *i, StrBuf *out) {
  i = resolve(i);
  Info *in = i->kind == IR_CONST ? NULL : info(s, i);
  if (in && in->role == R_INDEX && is_prim(i, IR_P_SLICE)) {
    for (int k = 1; k <= 3; k++) {
      IrNode *part = i->in[k];
      bool none = part->kind == IR_CONST && part->value.tag == V_NONE;
      if (k == 3 && none) break;
      if (k > 1) sb_addc(out, ':');
      if (!none) atom(s, part, C_FREE, out);
    }
  } else if (in && in->role == R_INDEX) {
    for (int k = 1; k < i->nin; k++) {
      if (k > 1) sb_adds(out, ", ");
      index_text(s, i->in[k], out);
    }
    if (i->nin == 2) sb_addc(out, ',');
  } else {
    atom(s, i, C_FREE, out);
  }
}

static void cond_text(Src *s, IrNode *c, StrBuf *out) {
  c = resolve(c);
  if (c->kind != IR_CONST && info(s, c)->role == R_COND) expr(s, c, out);
  else atom(s, c, C_OPERAND, out);
}

/* One side of a conditional called at once: a() or the value a branch
 * only returns. */
static void side(Src *s, IrNode *x, StrBuf *out) {
  IrGraph *h = const_graph(s, x);
  if (h && ginfo(s, h)->trivial) {
    if (h->ret) atom(s, h->ret, C_OPERAND, out);
    else sb_adds(out, "None");
    return;
  }
  atom(s, x, C_POSTFIX, out);
  sb_adds(out, "()");
}

/* switch(c, a, b)(args...) */
static void switch_call(Src *s, IrNode *call, StrBuf *out) {
  IrNode *sw = call->in[0];
  sb_addc(out, '(');
  if (call->nin == 1) {
    side(s, sw->in[2], out);
    sb_adds(out, " if ");
    cond_text(s, sw->in[1], out);
    sb_adds(out, " else ");
    side(s, sw->in[3], out);
    sb_addc(out, ')');
    return;
  }
  atom(s, sw->in[2], C_OPERAND, out);
  sb_adds(out, " if ");
  cond_text(s, sw->in[1], out);
  sb_adds(out, " else ");
  atom(s, sw->in[3], C_OPERAND, out);
  sb_adds(out, ")(");
  args_text(s, call->in + 1, call->nin - 1, out);
  sb_addc(out, ')');
}

static const char *binop(int p) {
  switch (p) {
  case IR_P_ADD: return "+";
  case IR_P_SUB: return "-";
  case IR_P_MUL: return "*";
  case IR_P_TRUEDIV: return "/";
  case IR_P_FLOORDIV: return "//";
  case IR_P_MOD: return "%";
  case IR_P_POW: return "**";
  case IR_P_MATMUL: return "@";
  case IR_P_EQ: return "==";
  case IR_P_NE: return "!=";
  case IR_P_LT: return "<";
  case IR_P_LE: return "<=";
  case IR_P_GT: return ">";
  case IR_P_GE: return ">=";
  case IR_P_IS: return "is";
  case IR_P_IS_NOT: return "is not";
  default: return NULL;
  }
}

static bool attr_name(const IrNode *x) { return const_str(x) && is_ident(AS_STR(x->value)->data); }

/* The expression an application means. */
static void expr(Src *s, IrNode *n, StrBuf *out) {
  int p = prim_of(n);
  IrNode **a = n->in + 1;
  int na = n->nin - 1;
  if (p < 0) {
    IrNode *f = n->in[0];
    if (f->kind != IR_CONST && info(s, f)->role == R_SWITCH) {
      switch_call(s, n, out);
      return;
    }
    atom(s, f, C_POSTFIX, out);
    sb_addc(out, '(');
    args_text(s, a, na, out);
    sb_addc(out, ')');
    return;
  }
  bool fixed = ir_prims[p].arity < 0 || na == ir_prims[p].arity;
  const char *op = binop(p);
  if (op && fixed) {
    atom(s, a[0], C_OPERAND, out);
    sb_printf(out, " %s ", op);
    atom(s, a[1], C_OPERAND, out);
    return;
  }
  switch (fixed ? p : -1) {
  case IR_P_NEG:
  case IR_P_POS:
  case IR_P_NOT:
    sb_adds(out, p == IR_P_NEG ? "-" : p == IR_P_POS ? "+" : "not ");
    atom(s, a[0], C_OPERAND, out);
    return;
  case IR_P_TRUTH:
  case IR_P_LEN:
  case IR_P_REPR:
  case IR_P_STR:
    sb_printf(out, "%s(", p == IR_P_TRUTH ? "bool" : ir_prims[p].name);
    atom(s, a[0], C_FREE, out);
    sb_addc(out, ')');
    return;
  case IR_P_CONTAINS:
    atom(s, a[1], C_OPERAND, out);
    sb_adds(out, " in ");
    atom(s, a[0], C_OPERAND, out);
    return;
  case IR_P_MAKE_TUPLE:
    sb_addc(out, '(');
    args_text(s, a, na, out);
    if (na == 1) sb_addc(out, ',');
    sb_addc(out, ')');
    return;
  case IR_P_MAKE_LIST:
    sb_addc(out, '[');
    args_text(s, a, na, out);
    sb_addc(out, ']');
    return;
  case IR_P_MAKE_DICT:
    if (na % 2) break;
    sb_addc(out, '{');
    for (int i = 0; i < na; i += 2) {
      if (i) sb_adds(out, ", ");
      atom(s, a[i], C_FREE, out);
      sb_adds(out, ": ");
      atom(s, a[i + 1], C_FREE, out);
    }
    sb_addc(out, '}');
    return;
  case IR_P_GETITEM:
    atom(s, a[0], C_POSTFIX, out);
    sb_addc(out, '[');
    index_text(s, a[1], out);
    sb_addc(out, ']');
    return;
  case IR_P_ITER_SEQ:
    /* a dict's keys as a list, anything else itself */
    sb_adds(out, "(list(");
    atom(s, a[0], C_FREE, out);
    sb_adds(out, ") if type(");
    atom(s, a[0], C_FREE, out);
    sb_adds(out, ") == \"dict\" else ");
    atom(s, a[0], C_OPERAND, out);
    sb_addc(out, ')');
    return;
  case IR_P_FORMAT:
    sb_adds(out, "f\"");
    field(s, a[0], a[1], out);
    sb_addc(out, '"');
    return;
  case IR_P_CONCAT_STR: fstring(s, a, na, out); return;
  case IR_P_SWITCH:
    sb_addc(out, '(');
    atom(s, a[1], C_OPERAND, out);
    sb_adds(out, " if ");
    cond_text(s, a[0], out);
    sb_adds(out, " else ");
    atom(s, a[2], C_OPERAND, out);
    sb_addc(out, ')');
    return;
  case IR_P_CALL_KW: {
    IrNode *names = resolve(a[1]);
    if (na < 2 || names->kind != IR_CONST || !v_is_obj(names->value, O_TUPLE)) break;
    ObjSeq *kw = AS_SEQ(names->value);
    int nk = (int)kw->len, npos = na - 2 - nk;
    bool ok = npos >= 0;
    for (int i = 0; ok && i < nk; i++)
      ok = v_is_obj(kw->items[i], O_STR) && is_ident(AS_STR(kw->items[i])->data);
    if (!ok) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_addc(out, '(');
    args_text(s, a + 2, npos, out);
    for (int i = 0; i < nk; i++) {
      if (npos || i) sb_adds(out, ", ");
      sb_printf(out, "%s=", AS_STR(kw->items[i])->data);
      atom(s, a[2 + npos + i], C_FREE, out);
    }
    sb_addc(out, ')');
    return;
  }
  case IR_P_CALL_METHOD:
    if (na < 2 || !attr_name(a[1])) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_printf(out, ".%s(", AS_STR(a[1]->value)->data);
    args_text(s, a + 2, na - 2, out);
    sb_addc(out, ')');
    return;
  case IR_P_GETATTR:
    if (!attr_name(a[1])) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_printf(out, ".%s", AS_STR(a[1]->value)->data);
    return;
  case IR_P_GLOBAL:
    if (!const_str(a[0])) break;
    global_text(s, n, out);
    return;
  default: break;
  }
  /* no spelling of its own: a call of the primitive's builtin (`_gadd`:
   * autodiff/names.c), an env key as a small number */
  sb_printf(out, "%s(", prim_text(s, p));
  for (int i = 0; i < na; i++) {
    if (i) sb_adds(out, ", ");
    if (!(i == 1 && fixed && (p == IR_P_ENV_GET || p == IR_P_ENV_SET) && key_text(s, a[i], out)))
      atom(s, a[i], C_FREE, out);
  }
  sb_addc(out, ')');
}

/* ---- statements and defs ---- */

static void indent(StrBuf *out, int ind) {
  for (int i = 0; i < ind; i++) sb_adds(out, "    ");
}

/* Start a statement at the current indentation. */
static void begin(Src *s, int ind, StrBuf *line) {
  sb_init(line);
  s->pre.len = 0;
  s->ind = ind;
  s->unbound = false;
}

/* Write the lines hoisted for it, then the statement. */
static void end(Src *s, StrBuf *line) {
  sb_add(s->out, s->pre.data, s->pre.len);
  s->pre.len = 0;
  indent(s->out, s->ind);
  sb_add(s->out, line->data, line->len);
  if (s->unbound) sb_adds(s->out, "  # None: not assigned yet");
  sb_addc(s->out, '\n');
}

static void say(Src *s, int ind, const char *text) {
  indent(s->out, ind);
  sb_adds(s->out, text);
  sb_addc(s->out, '\n');
}

static void emit_jump(Src *s, IrNode *call, IrGraph *h, int ind);

static void emit_stmt(Src *s, IrNode *n, int ind) {
  Info *in = info(s, n);
  if (in->role != R_STMT) return;
  if (in->value_entry) {
    /* x = loop(...): the while, whose returns are `x = value; break` */
    IrGraph *saved = s->vloop;
    const char *saved_name = s->vname;
    s->vloop = const_graph(s, n->in[0]);
    s->vname = in->name;
    emit_jump(s, n, s->vloop, ind);
    s->vloop = saved;
    s->vname = saved_name;
    return;
  }
  StrBuf line;
  begin(s, ind, &line);
  if (in->assert_form) {
    IrNode *sw = n->in[0];
    IrGraph *fail = const_graph(s, sw->in[3]);
    IrNode *af = fail->nodes[fail->nnodes - 1];
    if (fail->nnodes == 1) {
      sb_adds(&line, "assert ");
      cond_text(s, sw->in[1], &line);
    } else {
      /* the message takes statements of its own */
      IrNode *c = resolve(sw->in[1]);
      bool plain = c->kind == IR_CONST || info(s, c)->role != R_COND;
      sb_adds(&line, plain ? "if not " : "if not (");
      cond_text(s, c, &line);
      sb_adds(&line, plain ? ":" : "):");
      end(s, &line);
      for (int i = 0; i < fail->nnodes - 1; i++) emit_stmt(s, fail->nodes[i], ind + 1);
      begin(s, ind + 1, &line);
      sb_adds(&line, "assert False");
    }
    IrNode *msg = resolve(af->in[1]);
    if (!(msg->kind == IR_CONST && msg->value.tag == V_NONE)) {
      sb_adds(&line, ", ");
      atom(s, msg, C_FREE, &line);
    }
  } else if (in->targets) {
    int64_t cnt = n->in[2]->value.i;
    for (int64_t i = 0; i < cnt; i++) {
      if (i) sb_adds(&line, ", ");
      sb_adds(&line, in->tnames[i]);
    }
    if (cnt == 1) sb_addc(&line, ',');
    sb_adds(&line, " = ");
    IrNode *x = resolve(n->in[1]);
    if (x->kind != IR_CONST && info(s, x)->role == R_TUPLE) {
      args_text(s, x->in + 1, x->nin - 1, &line);
      if (x->nin == 2) sb_addc(&line, ',');
    } else {
      atom(s, x, C_FREE, &line);
    }
    if (in->need_tuple) {
      end(s, &line);
      begin(s, ind, &line);
      sb_printf(&line, "%s = (", in->name);
      for (int64_t i = 0; i < cnt; i++) sb_printf(&line, "%s%s", i ? ", " : "", in->tnames[i]);
      sb_adds(&line, cnt == 1 ? ",)" : ")");
    }
  } else if (is_prim(n, IR_P_SETITEM)) {
    /* a copy of a with one item replaced: name = a; name[i] = v */
    sb_printf(&line, "%s = ", in->name);
    size_t at = line.len;
    atom(s, n->in[1], C_FREE, &line);
    if (strcmp(line.data + at, in->name) != 0) {
      end(s, &line);
      begin(s, ind, &line);
    } else {
      line.len = 0;   /* a[i] = v on a itself */
      line.data[0] = 0;
    }
    sb_printf(&line, "%s[", in->name);
    index_text(s, n->in[2], &line);
    sb_adds(&line, "] = ");
    atom(s, n->in[3], C_FREE, &line);
  } else if (is_prim(n, IR_P_IMPORT) && const_str(n->in[1]) && is_ident(AS_STR(n->in[1]->value)->data)) {
    const char *m = AS_STR(n->in[1]->value)->data;
    sb_printf(&line, "import %s", m);
    if (strcmp(m, in->name) != 0) sb_printf(&line, " as %s", in->name);
  } else if (is_prim(n, IR_P_ASSERT_FAIL)) {
    sb_adds(&line, "assert False");
    IrNode *m = resolve(n->in[1]);
    if (!(m->kind == IR_CONST && m->value.tag == V_NONE)) {
      sb_adds(&line, ", ");
      atom(s, m, C_FREE, &line);
    }
    if (in->name) {
      end(s, &line);
      begin(s, ind, &line);
      sb_printf(&line, "%s = None", in->name);
    }
  } else if (is_prim(n, IR_P_SET_GLOBAL) && const_str(n->in[1])) {
    const char *g = sanitize(AS_STR(n->in[1]->value)->data);
    StrBuf v;
    sb_init(&v);
    atom(s, n->in[2], C_FREE, &v);
    if (strcmp(v.data, g) == 0) return;
    sb_printf(&line, "%s = %s", g, v.data);
  } else {
    if (is_prim(n, IR_P_SLICE))
      say(s, ind, "# error: a slice outside [] has no source form; slice() is not a builtin");
    if (in->name) sb_printf(&line, "%s = ", in->name);
    expr(s, n, &line);
  }
  end(s, &line);
}

static IrGraph *owner(Src *s, IrGraph *g) { return ginfo(s, g->parent) ? g->parent : NULL; }

static void emit_def(Src *s, IrGraph *g, int ind);
static void need_within(Src *s, IrGraph *o, IrGraph *g, int ind);

/* Define the graph x names if it is a def of body `o` not written yet. */
static void need_const(Src *s, IrGraph *o, IrNode *x, int ind) {
  IrGraph *h = x ? const_graph(s, x) : NULL;
  if (!h) return;
  GInfo *gi = ginfo(s, h);
  if (gi->trivial) {
    need_const(s, o, h->ret, ind);
    return;
  }
  if (gi->emitted || gi->in_place || owner(s, h) != o) return;
  emit_def(s, h, ind);
}

/* The defs of body o that statement n needs, before it. */
static void need_node(Src *s, IrGraph *o, IrNode *n, int ind) {
  n = resolve(n);
  if (n->kind == IR_CONST) {
    need_const(s, o, n, ind);
    return;
  }
  Info *in = info(s, n);
  if (in->outer || n->kind != IR_APPLY) return;
  for (int j = 0; j < n->nin; j++) {
    IrNode *x = resolve(n->in[j]);
    if (x->kind == IR_CONST) need_const(s, o, x, ind);
    else if (info(s, x)->role != R_STMT && info(s, x)->role != R_TARGET && x->graph == n->graph)
      need_node(s, o, x, ind);
  }
  if (in->assert_form) need_within(s, o, const_graph(s, n->in[0]->in[3]), ind);
  if (in->value_entry) need_within(s, o, const_graph(s, n->in[0]), ind);
}

/* The defs of body o that graph g, or a graph nested in it, needs. */
static void need_within(Src *s, IrGraph *o, IrGraph *g, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *d = s->gs[gx].g;
    if (!ir_is_ancestor(g, d)) continue;
    for (int i = 0; i < d->nnodes; i++)
      for (int j = 0; j < d->nodes[i]->nin; j++) need_const(s, o, resolve(d->nodes[i]->in[j]), ind);
    if (d->ret) need_const(s, o, resolve(d->ret), ind);
    for (int k = 0; k < d->ndefaults; k++) need_const(s, o, resolve(d->defaults[k]), ind);
  }
}

/* What is left of body o's defs, before its end. */
static void need_rest(Src *s, IrGraph *o, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    GInfo *gi = &s->gs[gx];
    if (!gi->emitted && !gi->in_place && !gi->trivial && gi->g != s->root && owner(s, gi->g) == o)
      emit_def(s, gi->g, ind);
  }
}

/* Whether branch g is only an if, to be written as elif: no statements
 * and no defs before its tail. */
static bool only_if(Src *s, IrGraph *g) {
  GInfo *gi = ginfo(s, g);
  if (!gi->tail) return false;
  for (int i = 0; i < g->nnodes; i++) {
    int r = info(s, g->nodes[i])->role;
    if (g->nodes[i] != gi->tail && (r == R_STMT || r == R_TARGET)) return false;
  }
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == g && !s->gs[gx].in_place && !s->gs[gx].trivial) return false;
  return !gi->join;
}

static void emit_body(Src *s, IrGraph *g, int ind);
static IrGraph *jump_target(Src *s, IrNode *call);

/* Whether g is printed at a module's top level: the module's graph, or
 * a branch printed in place there. */
static bool at_top(Src *s, IrGraph *g) {
  for (; g; g = g->parent) {
    if (g->flags & IRG_MODULE) return g == s->root;
    if (!ginfo(s, g) || !ginfo(s, g)->in_place) return false;
  }
  return false;
}

/* The tail of g, switch(c, @a, @b)(), as `if c:` a `else:` b; an else
 * that is only another if becomes elif. */
static void emit_if(Src *s, IrGraph *g, const char *kw, int ind) {
  IrNode *sw = ginfo(s, g)->tail->in[0];
  IrGraph *a = const_graph(s, sw->in[2]), *b = const_graph(s, sw->in[3]);
  StrBuf line;
  begin(s, ind, &line);
  sb_printf(&line, "%s ", kw);
  cond_text(s, sw->in[1], &line);
  sb_addc(&line, ':');
  end(s, &line);
  size_t at = s->out->len;
  emit_body(s, a, ind + 1);
  if (s->out->len == at) say(s, ind + 1, "pass");   /* it only falls through */
  if (only_if(s, b)) {
    emit_if(s, b, "elif", ind);
    return;
  }
  at = s->out->len;
  say(s, ind, "else:");
  size_t body = s->out->len;
  emit_body(s, b, ind + 1);
  if (s->out->len == body) s->out->len = at;   /* no else at all */
  s->out->data[s->out->len] = 0;
}

/* A call of a join, loop or the code after a loop: the parameters
 * assigned, then fall through, `continue`, `break`, or at the loop's
 * entry the while.  (An Unbound argument is assigned None: leaving the
 * variable unassigned would make the next copy of it fail, where
 * check_bound alone fails in the IR.) */
/* The parameters of h a jump must assign (in pick): not those nothing
 * reads, nor those already holding the value under the same name. */
static int jump_pairs(Src *s, IrNode *call, IrGraph *h, int *pick) {
  int n = 0;
  for (int i = 0; i < h->nparams; i++) {
    IrNode *a = resolve(call->in[i + 1]);
    Info *pi = info(s, h->params[i]);
    if (a == h->params[i] || pi->dead) continue;
    if (a->kind != IR_CONST && info(s, a)->name && pi->name && strcmp(info(s, a)->name, pi->name) == 0)
      continue;
    pick[n++] = i;
  }
  return n;
}

/* Whether falling off the end of graph x reaches the end of loop l's
 * body, where the while starts again: `continue` is not needed there. */
static bool ends_body(Src *s, IrGraph *x, IrGraph *l) {
  for (IrGraph *y = x; y; y = y->parent) {
    if (y == l) return true;
    int m = ginfo(s, y) ? ginfo(s, y)->mode : M_DEF;
    if (m == M_BRANCH && ginfo(s, y->parent)->join) return false;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return false;
  }
  return false;
}

/* Whether loop l is `while c:`, written so: nothing before its test,
 * and its exit branch only leaving (break, with nothing to assign). */
static bool while_cond(Src *s, IrGraph *l) {
  GInfo *gl = ginfo(s, l);
  if (!gl->tail || gl->join || !gl->exit) return false;
  for (int i = 0; i < l->nnodes; i++) {
    int r = info(s, l->nodes[i])->role;
    if (l->nodes[i] != gl->tail && (r == R_STMT || r == R_TARGET)) return false;
  }
  IrNode *sw = gl->tail->in[0];
  IrGraph *b = const_graph(s, sw->in[3]);
  if (!b || jump_of(s, b->ret) != gl->exit) return false;
  for (int i = 0; i < b->nnodes; i++) {
    int r = info(s, b->nodes[i])->role;
    if (b->nodes[i] != b->ret && (r == R_STMT || r == R_TARGET)) return false;
  }
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == b) return false;
  int *pick = lang_alloc_atomic((gl->exit->nparams + 1) * sizeof *pick);
  return jump_pairs(s, b->ret, gl->exit, pick) == 0;
}

static void emit_jump(Src *s, IrNode *call, IrGraph *h, int ind) {
  GInfo *gh = ginfo(s, h);
  bool clash = false;
  int *pick = lang_alloc_atomic((h->nparams + 1) * sizeof *pick);
  int n = jump_pairs(s, call, h, pick);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      clash |= j != k && resolve(call->in[pick[k] + 1]) == h->params[pick[j]];
  StrBuf line;
  if (clash) {
    /* a, b = b, a: all at once */
    begin(s, ind, &line);
    for (int k = 0; k < n; k++) sb_printf(&line, "%s%s", k ? ", " : "", info(s, h->params[pick[k]])->name);
    sb_adds(&line, " = ");
    for (int k = 0; k < n; k++) {
      if (k) sb_adds(&line, ", ");
      atom(s, call->in[pick[k] + 1], C_FREE, &line);
    }
    end(s, &line);
  } else {
    for (int k = 0; k < n; k++) {
      begin(s, ind, &line);
      sb_printf(&line, "%s = ", info(s, h->params[pick[k]])->name);
      atom(s, call->in[pick[k] + 1], C_FREE, &line);
      end(s, &line);
    }
  }
  if (gh->mode == M_EXIT) {
    say(s, ind, "break");
  } else if (gh->mode == M_LOOP && ir_is_ancestor(h, call->graph)) {
    if (!ends_body(s, call->graph, h)) say(s, ind, "continue");
  } else if (gh->mode == M_LOOP && while_cond(s, h)) {
    IrNode *sw = gh->tail->in[0];
    begin(s, ind, &line);
    sb_adds(&line, "while ");
    cond_text(s, sw->in[1], &line);
    sb_addc(&line, ':');
    end(s, &line);
    size_t at = s->out->len;
    emit_body(s, const_graph(s, sw->in[2]), ind + 1);
    if (s->out->len == at) say(s, ind + 1, "pass");
    emit_body(s, gh->exit, ind);
  } else if (gh->mode == M_LOOP) {
    say(s, ind, "while True:");
    size_t at = s->out->len;
    emit_body(s, h, ind + 1);
    if (s->out->len == at) say(s, ind + 1, "pass");
    if (gh->exit) emit_body(s, gh->exit, ind);
  }
}

/* Before the end of g: the defs of g that what is printed in place
 * there needs (branches, joins, loops). */
static void need_in_place(Src *s, IrGraph *g, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == g && s->gs[gx].in_place) need_within(s, g, s->gs[gx].g, ind);
  need_rest(s, g, ind);
}

static void emit_body(Src *s, IrGraph *g, int ind) {
  GInfo *gi = ginfo(s, g);
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    if (n == gi->tail) break;
    need_node(s, g, n, ind);
    emit_stmt(s, n, ind);
  }
  StrBuf line;
  if (gi->tail) {
    IrNode *sw = gi->tail->in[0], *c = resolve(sw->in[1]);
    need_node(s, g, c, ind);
    need_in_place(s, g, ind);
    int known = !(c->kind == IR_CONST) ? -1 : c->value.tag == V_BOOL ? c->value.b
              : c->value.tag == V_NONE ? 0 : -1;
    if (known >= 0) emit_body(s, const_graph(s, sw->in[known ? 2 : 3]), ind);   /* while True */
    else emit_if(s, g, "if", ind);
    if (gi->join) emit_body(s, gi->join, ind);
    return;
  }
  if (g->ret) need_node(s, g, g->ret, ind);
  IrGraph *h = g->ret ? jump_target(s, g->ret) : NULL;
  if (h && ginfo(s, h)->mode >= M_JOIN) {
    need_in_place(s, g, ind);
    emit_jump(s, g->ret, h, ind);
    return;
  }
  need_rest(s, g, ind);
  if (s->vloop && owner_loop(s, g) == s->vloop) {
    begin(s, ind, &line);
    sb_printf(&line, "%s = ", s->vname);
    if (!g->ret) sb_adds(&line, "None");
    else if (g->ret->kind == IR_APPLY && info(s, g->ret)->role == R_RETURN) expr(s, g->ret, &line);
    else atom(s, g->ret, C_FREE, &line);
    end(s, &line);
    say(s, ind, "break");
    return;
  }
  if (at_top(s, g)) {
    /* no return at top level: a call there is kept as a statement */
    IrNode *r = g->ret;
    if (r && r->kind == IR_APPLY && info(s, r)->role == R_RETURN && call_like(r)) {
      begin(s, ind, &line);
      expr(s, r, &line);
      end(s, &line);
    }
    return;
  }
  begin(s, ind, &line);
  sb_adds(&line, "return ");
  if (!g->ret) sb_adds(&line, "None");
  else if (g->ret->kind == IR_APPLY && info(s, g->ret)->role == R_RETURN) expr(s, g->ret, &line);
  else atom(s, g->ret, C_FREE, &line);
  end(s, &line);
}

static void write_def(Src *s, IrGraph *g, int ind);

/* g's def, after the defs of its body's owner that it needs. */
static void emit_def(Src *s, IrGraph *g, int ind) {
  ginfo(s, g)->emitted = true;
  IrGraph *o = owner(s, g);
  need_within(s, o, g, ind);
  for (int d = 0; d < g->ndefaults; d++) need_node(s, o, g->defaults[d], ind);
  write_def(s, g, ind);
}

static void write_def(Src *s, IrGraph *g, int ind) {
  GInfo *gi = ginfo(s, g);
  if (ind == 0 && s->out->len > s->start) sb_addc(s->out, '\n');   /* between top-level defs */
  StrBuf line;
  begin(s, ind, &line);
  sb_printf(&line, "def %s(", gi->name);
  for (int i = 0; i < g->nparams; i++) {
    if (i) sb_adds(&line, ", ");
    sb_adds(&line, info(s, g->params[i])->name);
    int d = i - (g->nparams - g->ndefaults);
    if (d >= 0 && g->defaults[d]) {
      sb_addc(&line, '=');
      atom(s, g->defaults[d], C_FREE, &line);
    }
  }
  sb_adds(&line, "):");
  end(s, &line);
  emit_body(s, g, ind + 1);
}

static int by_id(const void *a, const void *b) {
  const IrGraph *x = *(IrGraph *const *)a, *y = *(IrGraph *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

/* The builtins by object, for value_name. */
static void name_builtins(Src *s) {
  ObjDict *d = s->vm->builtins;
  s->bnames = lang_alloc((d->len ? d->len : 1) * sizeof *s->bnames);
  for (size_t i = 0; i < d->len; i++) {
    Value v = d->entries[i].value;
    if (v.tag != V_OBJ || !d->entries[i].key || map_get(&s->named, v.o) >= 0) continue;
    s->bnames[i] = d->entries[i].key->data;
    map_put(&s->named, v.o, (int)i);
  }
}

/* Before the defs: the captured values printed by name, as comments
 * (`# k = 3`), then the modules the printout reads imported. */
static void preamble(Src *s) {
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < s->ninfos; k++) {
      Info *in = s->infos[k];
      Known *kn = known(s, in->node);
      if (!in->outer || !in->name || !kn || kn->subst || in->nuses == 0 || kn->v.tag == V_UNBOUND) continue;
      bool own = false;   /* the root's own first, in its fv order */
      for (int i = 0; i < s->nenv && i < s->root->nfv; i++) own |= s->root->fv[i] == in->node;
      if (own != (pass == 0)) continue;
      sb_printf(s->out, "# %s = ", in->name);
      size_t at = s->out->len;
      if (!lang_repr(s->vm, kn->v, s->out)) {
        lang_error_clear(s->vm);
        s->out->len = at;
        sb_printf(s->out, "<%s>", lang_type_name(kn->v));
      }
      sb_addc(s->out, '\n');
    }
  for (int i = 0; i < s->nmods; i++) {
    const char *m = s->mods[i]->name->data;
    sb_printf(s->out, "import %s as %s\n", m, module_alias(s, s->mods[i]));
  }
  if (s->nmods) sb_addc(s->out, '\n');
  s->start = s->out->len;
}

/* The printout of root graph g; env: the values it captured when it is
 * printed as a function value (NULL: none known). */
static void print_root(MistVM *vm, IrGraph *g, const Value *env, int nenv, StrBuf *out) {
  Src s = {0};
  s.vm = vm;
  s.root = g;
  s.out = out;
  s.start = out->len;
  s.home = g->module;
  sb_init(&s.pre);
  name_builtins(&s);
  ir_free_vars(g);
  s.env = env;
  s.nenv = env ? nenv : 0;
  add_graph(&s, g);
  fold(&s);
  /* root first, then by id: parents before the graphs nested in them */
  IrGraph **order = lang_alloc(s.ngraphs * sizeof *order);
  for (int i = 0; i < s.ngraphs; i++) order[i] = s.gs[i].g;
  qsort(order + 1, s.ngraphs - 1, sizeof *order, by_id);
  for (int i = 0; i < s.ngraphs; i++) {
    s.gs[i] = (GInfo){0};
    s.gs[i].g = order[i];
    map_put(&s.gmap, order[i], i);
  }
  count_uses(&s);
  find_roles(&s);
  structure(&s);
  find_dead(&s);
  coalesce(&s);
  name_all(&s);
  preamble(&s);
  /* graphs used by the root from outside it (a lambda as a default
   * value, the transforms folded in) come first, at top level */
  ginfo(&s, g)->emitted = true;
  need_within(&s, NULL, g, 0);
  for (int d = 0; d < g->ndefaults; d++) need_node(&s, NULL, g->defaults[d], 0);
  need_rest(&s, NULL, 0);
  if (g->flags & IRG_MODULE) emit_body(&s, g, 0);
  else write_def(&s, g, 0);
}

void ir_print_source(MistVM *vm, IrGraph *g, StrBuf *out) { print_root(vm, g, NULL, 0, out); }

void ir_print_source_value(MistVM *vm, Value f, StrBuf *out) {
  ObjFunc *fn = AS_FUNC(f);
  print_root(vm, fn->graph, fn->env, fn->nenv, out);
}
