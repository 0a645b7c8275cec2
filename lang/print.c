/* print.c: values as text, as Python 3 prints them: repr() and str()
 * of every value, floats as the shortest decimal that reads back to the
 * same double (Python's repr), and the format mini-language of
 * f-strings and format() for int, float, bool and str.
 *
 * The shortest float digits come from the C library: for 1..17
 * significant digits, the correctly rounded "%.*e" text is tried, and
 * its two neighbours on the decimal grid (the nearest string is not
 * always the one inside the rounding interval, which is lopsided at
 * powers of two), until one reads back with strtod.  The other float
 * formats (e, f, g, %) are printf's, which rounds exactly as Python's
 * dtoa does (correctly, from the binary value).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"

/* ---- floats ---- */

/* Digits of d > 0 (finite) at p significant digits, from "%.*e". */
static void digits_at(double d, int p, char *digits, int *exp10) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.*e", p - 1, d);
  int n = 0;
  const char *s = buf;
  for (; *s && *s != 'e'; s++)
    if (isdigit((unsigned char)*s)) digits[n++] = *s;
  digits[n] = '\0';
  *exp10 = atoi(s + 1);
}

static bool reads_back(const char *digits, int exp10, double d) {
  char buf[48];
  snprintf(buf, sizeof buf, "%c.%se%d", digits[0], digits + 1, exp10);
  return strtod(buf, NULL) == d;
}

/* One step up (dir = 1) or down (-1) on the grid of p-digit decimals. */
static void step_digits(const char *digits, int exp10, int dir, char *out, int *oexp) {
  int n = (int)strlen(digits);
  memcpy(out, digits, (size_t)n + 1);
  *oexp = exp10;
  int i = n - 1;
  if (dir > 0) {
    while (i >= 0 && out[i] == '9') out[i--] = '0';
    if (i >= 0) {
      out[i]++;
    } else {
      out[0] = '1';   /* 99..9 + 1 = 100..0, one decade up */
      (*oexp)++;
    }
  } else {
    while (i >= 0 && out[i] == '0') out[i--] = '9';
    if (i >= 0) out[i]--;
    if (out[0] == '0') {   /* 100..0 - 1 = 99..9, one decade down */
      memset(out, '9', (size_t)n);
      (*oexp)--;
    }
  }
}

static void shortest_digits(double d, char *digits, int *exp10) {
  for (int p = 1; p <= 17; p++) {
    digits_at(d, p, digits, exp10);
    if (reads_back(digits, *exp10, d)) break;
    char alt[24];
    int aexp;
    bool found = false;
    for (int dir = -1; dir <= 1 && !found; dir += 2) {
      step_digits(digits, *exp10, dir, alt, &aexp);
      if (reads_back(alt, aexp, d)) {
        strcpy(digits, alt);
        *exp10 = aexp;
        found = true;
      }
    }
    if (found) break;
  }
  int n = (int)strlen(digits);
  while (n > 1 && digits[n - 1] == '0') digits[--n] = '\0';
}

void lang_float_repr(double d, StrBuf *out) {
  if (isnan(d)) { sb_adds(out, "nan"); return; }
  if (isinf(d)) { sb_adds(out, d > 0 ? "inf" : "-inf"); return; }
  if (signbit(d)) { sb_addc(out, '-'); d = -d; }
  if (d == 0) { sb_adds(out, "0.0"); return; }
  char digits[24];
  int e;
  shortest_digits(d, digits, &e);
  int n = (int)strlen(digits);
  if (e < -4 || e >= 16) {
    sb_addc(out, digits[0]);
    if (n > 1) {
      sb_addc(out, '.');
      sb_add(out, digits + 1, (size_t)n - 1);
    }
    sb_printf(out, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (e >= 0) {
    int whole = e + 1;
    if (n <= whole) {
      sb_add(out, digits, (size_t)n);
      for (int i = n; i < whole; i++) sb_addc(out, '0');
      sb_adds(out, ".0");
    } else {
      sb_add(out, digits, (size_t)whole);
      sb_addc(out, '.');
      sb_add(out, digits + whole, (size_t)(n - whole));
    }
  } else {
    sb_adds(out, "0.");
    for (int i = 0; i < -e - 1; i++) sb_addc(out, '0');
    sb_add(out, digits, (size_t)n);
  }
}

/* ---- strings ---- */

/* The C library's "C.UTF-8" locale, for the code points Unicode leaves
 * unassigned (none of its classes, not even "print"), or NULL where the
 * locale is missing. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static void open_utf8(void) { utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0); }

/* Code points Python's repr escapes although they are not ASCII: the C1
 * controls, separators, format characters and private use areas (the
 * table), and the unassigned ones, which glibc 2.36's C.UTF-8 does not
 * call printable (with the table, exactly Python 3.11's isprintable() on
 * every code point, checked over all of them).  Where the locale is
 * missing, unassigned code points pass through. */
static bool unprintable(uint32_t c) {
  static const uint32_t ranges[][2] = {
    {0x80, 0xa0}, {0xad, 0xad}, {0x600, 0x605}, {0x61c, 0x61c}, {0x6dd, 0x6dd},
    {0x70f, 0x70f}, {0x890, 0x891}, {0x8e2, 0x8e2}, {0x180e, 0x180e}, {0x1680, 0x1680},
    {0x2000, 0x200f}, {0x2028, 0x202f}, {0x205f, 0x2064}, {0x2066, 0x206f}, {0x3000, 0x3000},
    {0xd800, 0xf8ff}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0xfffe, 0xffff},
    {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3},
    {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f}, {0xf0000, 0x10ffff},
  };
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (c >= ranges[i][0] && c <= ranges[i][1]) return true;
  if ((c & 0xfffe) == 0xfffe) return true;   /* the noncharacters at the end of each plane */
  pthread_once(&utf8_once, open_utf8);
  return utf8_locale && !iswprint_l((wint_t)c, utf8_locale);
}

void lang_quote(StrBuf *out, const char *s, size_t len, char quote, unsigned flags) {
  sb_addc(out, quote);
  size_t i = 0;
  while (i < len) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 && (flags & LANG_QUOTE_UNPRINTABLE)) {
      uint32_t cp;
      size_t n = lang_utf8_decode(s + i, len - i, &cp);
      if (!unprintable(cp)) sb_add(out, s + i, n);
      else if (cp < 0x100) sb_printf(out, "\\x%02x", (unsigned)cp);
      else if (cp < 0x10000) sb_printf(out, "\\u%04x", (unsigned)cp);
      else sb_printf(out, "\\U%08x", (unsigned)cp);
      i += n;
      continue;
    }
    i++;
    if (c == (unsigned char)quote || c == '\\') {
      sb_addc(out, '\\');
      sb_addc(out, (char)c);
    } else if (c == '\n') {
      sb_adds(out, "\\n");
    } else if (c == '\t') {
      sb_adds(out, "\\t");
    } else if (c == '\r') {
      sb_adds(out, "\\r");
    } else if (c < 0x20 || c == 0x7f) {
      sb_printf(out, "\\x%02x", c);
    } else if ((c == '{' || c == '}') && (flags & LANG_QUOTE_BRACES)) {
      sb_addc(out, (char)c);
      sb_addc(out, (char)c);
    } else {
      sb_addc(out, (char)c);
    }
  }
  sb_addc(out, quote);
}

void lang_str_repr(const ObjStr *s, StrBuf *out) {
  bool sq = memchr(s->data, '\'', s->len) != NULL;
  bool dq = memchr(s->data, '"', s->len) != NULL;
  lang_quote(out, s->data, s->len, sq && !dq ? '"' : '\'', LANG_QUOTE_UNPRINTABLE);
}

/* ---- repr and str ---- */

static bool repr_items(MistVM *vm, const Value *items, size_t n, StrBuf *out) {
  for (size_t i = 0; i < n; i++) {
    if (i) sb_adds(out, ", ");
    if (!lang_repr(vm, items[i], out)) return false;
  }
  return true;
}

static const char *graph_name(MistVM *vm, struct IrGraph *g) {
  const char *name = g && vm->graph_name ? vm->graph_name(g) : NULL;
  return name ? name : "?";
}

bool lang_repr(MistVM *vm, Value v, StrBuf *out) {
  switch (v.tag) {
  case V_UNBOUND: sb_adds(out, "<unbound>"); return true;
  case V_NONE: sb_adds(out, "None"); return true;
  case V_BOOL: sb_adds(out, v.b ? "True" : "False"); return true;
  case V_INT: sb_printf(out, "%lld", (long long)v.i); return true;
  case V_FLOAT: lang_float_repr(v.f, out); return true;
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: lang_str_repr(AS_STR(v), out); return true;
  case O_TUPLE: {
    ObjSeq *s = AS_SEQ(v);
    if (!lang_check_stack(vm)) return false;
    sb_addc(out, '(');
    if (!repr_items(vm, s->items, s->len, out)) return false;
    sb_adds(out, s->len == 1 ? ",)" : ")");
    return true;
  }
  case O_LIST: {
    ObjSeq *s = AS_SEQ(v);
    if (!lang_check_stack(vm)) return false;
    sb_addc(out, '[');
    if (!repr_items(vm, s->items, s->len, out)) return false;
    sb_addc(out, ']');
    return true;
  }
  case O_DICT: {
    ObjDict *d = AS_DICT(v);
    if (!lang_check_stack(vm)) return false;
    sb_addc(out, '{');
    for (size_t i = 0; i < d->len; i++) {
      if (i) sb_adds(out, ", ");
      lang_str_repr(d->entries[i].key, out);
      sb_adds(out, ": ");
      if (!lang_repr(vm, d->entries[i].value, out)) return false;
    }
    sb_addc(out, '}');
    return true;
  }
  case O_RANGE: {
    ObjRange *r = AS_RANGE(v);
    if (r->step == 1) sb_printf(out, "range(%lld, %lld)", (long long)r->start, (long long)r->stop);
    else sb_printf(out, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop,
                   (long long)r->step);
    return true;
  }
  case O_SLICE: {
    ObjSlice *s = AS_SLICE(v);
    sb_adds(out, "slice(");
    if (!lang_repr(vm, s->start, out)) return false;
    sb_adds(out, ", ");
    if (!lang_repr(vm, s->stop, out)) return false;
    sb_adds(out, ", ");
    if (!lang_repr(vm, s->step, out)) return false;
    sb_addc(out, ')');
    return true;
  }
  case O_FUNC: sb_printf(out, "<function %s>", graph_name(vm, AS_FUNC(v)->graph)); return true;
  case O_BUILTIN: sb_printf(out, "<built-in function %s>", AS_BUILTIN(v)->name); return true;
  case O_BOUND: {
    ObjBound *b = AS_BOUND(v);
    const char *name = v_is_obj(b->fn, O_BUILTIN) ? AS_BUILTIN(b->fn)->name
                       : v_is_obj(b->fn, O_FUNC) ? graph_name(vm, AS_FUNC(b->fn)->graph)
                       : "?";
    sb_printf(out, "<built-in method %s of %s object>", name, lang_type_name(b->self));
    return true;
  }
  case O_MODULE: {
    ObjModule *m = AS_MODULE(v);
    sb_printf(out, "<module '%s'>", m->name ? m->name->data : "?");
    return true;
  }
  case O_GRAPH: sb_printf(out, "<graph %s>", graph_name(vm, AS_GRAPH(v)->graph)); return true;
  case O_ENV: sb_printf(out, "<env of %zu sensitivities>", ((ObjEnv *)v.o)->len); return true;
  case O_SPARSE: sb_printf(out, "<sensitivity of parts>"); return true;
  case O_TENSOR: lang_tensor_repr(vm, AS_TENSOR(v), out); return true;
  case O_ELLIPSIS: sb_adds(out, "Ellipsis"); return true;
  case O_ITER: sb_adds(out, "<iterator>"); return true;
  case O_FILE: {
    ObjFile *f = (ObjFile *)v.o;
    sb_adds(out, "<_io.TextIOWrapper name=");
    lang_str_repr(f->path, out);
    sb_printf(out, " mode='%c' encoding='UTF-8'>", f->mode);
    return true;
  }
  case O_NATIVE: {
    const NativeClass *c = AS_NATIVE(v)->cls;
    if (c->repr) c->repr(vm, v, out);
    else sb_printf(out, "<%s object>", c->name);
    return true;
  }
  }
  sb_adds(out, "<object>");
  return true;
}

bool lang_tostr(MistVM *vm, Value v, StrBuf *out) {
  if (v_is_obj(v, O_STR)) {
    sb_add(out, AS_STR(v)->data, AS_STR(v)->len);
    return true;
  }
  return lang_repr(vm, v, out);
}

/* ---- the format mini-language ---- */

/* [[fill]align][sign][z][#][0][width][grouping][.precision][type] */
typedef struct Spec {
  char fill[5];        /* one UTF-8 character */
  bool fill_given;
  char align;          /* '<', '>', '^', '=' or 0 */
  char sign;           /* '+', '-', ' ' or 0 */
  bool z, alt;
  int64_t width;       /* -1 = none */
  char grouping;       /* ',', '_' or 0 */
  int group;           /* digits per group: 3, or 4 for '_' with b/o/x */
  int64_t prec;        /* -1 = none */
  char type;           /* 0 = none */
} Spec;

#define MAX_SPEC_NUMBER ((int64_t)1 << 28)

static bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

static bool spec_number(MistVM *vm, const char *s, size_t len, size_t *pos, int64_t *out) {
  size_t start = *pos;
  int64_t n = 0;
  while (*pos < len && isdigit((unsigned char)s[*pos])) {
    n = n * 10 + (s[*pos] - '0');
    if (n > MAX_SPEC_NUMBER)
      return lang_raise(vm, "ValueError", "Too many decimal digits in format string");
    (*pos)++;
  }
  *out = *pos > start ? n : -1;
  return true;
}

static bool parse_spec(MistVM *vm, const char *s, size_t len, char default_type,
                       char default_align, const char *tname, Spec *sp) {
  memset(sp, 0, sizeof *sp);
  sp->fill[0] = ' ';
  sp->width = sp->prec = -1;
  sp->align = default_align;
  sp->type = default_type;
  size_t pos = 0;
  bool align_given = false;
  uint32_t cp;
  size_t n = len ? lang_utf8_decode(s, len, &cp) : 0;
  if (len > n && is_align(s[n])) {
    memcpy(sp->fill, s, n);
    sp->fill[n] = '\0';
    sp->fill_given = true;
    sp->align = s[n];
    align_given = true;
    pos = n + 1;
  } else if (len > 0 && is_align(s[0])) {
    sp->align = s[0];
    align_given = true;
    pos = 1;
  }
  if (pos < len && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' ')) sp->sign = s[pos++];
  if (pos < len && s[pos] == 'z') { sp->z = true; pos++; }
  if (pos < len && s[pos] == '#') { sp->alt = true; pos++; }
  if (!sp->fill_given && pos < len && s[pos] == '0') {
    strcpy(sp->fill, "0");
    if (!align_given && default_align == '>') sp->align = '=';
    pos++;
  }
  if (!spec_number(vm, s, len, &pos, &sp->width)) return false;
  if (pos < len && s[pos] == ',') { sp->grouping = ','; pos++; }
  if (pos < len && s[pos] == '_') {
    if (sp->grouping) return lang_raise(vm, "ValueError", "Cannot specify both ',' and '_'.");
    sp->grouping = '_';
    pos++;
  }
  if (pos < len && s[pos] == ',' && sp->grouping == '_')
    return lang_raise(vm, "ValueError", "Cannot specify both ',' and '_'.");
  if (pos < len && s[pos] == '.') {
    pos++;
    if (!spec_number(vm, s, len, &pos, &sp->prec)) return false;
    if (sp->prec < 0) return lang_raise(vm, "ValueError", "Format specifier missing precision");
  }
  if (len - pos > 1)
    return lang_raise(vm, "ValueError", "Invalid format specifier '%.*s' for object of type '%s'",
                      (int)len, s, tname);
  if (pos < len) sp->type = s[pos];
  sp->group = 3;
  if (sp->grouping) {
    switch (sp->type) {
    case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
      break;
    case 'b': case 'o': case 'x': case 'X':
      if (sp->grouping == '_') { sp->group = 4; break; }
      /* fall through */
    default:
      if (isprint((unsigned char)sp->type))
        return lang_raise(vm, "ValueError", "Cannot specify '%c' with '%c'.", sp->grouping, sp->type);
      return lang_raise(vm, "ValueError", "Cannot specify '%c' with '\\x%x'.", sp->grouping,
                        (unsigned char)sp->type);
    }
  }
  return true;
}

static bool unknown_code(MistVM *vm, char type, const char *tname) {
  if (isprint((unsigned char)type))
    return lang_raise(vm, "ValueError", "Unknown format code '%c' for object of type '%s'", type,
                      tname);
  return lang_raise(vm, "ValueError", "Unknown format code '\\x%x' for object of type '%s'",
                    (unsigned char)type, tname);
}

static size_t count_chars(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    if (((unsigned char)s[i] & 0xc0) != 0x80) n++;
  return n;
}

static void add_fill(StrBuf *out, const Spec *sp, int64_t n) {
  for (int64_t i = 0; i < n; i++) sb_adds(out, sp->fill);
}

/* Text of `nchars` characters, padded to the width as the spec says
 * ('=' is handled by the number code before this). */
static void pad(StrBuf *out, const Spec *sp, const char *text, size_t len, size_t nchars) {
  int64_t padn = sp->width > (int64_t)nchars ? sp->width - (int64_t)nchars : 0;
  int64_t left = sp->align == '>' ? padn : sp->align == '^' ? padn / 2 : 0;
  add_fill(out, sp, left);
  sb_add(out, text, len);
  add_fill(out, sp, padn - left);
}

static bool format_str(MistVM *vm, const ObjStr *s, const Spec *sp, StrBuf *out) {
  if (sp->type != 's' && sp->type != 0) return unknown_code(vm, sp->type, "str");
  if (sp->sign == ' ')
    return lang_raise(vm, "ValueError", "Space not allowed in string format specifier");
  if (sp->sign) return lang_raise(vm, "ValueError", "Sign not allowed in string format specifier");
  if (sp->z)
    return lang_raise(vm, "ValueError",
                      "Negative zero coercion (z) not allowed in string format specifier");
  if (sp->alt)
    return lang_raise(vm, "ValueError", "Alternate form (#) not allowed in string format specifier");
  if (sp->align == '=')
    return lang_raise(vm, "ValueError", "'=' alignment not allowed in string format specifier");
  size_t len = s->len, nchars = s->nchars;
  if (sp->prec >= 0 && (size_t)sp->prec < nchars) {
    nchars = (size_t)sp->prec;
    len = lang_str_offset(s, nchars);
  }
  pad(out, sp, s->data, len, nchars);
  return true;
}

/* Digits grouped from the right, zero-extended to min_width characters
 * when the padding is zeros (CPython's InsertThousandsGrouping). */
static void group_digits(StrBuf *out, const char *digits, int64_t n, int64_t min_width, char sep,
                         int group) {
  if (!sep || n == 0) {
    for (int64_t i = n; i < min_width; i++) sb_addc(out, '0');
    sb_add(out, digits, (size_t)n);
    return;
  }
  /* build reversed, then copy backwards */
  StrBuf rev;
  sb_init(&rev);
  int64_t remaining = n;
  bool use_sep = false;
  for (;;) {
    int64_t l = remaining > min_width ? remaining : min_width;
    if (l < 1) l = 1;
    if (l > group) l = group;
    int64_t nchars = remaining < l ? (remaining > 0 ? remaining : 0) : l;
    int64_t zeros = l - nchars;
    if (use_sep) sb_addc(&rev, sep);
    for (int64_t i = 0; i < nchars; i++) sb_addc(&rev, digits[remaining - 1 - i]);
    for (int64_t i = 0; i < zeros; i++) sb_addc(&rev, '0');
    use_sep = true;
    remaining -= nchars;
    min_width -= l;
    if (remaining <= 0 && min_width <= 0) break;
    min_width -= 1;
  }
  for (size_t i = rev.len; i > 0; i--) sb_addc(out, rev.data[i - 1]);
}

/* Lay out a number: sign, prefix ("0x"), digits (grouped), rest (".5e+03",
 * "inf", "%"), with the fill, alignment and width of the spec. */
static void layout_number(StrBuf *out, const Spec *sp, bool negative, const char *prefix,
                          const char *digits, size_t ndigits, const char *rest, size_t nrest) {
  char sign[2] = {0, 0};
  if (negative) sign[0] = '-';
  else if (sp->sign == '+') sign[0] = '+';
  else if (sp->sign == ' ') sign[0] = ' ';
  size_t nsign = sign[0] ? 1 : 0, nprefix = strlen(prefix);
  int64_t lead = (int64_t)(nsign + nprefix);
  int64_t restchars = (int64_t)count_chars(rest, nrest);
  bool zero_pad = strcmp(sp->fill, "0") == 0 && sp->align == '=';
  int64_t min_width = zero_pad && sp->width > 0 ? sp->width - lead - restchars : 0;
  StrBuf body;
  sb_init(&body);
  group_digits(&body, digits, (int64_t)ndigits, min_width, sp->grouping, sp->group);
  int64_t total = lead + (int64_t)body.len + restchars;
  int64_t padn = sp->width > total ? sp->width - total : 0;
  if (sp->align == '=') {
    sb_add(out, sign, nsign);
    sb_adds(out, prefix);
    add_fill(out, sp, padn);
    sb_add(out, body.data, body.len);
    sb_add(out, rest, nrest);
    return;
  }
  int64_t left = sp->align == '>' ? padn : sp->align == '^' ? padn / 2 : 0;
  add_fill(out, sp, left);
  sb_add(out, sign, nsign);
  sb_adds(out, prefix);
  sb_add(out, body.data, body.len);
  sb_add(out, rest, nrest);
  add_fill(out, sp, padn - left);
}

static bool format_float(MistVM *vm, double x, const Spec *sp, StrBuf *out);

static bool format_int(MistVM *vm, int64_t v, const char *tname, const Spec *sp, StrBuf *out) {
  char type = sp->type ? sp->type : 'd';
  switch (type) {
  case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%':
    return format_float(vm, (double)v, sp, out);
  case 'd': case 'n': case 'b': case 'o': case 'x': case 'X': case 'c': break;
  default: return unknown_code(vm, type, tname);
  }
  if (sp->prec >= 0)
    return lang_raise(vm, "ValueError", "Precision not allowed in integer format specifier");
  if (sp->z)
    return lang_raise(vm, "ValueError",
                      "Negative zero coercion (z) not allowed in integer format specifier");
  if (type == 'c') {
    if (sp->sign)
      return lang_raise(vm, "ValueError", "Sign not allowed with integer format specifier 'c'");
    if (sp->alt)
      return lang_raise(vm, "ValueError",
                        "Alternate form (#) not allowed with integer format specifier 'c'");
    if (v < 0 || v > 0x10ffff)
      return lang_raise(vm, "OverflowError", "%%c arg not in range(0x110000)");
    char buf[4];
    size_t n = lang_utf8_encode((uint32_t)v, buf);
    Spec s2 = *sp;
    s2.grouping = 0;
    layout_number(out, &s2, false, "", "", 0, buf, n);
    return true;
  }
  uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  char digits[72];
  int n = 0;
  unsigned base = type == 'b' ? 2 : type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
  const char *hex = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  char tmp[72];
  do {
    tmp[n++] = hex[mag % base];
    mag /= base;
  } while (mag);
  for (int i = 0; i < n; i++) digits[i] = tmp[n - 1 - i];
  const char *prefix = "";
  if (sp->alt) {
    if (type == 'b') prefix = "0b";
    else if (type == 'o') prefix = "0o";
    else if (type == 'x') prefix = "0x";
    else if (type == 'X') prefix = "0X";
  }
  layout_number(out, sp, v < 0, prefix, digits, (size_t)n, "", 0);
  return true;
}

static void strip_zeros(StrBuf *b) {
  /* trailing zeros of the fraction, and then a bare '.' */
  if (!memchr(b->data, '.', b->len)) return;
  while (b->len > 0 && b->data[b->len - 1] == '0') b->len--;
  if (b->len > 0 && b->data[b->len - 1] == '.') b->len--;
  b->data[b->len] = '\0';
}

/* 'g' as Python does it; dot0 is the "no type, precision given" variant,
 * which keeps one digit after the point and goes to exponent notation
 * one digit earlier. */
static void format_g(StrBuf *b, double x, int64_t prec, bool alt, bool dot0) {
  int p = prec < 0 ? 6 : prec == 0 ? 1 : (int)prec;
  char ebuf[64];
  snprintf(ebuf, sizeof ebuf, "%.*e", p - 1, x);
  const char *e = strchr(ebuf, 'e');
  int exp10 = e ? atoi(e + 1) : 0;
  int threshold = dot0 ? p - 1 : p;
  if (exp10 < -4 || exp10 >= threshold) {
    sb_printf(b, alt ? "%#.*e" : "%.*e", p - 1, x);
    if (!alt) {
      /* strip zeros of the mantissa only */
      char *ep = strchr(b->data, 'e');
      size_t elen = strlen(ep);
      char exp[16];
      memcpy(exp, ep, elen + 1);
      b->len = (size_t)(ep - b->data);
      b->data[b->len] = '\0';
      strip_zeros(b);
      sb_adds(b, exp);
    }
  } else {
    sb_printf(b, alt ? "%#.*f" : "%.*f", p - 1 - exp10, x);
    if (!alt) strip_zeros(b);
    if (dot0 && !memchr(b->data, '.', b->len)) sb_adds(b, ".0");
  }
}

static bool format_float(MistVM *vm, double x, const Spec *sp, StrBuf *out) {
  char type = sp->type;
  switch (type) {
  case 0: case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'n': case '%': break;
  default: return unknown_code(vm, type, "float");
  }
  if (type == 'n') type = 'g';
  bool negative = signbit(x) && !isnan(x);
  double m = fabs(x);
  bool pct = type == '%';
  if (pct) { m *= 100; type = 'f'; }
  int64_t prec = sp->prec;
  StrBuf b;
  sb_init(&b);
  if (isnan(m) || isinf(m)) {
    sb_adds(&b, isnan(m) ? "nan" : "inf");
  } else if (type == 0 && prec < 0) {
    lang_float_repr(m, &b);
    char *e = strchr(b.data, 'e');
    if (sp->alt && e && !memchr(b.data, '.', (size_t)(e - b.data))) {
      /* '#' keeps the point: 1.e+16 */
      char exp[16];
      snprintf(exp, sizeof exp, "%s", e);
      b.len = (size_t)(e - b.data);
      sb_addc(&b, '.');
      sb_adds(&b, exp);
    }
  } else if (type == 0) {
    format_g(&b, m, prec, sp->alt, true);
  } else if (type == 'g' || type == 'G') {
    format_g(&b, m, prec, sp->alt, false);
  } else {
    int p = prec < 0 ? 6 : (int)prec;
    char conv = (char)tolower((unsigned char)type);
    char fmt[8] = "%.*";
    if (sp->alt) strcpy(fmt, "%#.*");
    size_t fl = strlen(fmt);
    fmt[fl] = conv;
    fmt[fl + 1] = '\0';
    sb_printf(&b, fmt, p, m);
  }
  if (type == 'E' || type == 'F' || type == 'G')
    for (size_t i = 0; i < b.len; i++) b.data[i] = (char)toupper((unsigned char)b.data[i]);
  if (pct) sb_addc(&b, '%');
  if (negative && sp->z && !isinf(m)) {
    bool zero = true;
    for (size_t i = 0; i < b.len && b.data[i] != 'e' && b.data[i] != 'E'; i++)
      if (isdigit((unsigned char)b.data[i]) && b.data[i] != '0') zero = false;
    if (zero) negative = false;
  }
  size_t nd = 0;
  while (nd < b.len && isdigit((unsigned char)b.data[nd])) nd++;
  layout_number(out, sp, negative, "", b.data, nd, b.data + nd, b.len - nd);
  return true;
}

bool lang_format(MistVM *vm, Value v, const char *spec, size_t speclen, StrBuf *out) {
  if (speclen == 0) return lang_tostr(vm, v, out);
  Spec sp;
  if (v_is_tensor(v)) {   /* a one-element tensor formats as its number */
    if (!lang_tensor_item(vm, "format", AS_TENSOR(v), &v)) return false;
  }
  if (v_is_obj(v, O_STR)) {
    if (!parse_spec(vm, spec, speclen, 's', '<', "str", &sp)) return false;
    return format_str(vm, AS_STR(v), &sp, out);
  }
  if (v.tag == V_INT || v.tag == V_BOOL) {
    const char *tname = lang_type_name(v);
    if (!parse_spec(vm, spec, speclen, 'd', '>', tname, &sp)) return false;
    return format_int(vm, v.tag == V_BOOL ? (int64_t)v.b : v.i, tname, &sp, out);
  }
  if (v.tag == V_FLOAT) {
    if (!parse_spec(vm, spec, speclen, 0, '>', "float", &sp)) return false;
    if (sp.prec > 100000) return lang_raise(vm, "ValueError", "precision too big");
    return format_float(vm, v.f, &sp, out);
  }
  return lang_raise(vm, "TypeError", "unsupported format string passed to %s.__format__",
                    lang_type_name(v));
}

/* ---- printf-style formatting: fmt % args ----
 *
 * Python's str % args (CPython's PyUnicode_Format): `%[(key)][flags]
 * [width][.precision][hlL]type` with flags `- + space # 0`, `*` for a
 * width or precision taken from the arguments, and the types d i u o x
 * X e E f F g G c r s a, plus `%%`.  args is a tuple of the values, a
 * dict for `%(key)s`, or else the one value.  Numbers and strs are laid
 * out by the mini-language's code above (a Spec made from the flags),
 * so `'%08.3f' % x` and `f'{x:08.3f}'` agree to the character, as in
 * Python; an int's precision is its minimum count of digits.
 * tests/python/percent_vs_python.py holds it to CPython. */

typedef struct Percent {
  MistVM *vm;
  const Value *items;   /* the arguments: a tuple's items, or the one value */
  int64_t nitems, next;
  bool mapping;         /* the one value is a dict */
} Percent;

static bool percent_next(Percent *p, Value *v) {
  if (p->next >= p->nitems)
    return lang_raise(p->vm, "TypeError", "not enough arguments for format string");
  *v = p->items[p->next++];
  return true;
}

/* A `*` width or precision: the next argument, an int. */
static bool percent_star(Percent *p, int64_t *n) {
  Value v = v_none();
  if (!percent_next(p, &v)) return false;
  if (v.tag != V_INT && v.tag != V_BOOL) return lang_raise(p->vm, "TypeError", "* wants int");
  *n = v.tag == V_BOOL ? v.b : v.i;
  if (*n > MAX_SPEC_NUMBER || *n < -MAX_SPEC_NUMBER)
    return lang_raise(p->vm, "ValueError", "Too many decimal digits in format string");
  return true;
}

/* v as a number for %d and the like: a one-element tensor as its item */
static bool percent_number(MistVM *vm, Value *v) {
  if (v_is_tensor(*v)) return lang_tensor_item(vm, "format", AS_TENSOR(*v), v);
  return true;
}

/* repr(v) with every non-ASCII code point escaped, as ascii() */
static bool percent_ascii(MistVM *vm, Value v, StrBuf *out) {
  StrBuf r;
  sb_init(&r);
  if (!lang_repr(vm, v, &r)) return false;
  for (size_t i = 0; i < r.len;) {
    uint32_t cp;
    size_t n = lang_utf8_decode(r.data + i, r.len - i, &cp);
    if (n == 0) n = 1, cp = (unsigned char)r.data[i];
    if (cp < 0x80) sb_addc(out, (char)cp);
    else if (cp < 0x100) sb_printf(out, "\\x%02x", cp);
    else if (cp < 0x10000) sb_printf(out, "\\u%04x", cp);
    else sb_printf(out, "\\U%08x", cp);
    i += n;
  }
  return true;
}

/* text laid out as a str by the flags' width, precision and '-' */
static bool percent_text(MistVM *vm, const char *text, size_t len, Spec sp, StrBuf *out) {
  sp.type = 's';
  sp.sign = 0;
  sp.alt = false;
  strcpy(sp.fill, " ");
  if (sp.align == '=') sp.align = '>';
  return format_str(vm, lang_str_new(text ? text : "", len), &sp, out);
}

static bool percent_one(MistVM *vm, Value v, char type, Spec sp, StrBuf *out) {
  sp.type = type;
  switch (type) {
  case 's': case 'r': case 'a': {
    StrBuf text;
    sb_init(&text);
    if (!(type == 's' ? lang_tostr(vm, v, &text) : type == 'r' ? lang_repr(vm, v, &text) : percent_ascii(vm, v, &text)))
      return false;
    return percent_text(vm, text.data, text.len, sp, out);
  }
  case 'c': {
    sp.prec = -1;
    if (v_is_obj(v, O_STR) && AS_STR(v)->nchars == 1) return percent_text(vm, AS_STR(v)->data, AS_STR(v)->len, sp, out);
    if (v.tag != V_INT && v.tag != V_BOOL) return lang_raise(vm, "TypeError", "%%c requires int or char");
    int64_t c = v.tag == V_BOOL ? v.b : v.i;
    if (c < 0 || c > 0x10ffff) return lang_raise(vm, "OverflowError", "%%c arg not in range(0x110000)");
    if (c >= 0xD800 && c <= 0xDFFF)
      return lang_raise(vm, "ValueError", "%%c arg is a surrogate (0x%llx), which a UTF-8 str cannot hold",
                        (long long)c);
    char buf[4];
    size_t n = lang_utf8_encode((uint32_t)c, buf);
    return percent_text(vm, buf, n, sp, out);
  }
  case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': {
    if (!percent_number(vm, &v)) return false;
    bool decimal = type == 'd' || type == 'i' || type == 'u';
    if (v.tag != V_INT && v.tag != V_BOOL && !(v.tag == V_FLOAT && decimal))
      return lang_raise(vm, "TypeError", "%%%c format: %s is required, not %s", type,
                        decimal ? "a real number" : "an integer", lang_type_name(v));
    if (v.tag == V_FLOAT && !lang_to_int(vm, v, &v)) return false;
    int64_t i = v.tag == V_BOOL ? v.b : v.i;
    uint64_t mag = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    unsigned base = type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
    const char *hex = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[72];
    int n = 0;
    do {
      tmp[n++] = hex[mag % base];
      mag /= base;
    } while (mag);
    StrBuf digits;
    sb_init(&digits);
    for (int64_t k = n; k < sp.prec; k++) sb_addc(&digits, '0');
    for (int k = n - 1; k >= 0; k--) sb_addc(&digits, tmp[k]);
    const char *prefix = !sp.alt ? "" : type == 'o' ? "0o" : type == 'x' ? "0x" : type == 'X' ? "0X" : "";
    layout_number(out, &sp, i < 0, prefix, digits.data, digits.len, "", 0);
    return true;
  }
  case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
    if (!percent_number(vm, &v)) return false;
    if (v.tag == V_INT || v.tag == V_BOOL) v = v_float(v.tag == V_BOOL ? v.b : (double)v.i);
    if (v.tag != V_FLOAT) return lang_raise(vm, "TypeError", "must be real number, not %s", lang_type_name(v));
    if (sp.prec > 100000) return lang_raise(vm, "ValueError", "precision too big");
    return format_float(vm, v.f, &sp, out);
  default:   /* (lang_percent_format checks the type first) */
    return lang_raise(vm, "ValueError", "unsupported format character '%c'", type);
  }
}

/* `%(key)`: the value under key in the dict of arguments; *i after ')' */
static bool percent_key(MistVM *vm, const Percent *p, const char *s, size_t len, size_t *i, Value *v) {
  if (!p->mapping) return lang_raise(vm, "TypeError", "format requires a mapping");
  size_t start = ++*i;
  int depth = 1;
  while (*i < len && depth > 0) {
    if (s[*i] == '(') depth++;
    else if (s[*i] == ')') depth--;
    ++*i;
  }
  if (depth > 0) return lang_raise(vm, "ValueError", "incomplete format key");
  ObjStr *key = lang_str_new(s + start, *i - 1 - start);
  if (lang_dict_get(AS_DICT(p->items[0]), key, v)) return true;
  StrBuf r;
  sb_init(&r);
  lang_str_repr(key, &r);
  return lang_raise(vm, "KeyError", "%s", r.data);
}

bool lang_percent_format(MistVM *vm, const ObjStr *fmt, Value args, Value *out) {
  Percent p = {vm, &args, 1, 0, v_is_obj(args, O_DICT)};
  if (v_is_obj(args, O_TUPLE)) {
    p.items = AS_SEQ(args)->items;
    p.nitems = (int64_t)AS_SEQ(args)->len;
  }
  const char *s = fmt->data;
  size_t len = fmt->len, i = 0;
  StrBuf sb;
  sb_init(&sb);
  while (i < len) {
    const char *pct = memchr(s + i, '%', len - i);
    if (!pct) {
      sb_add(&sb, s + i, len - i);
      break;
    }
    sb_add(&sb, s + i, (size_t)(pct - (s + i)));
    i = (size_t)(pct - s) + 1;
    if (i < len && s[i] == '%') {   /* (only right after the '%': "%5%" wants an argument) */
      sb_addc(&sb, '%');
      i++;
      continue;
    }
    Value v = v_none();
    bool keyed = i < len && s[i] == '(';
    if (keyed && !percent_key(vm, &p, s, len, &i, &v)) return false;
    Spec sp;
    memset(&sp, 0, sizeof sp);
    strcpy(sp.fill, " ");
    sp.width = sp.prec = -1;
    bool minus = false, zero = false;
    for (; i < len && s[i] && strchr("-+ #0", s[i]); i++) {
      if (s[i] == '-') minus = true;
      else if (s[i] == '+') sp.sign = '+';
      else if (s[i] == ' ' && sp.sign != '+') sp.sign = ' ';
      else if (s[i] == '#') sp.alt = true;
      else if (s[i] == '0') zero = true;
    }
    if (i < len && s[i] == '*') {
      if (!percent_star(&p, &sp.width)) return false;
      if (sp.width < 0) minus = true, sp.width = -sp.width;
      i++;
    } else if (!spec_number(vm, s, len, &i, &sp.width)) {
      return false;
    }
    if (i < len && s[i] == '.') {
      i++;
      if (i < len && s[i] == '*') {
        if (!percent_star(&p, &sp.prec)) return false;
        i++;
      } else if (!spec_number(vm, s, len, &i, &sp.prec)) {
        return false;
      }
      if (sp.prec < 0) sp.prec = 0;
    }
    if (i < len && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L')) i++;
    if (i >= len) return lang_raise(vm, "ValueError", "incomplete format");
    if (!keyed && !percent_next(&p, &v)) return false;
    sp.align = minus ? '<' : zero ? '=' : '>';
    if (zero && !minus) strcpy(sp.fill, "0");
    char type = s[i];
    if (type == 0 || !strchr("sradiuoxXeEfFgGc", type)) {
      /* Python's words: the character when printable ASCII, else '?';
       * the index in characters */
      uint32_t cp;
      if (lang_utf8_decode(s + i, len - i, &cp) == 0) cp = (unsigned char)s[i];
      return lang_raise(vm, "ValueError", "unsupported format character '%c' (0x%x) at index %zu",
                        cp >= 31 && cp <= 126 ? (char)cp : '?', cp, count_chars(s, i));
    }
    i++;
    if (!percent_one(vm, v, type, sp, &sb)) return false;
  }
  if (p.next < p.nitems && !p.mapping)
    return lang_raise(vm, "TypeError", "not all arguments converted during string formatting");
  *out = v_obj(lang_str_new(sb.data ? sb.data : "", sb.len));
  return true;
}
