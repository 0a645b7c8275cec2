/* lower.h: turning a parsed module into IR graphs. */
#ifndef MIST_PARSER_LOWER_H
#define MIST_PARSER_LOWER_H

#include "ir/ir.h"
#include "parser/ast.h"

typedef struct LowerResult {
  IrUnit *unit;
  IrGraph *main;     /* the module's top-level code: a graph with no parameters */
  ObjStr **globals;  /* for a module loaded lazily: the names its code reads as globals */
  int nglobals;
} LowerResult;

/* Lower a module (AST_MODULE) into a new unit whose graphs read and
 * write the globals of `module`.  When echo is true and the module is a
 * single expression statement, the main graph returns that expression's
 * value (the REPL prints it); otherwise it returns None.  False with an
 * error raised for the few errors found before running (assignment to
 * an attribute, return outside a function...). */
bool lower_module(MistVM *vm, Ast *mod, ObjModule *module, bool echo, LowerResult *out);

/* The same for statement `statement` of a module loaded lazily
 * (ObjModule.lazy, api/mist.c): a name bound by an earlier statement
 * reads as it would in the whole module (the earlier statement is
 * lowered first through vm->lower_lazy when it is not yet).  *bound: the
 * node the module's environment binds name to after it, or NULL. */
bool lower_statement(MistVM *vm, Ast *mod, ObjModule *module, int statement, ObjStr *name, LowerResult *out,
                     IrNode **bound);

#endif
