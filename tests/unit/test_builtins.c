/* test_builtins.c: the Check suite of stdlib/builtins.c and
 * stdlib/strmethods.c.
 *
 * The builtins are called directly, without the parser or the
 * interpreter: a tiny evaluator of Python call expressions over literals
 * ("sorted([3, 1], key=abs)", "'a,b'.split(',')") builds the arguments,
 * calls the registered C functions, and the result's repr (or the
 * error, as "Kind: message") is compared with what python3 prints for
 * the same expression (map/zip/enumerate/reversed wrapped in list(),
 * type(x) as its name).  Mist's own behaviour (64-bit overflow, the
 * mutating methods' hints, output through the write callback) has
 * hand-written cases, and a sweep calls every builtin and method with
 * awkward arguments to check that none crashes (run it under ASan). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/vm.h"
#include "stdlib/builtins.h"

static MistVM *vm;
static StrBuf output;   /* what print() wrote */

static void capture(void *user, const char *text, size_t len)
{
  (void)user;
  sb_add(&output, text, len);
}

/* vm->call as the interpreter would install it, for C functions only */
static bool test_call(MistVM *m, Value fn, int argc, const Value *argv, const KwArgs *kw,
                      Value *out)
{
  if (v_is_obj(fn, O_BUILTIN))
    return AS_BUILTIN(fn)->fn(m, argc, argv, kw, out);
  return lang_raise(m, "TypeError", "'%s' object is not callable", lang_type_name(fn));
}

static void setup(void)
{
  vm = lang_vm_new();
  vm->write = capture;
  vm->call = test_call;
  std_register_builtins(vm);
  sb_init(&output);
}

static void teardown(void)
{
  lang_vm_free(vm);
  vm = NULL;
}

/* ---- a tiny evaluator of call expressions over literals ----
 *
 *   expr    -> '-' expr | primary postfix*
 *   primary -> NUMBER | STRING | '[' items ']' | '(' items ')' | '{' STRING ':' expr, ... '}'
 *            | NAME | NAME '(' args ')'
 *   postfix -> '.' NAME '(' args ')'
 *
 * Returns false with vm->err set when a builtin raised; a malformed test
 * expression aborts the test. */
typedef struct Parser {
  const char *src, *p;
} Parser;

static bool expr(Parser *ps, Value *out);

static void skip(Parser *ps)
{
  while (*ps->p == ' ')
    ps->p++;
}

static bool peek(Parser *ps, char c)
{
  skip(ps);
  return *ps->p == c;
}

static bool eat(Parser *ps, char c)
{
  if (!peek(ps, c))
    return false;
  ps->p++;
  return true;
}

static void expect(Parser *ps, char c)
{
  if (!eat(ps, c))
    ck_abort_msg("bad test expression %s: expected '%c' at '%s'", ps->src, c, ps->p);
}

static bool is_ident(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t ident(Parser *ps, char *buf, size_t cap)
{
  skip(ps);
  size_t n = 0;
  while (is_ident(ps->p[n]) && n + 1 < cap) {
    buf[n] = ps->p[n];
    n++;
  }
  buf[n] = 0;
  ps->p += n;
  return n;
}

/* items up to `close`: positional values and NAME=value keywords */
static bool items(Parser *ps, char close, Value *args, int *argc, KwArgs *kw, bool *comma)
{
  *argc = 0;
  kw->n = 0;
  *comma = false;
  while (!eat(ps, close)) {
    skip(ps);
    const char *q = ps->p;
    while (is_ident(*q))
      q++;
    if (q > ps->p && q[0] == '=' && q[1] != '=' && kw->names) {
      kw->names[kw->n] = lang_str_new(ps->p, (size_t)(q - ps->p));
      ps->p = q + 1;
      if (!expr(ps, &kw->values[kw->n++]))
        return false;
    } else {
      ck_assert_int_lt(*argc, 16);
      if (!expr(ps, &args[(*argc)++]))
        return false;
    }
    if (!eat(ps, ',')) {
      expect(ps, close);
      break;
    }
    *comma = true;
  }
  return true;
}

static bool call_with(Value fn, Value self, bool has_self, Parser *ps, Value *out)
{
  Value args[17];
  ObjStr *names[8];
  Value kwv[8];
  KwArgs kw = {0, names, kwv};
  int argc;
  bool comma;
  int off = has_self ? 1 : 0;
  if (!items(ps, ')', args + off, &argc, &kw, &comma))
    return false;
  if (has_self)
    args[0] = self;
  return test_call(vm, fn, argc + off, args, kw.n ? &kw : NULL, out);
}

static bool lookup(ObjDict *d, const char *name, Value *out)
{
  return d && lang_dict_get(d, lang_str(name), out);
}

static bool primary(Parser *ps, Value *out)
{
  skip(ps);
  char c = *ps->p;
  Value args[17];
  int argc;
  bool comma;
  KwArgs nokw = {0, NULL, NULL};
  if (c == '[' || c == '(') {
    ps->p++;
    if (!items(ps, c == '[' ? ']' : ')', args, &argc, &nokw, &comma))
      return false;
    if (c == '(' && argc == 1 && !comma) {
      *out = args[0];
      return true;
    }
    ObjSeq *s = c == '[' ? lang_list_new((size_t)argc) : lang_tuple_new((size_t)argc);
    memcpy(s->items, args, (size_t)argc * sizeof(Value));
    *out = v_obj(s);
    return true;
  }
  if (c == '{') {
    ps->p++;
    ObjDict *d = lang_dict_new();
    while (!eat(ps, '}')) {
      Value k, v;
      if (!expr(ps, &k))
        return false;
      ck_assert(v_is_obj(k, O_STR));
      expect(ps, ':');
      if (!expr(ps, &v))
        return false;
      lang_dict_put(d, AS_STR(k), v);
      if (!eat(ps, ',')) {
        expect(ps, '}');
        break;
      }
    }
    *out = v_obj(d);
    return true;
  }
  if (c == '\'' || c == '"') {
    StrBuf sb;
    sb_init(&sb);
    ps->p++;
    while (*ps->p != c) {
      ck_assert_msg(*ps->p, "unterminated string in %s", ps->src);
      if (*ps->p != '\\') {
        sb_addc(&sb, *ps->p++);
        continue;
      }
      char e = ps->p[1];
      ps->p += 2;
      if (e == 'n') sb_addc(&sb, '\n');
      else if (e == 't') sb_addc(&sb, '\t');
      else if (e == 'x' || e == 'u') {
        int nd = e == 'x' ? 2 : 4;
        char hex[5] = {0}, enc[4];
        memcpy(hex, ps->p, (size_t)nd);
        ps->p += nd;
        sb_add(&sb, enc, lang_utf8_encode((uint32_t)strtoul(hex, NULL, 16), enc));
      } else sb_addc(&sb, e);
    }
    ps->p++;
    *out = v_obj(lang_str_new(sb.data, sb.len));
    return true;
  }
  if (c >= '0' && c <= '9') {
    char *end;
    if (c == '0' && (ps->p[1] == 'x')) {
      *out = v_int(strtoll(ps->p, &end, 16));
    } else {
      const char *q = ps->p;
      bool flt = false;
      while ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
             ((*q == '-' || *q == '+') && q[-1] == 'e')) {
        flt |= *q == '.' || *q == 'e';
        q++;
      }
      if (flt)
        *out = v_float(strtod(ps->p, &end));
      else
        *out = v_int(strtoll(ps->p, &end, 10));
    }
    ps->p = end;
    return true;
  }
  char name[64];
  ck_assert_msg(ident(ps, name, sizeof name) > 0, "bad test expression %s at '%s'", ps->src, ps->p);
  if (!strcmp(name, "None")) *out = v_none();
  else if (!strcmp(name, "True")) *out = v_bool(true);
  else if (!strcmp(name, "False")) *out = v_bool(false);
  else if (!strcmp(name, "inf")) *out = v_float(INFINITY);
  else if (!strcmp(name, "nan")) *out = v_float(NAN);
  else if (!strcmp(name, "INT64_MIN")) *out = v_int(INT64_MIN);
  else if (!strcmp(name, "INT64_MAX")) *out = v_int(INT64_MAX);
  else {
    Value fn;
    ck_assert_msg(lookup(vm->builtins, name, &fn), "no builtin %s", name);
    if (eat(ps, '('))
      return call_with(fn, v_none(), false, ps, out);
    *out = fn;
  }
  return true;
}

static bool expr(Parser *ps, Value *out)
{
  if (eat(ps, '-')) {
    Value v;
    return expr(ps, &v) && lang_neg(vm, v, out);
  }
  if (!primary(ps, out))
    return false;
  while (eat(ps, '.')) {
    char name[64];
    Value fn;
    ident(ps, name, sizeof name);
    expect(ps, '(');
    /* the interpreter's rule: a method if there is one, else the builtin */
    if (!lookup(vm->methods, name, &fn))
      ck_assert_msg(lookup(vm->builtins, name, &fn), "no method %s", name);
    if (!call_with(fn, *out, true, ps, out))
      return false;
  }
  return true;
}

/* The result of src as python3 would print it: repr, or "Kind: message". */
static const char *run(const char *src)
{
  Parser ps = {src, src};
  Value v;
  lang_error_clear(vm);
  output.len = 0;
  StrBuf sb;
  sb_init(&sb);
  if (!expr(&ps, &v)) {
    ck_assert_msg(vm->err.set, "%s failed without an error", src);
    sb_printf(&sb, "%s: %s", vm->err.kind, vm->err.message->data);
    lang_error_clear(vm);
    return sb.data;
  }
  skip(&ps);
  ck_assert_msg(*ps.p == 0, "bad test expression %s: trailing '%s'", src, ps.p);
  ck_assert_msg(!vm->err.set, "%s succeeded with an error set", src);
  ck_assert_msg(lang_repr(vm, v, &sb), "repr of the result of %s failed", src);
  return sb.data;
}

#define CHECK_RUN(src, want)                                                      \
  do {                                                                            \
    const char *got_ = run(src);                                                  \
    ck_assert_msg(strcmp(got_, (want)) == 0, "%s\n  got:  %s\n  want: %s", (src), \
                  got_, (want));                                                  \
  } while (0)

/* ---- the same expressions in python3 (generated, then checked in) ---- */

static const struct {
  const char *src, *want;
} python_cases[] = {
  {"str()", "''"},
  {"str(12)", "'12'"},
  {"str(1.5)", "'1.5'"},
  {"str('x')", "'x'"},
  {"str([1, 'a', (2.5,)])", "\"[1, 'a', (2.5,)]\""},
  {"str(None)", "'None'"},
  {"str(object=3)", "'3'"},
  {"str(x=1)", "TypeError: 'x' is an invalid keyword argument for str()"},
  {"repr('a\\nb')", "\"'a\\\\nb'\""},
  {"repr([1, 'b'])", "\"[1, 'b']\""},
  {"repr()", "TypeError: repr() takes exactly one argument (0 given)"},
  {"repr(1, 2)", "TypeError: repr() takes exactly one argument (2 given)"},
  {"repr(x=1)", "TypeError: repr() takes no keyword arguments"},
  {"int()", "0"},
  {"int(7)", "7"},
  {"int(True)", "1"},
  {"int(-3.9)", "-3"},
  {"int('42')", "42"},
  {"int(' -1_000\\n')", "-1000"},
  {"int('ff', 16)", "255"},
  {"int('0x_1f', 16)", "31"},
  {"int('0x1f', 0)", "31"},
  {"int('0o17', 0)", "15"},
  {"int('-0b101', 0)", "-5"},
  {"int('z', 36)", "35"},
  {"int('Z', 36)", "35"},
  {"int('010', 0)", "ValueError: invalid literal for int() with base 0: '010'"},
  {"int('000', 0)", "0"},
  {"int('1__0')", "ValueError: invalid literal for int() with base 10: '1__0'"},
  {"int('_10')", "ValueError: invalid literal for int() with base 10: '_10'"},
  {"int('10_')", "ValueError: invalid literal for int() with base 10: '10_'"},
  {"int('+')", "ValueError: invalid literal for int() with base 10: '+'"},
  {"int('0x', 16)", "ValueError: invalid literal for int() with base 16: '0x'"},
  {"int('')", "ValueError: invalid literal for int() with base 10: ''"},
  {"int('12', 1)", "ValueError: int() base must be >= 2 and <= 36, or 0"},
  {"int('12', 37)", "ValueError: int() base must be >= 2 and <= 36, or 0"},
  {"int(1.5, 10)", "TypeError: int() can't convert non-string with explicit base"},
  {"int('z', 10)", "ValueError: invalid literal for int() with base 10: 'z'"},
  {"int('9', base=8)", "ValueError: invalid literal for int() with base 8: '9'"},
  {"int('10', base=2)", "2"},
  {"int(1, 2, 3)", "TypeError: int() takes at most 2 arguments (3 given)"},
  {"int(x=1)", "TypeError: 'x' is an invalid keyword argument for int()"},
  {"int(None)", "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"},
  {"float()", "0.0"},
  {"float(2)", "2.0"},
  {"float('2.5')", "2.5"},
  {"float(1, 2)", "TypeError: float expected at most 1 argument, got 2"},
  {"float(x=1)", "TypeError: float() takes no keyword arguments"},
  {"float('x')", "ValueError: could not convert string to float: 'x'"},
  {"float(None)", "TypeError: float() argument must be a string or a real number, not 'NoneType'"},
  {"bool()", "False"},
  {"bool(0)", "False"},
  {"bool('a')", "True"},
  {"bool([])", "False"},
  {"bool(1, 2)", "TypeError: bool expected at most 1 argument, got 2"},
  {"bool(x=1)", "TypeError: bool() takes no keyword arguments"},
  {"list()", "[]"},
  {"list('abc')", "['a', 'b', 'c']"},
  {"list((1, 2))", "[1, 2]"},
  {"list([3])", "[3]"},
  {"list({'a': 1, 'b': 2})", "['a', 'b']"},
  {"list(range(3))", "[0, 1, 2]"},
  {"list(range(10, 0, -3))", "[10, 7, 4, 1]"},
  {"list(1)", "TypeError: 'int' object is not iterable"},
  {"list(1, 2)", "TypeError: list expected at most 1 argument, got 2"},
  {"list(x=1)", "TypeError: list() takes no keyword arguments"},
  {"tuple()", "()"},
  {"tuple('ab')", "('a', 'b')"},
  {"tuple([1, 2])", "(1, 2)"},
  {"tuple(range(2))", "(0, 1)"},
  {"tuple(1)", "TypeError: 'int' object is not iterable"},
  {"tuple(x=1)", "TypeError: tuple() takes no keyword arguments"},
  {"dict()", "{}"},
  {"dict({'a': 1})", "{'a': 1}"},
  {"dict([('a', 1), ('b', 2)], c=3)", "{'a': 1, 'b': 2, 'c': 3}"},
  {"dict(a=1, b=2)", "{'a': 1, 'b': 2}"},
  {"dict(['ab'])", "{'a': 'b'}"},
  {"dict([('a', 1, 2)])", "ValueError: dictionary update sequence element #0 has length 3; 2 is required"},
  {"dict([1])", "TypeError: cannot convert dictionary update sequence element #0 to a sequence"},
  {"dict(1)", "TypeError: 'int' object is not iterable"},
  {"dict(1, 2)", "TypeError: dict expected at most 1 argument, got 2"},
  {"range(3)", "range(0, 3)"},
  {"range(1, 5)", "range(1, 5)"},
  {"range(1, 5, 2)", "range(1, 5, 2)"},
  {"range(True)", "range(0, 1)"},
  {"range()", "TypeError: range expected at least 1 argument, got 0"},
  {"range(1, 2, 3, 4)", "TypeError: range expected at most 3 arguments, got 4"},
  {"range(1.5)", "TypeError: 'float' object cannot be interpreted as an integer"},
  {"range('a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"range(1, 2, 0)", "ValueError: range() arg 3 must not be zero"},
  {"range(x=1)", "TypeError: range() takes no keyword arguments"},
  {"len('héllo')", "5"},
  {"len([1, 2])", "2"},
  {"len({'a': 1})", "1"},
  {"len(range(0, 10, 3))", "4"},
  {"len()", "TypeError: len() takes exactly one argument (0 given)"},
  {"len(1, 2)", "TypeError: len() takes exactly one argument (2 given)"},
  {"len(x=1)", "TypeError: len() takes no keyword arguments"},
  {"len(5)", "TypeError: object of type 'int' has no len()"},
  {"abs(-3)", "3"},
  {"abs(-2.5)", "2.5"},
  {"abs(True)", "1"},
  {"abs()", "TypeError: abs() takes exactly one argument (0 given)"},
  {"abs('a')", "TypeError: bad operand type for abs(): 'str'"},
  {"abs(x=1)", "TypeError: abs() takes no keyword arguments"},
  {"round(0.5)", "0"},
  {"round(1.5)", "2"},
  {"round(2.5)", "2"},
  {"round(-0.5)", "0"},
  {"round(-1.5)", "-2"},
  {"round(2.675, 2)", "2.67"},
  {"round(-2.5, 0)", "-2.0"},
  {"round(0.125, 2)", "0.12"},
  {"round(0.375, 2)", "0.38"},
  {"round(1234.5678, -2)", "1200.0"},
  {"round(1250.0, -2)", "1200.0"},
  {"round(1350.0, -2)", "1400.0"},
  {"round(-5.0, -1)", "-0.0"},
  {"round(-15.0, -1)", "-20.0"},
  {"round(5e-324, 400)", "5e-324"},
  {"round(1e300, -400)", "0.0"},
  {"round(-1e300, -400)", "-0.0"},
  {"round(1.7976931348623157e308, -308)", "OverflowError: rounded value too large to represent"},
  {"round(inf, 2)", "inf"},
  {"round(inf)", "OverflowError: cannot convert float infinity to integer"},
  {"round(nan)", "ValueError: cannot convert float NaN to integer"},
  {"round(15, -1)", "20"},
  {"round(25, -1)", "20"},
  {"round(-25, -1)", "-20"},
  {"round(7, 2)", "7"},
  {"round(True)", "1"},
  {"round(True, 2)", "1"},
  {"round(3.7, None)", "4"},
  {"round()", "TypeError: round() missing required argument 'number' (pos 1)"},
  {"round('a')", "TypeError: type str doesn't define __round__ method"},
  {"round(1.5, 'a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"round(1.5, 1, 2)", "TypeError: round() takes at most 2 arguments (3 given)"},
  {"round(1.5, x=1)", "TypeError: 'x' is an invalid keyword argument for round()"},
  {"round(number=2.5)", "2"},
  {"min(3, 1, 2)", "1"},
  {"max(3, 1, 2)", "3"},
  {"min([4, 2, 8])", "2"},
  {"max('hello')", "'o'"},
  {"min([1, 3, 3.0])", "1"},
  {"max([1, 3, 3.0])", "3"},
  {"max(3, 3.0)", "3"},
  {"min(3.0, 3)", "3.0"},
  {"min([], default=7)", "7"},
  {"max([], default=None)", "None"},
  {"min(['bb', 'a', 'ccc'], key=len)", "'a'"},
  {"max(['bb', 'a', 'ccc'], key=len)", "'ccc'"},
  {"max(-3, 2, key=abs)", "-3"},
  {"min(range(5, 0, -1))", "1"},
  {"min()", "TypeError: min expected at least 1 argument, got 0"},
  {"min(1)", "TypeError: 'int' object is not iterable"},
  {"min([])", "ValueError: min() arg is an empty sequence"},
  {"max([])", "ValueError: max() arg is an empty sequence"},
  {"min([], default=3, key=None, x=1)", "TypeError: min() takes at most 2 keyword arguments (3 given)"},
  {"min(1, 2, default=3)", "TypeError: Cannot specify a default for min() with multiple positional arguments"},
  {"min([1], foo=2)", "TypeError: 'foo' is an invalid keyword argument for min()"},
  {"min(1, 'a')", "TypeError: '<' not supported between instances of 'str' and 'int'"},
  {"max(1, 'a')", "TypeError: '>' not supported between instances of 'str' and 'int'"},
  {"sum([1, 2, 3])", "6"},
  {"sum([0.1, 0.2, 0.3])", "0.6000000000000001"},
  {"sum([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])", "0.9999999999999999"},
  {"sum([1, 2.5])", "3.5"},
  {"sum(range(101))", "5050"},
  {"sum([[1], [2]], [])", "[1, 2]"},
  {"sum([1], 10)", "11"},
  {"sum([1], start=10)", "11"},
  {"sum([True, True])", "2"},
  {"sum([])", "0"},
  {"sum()", "TypeError: sum() takes at least 1 positional argument (0 given)"},
  {"sum(1)", "TypeError: 'int' object is not iterable"},
  {"sum([1], 2, 3)", "TypeError: sum() takes at most 2 arguments (3 given)"},
  {"sum(['a'], '')", "TypeError: sum() can't sum strings [use ''.join(seq) instead]"},
  {"sum([1], start=2, x=1)", "TypeError: sum() takes at most 2 arguments (3 given)"},
  {"sum([1], x=1)", "TypeError: 'x' is an invalid keyword argument for sum()"},
  {"sum([1, 'a'])", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"},
  {"map(abs, [-1, 2, -3])", "[1, 2, 3]"},
  {"map(pow, [2, 3], [3, 2, 1])", "[8, 9]"},
  {"map(len, 'ab')", "[1, 1]"},
  {"map()", "TypeError: map() must have at least two arguments."},
  {"map(len)", "TypeError: map() must have at least two arguments."},
  {"map(len, [1], x=1)", "TypeError: map() takes no keyword arguments"},
  {"map(len, 1)", "TypeError: 'int' object is not iterable"},
  {"zip([1, 2, 3], 'ab')", "[(1, 'a'), (2, 'b')]"},
  {"zip()", "[]"},
  {"zip([1])", "[(1,)]"},
  {"zip([1], [2], [3])", "[(1, 2, 3)]"},
  {"zip([1, 2], [3, 4], strict=True)", "[(1, 3), (2, 4)]"},
  {"zip([1], [1, 2], strict=True)", "ValueError: zip() argument 2 is longer than argument 1"},
  {"zip([1, 2], [1], strict=True)", "ValueError: zip() argument 2 is shorter than argument 1"},
  {"zip([1, 2], [1, 2], [1], strict=True)", "ValueError: zip() argument 3 is shorter than arguments 1-2"},
  {"zip([1, 2], [1], [1], strict=True)", "ValueError: zip() argument 2 is shorter than argument 1"},
  {"zip(1)", "TypeError: 'int' object is not iterable"},
  {"zip([1], x=1)", "TypeError: 'x' is an invalid keyword argument for zip()"},
  {"enumerate('ab')", "[(0, 'a'), (1, 'b')]"},
  {"enumerate([5, 6], 10)", "[(10, 5), (11, 6)]"},
  {"enumerate([5], start=-2)", "[(-2, 5)]"},
  {"enumerate()", "TypeError: enumerate() missing required argument 'iterable'"},
  {"enumerate(1)", "TypeError: 'int' object is not iterable"},
  {"enumerate([1], 2, 3)", "TypeError: enumerate() takes at most 2 arguments (3 given)"},
  {"enumerate([1], 'a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"sorted([3, 1, 2])", "[1, 2, 3]"},
  {"sorted([3, 1, 2], reverse=True)", "[3, 2, 1]"},
  {"sorted('bca')", "['a', 'b', 'c']"},
  {"sorted({'b': 1, 'a': 2})", "['a', 'b']"},
  {"sorted([1.5, 1, True, 0])", "[0, 1, True, 1.5]"},
  {"sorted(['bb', 'a', 'ccc', 'dd'], key=len)", "['a', 'bb', 'dd', 'ccc']"},
  {"sorted(['bb', 'a', 'ccc', 'dd'], key=len, reverse=True)", "['ccc', 'bb', 'dd', 'a']"},
  {"sorted([(1, 'b'), (1, 'a'), (0, 'z')])", "[(0, 'z'), (1, 'a'), (1, 'b')]"},
  {"sorted([-3, 2, -1], key=abs)", "[-1, 2, -3]"},
  {"sorted([])", "[]"},
  {"sorted(range(5, 0, -2))", "[1, 3, 5]"},
  {"sorted()", "TypeError: sorted expected 1 argument, got 0"},
  {"sorted(1)", "TypeError: 'int' object is not iterable"},
  {"sorted([1], 2)", "TypeError: sorted expected 1 argument, got 2"},
  {"sorted([1], foo=2)", "TypeError: 'foo' is an invalid keyword argument for sort()"},
  {"sorted([1, 'a'])", "TypeError: '<' not supported between instances of 'str' and 'int'"},
  {"sorted([1], reverse='a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"reversed([1, 2, 3])", "[3, 2, 1]"},
  {"reversed('abc')", "['c', 'b', 'a']"},
  {"reversed((1, 2))", "[2, 1]"},
  {"reversed(range(3))", "[2, 1, 0]"},
  {"reversed({'a': 1, 'b': 2})", "['b', 'a']"},
  {"reversed()", "TypeError: reversed expected 1 argument, got 0"},
  {"reversed(1)", "TypeError: 'int' object is not reversible"},
  {"reversed([], x=1)", "TypeError: reversed() takes no keyword arguments"},
  {"any([0, 0, 1])", "True"},
  {"any([])", "False"},
  {"all([1, 'a'])", "True"},
  {"all([1, 0])", "False"},
  {"all([])", "True"},
  {"any('')", "False"},
  {"any()", "TypeError: any() takes exactly one argument (0 given)"},
  {"any(1)", "TypeError: 'int' object is not iterable"},
  {"all(1)", "TypeError: 'int' object is not iterable"},
  {"any(x=1)", "TypeError: any() takes no keyword arguments"},
  {"type(1)", "'int'"},
  {"type(1.0)", "'float'"},
  {"type('a')", "'str'"},
  {"type(None)", "'NoneType'"},
  {"type(True)", "'bool'"},
  {"type([])", "'list'"},
  {"type(())", "'tuple'"},
  {"type({})", "'dict'"},
  {"type(range(1))", "'range'"},
  {"type()", "TypeError: type() takes 1 or 3 arguments"},
  {"type(1, 2)", "TypeError: type() takes 1 or 3 arguments"},
  {"type(x=1)", "TypeError: type() takes 1 or 3 arguments"},
  {"ord('a')", "97"},
  {"ord('é')", "233"},
  {"ord('€')", "8364"},
  {"ord('😀')", "128512"},
  {"ord()", "TypeError: ord() takes exactly one argument (0 given)"},
  {"ord('ab')", "TypeError: ord() expected a character, but string of length 2 found"},
  {"ord(1)", "TypeError: ord() expected string of length 1, but int found"},
  {"ord('')", "TypeError: ord() expected a character, but string of length 0 found"},
  {"ord(x=1)", "TypeError: ord() takes no keyword arguments"},
  {"chr(97)", "'a'"},
  {"chr(233)", "'é'"},
  {"chr(8364)", "'€'"},
  {"chr(128512)", "'😀'"},
  {"chr()", "TypeError: chr() takes exactly one argument (0 given)"},
  {"chr(-1)", "ValueError: chr() arg not in range(0x110000)"},
  {"chr(1114112)", "ValueError: chr() arg not in range(0x110000)"},
  {"chr('a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"chr(1.5)", "TypeError: 'float' object cannot be interpreted as an integer"},
  {"chr(x=1)", "TypeError: chr() takes no keyword arguments"},
  {"hex(255)", "'0xff'"},
  {"hex(-255)", "'-0xff'"},
  {"hex(0)", "'0x0'"},
  {"hex(INT64_MIN)", "'-0x8000000000000000'"},
  {"hex(INT64_MAX)", "'0x7fffffffffffffff'"},
  {"bin(5)", "'0b101'"},
  {"bin(-5)", "'-0b101'"},
  {"bin(0)", "'0b0'"},
  {"oct(8)", "'0o10'"},
  {"oct(-8)", "'-0o10'"},
  {"hex(1.5)", "TypeError: 'float' object cannot be interpreted as an integer"},
  {"bin('a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"hex(x=1)", "TypeError: hex() takes no keyword arguments"},
  {"divmod(7, 2)", "(3, 1)"},
  {"divmod(-7, 2)", "(-4, 1)"},
  {"divmod(7.5, 2)", "(3.0, 1.5)"},
  {"divmod(-7, 2.0)", "(-4.0, 1.0)"},
  {"divmod(1)", "TypeError: divmod expected 2 arguments, got 1"},
  {"divmod(1, 0)", "ZeroDivisionError: integer division or modulo by zero"},
  {"divmod(1.0, 0)", "ZeroDivisionError: float divmod()"},
  {"divmod(1, 0.0)", "ZeroDivisionError: float divmod()"},
  {"divmod('a', 1)", "TypeError: unsupported operand type(s) for divmod(): 'str' and 'int'"},
  {"divmod(1, x=1)", "TypeError: divmod() takes no keyword arguments"},
  {"pow(2, 10)", "1024"},
  {"pow(2, -1)", "0.5"},
  {"pow(2.0, 0.5)", "1.4142135623730951"},
  {"pow(2, exp=3)", "8"},
  {"pow(2, 10, 1000)", "24"},
  {"pow(3, 200, 7)", "2"},
  {"pow(-2, 3, 5)", "2"},
  {"pow(2, 3, -5)", "-2"},
  {"pow(2, -1, 5)", "3"},
  {"pow(38, -1, 97)", "23"},
  {"pow(2, -1, 4)", "ValueError: base is not invertible for the given modulus"},
  {"pow(5, 0, 1)", "0"},
  {"pow(2, 3, 0)", "ValueError: pow() 3rd argument cannot be 0"},
  {"pow(2.0, 3, 5)", "TypeError: pow() 3rd argument not allowed unless all arguments are integers"},
  {"pow(1)", "TypeError: pow() missing required argument 'exp' (pos 2)"},
  {"pow(2, 3, 5, 6)", "TypeError: pow() takes at most 3 arguments (4 given)"},
  {"'ABc'.upper()", "'ABC'"},
  {"'ABc'.lower()", "'abc'"},
  {"'hello world  foo'.title()", "'Hello World  Foo'"},
  {"\"they're bill's\".title()", "\"They'Re Bill'S\""},
  {"'hELLO'.capitalize()", "'Hello'"},
  {"'hELLO'.swapcase()", "'Hello'"},
  {"'a'.upper(1)", "TypeError: str.upper() takes no arguments (1 given)"},
  {"'a'.upper(x=1)", "TypeError: str.upper() takes no keyword arguments"},
  {"'123'.isdigit()", "True"},
  {"'12a'.isdigit()", "False"},
  {"''.isdigit()", "False"},
  {"'abc'.isalpha()", "True"},
  {"'ab1'.isalpha()", "False"},
  {"'ab1'.isalnum()", "True"},
  {"'ab 1'.isalnum()", "False"},
  {"' \\t\\n'.isspace()", "True"},
  {"''.isspace()", "False"},
  {"'\\u3000\\xa0'.isspace()", "True"},
  {"'ABC1'.isupper()", "True"},
  {"'abc1'.islower()", "True"},
  {"'1'.islower()", "False"},
  {"'a'.isdigit(1)", "TypeError: str.isdigit() takes no arguments (1 given)"},
  {"'  hi  '.strip()", "'hi'"},
  {"'  hi  '.lstrip()", "'hi  '"},
  {"'  hi  '.rstrip()", "'  hi'"},
  {"'xxhixx'.strip('x')", "'hi'"},
  {"'xyhiyx'.strip('xy')", "'hi'"},
  {"'\\u3000hi\\xa0'.strip()", "'hi'"},
  {"'ééhéé'.strip('é')", "'h'"},
  {"'hi'.strip(None)", "'hi'"},
  {"'a'.strip(1)", "TypeError: strip arg must be None or str"},
  {"'a'.lstrip(1)", "TypeError: lstrip arg must be None or str"},
  {"'a'.strip('a', 'b')", "TypeError: strip expected at most 1 argument, got 2"},
  {"'a'.strip(x='a')", "TypeError: str.strip() takes no keyword arguments"},
  {"'a b  c'.split()", "['a', 'b', 'c']"},
  {"'  a b c  '.split(None, 1)", "['a', 'b c  ']"},
  {"'  a b c  '.rsplit(None, 1)", "['  a b', 'c']"},
  {"'  a b c  '.split(maxsplit=0)", "['a b c  ']"},
  {"'a,b,,c'.split(',')", "['a', 'b', '', 'c']"},
  {"'a,b,,c'.split(',', 1)", "['a', 'b,,c']"},
  {"'a,b,,c'.rsplit(',', 1)", "['a,b,', 'c']"},
  {"'a,b,,c'.rsplit(',')", "['a', 'b', '', 'c']"},
  {"'a::b::c'.split('::')", "['a', 'b', 'c']"},
  {"'a::b::c'.rsplit('::', 1)", "['a::b', 'c']"},
  {"''.split()", "[]"},
  {"''.split(',')", "['']"},
  {"'a\\u3000b'.split()", "['a', 'b']"},
  {"'é,ü'.split(',')", "['é', 'ü']"},
  {"'a'.split(1)", "TypeError: must be str or None, not int"},
  {"'a'.split('')", "ValueError: empty separator"},
  {"'a'.rsplit(1)", "TypeError: must be str or None, not int"},
  {"'abc'.split(',', 1, 2)", "TypeError: split() takes at most 2 arguments (3 given)"},
  {"'abc'.split(maxsplit=1, x=1)", "TypeError: 'x' is an invalid keyword argument for split()"},
  {"'abc'.split(sep=',')", "['abc']"},
  {"'-'.join(['a', 'b', 'c'])", "'a-b-c'"},
  {"''.join('abc')", "'abc'"},
  {"', '.join(('x',))", "'x'"},
  {"','.join([])", "''"},
  {"'-'.join({'k': 1, 'j': 2})", "'k-j'"},
  {"'a'.join([1])", "TypeError: sequence item 0: expected str instance, int found"},
  {"'a'.join(['x', 2])", "TypeError: sequence item 1: expected str instance, int found"},
  {"'a'.join(1)", "TypeError: can only join an iterable"},
  {"'a'.join()", "TypeError: str.join() takes exactly one argument (0 given)"},
  {"'abcabc'.replace('b', 'XY')", "'aXYcaXYc'"},
  {"'abcabc'.replace('b', '', 1)", "'acabc'"},
  {"'abc'.replace('', '-')", "'-a-b-c-'"},
  {"'abc'.replace('', '-', 2)", "'-a-bc'"},
  {"'aaa'.replace('aa', 'b')", "'ba'"},
  {"'éàé'.replace('é', 'e')", "'eàe'"},
  {"'abc'.replace('z', 'y')", "'abc'"},
  {"'a'.replace(1)", "TypeError: replace expected at least 2 arguments, got 1"},
  {"'a'.replace('a', 1)", "TypeError: replace() argument 2 must be str, not int"},
  {"'a'.replace(1, 'a')", "TypeError: replace() argument 1 must be str, not int"},
  {"'abc'.replace('a', 'b', count=1)", "TypeError: str.replace() takes no keyword arguments"},
  {"'abc'.replace('a', 'b', 1, 2)", "TypeError: replace expected at most 3 arguments, got 4"},
  {"'hello'.find('l')", "2"},
  {"'hello'.rfind('l')", "3"},
  {"'hello'.find('z')", "-1"},
  {"'hello'.find('l', 3)", "3"},
  {"'hello'.find('l', -2)", "3"},
  {"'hello'.find('h', 1)", "-1"},
  {"'hello'.find('', 5)", "5"},
  {"'hello'.find('', 6)", "-1"},
  {"'hello'.rfind('')", "5"},
  {"'héllo'.find('l')", "2"},
  {"'héllo'.rfind('l', 0, 3)", "2"},
  {"'hello'.index('e')", "1"},
  {"'hello'.index('z')", "ValueError: substring not found"},
  {"'hello'.rindex('z')", "ValueError: substring not found"},
  {"'hello'.count('l')", "2"},
  {"'hello'.count('')", "6"},
  {"'hello'.count('', 6)", "0"},
  {"'aaaa'.count('aa')", "2"},
  {"'héllo'.count('l', 3)", "1"},
  {"'hello'.find()", "TypeError: find() takes at least 1 argument (0 given)"},
  {"'hello'.find('a', 1, 2, 3)", "TypeError: find() takes at most 3 arguments (4 given)"},
  {"'hello'.find('a', x=1)", "TypeError: str.find() takes no keyword arguments"},
  {"'hello'.find(1)", "TypeError: must be str, not int"},
  {"'hello'.count(1)", "TypeError: must be str, not int"},
  {"'hello'.find('l', 'a')", "TypeError: slice indices must be integers or None or have an __index__ method"},
  {"'hello'.startswith('he')", "True"},
  {"'hello'.startswith('lo', 3)", "True"},
  {"'hello'.startswith(('x', 'h'))", "True"},
  {"'hello'.endswith('lo')", "True"},
  {"'hello'.endswith('l', 0, 4)", "True"},
  {"'hello'.endswith('')", "True"},
  {"'abc'.startswith('', 4)", "False"},
  {"'abc'.startswith('', 3)", "True"},
  {"'héllo'.endswith('llo')", "True"},
  {"'hello'.startswith()", "TypeError: startswith() takes at least 1 argument (0 given)"},
  {"'hello'.startswith(1)", "TypeError: startswith first arg must be str or a tuple of str, not int"},
  {"'hello'.startswith(('a', 1))", "TypeError: tuple for startswith must only contain str, not int"},
  {"'hello'.startswith(('h', 1))", "True"},
  {"'a'.startswith('a', 'b')", "TypeError: slice indices must be integers or None or have an __index__ method"},
  {"'a'.endswith(x='a')", "TypeError: str.endswith() takes no keyword arguments"},
  {"'ab'.ljust(5)", "'ab   '"},
  {"'ab'.rjust(5, '*')", "'***ab'"},
  {"'abc'.center(8, '*')", "'**abc***'"},
  {"'abc'.center(7, '*')", "'**abc**'"},
  {"'ab'.center(7, '*')", "'***ab**'"},
  /* partition, expandtabs, splitlines, format() */
  {"'abc'.partition('b')", "('a', 'b', 'c')"},
  {"'abcb'.rpartition('b')", "('abc', 'b', '')"},
  {"'abc'.partition('x')", "('abc', '', '')"},
  {"'abc'.rpartition('x')", "('', '', 'abc')"},
  {"'abc'.partition('')", "ValueError: empty separator"},
  {"'a'.partition(1)", "TypeError: must be str, not int"},
  {"'a'.partition()", "TypeError: str.partition() takes exactly one argument (0 given)"},
  {"'a\\tb'.expandtabs(4)", "'a   b'"},
  {"'a\\tbc\\td'.expandtabs()", "'a       bc      d'"},
  {"'ab\\tc\\n\\td'.expandtabs(3)", "'ab c\\n   d'"},
  {"'\\u00e9\\tx'.expandtabs(4)", "'é   x'"},
  {"'\\t'.expandtabs(0)", "''"},
  {"'\\t'.expandtabs(-1)", "''"},
  {"'x'.expandtabs(1.5)", "TypeError: 'float' object cannot be interpreted as an integer"},
  {"'line1\\nline2'.splitlines()", "['line1', 'line2']"},
  {"'ab\\ncd\\n\\nef'.splitlines(True)", "['ab\\n', 'cd\\n', '\\n', 'ef']"},
  {"''.splitlines()", "[]"},
  {"'a\\n\\nb\\n'.splitlines()", "['a', '', 'b']"},
  {"'a\\x0bb\\x0cc\\x1cd\\x1de\\x1ef\\x85g\\u2028h\\u2029i'.splitlines()", "['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']"},
  {"'a\\nb'.splitlines(keepends=True)", "['a\\n', 'b']"},
  {"'a'.splitlines(1, 2)", "TypeError: splitlines() takes at most 1 argument (2 given)"},
  {"format(1234567, ',')", "'1,234,567'"},
  {"format(0.5, '.0%')", "'50%'"},
  {"format(255, '08b')", "'11111111'"},
  {"format(3.0, 'g')", "'3'"},
  {"format(3)", "'3'"},
  {"format('ab', '>5')", "'   ab'"},
  {"format(1, 2)", "TypeError: format() argument 2 must be str, not int"},
  {"format()", "TypeError: format expected at least 1 argument, got 0"},
  {"format(1, 'd', 3)", "TypeError: format expected at most 2 arguments, got 3"},
  {"format(1.5, 'x')", "ValueError: Unknown format code 'x' for object of type 'float'"},
  {"format(True)", "'True'"},
  {"format(None)", "'None'"},
  {"format([1])", "'[1]'"},
  {"format(None, 's')", "TypeError: unsupported format string passed to NoneType.__format__"},
  {"format(1, format_spec='d')", "TypeError: format() takes no keyword arguments"},
  {"'ab'.center(8, '*')", "'***ab***'"},
  {"'é'.center(4, 'ü')", "'üéüü'"},
  {"'abc'.ljust(2)", "'abc'"},
  {"'abc'.ljust('a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"'abc'.ljust(3, 'ab')", "TypeError: The fill character must be exactly one character long"},
  {"'abc'.center(3, 1)", "TypeError: The fill character must be a unicode character, not int"},
  {"'abc'.center()", "TypeError: center expected at least 1 argument, got 0"},
  {"'abc'.center(1, 2, 3)", "TypeError: center expected at most 2 arguments, got 3"},
  {"'-12'.zfill(6)", "'-00012'"},
  {"'+12'.zfill(6)", "'+00012'"},
  {"'12'.zfill(1)", "'12'"},
  {"'12'.zfill(5)", "'00012'"},
  {"''.zfill(3)", "'000'"},
  {"'-'.zfill(3)", "'-00'"},
  {"'abc'.zfill()", "TypeError: str.zfill() takes exactly one argument (0 given)"},
  {"'abc'.zfill('a')", "TypeError: 'str' object cannot be interpreted as an integer"},
  {"{'a': 1, 'b': 2}.keys()", "['a', 'b']"},
  {"{'a': 1, 'b': 2}.values()", "[1, 2]"},
  {"{'a': 1, 'b': 2}.items()", "[('a', 1), ('b', 2)]"},
  {"{}.keys()", "[]"},
  {"{'a': 1}.get('a')", "1"},
  {"{'a': 1}.get('b')", "None"},
  {"{'a': 1}.get('b', 0)", "0"},
  {"{'a': 1}.get(1, 'no')", "'no'"},
  {"{}.get()", "TypeError: get expected at least 1 argument, got 0"},
  {"{}.get(1, 2, 3)", "TypeError: get expected at most 2 arguments, got 3"},
  {"{}.keys(1)", "TypeError: dict.keys() takes no arguments (1 given)"},
  {"{'a': 1}.items(1)", "TypeError: dict.items() takes no arguments (1 given)"},
  {"{}.get(x=1)", "TypeError: dict.get() takes no keyword arguments"},
  {"{}.keys(x=1)", "TypeError: dict.keys() takes no keyword arguments"},
  {"[1, 2, 3, 2].index(2)", "1"},
  {"[1, 2, 3, 2].index(2, 2)", "3"},
  {"[1, 2, 3].index(3, 0, 2)", "ValueError: 3 is not in list"},
  {"[1, 2, 3].index(3, -1)", "2"},
  {"(1, 2).index(2)", "1"},
  {"(1, 2).index(5)", "ValueError: tuple.index(x): x not in tuple"},
  {"[1].index(2)", "ValueError: 2 is not in list"},
  {"['a'].index('b')", "ValueError: 'b' is not in list"},
  {"[1, 1.0, True].count(1)", "3"},
  {"(1, 2, 1).count(1)", "2"},
  {"[].index()", "TypeError: index expected at least 1 argument, got 0"},
  {"[].count()", "TypeError: list.count() takes exactly one argument (0 given)"},
  {"[].count(1, 2)", "TypeError: list.count() takes exactly one argument (2 given)"},
  {"[].index(1, x=1)", "TypeError: list.index() takes no keyword arguments"},
  {"[1].index(1, 'a')", "TypeError: slice indices must be integers or have an __index__ method"},
  {"(1).upper()", "AttributeError: 'int' object has no attribute 'upper'"},
  {"[].upper()", "AttributeError: 'list' object has no attribute 'upper'"},
  {"(1).index(1)", "AttributeError: 'int' object has no attribute 'index'"},
  {"(1, 2).append(3)", "AttributeError: 'tuple' object has no attribute 'append'"},
  {"'abc'.append(1)", "AttributeError: 'str' object has no attribute 'append'"},
  {"None.get('a')", "AttributeError: 'NoneType' object has no attribute 'get'"},
};

START_TEST(test_like_python)
{
  int failures = 0;
  for (size_t i = 0; i < sizeof python_cases / sizeof python_cases[0]; i++) {
    const char *got = run(python_cases[i].src);
    if (strcmp(got, python_cases[i].want) != 0) {
      fprintf(stderr, "%s\n  got:  %s\n  want: %s\n", python_cases[i].src, got,
              python_cases[i].want);
      failures++;
    }
  }
  ck_assert_int_eq(failures, 0);
}
END_TEST

/* ---- output ---- */

START_TEST(test_print)
{
  CHECK_RUN("print(1, 'a', 2.5, [0.1, 'b'], None)", "None");
  ck_assert_str_eq(output.data, "1 a 2.5 [0.1, 'b'] None\n");
  CHECK_RUN("print()", "None");
  ck_assert_str_eq(output.data, "\n");
  CHECK_RUN("print(1, 2, sep=', ', end='!')", "None");
  ck_assert_str_eq(output.data, "1, 2!");
  CHECK_RUN("print(1, 2, sep=None, end=None)", "None");
  ck_assert_str_eq(output.data, "1 2\n");
  CHECK_RUN("print('é', 'x', sep='')", "None");
  ck_assert_str_eq(output.data, "éx\n");
  CHECK_RUN("print(1, sep=1)", "TypeError: sep must be None or a string, not int");
  CHECK_RUN("print(1, end=1)", "TypeError: end must be None or a string, not int");
  CHECK_RUN("print(x=1)", "TypeError: 'x' is an invalid keyword argument for print()");
  CHECK_RUN("print(1, flush=True)", "None");
  ck_assert_str_eq(output.data, "1\n");
}
END_TEST

START_TEST(test_args_time)
{
  CHECK_RUN("args()", "[]");
  ObjSeq *a = lang_list_new(2);
  a->items[0] = v_obj(lang_str("data.csv"));
  a->items[1] = v_obj(lang_str("-v"));
  vm->argv = a;
  CHECK_RUN("args()", "['data.csv', '-v']");
  ObjSeq *t = lang_tuple_new(1);
  t->items[0] = v_obj(lang_str("x"));
  vm->argv = t;
  CHECK_RUN("args()", "['x']");
  CHECK_RUN("args(1)", "TypeError: args() takes no arguments (1 given)");
  CHECK_RUN("time(1)", "TypeError: time() takes no arguments (1 given)");
  Value fn, v;
  ck_assert(lang_dict_get(vm->builtins, lang_str("time"), &fn));
  ck_assert(AS_BUILTIN(fn)->fn(vm, 0, NULL, NULL, &v));
  ck_assert_int_eq(v.tag, V_FLOAT);
  ck_assert(fabs(v.f - (double)time(NULL)) < 5.0);
}
END_TEST

/* ---- where Mist differs from Python ---- */

START_TEST(test_mist_specific)
{
  /* 64-bit ints: overflow is an error, never a wrap */
  CHECK_RUN("abs(INT64_MIN)", "OverflowError: abs(-9223372036854775808) does not fit in a 64-bit int");
  CHECK_RUN("int('9223372036854775807')", "9223372036854775807");
  CHECK_RUN("int('-9223372036854775808')", "-9223372036854775808");
  CHECK_RUN("int('9223372036854775808')",
            "OverflowError: int() literal does not fit in a 64-bit int: 9223372036854775808");
  CHECK_RUN("int('-0x8000000000000000', 16)", "-9223372036854775808");
  CHECK_RUN("round(1e19)", "OverflowError: round() result does not fit in a 64-bit int");
  CHECK_RUN("round(-9.2e18)", "-9200000000000000000");
  CHECK_RUN("round(INT64_MAX, -1)", "OverflowError: round() result does not fit in a 64-bit int");
  CHECK_RUN("round(INT64_MAX, -19)", "OverflowError: round() result does not fit in a 64-bit int");
  CHECK_RUN("round(INT64_MAX, -20)", "0");
  CHECK_RUN("round(INT64_MIN, INT64_MIN)", "0");
  CHECK_RUN("enumerate([1, 2], INT64_MAX)",
            "OverflowError: enumerate() index does not fit in a 64-bit int");
  CHECK_RUN("enumerate([1], INT64_MAX)", "[(9223372036854775807, 1)]");
  CHECK_RUN("pow(INT64_MIN, 3, INT64_MIN)", "0");
  CHECK_RUN("pow(3, INT64_MAX, INT64_MAX)", "6348555216811415212");
  CHECK_RUN("pow(2, 62, INT64_MIN)", "-4611686018427387904");
  CHECK_RUN("hex(INT64_MIN)", "'-0x8000000000000000'");
  CHECK_RUN("bin(INT64_MIN)",
            "'-0b1000000000000000000000000000000000000000000000000000000000000000'");
  /* a UTF-8 str cannot hold a lone surrogate */
  CHECK_RUN("chr(55296)",
            "ValueError: chr() arg is a surrogate (0xd800), which a UTF-8 str cannot hold");
  CHECK_RUN("type(len)", "'builtin_function_or_method'");
  /* str() takes no encoding */
  CHECK_RUN("str(1, 2)", "TypeError: str() takes at most 1 argument (2 given)");
  /* dict keys are str */
  CHECK_RUN("dict([(1, 2)])", "TypeError: dict keys must be str in Mist, not int");
  /* huge results are a MemoryError, not a failed allocation */
  CHECK_RUN("list(range(INT64_MIN, INT64_MAX))",
            "MemoryError: result too large (18446744073709551615 items)");
  CHECK_RUN("'a'.ljust(INT64_MAX)", "MemoryError: result too large");
  CHECK_RUN("'a'.zfill(INT64_MAX)", "MemoryError: result too large");
  CHECK_RUN("map(abs, range(INT64_MAX))", "MemoryError: result too large (9223372036854775807 items)");
  /* but streaming over a big range needs no memory */
  CHECK_RUN("any(range(INT64_MIN, INT64_MAX))", "True");
  CHECK_RUN("max(range(9223372036854775804, INT64_MAX))", "9223372036854775806");
  CHECK_RUN("min(range(INT64_MIN, -9223372036854775805))", "-9223372036854775808");
  CHECK_RUN("reversed(range(9223372036854775805, INT64_MAX))",
            "[9223372036854775806, 9223372036854775805]");
  CHECK_RUN("range(INT64_MIN, INT64_MAX, INT64_MAX)",
            "range(-9223372036854775808, 9223372036854775807, 9223372036854775807)");
  CHECK_RUN("list(range(INT64_MIN, INT64_MAX, INT64_MAX))",
            "[-9223372036854775808, -1, 9223372036854775806]");
  /* a long loop stops on an interrupt */
  vm->interrupt = 1;
  CHECK_RUN("sum(range(100000))", "KeyboardInterrupt: interrupted");
  vm->interrupt = 0;
  CHECK_RUN("sum(range(100000))", "4999950000");
  /* print cannot be pointed at a file */
  CHECK_RUN("print(1, file=1)",
            "TypeError: print() cannot write to a file in Mist: output goes to the host");
}
END_TEST

START_TEST(test_mutating_methods)
{
  CHECK_RUN("[1].append(2)",
            "TypeError: lists are immutable in Mist: write xs = xs + [v] instead of xs.append(v)");
  CHECK_RUN("[1].extend([2])",
            "TypeError: lists are immutable in Mist: write xs = xs + ys instead of xs.extend(ys)");
  CHECK_RUN("[1].insert(0, 2)",
            "TypeError: lists are immutable in Mist: write xs = xs[:i] + [v] + xs[i:] instead of "
            "xs.insert(i, v)");
  CHECK_RUN("[1].pop()",
            "TypeError: lists are immutable in Mist: write v = xs[-1]; xs = xs[:-1] instead of "
            "v = xs.pop()");
  CHECK_RUN("[1].remove(1)",
            "TypeError: lists are immutable in Mist: write i = xs.index(v); xs = xs[:i] + "
            "xs[i + 1:] instead of xs.remove(v)");
  CHECK_RUN("[1].clear()", "TypeError: lists are immutable in Mist: write xs = [] instead of xs.clear()");
  CHECK_RUN("[2, 1].sort()",
            "TypeError: lists are immutable in Mist: write xs = sorted(xs) instead of xs.sort()");
  CHECK_RUN("[2, 1].reverse()",
            "TypeError: lists are immutable in Mist: write xs = reversed(xs) instead of xs.reverse()");
  CHECK_RUN("{'a': 1}.update({'b': 2})",
            "TypeError: dicts are immutable in Mist: write d[k] = e[k] for each key k of e "
            "(each d[k] = v makes a new d) instead of d.update(e)");
  CHECK_RUN("{'a': 1}.pop('a')",
            "TypeError: dicts are immutable in Mist: write v = d[k] and build the dict without k "
            "instead of v = d.pop(k)");
  CHECK_RUN("{}.clear()", "TypeError: dicts are immutable in Mist: write d = {} instead of d.clear()");
  CHECK_RUN("{}.setdefault('k', 1)",
            "TypeError: dicts are immutable in Mist: write if k not in d: d[k] = v (which makes a "
            "new d) instead of d.setdefault(k, v)");
  CHECK_RUN("{}.popitem()",
            "TypeError: dicts are immutable in Mist: write k = list(d)[-1]; v = d[k] and build the "
            "dict without k instead of d.popitem()");
  /* the wrong type: Python's AttributeError */
  CHECK_RUN("(1, 2).append(3)", "AttributeError: 'tuple' object has no attribute 'append'");
  CHECK_RUN("{}.append(3)", "AttributeError: 'dict' object has no attribute 'append'");
  CHECK_RUN("[].update({})", "AttributeError: 'list' object has no attribute 'update'");
  CHECK_RUN("'s'.pop()", "AttributeError: 'str' object has no attribute 'pop'");
  /* copy: immutable values are their own copies */
  CHECK_RUN("[1, 2].copy()", "[1, 2]");
  CHECK_RUN("{'a': 1}.copy()", "{'a': 1}");
  CHECK_RUN("'a'.copy()", "AttributeError: 'str' object has no attribute 'copy'");
}
END_TEST

static bool fake_split(MistVM *m, int argc, const Value *argv, const KwArgs *kw, Value *out)
{
  (void)m, (void)argv, (void)kw;
  *out = v_int(argc);
  return true;
}

/* x.f(a) on a type the method does not know is the builtin f(x, a) */
START_TEST(test_method_fallback)
{
  /* (split is also the global split(key, n) of random keys) */
  CHECK_RUN("(5).upper()", "AttributeError: 'int' object has no attribute 'upper'");
  lang_def_builtin(vm, "split", fake_split, -1, -1);
  CHECK_RUN("(5).split(2)", "2");
  CHECK_RUN("'a b'.split()", "['a', 'b']");
  CHECK_RUN("[1].split(2, 3)", "3");
}
END_TEST

/* keys via a builtin key function, through vm->call */
START_TEST(test_callables)
{
  CHECK_RUN("sorted(['b', 'A', 'c'], key=ord)", "['A', 'b', 'c']");
  CHECK_RUN("map(divmod, [7, 8], [2, 3])", "[(3, 1), (2, 2)]");
  CHECK_RUN("map(print, [1, 2])", "[None, None]");
  ck_assert_str_eq(output.data, "1\n2\n");
  CHECK_RUN("min([3, 1], key=str)", "1");
  CHECK_RUN("max([], key=len, default='none')", "'none'");
  CHECK_RUN("sorted([1, 2], key=1)", "TypeError: 'int' object is not callable");
  CHECK_RUN("map(1, [1])", "TypeError: 'int' object is not callable");
  CHECK_RUN("min([1, 2], key=divmod)", "TypeError: divmod expected 2 arguments, got 1");
  vm->call = NULL;
  CHECK_RUN("map(abs, [1])", "RuntimeError: no interpreter is installed to call functions from C");
  vm->call = test_call;
}
END_TEST

/* A long, stable sort, checked against insertion order. */
START_TEST(test_sort_stable)
{
  enum { N = 1000 };
  ObjSeq *xs = lang_list_new(N);
  for (int i = 0; i < N; i++)
    xs->items[i] = lang_tuple_of(2, v_int((i * 7919) % 13), v_int(i));
  Value fn, out;
  ck_assert(lang_dict_get(vm->builtins, lang_str("sorted"), &fn));
  Value arg = v_obj(xs);
  ck_assert(AS_BUILTIN(fn)->fn(vm, 1, &arg, NULL, &out));
  ObjSeq *r = AS_SEQ(out);
  ck_assert_int_eq(r->len, N);
  for (int i = 1; i < N; i++) {
    ObjSeq *a = AS_SEQ(r->items[i - 1]), *b = AS_SEQ(r->items[i]);
    ck_assert(a->items[0].i < b->items[0].i ||
              (a->items[0].i == b->items[0].i && a->items[1].i < b->items[1].i));
  }
  /* reverse=True keeps equal keys in their original order too */
  ObjStr *names[] = {lang_str("key"), lang_str("reverse")};
  Value kwv[] = {v_none(), v_bool(true)};
  KwArgs kw = {2, names, kwv};
  ck_assert(AS_BUILTIN(fn)->fn(vm, 1, &arg, &kw, &out));
  r = AS_SEQ(out);
  for (int i = 1; i < N; i++) {
    ObjSeq *a = AS_SEQ(r->items[i - 1]), *b = AS_SEQ(r->items[i]);
    ck_assert(a->items[0].i > b->items[0].i ||
              (a->items[0].i == b->items[0].i && a->items[1].i > b->items[1].i));
  }
}
END_TEST

/* ---- no input crashes ---- */

static Value pool[32];
static int npool;

static void fill_pool(void)
{
  static const char *const srcs[] = {
    "0", "1", "-1", "2", "7", "100", "INT64_MAX", "INT64_MIN", "0.0", "-1.5", "1e300", "inf",
    "nan", "True", "None", "''", "'a'", "'héllo wörld'", "' 1_0 '", "','", "(1, 'a')",
    "[3, 1, 2]", "['b', 'a']", "{'a': 1}", "range(0, 5)", "len", "abs", "[[1], 2]", "'\\u3000'",
  };
  npool = 0;
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    Parser ps = {srcs[i], srcs[i]};
    ck_assert(expr(&ps, &pool[npool++]));
  }
}

static unsigned long calls;

static void try_call(Value fn, int argc, const Value *argv, const KwArgs *kw)
{
  Value out = v_unbound();
  lang_error_clear(vm);
  output.len = 0;
  calls++;
  if (AS_BUILTIN(fn)->fn(vm, argc, argv, kw, &out)) {
    ck_assert(!vm->err.set);
    ck_assert(out.tag != V_UNBOUND);
    StrBuf sb;
    sb_init(&sb);
    if (!lang_repr(vm, out, &sb))
      lang_error_clear(vm);
  } else {
    ck_assert_msg(vm->err.set && vm->err.message, "%s failed without an error",
                  AS_BUILTIN(fn)->name);
  }
  lang_error_clear(vm);
}

static void sweep(ObjDict *table)
{
  static const char *const kwnames[] = {"key", "default", "start", "sep", "end", "reverse",
                                        "strict", "base", "maxsplit", "x", "ndigits", "object"};
  Value a[3];
  for (size_t f = 0; f < table->len; f++) {
    Value fn = table->entries[f].value;
    if (!v_is_obj(fn, O_BUILTIN)) continue;   /* a constant: pi, inf... */
    try_call(fn, 0, NULL, NULL);
    for (int i = 0; i < npool; i++) {
      a[0] = pool[i];
      try_call(fn, 1, a, NULL);
      for (int j = 0; j < npool; j++) {
        a[1] = pool[j];
        try_call(fn, 2, a, NULL);
        for (int k = (i * 7 + j) % 5; k < npool; k += 5) {
          a[2] = pool[k];
          try_call(fn, 3, a, NULL);
        }
      }
    }
    for (size_t n = 0; n < sizeof kwnames / sizeof kwnames[0]; n++) {
      ObjStr *name = lang_str(kwnames[n]);
      for (int i = 0; i < npool; i++) {
        KwArgs kw = {1, &name, &pool[i]};
        try_call(fn, 0, NULL, &kw);
        for (int j = 0; j < npool; j++) {
          a[0] = pool[j];
          try_call(fn, 1, a, &kw);
        }
      }
    }
  }
}

/* open(name, "w") with each string of the pool makes files: the sweep
 * runs in a folder of its own, removed afterwards, so that it never
 * writes into the folder the tests run in */
START_TEST(test_no_crash)
{
  char dir[] = "/tmp/mist_builtins_XXXXXX", back[4096];
  ck_assert(getcwd(back, sizeof back) && mkdtemp(dir) && chdir(dir) == 0);
  fill_pool();
  sweep(vm->builtins);
  sweep(vm->methods);
  ck_assert(chdir(back) == 0);
  char rm[64];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  ck_assert(system(rm) == 0);
  ck_assert_uint_gt(calls, 100000);
}
END_TEST

static Suite *builtins_suite(void)
{
  Suite *s = suite_create("builtins");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_like_python);
  tcase_add_test(tc, test_print);
  tcase_add_test(tc, test_args_time);
  tcase_add_test(tc, test_mist_specific);
  tcase_add_test(tc, test_mutating_methods);
  tcase_add_test(tc, test_method_fallback);
  tcase_add_test(tc, test_callables);
  tcase_add_test(tc, test_sort_stable);
  tcase_add_test(tc, test_no_crash);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  lang_gc_init();
  SRunner *sr = srunner_create(builtins_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
