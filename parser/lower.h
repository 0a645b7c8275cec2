/* lower.h: turning a parsed module into IR graphs. */
#ifndef MIST_PARSER_LOWER_H
#define MIST_PARSER_LOWER_H

#include "ir/ir.h"
#include "parser/ast.h"

typedef struct LowerResult {
  IrUnit *unit;
  IrGraph *main;     /* the module's top-level code: a graph with no parameters */
} LowerResult;

/* Lower a module (AST_MODULE) into a new unit whose graphs read and
 * write the globals of `module`.  When echo is true and the module is a
 * single expression statement, the main graph returns that expression's
 * value (the REPL prints it); otherwise it returns None.  False with an
 * error raised for the few errors found before running (assignment to
 * an attribute, return outside a function...). */
bool lower_module(MistVM *vm, Ast *mod, ObjModule *module, bool echo, LowerResult *out);

#endif
