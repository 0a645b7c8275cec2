/* toplevel.h: a module's text cut into its top-level statements, without
 * parsing it (toplevel.c). */
#ifndef MIST_PARSER_TOPLEVEL_H
#define MIST_PARSER_TOPLEVEL_H

#include <stddef.h>

#include "lang/value.h"

typedef struct TopStmt {
  size_t start, end;   /* byte offsets: start is at the start of a line */
  int line;            /* start's line, 1-based */
  ObjStr *name;        /* what `def NAME(...)` or `NAME = ...` binds, else NULL */
} TopStmt;

/* The top-level statements of src in order, into *out (GC memory);
 * their number. */
int parse_top_statements(const char *src, size_t len, TopStmt **out);

#endif
