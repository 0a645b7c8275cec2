/* read.c: the IR text parser, the inverse of print.c (docs/ir.md).
 *
 * A hand-written lexer turns the text into tokens, one lookahead token
 * at a time; trailing `# L:C+N` comments become span tokens and the
 * `# file NAME` line before the first graph names the source file the
 * spans refer to.  The parser is recursive descent over the grammar of
 * docs/ir.md and works in two passes, because names resolve over the
 * whole text (a graph may be printed after the graphs that use it, and
 * a nested graph's nodes may use nodes printed later).  The first pass
 * creates every graph, parameter and application, with constant inputs
 * made on the spot and each reference to a `%node` or `@graph` written
 * down with the slot it fills; the second pass resolves parents and
 * those slots.  Nothing is checked beyond syntax and names: ir_verify
 * judges the result.  Every failure raises a SyntaxError whose span is
 * the line and column in the IR text (registered as a source file only
 * when an error needs it), and no input may crash the reader: nested
 * tuple constants are the only recursion, and their depth is bounded.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/types.h"
#include "lang/gc.h"

enum { MAX_TUPLE_DEPTH = 64 };

typedef enum {
  T_EOF, T_NL, T_NAME, T_GRAPH, T_NODE, T_BUILTIN, T_INT, T_FLOAT, T_STR,
  T_SPAN, T_FILE, T_LPAREN, T_RPAREN, T_COMMA, T_LBRACE, T_RBRACE,
  T_EQ, T_COLON,
} TokKind;

typedef struct Tok {
  TokKind kind;
  const char *src;      /* the token's text, sigil included */
  size_t srclen;
  const char *s;        /* T_NAME, T_GRAPH, T_NODE, T_BUILTIN, T_FILE: the name */
  size_t n;
  int line, col, width; /* where it is in the IR text, for errors */
  int64_t i;            /* T_INT */
  double f;             /* T_FLOAT */
  ObjStr *str;          /* T_STR */
  Span span;            /* T_SPAN */
} Tok;

/* A name table: open addressing over names that point into the text. */
typedef struct Entry {
  const char *key;
  size_t len;
  void *val;
} Entry;

typedef struct Table {
  Entry *e;
  size_t cap, n;
} Table;

/* A reference to be resolved in the second pass. */
typedef struct Ref {
  bool graph;           /* @name (becomes a graph constant), else %name */
  Tok tok;
  IrNode **slot;
  Span span;            /* for the graph constant node */
} Ref;

typedef struct PGraph {
  IrGraph *g;
  bool has_parent;
  Tok parent;
  int pidx;             /* the parent's index in Reader.pgs, -1 for none */
  int state;            /* cycle search: 0 new, 1 on the path, 2 done */
  ObjStr *display;      /* once known */
} PGraph;

/* A type annotation (`: TYPE`), parsed again once every graph is known. */
typedef struct PType {
  const char *text;
  size_t len;
  int line, col;
  IrNode **slot;        /* the node it types, once resolved */
} PType;

typedef struct Reader {
  MistVM *vm;
  void (*put)(void *ud, IrNode *n, IrType *t);   /* ir_read_typed's sink */
  void *ud;
  PType *types;
  int ntypes, captypes;
  IrUnit *u;
  const char *name;
  const char *text, *p, *end;
  int line, col;
  bool bol;             /* no token on this line yet */
  bool seen_graph, seen_file;
  int text_file;        /* the IR text's own file id, -1 until an error needs it */
  int src_file;         /* the file named by `# file`, or -1 */
  Tok tok;
  Table graphs, nodes;
  Ref *refs;
  int nrefs, caprefs;
  PGraph *pgs;
  int npgs, cappgs;
} Reader;

/* An argument as parsed, made into a node once the line's span is known. */
typedef enum { A_VALUE, A_PRIM, A_NODE, A_GRAPH } ArgKind;

typedef struct Arg {
  ArgKind kind;
  Value v;
  int prim;
  Tok tok;
} Arg;

#define TRY(x) do { if (!(x)) return false; } while (0)

/* ---- errors ---- */

/* Length of the UTF-8 character at s (1 to 4), or 0 for a bad byte. */
static size_t utf8_len(const char *s, size_t avail) {
  for (size_t m = 1; m <= 4 && m <= avail; m++)
    if (lang_utf8_valid(s, m)) return m;
  return 0;
}

static int text_file(Reader *r) {
  if (r->text_file >= 0) return r->text_file;
  const char *path = r->name ? r->name : "<ir>";
  size_t len = (size_t)(r->end - r->text);
  if (lang_utf8_valid(r->text, len)) {
    r->text_file = lang_file_add(r->vm, path, r->text, len);
  } else {
    /* a copy with bad bytes replaced, so the error can quote the line */
    char *copy = lang_alloc_atomic(len + 1);
    size_t i = 0;
    while (i < len) {
      size_t k = utf8_len(r->text + i, len - i);
      if (k) {
        memcpy(copy + i, r->text + i, k);
        i += k;
      } else {
        copy[i++] = '?';
      }
    }
    r->text_file = lang_file_add(r->vm, path, copy, len);
  }
  return r->text_file;
}

static bool verr_at(Reader *r, int line, int col, int width, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *buf = lang_alloc_atomic(n > 0 ? (size_t)n + 1 : 1);
  if (n > 0) vsnprintf(buf, (size_t)n + 1, fmt, ap2);
  else buf[0] = '\0';
  va_end(ap2);
  Span s = {text_file(r), line, col, width};
  return lang_raise_at(r->vm, s, "SyntaxError", "%s", buf);
}

static bool err_at(Reader *r, int line, int col, int width, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));
static bool err_at(Reader *r, int line, int col, int width, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verr_at(r, line, col, width, fmt, ap);
  va_end(ap);
  return false;
}

static bool err_tok(Reader *r, const Tok *t, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static bool err_tok(Reader *r, const Tok *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verr_at(r, t->line, t->col, t->width, fmt, ap);
  va_end(ap);
  return false;
}

/* "expected X, found Y" at the current token. */
static bool unexpected(Reader *r, const char *what) {
  Tok *t = &r->tok;
  switch (t->kind) {
  case T_EOF: return err_tok(r, t, "expected %s, found end of input", what);
  case T_NL: return err_tok(r, t, "expected %s, found end of line", what);
  case T_STR: return err_tok(r, t, "expected %s, found a string", what);
  case T_SPAN: return err_tok(r, t, "expected %s, found a span comment", what);
  default:
    return err_tok(r, t, "expected %s, found '%.*s'", what, (int)t->srclen, t->src);
  }
}

/* ---- names ---- */

static uint64_t hash_name(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static Entry *table_slot(Table *t, const char *key, size_t len) {
  size_t mask = t->cap - 1;
  for (size_t i = hash_name(key, len) & mask;; i = (i + 1) & mask) {
    Entry *e = &t->e[i];
    if (!e->key || (e->len == len && memcmp(e->key, key, len) == 0)) return e;
  }
}

static void *table_get(Table *t, const char *key, size_t len) {
  if (!t->cap) return NULL;
  return table_slot(t, key, len)->val;
}

static void table_put(Table *t, const char *key, size_t len, void *val) {
  if (2 * (t->n + 1) > t->cap) {
    Table bigger = {lang_alloc((t->cap ? 2 * t->cap : 64) * sizeof(Entry)),
                    t->cap ? 2 * t->cap : 64, 0};
    for (size_t i = 0; i < t->cap; i++)
      if (t->e[i].key) {
        *table_slot(&bigger, t->e[i].key, t->e[i].len) = t->e[i];
        bigger.n++;
      }
    *t = bigger;
  }
  Entry *e = table_slot(t, key, len);
  if (!e->key) t->n++;
  e->key = key;
  e->len = len;
  e->val = val;
}

static bool all_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/* The source name of a node printed as %name: the printer adds .2, .3
 * to repeated names and numbers unnamed nodes, so both are undone here
 * (NULL for a number). */
static ObjStr *source_name(const char *s, size_t n) {
  for (;;) {
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k == n || k < 2 || s[k - 1] != '.') break;
    n = k - 1;
  }
  if (n == 0 || all_digits(s, n)) return NULL;
  return lang_str_new(s, n);
}

/* ---- the lexer ---- */

static bool is_ident_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.';
}

/* Names after @, % and $ also take <> (as in "<lambda>") and non-ASCII
 * letters (the text is valid UTF-8 by then). */
static bool is_sigil_name_char(unsigned char c) {
  return is_ident_char(c) || c == '<' || c == '>' || c >= 0x80;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* Move past one byte on the current line; columns count characters. */
static void step(Reader *r) {
  if (((unsigned char)*r->p & 0xc0) != 0x80) r->col++;
  r->p++;
}

static void skip_to_eol(Reader *r) {
  while (r->p < r->end && *r->p != '\n') step(r);
}

/* A non-negative decimal that fits an int32. */
static bool scan_uint(const char **q, const char *end, int32_t *out) {
  const char *p = *q;
  if (p >= end || !is_digit(*p)) return false;
  int64_t v = 0;
  while (p < end && is_digit(*p)) {
    v = v * 10 + (*p - '0');
    if (v > INT32_MAX) return false;
    p++;
  }
  *out = (int32_t)v;
  *q = p;
  return true;
}

/* After a trailing '#': is the rest of the line "L:C" or "L:C+N"? */
static bool scan_span(Reader *r, Span *s) {
  const char *q = r->p + 1, *end = r->end;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  int32_t line, col, len = 0;
  if (!scan_uint(&q, end, &line)) return false;
  if (q >= end || *q != ':') return false;
  q++;
  if (!scan_uint(&q, end, &col)) return false;
  if (q < end && *q == '+') {
    q++;
    if (!scan_uint(&q, end, &len)) return false;
  }
  while (q < end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
  if (q < end && *q != '\n') return false;
  s->file = r->src_file;
  s->line = line;
  s->col = col;
  s->len = len;
  return true;
}

/* A whole-line comment: `# file NAME` before the first graph is the
 * header (returned as T_FILE), anything else is skipped. */
static bool line_comment(Reader *r, Tok *t) {
  const char *q = r->p + 1, *end = r->end;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  bool header = !r->seen_graph && end - q > 5 && memcmp(q, "file", 4) == 0 &&
                (q[4] == ' ' || q[4] == '\t');
  if (!header) return false;
  q += 5;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  const char *eol = q;
  while (eol < end && *eol != '\n') eol++;
  const char *e = eol;
  while (e > q && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  t->kind = T_FILE;
  t->s = q;
  t->n = (size_t)(e - q);
  t->src = r->p;
  t->srclen = (size_t)(eol - r->p);
  t->line = r->line;
  t->col = r->col;
  t->width = 1;
  skip_to_eol(r);
  return true;
}

static bool lex_string(Reader *r, Tok *t) {
  StrBuf sb;
  sb_init(&sb);
  step(r);   /* the opening quote */
  for (;;) {
    if (r->p >= r->end || *r->p == '\n')
      return err_at(r, t->line, t->col, 1, "unterminated string");
    char c = *r->p;
    if (c == '"') {
      step(r);
      break;
    }
    if (c != '\\') {
      sb_addc(&sb, c);
      step(r);
      continue;
    }
    int ecol = r->col;
    step(r);
    if (r->p >= r->end) return err_at(r, t->line, t->col, 1, "unterminated string");
    char e = *r->p;
    switch (e) {
    case 'n': sb_addc(&sb, '\n'); step(r); break;
    case 't': sb_addc(&sb, '\t'); step(r); break;
    case 'r': sb_addc(&sb, '\r'); step(r); break;
    case '\\': sb_addc(&sb, '\\'); step(r); break;
    case '"': sb_addc(&sb, '"'); step(r); break;
    case 'x': {
      int v = 0;
      for (int k = 1; k <= 2; k++) {
        char h = r->p + k < r->end ? r->p[k] : 0;
        int d = is_digit(h) ? h - '0'
              : (h >= 'a' && h <= 'f') ? h - 'a' + 10
              : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
        if (d < 0) return err_at(r, r->line, ecol, 2, "bad \\x escape in string");
        v = v * 16 + d;
      }
      sb_addc(&sb, (char)v);
      step(r);
      step(r);
      step(r);
      break;
    }
    default:
      if (e == '\n' || ((unsigned char)e & 0x80))
        return err_at(r, r->line, ecol, 1, "bad escape in string");
      return err_at(r, r->line, ecol, 2, "bad escape '\\%c' in string", e);
    }
  }
  if (!lang_utf8_valid(sb.data, sb.len))
    return err_at(r, t->line, t->col, 1, "string constant is not valid UTF-8");
  t->kind = T_STR;
  t->str = lang_str_new(sb.data, sb.len);
  return true;
}

/* INT in decimal, FLOAT as repr writes it (1.0, 1e-05, inf, -inf, nan). */
static bool lex_number(Reader *r, Tok *t) {
  const char *start = r->p;
  const char *body = *start == '-' ? start + 1 : start, *q = body;
  bool numeric = is_digit(*body);   /* not inf or nan: an exponent may have a sign */
  while (q < r->end) {
    char c = *q;
    if (is_ident_char((unsigned char)c) ||
        (numeric && (c == '+' || c == '-') && (q[-1] == 'e' || q[-1] == 'E')))
      q++;
    else
      break;
  }
  while (r->p < q) step(r);
  size_t n = (size_t)(q - start);
  size_t bn = (size_t)(q - body);
  if ((bn == 3 && memcmp(body, "inf", 3) == 0) || (bn == 3 && memcmp(body, "nan", 3) == 0)) {
    double v = body[0] == 'i' ? INFINITY : NAN;
    t->kind = T_FLOAT;
    t->f = *start == '-' ? -v : v;
    return true;
  }
  char *copy = lang_strndup(start, n);
  if (bn > 0 && all_digits(body, bn)) {
    errno = 0;
    char *e;
    long long v = strtoll(copy, &e, 10);
    if (errno == ERANGE) return err_tok(r, t, "integer constant %s out of range", copy);
    t->kind = T_INT;
    t->i = (int64_t)v;
    return true;
  }
  /* digits [. digits] [e [+-] digits]: checked here, converted by strtod */
  const char *p = body, *end = q;
  size_t nd = 0;
  while (p < end && is_digit(*p)) p++, nd++;
  if (p < end && *p == '.') {
    p++;
    while (p < end && is_digit(*p)) p++, nd++;
  }
  bool ok = nd > 0;
  if (ok && p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    ok = p < end && is_digit(*p);
    while (p < end && is_digit(*p)) p++;
  }
  if (!ok || p != end) return err_tok(r, t, "bad number '%s'", copy);
  t->kind = T_FLOAT;
  t->f = strtod(copy, NULL);
  return true;
}

static bool lex(Reader *r) {
  Tok *t = &r->tok;
  for (;;) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' ||
                             *r->p == '\f' || *r->p == '\v'))
      step(r);
    if (r->p < r->end && *r->p == '#') {
      if (r->bol) {
        if (line_comment(r, t)) return true;
        skip_to_eol(r);
        continue;
      }
      Span s;
      if (scan_span(r, &s)) {
        t->kind = T_SPAN;
        t->span = s;
        t->src = r->p;
        t->line = r->line;
        t->col = r->col;
        t->width = 1;
        skip_to_eol(r);
        t->srclen = (size_t)(r->p - t->src);
        return true;
      }
      skip_to_eol(r);
      continue;
    }
    break;
  }
  memset(t, 0, sizeof *t);
  t->src = r->p;
  t->line = r->line;
  t->col = r->col;
  t->width = 1;
  if (r->p >= r->end) {
    t->kind = T_EOF;
    return true;
  }
  unsigned char c = (unsigned char)*r->p;
  if (c == '\n') {
    t->kind = T_NL;
    t->srclen = 1;
    r->p++;
    r->line++;
    r->col = 1;
    r->bol = true;
    return true;
  }
  r->bol = false;
  switch (c) {
  case '(': t->kind = T_LPAREN; step(r); break;
  case ')': t->kind = T_RPAREN; step(r); break;
  case ',': t->kind = T_COMMA; step(r); break;
  case '{': t->kind = T_LBRACE; step(r); break;
  case '}': t->kind = T_RBRACE; step(r); break;
  case '=': t->kind = T_EQ; step(r); break;
  case ':': t->kind = T_COLON; step(r); break;
  case '"': TRY(lex_string(r, t)); break;
  case '@': case '%': case '$': {
    step(r);
    const char *s = r->p;
    while (r->p < r->end && is_sigil_name_char((unsigned char)*r->p)) step(r);
    if (r->p == s) return err_tok(r, t, "expected a name after '%c'", c);
    t->kind = c == '@' ? T_GRAPH : c == '%' ? T_NODE : T_BUILTIN;
    t->s = s;
    t->n = (size_t)(r->p - s);
    break;
  }
  default:
    if (is_digit(c) || (c == '-' && r->end - r->p > 1 &&
                        (is_digit(r->p[1]) || r->p[1] == 'i' || r->p[1] == 'n'))) {
      TRY(lex_number(r, t));
      break;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      const char *s = r->p;
      while (r->p < r->end && is_ident_char((unsigned char)*r->p)) step(r);
      t->kind = T_NAME;
      t->s = s;
      t->n = (size_t)(r->p - s);
      break;
    }
    if (c > 0x20 && c < 0x7f) return err_tok(r, t, "unexpected character '%c'", c);
    if (c >= 0x80) {
      size_t k = 1;
      while (r->p + k < r->end && ((unsigned char)r->p[k] & 0xc0) == 0x80 && k < 4) k++;
      return err_tok(r, t, "unexpected character '%.*s'", (int)k, r->p);
    }
    return err_tok(r, t, "unexpected byte 0x%02x", c);
  }
  t->srclen = (size_t)(r->p - t->src);
  if (t->kind != T_STR) {
    size_t w = t->srclen;
    t->width = (int)(w < 1000 ? (w ? w : 1) : 1000);
  }
  return true;
}

static bool is_kw(Reader *r, const char *kw) {
  return r->tok.kind == T_NAME && r->tok.n == strlen(kw) && memcmp(r->tok.s, kw, r->tok.n) == 0;
}

static bool expect(Reader *r, TokKind kind, const char *what) {
  if (r->tok.kind != kind) return unexpected(r, what);
  return lex(r);
}

/* End of a line: a newline, or the end of the text (reported later). */
static bool expect_eol(Reader *r) {
  if (r->tok.kind == T_EOF) return true;
  return expect(r, T_NL, "end of line");
}

/* ---- type annotations ---- */

/* Any graph, while the graphs are not all known: the annotation is
 * parsed for its extent and syntax now, and again in the second pass. */
static IrGraph *some_graph(void *ud, const char *name, size_t n) {
  (void)ud, (void)name, (void)n;
  return ir_graph_alloc();   /* one each: `@a | @b` joins two */
}

static IrGraph *known_graph(void *ud, const char *name, size_t n);

/* After ':' (the current token): a type, for the node in *slot.  The
 * type's text ends the line, before a span comment. */
static bool read_type(Reader *r, IrNode **slot) {
  const char *start = r->p, *eol = r->p;
  while (eol < r->end && *eol != '\n') eol++;
  size_t used;
  const char *err;
  if (!ir_type_parse(r->vm, start, (size_t)(eol - start), &used, &err, some_graph, r)) {
    int col = r->col;
    for (const char *q = start; q < start + used; q++)
      if (((unsigned char)*q & 0xc0) != 0x80) col++;
    return err_at(r, r->line, col, 1, "%s", err);
  }
  if (r->ntypes == r->captypes) {
    r->captypes = r->captypes ? 2 * r->captypes : 16;
    r->types = lang_realloc(r->types, (size_t)r->captypes * sizeof *r->types);
  }
  PType *pt = &r->types[r->ntypes++];
  pt->text = start;
  pt->len = used;
  pt->line = r->line;
  pt->col = r->col;
  pt->slot = slot;
  while (r->p < start + used) step(r);
  return lex(r);
}

/* ---- constants ---- */

static Value prim_const_value(int p) {
  ObjBuiltin *b = lang_builtin_new(ir_prims[p].name, NULL, -1, -1);
  b->prim = p;
  return v_obj(b);
}

static bool lookup_builtin(Reader *r, const Tok *t, Value *out) {
  ObjStr *key = lang_str_new(t->s, t->n);
  if (r->vm->builtins && lang_dict_get(r->vm->builtins, key, out)) return true;
  return err_tok(r, t, "unknown builtin $%.*s", (int)t->n, t->s);
}

/* `prim.NAME` */
static bool is_prim_ref(const Tok *t) {
  return t->kind == T_NAME && t->n > 5 && memcmp(t->s, "prim.", 5) == 0;
}

static bool prim_named(Reader *r, const Tok *t, const char *s, size_t n, int *out) {
  *out = ir_prim_lookup(s, n);
  if (*out < 0) return err_tok(r, t, "unknown primitive '%.*s'", (int)n, s);
  return true;
}

/* A bare name that is a constant: None, True, False, Unbound, inf, nan,
 * Ellipsis. */
static bool name_const(const Tok *t, Value *out) {
  if (t->kind != T_NAME) return false;
#define IS(w) (t->n == sizeof(w) - 1 && memcmp(t->s, w, t->n) == 0)
  if (IS("None")) *out = v_none();
  else if (IS("True")) *out = v_bool(true);
  else if (IS("False")) *out = v_bool(false);
  else if (IS("Unbound")) *out = v_unbound();
  else if (IS("inf")) *out = v_float(INFINITY);
  else if (IS("nan")) *out = v_float(NAN);
  else if (IS("Ellipsis")) *out = lang_ellipsis();
  else return false;
#undef IS
  return true;
}

/* const -> INT | FLOAT | STRING | 'None' | 'True' | 'False' | 'Unbound'
 *        | '(' ')' | '(' const ',' ')' | '(' const { ',' const } ')'
 * (tuples may also hold builtins and primitives, which print.c writes) */
static bool parse_const(Reader *r, int depth, Value *out) {
  Tok *t = &r->tok;
  switch (t->kind) {
  case T_INT: *out = v_int(t->i); return lex(r);
  case T_FLOAT: *out = v_float(t->f); return lex(r);
  case T_STR: *out = v_obj(t->str); return lex(r);
  case T_BUILTIN: TRY(lookup_builtin(r, t, out)); return lex(r);
  case T_NAME:
    if (name_const(t, out)) return lex(r);
    if (is_prim_ref(t)) {
      int p;
      TRY(prim_named(r, t, t->s + 5, t->n - 5, &p));
      *out = prim_const_value(p);
      return lex(r);
    }
    return err_tok(r, t, "unknown name '%.*s'", (int)t->n, t->s);
  case T_GRAPH:
    return err_tok(r, t, "a tuple constant cannot hold the graph @%.*s", (int)t->n, t->s);
  case T_NODE:
    return err_tok(r, t, "a tuple constant cannot hold the node %%%.*s", (int)t->n, t->s);
  case T_LPAREN: break;
  default: return unexpected(r, "a constant");
  }
  if (depth >= MAX_TUPLE_DEPTH) return err_tok(r, t, "tuple constant nested too deeply");
  Tok open = *t;
  TRY(lex(r));
  Value *items = NULL;
  size_t n = 0, cap = 0;
  bool comma = false;
  while (r->tok.kind != T_RPAREN) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4;
      items = lang_realloc(items, cap * sizeof *items);
    }
    TRY(parse_const(r, depth + 1, &items[n]));
    n++;
    comma = false;
    if (r->tok.kind != T_COMMA) break;
    comma = true;
    TRY(lex(r));
  }
  if (r->tok.kind != T_RPAREN) return unexpected(r, "',' or ')'");
  if (n == 1 && !comma)
    return err_tok(r, &open, "a one-item tuple needs a trailing comma: (x,)");
  ObjSeq *tup = lang_tuple_new(n);
  for (size_t i = 0; i < n; i++) tup->items[i] = items[i];
  *out = v_obj(tup);
  return lex(r);
}

/* arg -> NODE | GRAPH | BUILTIN | 'prim.' PRIMNAME | const */
static bool parse_arg(Reader *r, Arg *a) {
  Tok *t = &r->tok;
  memset(a, 0, sizeof *a);
  a->tok = *t;
  if (t->kind == T_NODE || t->kind == T_GRAPH) {
    a->kind = t->kind == T_NODE ? A_NODE : A_GRAPH;
    return lex(r);
  }
  if (is_prim_ref(t)) {
    a->kind = A_PRIM;
    TRY(prim_named(r, t, t->s + 5, t->n - 5, &a->prim));
    return lex(r);
  }
  switch (t->kind) {
  case T_INT: case T_FLOAT: case T_STR: case T_BUILTIN: case T_NAME:
  case T_LPAREN:
    a->kind = A_VALUE;
    return parse_const(r, 0, &a->v);
  default:
    return unexpected(r, "an argument");
  }
}

static void add_ref(Reader *r, const Tok *t, bool graph, IrNode **slot, Span span) {
  if (r->nrefs == r->caprefs) {
    r->caprefs = r->caprefs ? 2 * r->caprefs : 64;
    r->refs = lang_realloc(r->refs, (size_t)r->caprefs * sizeof *r->refs);
  }
  Ref *ref = &r->refs[r->nrefs++];
  ref->graph = graph;
  ref->tok = *t;
  ref->slot = slot;
  ref->span = span;
}

/* The node for a parsed argument, or NULL with the reference noted. */
static IrNode *arg_node(Reader *r, Arg *a, IrNode **slot, Span span) {
  switch (a->kind) {
  case A_VALUE: return ir_const(r->u, a->v, span);
  case A_PRIM: return ir_const_prim(r->u, (IrPrim)a->prim, span);
  case A_NODE: add_ref(r, &a->tok, false, slot, span); return NULL;
  case A_GRAPH: add_ref(r, &a->tok, true, slot, span); return NULL;
  }
  return NULL;
}

/* ---- graphs ---- */

static bool define_node(Reader *r, const Tok *t) {
  if (table_get(&r->nodes, t->s, t->n))
    return err_tok(r, t, "duplicate node %%%.*s", (int)t->n, t->s);
  return true;
}

/* line -> NODE '=' callee '(' [ arg { ',' arg } ] ')' [ SPAN ] NL
 * callee -> PRIMNAME | arg */
static bool parse_apply(Reader *r, IrGraph *g) {
  Tok def = r->tok;
  TRY(define_node(r, &def));
  TRY(lex(r));
  TRY(expect(r, T_EQ, "'='"));
  Arg *args = lang_alloc(4 * sizeof *args);
  int n = 0, cap = 4;
  Value dummy;
  if (r->tok.kind == T_NAME && !is_prim_ref(&r->tok) && !name_const(&r->tok, &dummy)) {
    args[0].kind = A_PRIM;
    args[0].tok = r->tok;
    TRY(prim_named(r, &r->tok, r->tok.s, r->tok.n, &args[0].prim));
    TRY(lex(r));
  } else {
    TRY(parse_arg(r, &args[0]));
  }
  n = 1;
  TRY(expect(r, T_LPAREN, "'('"));
  while (r->tok.kind != T_RPAREN) {
    if (n == cap) {
      cap *= 2;
      args = lang_realloc(args, (size_t)cap * sizeof *args);
    }
    TRY(parse_arg(r, &args[n]));
    n++;
    if (r->tok.kind != T_COMMA) break;
    TRY(lex(r));
    if (r->tok.kind == T_RPAREN) return unexpected(r, "an argument");
  }
  TRY(expect(r, T_RPAREN, "',' or ')'"));
  IrNode **typed = NULL;
  if (r->tok.kind == T_COLON) {
    typed = lang_alloc(sizeof *typed);
    TRY(read_type(r, typed));
  }
  Span span = span_none();
  if (r->tok.kind == T_SPAN) {
    span = r->tok.span;
    TRY(lex(r));
  }
  TRY(expect_eol(r));
  IrNode **in = lang_alloc((size_t)n * sizeof *in);
  IrNode *x = ir_apply(r->u, g, n, in, span);
  if (typed) *typed = x;
  for (int i = 0; i < n; i++) x->in[i] = arg_node(r, &args[i], &x->in[i], span);
  x->name = source_name(def.s, def.n);
  table_put(&r->nodes, def.s, def.n, x);
  return true;
}

static const char *flag_names[] = {"function", "module", "branch", "loop", "join", "body"};

/* graph -> 'graph' GRAPH '(' [ param { ',' param } ] ')' [ 'in' GRAPH ]
 *          [ ':' FLAG { ',' FLAG } ] '{' [ SPAN ] NL { line } '}' */
static bool parse_graph(Reader *r) {
  r->seen_graph = true;
  TRY(lex(r));
  Tok name = r->tok;
  if (name.kind != T_GRAPH) return unexpected(r, "a graph name");
  if (table_get(&r->graphs, name.s, name.n))
    return err_tok(r, &name, "duplicate graph @%.*s", (int)name.n, name.s);
  Span gspan = span_none();
  gspan.file = r->src_file;
  IrGraph *g = ir_graph_new(r->u, lang_strndup(name.s, name.n), NULL, 0, gspan);
  if (r->npgs == r->cappgs) {
    r->cappgs = r->cappgs ? 2 * r->cappgs : 16;
    r->pgs = lang_realloc(r->pgs, (size_t)r->cappgs * sizeof *r->pgs);
  }
  PGraph *pg = &r->pgs[r->npgs++];
  memset(pg, 0, sizeof *pg);
  pg->g = g;
  /* the table maps a graph's name to its PGraph's index + 1 */
  table_put(&r->graphs, name.s, name.n, (void *)(intptr_t)r->npgs);
  TRY(lex(r));
  TRY(expect(r, T_LPAREN, "'('"));
  /* param -> NODE [ '=' arg ]: defaults belong to the last parameters */
  Arg *defs = NULL;
  int ndefs = 0, capdefs = 0;
  while (r->tok.kind == T_NODE) {
    Tok pt = r->tok;
    TRY(define_node(r, &pt));
    IrNode *p = ir_param(r->u, g, source_name(pt.s, pt.n), gspan);
    table_put(&r->nodes, pt.s, pt.n, p);
    TRY(lex(r));
    if (r->tok.kind == T_COLON) {
      IrNode **typed = lang_alloc(sizeof *typed);
      *typed = p;
      TRY(read_type(r, typed));
    }
    if (r->tok.kind == T_EQ) {
      TRY(lex(r));
      if (ndefs == capdefs) {
        capdefs = capdefs ? 2 * capdefs : 4;
        defs = lang_realloc(defs, (size_t)capdefs * sizeof *defs);
      }
      TRY(parse_arg(r, &defs[ndefs++]));
    } else if (ndefs > 0) {
      return err_tok(r, &pt, "parameter %%%.*s without a default follows one with a default",
                     (int)pt.n, pt.s);
    }
    if (r->tok.kind != T_COMMA) break;
    TRY(lex(r));
    if (r->tok.kind != T_NODE) return unexpected(r, "a parameter");
  }
  TRY(expect(r, T_RPAREN, "a parameter or ')'"));
  if (is_kw(r, "in")) {
    TRY(lex(r));
    if (r->tok.kind != T_GRAPH) return unexpected(r, "a graph name");
    pg = &r->pgs[r->npgs - 1];
    pg->has_parent = true;
    pg->parent = r->tok;
    TRY(lex(r));
  }
  if (r->tok.kind == T_COLON) {
    do {
      TRY(lex(r));
      if (r->tok.kind != T_NAME) return unexpected(r, "a graph flag");
      int f = 0;
      while (f < 6 && !is_kw(r, flag_names[f])) f++;
      if (f == 6)
        return err_tok(r, &r->tok, "unknown graph flag '%.*s'", (int)r->tok.n, r->tok.s);
      g->flags |= 1u << f;
      TRY(lex(r));
    } while (r->tok.kind == T_COMMA);
  }
  TRY(expect(r, T_LBRACE, "'{'"));
  if (r->tok.kind == T_SPAN) {
    g->span = r->tok.span;
    for (int i = 0; i < g->nparams; i++) g->params[i]->span = g->span;
    TRY(lex(r));
  }
  if (ndefs) {
    g->ndefaults = ndefs;
    g->defaults = lang_alloc((size_t)ndefs * sizeof *g->defaults);
    for (int i = 0; i < ndefs; i++)
      g->defaults[i] = arg_node(r, &defs[i], &g->defaults[i], g->span);
  }
  TRY(expect(r, T_NL, "end of line"));
  for (;;) {
    while (r->tok.kind == T_NL) TRY(lex(r));
    if (r->tok.kind == T_NODE) {
      TRY(parse_apply(r, g));
    } else if (is_kw(r, "return")) {
      /* 'return' arg NL */
      TRY(lex(r));
      Arg a;
      TRY(parse_arg(r, &a));
      bool typed = r->tok.kind == T_COLON;
      if (typed) TRY(read_type(r, &g->ret));
      if (r->tok.kind == T_SPAN) TRY(lex(r));
      TRY(expect_eol(r));
      g->ret = arg_node(r, &a, &g->ret, g->span);
      while (r->tok.kind == T_NL) TRY(lex(r));
      TRY(expect(r, T_RBRACE, "'}' after the return line"));
      if (r->tok.kind != T_EOF) TRY(expect(r, T_NL, "end of line after '}'"));
      return true;
    } else if (r->tok.kind == T_RBRACE) {
      return err_tok(r, &r->tok, "graph @%.*s has no return line", (int)name.n, name.s);
    } else {
      return unexpected(r, "a node definition or 'return'");
    }
  }
}

/* The `# file NAME` header: spans refer to that file, registered once. */
static bool file_header(Reader *r) {
  Tok t = r->tok;
  if (r->seen_file) return err_tok(r, &t, "a second '# file' header");
  if (t.n == 0) return err_tok(r, &t, "'# file' needs a file name");
  if (memchr(t.s, '\0', t.n)) return err_tok(r, &t, "bad file name in '# file' header");
  r->seen_file = true;
  MistVM *vm = r->vm;
  r->src_file = -1;
  for (int i = 0; i < vm->nfiles; i++) {
    ObjStr *p = vm->files[i].path;
    if (p && p->len == t.n && memcmp(p->data, t.s, t.n) == 0) {
      r->src_file = i;
      break;
    }
  }
  if (r->src_file < 0) r->src_file = lang_file_add(vm, lang_strndup(t.s, t.n), "", 0);
  return lex(r);
}

/* unit -> { graph } */
static bool parse_unit(Reader *r) {
  TRY(lex(r));
  for (;;) {
    if (r->tok.kind == T_EOF) return true;
    if (r->tok.kind == T_NL) {
      TRY(lex(r));
    } else if (r->tok.kind == T_FILE) {
      TRY(file_header(r));
    } else if (is_kw(r, "graph")) {
      TRY(parse_graph(r));
    } else {
      return unexpected(r, "'graph'");
    }
  }
}

/* ---- the second pass ---- */

static IrGraph *graph_named(Reader *r, const Tok *t) {
  intptr_t k = (intptr_t)table_get(&r->graphs, t->s, t->n);
  return k ? r->pgs[k - 1].g : NULL;
}

/* What errors call a graph (IrGraph.display, not in the text): as the
 * lowering names them, "<module>" for a module's code, a function's last
 * dotted name component (without a .N that made the name unique, and
 * "<lambda>" for lambdaN), and for a synthetic graph (a branch, a loop)
 * the name of the function it belongs to. */
static bool synthetic(const IrGraph *g) {
  return !(g->flags & (IRG_FUNCTION | IRG_MODULE)) && g->parent;
}

static ObjStr *own_display(IrGraph *g) {
  if (g->flags & IRG_MODULE) return lang_str("<module>");
  const char *s = g->name->data;
  size_t n = g->name->len;
  for (;;) {
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k == n || k < 2 || s[k - 1] != '.') break;
    n = k - 1;
  }
  size_t start = n;
  while (start > 0 && s[start - 1] != '.') start--;
  const char *c = s + start;
  size_t cn = n - start;
  if (cn == 0) return g->name;
  if (cn > 6 && memcmp(c, "lambda", 6) == 0 && all_digits(c + 6, cn - 6))
    return lang_str("<lambda>");
  return lang_str_new(c, cn);
}

static bool resolve(Reader *r) {
  for (int i = 0; i < r->npgs; i++) {
    PGraph *pg = &r->pgs[i];
    pg->pidx = -1;
    if (!pg->has_parent) continue;
    intptr_t k = (intptr_t)table_get(&r->graphs, pg->parent.s, pg->parent.n);
    if (!k)
      return err_tok(r, &pg->parent, "unknown graph @%.*s", (int)pg->parent.n, pg->parent.s);
    pg->pidx = (int)k - 1;
    pg->g->parent = r->pgs[k - 1].g;
  }
  /* Walk each parent chain once (linear in all): a chain that comes back
   * to a graph on the current path is a cycle. */
  for (int i = 0; i < r->npgs; i++) {
    int j = i;
    while (j >= 0 && r->pgs[j].state == 0) {
      r->pgs[j].state = 1;
      j = r->pgs[j].pidx;
    }
    if (j >= 0 && r->pgs[j].state == 1)
      return err_tok(r, &r->pgs[j].parent, "graph @%s is nested in itself",
                     r->pgs[j].g->name->data);
    for (j = i; j >= 0 && r->pgs[j].state == 1; j = r->pgs[j].pidx) r->pgs[j].state = 2;
  }
  /* Display names, each parent chain walked once.  (The module, whose
   * globals a graph reads, stays NULL: a top graph read has none.) */
  for (int i = 0; i < r->npgs; i++) {
    int j = i;
    while (!r->pgs[j].display && synthetic(r->pgs[j].g)) j = r->pgs[j].pidx;
    ObjStr *d = r->pgs[j].display ? r->pgs[j].display : own_display(r->pgs[j].g);
    for (int k = i; !r->pgs[k].display; k = r->pgs[k].pidx) {
      r->pgs[k].display = d;
      r->pgs[k].g->display = d;
      if (k == j) break;
    }
  }
  for (int i = 0; i < r->nrefs; i++) {
    Ref *ref = &r->refs[i];
    Tok *t = &ref->tok;
    if (ref->graph) {
      IrGraph *g = graph_named(r, t);
      if (!g) return err_tok(r, t, "unknown graph @%.*s", (int)t->n, t->s);
      *ref->slot = ir_const_graph(r->u, g, ref->span);
    } else {
      IrNode *x = table_get(&r->nodes, t->s, t->n);
      if (!x) return err_tok(r, t, "unknown node %%%.*s", (int)t->n, t->s);
      *ref->slot = x;
    }
  }
  return true;
}

/* Where the first byte that is not UTF-8 is, as line and column. */
static bool check_utf8(Reader *r) {
  size_t len = (size_t)(r->end - r->text);
  if (lang_utf8_valid(r->text, len)) return true;
  int line = 1, col = 1;
  size_t i = 0;
  while (i < len) {
    unsigned char c = (unsigned char)r->text[i];
    size_t k = utf8_len(r->text + i, len - i);
    if (!k) return err_at(r, line, col, 1, "invalid UTF-8 byte 0x%02x", c);
    if (c == '\n') line++, col = 1;
    else col++;
    i += k;
  }
  return err_at(r, line, col, 1, "invalid UTF-8");
}

static IrGraph *known_graph(void *ud, const char *name, size_t n) {
  Reader *r = ud;
  intptr_t k = (intptr_t)table_get(&r->graphs, name, n);
  return k ? r->pgs[k - 1].g : NULL;
}

/* The second pass over the type annotations: each parsed again with the
 * graphs known, and handed to the caller. */
static bool resolve_types(Reader *r) {
  for (int i = 0; i < r->ntypes; i++) {
    PType *pt = &r->types[i];
    size_t used;
    const char *err;
    IrType *t = ir_type_parse(r->vm, pt->text, pt->len, &used, &err, known_graph, r);
    if (!t) {
      int col = pt->col;
      for (const char *q = pt->text; q < pt->text + used; q++)
        if (((unsigned char)*q & 0xc0) != 0x80) col++;
      return err_at(r, pt->line, col, 1, "%s", err);
    }
    if (r->put && *pt->slot) r->put(r->ud, *pt->slot, t);
  }
  return true;
}

IrUnit *ir_read(MistVM *vm, const char *name, const char *text, size_t len) {
  return ir_read_typed(vm, name, text, len, NULL, NULL);
}

IrUnit *ir_read_typed(MistVM *vm, const char *name, const char *text, size_t len,
                      void (*put)(void *ud, IrNode *n, IrType *t), void *ud) {
  Reader r;
  memset(&r, 0, sizeof r);
  r.vm = vm;
  r.put = put;
  r.ud = ud;
  r.u = ir_unit_new();
  r.name = name;
  r.text = r.p = text ? text : "";
  r.end = r.text + (text ? len : 0);
  r.line = r.col = 1;
  r.bol = true;
  r.text_file = -1;
  r.src_file = -1;
  if (!check_utf8(&r) || !parse_unit(&r) || !resolve(&r) || !resolve_types(&r)) return NULL;
  return r.u;
}
