/* infer.h: type and shape inference with specialisation per signature
 * (infer.c, the rules in infer_rules.c; docs/types.md).
 *
 * ir_infer(g, argument types) computes the type of every node of g and
 * of the graphs it calls (branches, loops, joins, closures it makes,
 * functions it calls directly), through switch (both branches joined,
 * or the one a known condition picks), loops and recursion (to a fixed
 * point) and calls of known closures (each callee specialised for its
 * argument types), and returns a specialised clone: a new unit holding a
 * copy of g and of each graph it reaches, one copy per specialisation,
 * with the type of every node of the copies kept in the result
 * (ir_infer_type).  Results are cached per graph and signature, with the
 * graph (its side slot IR_SIDE_INFER): they die with it.  Nothing here
 * runs the program or changes g.
 */
#ifndef MIST_IR_INFER_H
#define MIST_IR_INFER_H

#include "ir/map.h"
#include "ir/types.h"

typedef struct IrTyped {
  IrGraph *graph;     /* the specialised copy of the graph asked for */
  IrUnit *unit;       /* it and every specialised graph it reaches */
  IrType *ret;        /* the type of its result */
  NodeMap types;      /* each node of the copies -> its type (ir_infer_type) */
  NodeMap origin;     /* each parameter and application of the copies -> the
                         program's node it copies (their graphs: copy_of) */
} IrTyped;

/* Options: how to type global("name") reads, and free variables.  By default a global that
 * holds a function, builtin or module when inference runs has that
 * value's type and any other global is `any`; with module_code set (a
 * module's top-level graph, not run yet), a name that graph binds once
 * to a def is that def's closure. */
typedef struct IrInferOpts {
  IrGraph *module_code;
  /* the types of the free variables of the graph asked for, in its
   * fv order (ir_free_vars), as a closure of it holds them; NULL: any */
  IrType **fv;
  /* give up (an error) after typing this many nodes; 0: a bound that
   * only a runaway inference reaches.  The compiler gives less, so that
   * what it cannot type quickly runs in the interpreter. */
  long max_work;
} IrInferOpts;

/* The specialisation of g for nargs arguments of the given types.  NULL
 * with an error raised when the call cannot bind (wrong number of
 * arguments) or when inference proves that a node that certainly runs
 * fails: a shape error, with the interpreter's message and the node's
 * FILE:LINE:COL.  opts may be NULL. */
IrTyped *ir_infer(MistVM *vm, IrGraph *g, int nargs, IrType **args, const IrInferOpts *opts);

/* Forget the specialisations made so far: a global that held a function,
 * builtin or module, which inference typed by that value, was bound
 * again (graph mode's guard saw it), so they may be stale.  The next
 * ir_infer of any graph infers again. */
void ir_infer_forget(MistVM *vm);

/* The type of a value, as an argument or free variable of ir_infer: a
 * closure that captured values is typed by its graph and the types of
 * those values (ir_type_of_value types it `any`).  The same closure has
 * the same type until the next ir_infer returns. */
IrType *ir_infer_value_type(MistVM *vm, Value v);

/* The type of a closure of graph g over values of the types fvtypes
 * (one per free variable of g, in g's order), as a signature types it
 * (jit/run.c): the same type for the same graph and types, for as long
 * as the VM lives (signatures compare with ir_type_eq), and one that
 * names no closure object (so what inference makes of it holds for every
 * closure of that type).  ir_infer_closure_fv gives free variable i's
 * type of such a type, NULL for any other type. */
IrType *ir_infer_closure_sig(MistVM *vm, IrGraph *g, IrType **fvtypes);
IrType *ir_infer_closure_fv(const IrType *t, int i);

/* The type of a node (parameter, application or constant use) of a
 * graph of result t; NULL for any other node. */
IrType *ir_infer_type(const IrTyped *t, const IrNode *n);

/* The result's graphs in text form with a type on every parameter, node
 * and return line (docs/types.md); ir_read_typed reads it back. */
void ir_print_typed(MistVM *vm, const IrTyped *t, StrBuf *out);

/* A signature as emit-llvm takes it (`int`, `float`, `f32[64,784]`...):
 * one type of docs/types.md.  NULL with a ValueError raised. */
IrType *ir_parse_argtype(MistVM *vm, const char *text);

#endif
