/* builtins.c: the core builtin functions of Mist (print, str, int, len,
 * range, min, max, sum, sorted, map, zip...) and the helpers every
 * builtin in stdlib/ shares: argument parsing that words its errors as
 * CPython does, and iteration over any iterable value.
 *
 * Each builtin follows Python 3.11: same results, same error kinds and
 * messages (checked against python3), with Mist's differences: ints are
 * 64-bit and overflow is an OverflowError; map, zip, enumerate and
 * reversed return lists, since values are immutable and eager; dict
 * keys are str.  Given a tensor, sum, min, max, any and all reduce it
 * (sum(t) is t.sum()) and abs and round work elementwise, through
 * stdlib/tensor.c.  Builtins are registered unchecked (min/max -1) and
 * check their own arguments, because CPython's arity messages differ
 * from builtin to builtin.  Operators on values (+, <, repr...) come
 * from lang/ops.h, so the builtins agree with the interpreter.  Long
 * loops (over big ranges) poll vm->interrupt so ^C still stops them. */
#include "stdlib/builtins.h"
#include "stdlib/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/tensor.h"
#include "lang/textfile.h"
#include "stdlib/files.h"
#include "stdlib/show.h"
#include "stdlib/tensor.h"

/* The most items a builtin will gather into memory at once (a list made
 * from a range, say): beyond it, MemoryError rather than a failed
 * allocation, which would stop the process.  The same bound as lang/'s
 * (16 GiB). */
#define MAX_ITEMS (((size_t)1 << 34) / sizeof(Value))

/* ---- small helpers ---- */

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

static bool kw_is(const ObjStr *name, const char *s)
{
  size_t n = strlen(s);
  return name->len == n && memcmp(name->data, s, n) == 0;
}

static int kw_count(const KwArgs *kw) { return kw ? kw->n : 0; }

static Value str_val(const char *s, size_t len) { return v_obj(lang_str_new(s, len)); }

/* Every 4096 steps of a long loop: stop on an interrupt or past the
 * host's deadline. */
static bool poll(MistVM *vm, size_t step)
{
  if ((step & 4095) != 4095)
    return true;
  if (vm->interrupt)
    return lang_raise(vm, "KeyboardInterrupt", "interrupted");
  if (vm->deadline > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if ((double)ts.tv_sec + ts.tv_nsec * 1e-9 > vm->deadline)
      return lang_raise(vm, "TimeoutError", "time limit exceeded");
  }
  return true;
}

static bool truthy(MistVM *vm, Value v, bool *out) { return lang_truthy(vm, v, out); }

/* a < b (op CMP_LT) or a > b (CMP_GT), as a C bool */
static bool compare(MistVM *vm, CmpOp op, Value a, Value b, bool *out)
{
  Value r;
  return lang_compare(vm, op, a, b, &r) && lang_truthy(vm, r, out);
}

static bool is_number(Value v) { return v.tag == V_INT || v.tag == V_BOOL || v.tag == V_FLOAT; }

static ObjSeq *list_of(Value *items, size_t n)
{
  ObjSeq *l = lang_list_new(n);
  if (n)
    memcpy(l->items, items, n * sizeof(Value));
  return l;
}

/* ---- arguments ---- */

bool std_no_kw(MistVM *vm, const char *fname, const KwArgs *kw)
{
  if (kw_count(kw) > 0)
    return lang_raise(vm, "TypeError", "%s() takes no keyword arguments", fname);
  return true;
}

bool std_one_arg(MistVM *vm, const char *fname, int argc, const KwArgs *kw)
{
  if (!std_no_kw(vm, fname, kw))
    return false;
  if (argc != 1)
    return lang_raise(vm, "TypeError", "%s() takes exactly one argument (%d given)", fname, argc);
  return true;
}

bool std_no_args(MistVM *vm, const char *fname, int argc, const KwArgs *kw)
{
  if (!std_no_kw(vm, fname, kw))
    return false;
  if (argc != 0)
    return lang_raise(vm, "TypeError", "%s() takes no arguments (%d given)", fname, argc);
  return true;
}

static bool too_many(MistVM *vm, const char *fname, ArgStyle style, int given, int npos, int nreq)
{
  switch (style) {
  case ARGS_EXPECTED:
    if (npos == nreq)
      return lang_raise(vm, "TypeError", "%s expected %d argument%s, got %d", fname, npos,
                        plural(npos), given);
    return lang_raise(vm, "TypeError", "%s expected at most %d argument%s, got %d", fname, npos,
                      plural(npos), given);
  default:
    return lang_raise(vm, "TypeError", "%s() takes at most %d argument%s (%d given)", fname, npos,
                      plural(npos), given);
  }
}

bool std_parse_args(MistVM *vm, const char *fname, ArgStyle style,
                    int argc, const Value *argv, const KwArgs *kw,
                    const char *const *names, int nnames, int npos, int nreq,
                    bool kwnames, Value *slots)
{
  int nkw = kw_count(kw);
  for (int i = 0; i < nnames; i++)
    slots[i] = v_unbound();
  if (nkw > 0 && !kwnames)
    return std_no_kw(vm, fname, kw);
  if (argc > npos)
    return too_many(vm, fname, style, npos == nnames ? argc + nkw : argc, npos, nreq);
  if (npos == nnames && argc + nkw > nnames)
    return too_many(vm, fname, style, argc + nkw, npos, nreq);
  for (int i = 0; i < argc; i++)
    slots[i] = argv[i];
  for (int k = 0; k < nkw; k++) {
    const ObjStr *name = kw->names[k];
    int j = 0;
    while (j < nnames && !(names[j][0] && kw_is(name, names[j])))
      j++;
    if (j == nnames)
      return lang_raise(vm, "TypeError", "'%s' is an invalid keyword argument for %s()",
                        name->data, fname);
    if (slots[j].tag != V_UNBOUND)
      return lang_raise(vm, "TypeError", "argument for %s() given by name ('%s') and position (%d)",
                        fname, names[j], j + 1);
    slots[j] = kw->values[k];
  }
  for (int i = 0; i < nreq; i++) {
    if (slots[i].tag != V_UNBOUND)
      continue;
    switch (style) {
    case ARGS_CLINIC:
      return lang_raise(vm, "TypeError", "%s() missing required argument '%s' (pos %d)", fname,
                        names[i], i + 1);
    case ARGS_CLINIC_NOPOS:
      return lang_raise(vm, "TypeError", "%s() missing required argument '%s'", fname, names[i]);
    case ARGS_TAKES:
      return lang_raise(vm, "TypeError", "%s() takes at least %d argument%s (%d given)", fname,
                        nreq, plural(nreq), argc);
    case ARGS_EXPECTED:
      if (npos == nreq)
        return lang_raise(vm, "TypeError", "%s expected %d argument%s, got %d", fname, nreq,
                          plural(nreq), argc);
      return lang_raise(vm, "TypeError", "%s expected at least %d argument%s, got %d", fname,
                        nreq, plural(nreq), argc);
    }
  }
  return true;
}

static bool given(Value v) { return v.tag != V_UNBOUND; }
static bool given_not_none(Value v) { return v.tag != V_UNBOUND && v.tag != V_NONE; }

bool std_as_index(MistVM *vm, Value v, int64_t *out)
{
  if (v.tag == V_INT) {
    *out = v.i;
    return true;
  }
  if (v.tag == V_BOOL) {
    *out = v.b;
    return true;
  }
  return lang_raise(vm, "TypeError", "'%s' object cannot be interpreted as an integer",
                    lang_type_name(v));
}

bool std_call(MistVM *vm, Value fn, int argc, const Value *argv, Value *out)
{
  if (!vm->call)
    return lang_raise(vm, "RuntimeError", "no interpreter is installed to call functions from C");
  if (!lang_check_stack(vm))
    return false;
  return vm->call(vm, fn, argc, argv, NULL, out);
}

/* ---- iteration ---- */

static Value range_item(const ObjRange *r, size_t i)
{
  /* the true value lies in [start, stop), so the wrapping sum is exact */
  return v_int((int64_t)((uint64_t)r->start + (uint64_t)i * (uint64_t)r->step));
}

static size_t utf8_seqlen(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

bool std_iter_init(MistVM *vm, Value v, StdIter *it)
{
  it->src = v;
  it->pos = 0;
  it->byte = 0;
  if (v.tag == V_OBJ) {
    switch (v.o->kind) {
    case O_STR: it->len = AS_STR(v)->nchars; return true;
    case O_TUPLE:
    case O_LIST: it->len = AS_SEQ(v)->len; return true;
    case O_DICT: it->len = AS_DICT(v)->len; return true;
    case O_RANGE: it->len = (size_t)lang_range_count(AS_RANGE(v)); return true;
    case O_ITER: {
      /* its items from its position on, as a list of their own */
      ObjIter *iter = (ObjIter *)v.o;
      it->len = iter->items->len - iter->pos;
      it->src = v_obj(list_of(iter->items->items + iter->pos, it->len));
      return true;
    }
    case O_FILE: {
      /* its lines, read now, walked as a list */
      ObjSeq *lines;
      if (!lang_textfile_lines(vm, (ObjFile *)v.o, &lines))
        return false;
      it->src = v_obj(lines);
      it->len = lines->len;
      return true;
    }
    case O_FUNC: case O_BUILTIN: case O_MODULE: case O_GRAPH: case O_SLICE: case O_BOUND:
      break;
    case O_NATIVE: {
      /* a dataset: what a for loop walks, gathered into a list */
      ObjSeq *l;
      if (!AS_NATIVE(v)->cls->iter) break;
      if (!lang_iter_items(vm, v, &l)) return false;
      it->src = v_obj(l);
      it->len = l->len;
      return true;
    }
    default: {
      /* a kind added later (a tensor): walk its first axis by indexing */
      int64_t n = 0;
      if (!lang_len(vm, v, &n)) {
        lang_error_clear(vm);
        break;
      }
      if ((uint64_t)n > MAX_ITEMS)
        return lang_raise(vm, "MemoryError", "result too large (%lld items)", (long long)n);
      ObjSeq *l = lang_list_new(n > 0 ? (size_t)n : 0);
      for (int64_t i = 0; i < n; i++)
        if (!lang_getitem(vm, v, v_int(i), &l->items[i]))
          return false;
      it->src = v_obj(l);
      it->len = l->len;
      return true;
    }
    }
  }
  return lang_raise(vm, "TypeError", "'%s' object is not iterable", lang_type_name(v));
}

bool std_iter_next(StdIter *it, Value *out)
{
  if (it->pos >= it->len)
    return false;
  Value v = it->src;
  switch (v.o->kind) {
  case O_STR: {
    ObjStr *s = AS_STR(v);
    size_t n = s->ascii ? 1 : utf8_seqlen((unsigned char)s->data[it->byte]);
    if (it->byte + n > s->len)
      n = s->len - it->byte;
    *out = str_val(s->data + it->byte, n);
    it->byte += n;
    break;
  }
  case O_DICT: *out = v_obj(AS_DICT(v)->entries[it->pos].key); break;
  case O_RANGE: *out = range_item(AS_RANGE(v), it->pos); break;
  default: *out = AS_SEQ(v)->items[it->pos]; break;
  }
  it->pos++;
  return true;
}

bool std_iter_items(MistVM *vm, Value v, Value **items, size_t *n)
{
  StdIter it;
  if (!std_iter_init(vm, v, &it))
    return false;
  if (v_is_obj(it.src, O_TUPLE) || v_is_obj(it.src, O_LIST)) {
    *items = AS_SEQ(it.src)->items;
    *n = it.len;
    return true;
  }
  if (it.len > MAX_ITEMS)
    return lang_raise(vm, "MemoryError", "result too large (%zu items)", it.len);
  *n = it.len;
  *items = it.len ? lang_alloc(it.len * sizeof(Value)) : NULL;
  for (size_t i = 0; std_iter_next(&it, &(*items)[i]); i++)
    ;
  return true;
}

/* ---- printing and conversions ---- */

/* print(*values, sep=' ', end='\n') */
static bool bi_print(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"sep", "end", "file", "flush"};
  Value opt[4];
  if (!std_parse_args(vm, "print", ARGS_CLINIC, 0, NULL, kw, names, 4, 0, 0, true, opt))
    return false;
  const char *text[2] = {" ", "\n"};
  size_t len[2] = {1, 1};
  for (int i = 0; i < 2; i++) {
    if (!given_not_none(opt[i]))
      continue;
    if (!v_is_obj(opt[i], O_STR))
      return lang_raise(vm, "TypeError", "%s must be None or a string, not %s", names[i],
                        lang_type_name(opt[i]));
    text[i] = AS_STR(opt[i])->data;
    len[i] = AS_STR(opt[i])->len;
  }
  if (given_not_none(opt[2]))
    return lang_raise(vm, "TypeError", "print() cannot write to a file in Mist: output goes to the host");
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < argc; i++) {
    if (i > 0)
      sb_add(&sb, text[0], len[0]);
    if (!lang_tostr(vm, argv[i], &sb))
      return false;
  }
  sb_add(&sb, text[1], len[1]);
  lang_write(vm, sb.data, sb.len);
  *out = v_none();
  return true;
}

static bool bi_str(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"object"};
  Value a[1];
  if (!std_parse_args(vm, "str", ARGS_TAKES, argc, argv, kw, names, 1, 1, 0, true, a))
    return false;
  if (!given(a[0])) {
    *out = str_val("", 0);
    return true;
  }
  if (v_is_obj(a[0], O_STR)) {
    *out = a[0];
    return true;
  }
  StrBuf sb;
  sb_init(&sb);
  if (!lang_tostr(vm, a[0], &sb))
    return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

static bool bi_repr(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_one_arg(vm, "repr", argc, kw))
    return false;
  StrBuf sb;
  sb_init(&sb);
  if (!lang_repr(vm, argv[0], &sb))
    return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

/* format(value, format_spec='', /): the mini-language, as f-strings
 * use it (lang_format) */
static bool bi_format(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "format", kw))
    return false;
  if (argc < 1)
    return lang_raise(vm, "TypeError", "format expected at least 1 argument, got %d", argc);
  if (argc > 2)
    return lang_raise(vm, "TypeError", "format expected at most 2 arguments, got %d", argc);
  if (argc == 2 && !v_is_obj(argv[1], O_STR))
    return lang_raise(vm, "TypeError", "format() argument 2 must be str, not %s", lang_type_name(argv[1]));
  StrBuf sb;
  sb_init(&sb);
  const ObjStr *spec = argc == 2 ? AS_STR(argv[1]) : NULL;
  if (!lang_format(vm, argv[0], spec ? spec->data : "", spec ? spec->len : 0, &sb))
    return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

bool std_is_space(uint32_t c)
{
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

uint32_t std_utf8_decode(const char *s, size_t len, size_t *i)
{
  const unsigned char *p = (const unsigned char *)s + *i;
  size_t n = utf8_seqlen(p[0]);
  if (*i + n > len)
    n = len - *i;
  uint32_t c = n == 1 ? p[0] : n == 2 ? (p[0] & 0x1Fu) : n == 3 ? (p[0] & 0x0Fu) : (p[0] & 0x07u);
  for (size_t k = 1; k < n; k++)
    c = (c << 6) | (p[k] & 0x3Fu);
  *i += n;
  return c;
}

/* the length of the UTF-8 character ending just before s[end] */
static size_t utf8_back(const char *s, size_t end)
{
  size_t n = 1;
  while (n < end && n < 4 && ((unsigned char)s[end - n] & 0xC0) == 0x80)
    n++;
  return n;
}

static bool invalid_int_literal(MistVM *vm, ObjStr *s, int base)
{
  StrBuf sb;
  sb_init(&sb);
  if (!lang_repr(vm, v_obj(s), &sb))
    return false;
  size_t n = sb.len;
  if (n > 200) {   /* CPython prints at most 200 characters of the repr */
    size_t chars = 0, i = 0;
    while (i < sb.len && chars < 200) {
      i += utf8_seqlen((unsigned char)sb.data[i]);
      chars++;
    }
    n = i < sb.len ? i : sb.len;
  }
  return lang_raise(vm, "ValueError", "invalid literal for int() with base %d: %.*s", base, (int)n,
                    sb.data);
}

static int digit_value(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

/* int(s, base) with Python's rules: surrounding whitespace, a sign, a
 * prefix (0x, 0o, 0b) that base 0 infers and base 16/8/2 allows, and
 * single underscores between digits. */
static bool parse_int(MistVM *vm, ObjStr *str, int base, Value *out)
{
  const char *s = str->data;
  size_t b = 0, e = str->len;
  while (b < e) {
    size_t j = b;
    if (!std_is_space(std_utf8_decode(s, e, &j)))
      break;
    b = j;
  }
  while (e > b) {
    size_t n = utf8_back(s, e), j = e - n;
    if (!std_is_space(std_utf8_decode(s, e, &j)))
      break;
    e -= n;
  }
  bool neg = false;
  if (b < e && (s[b] == '+' || s[b] == '-'))
    neg = s[b++] == '-';
  int b0 = base;
  bool prefixed = false;
  if (e - b >= 2 && s[b] == '0') {
    char p = (char)(s[b + 1] | 0x20);
    int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (pb && (base == 0 || base == pb)) {
      base = pb;
      b += 2;
      prefixed = true;
    }
  }
  bool octal_zero = false;   /* base 0 without prefix: "0", "00" only, no "010" */
  if (base == 0) {
    base = 10;
    octal_zero = b < e && s[b] == '0';
  }
  if (prefixed && b < e && s[b] == '_')
    b++;
  uint64_t limit = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1, acc = 0;
  bool overflow = false, prev_digit = false;
  size_t ndigits = 0;
  for (size_t i = b; i < e; i++) {
    if (s[i] == '_') {
      if (!prev_digit || i + 1 == e)
        return invalid_int_literal(vm, str, b0);
      prev_digit = false;
      continue;
    }
    int d = digit_value(s[i]);
    if (d >= base || (octal_zero && d != 0))
      return invalid_int_literal(vm, str, b0);
    if (acc > (limit - (uint64_t)d) / (uint64_t)base)
      overflow = true;
    else
      acc = acc * (uint64_t)base + (uint64_t)d;
    prev_digit = true;
    ndigits++;
  }
  if (ndigits == 0)
    return invalid_int_literal(vm, str, b0);
  if (overflow)
    return lang_raise(vm, "OverflowError", "int() literal does not fit in a 64-bit int: %.200s",
                      str->data);
  *out = v_int(neg ? (int64_t)(0 - acc) : (int64_t)acc);
  return true;
}

/* int(), int(x), int(s, base) */
bool std_int(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"", "base"};
  Value a[2];
  if (!std_parse_args(vm, "int", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 0, true, a))
    return false;
  if (!given(a[0])) {
    if (given(a[1]))
      return lang_raise(vm, "TypeError", "int() missing string argument");
    *out = v_int(0);
    return true;
  }
  if (!given(a[1])) {
    if (v_is_obj(a[0], O_STR))
      return parse_int(vm, AS_STR(a[0]), 10, out);
    if (a[0].tag == V_INT) {
      *out = a[0];
      return true;
    }
    return lang_to_int(vm, a[0], out);
  }
  int64_t base = 0;
  if (!std_as_index(vm, a[1], &base))
    return false;
  if (!v_is_obj(a[0], O_STR))
    return lang_raise(vm, "TypeError", "int() can't convert non-string with explicit base");
  if (base != 0 && (base < 2 || base > 36))
    return lang_raise(vm, "ValueError", "int() base must be >= 2 and <= 36, or 0");
  return parse_int(vm, AS_STR(a[0]), (int)base, out);
}

bool std_float(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  Value a[1];
  if (!std_parse_args(vm, "float", ARGS_EXPECTED, argc, argv, kw, (const char *const[]){""}, 1,
                      1, 0, false, a))
    return false;
  if (!given(a[0])) {
    *out = v_float(0.0);
    return true;
  }
  return lang_to_float(vm, a[0], out);
}

/* bool(), bool(x) */
bool std_bool(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  Value a[1];
  if (!std_parse_args(vm, "bool", ARGS_EXPECTED, argc, argv, kw, (const char *const[]){""}, 1, 1,
                      0, false, a))
    return false;
  bool b = false;
  if (given(a[0]) && !truthy(vm, a[0], &b))
    return false;
  *out = v_bool(b);
  return true;
}

static bool to_seq(MistVM *vm, const char *fname, OKind kind, int argc, const Value *argv,
                   const KwArgs *kw, Value *out)
{
  Value a[1];
  if (!std_parse_args(vm, fname, ARGS_EXPECTED, argc, argv, kw, (const char *const[]){""}, 1, 1,
                      0, false, a))
    return false;
  if (!given(a[0])) {
    *out = v_obj(kind == O_LIST ? lang_list_new(0) : lang_tuple_new(0));
    return true;
  }
  if (v_is_obj(a[0], kind)) {   /* immutable: the same value will do */
    *out = a[0];
    return true;
  }
  Value *items = NULL;
  size_t n = 0;
  if (!std_iter_items(vm, a[0], &items, &n))
    return false;
  ObjSeq *s = kind == O_LIST ? lang_list_new(n) : lang_tuple_new(n);
  if (n)
    memcpy(s->items, items, n * sizeof(Value));
  *out = v_obj(s);
  return true;
}

static bool bi_list(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return to_seq(vm, "list", O_LIST, argc, argv, kw, out);
}

static bool bi_tuple(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return to_seq(vm, "tuple", O_TUPLE, argc, argv, kw, out);
}

static bool dict_key(MistVM *vm, Value k, ObjStr **out)
{
  if (!v_is_obj(k, O_STR))
    return lang_raise(vm, "TypeError", "dict keys must be str in Mist, not %s", lang_type_name(k));
  *out = AS_STR(k);
  return true;
}

/* dict(), dict(d), dict(pairs), each with name=value keywords added */
static bool bi_dict(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (argc > 1)
    return lang_raise(vm, "TypeError", "dict expected at most 1 argument, got %d", argc);
  if (argc == 1 && v_is_obj(argv[0], O_DICT) && kw_count(kw) == 0) {
    *out = argv[0];
    return true;
  }
  ObjDict *d = lang_dict_new();
  if (argc == 1 && v_is_obj(argv[0], O_DICT)) {
    ObjDict *src = AS_DICT(argv[0]);
    for (size_t i = 0; i < src->len; i++)
      lang_dict_put(d, src->entries[i].key, src->entries[i].value);
  } else if (argc == 1) {
    Value *items = NULL;
    size_t n = 0;
    if (!std_iter_items(vm, argv[0], &items, &n))
      return false;
    for (size_t i = 0; i < n; i++) {
      Value *pair = NULL;
      size_t np = 0;
      if (!std_iter_items(vm, items[i], &pair, &np)) {
        lang_error_clear(vm);
        return lang_raise(vm, "TypeError",
                          "cannot convert dictionary update sequence element #%zu to a sequence", i);
      }
      if (np != 2)
        return lang_raise(vm, "ValueError",
                          "dictionary update sequence element #%zu has length %zu; 2 is required",
                          i, np);
      ObjStr *key = NULL;
      if (!dict_key(vm, pair[0], &key))
        return false;
      lang_dict_put(d, key, pair[1]);
    }
  }
  for (int k = 0; k < kw_count(kw); k++)
    lang_dict_put(d, kw->names[k], kw->values[k]);
  *out = v_obj(d);
  return true;
}

/* range(stop), range(start, stop[, step]) */
bool std_range(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "range", kw))
    return false;
  if (argc < 1)
    return lang_raise(vm, "TypeError", "range expected at least 1 argument, got %d", argc);
  if (argc > 3)
    return lang_raise(vm, "TypeError", "range expected at most 3 arguments, got %d", argc);
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < argc; i++)
    if (!std_as_index(vm, argv[i], &v[i]))
      return false;
  if (argc == 1) {
    v[1] = v[0];
    v[0] = 0;
  }
  if (v[2] == 0)
    return lang_raise(vm, "ValueError", "range() arg 3 must not be zero");
  ObjRange *r = lang_range_new(v[0], v[1], v[2]);
  *out = v_obj(r);
  return true;
}

bool std_len(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_one_arg(vm, "len", argc, kw))
    return false;
  int64_t n = 0;
  if (!lang_len(vm, argv[0], &n))
    return false;
  *out = v_int(n);
  return true;
}

/* ---- numbers ---- */

bool std_abs(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (argc >= 1 && v_is_tensor(argv[0]))
    return std_tensor_abs(vm, argc, argv, kw, out);
  if (!std_one_arg(vm, "abs", argc, kw))
    return false;
  Value x = argv[0];
  switch (x.tag) {
  case V_BOOL: *out = v_int(x.b); return true;
  case V_FLOAT: *out = v_float(fabs(x.f)); return true;
  case V_INT:
    if (x.i == INT64_MIN)
      return lang_raise(vm, "OverflowError", "abs(%lld) does not fit in a 64-bit int",
                        (long long)x.i);
    *out = v_int(x.i < 0 ? -x.i : x.i);
    return true;
  default:
    return lang_raise(vm, "TypeError", "bad operand type for abs(): '%s'", lang_type_name(x));
  }
}

/* Round the integer x to a multiple of 10**k (k >= 1), ties to even. */
static bool round_int(MistVM *vm, int64_t x, int64_t k, Value *out)
{
  if (k > 38) {   /* 10**k > 2**127: every int rounds to 0 */
    *out = v_int(0);
    return true;
  }
  __int128 p = 1;
  for (int64_t i = 0; i < k; i++)
    p *= 10;
  __int128 a = x < 0 ? -(__int128)x : (__int128)x;
  __int128 q = a / p, r = a % p;
  if (2 * r > p || (2 * r == p && (q & 1)))
    q++;
  __int128 res = q * p;
  if (x < 0)
    res = -res;
  if (res > INT64_MAX || res < INT64_MIN)
    return lang_raise(vm, "OverflowError", "round() result does not fit in a 64-bit int");
  *out = v_int((int64_t)res);
  return true;
}

/* round(x, n) for a float: the correctly rounded decimal result, as
 * CPython computes it.  For n >= 0, printf's "%.*f" is exact and rounds
 * ties to even, and strtod reads the digits back correctly.  For n < 0
 * the integer part is printed exactly and rounded as digits. */
static bool round_float(MistVM *vm, double x, int64_t n, Value *out)
{
  if (!isfinite(x) || n > 323 || x == 0.0) {
    *out = v_float(x);
    return true;
  }
  if (n < -308) {
    *out = v_float(0.0 * x);
    return true;
  }
  char buf[800];
  if (n >= 0) {
    snprintf(buf, sizeof buf, "%.*f", (int)n, x);
    *out = v_float(strtod(buf, NULL));
    return true;
  }
  double t = trunc(fabs(x));
  bool frac = t != fabs(x);
  /* buf = '0' followed by the exact digits of t (at most 309) */
  buf[0] = '0';
  snprintf(buf + 1, sizeof buf - 1, "%.0f", t);
  size_t nd = strlen(buf), k = (size_t)-n;
  if (k >= nd) {   /* even the leading 0 is dropped: |x| < 10**(k-1) */
    *out = v_float(copysign(0.0, x));
    return true;
  }
  size_t cut = nd - k;     /* digits kept: buf[0..cut) */
  bool rest = frac;
  for (size_t i = cut + 1; i < nd; i++)
    rest |= buf[i] != '0';
  bool up = buf[cut] > '5' || (buf[cut] == '5' && (rest || ((buf[cut - 1] - '0') & 1)));
  for (size_t i = cut; i < nd; i++)
    buf[i] = '0';
  for (size_t i = cut; up && i-- > 0;) {
    if (buf[i] == '9') {
      buf[i] = '0';
    } else {
      buf[i]++;
      up = false;
    }
  }
  double r = strtod(buf, NULL);
  if (isinf(r))
    return lang_raise(vm, "OverflowError", "rounded value too large to represent");
  *out = v_float(copysign(r, x));
  return true;
}

/* round(x) -> int, ties to even; round(x, n) -> the type of x */
static bool bi_round(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"number", "ndigits"};
  Value a[2];
  if (argc >= 1 && v_is_tensor(argv[0]))
    return std_tensor_round(vm, argc, argv, kw, out);
  if (!std_parse_args(vm, "round", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 1, true, a))
    return false;
  Value x = a[0];
  if (!is_number(x))
    return lang_raise(vm, "TypeError", "type %s doesn't define __round__ method", lang_type_name(x));
  if (!given_not_none(a[1])) {
    if (x.tag != V_FLOAT) {
      *out = v_int(x.tag == V_BOOL ? x.b : x.i);
      return true;
    }
    double r = round(x.f);
    if (fabs(x.f - r) == 0.5)
      r = 2.0 * round(x.f / 2.0);
    if (isnan(r))
      return lang_raise(vm, "ValueError", "cannot convert float NaN to integer");
    if (isinf(r))
      return lang_raise(vm, "OverflowError", "cannot convert float infinity to integer");
    if (r < -9223372036854775808.0 || r >= 9223372036854775808.0)
      return lang_raise(vm, "OverflowError", "round() result does not fit in a 64-bit int");
    *out = v_int((int64_t)r);
    return true;
  }
  int64_t n = 0;
  if (!std_as_index(vm, a[1], &n))
    return false;
  if (x.tag == V_FLOAT)
    return round_float(vm, x.f, n, out);
  int64_t i = x.tag == V_BOOL ? x.b : x.i;
  if (n >= 0) {
    *out = v_int(i);
    return true;
  }
  return round_int(vm, i, n == INT64_MIN ? INT64_MAX : -n, out);
}

/* Whether max/min's arguments are a tensor reduction's: (t), (t, axis),
 * (t, axis, keepdims), with axis an int, a tuple or None, and axis= and
 * keepdims= in any mix.  With key= or default=, or a second argument
 * that is not an axis (max(t1, t2)), they are Python's max of an
 * iterable or of several items. */
static bool minmax_is_reduction(int argc, const Value *argv, const KwArgs *kw)
{
  if (argc < 1 || argc > 3 || !v_is_tensor(argv[0]))
    return false;
  for (int k = 0; k < kw_count(kw); k++)
    if (kw_is(kw->names[k], "key") || kw_is(kw->names[k], "default"))
      return false;
  return argc == 1 || argv[1].tag == V_INT || argv[1].tag == V_NONE ||
         v_is_obj(argv[1], O_TUPLE);
}

/* min and max: of one iterable or of several arguments, with key= and
 * default=.  Python keeps the first of equal items: min replaces the
 * best on item < best, max on item > best. */
static bool minmax(MistVM *vm, bool is_min, int argc, const Value *argv, const KwArgs *kw,
                   Value *out)
{
  const char *name = is_min ? "min" : "max";
  Value key = v_none(), dflt = v_unbound();
  /* max(t), max(t, 1), max(t, 1, True), max(t, axis=0, keepdims=True) */
  if (minmax_is_reduction(argc, argv, kw))
    return is_min ? std_tensor_min(vm, argc, argv, kw, out) : std_tensor_max(vm, argc, argv, kw, out);
  if (kw_count(kw) > 2)
    return lang_raise(vm, "TypeError", "%s() takes at most 2 keyword arguments (%d given)", name,
                      kw->n);
  for (int k = 0; k < kw_count(kw); k++) {
    if (kw_is(kw->names[k], "key"))
      key = kw->values[k];
    else if (kw_is(kw->names[k], "default"))
      dflt = kw->values[k];
    else
      return lang_raise(vm, "TypeError", "'%s' is an invalid keyword argument for %s()",
                        kw->names[k]->data, name);
  }
  if (argc == 0)
    return lang_raise(vm, "TypeError", "%s expected at least 1 argument, got 0", name);
  if (argc > 1 && given(dflt))
    return lang_raise(vm, "TypeError",
                      "Cannot specify a default for %s() with multiple positional arguments", name);
  StdIter it;
  if (argc == 1) {
    if (!std_iter_init(vm, argv[0], &it))
      return false;
  } else {
    ObjSeq *t = lang_tuple_new((size_t)argc);
    memcpy(t->items, argv, (size_t)argc * sizeof(Value));
    it.src = v_obj(t);
    it.pos = it.byte = 0;
    it.len = t->len;
  }
  Value best, bestkey, item, k;
  if (!std_iter_next(&it, &best)) {
    if (given(dflt)) {
      *out = dflt;
      return true;
    }
    return lang_raise(vm, "ValueError", "%s() arg is an empty sequence", name);
  }
  bool use_key = key.tag != V_NONE;
  bestkey = best;
  if (use_key && !std_call(vm, key, 1, &best, &bestkey))
    return false;
  for (size_t step = 0; std_iter_next(&it, &item); step++) {
    if (!poll(vm, step))
      return false;
    k = item;
    if (use_key && !std_call(vm, key, 1, &item, &k))
      return false;
    bool better;
    if (!compare(vm, is_min ? CMP_LT : CMP_GT, k, bestkey, &better))
      return false;
    if (better) {
      best = item;
      bestkey = k;
    }
  }
  *out = best;
  return true;
}

bool std_min(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return minmax(vm, true, argc, argv, kw, out);
}

bool std_max(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return minmax(vm, false, argc, argv, kw, out);
}

/* sum(iterable, start=0): added left to right with +, as Python does
 * (for floats too: no compensated summation). */
bool std_sum(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"", "start"};
  Value a[2];
  if (argc == 0)
    return lang_raise(vm, "TypeError", "sum() takes at least 1 positional argument (0 given)");
  if (v_is_tensor(argv[0]))   /* sum(t, axis=None, keepdims=False) */
    return std_tensor_sum(vm, argc, argv, kw, out);
  if (!std_parse_args(vm, "sum", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 1, true, a))
    return false;
  Value acc = given(a[1]) ? a[1] : v_int(0);
  if (v_is_obj(acc, O_STR))
    return lang_raise(vm, "TypeError", "sum() can't sum strings [use ''.join(seq) instead]");
  StdIter it;
  if (!std_iter_init(vm, a[0], &it))
    return false;
  Value item;
  for (size_t step = 0; std_iter_next(&it, &item); step++)
    if (!poll(vm, step) || !lang_arith(vm, OP_ADD, acc, item, &acc))
      return false;
  *out = acc;
  return true;
}

/* ---- functions over sequences ---- */

/* map(f, xs, ...) -> [f(x, ...) ...], as long as the shortest */
static bool bi_map(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "map", kw))
    return false;
  if (argc < 2)
    return lang_raise(vm, "TypeError", "map() must have at least two arguments.");
  int n = argc - 1;
  StdIter *its = lang_alloc((size_t)n * sizeof *its);
  size_t len = SIZE_MAX;
  for (int i = 0; i < n; i++) {
    if (!std_iter_init(vm, argv[i + 1], &its[i]))
      return false;
    if (its[i].len < len)
      len = its[i].len;
  }
  if (len > MAX_ITEMS)
    return lang_raise(vm, "MemoryError", "result too large (%zu items)", len);
  Value *args = lang_alloc((size_t)n * sizeof *args);
  ObjSeq *res = lang_list_new(len);
  for (size_t j = 0; j < len; j++) {
    for (int i = 0; i < n; i++)
      std_iter_next(&its[i], &args[i]);
    if (!std_call(vm, argv[0], n, args, &res->items[j]))
      return false;
  }
  *out = v_obj(res);
  return true;
}

/* zip(*xs, strict=False) -> [(x0, y0, ...) ...], as long as the shortest */
/* filter(function, iterable): the items for which function(item) is
 * truthy (all truthy items when function is None), as a list, as map
 * returns a list. */
static bool bi_filter(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "filter", kw))
    return false;
  if (argc != 2)
    return lang_raise(vm, "TypeError", "filter expected 2 argument%s, got %d", "s", argc);
  StdIter it;
  if (!std_iter_init(vm, argv[1], &it))
    return false;
  if (it.len > MAX_ITEMS)
    return lang_raise(vm, "MemoryError", "result too large (%zu items)", it.len);
  Value *kept = lang_alloc((it.len ? it.len : 1) * sizeof *kept);
  size_t n = 0;
  Value item;
  for (size_t step = 0; std_iter_next(&it, &item); step++) {
    if (!poll(vm, step))
      return false;
    Value test = item;
    if (argv[0].tag != V_NONE && !std_call(vm, argv[0], 1, &item, &test))
      return false;
    bool keep;
    if (!truthy(vm, test, &keep))
      return false;
    if (keep)
      kept[n++] = item;
  }
  *out = v_obj(list_of(kept, n));
  return true;
}

/* The type name a class-like builtin stands for in isinstance: int,
 * float, str... (Mist's types are their names, as type() returns). */
static const char *type_named_by(Value t)
{
  static const char *const types[] = {"int", "float", "str", "bool", "list", "tuple", "dict", "range", "tensor"};
  const char *name = v_is_obj(t, O_BUILTIN) ? AS_BUILTIN(t)->name : v_is_obj(t, O_STR) ? AS_STR(t)->data : NULL;
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(name, types[i]) == 0)
      return types[i];
  if (v_is_obj(t, O_STR))
    return name;   /* "function", "NoneType"...: what type() gives */
  return NULL;
}

/* isinstance(x, T): T is int, float, str, bool, list, tuple, dict,
 * range or tensor (the builtins), a type name as type() returns it
 * ("function", "NoneType"), or a tuple of those.  A bool is an int, as
 * in Python. */
static bool bi_isinstance(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "isinstance", kw))
    return false;
  if (argc != 2)
    return lang_raise(vm, "TypeError", "isinstance expected 2 arguments, got %d", argc);
  const Value *ts = &argv[1];
  size_t nt = 1;
  if (v_is_obj(argv[1], O_TUPLE)) {
    ts = AS_SEQ(argv[1])->items;
    nt = AS_SEQ(argv[1])->len;
  }
  const char *have = lang_type_name(argv[0]);
  bool yes = false;
  for (size_t i = 0; i < nt; i++) {
    const char *want = type_named_by(ts[i]);
    if (!want)
      return lang_raise(vm, "TypeError", "isinstance() arg 2 must be a type, a tuple of types, or a union");
    yes = yes || strcmp(have, want) == 0 || (argv[0].tag == V_BOOL && strcmp(want, "int") == 0);
  }
  *out = v_bool(yes);
  return true;
}

/* callable(x): functions, lambdas, builtins and bound methods. */
static bool bi_callable(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_one_arg(vm, "callable", argc, kw))
    return false;
  Value x = argv[0];
  *out = v_bool(v_is_obj(x, O_FUNC) || v_is_obj(x, O_BUILTIN) || v_is_obj(x, O_BOUND));
  return true;
}

/* exit(code=None), quit(code=None): stop the program, as Python's
 * SystemExit does: with status 0 for None, the int given, or 1 after
 * printing a str (as the error's message); an int's low byte, as the
 * process's status keeps it.  It travels up as an error
 * of kind SystemExit that hosts recognise (mist_exit_code). */
static bool exit_fn(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw)
{
  static const char *const names[] = {"code"};
  Value a[1];
  if (!std_parse_args(vm, fname, ARGS_TAKES, argc, argv, kw, names, 1, 1, 0, true, a))
    return false;
  int code = 0;
  const char *msg = "";
  if (a[0].tag == V_INT || a[0].tag == V_BOOL) {
    /* the status the process gets, as the OS keeps it (Python's too):
     * its low byte, so exit(-1) is 255, never the -1 that
     * mist_exit_code answers for "not an exit" */
    code = (int)((uint64_t)(a[0].tag == V_INT ? a[0].i : a[0].b) & 0xff);
  } else if (given_not_none(a[0])) {
    StrBuf sb;
    sb_init(&sb);
    if (!lang_tostr(vm, a[0], &sb))
      return false;
    msg = sb.data ? sb.data : "";
    code = 1;
  }
  lang_raise(vm, "SystemExit", "%s", msg);
  vm->err.exit_code = code;
  return false;
}

static bool bi_exit(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return exit_fn(vm, "exit", argc, argv, kw);
}

static bool bi_quit(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return exit_fn(vm, "quit", argc, argv, kw);
}

/* iter(x): an iterator over the items of x (an iterator: itself). */
static bool bi_iter(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "iter", kw))
    return false;
  if (argc != 1)
    return lang_raise(vm, "TypeError", "iter expected 1 argument, got %d", argc);
  if (v_is_obj(argv[0], O_ITER)) {
    *out = argv[0];
    return true;
  }
  Value *items;
  size_t n;
  if (!std_iter_items(vm, argv[0], &items, &n))
    return false;
  ObjIter *it = lang_alloc(sizeof *it);
  it->obj.kind = O_ITER;
  it->items = list_of(items, n);
  it->pos = 0;
  *out = v_obj(it);
  return true;
}

/* The item an iterator is at, or the default, or StopIteration. */
static bool next_item(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw,
                      ObjIter **it, Value *out)
{
  if (!std_no_kw(vm, fname, kw))
    return false;
  if (argc < 1 || argc > 2)
    return lang_raise(vm, "TypeError", "next expected at least 1 argument, got %d", argc);
  Value x = argv[0];
  if (!v_is_obj(x, O_ITER))
    return lang_raise(vm, "TypeError", "'%s' object is not an iterator", lang_type_name(x));
  *it = (ObjIter *)x.o;
  if ((*it)->pos < (*it)->items->len) {
    *out = (*it)->items->items[(*it)->pos];
    return true;
  }
  if (argc == 2) {
    *out = argv[1];
    return true;
  }
  return lang_raise(vm, "StopIteration", "StopIteration: the iterator has no more items");
}

/* next(it, default): the item it is at (it is an expression here, so
 * nothing else can see it move; `x = next(it)` is lowered to
 * _next_step, which moves it). */
static bool bi_next(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  ObjIter *it;
  return next_item(vm, "next", argc, argv, kw, &it, out);
}

/* _next_step(it, default): (next(it, default), it one step on). */
static bool bi_next_step(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  ObjIter *it;
  Value item;
  if (!next_item(vm, "next", argc, argv, kw, &it, &item))
    return false;
  ObjIter *on = lang_alloc(sizeof *on);
  *on = *it;
  if (on->pos < on->items->len)
    on->pos++;
  ObjSeq *pair = lang_tuple_new(2);
  pair->items[0] = item;
  pair->items[1] = v_obj(on);
  *out = v_obj(pair);
  return true;
}

static bool bi_zip(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"strict"};
  Value a[1];
  if (!std_parse_args(vm, "zip", ARGS_CLINIC, 0, NULL, kw, names, 1, 0, 0, true, a))
    return false;
  bool strict = false;
  if (given(a[0]) && !truthy(vm, a[0], &strict))
    return false;
  StdIter *its = argc ? lang_alloc((size_t)argc * sizeof *its) : NULL;
  size_t len = argc ? SIZE_MAX : 0;
  for (int i = 0; i < argc; i++) {
    if (!std_iter_init(vm, argv[i], &its[i]))
      return false;
    if (its[i].len < len)
      len = its[i].len;
  }
  if (strict && argc > 1) {
    /* Python pulls from each argument in turn: the first to run out is
     * shorter than those before it, or, if it is the first, any that
     * still has items is longer */
    int i = 0;
    while (its[i].len != len)
      i++;
    if (i > 0)
      return lang_raise(vm, "ValueError", "zip() argument %d is shorter than argument%s%d", i + 1,
                        i == 1 ? " " : "s 1-", i);
    for (int j = 1; j < argc; j++)
      if (its[j].len > len)
        return lang_raise(vm, "ValueError", "zip() argument %d is longer than argument%s%d",
                          j + 1, j == 1 ? " " : "s 1-", j);
  }
  if (len > MAX_ITEMS)
    return lang_raise(vm, "MemoryError", "result too large (%zu items)", len);
  ObjSeq *res = lang_list_new(len);
  for (size_t j = 0; j < len; j++) {
    ObjSeq *t = lang_tuple_new((size_t)argc);
    for (int i = 0; i < argc; i++)
      std_iter_next(&its[i], &t->items[i]);
    res->items[j] = v_obj(t);
  }
  *out = v_obj(res);
  return true;
}

/* enumerate(xs, start=0) -> [(start, x0), (start + 1, x1) ...] */
static bool bi_enumerate(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"iterable", "start"};
  Value a[2];
  if (!std_parse_args(vm, "enumerate", ARGS_CLINIC_NOPOS, argc, argv, kw, names, 2, 2, 1, true, a))
    return false;
  int64_t start = 0;
  if (given(a[1]) && !std_as_index(vm, a[1], &start))
    return false;
  Value *items = NULL;
  size_t n = 0;
  if (!std_iter_items(vm, a[0], &items, &n))
    return false;
  if (n > 0 && start > 0 && (uint64_t)start + (n - 1) > (uint64_t)INT64_MAX)
    return lang_raise(vm, "OverflowError", "enumerate() index does not fit in a 64-bit int");
  ObjSeq *res = lang_list_new(n);
  for (size_t i = 0; i < n; i++)
    res->items[i] = lang_tuple_of(2, v_int((int64_t)((uint64_t)start + i)), items[i]);
  *out = v_obj(res);
  return true;
}

/* Stable merge sort of idx[0..n) by keys[idx[.]], taking from the right
 * run only when right < left (the only comparison Python's sort makes). */
static bool merge_sort(MistVM *vm, const Value *keys, size_t *idx, size_t *tmp, size_t n)
{
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n - width; lo += 2 * width) {
      size_t mid = lo + width, hi = mid + width < n ? mid + width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        bool lt;
        if (!compare(vm, CMP_LT, keys[idx[j]], keys[idx[i]], &lt))
          return false;
        tmp[k++] = lt ? idx[j++] : idx[i++];
      }
      while (i < mid)
        tmp[k++] = idx[i++];
      while (j < hi)
        tmp[k++] = idx[j++];
      memcpy(idx + lo, tmp + lo, (hi - lo) * sizeof *idx);
    }
    if (width > n / 2)
      break;
  }
  return true;
}

static void reverse_values(Value *v, size_t n)
{
  for (size_t i = 0; i < n / 2; i++) {
    Value t = v[i];
    v[i] = v[n - 1 - i];
    v[n - 1 - i] = t;
  }
}

/* sorted(xs, key=None, reverse=False) -> a new list */
static bool bi_sorted(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"", "key", "reverse"};
  for (int k = 0; k < kw_count(kw); k++)
    if (!kw_is(kw->names[k], "key") && !kw_is(kw->names[k], "reverse"))
      return lang_raise(vm, "TypeError", "'%s' is an invalid keyword argument for sort()",
                        kw->names[k]->data);
  Value a[3];
  if (!std_parse_args(vm, "sorted", ARGS_EXPECTED, argc, argv, kw, names, 3, 1, 1, true, a))
    return false;
  int64_t reverse = 0;
  if (given(a[2]) && !std_as_index(vm, a[2], &reverse))
    return false;
  Value *src = NULL;
  size_t n = 0;
  if (!std_iter_items(vm, a[0], &src, &n))
    return false;
  Value *items = n ? lang_alloc(n * sizeof *items) : NULL;
  if (n)
    memcpy(items, src, n * sizeof *items);
  /* Python: reverse, sort stably, reverse again, so equal items keep their order */
  if (reverse)
    reverse_values(items, n);
  Value *keys = items;
  if (given_not_none(a[1]) && n > 0) {
    keys = lang_alloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
      if (!std_call(vm, a[1], 1, &items[i], &keys[i]))
        return false;
  }
  size_t *idx = lang_alloc_atomic((2 * n + 1) * sizeof *idx), *tmp = idx + n;
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  if (!merge_sort(vm, keys, idx, tmp, n))
    return false;
  ObjSeq *res = lang_list_new(n);
  for (size_t i = 0; i < n; i++)
    res->items[i] = items[idx[i]];
  if (reverse)
    reverse_values(res->items, n);
  *out = v_obj(res);
  return true;
}

/* reversed(xs) -> a list of xs's items, last first */
static bool bi_reversed(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "reversed", kw))
    return false;
  if (argc != 1)
    return lang_raise(vm, "TypeError", "reversed expected 1 argument, got %d", argc);
  Value x = argv[0];
  if (!(v_is_obj(x, O_STR) || v_is_obj(x, O_TUPLE) || v_is_obj(x, O_LIST) ||
        v_is_obj(x, O_DICT) || v_is_obj(x, O_RANGE)))
    return lang_raise(vm, "TypeError", "'%s' object is not reversible", lang_type_name(x));
  Value *items = NULL;
  size_t n = 0;
  if (!std_iter_items(vm, x, &items, &n))
    return false;
  ObjSeq *res = list_of(items, n);
  reverse_values(res->items, n);
  *out = v_obj(res);
  return true;
}

static bool any_all(MistVM *vm, bool is_any, int argc, const Value *argv, const KwArgs *kw,
                    Value *out)
{
  if (argc >= 1 && v_is_tensor(argv[0]))   /* any(t, axis=None, keepdims=False) */
    return is_any ? std_tensor_any(vm, argc, argv, kw, out) : std_tensor_all(vm, argc, argv, kw, out);
  if (!std_one_arg(vm, is_any ? "any" : "all", argc, kw))
    return false;
  StdIter it;
  if (!std_iter_init(vm, argv[0], &it))
    return false;
  Value item;
  for (size_t step = 0; std_iter_next(&it, &item); step++) {
    bool b;
    if (!poll(vm, step) || !truthy(vm, item, &b))
      return false;
    if (b == is_any) {
      *out = v_bool(is_any);
      return true;
    }
  }
  *out = v_bool(!is_any);
  return true;
}

static bool bi_any(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return any_all(vm, true, argc, argv, kw, out);
}

static bool bi_all(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return any_all(vm, false, argc, argv, kw, out);
}

/* ---- types, characters, digits ---- */

static bool bi_type(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (argc != 1 || kw_count(kw) > 0)
    return lang_raise(vm, "TypeError", "type() takes 1 or 3 arguments");
  /* one string per type name: the derivative rules ask type() of every
   * operand, so each kind's is kept once interned (vm->type_names; a
   * native class's name is looked up each time) */
  Value v = argv[0];
  int slot = v.tag != V_OBJ ? (int)v.tag : v.o->kind == O_NATIVE ? -1 : V_OBJ + (int)v.o->kind;
  if (slot >= 0 && vm->type_names[slot]) {
    *out = v_obj(vm->type_names[slot]);
    return true;
  }
  const char *name = lang_type_name(v);
  ObjStr *s = lang_intern(vm, name, strlen(name));
  if (slot >= 0) vm->type_names[slot] = s;
  *out = v_obj(s);
  return true;
}

static bool bi_ord(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_one_arg(vm, "ord", argc, kw))
    return false;
  if (!v_is_obj(argv[0], O_STR))
    return lang_raise(vm, "TypeError", "ord() expected string of length 1, but %s found",
                      lang_type_name(argv[0]));
  ObjStr *s = AS_STR(argv[0]);
  if (s->nchars != 1)
    return lang_raise(vm, "TypeError", "ord() expected a character, but string of length %zu found",
                      s->nchars);
  size_t i = 0;
  *out = v_int(std_utf8_decode(s->data, s->len, &i));
  return true;
}

static bool bi_chr(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  int64_t c = 0;
  if (!std_one_arg(vm, "chr", argc, kw) || !std_as_index(vm, argv[0], &c))
    return false;
  if (c < 0 || c >= 0x110000)
    return lang_raise(vm, "ValueError", "chr() arg not in range(0x110000)");
  if (c >= 0xD800 && c <= 0xDFFF)
    return lang_raise(vm, "ValueError",
                      "chr() arg is a surrogate (0x%llx), which a UTF-8 str cannot hold",
                      (long long)c);
  char b[4];
  size_t n = 0;
  if (c < 0x80) {
    b[0] = (char)c;
    n = 1;
  } else if (c < 0x800) {
    b[0] = (char)(0xC0 | (c >> 6));
    b[1] = (char)(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    b[0] = (char)(0xE0 | (c >> 12));
    b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[2] = (char)(0x80 | (c & 0x3F));
    n = 3;
  } else {
    b[0] = (char)(0xF0 | (c >> 18));
    b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[3] = (char)(0x80 | (c & 0x3F));
    n = 4;
  }
  *out = str_val(b, n);
  return true;
}

/* hex, oct, bin: "-0x1f" and friends */
static bool radix(MistVM *vm, const char *fname, int shift, char letter, int argc,
                  const Value *argv, const KwArgs *kw, Value *out)
{
  int64_t x = 0;
  if (!std_one_arg(vm, fname, argc, kw) || !std_as_index(vm, argv[0], &x))
    return false;
  uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  char buf[72], *p = buf + sizeof buf;
  do {
    *--p = "0123456789abcdef"[u & ((1u << shift) - 1)];
    u >>= shift;
  } while (u);
  *--p = letter;
  *--p = '0';
  if (x < 0)
    *--p = '-';
  *out = str_val(p, (size_t)(buf + sizeof buf - p));
  return true;
}

static bool bi_hex(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return radix(vm, "hex", 4, 'x', argc, argv, kw, out);
}

static bool bi_oct(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return radix(vm, "oct", 3, 'o', argc, argv, kw, out);
}

static bool bi_bin(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  return radix(vm, "bin", 1, 'b', argc, argv, kw, out);
}

/* divmod(a, b) -> (a // b, a % b) */
static bool bi_divmod(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "divmod", kw))
    return false;
  if (argc != 2)
    return lang_raise(vm, "TypeError", "divmod expected 2 arguments, got %d", argc);
  Value a = argv[0], b = argv[1], q, r;
  if (!is_number(a) || !is_number(b))
    return lang_raise(vm, "TypeError", "unsupported operand type(s) for divmod(): '%s' and '%s'",
                      lang_type_name(a), lang_type_name(b));
  bool zero = b.tag == V_FLOAT ? b.f == 0.0 : b.tag == V_INT ? b.i == 0 : !b.b;
  if (zero)
    return lang_raise(vm, "ZeroDivisionError", "%s",
                      a.tag == V_FLOAT || b.tag == V_FLOAT ? "float divmod()"
                                                           : "integer division or modulo by zero");
  if (!lang_arith(vm, OP_FLOORDIV, a, b, &q) || !lang_arith(vm, OP_MOD, a, b, &r))
    return false;
  *out = lang_tuple_of(2, q, r);
  return true;
}

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m)
{
  return (uint64_t)((unsigned __int128)a * b % m);
}

/* pow(base, exp, mod) for ints: Python's modular power, with a modular
 * inverse for a negative exponent; the result takes mod's sign. */
static bool powmod(MistVM *vm, int64_t base, int64_t exp, int64_t mod, Value *out)
{
  if (mod == 0)
    return lang_raise(vm, "ValueError", "pow() 3rd argument cannot be 0");
  uint64_t m = mod < 0 ? 0 - (uint64_t)mod : (uint64_t)mod;
  uint64_t ub = base < 0 ? 0 - (uint64_t)base : (uint64_t)base;
  uint64_t b = ub % m;
  if (base < 0 && b)
    b = m - b;
  uint64_t e = exp < 0 ? 0 - (uint64_t)exp : (uint64_t)exp;
  if (exp < 0) {   /* b = b**-1 mod m, by the extended Euclidean algorithm */
    __int128 r0 = m, r1 = b, t0 = 0, t1 = 1;
    while (r1) {
      __int128 q = r0 / r1, t;
      t = r0 - q * r1; r0 = r1; r1 = t;
      t = t0 - q * t1; t0 = t1; t1 = t;
    }
    if (r0 != 1)
      return lang_raise(vm, "ValueError", "base is not invertible for the given modulus");
    if (t0 < 0)
      t0 += m;
    b = (uint64_t)t0;
  }
  uint64_t r = 1 % m;
  for (; e; e >>= 1) {
    if (e & 1)
      r = mulmod(r, b, m);
    b = mulmod(b, b, m);
  }
  if (mod < 0 && r)
    r = r - m;   /* wraps to the negative value r - m, which fits */
  *out = v_int((int64_t)r);
  return true;
}

/* pow(base, exp[, mod]) */
bool std_pow(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"base", "exp", "mod"};
  Value a[3];
  if (!std_parse_args(vm, "pow", ARGS_CLINIC, argc, argv, kw, names, 3, 3, 2, true, a))
    return false;
  if (!given_not_none(a[2]))
    return lang_arith(vm, OP_POW, a[0], a[1], out);
  bool ints = true;
  for (int i = 0; i < 3; i++)
    ints &= a[i].tag == V_INT || a[i].tag == V_BOOL;
  if (!ints)
    return lang_raise(vm, "TypeError",
                      "pow() 3rd argument not allowed unless all arguments are integers");
  int64_t v[3];
  for (int i = 0; i < 3; i++)
    std_as_index(vm, a[i], &v[i]);
  return powmod(vm, v[0], v[1], v[2], out);
}

/* ---- the program's world ---- */

static bool bi_args(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_args(vm, "args", argc, kw))
    return false;
  ObjSeq *a = vm->argv;
  if (a && a->obj.kind == O_LIST)
    *out = v_obj(a);
  else
    *out = v_obj(a ? list_of(a->items, a->len) : lang_list_new(0));
  return true;
}

static bool bi_time(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_args(vm, "time", argc, kw))
    return false;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  *out = v_float((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
  return true;
}

/* set_device(name): where tensors live and compiled code runs.  This
 * build has the CPU only (devices/cpu), so "cpu" is where everything
 * already is, and "gpu" is an error saying why none is usable. */
static bool bi_set_device(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  if (!std_no_kw(vm, "set_device", kw))
    return false;
  if (argc != 1)
    return lang_raise(vm, "TypeError", "set_device() takes exactly one argument (%d given)", argc);
  if (!v_is_obj(argv[0], O_STR))
    return lang_raise(vm, "TypeError", "set_device() argument must be a str, not '%s'", lang_type_name(argv[0]));
  const char *name = AS_STR(argv[0])->data;
  if (strcmp(name, "gpu") == 0)
    return lang_raise(vm, "RuntimeError",
                      "set_device(\"gpu\"): no GPU is usable: this build of Mist has no GPU backend (tensors and compiled code stay on the CPU)");
  if (strcmp(name, "cpu") != 0)
    return lang_raise(vm, "ValueError", "set_device() argument must be \"cpu\" or \"gpu\", not '%s'", name);
  *out = v_none();
  return true;
}

/* input(prompt=''): the prompt written as print writes (flushed, so a
 * terminal shows it before the read), then a line of standard input
 * without its "\n" (a "\r" before it stays, as in Python, whose
 * standard input does not translate line ends); EOFError at the end of
 * the input. */
static bool bi_input(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  static const char *const names[] = {"prompt"};
  Value a[1];
  if (!std_parse_args(vm, "input", ARGS_EXPECTED, argc, argv, kw, names, 1, 1, 0, false, a))
    return false;
  if (vm->sandbox)
    return lang_raise(vm, "PermissionError", "standard input is not available in the sandbox");
  vm->effects++;
  if (given(a[0])) {
    StrBuf sb;
    sb_init(&sb);
    if (!lang_tostr(vm, a[0], &sb))
      return false;
    lang_write(vm, sb.data, sb.len);
  }
  fflush(stdout);
  StrBuf line;
  sb_init(&line);
  int c;
  while ((c = getchar()) != EOF && c != '\n')
    sb_addc(&line, (char)c);
  if (c == EOF && line.len == 0)
    return lang_raise(vm, "EOFError", "EOF when reading a line");
  const char *text = line.data ? line.data : "";
  size_t bad = lang_utf8_check(text, line.len);
  if (bad < line.len)
    return lang_raise(vm, "UnicodeDecodeError",
                      "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid start byte",
                      (unsigned char)text[bad], bad);
  *out = str_val(text, line.len);
  return true;
}

void std_register_builtins(MistVM *vm)
{
  enum { M = SELF_TENSOR };
  static const struct {
    const char *name;
    BuiltinFn fn;
    unsigned self_kinds;   /* M: a method of tensors too, t.name(...) */
  } table[] = {
    {"print", bi_print, 0},         {"str", bi_str, 0},             {"repr", bi_repr, 0},
    {"format", bi_format, 0},
    {"list", bi_list, 0},           {"tuple", bi_tuple, 0},
    {"dict", bi_dict, 0},           {"round", bi_round, M},         {"map", bi_map, 0},
    {"zip", bi_zip, 0},             {"enumerate", bi_enumerate, 0}, {"sorted", bi_sorted, 0},
    {"reversed", bi_reversed, 0},   {"any", bi_any, M},             {"all", bi_all, M},
    {"type", bi_type, 0},           {"ord", bi_ord, 0},             {"chr", bi_chr, 0},
    {"hex", bi_hex, 0},             {"oct", bi_oct, 0},             {"bin", bi_bin, 0},
    {"divmod", bi_divmod, 0},       {"args", bi_args, 0},           {"time", bi_time, 0},
    {"input", bi_input, 0},         {"set_device", bi_set_device, 0},
    {"filter", bi_filter, 0},       {"isinstance", bi_isinstance, 0}, {"callable", bi_callable, 0},
    {"exit", bi_exit, 0},           {"quit", bi_quit, 0},           {"iter", bi_iter, 0},
    {"next", bi_next, 0},           {"_next_step", bi_next_step, 0},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    lang_def_builtin(vm, table[i].name, table[i].fn, -1, -1)->self_kinds = table[i].self_kinds;
  lang_dict_put(vm->builtins, lang_intern(vm, "Ellipsis", 8), lang_ellipsis());
  std_register_methods(vm);
  std_register_help(vm);
  std_register_files(vm);
  std_register_show(vm);
  std_register_ops(vm);
  std_register_tensor(vm);
  std_register_io(vm);
  std_register_data(vm);
  std_register_progress(vm);
  std_register_optim(vm);
  std_register_ffi(vm);
}
