/* scope.h: what the passes of passes.h share (internal to ir/): the
 * scope of a pass (the graphs it may change), walking graph references,
 * replacing nodes by others, and a few facts about nodes that several
 * passes need. */
#ifndef MIST_IR_SCOPE_H
#define MIST_IR_SCOPE_H

#include "ir/passes.h"

/* Call fn for each graph constant g refers to: in its schedule (pos = the
 * node's position), its output (pos = nnodes) and its parameters'
 * default values (pos = -1). */
typedef void (*IrRefFn)(void *ctx, IrGraph *ref, int pos);
void ir_each_ref(IrGraph *g, IrRefFn fn, void *ctx);

/* The graphs a pass changes: root and the graphs reachable from it that
 * belong to u (any graph when u is NULL) and have no compiled code,
 * ancestors before the graphs nested in them. */
typedef struct IrScope {
  int n, cap;
  IrGraph **graphs;
  NodeMap index;      /* graph -> position in graphs */
} IrScope;

void ir_scope_collect(IrScope *s, IrUnit *u, IrGraph *root);
bool ir_scope_has(const IrScope *s, const IrGraph *g);
int ir_graph_depth(const IrGraph *g);

/* Replacements: old node -> new node.  resolve follows chains. */
IrNode *ir_repl_resolve(const NodeMap *repl, IrNode *x);
/* Rewrite every input, output and default value in the scope's graphs
 * through repl; true when something changed. */
bool ir_scope_rewrite(IrScope *s, const NodeMap *repl);
/* Remove the nodes in `dead` from the scope's schedules. */
void ir_scope_unschedule(IrScope *s, const NodeMap *dead);
/* ir_forget_free_vars on every graph of the scope and of u (those
 * without compiled code). */
void ir_scope_forget_free_vars(IrScope *s, IrUnit *u);

/* Is x's value certainly not Unbound?  True for constants other than
 * Unbound and for the results of primitives that make a new value. */
bool ir_never_unbound(const IrNode *x);

/* The graph a call with callee f certainly runs: f a graph constant, or
 * a closure constant that captured nothing and has no default values
 * (autodiff's output calls its rules that way); NULL otherwise. */
IrGraph *ir_known_callee(const IrNode *f);

/* A constant of a plain kind: None, bool, int, float, str, or a tuple of
 * those.  Folding only takes and makes these. */
bool ir_plain_const(const IrNode *x);

#endif
