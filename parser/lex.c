/* lex.c: source text to tokens, with Python's indentation layer.
 *
 * The lexer is pulled by the parser one token at a time (lex_next), so
 * errors are reported in source order, as Python's tokenizer does.  It
 * keeps the position (byte offset, line, column in code points) of the
 * next character; every move goes through lex_advance so columns count
 * code points.  At the start of each logical line outside brackets it
 * measures the indentation and compares it with a stack of open levels,
 * producing INDENT or a run of DEDENTs; blank and comment-only lines are
 * skipped whole.  Inside brackets, and in the expressions of f-strings
 * (a "sub" lexer over a slice of the same text, so spans stay right),
 * line breaks are plain white space.
 *
 * String literals are decoded here (escapes to UTF-8); f-strings are only
 * delimited, and the parser splits their contents into literal parts and
 * embedded expressions.  Numbers are converted here; an integer too large
 * for 64 bits is left to the parser, which knows about `-9223372036854775808`.
 */
#include "parser/lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"

static const char *const token_names[] = {
#define TOK(e, s) s,
#define PUNCT(e, s) s,
#define KW(e, s) s,
#define RESERVED(e, s) s,
#include "parser/token.def"
};

static const struct { const char *text; TokKind kind; } keywords[] = {
#define KW(e, s) {s, TK_##e},
#define RESERVED(e, s) {s, TK_##e},
#include "parser/token.def"
};

const char *lex_token_name(TokKind k) {
  return (unsigned)k < TK__COUNT ? token_names[k] : "?";
}

/* ---- positions and errors ---- */

void lex_advance(const Lexer *L, LexPos *p) {
  if (p->pos >= L->len) return;
  unsigned char c = (unsigned char)L->src[p->pos++];
  if (c == '\n') {
    p->line++;
    p->col = 1;
    return;
  }
  if (c >= 0xC0)
    while (p->pos < L->len && ((unsigned char)L->src[p->pos] & 0xC0) == 0x80) p->pos++;
  p->col++;
}

Span lex_span(const Lexer *L, LexPos p, int len) {
  Span s = {L->file, p.line, p.col, len};
  return s;
}

bool lex_error(Lexer *L, Span span, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lang_raise_at(L->vm, span, "SyntaxError", "%s", buf);
  L->failed = true;
  return false;
}

static int peekc(const Lexer *L, size_t ahead) {
  size_t i = L->p.pos + ahead;
  return i < L->len ? (unsigned char)L->src[i] : -1;
}

static void adv(Lexer *L) { lex_advance(L, &L->p); }

static bool is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_ident(int c) { return is_ident_start(c) || is_digit(c); }

/* The code point starting at src[i] (bytes are validated before lexing;
 * a bad sequence gives its first byte). */
static uint32_t decode_cp(const char *src, size_t len, size_t i) {
  unsigned char c = (unsigned char)src[i];
  int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t cp = n == 3 ? c & 0x07u : n == 2 ? c & 0x0Fu : n == 1 ? c & 0x1Fu : c;
  for (int k = 1; k <= n; k++) {
    if (i + (size_t)k >= len) return c;
    cp = (cp << 6) | ((unsigned char)src[i + (size_t)k] & 0x3Fu);
  }
  return cp;
}

static void put_utf8(StrBuf *sb, uint32_t cp) {
  char b[4];
  if (cp < 0x80) {
    sb_addc(sb, (char)cp);
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | (cp >> 6));
    b[1] = (char)(0x80 | (cp & 0x3F));
    sb_add(sb, b, 2);
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | (cp >> 12));
    b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F));
    sb_add(sb, b, 3);
  } else {
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    sb_add(sb, b, 4);
  }
}

/* ---- set-up ---- */

void lex_init(Lexer *L, MistVM *vm, int file, const char *src, size_t len) {
  memset(L, 0, sizeof *L);
  L->vm = vm;
  L->file = file;
  L->src = src;
  L->len = len;
  L->p.line = 1;
  L->p.col = 1;
  L->at_line_start = true;
  L->nindents = 1;      /* indents[0] == 0: the module level */
}

void lex_init_sub(Lexer *L, MistVM *vm, int file, const char *src, LexPos start, size_t end) {
  memset(L, 0, sizeof *L);
  L->vm = vm;
  L->file = file;
  L->src = src;
  L->len = end;
  L->p = start;
  L->sub = true;
  L->nindents = 1;
}

static Token make(Lexer *L, TokKind k, LexPos start) {
  Token t;
  memset(&t, 0, sizeof t);
  t.kind = k;
  t.start = start.pos;
  t.end = L->p.pos;
  t.endpos = L->p;
  int len = L->p.line == start.line ? L->p.col - start.col : 1;
  t.span = lex_span(L, start, len > 0 ? len : 1);
  return t;
}

static Token fail(Lexer *L) {
  Token t;
  memset(&t, 0, sizeof t);
  t.kind = TK_ERROR;
  t.span = lex_span(L, L->p, 1);
  L->failed = true;
  return t;
}

static Token fail_incomplete(Lexer *L) {
  L->vm->err.incomplete = true;
  return fail(L);
}

/* ---- string contents ---- */

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool lex_decode(Lexer *L, LexPos at, size_t end, bool raw, StrBuf *out) {
  LexPos p = at;
  const char *s = L->src;
  while (p.pos < end) {
    if (s[p.pos] == '\r' && p.pos + 1 < end && s[p.pos + 1] == '\n') {   /* CRLF in a ''' string */
      lex_advance(L, &p);
      continue;
    }
    if (s[p.pos] != '\\' || raw) {
      size_t from = p.pos;
      lex_advance(L, &p);
      if (p.pos > end) p.pos = end;
      sb_add(out, s + from, p.pos - from);
      if (raw && s[from] == '\\' && p.pos < end) {   /* r"\"" keeps both */
        from = p.pos;
        lex_advance(L, &p);
        sb_add(out, s + from, p.pos - from);
      }
      continue;
    }
    LexPos esc = p;
    lex_advance(L, &p);
    if (p.pos >= end) {              /* a lone trailing backslash (f-string part) */
      sb_addc(out, '\\');
      break;
    }
    int e = (unsigned char)s[p.pos];
    int ndig = 0;
    switch (e) {
    case '\n': lex_advance(L, &p); continue;
    case '\r':
      lex_advance(L, &p);
      if (p.pos < end && s[p.pos] == '\n') lex_advance(L, &p);
      continue;
    case '\\': case '\'': case '"': sb_addc(out, (char)e); lex_advance(L, &p); continue;
    case 'n': sb_addc(out, '\n'); lex_advance(L, &p); continue;
    case 't': sb_addc(out, '\t'); lex_advance(L, &p); continue;
    case 'r': sb_addc(out, '\r'); lex_advance(L, &p); continue;
    case 'a': sb_addc(out, '\a'); lex_advance(L, &p); continue;
    case 'b': sb_addc(out, '\b'); lex_advance(L, &p); continue;
    case 'f': sb_addc(out, '\f'); lex_advance(L, &p); continue;
    case 'v': sb_addc(out, '\v'); lex_advance(L, &p); continue;
    case 'x': ndig = 2; break;
    case 'u': ndig = 4; break;
    case 'U': ndig = 8; break;
    case 'N': {   /* Python's \N{NAME}: kept as written it would be silently wrong */
      LexPos q = p;
      while (q.pos < end && s[q.pos] != '}' && s[q.pos] != '\n') lex_advance(L, &q);
      return lex_error(L, lex_span(L, esc, q.col - esc.col + (q.pos < end && s[q.pos] == '}')),
                       "(unicode error) \\N{...} escapes are not supported in Mist: write the character or its \\u escape");
    }
    default:
      if (e >= '0' && e <= '7') {
        uint32_t v = 0;
        for (int k = 0; k < 3 && p.pos < end && s[p.pos] >= '0' && s[p.pos] <= '7'; k++) {
          v = v * 8 + (uint32_t)(s[p.pos] - '0');
          lex_advance(L, &p);
        }
        put_utf8(out, v);
        continue;
      }
      sb_addc(out, '\\');            /* unknown escape: kept as written */
      continue;
    }
    lex_advance(L, &p);              /* over x/u/U */
    uint32_t v = 0;
    for (int k = 0; k < ndig; k++) {
      int h = p.pos < end ? hexval((unsigned char)s[p.pos]) : -1;
      if (h < 0) {
        static const char *const what[] = {"", "", "\\xXX", "", "\\uXXXX", "", "", "", "\\UXXXXXXXX"};
        return lex_error(L, lex_span(L, esc, p.col - esc.col + 1),
                         "(unicode error) truncated %s escape", what[ndig]);
      }
      v = v * 16 + (uint32_t)h;
      lex_advance(L, &p);
    }
    if (v > 0x10FFFF)
      return lex_error(L, lex_span(L, esc, p.col - esc.col), "(unicode error) illegal Unicode character");
    if (v >= 0xD800 && v <= 0xDFFF)
      return lex_error(L, lex_span(L, esc, p.col - esc.col),
                       "(unicode error) surrogate code point U+%04X is not allowed in Mist strings", v);
    put_utf8(out, v);
  }
  return true;
}

/* string -> prefix? (quote ... quote | triple-quote ... triple-quote)
 * L->p is at the opening quote; start at the prefix. */
static Token lex_string(Lexer *L, LexPos start, bool fstr, bool raw) {
  int q = peekc(L, 0);
  bool triple = peekc(L, 1) == q && peekc(L, 2) == q;
  for (int i = 0; i < (triple ? 3 : 1); i++) adv(L);
  LexPos body = L->p;
  bool continued = false;       /* the last thing read was a backslash-newline */
  size_t body_end;
  for (;;) {
    int c = peekc(L, 0);
    if (c < 0) {
      if (triple) {
        /* Python counts the line of the last character: a final newline starts none */
        int last = L->p.col == 1 && L->p.line > start.line ? L->p.line - 1 : L->p.line;
        lex_error(L, lex_span(L, start, 1), "unterminated triple-quoted string literal (detected at line %d)",
                  last);
        return fail_incomplete(L);
      }
      lex_error(L, lex_span(L, start, 1), "unterminated string literal (detected at line %d)",
                continued ? L->p.line - 1 : L->p.line);
      return continued ? fail_incomplete(L) : fail(L);
    }
    if (c == '\\') {
      adv(L);
      int d = peekc(L, 0);
      continued = d == '\n' || (d == '\r' && peekc(L, 1) == '\n');
      if (d == '\r' && continued) adv(L);
      if (d >= 0) adv(L);
      continue;
    }
    continued = false;
    if (c == '\n' && !triple) {
      lex_error(L, lex_span(L, start, 1), "unterminated string literal (detected at line %d)", L->p.line);
      return fail(L);
    }
    if (c == q && (!triple || (peekc(L, 1) == q && peekc(L, 2) == q))) {
      body_end = L->p.pos;
      for (int i = 0; i < (triple ? 3 : 1); i++) adv(L);
      break;
    }
    adv(L);
  }
  Token t = make(L, fstr ? TK_FSTR : TK_STR, start);
  t.body = body;
  t.body_end = body_end;
  t.raw = raw;
  if (!fstr) {
    StrBuf sb;
    sb_init(&sb);
    if (!lex_decode(L, body, body_end, raw, &sb)) return fail(L);
    t.str = lang_str_new(sb.data, sb.len);
  }
  return t;
}

/* ---- numbers ---- */

/* digitpart -> digit ('_'? digit)*   (L->p at a digit or, after a
 * prefix, possibly at '_').  Appends the digits to buf if given.  False
 * (no error raised) on a misplaced underscore. */
static bool digits(Lexer *L, int base, StrBuf *buf, int *count) {
  *count = 0;
  for (;;) {
    int c = peekc(L, 0);
    if (c == '_') {
      int d = peekc(L, 1);
      if (d < 0 || hexval(d) < 0 || hexval(d) >= (base == 16 ? 16 : 10)) return false;
      adv(L);
      continue;
    }
    int h = c < 0 ? -1 : hexval(c);
    if (h < 0 || h >= (base == 16 ? 16 : 10)) return true;
    if (buf) sb_addc(buf, (char)c);
    (*count)++;
    adv(L);
  }
}

/* number -> ('0x'|'0o'|'0b') digits | decimal ['.' [digits]] [exponent] | '.' digits [exponent] */
static Token lex_number(Lexer *L) {
  LexPos start = L->p;
  StrBuf text;
  sb_init(&text);
  int n;
  int c0 = peekc(L, 0), c1 = peekc(L, 1);
  if (c0 == '0' && c1 >= 0 && strchr("xXoObB", c1)) {
    int base = (c1 == 'x' || c1 == 'X') ? 16 : (c1 == 'o' || c1 == 'O') ? 8 : 2;
    const char *bname = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
    adv(L);
    adv(L);
    if (!digits(L, 16, &text, &n) || n == 0) {
      lex_error(L, lex_span(L, L->p, 1), "invalid %s literal", bname);
      return fail(L);
    }
    uint64_t v = 0;
    for (size_t i = 0; i < text.len; i++) {
      int h = hexval((unsigned char)text.data[i]);
      if (h >= base) {
        /* point at the offending digit */
        LexPos p = start;
        lex_advance(L, &p);
        lex_advance(L, &p);
        size_t seen = 0;
        while (p.pos < L->p.pos) {
          if (L->src[p.pos] != '_' && seen++ == i) break;
          lex_advance(L, &p);
        }
        lex_error(L, lex_span(L, p, 1), "invalid digit '%c' in %s literal", text.data[i], bname);
        return fail(L);
      }
      if (v > (UINT64_MAX - (uint64_t)h) / (uint64_t)base) v = UINT64_MAX;   /* saturate: too large */
      else v = v * (uint64_t)base + (uint64_t)h;
    }
    if (is_ident(peekc(L, 0))) {
      lex_error(L, lex_span(L, L->p, 1), "invalid %s literal", bname);
      return fail(L);
    }
    Token t = make(L, TK_INT, start);
    t.uval = v;
    return t;
  }
  bool isfloat = false;
  int intdigits = 0;
  if (c0 != '.') {
    if (!digits(L, 10, &text, &intdigits)) goto bad_decimal;
  }
  if (peekc(L, 0) == '.') {
    isfloat = true;
    sb_addc(&text, '.');
    adv(L);
    if (is_digit(peekc(L, 0)) && !digits(L, 10, &text, &n)) goto bad_decimal;
  }
  if (peekc(L, 0) == 'e' || peekc(L, 0) == 'E') {
    int s = peekc(L, 1);
    if (is_digit(s) || ((s == '+' || s == '-') && is_digit(peekc(L, 2)))) {
      isfloat = true;
      sb_addc(&text, 'e');
      adv(L);
      if (s == '+' || s == '-') {
        sb_addc(&text, (char)s);
        adv(L);
      }
      if (!digits(L, 10, &text, &n)) goto bad_decimal;
    } else {
      goto bad_decimal;
    }
  }
  if (is_ident(peekc(L, 0))) goto bad_decimal;
  if (isfloat) {
    Token t = make(L, TK_FLOAT, start);
    t.fval = strtod(text.data, NULL);
    return t;
  }
  if (intdigits > 1 && text.data[0] == '0') {
    for (size_t i = 0; i < text.len; i++)
      if (text.data[i] != '0') {
        lex_error(L, lex_span(L, start, L->p.col - start.col),
                  "leading zeros in decimal integer literals are not permitted; "
                  "use an 0o prefix for octal integers");
        return fail(L);
      }
  }
  uint64_t v = 0;
  for (size_t i = 0; i < text.len; i++) {
    uint64_t d = (uint64_t)(text.data[i] - '0');
    if (v > (UINT64_MAX - d) / 10) v = UINT64_MAX;
    else v = v * 10 + d;
  }
  Token t = make(L, TK_INT, start);
  t.uval = v;
  return t;

bad_decimal:
  lex_error(L, lex_span(L, start, 1), "invalid decimal literal");
  return fail(L);
}

/* ---- operators ---- */

static Token lex_punct(Lexer *L) {
  LexPos start = L->p;
  int c = peekc(L, 0), d = peekc(L, 1), e = peekc(L, 2);
  TokKind k;
  int n = 1;
#define TWO(ch, k2, k1) \
  if (d == ch) { k = k2; n = 2; } else { k = k1; }
  switch (c) {
  case '(': k = TK_LPAREN; break;
  case ')': k = TK_RPAREN; break;
  case '[': k = TK_LBRACKET; break;
  case ']': k = TK_RBRACKET; break;
  case '{': k = TK_LBRACE; break;
  case '}': k = TK_RBRACE; break;
  case ',': k = TK_COMMA; break;
  case ';': k = TK_SEMI; break;
  case '.':
    if (d == '.' && e == '.') { k = TK_ELLIPSIS; n = 3; }
    else k = TK_DOT;
    break;
  case '~': k = TK_TILDE; break;
  case ':': TWO('=', TK_WALRUS, TK_COLON); break;
  case '@': TWO('=', TK_ATEQ, TK_AT); break;
  case '=': TWO('=', TK_EQ, TK_ASSIGN); break;
  case '+': TWO('=', TK_PLUSEQ, TK_PLUS); break;
  case '%': TWO('=', TK_PERCENTEQ, TK_PERCENT); break;
  case '|': TWO('=', TK_PIPEEQ, TK_PIPE); break;
  case '^': TWO('=', TK_CARETEQ, TK_CARET); break;
  case '&': TWO('=', TK_AMPEQ, TK_AMP); break;
  case '-':
    if (d == '>') { k = TK_ARROW; n = 2; }
    else TWO('=', TK_MINUSEQ, TK_MINUS);
    break;
  case '*':
    if (d == '*') { k = e == '=' ? TK_DSTAREQ : TK_DSTAR; n = e == '=' ? 3 : 2; }
    else TWO('=', TK_STAREQ, TK_STAR);
    break;
  case '/':
    if (d == '/') { k = e == '=' ? TK_DSLASHEQ : TK_DSLASH; n = e == '=' ? 3 : 2; }
    else TWO('=', TK_SLASHEQ, TK_SLASH);
    break;
  case '<':
    if (d == '<') { k = e == '=' ? TK_LSHIFTEQ : TK_LSHIFT; n = e == '=' ? 3 : 2; }
    else TWO('=', TK_LE, TK_LT);
    break;
  case '>':
    if (d == '>') { k = e == '=' ? TK_RSHIFTEQ : TK_RSHIFT; n = e == '=' ? 3 : 2; }
    else TWO('=', TK_GE, TK_GT);
    break;
  case '!':
    if (d == '=') { k = TK_NE; n = 2; break; }
    /* fall through */
  default:
    if (c < 0x20 || c == 0x7F) {
      lex_error(L, lex_span(L, start, 1), "invalid non-printable character U+%04X", (unsigned)c);
    } else if (c >= 0x80) {
      uint32_t cp = decode_cp(L->src, L->len, L->p.pos);
      LexPos q = start;
      lex_advance(L, &q);
      lex_error(L, lex_span(L, start, 1), "invalid character '%.*s' (U+%04X)", (int)(q.pos - start.pos),
                L->src + start.pos, cp);
    } else {
      lex_error(L, lex_span(L, start, 1), "invalid syntax");
    }
    return fail(L);
  }
#undef TWO
  for (int i = 0; i < n; i++) adv(L);

  /* brackets: matched here, so errors point at the culprit */
  if (k == TK_LPAREN || k == TK_LBRACKET || k == TK_LBRACE) {
    if (L->nbrackets >= LEX_MAX_BRACKETS) {
      lex_error(L, lex_span(L, start, 1), "too many nested parentheses");
      return fail(L);
    }
    L->brackets[L->nbrackets].c = (char)c;
    L->brackets[L->nbrackets].span = lex_span(L, start, 1);
    L->nbrackets++;
  } else if (k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACE) {
    if (L->nbrackets == 0) {
      lex_error(L, lex_span(L, start, 1), "unmatched '%c'", c);
      return fail(L);
    }
    char open = L->brackets[L->nbrackets - 1].c;
    char want = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (c != want) {
      Span os = L->brackets[L->nbrackets - 1].span;
      if (os.line != start.line)
        lex_error(L, lex_span(L, start, 1),
                  "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d", c, open, os.line);
      else
        lex_error(L, lex_span(L, start, 1), "closing parenthesis '%c' does not match opening parenthesis '%c'", c,
                  open);
      return fail(L);
    }
    L->nbrackets--;
  }
  return make(L, k, start);
}

/* ---- names, keywords and string prefixes ---- */

static Token lex_name(Lexer *L) {
  LexPos start = L->p;
  while (is_ident(peekc(L, 0))) adv(L);
  const char *s = L->src + start.pos;
  size_t n = L->p.pos - start.pos;
  int q = peekc(L, 0);
  if ((q == '"' || q == '\'') && n <= 2) {
    bool f = false, r = false, b = false, u = false, ok = true;
    for (size_t i = 0; i < n; i++) {
      char c = s[i] | 0x20;
      bool *flag = c == 'f' ? &f : c == 'r' ? &r : c == 'b' ? &b : c == 'u' ? &u : NULL;
      if (!flag || *flag) ok = false;
      else *flag = true;
    }
    if (ok && u && n > 1) ok = false;
    if (ok && b) {
      lex_error(L, lex_span(L, start, (int)n + 1), "bytes literals are not supported in Mist");
      return fail(L);
    }
    if (ok) return lex_string(L, start, f, r);
  }
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    if (strlen(keywords[i].text) == n && memcmp(keywords[i].text, s, n) == 0) {
      if (keywords[i].kind >= TK_CLASS) {
        lex_error(L, lex_span(L, start, (int)n), "'%s' is not supported in Mist", keywords[i].text);
        return fail(L);
      }
      return make(L, keywords[i].kind, start);
    }
  }
  Token t = make(L, TK_NAME, start);
  t.str = lang_intern(L->vm, s, n);
  return t;
}

/* ---- the token stream ---- */

/* At the start of a line outside brackets: skip blank lines, then
 * compare the indentation with the open levels.  Returns true with *out
 * set when an INDENT, DEDENT or error comes out of it. */
static bool indentation(Lexer *L, Token *out) {
  for (;;) {
    LexPos q = L->p;
    int width = 0;
    LexPos tab = {0, 0, 0};
    for (;;) {
      int c = q.pos < L->len ? (unsigned char)L->src[q.pos] : -1;
      if (c == ' ') width++;
      else if (c == '\t') { if (!tab.line) tab = q; }
      else if (c != '\f' && c != '\r') break;
      lex_advance(L, &q);
    }
    int c = q.pos < L->len ? (unsigned char)L->src[q.pos] : -1;
    if (c == '#') {
      while (q.pos < L->len && L->src[q.pos] != '\n') lex_advance(L, &q);
      c = q.pos < L->len ? '\n' : -1;
    }
    L->p = q;
    if (c == '\n') {            /* blank or comment-only line */
      adv(L);
      continue;
    }
    if (c < 0) return false;    /* end of input: the caller closes the levels */
    L->at_line_start = false;
    if (tab.line) {
      lex_error(L, lex_span(L, tab, 1), "tab in indentation: indent with spaces");
      *out = fail(L);
      return true;
    }
    int top = L->indents[L->nindents - 1];
    if (width > top) {
      if (L->nindents > LEX_MAX_INDENT) {
        lex_error(L, lex_span(L, q, 1), "too many levels of indentation");
        *out = fail(L);
        return true;
      }
      L->indents[L->nindents++] = width;
      *out = make(L, TK_INDENT, q);
      out->span.len = 1;
      return true;
    }
    if (width < top) {
      int n = 0;
      while (L->nindents > 1 && L->indents[L->nindents - 1] > width) {
        L->nindents--;
        n++;
      }
      if (L->indents[L->nindents - 1] != width) {
        lex_error(L, lex_span(L, q, 1), "unindent does not match any outer indentation level");
        *out = fail(L);
        return true;
      }
      L->pending_dedents = n - 1;
      *out = make(L, TK_DEDENT, q);
      out->span.len = 1;
      return true;
    }
    return false;
  }
}

Token lex_next(Lexer *L) {
  if (L->failed) return fail(L);
  for (;;) {
    if (L->pending_dedents > 0) {
      L->pending_dedents--;
      Token t = make(L, TK_DEDENT, L->p);
      t.span.len = 1;
      return t;
    }
    if (L->at_line_start && !L->sub && L->nbrackets == 0) {
      Token t;
      if (indentation(L, &t)) return t;
      L->at_line_start = false;
    }
    /* white space and comments */
    int c = peekc(L, 0);
    while (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      adv(L);
      c = peekc(L, 0);
    }
    if (c == '#')
      while ((c = peekc(L, 0)) >= 0 && c != '\n') adv(L);

    if (c < 0) {
      if (L->sub) return make(L, TK_EOF, L->p);
      if (L->nbrackets > 0) {
        lex_error(L, L->brackets[L->nbrackets - 1].span, "'%c' was never closed", L->brackets[L->nbrackets - 1].c);
        return fail_incomplete(L);
      }
      if (L->emitted) {
        L->emitted = false;
        return make(L, TK_NEWLINE, L->p);
      }
      if (L->nindents > 1) {
        L->nindents--;
        Token t = make(L, TK_DEDENT, L->p);
        t.span.len = 1;
        return t;
      }
      return make(L, TK_EOF, L->p);
    }
    if (c == '\n') {
      if (L->sub || L->nbrackets > 0 || !L->emitted) {
        adv(L);
        if (!L->sub && L->nbrackets == 0) L->at_line_start = true;
        continue;
      }
      LexPos start = L->p;
      adv(L);
      Token t = make(L, TK_NEWLINE, start);
      t.span.len = 1;
      L->at_line_start = true;
      L->emitted = false;
      return t;
    }
    if (c == '\\') {
      LexPos bs = L->p;
      int d = peekc(L, 1);
      if (d == '\n' || (d == '\r' && peekc(L, 2) == '\n')) {
        adv(L);
        if (d == '\r') adv(L);
        adv(L);
        if (peekc(L, 0) < 0 && !L->sub && L->nbrackets == 0) {
          lex_error(L, lex_span(L, bs, 1), "unexpected EOF while parsing");
          return fail_incomplete(L);
        }
        continue;
      }
      lex_error(L, lex_span(L, bs, 1), "unexpected character after line continuation character");
      return fail(L);
    }
    L->emitted = true;
    if (is_ident_start(c)) return lex_name(L);
    if (is_digit(c) || (c == '.' && is_digit(peekc(L, 1)))) return lex_number(L);
    if (c == '"' || c == '\'') return lex_string(L, L->p, false, false);
    return lex_punct(L);
  }
}
