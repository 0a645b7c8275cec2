/* parse.h: source text to AST.
 *
 * The caller registers the file first (lang_file_add) and passes its
 * number, so every span points into it.  Syntax errors are raised as
 * "SyntaxError" with lang_raise_at, at the offending token, with
 * Python 3.11's wording where Mist has the same construct; the parse
 * then returns NULL.  When the error is that the input ended too early
 * (inside an open bracket, right after a line ending in ':' whose block
 * has not started, inside a string or after a backslash continued onto
 * a next line that never came), vm->err.incomplete is set, so a REPL
 * can read another line and try again.
 *
 * Limits that keep every later recursive pass safe: brackets nest at
 * most 200 deep, blocks 100, and expression trees are at most
 * PARSE_MAX_HEIGHT high (Ast.height). */
#ifndef MIST_PARSER_PARSE_H
#define MIST_PARSER_PARSE_H

#include "parser/ast.h"

#define PARSE_MAX_HEIGHT 3000

/* A MODULE node holding the file's statements, or NULL after raising. */
Ast *parse_module(MistVM *vm, int file_id, const char *src, size_t len);

/* The same for the statements of src[start, end), which starts a line
 * (numbered `line`) of the file: their spans are the file's. */
Ast *parse_module_part(MistVM *vm, int file_id, const char *src, size_t start, size_t end, int line);

/* One expression (a tuple display allowed, as after `return`), the whole
 * text; for `mist -e`-style evaluation and tests.  NULL after raising. */
Ast *parse_expression(MistVM *vm, int file_id, const char *src, size_t len);

#endif
