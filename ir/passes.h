/* passes.h: IR-to-IR passes.  Each pass is one file of ir/ and changes
 * graphs in place; run the verifier after it (debug builds do, in
 * ir_optimize).
 *
 * The passes that take a unit work on g and on the graphs of u that g
 * reaches through graph constants (its nested graphs, the branches,
 * loops and joins it calls, the functions it calls directly).  Graphs of
 * other units and graphs the interpreter has already compiled (code set)
 * are read but never changed, so run the passes before evaluating: a
 * pass can change a graph's free variables, which compiled code that
 * makes closures of it has fixed.  Graphs of u that g does not reach are
 * not updated and may be left referring to nodes a pass removed:
 * ir_prune_unit drops those (ir_optimize does it for you).
 *
 * Every pass preserves what the program does, including the order of
 * its effects and its errors: a node is dropped or folded only when it
 * cannot fail and has no effect, or when an identical earlier node has
 * already computed its value.  Each returns true when it changed
 * something. */
#ifndef MIST_IR_PASSES_H
#define MIST_IR_PASSES_H

#include "ir/ir.h"
#include "ir/map.h"

/* ---- the pipeline ---- */

/* inline, simplify, cse and dce in turn on g (as above) until nothing
 * changes (a bounded number of rounds), with ir_prune_unit(u, g) after
 * each round.  Without NDEBUG, after each pass that changed something,
 * the graphs g reaches that it changed, and the graphs nested in those,
 * are verified (ir_verify_graph); false, with the verifier's error
 * raised, when one fails.  Run it before the unit's graphs are
 * evaluated. */
bool ir_optimize(MistVM *vm, IrUnit *u, IrGraph *g);

/* ir_optimize on each top-level graph of u (those without a parent, or
 * whose parent is in another unit). */
bool ir_optimize_unit(MistVM *vm, IrUnit *u);

/* ---- the passes ---- */

/* Inlining (inline.c): a call @h(args) of a graph constant, or
 * switch(c, @a, @b)() with c a constant, is replaced by a copy of the
 * body of h (or of the branch chosen) with its parameters bound to the
 * arguments; the graphs nested in h are cloned along.  Only graphs with
 * no default values, called with as many arguments as parameters, not
 * reachable from themselves (recursion, loops), with no autodiff
 * transform (jsource) nested in them, whose free variables are
 * in scope at the call and computed before it, and small (at most 30
 * nodes with their nested graphs and no loop among those, or 400 when
 * this is the only reference to h in u).  Copies keep their source
 * spans and names; an error in an inlined function reports the same
 * place and message, with one traceback entry fewer.  New graphs are
 * added to u. */
bool ir_inline(MistVM *vm, IrUnit *u, IrGraph *g);

/* Simplification (simplify.c), to a fixpoint: tuples built and indexed
 * at once, unpacking a tuple of the right length, folding of arithmetic,
 * comparisons and truthiness of constants (when the operation succeeds:
 * `1 / 0` is left to fail where it ran), x * 1 and the like only where x
 * is known to be an int or a float (from constants through arithmetic,
 * and into the parameters of a loop or join that every call passes the
 * same kind; float_arg(x) is a float), switch on a constant, or on a comparison
 * inside a branch that a switch on the same comparison chose (a
 * comparison's truthiness cannot change), check_bound of a value that
 * cannot be Unbound, and the sensitivity algebra of autodiff (gadd(None,
 * x) is x, env_get of a make_env with constant keys is the value under
 * the key, the sensitivity of an int operand is None, ...).  u may be NULL (constants are then made in
 * a scratch unit and every graph g reaches counts). */
bool ir_simplify(MistVM *vm, IrUnit *u, IrGraph *g);

/* Common subexpression elimination (cse.c): a later application of a
 * pure primitive identical (callee and inputs; constants by value) to an
 * earlier one is replaced by it: an earlier one of the same graph, or of
 * an enclosing graph when it is scheduled before any closure of the
 * nested graph can be made.  Never moves a node earlier.  switch,
 * make_list and make_dict are left alone (a list display is a new
 * object); global and getattr only within one graph with no effect in
 * between.  u may be NULL as for ir_simplify. */
bool ir_cse(MistVM *vm, IrUnit *u, IrGraph *g);

/* Dead code elimination (dce.c): drop scheduled applications whose
 * result nothing uses and which cannot fail or act: make_tuple,
 * make_list, make_dict with str constant keys, slice of int or None
 * constants, getitem of a tuple at a constant index in range, unpack of
 * a tuple of the right length, len of a tuple or list built in place,
 * is/is_not, switch or not on a constant or a bool, check_bound of a
 * value that cannot be Unbound, the sensitivity primitives gadd, env_get
 * and env_set (make_env with distinct int constant keys), and calls of graph constants whose bodies are made of
 * such nodes only.  Anything else may raise, print or bind a global, so
 * it stays.  ir_dce works on g's own schedule with uses counted over the
 * graphs g reaches; ir_dce_unit on every graph of u, counting uses in
 * all of them; ir_dce_scope on g and the graphs of u it reaches (u may
 * be NULL). */
void ir_dce(IrGraph *g);
void ir_dce_unit(IrUnit *u);
bool ir_dce_scope(IrUnit *u, IrGraph *g);

/* Drop from u's list the graphs no longer reachable through graph
 * constants from u's top-level graphs (no parent, or a parent in another
 * unit) or from keep (may be NULL).  They are garbage: inlining and
 * folding leave the branches and functions they replaced behind. */
void ir_prune_unit(IrUnit *u, IrGraph *keep);

/* Forget g's cached free variables (ir_free_vars computes them again). */
void ir_forget_free_vars(IrGraph *g);

/* ---- cloning (clone.c) ---- */

/* A copy of graph h with parent new_parent, added to u, and copies of
 * every graph nested in h that h's body reaches (their parents remapped
 * to the copies).  m maps old to new: on entry it may already map nodes
 * h uses (its free variables, say) to their replacements; on return it
 * also maps h's parameters and nodes, and the cloned graphs, to their
 * copies.  Nodes keep their spans and names; graphs get unique names in
 * u (new_parent's name and the old name's last part) and keep their
 * display names, flags, module and span. */
IrGraph *ir_clone_graph(IrUnit *u, IrGraph *h, IrGraph *new_parent, NodeMap *m);

/* h's body copied into graph `into`: copies of h's applications are
 * appended to into's schedule (inputs through m, which should map h's
 * parameters), the graphs nested in h that the body reaches are cloned
 * with `into` in the place of h, and the copy of h's output is returned
 * (a node of `into`, or what m maps it to, or a node h uses unchanged).
 * This is inlining without the moving: the caller puts the new nodes
 * where the call was.  `at` (NULL: none) is the call, which the copies
 * of the nodes run in h's frame remember (IrNode.inlined). */
IrNode *ir_clone_body(IrUnit *u, IrGraph *h, IrGraph *into, NodeMap *m, const IrInlined *at);

#endif
