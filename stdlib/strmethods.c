/* strmethods.c: the methods of str, dict, list and tuple (x.split(...),
 * d.get(k), xs.index(v)...), and the mutating methods of lists and dicts,
 * which exist only to say how to write the update functionally.
 *
 * A method is a builtin in vm->methods, called with self as argv[0].
 * One name serves every type, so each method first checks self's type;
 * for another type it defers to the global builtin of the same name if
 * there is one (x.f(a) means f(x, a) in Mist), else raises Python's
 * AttributeError "'int' object has no attribute 'upper'".
 *
 * Strings are UTF-8: searching works on bytes (a match of valid UTF-8
 * in valid UTF-8 always falls on character boundaries) and indices
 * given or returned are counted in characters.  Case mapping is
 * Unicode's, as Python's (unicase.c); the isalpha/isdigit family is
 * ASCII-only: other characters count as neither letters nor digits
 * (isspace knows all of Python's whitespace).  Messages are Python 3.11's. */
#define _GNU_SOURCE   /* memmem */
#include "stdlib/builtins.h"

#include <stdio.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "ir/eval.h"
#include "lang/strbuf.h"
#include "stdlib/unicase.h"

/* The longest string a method will build: beyond it, MemoryError rather
 * than a failed allocation, which would stop the process.  The same
 * bound as lang/'s (16 GiB). */
#define STR_MAX ((size_t)1 << 34)

static bool too_long(MistVM *vm) { return lang_raise(vm, "MemoryError", "result too large"); }

static Value str_val(const char *s, size_t len) { return v_obj(lang_str_new(s, len)); }

/* ---- dispatch on self ---- */

/* self is not of the method's type: call the global builtin `name`, or
 * raise AttributeError. */
static bool not_mine(MistVM *vm, const char *name, BuiltinFn self_fn, int argc, const Value *argv,
                     const KwArgs *kw, Value *out)
{
  Value g;
  if (vm->builtins && lang_dict_get(vm->builtins, lang_str(name), &g) &&
      !(v_is_obj(g, O_BUILTIN) && AS_BUILTIN(g)->fn == self_fn)) {
    if (vm->call)
      return vm->call(vm, g, argc, argv, kw, out);
    if (v_is_obj(g, O_BUILTIN))
      return AS_BUILTIN(g)->fn(vm, argc, argv, kw, out);
  }
  if (argc < 1)
    return lang_raise(vm, "TypeError", "%s() needs an object to work on", name);
  return lang_raise(vm, "AttributeError", "'%s' object has no attribute '%s'",
                    lang_type_name(argv[0]), name);
}

#define METHOD(name) \
  static bool m_##name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

#define SELF_IS(kind) (argc >= 1 && v_is_obj(argv[0], kind))

/* ---- characters ---- */

static size_t seqlen(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* number of characters in s[0..b) */
static size_t byte_to_char(const ObjStr *s, size_t b)
{
  if (s->ascii)
    return b;
  size_t n = 0;
  for (size_t i = 0; i < b; i++)
    n += ((unsigned char)s->data[i] & 0xC0) != 0x80;
  return n;
}

/* the start of the character that ends at byte end */
static size_t char_before(const char *s, size_t end)
{
  size_t b = end - 1;
  while (b > 0 && end - b < 4 && ((unsigned char)s[b] & 0xC0) == 0x80)
    b--;
  return b;
}

static bool space_at(const char *s, size_t len, size_t i, size_t *next)
{
  *next = i;
  return std_is_space(std_utf8_decode(s, len, next));
}

static bool space_before(const char *s, size_t len, size_t end, size_t *start)
{
  size_t b = char_before(s, end), j = b;
  *start = b;
  return std_is_space(std_utf8_decode(s, len, &j));
}

static char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 32) : c; }
static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A str argument other than self, or Python's TypeError "[what ]must be
 * str, not int". */
static bool want_str(MistVM *vm, Value v, const char *what, ObjStr **out)
{
  if (!v_is_obj(v, O_STR))
    return lang_raise(vm, "TypeError", "%s%smust be str, not %s", what, *what ? " " : "",
                      lang_type_name(v));
  *out = AS_STR(v);
  return true;
}

/* start/end arguments of find, count, startswith...: None or an int */
static bool slice_index(MistVM *vm, Value v, int64_t *out)
{
  if (v.tag == V_UNBOUND || v.tag == V_NONE)
    return true;
  if (v.tag != V_INT && v.tag != V_BOOL)
    return lang_raise(vm, "TypeError",
                      "slice indices must be integers or None or have an __index__ method");
  return std_as_index(vm, v, out);
}

/* CPython's ADJUST_INDICES: negative counts from the end, then clamp */
static void adjust(int64_t *start, int64_t *end, int64_t len)
{
  if (*end > len)
    *end = len;
  else if (*end < 0 && (*end += len) < 0)
    *end = 0;
  if (*start < 0 && (*start += len) < 0)
    *start = 0;
}

/* ---- case ---- */

typedef enum { CASE_UPPER, CASE_LOWER, CASE_TITLE, CASE_CAPITALIZE, CASE_SWAP, CASE_FOLD } CaseOp;

/* Python's final-sigma rule: capital sigma at i lowercases to the final
 * form when a cased letter precedes it and none follows it (skipping
 * case-ignorable marks both ways). */
static bool final_sigma(const ObjStr *s, size_t i, size_t next)
{
  size_t j = i;
  bool before = false;
  while (j > 0) {
    j = char_before(s->data, j);
    size_t k = j;
    uint32_t c = std_utf8_decode(s->data, s->len, &k);
    if (std_is_case_ignorable(c))
      continue;
    before = std_is_cased(c);
    break;
  }
  if (!before)
    return false;
  for (size_t k = next; k < s->len;) {
    uint32_t c = std_utf8_decode(s->data, s->len, &k);
    if (!std_is_case_ignorable(c))
      return !std_is_cased(c);
  }
  return true;
}

static bool recase(MistVM *vm, const char *name, BuiltinFn self_fn, CaseOp op, int argc,
                   const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_args(vm, qual, argc - 1, kw))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  if (s->ascii) {
    char *t = lang_alloc_atomic(s->len + 1);
    bool prev_cased = false;
    for (size_t i = 0; i < s->len; i++) {
      char c = s->data[i];
      switch (op) {
      case CASE_UPPER: c = ascii_upper(c); break;
      case CASE_LOWER: case CASE_FOLD: c = ascii_lower(c); break;
      case CASE_SWAP: c = c >= 'a' && c <= 'z' ? ascii_upper(c) : ascii_lower(c); break;
      case CASE_CAPITALIZE: c = i == 0 ? ascii_upper(c) : ascii_lower(c); break;
      case CASE_TITLE:
        c = prev_cased ? ascii_lower(c) : ascii_upper(c);
        prev_cased = is_alpha(c);
        break;
      }
      t[i] = c;
    }
    *out = str_val(t, s->len);
    return true;
  }
  /* Unicode: a character may map to up to three (unicase.c) */
  if (s->len > STR_MAX / 3)
    return too_long(vm);
  char *t = lang_alloc_atomic(3 * s->len + 1);
  size_t n = 0;
  bool prev_cased = false;
  for (size_t i = 0, first = 1; i < s->len; first = 0) {
    size_t at = i;
    uint32_t c = std_utf8_decode(s->data, s->len, &i);
    StdCase to = STD_LOWER;
    bool keep = false;
    switch (op) {
    case CASE_UPPER: to = STD_UPPER; break;
    case CASE_LOWER: to = STD_LOWER; break;
    case CASE_FOLD: to = STD_FOLD; break;
    case CASE_SWAP:
      if (std_is_upper(c)) to = STD_LOWER;
      else if (std_is_lower(c)) to = STD_UPPER;
      else keep = true;
      break;
    case CASE_CAPITALIZE: to = first ? STD_TITLE : STD_LOWER; break;
    case CASE_TITLE:
      to = prev_cased ? STD_LOWER : STD_TITLE;
      prev_cased = std_is_cased(c);
      break;
    }
    if (keep) {
      memcpy(t + n, s->data + at, i - at);
      n += i - at;
    } else if (c == 0x3A3 && to == STD_LOWER) {
      n += lang_utf8_encode(final_sigma(s, at, i) ? 0x3C2 : 0x3C3, t + n);
    } else {
      n += std_case_map(c, to, t + n);
    }
  }
  *out = str_val(t, n);
  return true;
}

METHOD(upper) { return recase(vm, "upper", m_upper, CASE_UPPER, argc, argv, kw, out); }
METHOD(lower) { return recase(vm, "lower", m_lower, CASE_LOWER, argc, argv, kw, out); }
METHOD(casefold) { return recase(vm, "casefold", m_casefold, CASE_FOLD, argc, argv, kw, out); }
METHOD(title) { return recase(vm, "title", m_title, CASE_TITLE, argc, argv, kw, out); }
METHOD(capitalize) { return recase(vm, "capitalize", m_capitalize, CASE_CAPITALIZE, argc, argv, kw, out); }
METHOD(swapcase) { return recase(vm, "swapcase", m_swapcase, CASE_SWAP, argc, argv, kw, out); }

/* ---- predicates ---- */

typedef enum { IS_DIGIT, IS_ALPHA, IS_ALNUM, IS_SPACE, IS_UPPER, IS_LOWER } IsOp;

static bool predicate(MistVM *vm, const char *name, BuiltinFn self_fn, IsOp op, int argc,
                      const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_args(vm, qual, argc - 1, kw))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  bool ok = s->len > 0, cased = false;
  for (size_t i = 0; ok && i < s->len;) {
    char c = s->data[i];
    switch (op) {
    case IS_SPACE: {
      size_t j = 0;
      ok = space_at(s->data, s->len, i, &j);
      i = j;
      continue;
    }
    case IS_DIGIT: ok = is_digit(c); break;
    case IS_ALPHA: ok = is_alpha(c); break;
    case IS_ALNUM: ok = is_alpha(c) || is_digit(c); break;
    case IS_UPPER: ok = !(c >= 'a' && c <= 'z'); cased |= c >= 'A' && c <= 'Z'; break;
    case IS_LOWER: ok = !(c >= 'A' && c <= 'Z'); cased |= c >= 'a' && c <= 'z'; break;
    }
    i++;
  }
  if (op == IS_UPPER || op == IS_LOWER)
    ok = ok && cased;
  *out = v_bool(ok);
  return true;
}

METHOD(isdigit) { return predicate(vm, "isdigit", m_isdigit, IS_DIGIT, argc, argv, kw, out); }
METHOD(isalpha) { return predicate(vm, "isalpha", m_isalpha, IS_ALPHA, argc, argv, kw, out); }
METHOD(isalnum) { return predicate(vm, "isalnum", m_isalnum, IS_ALNUM, argc, argv, kw, out); }
METHOD(isspace) { return predicate(vm, "isspace", m_isspace, IS_SPACE, argc, argv, kw, out); }
METHOD(isupper) { return predicate(vm, "isupper", m_isupper, IS_UPPER, argc, argv, kw, out); }
METHOD(islower) { return predicate(vm, "islower", m_islower, IS_LOWER, argc, argv, kw, out); }

/* ---- strip ---- */

static bool in_chars(uint32_t c, const uint32_t *set, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] == c)
      return true;
  return false;
}

/* strip/lstrip/rstrip(chars=None): which = 1 left, 2 right, 3 both */
static bool strip(MistVM *vm, const char *name, BuiltinFn self_fn, int which, int argc,
                  const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_kw(vm, qual, kw))
    return false;
  if (argc > 2)
    return lang_raise(vm, "TypeError", "%s expected at most 1 argument, got %d", name, argc - 1);
  ObjStr *s = AS_STR(argv[0]);
  uint32_t *set = NULL;
  size_t nset = 0;
  bool ws = true;
  if (argc == 2 && argv[1].tag != V_NONE) {
    if (!v_is_obj(argv[1], O_STR))
      return lang_raise(vm, "TypeError", "%s arg must be None or str", name);
    ObjStr *chars = AS_STR(argv[1]);
    set = lang_alloc_atomic((chars->nchars + 1) * sizeof *set);
    for (size_t i = 0; i < chars->len && nset <= chars->nchars;)
      set[nset++] = std_utf8_decode(chars->data, chars->len, &i);
    ws = false;
  }
  size_t b = 0, e = s->len;
  if (which & 1) {
    while (b < e) {
      size_t j = b;
      uint32_t c = std_utf8_decode(s->data, s->len, &j);
      if (ws ? !std_is_space(c) : !in_chars(c, set, nset))
        break;
      b = j;
    }
  }
  if (which & 2) {
    while (e > b) {
      size_t start = char_before(s->data, e), j = start;
      uint32_t c = std_utf8_decode(s->data, s->len, &j);
      if (ws ? !std_is_space(c) : !in_chars(c, set, nset))
        break;
      e = start;
    }
  }
  *out = b == 0 && e == s->len ? argv[0] : str_val(s->data + b, e - b);
  return true;
}

METHOD(strip) { return strip(vm, "strip", m_strip, 3, argc, argv, kw, out); }
METHOD(lstrip) { return strip(vm, "lstrip", m_lstrip, 1, argc, argv, kw, out); }
METHOD(rstrip) { return strip(vm, "rstrip", m_rstrip, 2, argc, argv, kw, out); }

/* ---- split and join ---- */

typedef struct Vec {
  Value *v;
  size_t n, cap;
} Vec;

static void vec_push(Vec *a, Value x)
{
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 8;
    a->v = a->v ? lang_realloc(a->v, a->cap * sizeof(Value)) : lang_alloc(a->cap * sizeof(Value));
  }
  a->v[a->n++] = x;
}

static Value vec_list(Vec *a, bool reversed)
{
  ObjSeq *l = lang_list_new(a->n);
  for (size_t i = 0; i < a->n; i++)
    l->items[i] = a->v[reversed ? a->n - 1 - i : i];
  return v_obj(l);
}

/* the last occurrence of needle in hay[0..n), or NULL */
static const char *memrmem(const char *hay, size_t n, const char *needle, size_t m)
{
  if (m > n)
    return NULL;
  for (size_t i = n - m + 1; i-- > 0;)
    if (memcmp(hay + i, needle, m) == 0)
      return hay + i;
  return NULL;
}

/* split(sep=None, maxsplit=-1) and rsplit: CPython's algorithms */
static bool split(MistVM *vm, const char *name, BuiltinFn self_fn, bool right, int argc,
                  const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  static const char *const names[] = {"sep", "maxsplit"};
  Value a[2];
  if (!std_parse_args(vm, name, ARGS_CLINIC, argc - 1, argv + 1, kw, names, 2, 2, 0, true, a))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  int64_t maxsplit = -1;
  if (a[1].tag != V_UNBOUND && !std_as_index(vm, a[1], &maxsplit))
    return false;
  uint64_t count = maxsplit < 0 ? UINT64_MAX : (uint64_t)maxsplit;
  const char *p = s->data;
  size_t len = s->len;
  Vec v = {0};
  if (a[0].tag == V_UNBOUND || a[0].tag == V_NONE) {
    if (!right) {
      size_t i = 0, j, nx;
      while (count-- > 0) {
        while (i < len && space_at(p, len, i, &nx))
          i = nx;
        if (i == len)
          break;
        j = i;
        while (i < len && !space_at(p, len, i, &nx))
          i = nx;
        vec_push(&v, str_val(p + j, i - j));
      }
      while (i < len && space_at(p, len, i, &nx))
        i = nx;
      if (i < len)
        vec_push(&v, str_val(p + i, len - i));
    } else {
      size_t e = len, j, pv;   /* e: end of the unsplit part */
      while (count-- > 0) {
        while (e > 0 && space_before(p, len, e, &pv))
          e = pv;
        if (e == 0)
          break;
        j = e;
        while (e > 0 && !space_before(p, len, e, &pv))
          e = pv;
        vec_push(&v, str_val(p + e, j - e));
      }
      while (e > 0 && space_before(p, len, e, &pv))
        e = pv;
      if (e > 0)
        vec_push(&v, str_val(p, e));
    }
    *out = vec_list(&v, right);
    return true;
  }
  if (!v_is_obj(a[0], O_STR))
    return lang_raise(vm, "TypeError", "must be str or None, not %s", lang_type_name(a[0]));
  ObjStr *sep = AS_STR(a[0]);
  if (sep->len == 0)
    return lang_raise(vm, "ValueError", "empty separator");
  if (!right) {
    size_t i = 0;
    const char *hit;
    while (count-- > 0 && (hit = memmem(p + i, len - i, sep->data, sep->len))) {
      vec_push(&v, str_val(p + i, (size_t)(hit - (p + i))));
      i = (size_t)(hit - p) + sep->len;
    }
    vec_push(&v, str_val(p + i, len - i));
  } else {
    size_t j = len;
    const char *hit;
    while (count-- > 0 && (hit = memrmem(p, j, sep->data, sep->len))) {
      size_t at = (size_t)(hit - p);
      vec_push(&v, str_val(hit + sep->len, j - at - sep->len));
      j = at;
    }
    vec_push(&v, str_val(p, j));
  }
  *out = vec_list(&v, right);
  return true;
}

METHOD(split) { return split(vm, "split", m_split, false, argc, argv, kw, out); }
METHOD(rsplit) { return split(vm, "rsplit", m_rsplit, true, argc, argv, kw, out); }

METHOD(join)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "join", m_join, argc, argv, kw, out);
  if (!std_one_arg(vm, "str.join", argc - 1, kw))
    return false;
  ObjStr *sep = AS_STR(argv[0]);
  Value *items = NULL;
  size_t n = 0;
  if (!std_iter_items(vm, argv[1], &items, &n)) {
    if (vm->err.kind && strcmp(vm->err.kind, "TypeError") == 0) {
      lang_error_clear(vm);
      return lang_raise(vm, "TypeError", "can only join an iterable");
    }
    return false;
  }
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    if (!v_is_obj(items[i], O_STR))
      return lang_raise(vm, "TypeError", "sequence item %zu: expected str instance, %s found", i,
                        lang_type_name(items[i]));
    total += AS_STR(items[i])->len + (i ? sep->len : 0);
    if (total > STR_MAX)
      return too_long(vm);
  }
  if (n == 1) {
    *out = items[0];
    return true;
  }
  char *t = lang_alloc_atomic(total + 1), *q = t;
  for (size_t i = 0; i < n; i++) {
    if (i) {
      memcpy(q, sep->data, sep->len);
      q += sep->len;
    }
    memcpy(q, AS_STR(items[i])->data, AS_STR(items[i])->len);
    q += AS_STR(items[i])->len;
  }
  *out = str_val(t, total);
  return true;
}

/* replace(old, new, count=-1) */
METHOD(replace)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "replace", m_replace, argc, argv, kw, out);
  if (!std_no_kw(vm, "str.replace", kw))
    return false;
  if (argc - 1 < 2)
    return lang_raise(vm, "TypeError", "replace expected at least 2 arguments, got %d", argc - 1);
  if (argc - 1 > 3)
    return lang_raise(vm, "TypeError", "replace expected at most 3 arguments, got %d", argc - 1);
  ObjStr *s = AS_STR(argv[0]), *old = NULL, *rep = NULL;
  if (!want_str(vm, argv[1], "replace() argument 1", &old) ||
      !want_str(vm, argv[2], "replace() argument 2", &rep))
    return false;
  int64_t maxcount = -1;
  if (argc == 4 && !std_as_index(vm, argv[3], &maxcount))
    return false;
  uint64_t limit = maxcount < 0 ? UINT64_MAX : (uint64_t)maxcount;
  /* count the replacements first, to size the result */
  uint64_t n = 0;
  if (old->len == 0) {
    n = s->nchars + 1 < limit ? s->nchars + 1 : limit;
  } else {
    const char *p = s->data, *end = s->data + s->len, *hit;
    while (n < limit && (hit = memmem(p, (size_t)(end - p), old->data, old->len))) {
      n++;
      p = hit + old->len;
    }
  }
  if (n == 0) {
    *out = argv[0];
    return true;
  }
  if (rep->len > old->len && (s->len > STR_MAX || rep->len - old->len > (STR_MAX - s->len) / n))
    return too_long(vm);
  StrBuf sb;
  sb_init(&sb);
  const char *p = s->data, *end = s->data + s->len;
  if (old->len == 0) {
    for (uint64_t k = 0; k < n; k++) {
      sb_add(&sb, rep->data, rep->len);
      if (p < end) {
        size_t c = seqlen((unsigned char)*p);
        sb_add(&sb, p, c);
        p += c;
      }
    }
  } else {
    for (uint64_t k = 0; k < n; k++) {
      const char *hit = memmem(p, (size_t)(end - p), old->data, old->len);
      sb_add(&sb, p, (size_t)(hit - p));
      sb_add(&sb, rep->data, rep->len);
      p = hit + old->len;
    }
  }
  sb_add(&sb, p, (size_t)(end - p));
  *out = v_obj(sb_to_str(&sb));
  return true;
}

/* ---- searching ---- */

typedef enum { FIND, RFIND, INDEX, RINDEX, COUNT } FindOp;

/* find/rfind/index/rindex/count(sub, start=None, end=None) on a str */
static bool str_find(MistVM *vm, const char *name, FindOp op, int argc, const Value *argv,
                     const KwArgs *kw, Value *out)
{
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_kw(vm, qual, kw))
    return false;
  if (argc - 1 < 1)
    return lang_raise(vm, "TypeError", "%s() takes at least 1 argument (0 given)", name);
  if (argc - 1 > 3)
    return lang_raise(vm, "TypeError", "%s() takes at most 3 arguments (%d given)", name, argc - 1);
  ObjStr *s = AS_STR(argv[0]), *sub = NULL;
  if (!want_str(vm, argv[1], "", &sub))
    return false;
  int64_t len = (int64_t)s->nchars, start = 0, end = INT64_MAX;
  if ((argc > 2 && !slice_index(vm, argv[2], &start)) ||
      (argc > 3 && !slice_index(vm, argv[3], &end)))
    return false;
  adjust(&start, &end, len);
  int64_t found = -1, count = 0;
  if (end - start >= (int64_t)sub->nchars) {
    size_t bs = lang_str_offset(s, (size_t)start), be = lang_str_offset(s, (size_t)end);
    const char *p = s->data + bs, *stop = s->data + be, *hit;
    if (op == COUNT) {
      if (sub->len == 0) {
        count = end - start + 1;
      } else {
        while ((hit = memmem(p, (size_t)(stop - p), sub->data, sub->len))) {
          count++;
          p = hit + sub->len;
        }
      }
    } else if (op == FIND || op == INDEX) {
      hit = sub->len ? memmem(p, (size_t)(stop - p), sub->data, sub->len) : p;
      if (hit)
        found = (int64_t)byte_to_char(s, (size_t)(hit - s->data));
    } else {
      hit = sub->len ? memrmem(p, (size_t)(stop - p), sub->data, sub->len) : stop;
      if (hit)
        found = (int64_t)byte_to_char(s, (size_t)(hit - s->data));
    }
  }
  if (op == COUNT) {
    *out = v_int(count);
    return true;
  }
  if (found < 0 && (op == INDEX || op == RINDEX))
    return lang_raise(vm, "ValueError", "substring not found");
  *out = v_int(found);
  return true;
}

/* index(value, start=0, end=len) and count(value) on a list or tuple */
static bool seq_find(MistVM *vm, bool is_count, int argc, const Value *argv, const KwArgs *kw,
                     Value *out)
{
  bool is_list = v_is_obj(argv[0], O_LIST);
  const char *tname = is_list ? "list" : "tuple";
  char qual[32];
  snprintf(qual, sizeof qual, "%s.%s", tname, is_count ? "count" : "index");
  ObjSeq *xs = AS_SEQ(argv[0]);
  if (is_count) {
    if (!std_one_arg(vm, qual, argc - 1, kw))
      return false;
    int64_t n = 0;
    for (size_t i = 0; i < xs->len; i++)
      n += lang_equal(xs->items[i], argv[1]);
    *out = v_int(n);
    return true;
  }
  if (!std_no_kw(vm, qual, kw))
    return false;
  if (argc - 1 < 1)
    return lang_raise(vm, "TypeError", "index expected at least 1 argument, got 0");
  if (argc - 1 > 3)
    return lang_raise(vm, "TypeError", "index expected at most 3 arguments, got %d", argc - 1);
  int64_t len = (int64_t)xs->len, start = 0, end = len;
  for (int i = 2; i < argc; i++) {
    Value v = argv[i];
    if (v.tag != V_INT && v.tag != V_BOOL)
      return lang_raise(vm, "TypeError", "slice indices must be integers or have an __index__ method");
    std_as_index(vm, v, i == 2 ? &start : &end);
  }
  adjust(&start, &end, len);
  for (int64_t i = start; i < end; i++) {
    if (lang_equal(xs->items[i], argv[1])) {
      *out = v_int(i);
      return true;
    }
  }
  if (!is_list)
    return lang_raise(vm, "ValueError", "tuple.index(x): x not in tuple");
  StrBuf sb;
  sb_init(&sb);
  if (!lang_repr(vm, argv[1], &sb))
    return false;
  return lang_raise(vm, "ValueError", "%s is not in list", sb.data);
}


METHOD(find)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "find", m_find, argc, argv, kw, out);
  return str_find(vm, "find", FIND, argc, argv, kw, out);
}

METHOD(rfind)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "rfind", m_rfind, argc, argv, kw, out);
  return str_find(vm, "rfind", RFIND, argc, argv, kw, out);
}

METHOD(rindex)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "rindex", m_rindex, argc, argv, kw, out);
  return str_find(vm, "rindex", RINDEX, argc, argv, kw, out);
}

METHOD(index)
{
  if (SELF_IS(O_STR))
    return str_find(vm, "index", INDEX, argc, argv, kw, out);
  if (SELF_IS(O_LIST) || SELF_IS(O_TUPLE))
    return seq_find(vm, false, argc, argv, kw, out);
  return not_mine(vm, "index", m_index, argc, argv, kw, out);
}

METHOD(count)
{
  if (SELF_IS(O_STR))
    return str_find(vm, "count", COUNT, argc, argv, kw, out);
  if (SELF_IS(O_LIST) || SELF_IS(O_TUPLE))
    return seq_find(vm, true, argc, argv, kw, out);
  return not_mine(vm, "count", m_count, argc, argv, kw, out);
}

/* startswith/endswith(prefix, start=None, end=None): CPython's tailmatch */
static bool affix(MistVM *vm, const char *name, BuiltinFn self_fn, bool suffix, int argc,
                  const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_kw(vm, qual, kw))
    return false;
  if (argc - 1 < 1)
    return lang_raise(vm, "TypeError", "%s() takes at least 1 argument (0 given)", name);
  if (argc - 1 > 3)
    return lang_raise(vm, "TypeError", "%s() takes at most 3 arguments (%d given)", name, argc - 1);
  ObjStr *s = AS_STR(argv[0]);
  Value pre = argv[1];
  const Value *subs = &pre;
  size_t nsubs = 1;
  if (v_is_obj(pre, O_TUPLE)) {
    subs = AS_SEQ(pre)->items;
    nsubs = AS_SEQ(pre)->len;
  } else if (!v_is_obj(pre, O_STR)) {
    return lang_raise(vm, "TypeError", "%s first arg must be str or a tuple of str, not %s", name,
                      lang_type_name(pre));
  }
  int64_t len = (int64_t)s->nchars, start = 0, end = INT64_MAX;
  if ((argc > 2 && !slice_index(vm, argv[2], &start)) ||
      (argc > 3 && !slice_index(vm, argv[3], &end)))
    return false;
  adjust(&start, &end, len);
  for (size_t k = 0; k < nsubs; k++) {
    if (!v_is_obj(subs[k], O_STR))
      return lang_raise(vm, "TypeError", "tuple for %s must only contain str, not %s", name,
                        lang_type_name(subs[k]));
    ObjStr *sub = AS_STR(subs[k]);
    if (end - (int64_t)sub->nchars < start)
      continue;
    size_t at = suffix ? lang_str_offset(s, (size_t)end) - sub->len : lang_str_offset(s, (size_t)start);
    if (memcmp(s->data + at, sub->data, sub->len) == 0) {
      *out = v_bool(true);
      return true;
    }
  }
  *out = v_bool(false);
  return true;
}

METHOD(startswith) { return affix(vm, "startswith", m_startswith, false, argc, argv, kw, out); }
METHOD(endswith) { return affix(vm, "endswith", m_endswith, true, argc, argv, kw, out); }

/* ---- padding ---- */

/* width - nchars copies of fill (bytes flen) on the left and right */
static bool pad(MistVM *vm, ObjStr *s, size_t left, size_t right, const char *fill, size_t flen,
                Value *out)
{
  if (s->len > STR_MAX || left + right > (STR_MAX - s->len) / flen)
    return too_long(vm);
  size_t total = s->len + (left + right) * flen;
  char *t = lang_alloc_atomic(total + 1), *q = t;
  for (size_t i = 0; i < left; i++, q += flen)
    memcpy(q, fill, flen);
  memcpy(q, s->data, s->len);
  q += s->len;
  for (size_t i = 0; i < right; i++, q += flen)
    memcpy(q, fill, flen);
  *out = str_val(t, total);
  return true;
}

/* ljust/rjust/center(width, fillchar=' '): how = 0 left, 1 right, 2 center */
static bool justify(MistVM *vm, const char *name, BuiltinFn self_fn, int how, int argc,
                    const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_no_kw(vm, qual, kw))
    return false;
  if (argc - 1 < 1)
    return lang_raise(vm, "TypeError", "%s expected at least 1 argument, got 0", name);
  if (argc - 1 > 2)
    return lang_raise(vm, "TypeError", "%s expected at most 2 arguments, got %d", name, argc - 1);
  ObjStr *s = AS_STR(argv[0]);
  int64_t width = 0;
  if (!std_as_index(vm, argv[1], &width))
    return false;
  const char *fill = " ";
  size_t flen = 1;
  if (argc == 3) {
    if (!v_is_obj(argv[2], O_STR))
      return lang_raise(vm, "TypeError", "The fill character must be a unicode character, not %s",
                        lang_type_name(argv[2]));
    if (AS_STR(argv[2])->nchars != 1)
      return lang_raise(vm, "TypeError", "The fill character must be exactly one character long");
    fill = AS_STR(argv[2])->data;
    flen = AS_STR(argv[2])->len;
  }
  if (width <= (int64_t)s->nchars) {
    *out = argv[0];
    return true;
  }
  uint64_t marg = (uint64_t)width - s->nchars, left;
  if (how == 0)
    left = 0;
  else if (how == 1)
    left = marg;
  else
    left = marg / 2 + (marg & (uint64_t)width & 1);
  if (marg > STR_MAX)
    return too_long(vm);
  return pad(vm, s, (size_t)left, (size_t)(marg - left), fill, flen, out);
}

METHOD(ljust) { return justify(vm, "ljust", m_ljust, 0, argc, argv, kw, out); }
METHOD(rjust) { return justify(vm, "rjust", m_rjust, 1, argc, argv, kw, out); }
METHOD(center) { return justify(vm, "center", m_center, 2, argc, argv, kw, out); }

METHOD(zfill)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "zfill", m_zfill, argc, argv, kw, out);
  if (!std_one_arg(vm, "str.zfill", argc - 1, kw))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  int64_t width = 0;
  if (!std_as_index(vm, argv[1], &width))
    return false;
  if (width <= (int64_t)s->nchars) {
    *out = argv[0];
    return true;
  }
  uint64_t fill = (uint64_t)width - s->nchars;
  if (fill > STR_MAX)
    return too_long(vm);
  Value padded;
  if (!pad(vm, s, (size_t)fill, 0, "0", 1, &padded))
    return false;
  ObjStr *t = AS_STR(padded);
  if (s->len > 0 && (s->data[0] == '+' || s->data[0] == '-')) {
    /* the sign moves in front of the zeros; t is still ours to change */
    t->data[0] = s->data[0];
    t->data[fill] = '0';
  }
  *out = padded;
  return true;
}

/* partition/rpartition(sep): (head, sep, tail) at the first (last)
 * match, or (s, '', '') / ('', '', s) without one */
static bool partition(MistVM *vm, const char *name, BuiltinFn self_fn, bool right, int argc,
                      const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "str.%s", name);
  if (!std_one_arg(vm, qual, argc - 1, kw))
    return false;
  if (!v_is_obj(argv[1], O_STR))
    return lang_raise(vm, "TypeError", "must be str, not %s", lang_type_name(argv[1]));
  ObjStr *s = AS_STR(argv[0]), *sep = AS_STR(argv[1]);
  if (sep->len == 0)
    return lang_raise(vm, "ValueError", "empty separator");
  const char *hit = right ? memrmem(s->data, s->len, sep->data, sep->len)
                          : memmem(s->data, s->len, sep->data, sep->len);
  ObjSeq *t = lang_tuple_new(3);
  Value empty = str_val("", 0);
  if (!hit) {
    t->items[0] = right ? empty : argv[0];
    t->items[1] = empty;
    t->items[2] = right ? argv[0] : empty;
  } else {
    size_t at = (size_t)(hit - s->data);
    t->items[0] = str_val(s->data, at);
    t->items[1] = argv[1];
    t->items[2] = str_val(hit + sep->len, s->len - at - sep->len);
  }
  *out = v_obj(t);
  return true;
}

METHOD(partition) { return partition(vm, "partition", m_partition, false, argc, argv, kw, out); }
METHOD(rpartition) { return partition(vm, "rpartition", m_rpartition, true, argc, argv, kw, out); }

/* The length of the line break at s[i] (Python's: \n, \r, \r\n, \v, \f,
 * \x1c-\x1e, \x85, U+2028, U+2029), or 0. */
static size_t line_break_at(const char *s, size_t len, size_t i)
{
  unsigned char c = (unsigned char)s[i];
  if (c == '\r') return i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
  if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) return 1;
  if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] == 0x85) return 2;
  if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
      ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9))
    return 3;
  return 0;
}

/* splitlines(keepends=False) */
METHOD(splitlines)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "splitlines", m_splitlines, argc, argv, kw, out);
  static const char *const names[] = {"keepends"};
  Value a[1];
  if (!std_parse_args(vm, "splitlines", ARGS_CLINIC, argc - 1, argv + 1, kw, names, 1, 1, 0, true, a))
    return false;
  bool keep = false;
  if (a[0].tag != V_UNBOUND && !lang_truthy(vm, a[0], &keep))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  Vec v = {0};
  size_t start = 0;
  for (size_t i = 0; i < s->len;) {
    size_t n = line_break_at(s->data, s->len, i);
    if (!n) {
      i++;
      continue;
    }
    vec_push(&v, str_val(s->data + start, i - start + (keep ? n : 0)));
    i += n;
    start = i;
  }
  if (start < s->len)
    vec_push(&v, str_val(s->data + start, s->len - start));
  *out = vec_list(&v, false);
  return true;
}

/* expandtabs(tabsize=8): each tab to spaces up to the next column that
 * is a multiple of tabsize, columns counted in characters and restarted
 * by \n and \r */
METHOD(expandtabs)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "expandtabs", m_expandtabs, argc, argv, kw, out);
  static const char *const names[] = {"tabsize"};
  Value a[1];
  if (!std_parse_args(vm, "expandtabs", ARGS_CLINIC, argc - 1, argv + 1, kw, names, 1, 1, 0, true, a))
    return false;
  int64_t tab = 8;
  if (a[0].tag != V_UNBOUND && !std_as_index(vm, a[0], &tab))
    return false;
  ObjStr *s = AS_STR(argv[0]);
  StrBuf sb;
  sb_init(&sb);
  uint64_t col = 0;
  for (size_t i = 0; i < s->len; i++) {
    char c = s->data[i];
    if (c == '\t') {
      if (tab > 0) {
        uint64_t n = (uint64_t)tab - col % (uint64_t)tab;
        if (sb.len + n > STR_MAX)
          return too_long(vm);
        for (uint64_t k = 0; k < n; k++)
          sb_addc(&sb, ' ');
        col += n;
      }
      continue;
    }
    sb_addc(&sb, c);
    if (c == '\n' || c == '\r')
      col = 0;
    else if (((unsigned char)c & 0xc0) != 0x80)
      col++;
  }
  *out = v_obj(sb_to_str(&sb));
  return true;
}

/* ---- str.format ---- */

/* The state of one s.format(...) call: its arguments and how fields are
 * numbered (CPython forbids mixing "{}" with "{0}"). */
typedef struct Formatter {
  MistVM *vm;
  const Value *args;
  int nargs;
  const KwArgs *kw;
  int next;           /* the next automatic field number */
  int mode;           /* 0 none yet, 1 automatic, 2 manual */
} Formatter;

static bool fmt_error(MistVM *vm, const char *msg) { return lang_raise(vm, "ValueError", "%s", msg); }

static bool is_digits(const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!is_digit(s[i]))
      return false;
  return true;
}

static bool digits_value(MistVM *vm, const char *s, size_t n, int64_t *out)
{
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (v > (INT64_MAX - 9) / 10)
      return lang_raise(vm, "ValueError", "Too many decimal digits in format string");
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

/* The value a field name such as "0", "", "name", "0[1].shape" names. */
static bool field_value(Formatter *f, const char *s, size_t n, Value *out)
{
  MistVM *vm = f->vm;
  size_t i = 0;
  while (i < n && s[i] != '.' && s[i] != '[')
    i++;
  if (i == 0 || is_digits(s, i)) {
    int64_t idx = 0;
    if (i == 0) {
      if (f->mode == 2)
        return fmt_error(vm, "cannot switch from manual field specification to automatic field numbering");
      f->mode = 1;
      idx = f->next++;
    } else {
      if (f->mode == 1)
        return fmt_error(vm, "cannot switch from automatic field numbering to manual field specification");
      f->mode = 2;
      if (!digits_value(vm, s, i, &idx))
        return false;
    }
    if (idx >= f->nargs)
      return lang_raise(vm, "IndexError", "Replacement index %lld out of range for positional args tuple",
                        (long long)idx);
    *out = f->args[idx];
  } else {
    int k = 0, nkw = f->kw ? f->kw->n : 0;
    while (k < nkw && !(f->kw->names[k]->len == i && memcmp(f->kw->names[k]->data, s, i) == 0))
      k++;
    if (k == nkw) {
      StrBuf sb;
      sb_init(&sb);
      lang_str_repr(lang_str_new(s, i), &sb);
      return lang_raise(vm, "KeyError", "%s", sb.data);
    }
    *out = f->kw->values[k];
  }
  /* .attribute and [key] accessors */
  while (i < n) {
    if (s[i] == '.') {
      size_t j = ++i;
      while (i < n && s[i] != '.' && s[i] != '[')
        i++;
      if (i == j)
        return fmt_error(vm, "Empty attribute in format string");
      Value v;
      bool bound;
      if (!ev_lookup_attr(vm, *out, lang_str_new(s + j, i - j), &v, &bound))
        return false;
      if (bound) {
        ObjBound *b = lang_alloc(sizeof *b);
        b->obj.kind = O_BOUND;
        b->self = *out;
        b->fn = v;
        v = v_obj(b);
      }
      *out = v;
    } else if (s[i] == '[') {
      size_t j = ++i;
      while (i < n && s[i] != ']')
        i++;
      if (i == n)
        return fmt_error(vm, "Missing ']' in format string");
      if (i == j)
        return fmt_error(vm, "Empty attribute in format string");
      Value key;
      if (is_digits(s + j, i - j)) {
        int64_t k = 0;
        if (!digits_value(vm, s + j, i - j, &k))
          return false;
        key = v_int(k);
      } else {
        key = str_val(s + j, i - j);
      }
      if (!lang_getitem(vm, *out, key, out))
        return false;
      i++;
      if (i < n && s[i] != '.' && s[i] != '[')
        return fmt_error(vm, "Only '.' or '[' may follow ']' in format field specifier");
    } else {
      return fmt_error(vm, "Only '.' or '[' may follow ']' in format field specifier");
    }
  }
  return true;
}

/* repr(v) with every non-ASCII character escaped, as ascii() does. */
static bool ascii_repr(MistVM *vm, Value v, StrBuf *out)
{
  StrBuf r;
  sb_init(&r);
  if (!lang_repr(vm, v, &r))
    return false;
  for (size_t i = 0; i < r.len;) {
    if ((unsigned char)r.data[i] < 0x80) {
      sb_addc(out, r.data[i++]);
      continue;
    }
    uint32_t c = std_utf8_decode(r.data, r.len, &i);
    if (c <= 0xFF)
      sb_printf(out, "\\x%02x", c);
    else if (c <= 0xFFFF)
      sb_printf(out, "\\u%04x", c);
    else
      sb_printf(out, "\\U%08x", c);
  }
  return true;
}

static bool format_into(Formatter *f, const char *s, size_t n, int depth, StrBuf *out);

/* One replacement field, the text between its braces. */
static bool format_field(Formatter *f, const char *s, size_t n, int depth, StrBuf *out)
{
  MistVM *vm = f->vm;
  size_t i = 0, bracket = 0;
  while (i < n && (bracket || (s[i] != '!' && s[i] != ':'))) {
    if (s[i] == '[')
      bracket = 1;
    else if (s[i] == ']')
      bracket = 0;
    i++;
  }
  size_t name_len = i;
  char conv = 0;
  if (i < n && s[i] == '!') {
    if (i + 1 >= n)
      return fmt_error(vm, "end of string while looking for conversion specifier");
    conv = s[i + 1];
    i += 2;
    if (i < n && s[i] != ':')
      return fmt_error(vm, "expected ':' after conversion specifier");
  }
  const char *spec = "";
  size_t spec_len = 0;
  if (i < n) {   /* s[i] == ':' */
    spec = s + i + 1;
    spec_len = n - i - 1;
  }
  Value v;
  if (!field_value(f, s, name_len, &v))
    return false;
  if (conv) {
    StrBuf c;
    sb_init(&c);
    switch (conv) {
    case 'r': if (!lang_repr(vm, v, &c)) return false; break;
    case 's': if (!lang_tostr(vm, v, &c)) return false; break;
    case 'a': if (!ascii_repr(vm, v, &c)) return false; break;
    default:
      if ((unsigned char)conv < 0x80)
        return lang_raise(vm, "ValueError", "Unknown conversion specifier %c", conv);
      return lang_raise(vm, "ValueError", "Unknown conversion specifier \\x%02x", (unsigned char)conv);
    }
    v = v_obj(sb_to_str(&c));
  }
  if (memchr(spec, '{', spec_len)) {
    /* nested fields in the spec: {x:{width}.{prec}f} */
    StrBuf expanded;
    sb_init(&expanded);
    if (!format_into(f, spec, spec_len, depth + 1, &expanded))
      return false;
    return lang_format(vm, v, expanded.data ? expanded.data : "", expanded.len, out);
  }
  return lang_format(vm, v, spec, spec_len, out);
}

static bool format_into(Formatter *f, const char *s, size_t n, int depth, StrBuf *out)
{
  MistVM *vm = f->vm;
  if (depth > 1)
    return fmt_error(vm, "Max string recursion exceeded");
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c == '}') {
      if (i + 1 < n && s[i + 1] == '}') {
        sb_addc(out, '}');
        i += 2;
        continue;
      }
      return fmt_error(vm, "Single '}' encountered in format string");
    }
    if (c != '{') {
      size_t j = i;
      while (j < n && s[j] != '{' && s[j] != '}')
        j++;
      sb_add(out, s + i, j - i);
      i = j;
      continue;
    }
    if (i + 1 < n && s[i + 1] == '{') {
      sb_addc(out, '{');
      i += 2;
      continue;
    }
    if (i + 1 == n)
      return fmt_error(vm, "Single '{' encountered in format string");
    /* the field runs to the brace that closes it; in the name, a brace
     * inside [...] is part of a key */
    size_t j = i + 1, level = 1;
    bool in_name = true, bracket = false;
    while (j < n) {
      char d = s[j];
      if (in_name && bracket) {
        bracket = d != ']';
      } else if (in_name && d == '[') {
        bracket = true;
      } else {
        if (d == ':' || d == '!')
          in_name = false;
        if (d == '{')
          level++;
        else if (d == '}' && --level == 0)
          break;
      }
      j++;
    }
    if (j == n)
      return fmt_error(vm, "expected '}' before end of string");
    if (!format_field(f, s + i + 1, j - i - 1, depth, out))
      return false;
    i = j + 1;
  }
  return true;
}

/* s.format(*args, **kwargs), Python's format-string syntax: {} and {0}
 * fields (not mixed), {name} from keyword arguments, .attribute and
 * [index] after the name, !r !s !a conversions, and a format spec after
 * ':' that may hold fields of its own. */
METHOD(format)
{
  if (!SELF_IS(O_STR))
    return not_mine(vm, "format", m_format, argc, argv, kw, out);
  Formatter f = {vm, argv + 1, argc - 1, kw, 0, 0};
  ObjStr *s = AS_STR(argv[0]);
  StrBuf sb;
  sb_init(&sb);
  if (!format_into(&f, s->data, s->len, 0, &sb))
    return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

/* ---- dict ---- */

static bool dict_listing(MistVM *vm, const char *name, BuiltinFn self_fn, int what, int argc,
                         const Value *argv, const KwArgs *kw, Value *out)
{
  if (!SELF_IS(O_DICT))
    return not_mine(vm, name, self_fn, argc, argv, kw, out);
  char qual[32];
  snprintf(qual, sizeof qual, "dict.%s", name);
  if (!std_no_args(vm, qual, argc - 1, kw))
    return false;
  ObjDict *d = AS_DICT(argv[0]);
  ObjSeq *l = lang_list_new(d->len);
  for (size_t i = 0; i < d->len; i++) {
    Value k = v_obj(d->entries[i].key), v = d->entries[i].value;
    l->items[i] = what == 0 ? k : what == 1 ? v : lang_tuple_of(2, k, v);
  }
  *out = v_obj(l);
  return true;
}

METHOD(keys) { return dict_listing(vm, "keys", m_keys, 0, argc, argv, kw, out); }
METHOD(values) { return dict_listing(vm, "values", m_values, 1, argc, argv, kw, out); }
METHOD(items) { return dict_listing(vm, "items", m_items, 2, argc, argv, kw, out); }

/* get(key, default=None) */
METHOD(get)
{
  if (!SELF_IS(O_DICT))
    return not_mine(vm, "get", m_get, argc, argv, kw, out);
  if (!std_no_kw(vm, "dict.get", kw))
    return false;
  if (argc - 1 < 1)
    return lang_raise(vm, "TypeError", "get expected at least 1 argument, got 0");
  if (argc - 1 > 2)
    return lang_raise(vm, "TypeError", "get expected at most 2 arguments, got %d", argc - 1);
  Value key = argv[1];
  if (v_is_obj(key, O_STR) && lang_dict_get(AS_DICT(argv[0]), AS_STR(key), out))
    return true;
  *out = argc == 3 ? argv[2] : v_none();
  return true;
}

/* copy(): a list or dict is immutable, so it is its own copy */
METHOD(copy)
{
  if (!SELF_IS(O_LIST) && !SELF_IS(O_DICT))
    return not_mine(vm, "copy", m_copy, argc, argv, kw, out);
  if (!std_no_args(vm, SELF_IS(O_LIST) ? "list.copy" : "dict.copy", argc - 1, kw))
    return false;
  *out = argv[0];
  return true;
}

/* ---- the mutating methods: errors that show the functional spelling ---- */

static bool mutator(MistVM *vm, const char *name, BuiltinFn self_fn, const char *list_hint,
                    const char *dict_hint, int argc, const Value *argv, const KwArgs *kw,
                    Value *out)
{
  if (list_hint && SELF_IS(O_LIST))
    return lang_raise(vm, "TypeError", "lists are immutable in Mist: write %s", list_hint);
  if (dict_hint && SELF_IS(O_DICT))
    return lang_raise(vm, "TypeError", "dicts are immutable in Mist: write %s", dict_hint);
  return not_mine(vm, name, self_fn, argc, argv, kw, out);
}

#define MUTATOR(name, list_hint, dict_hint) \
  METHOD(name) { return mutator(vm, #name, m_##name, list_hint, dict_hint, argc, argv, kw, out); }

MUTATOR(append, "xs = xs + [v] instead of xs.append(v)", NULL)
MUTATOR(extend, "xs = xs + ys instead of xs.extend(ys)", NULL)
MUTATOR(insert, "xs = xs[:i] + [v] + xs[i:] instead of xs.insert(i, v)", NULL)
MUTATOR(remove, "i = xs.index(v); xs = xs[:i] + xs[i + 1:] instead of xs.remove(v)", NULL)
MUTATOR(sort, "xs = sorted(xs) instead of xs.sort()", NULL)
MUTATOR(reverse, "xs = reversed(xs) instead of xs.reverse()", NULL)
MUTATOR(pop, "v = xs[-1]; xs = xs[:-1] instead of v = xs.pop()",
        "v = d[k] and build the dict without k instead of v = d.pop(k)")
MUTATOR(clear, "xs = [] instead of xs.clear()", "d = {} instead of d.clear()")
MUTATOR(update, NULL,
        "d[k] = e[k] for each key k of e (each d[k] = v makes a new d) instead of d.update(e)")
MUTATOR(setdefault, NULL,
        "if k not in d: d[k] = v (which makes a new d) instead of d.setdefault(k, v)")
MUTATOR(popitem, NULL,
        "k = list(d)[-1]; v = d[k] and build the dict without k instead of d.popitem()")

void std_register_methods(MistVM *vm)
{
  enum { S = SELF_STR, L = SELF_LIST, T = SELF_TUPLE, D = SELF_DICT };
  static const struct {
    const char *name;
    BuiltinFn fn;
    unsigned kinds;   /* whose method it is */
  } table[] = {
    {"upper", m_upper, S},     {"lower", m_lower, S},       {"title", m_title, S},
    {"casefold", m_casefold, S},
    {"capitalize", m_capitalize, S}, {"swapcase", m_swapcase, S},
    {"isdigit", m_isdigit, S}, {"isalpha", m_isalpha, S},   {"isalnum", m_isalnum, S},
    {"isspace", m_isspace, S}, {"isupper", m_isupper, S},   {"islower", m_islower, S},
    {"strip", m_strip, S},     {"lstrip", m_lstrip, S},     {"rstrip", m_rstrip, S},
    {"split", m_split, S},     {"rsplit", m_rsplit, S},     {"join", m_join, S},
    {"replace", m_replace, S}, {"find", m_find, S},         {"rfind", m_rfind, S},
    {"index", m_index, S | L | T}, {"rindex", m_rindex, S}, {"count", m_count, S | L | T},
    {"startswith", m_startswith, S}, {"endswith", m_endswith, S},
    {"ljust", m_ljust, S},     {"rjust", m_rjust, S},       {"center", m_center, S},
    {"zfill", m_zfill, S},     {"format", m_format, S},
    {"partition", m_partition, S}, {"rpartition", m_rpartition, S},
    {"splitlines", m_splitlines, S}, {"expandtabs", m_expandtabs, S},
    {"keys", m_keys, D},       {"values", m_values, D},     {"items", m_items, D},
    {"get", m_get, D},         {"copy", m_copy, L | D},
    {"append", m_append, L},   {"extend", m_extend, L},     {"insert", m_insert, L},
    {"remove", m_remove, L},   {"sort", m_sort, L},         {"reverse", m_reverse, L},
    {"pop", m_pop, L | D},     {"clear", m_clear, L | D},   {"update", m_update, D},
    {"setdefault", m_setdefault, D}, {"popitem", m_popitem, D},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    lang_def_method(vm, table[i].name, table[i].fn, -1, -1)->self_kinds = table[i].kinds;
}
