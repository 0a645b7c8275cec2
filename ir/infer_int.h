/* infer_int.h: what infer.c (the fixed point and the specialised
 * copies) and infer_rules.c (one type rule per primitive and per typed
 * builtin) share. */
#ifndef MIST_IR_INFER_INT_H
#define MIST_IR_INFER_INT_H

#include "ir/infer.h"
#include "ir/passes.h"

/* One specialisation: graph g called with argument types args, its
 * free variables those of the context ctx it was made in (a
 * specialisation of an enclosing graph; NULL when g captures nothing or
 * its context is not known, its free variables then `any`). */
typedef struct InferSpec {
  IrGraph *g;        /* NULL for the context of a closure value: types
                        holds the types of the values it captured */
  struct InferSpec *ctx;
  int nargs;
  IrType **args;
  IrType *ret;
  NodeMap types;     /* g's parameters and applications: their types */
  NodeMap calls;     /* an application calling one specialisation: it */
  NodeMap errors;    /* an application proven to fail: its InferError */
  NodeMap unsafe;    /* an application that may fail (its rule could not tell) */
  bool wide;         /* args joined over several calls */
  bool reached;      /* in the specialised copy */
  IrGraph *copy;
  NodeMap map;       /* g's nodes to the copy's */
  ObjFunc *value;    /* a closure value's context: the closure */
  NodeMap readers;   /* the specialisations whose analysis read its types
                        or its result: analysed again when they change */
  bool dirty;        /* to be analysed (again) */
} InferSpec;

typedef struct InferError {
  const char *kind;
  ObjStr *message;
} InferError;

typedef struct InferSession InferSession;

/* What a rule sees: the session, the specialisation and the node it
 * types, and the types of the node's inputs (a[0] the callee's). */
typedef struct InferCx {
  InferSession *s;
  InferSpec *spec;
  IrNode *node;         /* NULL in a call made by a rule (bp_call's of bp) */
  MistVM *vm;
  /* set by the rule when the operation cannot fail (an error proven
   * later is certain only after such operations): false by default */
  bool safe;
} InferCx;

/* A primitive's rule: args are the types of its n arguments. */
typedef IrType *(*InferRule)(InferCx *cx, IrType **args, int n);

/* The rule of each primitive (infer_rules.c), indexed by IrPrim, and
 * whether it takes None (a `T?` argument is then tried as None and as
 * T, the results joined) or raises on it (given T alone). */
extern const InferRule ir_infer_prim_rules[IR_NPRIMS];
extern const bool ir_infer_prim_takes_none[IR_NPRIMS];

/* The type of a call of builtin b: the rule of its op (ObjBuiltin.op,
 * builtin_ops.def's type column), `any` when it has none. */
IrType *ir_infer_builtin(InferCx *cx, ObjBuiltin *b, IrType **args, int n, int nkw,
                         ObjStr **kwnames, IrType **kwtypes);

/* ---- what infer.c offers the rules ---- */

/* Call a value of type f with the argument types (keywords by name,
 * nkw of them, after the positional ones): the result's type. */
IrType *ir_infer_call(InferCx *cx, IrType *f, int nargs, IrType **args, int nkw, ObjStr **kwnames,
                      IrType **kwtypes);
/* Record that the node certainly fails with this error, if it runs; the
 * rule then returns never.  The message is the interpreter's: the rule
 * calls the interpreter's own check, which raised it in vm. */
IrType *ir_infer_fail(InferCx *cx);
/* The type of a value met while inferring (a global's, a transform's):
 * a closure that captured values has a context holding their types. */
IrType *ir_infer_value(InferCx *cx, Value v);
/* The closure a closure type stands for when it is one object (a
 * closure value, or the one closure kept of a graph that captures
 * nothing); NULL otherwise. */
ObjFunc *ir_infer_closure_object(InferCx *cx, const IrType *f);
/* J (kind IR_P_J), F (IR_P_F) or jmask (IR_P_JMASK, with mask and
 * floats) of v, made by autodiff once per value; false when it fails. */
bool ir_infer_transform(InferCx *cx, int kind, Value v, int64_t mask, bool floats, Value *out);
/* The type of global `name` of the node's module. */
IrType *ir_infer_global(InferCx *cx, ObjStr *name);

#endif
