/* source_int.h: what the files that print IR graphs as Mist source
 * share (source.c, source_fold.c, source_names.c, source_emit.c; not
 * for use outside them): the printout's tables (Src, with an Info per
 * node and a GInfo per graph) and the functions each file gives the
 * others, prefixed src_.  The public entry points are in source.h and
 * ir.h. */
#ifndef MIST_STDLIB_SOURCE_INT_H
#define MIST_STDLIB_SOURCE_INT_H

#include "ir/ir.h"
#include "ir/map.h"

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
  NodeMap gmap;          /* graph -> index in gs */
  int ninfos, capinfos;
  Info **infos;         /* each allocated alone, so pointers to them stay valid */
  NodeMap nmap;          /* node -> index in infos */
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
  NodeMap known;         /* node -> index in kv */
  struct Known *kv;
  int nkv, capkv;
  NodeMap mat;           /* closures printed as their graph's def */
  bool derived;         /* something was folded: top-level names avoid the program's */
  NodeMap named;         /* builtin object -> index in bnames: its name */
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

/* ---- source.c: the tables, node and graph tests, the analysis ---- */

/* g's entry, or NULL when g is not printed */
GInfo *src_ginfo(Src *s, const IrGraph *g);
/* x's entry, made on first use */
Info *src_info(Src *s, IrNode *x);
int src_prim_of(const IrNode *n);
/* n applies primitive p with its table's arity */
bool src_is_prim(const IrNode *n, IrPrim p);
/* the graph a constant holds (a graph, or a closure that captured
 * nothing), or NULL; const_graph: only a graph of the printout */
IrGraph *src_graph_const(const IrNode *x);
IrGraph *src_const_graph(Src *s, const IrNode *x);
bool src_const_int(const IrNode *x, int64_t *v);
bool src_const_str(const IrNode *x);
/* x, past check_bound(x, name) and set_global(name, x) */
IrNode *src_resolve(IrNode *x);
/* a top-level def of a module: printed by name, as its global */
bool src_top_def(const IrGraph *h);
/* an application printed as a call */
bool src_call_like(const IrNode *n);
/* add g to the printout, with the graphs it refers to */
void src_add_graph(Src *s, IrGraph *g);
/* the structure found: the graph a tail call jumps to (any, or only an
 * in-place join or loop), and the loop a graph is printed in */
IrGraph *src_jump_target(Src *s, IrNode *call);
IrGraph *src_jump_of(Src *s, IrNode *call);
IrGraph *src_owner_loop(Src *s, IrGraph *y);

/* ---- source_fold.c: known values, J folded ---- */

/* the value known for node x, or NULL */
Known *src_known(Src *s, const IrNode *x);
/* whether function value v can be printed as a name that means it,
 * adding its graph to the printout where it must be */
bool src_materialize(Src *s, Value v, int depth);
/* fold every J of a known function in the printout */
void src_fold(Src *s);

/* ---- source_names.c: identifiers ---- */

bool src_is_ident(const char *s);
/* raw as an identifier */
const char *src_sanitize(const char *raw);
/* a new temporary, t1, t2... */
const char *src_fresh(Src *s);
/* the builtins by object (name_builtins), and the name under which v
 * is a builtin, or NULL */
void src_name_builtins(Src *s);
const char *src_value_name(Src *s, Value v);
/* the name a primitive's or a builtin's call is written with */
const char *src_prim_text(Src *s, int p);
const char *src_builtin_text(Src *s, ObjBuiltin *b);
/* whether module m's globals are read as attributes of m, imported
 * under module_alias */
bool src_foreign(Src *s, ObjModule *m);
const char *src_module_alias(Src *s, ObjModule *m);
bool src_needs_name(Src *s, Info *in);
/* name every node, graph and parameter that needs one */
void src_name_all(Src *s);

/* ---- source_emit.c: the text ---- */

/* whether the printer writes primitive p other than as a call of its
 * own name */
bool src_spelled(int p);
/* the comments on captured values and the imports, before the defs */
void src_preamble(Src *s);
/* the defs and the root, after the preamble */
void src_emit_root(Src *s);

#endif
