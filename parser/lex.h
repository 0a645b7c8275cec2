/* lex.h: the lexer, with Python's indentation layer.
 *
 * lex_next() turns source text into tokens one at a time, on demand, so
 * errors come out in source order.  Outside brackets a line break is a
 * NEWLINE token and changes of indentation are INDENT/DEDENT tokens;
 * blank and comment-only lines produce nothing.  On an error the lexer
 * raises a SyntaxError (lang_raise_at) and returns a TK_ERROR token; it
 * keeps returning TK_ERROR after that.
 */
#ifndef MIST_PARSER_LEX_H
#define MIST_PARSER_LEX_H

#include "lang/strbuf.h"
#include "lang/vm.h"

typedef enum {
#define TOK(e, s) TK_##e,
#define PUNCT(e, s) TK_##e,
#define KW(e, s) TK_##e,
#define RESERVED(e, s) TK_##e,
#include "parser/token.def"
  TK__COUNT
} TokKind;

#define LEX_MAX_BRACKETS 200   /* "too many nested parentheses" beyond */
#define LEX_MAX_INDENT 100     /* "too many levels of indentation" beyond */

/* A position in the source: byte offset, 1-based line and column (in
 * code points). */
typedef struct LexPos {
  size_t pos;
  int line, col;
} LexPos;

typedef struct Token {
  TokKind kind;
  Span span;            /* len: columns on its first line */
  size_t start, end;    /* byte offsets of the token's text */
  LexPos endpos;        /* just after the token */
  union {
    uint64_t uval;      /* INT: may exceed INT64_MAX, the parser decides */
    double fval;        /* FLOAT */
    ObjStr *str;        /* NAME: interned; STR: decoded contents */
  };
  /* STR and FSTR: where the contents between the quotes start and end
   * (FSTR contents are parsed by the parser) and whether r-prefixed. */
  LexPos body;
  size_t body_end;
  bool raw;
} Token;

typedef struct Lexer {
  MistVM *vm;
  int file;
  const char *src;
  size_t len;           /* lexing stops here */
  LexPos p;             /* the next character */
  bool sub;             /* an f-string expression: no NEWLINE/INDENT, no brackets needed */
  bool failed;
  bool at_line_start;
  bool emitted;         /* some token other than NEWLINE/INDENT/DEDENT since the last NEWLINE */
  int pending_dedents;
  int indents[LEX_MAX_INDENT + 1];
  int nindents;
  struct { char c; Span span; } brackets[LEX_MAX_BRACKETS];
  int nbrackets;
} Lexer;

/* Lex src[0..len) of file `file`. */
void lex_init(Lexer *L, MistVM *vm, int file, const char *src, size_t len);
/* Lex the expression inside an f-string: src[start.pos..end), as if in
 * brackets (line breaks are spaces). */
void lex_init_sub(Lexer *L, MistVM *vm, int file, const char *src, LexPos start, size_t end);

Token lex_next(Lexer *L);

/* "name", "(", "def"... for messages and dumps. */
const char *lex_token_name(TokKind k);

/* Decode the escapes of string contents src[at.pos..end) (raw: none)
 * into out.  False after raising, with the span of the bad escape. */
bool lex_decode(Lexer *L, LexPos at, size_t end, bool raw, StrBuf *out);

/* Move *p over one code point of L->src (line breaks counted). */
void lex_advance(const Lexer *L, LexPos *p);

/* A span of len columns at p. */
Span lex_span(const Lexer *L, LexPos p, int len);

/* Raise a SyntaxError at span; sets L->failed.  Returns false. */
bool lex_error(Lexer *L, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
