/* test_eval.c: the interpreter through the public API (include/mist.h).
 *
 * Programs run with mist_eval, output is captured with mist_set_write,
 * and errors are read back with mist_error, exactly as a host sees
 * them.  The groups:
 *
 *  - Python semantics of int, float, str, tuple, list and dict
 *    operations: each program's expected output is what python3 prints
 *    for it (the table was generated with python3, not with Mist);
 *  - errors with Python's wording, at the position of the failing
 *    expression, and Mist's own (64-bit overflow);
 *  - the call stack: loops and tail calls in constant C stack, deep
 *    non-tail recursion, runaway recursion as an error, mutual
 *    recursion of top-level functions in any order;
 *  - closures capturing values, default and keyword arguments;
 *  - the REPL's needs: echo mode, MIST_INCOMPLETE, names that persist
 *    between calls;
 *  - the rendering of errors (position, source line, caret, traceback),
 *    two VMs in one process, and imports from files.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mist.h"

/* ---- output capture ---- */

#include "capture.h"


static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

/* Run src; it must succeed.  Returns what it printed. */
static const char *run_in(MistVM *v, Buf *b, const char *src, bool echo) {
  buf_clear(b);
  MistStatus s = mist_eval(v, "<t>", src, echo);
  ck_assert_msg(s == MIST_OK, "failed (status %d):\n%s\n--- error:\n%s", (int)s, src, mist_error(v));
  ck_assert_str_eq(mist_error(v), "");
  return b->data;
}

static const char *run(const char *src) { return run_in(vm, &out, src, false); }

/* Run src; it must fail with MIST_ERROR.  Returns the rendered error. */
static const char *run_error(const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_ERROR, "expected an error (got status %d) from:\n%s", (int)s, src);
  return mist_error(vm);
}

/* The first line of s, in a static buffer. */
static const char *first_line(const char *s) {
  static char line[1024];
  size_t n = strcspn(s, "\n");
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, s, n);
  line[n] = 0;
  return line;
}

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- Python semantics: expected outputs made by python3 ---- */

static const struct {
  const char *src;
  const char *out;
} py[] = {
  {"print(7 // 2, -7 // 2, 7 // -2, -7 // -2, 0 // 3)\n",
   "3 -4 -4 3 0\n"},
  {"print(7 % 3, -7 % 3, 7 % -3, -7 % -3, 0 % -3)\n",
   "1 2 -2 -1 0\n"},
  {"print(7.5 // 2, -7.5 // 2, 7.5 % -2, -0.5 % 1.0, 5 % 2.5)\n",
   "3.0 -4.0 -0.5 0.5 0.0\n"},
  {"print(divmod(7, -2), divmod(-7.5, 2))\n",
   "(-4, -1) (-4.0, 0.5)\n"},
  {"print(2 ** 10, 2 ** 0, (-2) ** 3, -2 ** 2, 2 ** -2, 4 ** 0.5, 2.0 ** 3)\n",
   "1024 1 -8 -4 0.25 2.0 8.0\n"},
  {"print(2 ** 62, 3 ** 39, (-2) ** 63)\n",
   "4611686018427387904 4052555153018976267 -9223372036854775808\n"},
  {"print(9223372036854775807, -9223372036854775807 - 1)\n",
   "9223372036854775807 -9223372036854775808\n"},
  {"print(1 + 2 * 3, (1 + 2) * 3, 10 - 3 - 2, 2 ** 3 ** 2, -3 ** 2)\n",
   "7 9 5 512 -9\n"},
  {"print(7 / 2, 6 / 3, -1 / 4, 1 / 3)\n",
   "3.5 2.0 -0.25 0.3333333333333333\n"},
  {"print(1 == 1.0, 1 < 1.5, 3 != 3.0, 0.1 + 0.2 == 0.3)\n",
   "True True False False\n"},
  {"print(abs(-7), abs(-7.5), abs(0), -0.0, 0.0 == -0.0)\n",
   "7 7.5 0 -0.0 True\n"},
  {"print(int(7.9), int(-7.9), int('  12 '), int('-3'), float('1e3'), float(2))\n",
   "7 -7 12 -3 1000.0 2.0\n"},
  {"print(round(0.5), round(1.5), round(2.5), round(-2.5), round(3.14159, 2), round(7))\n",
   "0 2 2 -2 3.14 7\n"},
  {"print(True + True, True * 3, 3 - False)\n",
   "2 3 3\n"},
  {"print(0.1, 1.0, 1e16, 1e-5, 123456789.123, 2.5e-10, 1 / 7)\n",
   "0.1 1.0 1e+16 1e-05 123456789.123 2.5e-10 0.14285714285714285\n"},
  {"print(float('inf'), -float('inf'), 1e308 * 10)\n",
   "inf -inf inf\n"},
  {"s = 'hello world'\n"
   "print(s[0], s[-1], s[2:5], s[:3], s[6:], s[-5:-1], s[::-1], s[1::3], s[100:], s[-100:2])\n",
   "h d llo hel world worl dlrow olleh eood  he\n"},
  {"print('ab' + 'cd', 'ab' * 3, 3 * 'x', 'ab' * 0, 'ab' * -2, '' + '')\n",
   "abcd ababab xxx   \n"},
  {"print('abc' < 'abd', 'ab' < 'abc', 'B' < 'a', 'a' in 'cat', '' in 'x', 'z' not in 'cat')\n",
   "True True True True True True\n"},
  {"print(len('héllo'), 'héllo'[1], 'héllo'[::-1])\n",
   "5 é olléh\n"},
  {"print(str(42), str(4.0), str(None), str(True), str([1, 'a']), repr('it\\'s'), repr(\"a\\nb\"))\n",
   "42 4.0 None True [1, 'a'] \"it's\" 'a\\nb'\n"},
  {"print('a,b,,c'.split(','), ' x  y '.split(), '-'.join(['a', 'b', 'c']), 'abc'.upper(), ' pad '.strip())\n",
   "['a', 'b', '', 'c'] ['x', 'y'] a-b-c ABC pad\n"},
  {"print('hello'.replace('l', 'L'), 'hello'.find('l'), 'hello'.count('l'), 'hello'.startswith('he'), 'x'.zfill(3))\n",
   "heLLo 2 2 True 00x\n"},
  {"t = (1, 'a', 2.5)\n"
   "print(t, t[1], t[-1], t[::2], t + (None,), t * 2, len(t), (1,), ())\n",
   "(1, 'a', 2.5) a 2.5 (1, 2.5) (1, 'a', 2.5, None) (1, 'a', 2.5, 1, 'a', 2.5) 3 (1,) ()\n"},
  {"print((1, 2) < (1, 3), (1, 2) < (1, 2, 0), (2,) > (1, 9), (1, 2) == (1, 2), 2 in (1, 2))\n",
   "True True True True True\n"},
  {"a, b, c = (1, 2, 3)\n"
   "print(c, b, a)\n",
   "3 2 1\n"},
  {"xs = [3, 1, 2]\n"
   "print(xs, xs[0], xs[-1], xs[1:], xs + [4], xs * 2, sorted(xs), len(xs), min(xs), max(xs), sum(xs))\n",
   "[3, 1, 2] 3 2 [1, 2] [3, 1, 2, 4] [3, 1, 2, 3, 1, 2] [1, 2, 3] 3 1 3 6\n"},
  {"xs = [1, 2, 3]\n"
   "ys = xs\n"
   "xs = xs + [4]\n"
   "print(xs, ys)\n",
   "[1, 2, 3, 4] [1, 2, 3]\n"},
  {"xs = [1, 2, 3, 4, 5]\n"
   "xs[1:3] = ['a']\n"
   "print(xs)\n"
   "xs[0] = 9\n"
   "print(xs, xs.index(4), xs.count(9))\n",
   "[1, 'a', 4, 5]\n"
   "[9, 'a', 4, 5] 2 1\n"},
  {"print([1, [2, 3]] == [1, [2, 3]], [1, 2] < [1, 2, 3], [] == [], [0] * 3)\n",
   "True True True [0, 0, 0]\n"},
  {"print(list(map(lambda x: x * 2, [1, 2])), list(zip([1, 2, 3], 'ab')), list(enumerate('xy', 1)))\n",
   "[2, 4] [(1, 'a'), (2, 'b')] [(1, 'x'), (2, 'y')]\n"},
  {"d = {'b': 1, 'a': 2}\n"
   "d['c'] = 3\n"
   "d['b'] = 4\n"
   "print(d, list(d), list(d.keys()), list(d.values()), list(d.items()))\n",
   "{'b': 4, 'a': 2, 'c': 3} ['b', 'a', 'c'] ['b', 'a', 'c'] [4, 2, 3] [('b', 4), ('a', 2), ('c', 3)]\n"},
  {"d = {'x': 1}\n"
   "print(d.get('x'), d.get('y'), d.get('y', 0), 'x' in d, 'y' not in d, len(d), d == {'x': 1})\n",
   "1 None 0 True True 1 True\n"},
  {"d = {}\n"
   "for k in ['z', 'y', 'x', 'y']:\n"
   "    d[k] = len(d)\n"
   "print(d)\n",
   "{'z': 0, 'y': 3, 'x': 2}\n"},
  {"def f(a, b=2, c=3):\n"
   "    return a * 100 + b * 10 + c\n"
   "print(f(1), f(1, 5), f(1, c=7), f(c=1, b=2, a=3))\n",
   "123 153 127 321\n"},
  {"def f(x):\n"
   "    return x if x > 0 else -x\n"
   "print(f(-3), f(4), (lambda: 5)())\n",
   "3 4 5\n"},
  {"x = 0\n"
   "for i in range(10):\n"
   "    if i % 2:\n"
   "        continue\n"
   "    if i > 6:\n"
   "        break\n"
   "    x += i\n"
   "print(x, i)\n",
   "12 8\n"},
};

START_TEST(t_python_semantics) {
  const char *got = run(py[_i].src);
  ck_assert_msg(strcmp(got, py[_i].out) == 0, "program:\n%s--- python3 prints:\n%s--- mist printed:\n%s",
                py[_i].src, py[_i].out, got);
}
END_TEST

/* ---- errors: the first line of the rendered error ---- */

static const struct {
  const char *src;
  const char *err;
} errs[] = {
  /* 64-bit ints: overflow is an error, never a silent wrap */
  {"print(9223372036854775807 + 1)", "<t>:1:7: error: integer overflow"},
  {"x = -9223372036854775807 - 1\nprint(x - 1)", "<t>:2:7: error: integer overflow"},
  {"print(3037000500 * 3037000500)", "<t>:1:7: error: integer overflow"},
  {"print(2 ** 63)", "<t>:1:7: error: integer overflow"},
  {"x = 2\nx **= 64", "<t>:2:1: error: integer overflow"},
  {"x = -9223372036854775807 - 1\nprint(-x)", "<t>:2:7: error: integer overflow"},
  {"x = -9223372036854775807 - 1\nprint(x // -1)", "<t>:2:7: error: integer overflow"},
  {"print(int(1e30))", "<t>:1:7: error: integer overflow"},
  /* division by zero, with Python 3.11's messages */
  {"print(1 // 0)", "<t>:1:7: error: integer division or modulo by zero"},
  {"print(1 % 0)", "<t>:1:7: error: integer modulo by zero"},
  {"print(1 / 0)", "<t>:1:7: error: division by zero"},
  {"print(1.5 / 0.0)", "<t>:1:7: error: float division by zero"},
  {"print(1.5 // 0)", "<t>:1:7: error: float floor division by zero"},
  {"print(1.5 % 0)", "<t>:1:7: error: float modulo"},
  {"print(0 ** -1)", "<t>:1:7: error: 0.0 cannot be raised to a negative power"},
  /* indexing */
  {"print('abc'[3])", "<t>:1:7: error: string index out of range"},
  {"print((1, 2)[-3])", "<t>:1:7: error: tuple index out of range"},
  {"xs = [1]\nprint(xs[1])", "<t>:2:7: error: list index out of range"},
  {"xs = [1]\nxs[2] = 0", "<t>:2:1: error: list assignment index out of range"},
  {"d = {'a': 1}\nprint(d['b'])", "<t>:2:7: error: KeyError: 'b'"},
  {"t = (1, 2)\nt[0] = 3", "<t>:2:1: error: 'tuple' object does not support item assignment"},
  {"print([1][1.0])", "<t>:1:7: error: list indices must be integers or slices, not float"},
  /* types */
  {"print('a' + 1)", "<t>:1:7: error: can only concatenate str (not \"int\") to str"},
  {"print(1 + 'a')", "<t>:1:7: error: unsupported operand type(s) for +: 'int' and 'str'"},
  {"print([1] + (2,))", "<t>:1:7: error: can only concatenate list (not \"tuple\") to list"},
  {"print(1 < 'a')", "<t>:1:7: error: '<' not supported between instances of 'int' and 'str'"},
  {"print(-'a')", "<t>:1:7: error: bad operand type for unary -: 'str'"},
  {"print(len(5))", "<t>:1:7: error: object of type 'int' has no len()"},
  {"x = 3\nx()", "<t>:2:1: error: 'int' object is not callable"},
  {"print(int('x1'))", "<t>:1:7: error: invalid literal for int() with base 10: 'x1'"},
  {"print({1: 2})", "<t>:1:7: error: dict keys must be str, not 'int'"},
  /* unpacking */
  {"a, b = 1, 2, 3", "<t>:1:1: error: too many values to unpack (expected 2)"},
  {"a, b, c = [1, 2]", "<t>:1:1: error: not enough values to unpack (expected 3, got 2)"},
  {"a, b = 5", "<t>:1:1: error: cannot unpack non-iterable int object"},
  /* names */
  {"print(nope)", "<t>:1:7: error: name 'nope' is not defined"},
  {"def f():\n    y = x\n    x = 1\n    return y\nf()",
   "<t>:2:9: error: cannot access local variable 'x' where it is not associated with a value"},
  /* asserts point at the keyword */
  {"x = 1\nassert x > 1, 'too small'", "<t>:2:1: error: assertion failed: too small"},
  {"assert []", "<t>:1:1: error: assertion failed"},
  /* methods that would mutate */
  {"xs = [1]\nxs.append(2)",
   "<t>:2:1: error: lists are immutable in Mist: write xs = xs + [v] instead of xs.append(v)"},
  {"d = {}\nd.update({'a': 1})", "<t>:2:1: error: dicts are immutable in Mist: write d[k] = e[k] for "
                                "each key k of e (each d[k] = v makes a new d) instead of d.update(e)"},
};

START_TEST(t_errors) {
  const char *e = run_error(errs[_i].src);
  ck_assert_msg(strcmp(first_line(e), errs[_i].err) == 0, "program:\n%s\n--- expected:\n%s\n--- got:\n%s",
                errs[_i].src, errs[_i].err, e);
  /* the VM stays usable after an error */
  ck_assert_str_eq(run("print('still here')"), "still here\n");
}
END_TEST

/* ---- the call stack ---- */

static long max_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

START_TEST(t_long_loop) {
  ck_assert_str_eq(run("i = 0\nwhile i < 1000000:\n    i += 1\nprint(i)"), "1000000\n");
  ck_assert_str_eq(run("def count(n):\n"
                       "    s = 0\n"
                       "    for i in range(n):\n"
                       "        if i % 2:\n"
                       "            continue\n"
                       "        s += 1\n"
                       "    return s\n"
                       "print(count(1000000))"),
                   "500000\n");
}
END_TEST

START_TEST(t_tail_calls) {
  /* a tail call replaces the caller's frame: 10^5 (and nearly the whole
   * recursion limit of 200000) levels of tail recursion must not grow
   * the C stack.  A Mist frame takes hundreds of bytes of stack, so
   * 190000 of them would show as well over 48 MB of resident memory. */
  long before = max_rss_kb();
  ck_assert_str_eq(run("def f(n, acc):\n"
                       "    if n == 0:\n"
                       "        return acc\n"
                       "    return f(n - 1, acc + 1)\n"
                       "print(f(100000, 0), f(190000, 0))"),
                   "100000 190000\n");
  long grown = max_rss_kb() - before;
  ck_assert_msg(grown < 48 * 1024, "tail recursion grew the resident set by %ld kB", grown);
  /* mutual tail recursion of top-level functions, defined in either order */
  ck_assert_str_eq(run("def even(n):\n"
                       "    return True if n == 0 else odd(n - 1)\n"
                       "def odd(n):\n"
                       "    return False if n == 0 else even(n - 1)\n"
                       "print(even(100000), odd(100001), even(7))"),
                   "True True False\n");
}
END_TEST

START_TEST(t_deep_recursion) {
  ck_assert_str_eq(run("def depth(n):\n"
                       "    if n == 0:\n"
                       "        return 0\n"
                       "    return 1 + depth(n - 1)\n"
                       "print(depth(10000))"),
                   "10000\n");
  ck_assert_str_eq(run("def build(n):\n"
                       "    return [] if n == 0 else [n] + build(n - 1)\n"
                       "print(len(build(10000)), build(3))"),
                   "10000 [3, 2, 1]\n");
}
END_TEST

START_TEST(t_runaway_recursion) {
  /* (one non-tail case only: unwinding 200000 frames is slow for now) */
  static const char *const progs[] = {
    /* non-tail */
    "def f(n):\n    return 1 + f(n + 1)\nf(0)",
    /* tail: the frame is reused, but the level still counts */
    "def f(n):\n    return f(n + 1)\nf(0)",
    /* mutual, in tail position */
    "def a(n):\n    return b(n + 1)\ndef b(n):\n    return a(n + 1)\na(0)",
  };
  for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
    const char *e = run_error(progs[i]);
    ck_assert_msg(strstr(first_line(e), "error: maximum recursion depth exceeded") != NULL, "%s\n--- got:\n%.300s",
                  progs[i], e);
    /* and the VM recovers: its depth count is back to zero */
    ck_assert_str_eq(run("def g(n):\n    return 0 if n == 0 else 1 + g(n - 1)\nprint(g(5000))"), "5000\n");
  }
}
END_TEST

START_TEST(t_mutual_recursion_any_order) {
  /* a top-level function may use a function defined further down */
  ck_assert_str_eq(run("def first(n):\n"
                       "    return [] if n == 0 else [n] + second(n - 1)\n"
                       "def second(n):\n"
                       "    return [] if n == 0 else [-n] + first(n - 1)\n"
                       "print(first(4))"),
                   "[4, -3, 2, -1]\n");
  /* or one defined by a later mist_eval, as in the REPL */
  run("def later_user(x):\n    return helper_defined_later(x) * 2");
  ck_assert_str_eq(run("def helper_defined_later(x):\n    return x + 1\nprint(later_user(3))"), "8\n");
  /* calling it before the name exists is a NameError at the use */
  run("def uses_missing():\n    return not_yet()");
  ck_assert_str_eq(first_line(run_error("uses_missing()")), "<t>:2:12: error: name 'not_yet' is not defined");
}
END_TEST

/* ---- closures and arguments ---- */

START_TEST(t_closures_capture_values) {
  /* Mist semantics, not Python's: a closure keeps the values its free
   * variables had when it was made (Python prints 2, [2, 2, 2], 20) */
  ck_assert_str_eq(run("x = 1\n"
                       "f = lambda: x\n"
                       "x = 2\n"
                       "print(f())\n"
                       "fs = []\n"
                       "for i in range(3):\n"
                       "    fs = fs + [lambda: i]\n"
                       "print([fs[0](), fs[1](), fs[2]()])\n"),
                   "1\n[0, 1, 2]\n");
  ck_assert_str_eq(run("def make():\n"
                       "    n = 10\n"
                       "    g = lambda: n\n"
                       "    n = 20\n"
                       "    return g\n"
                       "print(make()())"),
                   "10\n");
  /* values never alias: updating one name leaves the others alone */
  ck_assert_str_eq(run("xs = [1, 2]\n"
                       "keep = lambda: xs\n"
                       "ys = xs\n"
                       "xs[0] = 9\n"
                       "print(xs, ys, keep())"),
                   "[9, 2] [1, 2] [1, 2]\n");
  /* a closure made in a loop body captures that iteration's values */
  ck_assert_str_eq(run("def adders():\n"
                       "    out = []\n"
                       "    for k in range(3):\n"
                       "        def add(x):\n"
                       "            return x + k\n"
                       "        out = out + [add]\n"
                       "    return out\n"
                       "a = adders()\n"
                       "print(a[0](10), a[1](10), a[2](10))"),
                   "10 11 12\n");
}
END_TEST

START_TEST(t_defaults_and_keywords) {
  ck_assert_str_eq(run("def f(a, b=2, c=3):\n"
                       "    return (a, b, c)\n"
                       "print(f(1), f(1, 5), f(1, c=7), f(c=1, b=2, a=3), f(a=0))"),
                   "(1, 2, 3) (1, 5, 3) (1, 2, 7) (3, 2, 1) (0, 2, 3)\n");
  /* defaults are evaluated once, when the def runs */
  ck_assert_str_eq(run("n = 5\n"
                       "def g(x=n * 2):\n"
                       "    return x\n"
                       "n = 6\n"
                       "print(g(), g(1))"),
                   "10 1\n");
  ck_assert_str_eq(run("h = lambda a, b=10: a - b\nprint(h(1), h(1, 2), h(b=1, a=5))"), "-9 -1 4\n");
  ck_assert_str_eq(run("print(sorted([3, 1, 2], reverse=True), max([1, -5], key=abs))"), "[3, 2, 1] -5\n");
  ck_assert_str_eq(run("print(1, 2, sep='-', end='!\\n')"), "1-2!\n");

  run("def f(a, b=2):\n    return a");
  static const char *const bad[][2] = {
    {"f()", "<t>:1:1: error: f() missing 1 required positional argument: 'a'"},
    {"f(1, 2, 3)", "<t>:1:1: error: f() takes from 1 to 2 positional arguments but 3 were given"},
    {"f(1, c=3)", "<t>:1:1: error: f() got an unexpected keyword argument 'c'"},
    {"f(1, a=3)", "<t>:1:1: error: f() got multiple values for argument 'a'"},
    {"f(b=1)", "<t>:1:1: error: f() missing 1 required positional argument: 'a'"},
    {"def g(x, y, z):\n    return x\ng(1)",
     "<t>:3:1: error: g() missing 2 required positional arguments: 'y' and 'z'"},
    {"def g():\n    return 0\ng(1)", "<t>:3:1: error: g() takes 0 positional arguments but 1 was given"},
    {"(lambda x: x)()", "<t>:1:1: error: <lambda>() missing 1 required positional argument: 'x'"},
    {"print(len())", "<t>:1:7: error: len() takes exactly one argument (0 given)"},
    {"print(abs(x=1))", "<t>:1:7: error: abs() takes no keyword arguments"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_str_eq(first_line(run_error(bad[i][0])), bad[i][1]);
}
END_TEST

/* ---- the REPL's needs ---- */

START_TEST(t_echo) {
  ck_assert_str_eq(run_in(vm, &out, "1 + 2", true), "3\n");
  ck_assert_str_eq(run_in(vm, &out, "'a' * 2", true), "'aa'\n");
  ck_assert_str_eq(run_in(vm, &out, "[0.1, (1,), {'k': None}]", true), "[0.1, (1,), {'k': None}]\n");
  /* not echoed: None, statements, several statements, and without echo */
  ck_assert_str_eq(run_in(vm, &out, "None", true), "");
  ck_assert_str_eq(run_in(vm, &out, "x = 5", true), "");
  ck_assert_str_eq(run_in(vm, &out, "x\nx", true), "");
  ck_assert_str_eq(run_in(vm, &out, "x", false), "");
  /* print's own output, and a call returning None */
  ck_assert_str_eq(run_in(vm, &out, "print('hi')", true), "hi\n");
  /* names persist between calls */
  ck_assert_str_eq(run_in(vm, &out, "x * 2", true), "10\n");
  ck_assert_str_eq(run_in(vm, &out, "def sq(v):\n    return v * v\n", true), "");
  ck_assert_str_eq(run_in(vm, &out, "sq(x)", true), "25\n");
  /* a name from an earlier entry is read when the code runs, so a later
   * entry's rebinding is seen (within one entry it would be captured) */
  run("k = 1");
  run("def getk():\n    return k");
  run("k = 2");
  ck_assert_str_eq(run("print(getk())"), "2\n");
  ck_assert_str_eq(run("k = 1\ndef getk2():\n    return k\nk = 2\nprint(getk2())"), "1\n");
}
END_TEST

/* The REPL's helpers: _ after an echo, completion, exit(). */
START_TEST(t_repl_helpers) {
  ck_assert_str_eq(run_in(vm, &out, "6 * 7", true), "42\n");
  ck_assert_str_eq(run_in(vm, &out, "_ + 1", true), "43\n");
  ck_assert_str_eq(run_in(vm, &out, "None", true), "");
  ck_assert_str_eq(run_in(vm, &out, "_", true), "43\n");   /* None is not shown, so not kept */
  run("word = 'abc'");
  char **c = mist_complete(vm, "isinst");
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(c[0], "isinstance");
  ck_assert_ptr_null(c[1]);
  free(c[0]);
  free(c);
  c = mist_complete(vm, "word.st");
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(c[0], "word.startswith");
  ck_assert_str_eq(c[1], "word.strip");
  ck_assert_ptr_null(c[2]);
  for (int i = 0; c[i]; i++) free(c[i]);
  free(c);
  ck_assert_ptr_null(mist_complete(vm, "no_such_name_xyz."));
  ck_assert_ptr_null(mist_complete(vm, "zzzqqq"));
  c = mist_complete(vm, "wh");   /* a keyword and a builtin */
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(c[0], "where");
  ck_assert_str_eq(c[1], "while");
  for (int i = 0; c[i]; i++) free(c[i]);
  free(c);
  ck_assert_int_eq(mist_exit_code(vm), -1);
  ck_assert_int_eq(mist_eval(vm, "<t>", "exit(4)", false), MIST_ERROR);
  ck_assert_int_eq(mist_exit_code(vm), 4);
  ck_assert_str_eq(mist_error(vm), "");
  ck_assert_int_eq(mist_eval(vm, "<t>", "quit('stop here')", false), MIST_ERROR);
  ck_assert_int_eq(mist_exit_code(vm), 1);
  ck_assert_str_eq(mist_error(vm), "stop here");
  ck_assert_int_eq(mist_eval(vm, "<t>", "1 / 0", false), MIST_ERROR);
  ck_assert_int_eq(mist_exit_code(vm), -1);
}
END_TEST

START_TEST(t_incomplete) {
  static const char *const more[] = {
    "if x:", "if x:\n", "(1 +", "x = [1,\n2", "def f():\n", "d = {'a':", "for i in range(3):\n",
    "x = 1 + \\\n", "\"\"\"doc", "@dec",
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    MistStatus s = mist_eval(vm, "<t>", more[i], false);
    ck_assert_msg(s == MIST_INCOMPLETE, "%s: status %d: %s", more[i], (int)s, mist_error(vm));
  }
  /* complete but wrong: an error, not a request for more */
  static const char *const wrong[] = {"(1 +)", "1 +", "x = ", "if x\n", "s = 'abc"};
  for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
    MistStatus s = mist_eval(vm, "<t>", wrong[i], false);
    ck_assert_msg(s == MIST_ERROR, "%s: status %d", wrong[i], (int)s);
  }
  /* the incomplete text, finished, runs */
  ck_assert_str_eq(run("x = 3\nif x:\n    print(x)\n"), "3\n");
  ck_assert_str_eq(run("print((1 +\n2))"), "3\n");
}
END_TEST

/* ---- error rendering ---- */

START_TEST(t_error_render) {
  const char *e = run_error("def g(x):\n"
                            "    return 1 // x\n"
                            "def f(x):\n"
                            "    return g(x) + 1\n"
                            "print(f(0))\n");
  ck_assert_str_eq(e, "<t>:2:12: error: integer division or modulo by zero\n"
                      "        return 1 // x\n"
                      "               ^^^^^^\n"
                      "Traceback (innermost last):\n"
                      "  <t>:5:7 in <module>\n"
                      "  <t>:4:12 in f\n"
                      "  <t>:2:12 in g\n");
  /* a syntax error has no traceback */
  e = run_error("x = 1\ny = (x + )\n");
  ck_assert_str_eq(e, "<t>:2:10: error: invalid syntax\n"
                      "    y = (x + )\n"
                      "             ^\n");
  /* the caret spans the failing call; lambdas are named <lambda> */
  e = run_error("f = lambda v: v[3]\nprint(f([1]))\n");
  ck_assert_str_eq(e, "<t>:1:15: error: list index out of range\n"
                      "    f = lambda v: v[3]\n"
                      "                  ^^^^\n"
                      "Traceback (innermost last):\n"
                      "  <t>:2:7 in <module>\n"
                      "  <t>:1:15 in <lambda>\n");
  /* a nested function is named by its own name */
  e = run_error("def outer():\n"
                "    def inner(a):\n"
                "        return a + 'x'\n"
                "    return [inner(1)]\n"
                "outer()\n");
  ck_assert_str_eq(e, "<t>:3:16: error: unsupported operand type(s) for +: 'int' and 'str'\n"
                      "            return a + 'x'\n"
                      "                   ^^^^^^^\n"
                      "Traceback (innermost last):\n"
                      "  <t>:5:1 in <module>\n"
                      "  <t>:4:13 in outer\n"
                      "  <t>:3:16 in inner\n");
  /* after a successful call the error is gone */
  run("pass");
  ck_assert_str_eq(mist_error(vm), "");
}
END_TEST

/* ---- two VMs ---- */

START_TEST(t_two_vms) {
  Buf out2 = {0};
  buf_clear(&out2);
  MistVM *vm2 = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm2);
  mist_set_write(vm2, capture, &out2);
  run("x = 1\ndef f():\n    return 'first'");
  run_in(vm2, &out2, "x = 2\ndef f():\n    return 'second'", false);
  ck_assert_str_eq(run("print(x, f())"), "1 first\n");
  ck_assert_str_eq(run_in(vm2, &out2, "print(x, f())", false), "2 second\n");
  /* an error in one leaves the other alone */
  ck_assert_int_eq(mist_eval(vm2, "<t2>", "print(1 // 0)", false), MIST_ERROR);
  ck_assert(starts_with(mist_error(vm2), "<t2>:1:7: error: integer division or modulo by zero"));
  ck_assert_str_eq(mist_error(vm), "");
  ck_assert_str_eq(run("print(x + 1)"), "2\n");
  /* names defined in one are unknown in the other */
  ck_assert_int_eq(mist_eval(vm2, "<t2>", "only_in_one = 1", false), MIST_OK);
  ck_assert_str_eq(first_line(run_error("print(only_in_one)")),
                   "<t>:1:7: error: name 'only_in_one' is not defined");
  mist_free(vm2);
  ck_assert_str_eq(run("print(f())"), "first\n");
  free(out2.data);
}
END_TEST

/* ---- imports ---- */

static char tmpdir[256];

static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_msg(f != NULL, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static MistStatus run_file(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  buf_clear(&out);
  return mist_run_file(vm, path);
}

START_TEST(t_imports) {
  snprintf(tmpdir, sizeof tmpdir, "%s/mist-test-import.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  write_file(tmpdir, "helper.ms",
             "SCALE = 10\n"
             "def scale(x):\n"
             "    return x * SCALE\n"
             "def twice(x):\n"
             "    return scale(scale(x)) // SCALE\n"
             "print('helper loaded')\n");
  write_file(tmpdir, "main.ms",
             "import helper\n"
             "import helper as h\n"
             "print(helper.scale(4), h.twice(3), h.SCALE, h is helper, type(h))\n"
             "import helper\n"
             "print('ok')\n");
  ck_assert_msg(run_file("main.ms") == MIST_OK, "%s", mist_error(vm));
  /* loaded once, however many times it is imported */
  ck_assert_str_eq(out.data, "helper loaded\n40 30 10 True module\nok\n");

  /* a missing attribute and a missing module */
  write_file(tmpdir, "attr.ms", "import helper as h\nprint(h.nope)\n");
  ck_assert_int_eq(run_file("attr.ms"), MIST_ERROR);
  ck_assert(strstr(first_line(mist_error(vm)), "attr.ms:2:7: error: module 'helper' has no attribute 'nope'"));
  write_file(tmpdir, "missing.ms", "print(1)\nimport no_such_module_here\n");
  ck_assert_int_eq(run_file("missing.ms"), MIST_ERROR);
  ck_assert_str_eq(out.data, "1\n");
  ck_assert(strstr(first_line(mist_error(vm)), "missing.ms:2:8: error: No module named 'no_such_module_here'"));

  /* an error inside the module points into the module's file */
  write_file(tmpdir, "_bad.ms", "def f(x):\n    return x // 0\n");
  write_file(tmpdir, "usebad.ms", "import _bad\n_bad.f(1)\n");
  ck_assert_int_eq(run_file("usebad.ms"), MIST_ERROR);
  ck_assert(strstr(first_line(mist_error(vm)), "_bad.ms:2:12: error: integer division or modulo by zero"));
  ck_assert(strstr(mist_error(vm), "usebad.ms:2:1 in <module>") != NULL);

  /* the importing file's folder is searched, not the working directory */
  char sub[300];
  snprintf(sub, sizeof sub, "%s/sub", tmpdir);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  write_file(sub, "helper.ms", "WHO = 'sub'\n");
  write_file(sub, "main.ms", "import helper\nprint(helper.WHO)\n");
  ck_assert_msg(run_file("sub/main.ms") == MIST_OK, "%s", mist_error(vm));
  ck_assert_str_eq(out.data, "sub\n");
  rm_tree(tmpdir);
}
END_TEST

static Suite *eval_suite(void) {
  Suite *s = suite_create("eval");
  TCase *tc = tcase_create("semantics");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, t_python_semantics, 0, (int)(sizeof py / sizeof py[0]));
  tcase_add_loop_test(tc, t_errors, 0, (int)(sizeof errs / sizeof errs[0]));
  tcase_add_test(tc, t_closures_capture_values);
  tcase_add_test(tc, t_defaults_and_keywords);
  suite_add_tcase(s, tc);

  TCase *st = tcase_create("stack");
  tcase_add_checked_fixture(st, setup, teardown);
  tcase_set_timeout(st, 120);
  tcase_add_test(st, t_long_loop);
  tcase_add_test(st, t_tail_calls);
  tcase_add_test(st, t_deep_recursion);
  tcase_add_test(st, t_runaway_recursion);
  tcase_add_test(st, t_mutual_recursion_any_order);
  suite_add_tcase(s, st);

  TCase *api = tcase_create("api");
  tcase_add_checked_fixture(api, setup, teardown);
  tcase_set_timeout(api, 60);
  tcase_add_test(api, t_echo);
  tcase_add_test(api, t_repl_helpers);
  tcase_add_test(api, t_incomplete);
  tcase_add_test(api, t_error_render);
  tcase_add_test(api, t_two_vms);
  tcase_add_test(api, t_imports);
  suite_add_tcase(s, api);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(eval_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
