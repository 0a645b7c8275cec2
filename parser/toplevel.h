/* toplevel.h: a module's text cut into its top-level statements, without
 * parsing it (toplevel.c). */
#ifndef MIST_PARSER_TOPLEVEL_H
#define MIST_PARSER_TOPLEVEL_H

#include <stddef.h>

#include "lang/vm.h"

typedef struct TopStmt {
  size_t start, end;   /* byte offsets: start is at the start of a line */
  int line;            /* start's line, 1-based */
  ObjStr *name;        /* what `def NAME(...)` or `NAME = ...` binds, else NULL */
} TopStmt;

/* The top-level statements of src in order, into *out (GC memory);
 * their number.  The names are interned, as the lexer's. */
int parse_top_statements(MistVM *vm, const char *src, size_t len, TopStmt **out);

#endif
