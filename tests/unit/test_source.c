/* test_source.c: the Check suite of stdlib/source.c, IR graphs printed back
 * as Mist source.
 *
 * Each case is a program in three parts: an optional prelude (top-level
 * values), defs (top-level functions only) and a driver that calls them
 * and prints the results.  A case checks that the source form keeps the
 * meaning:
 *
 *  - the program is run as written (prelude, defs, driver, each through
 *    mist_eval as the REPL would) and its output kept;
 *  - prelude and defs are lowered (parse_module + lower_module, as
 *    api/mist.c does) and every top-level function is printed with
 *    std_print_source;
 *  - in a fresh interpreter, the prelude, then the printed functions,
 *    then the driver run, and must print the same (or fail with the same
 *    error message, for the cases that end in an error);
 *  - the printout itself is lowered and printed again, and that second
 *    generation must run the same way too (it exercises the shapes the
 *    printer makes: nested defs with free variables, conditionals,
 *    unpacking).
 *
 * A few whole programs are printed from their module's graph and run
 * the same way.  A second group pins down the text of a few small
 * functions (golden source, for readability), and a third checks the
 * ways in: `show_source` and `show_ir` as builtins (also on a
 * derivative, whose printout must parse), mist_print_ir with
 * MIST_IR_SOURCE.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "lang/gc.h"
#include "lang/strbuf.h"
#include "mist.h"
#include "parser/lower.h"
#include "parser/parse.h"
#include "stdlib/source.h"

typedef struct Case {
  const char *name;
  const char *prelude;   /* may be NULL */
  const char *defs;
  const char *driver;
} Case;

static const Case cases[] = {
  {"straight", NULL,
    "def f(x, y):\n"
    "    z = x * 2 + y\n"
    "    return z - 1 / x\n",
    "print(f(4, 3), f(-2, 0.5))\n"},
  {"if_elif_else", NULL,
    "def sign(x):\n"
    "    if x > 0:\n"
    "        s = 1\n"
    "    elif x < 0:\n"
    "        s = -1\n"
    "    else:\n"
    "        s = 0\n"
    "    return s * 10\n"
    "def grade(n):\n"
    "    if n >= 90:\n"
    "        return \"A\"\n"
    "    elif n >= 80:\n"
    "        return \"B\"\n"
    "    return \"C\"\n",
    "print(sign(3), sign(-2), sign(0), grade(95), grade(85), grade(10))\n"},
  {"recursion", NULL,
    "def fib(n):\n"
    "    if n < 2:\n"
    "        return n\n"
    "    return fib(n - 1) + fib(n - 2)\n"
    "def fact(n):\n"
    "    return 1 if n <= 1 else n * fact(n - 1)\n",
    "print(fib(15), fact(10), list(map(fib, range(8))))\n"},
  {"while_break", NULL,
    "def first_divisor(n):\n"
    "    d = 2\n"
    "    while d * d <= n:\n"
    "        if n % d == 0:\n"
    "            break\n"
    "        d += 1\n"
    "    else_value = d if d * d <= n else n\n"
    "    return else_value\n",
    "print(first_divisor(91), first_divisor(97), first_divisor(4))\n"},
  {"for_continue", NULL,
    "def total(n):\n"
    "    acc = 0\n"
    "    for i in range(n):\n"
    "        if i % 3 == 0:\n"
    "            continue\n"
    "        acc += i\n"
    "    return acc\n"
    "def down(n):\n"
    "    out = []\n"
    "    for i in range(n, 0, -2):\n"
    "        out = out + [i]\n"
    "    return out\n",
    "print(total(10), total(0), down(9))\n"},
  {"nested_loops", NULL,
    "def pairs(n):\n"
    "    found = []\n"
    "    for i in range(n):\n"
    "        for j in range(i, n):\n"
    "            if i + j > n:\n"
    "                break\n"
    "            if (i + j) % 2:\n"
    "                continue\n"
    "            found = found + [(i, j)]\n"
    "    return found\n",
    "print(pairs(4))\n"},
  {"for_sequences", NULL,
    "def keys_and_chars(d, s):\n"
    "    ks = []\n"
    "    for k in d:\n"
    "        ks = ks + [k + \"!\"]\n"
    "    n = 0\n"
    "    for c in s:\n"
    "        if c == \"a\":\n"
    "            n += 1\n"
    "    for x, y in [(1, 2), (3, 4)]:\n"
    "        n += x * y\n"
    "    return ks, n\n",
    "print(keys_and_chars({\"a\": 1, \"b\": 2}, \"banana\"))\n"},
  {"closures", NULL,
    "def make_adder(n):\n"
    "    def add(x):\n"
    "        return x + n\n"
    "    return add\n"
    "def compose(f, g):\n"
    "    return lambda x: f(g(x))\n"
    "def run():\n"
    "    a = make_adder(3)\n"
    "    b = make_adder(10)\n"
    "    c = compose(a, b)\n"
    "    return a(1), b(1), c(1), compose(c, c)(0)\n",
    "print(run())\n"},
  {"lambdas", NULL,
    "def by_second(ps):\n"
    "    return sorted(ps, key=lambda p: p[1])\n"
    "def scale_all(xs, k):\n"
    "    return list(map(lambda x: x * k, xs))\n"
    "def with_default():\n"
    "    f = lambda a, b=2: a * b\n"
    "    return f(3), f(3, 4), f(b=5, a=1)\n",
    "print(by_second([(1, 'z'), (2, 'a'), (3, 'm')]), scale_all([1, 2, 3], 2.5), with_default())\n"},
  {"tuples", NULL,
    "def fib_iter(n):\n"
    "    a, b = 0, 1\n"
    "    for _ in range(n):\n"
    "        a, b = b, a + b\n"
    "    return a\n"
    "def nested(t):\n"
    "    a, (b, c) = t\n"
    "    x = y = a + b\n"
    "    return (c, b, a), (x + y,), ()\n"
    "def one(t):\n"
    "    (u,) = t\n"
    "    return u\n",
    "print(fib_iter(30), nested((1, (2, 3))), one([7]))\n"},
  {"dicts", NULL,
    "def count(words):\n"
    "    d = {}\n"
    "    for w in words:\n"
    "        d[w] = d.get(w, 0) + 1\n"
    "    return d\n"
    "def update(d):\n"
    "    d[\"a\"] += 10\n"
    "    e = {\"x\": d[\"a\"], \"y\": [1, 2]}\n"
    "    return e, \"x\" in e, \"z\" not in e, sorted(d.keys())\n",
    "c = count([\"a\", \"b\", \"a\"])\n"
    "print(c, update(c))\n"},
  {"lists_slices", NULL,
    "def sl(xs):\n"
    "    return xs[1:-1], xs[::-1], xs[::2], xs[2:], xs[:2], xs[-1], len(xs)\n"
    "def set_items(xs):\n"
    "    ys = xs\n"
    "    ys[0] = 100\n"
    "    ys[1:3] = [7]\n"
    "    ys[-1] += 1\n"
    "    return xs, ys\n",
    "print(sl([1, 2, 3, 4, 5]), sl(\"hello\"), set_items([1, 2, 3, 4]))\n"},
  {"fstrings", NULL,
    "def fmt(x, w, name):\n"
    "    a = f\"{x:.3f}|{x!r}|{name!s:>6}|{{braces}}\"\n"
    "    b = f\"{x:{w}}\"\n"
    "    c = f\"quote \\\" and \\\\ and\\nnewline {name}\"\n"
    "    d = f\"{len(name)} items\"\n"
    "    return a, b, c, d\n",
    "print(fmt(3.14159, \"8.2f\", \"abc\"))\n"},
  {"methods", NULL,
    "def words(s):\n"
    "    parts = s.split(\",\")\n"
    "    up = list(map(lambda p: p.strip().upper(), parts))\n"
    "    joined = \"-\".join(parts)\n"
    "    return parts, joined, s.replace(\"a\", \"o\"), s.upper().lower(), up\n",
    "print(words(\"a, b,c\"))\n"},
  {"keywords_defaults", NULL,
    "def f(x, scale=2, shift=0):\n"
    "    return x * scale + shift\n"
    "def outer(x):\n"
    "    def inner(x, y=1):\n"
    "        return x - y\n"
    "    return inner(x=x * 10, y=x), inner(5)\n"
    "def computed_default(n):\n"
    "    def g(y, k=n * 2):\n"
    "        return y + k\n"
    "    return g(1), g(1, k=0)\n",
    "print(f(3), f(3, shift=1), f(x=1, scale=5), outer(2), computed_default(4))\n"},
  {"short_circuit", NULL,
    "def noisy(tag, v):\n"
    "    print(\"eval\", tag)\n"
    "    return v\n"
    "def logic(x):\n"
    "    a = x > 0 and noisy(\"a\", x)\n"
    "    b = x > 0 or noisy(\"b\", -x)\n"
    "    c = noisy(\"c\", 0) or noisy(\"d\", 5) and noisy(\"e\", 6)\n"
    "    return a, b, c, not x\n",
    "print(logic(2))\n"
    "print(logic(-3))\n"},
  {"comparisons", NULL,
    "def cmp(x, y):\n"
    "    return 0 < x < 10, x == y, x != y, x <= y, x >= y, x is None, y is not None, 1 < x < y < 9\n",
    "print(cmp(5, 7), cmp(0, None if False else 0))\n"},
  {"ternary", NULL,
    "def pick(c, a, b):\n"
    "    return (a if c else b), (a * 2 if c and a else b - 1)\n",
    "print(pick(True, 1, 2), pick(False, 1, 2), pick(True, 0, 5))\n"},
  {"while_loops", NULL,
    "def collatz(n):\n"
    "    steps = 0\n"
    "    while n != 1 and steps < 1000:\n"
    "        if n % 2 == 0:\n"
    "            n = n // 2\n"
    "        else:\n"
    "            n = 3 * n + 1\n"
    "        steps += 1\n"
    "    return steps\n"
    "def search(xs, target):\n"
    "    i = 0\n"
    "    while True:\n"
    "        if i >= len(xs):\n"
    "            return -1\n"
    "        if xs[i] == target:\n"
    "            return i\n"
    "        i += 1\n",
    "print(collatz(27), collatz(1), search([5, 6, 7], 7), search([], 1))\n"},
  {"tree_recursion", NULL,
    "def tsum(t):\n"
    "    if type(t) == \"tuple\" or type(t) == \"list\":\n"
    "        s = 0\n"
    "        for x in t:\n"
    "            s += tsum(x)\n"
    "        return s\n"
    "    return t\n"
    "def depth(t):\n"
    "    if type(t) != \"tuple\":\n"
    "        return 0\n"
    "    return 1 + max(map(depth, t)) if t else 1\n",
    "print(tsum((1, [2, 3], ((4,), 5))), depth((1, (2, (3,)), ())))\n"},
  {"higher_order", NULL,
    "def apply_n(f, n, x):\n"
    "    for _ in range(n):\n"
    "        x = f(x)\n"
    "    return x\n"
    "def adders(n):\n"
    "    fs = []\n"
    "    for i in range(n):\n"
    "        fs = fs + [lambda x, i=i: x + i]\n"
    "    return list(map(lambda f: f(100), fs))\n",
    "print(apply_n(lambda v: v * 2, 10, 1), adders(4))\n"},
  {"mutual_recursion", NULL,
    "def is_even(n):\n"
    "    if n == 0:\n"
    "        return True\n"
    "    return is_odd(n - 1)\n"
    "def is_odd(n):\n"
    "    if n == 0:\n"
    "        return False\n"
    "    return is_even(n - 1)\n",
    "print(is_even(10), is_odd(7), is_even(3))\n"},
  {"strings", NULL,
    "def s_ops(s):\n"
    "    return s[0], s[-1], s[1:3], len(s), ord(s[0]), chr(ord(s[0]) + 1), s * 2, \"x\" + s, \"an\" in s\n",
    "print(s_ops(\"banana\"))\n"},
  {"unary_numbers", NULL,
    "def nums(x):\n"
    "    return (-x, +x, not x, (-2) ** 3, 2 ** -1, x - -1, 1e-05, 0.1 + 0.2, -0.0,\n"
    "            10 // 3, -7 % 3, 2.5e300 * 1e10)\n",
    "print(nums(3), nums(0))\n"},
  {"globals", "SCALE = 3\nOFFSET = len([1, 2])\nsq = lambda x: x * x\n",
    "def use(x):\n"
    "    return x * SCALE + OFFSET + sq(x)\n"
    "def helper(x):\n"
    "    return use(x) - 1\n",
    "print(use(2), helper(2))\n"},
  {"effects_order", NULL,
    "def trace(x):\n"
    "    print(\"start\", x)\n"
    "    if x > 1:\n"
    "        print(\"big\")\n"
    "        y = x * 2\n"
    "    else:\n"
    "        print(\"small\")\n"
    "        y = x\n"
    "    for i in range(2):\n"
    "        print(\"loop\", i, y)\n"
    "    print(\"end\")\n",
    "trace(3)\n"
    "trace(0)\n"},
  {"closure_in_loop", NULL,
    "def makers(n):\n"
    "    out = []\n"
    "    i = 0\n"
    "    while i < n:\n"
    "        def get(k=i):\n"
    "            return k * i\n"
    "        out = out + [get]\n"
    "        i += 1\n"
    "    return list(map(lambda f: f(), out))\n",
    "print(makers(4))\n"},
  {"early_return_in_loop", NULL,
    "def find(xs, p):\n"
    "    for i, x in enumerate(xs):\n"
    "        if p(x):\n"
    "            return i, x\n"
    "    return None\n",
    "print(find([1, 4, 9, 16], lambda v: v > 5), find([], lambda v: True))\n"},
  {"assert_ok", NULL,
    "def checked(x):\n"
    "    assert x >= 0, \"negative\"\n"
    "    assert x < 100\n"
    "    assert x != 50, f\"fifty: {x}\"\n"
    "    return x + 1\n",
    "print(checked(3), checked(0))\n"},
  {"assert_fails", NULL,
    "def checked(x):\n"
    "    assert x >= 0, \"negative: \" + str(x)\n"
    "    return x\n",
    "print(checked(1))\n"
    "print(checked(-5))\n"},
  {"runtime_error", NULL,
    "def div(a, b):\n"
    "    print(\"dividing\")\n"
    "    return a // b\n",
    "print(div(7, 2))\n"
    "print(div(1, 0))\n"},
  {"long_loop", NULL,
    "def count(n):\n"
    "    s = 0\n"
    "    i = 0\n"
    "    while i < n:\n"
    "        s += i % 7\n"
    "        i += 1\n"
    "    return s\n",
    "print(count(20000))\n"},
  {"deep_nesting", NULL,
    "def outer(a):\n"
    "    def mid(b):\n"
    "        def inner(c):\n"
    "            if c > 0:\n"
    "                return a + b + c\n"
    "            return inner(c + 1)\n"
    "        return inner\n"
    "    total = 0\n"
    "    for i in range(3):\n"
    "        total += mid(i)(-1)\n"
    "    return total\n",
    "print(outer(10))\n"},
  {"names_that_clash", NULL,
    "def clash(t1, len_2):\n"
    "    t2 = t1 + 1\n"
    "    fib_if1 = len([t1, t2])\n"
    "    if t2 > 0:\n"
    "        x = t2\n"
    "    else:\n"
    "        x = -t2\n"
    "    return x + fib_if1 + len_2\n",
    "print(clash(1, 2), clash(-5, 0))\n"},
  {"shared_param_names", "G = len([1, 2, 3])\n",
    "def f(n):\n"
    "    def g(len):\n"
    "        return len + 1\n"
    "    def h(n, G):\n"
    "        return n * G\n"
    "    def k(x):\n"
    "        return x + n + G\n"
    "    return g(len=n) + len([1]), h(G=2, n=n), k(x=1), G\n"
    "def outer(x):\n"
    "    y = x * 2\n"
    "    def inner(y):\n"
    "        def innermost(z, x=x):\n"
    "            return x + y + z\n"
    "        return innermost(z=y)\n"
    "    return inner(y=y + 1), y\n",
    "print(f(5), outer(1))\n"},
};

enum { NCASES = (int)(sizeof cases / sizeof cases[0]) };

/* ---- running programs through the public API ---- */

static void capture(void *user, const char *text, size_t len) { sb_add(user, text, len); }

/* The message of an error, without its place (which differs between a
 * program and its printout): the text after "error: " on the first line. */
static const char *message(const char *err) {
  const char *p = strstr(err, "error: ");
  p = p ? p + 7 : err;
  size_t n = strcspn(p, "\n");
  return lang_str_new(p, n)->data;
}

/* Run the parts in one fresh interpreter, in order; what they print,
 * and "ERROR: message" if one fails. */
static const char *run_parts(const char *const *parts, int n) {
  MistVM *vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  StrBuf out;
  sb_init(&out);
  mist_set_write(vm, capture, &out);
  for (int i = 0; i < n; i++) {
    if (!parts[i]) continue;
    if (mist_eval(vm, lang_str_fmt("part%d.ms", i)->data, parts[i], false) != MIST_OK) {
      sb_printf(&out, "ERROR: %s\n", message(mist_error(vm)));
      break;
    }
  }
  mist_free(vm);
  return lang_str_new(out.data, out.len)->data;
}

/* Lower src and print every top-level def (not lambdas) as source. */
static const char *print_defs(const char *name, const char *src) {
  MistVM *vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  size_t len = strlen(src);
  int fid = lang_file_add(vm, name, src, len);
  Ast *ast = parse_module(vm, fid, src, len);
  ck_assert_msg(ast != NULL, "%s: parse failed: %s\n%s", name, mist_error(vm), src);
  LowerResult lr;
  ck_assert_msg(lower_module(vm, ast, vm->main, false, &lr), "%s: lowering failed: %s", name,
                mist_error(vm));
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < lr.unit->ngraphs; i++) {
    IrGraph *g = lr.unit->graphs[i];
    if (g->parent == lr.main && (g->flags & IRG_FUNCTION) && strcmp(g->display->data, "<lambda>") != 0) {
      std_print_source(vm, g, &sb);
      sb_addc(&sb, '\n');
    }
  }
  mist_free(vm);
  return lang_str_new(sb.data, sb.len)->data;
}

static const char *joined(const char *a, const char *b) {
  return lang_str_fmt("%s%s", a ? a : "", b)->data;
}

START_TEST(t_same_results) {
  const Case *c = &cases[_i];
  const char *orig[] = {c->prelude, c->defs, c->driver};
  const char *want = run_parts(orig, 3);
  ck_assert_msg(strstr(want, "ERROR") == NULL || strstr(c->name, "fail") || strstr(c->name, "error"),
                "%s: the original fails: %s", c->name, want);
  const char *src = print_defs("case.ms", joined(c->prelude, c->defs));
  const char *printed[] = {c->prelude, src, c->driver};
  const char *got = run_parts(printed, 3);
  ck_assert_msg(strcmp(want, got) == 0, "%s: the printout prints\n%s\ninstead of\n%s\nprintout:\n%s",
                c->name, got, want, src);
  /* the second generation: the printout's own printout */
  const char *src2 = print_defs("printed.ms", joined(c->prelude, src));
  const char *printed2[] = {c->prelude, src2, c->driver};
  got = run_parts(printed2, 3);
  ck_assert_msg(strcmp(want, got) == 0, "%s: the second printout prints\n%s\ninstead of\n%s\nprintout:\n%s",
                c->name, got, want, src2);
}
END_TEST

/* ---- a module's own graph ---- */

/* Programs printed whole (the module's graph at top level: no def, no
 * return); top-level ifs and defs, not loops (see docs/ir.md). */
static const char *const modules[] = {
  "N = 3\n"
  "def f(x):\n"
  "    return x * N\n"
  "y = f(2)\n"
  "y = y + 1\n"
  "z, w = y, 5\n"
  "if y > 3:\n"
  "    print(\"big\", y)\n"
  "else:\n"
  "    print(\"small\")\n"
  "print(f(y), z, w, f\"{y:03d}\")\n",
  "xs = [3, 1, 2]\n"
  "xs[0] = 10\n"
  "d = {\"k\": sorted(xs)}\n"
  "assert len(xs) == 3, \"three\"\n"
  "print(d, xs[::-1], \"k\" in d)\n",
};

START_TEST(t_module) {
  const char *src = modules[_i];
  const char *want = run_parts(&src, 1);
  MistVM *vm = mist_new(0, NULL);
  size_t len = strlen(src);
  Ast *ast = parse_module(vm, lang_file_add(vm, "mod.ms", src, len), src, len);
  LowerResult lr;
  ck_assert(ast && lower_module(vm, ast, vm->main, false, &lr));
  StrBuf sb;
  sb_init(&sb);
  std_print_source(vm, lr.main, &sb);
  mist_free(vm);
  const char *printed = lang_str_new(sb.data, sb.len)->data;
  const char *got = run_parts(&printed, 1);
  ck_assert_msg(strcmp(want, got) == 0, "the printout prints\n%s\ninstead of\n%s\nprintout:\n%s", got, want,
                printed);
}
END_TEST

/* ---- golden text ---- */

static const struct {
  const char *src;
  const char *name;
  const char *want;
} golden[] = {
  {"def f(x):\n"
   "    return x * x + 1\n",
   "f",
   "def f(x):\n"
   "    t1 = x * x\n"
   "    return t1 + 1\n"},
  {"def fib(n):\n"
   "    if n < 2:\n"
   "        return n\n"
   "    return fib(n - 1) + fib(n - 2)\n",
   "fib",
   "def fib(n):\n"
   "    if n < 2:\n"
   "        return n\n"
   "    t1 = n - 1\n"
   "    t2 = fib(t1)\n"
   "    t3 = n - 2\n"
   "    t4 = fib(t3)\n"
   "    return t2 + t4\n"},
  {"def total(xs):\n"
   "    acc = 0\n"
   "    for x in xs:\n"
   "        acc += x\n"
   "    return acc\n",
   "total",
   "def total(xs):\n"
   "    t1 = (list(xs) if type(xs) == \"dict\" else xs)\n"
   "    t2 = len(t1)\n"
   "    t3 = 0\n"
   "    acc = 0\n"
   "    while t3 < t2:\n"
   "        x = t1[t3]\n"
   "        acc = acc + x\n"
   "        t3 = t3 + 1\n"
   "    return acc\n"},
  {"def sign(x):\n"
   "    if x > 0:\n"
   "        s = 1\n"
   "    elif x < 0:\n"
   "        s = -1\n"
   "    else:\n"
   "        s = 0\n"
   "    return s * 10\n",
   "sign",
   "def sign(x):\n"
   "    if x > 0:\n"
   "        s = 1\n"
   "    elif x < 0:\n"
   "        s = -1\n"
   "    else:\n"
   "        s = 0\n"
   "    return s * 10\n"},
  {"def first_divisor(n):\n"
   "    d = 2\n"
   "    while True:\n"
   "        if n % d == 0:\n"
   "            break\n"
   "        d += 1\n"
   "    return d\n",
   "first_divisor",
   "def first_divisor(n):\n"
   "    d = 2\n"
   "    while True:\n"
   "        t1 = n % d\n"
   "        if t1 == 0:\n"
   "            break\n"
   "        d = d + 1\n"
   "    return d\n"},
  {"def g(p, d):\n"
   "    a, b = p\n"
   "    s = f\"{a:.2f} and {b!r}\"\n"
   "    assert a > 0, \"positive\"\n"
   "    return {\"s\": s, \"n\": d.get(\"n\", 1)}, p[1:], (a,)\n",
   "g",
   "def g(p, d):\n"
   "    a, b = p\n"
   "    s = f\"{a:.2f} and {b!r}\"\n"
   "    assert a > 0, \"positive\"\n"
   "    t1 = d.get(\"n\", 1)\n"
   "    t2 = {\"s\": s, \"n\": t1}\n"
   "    t3 = p[1:]\n"
   "    t4 = (a,)\n"
   "    return (t2, t3, t4)\n"},
  {"def outer(x, scale=2):\n"
   "    def inner(y, k=x):\n"
   "        return x * y + k\n"
   "    h = lambda t: inner(t, k=scale)\n"
   "    return h(x) if x else None\n",
   "outer",
   "def outer(x, scale=2):\n"
   "    def inner(y, k=x):\n"
   "        t1 = x * y\n"
   "        return t1 + k\n"
   "    def lambda1(t):\n"
   "        return inner(t, k=scale)\n"
   "    if x:\n"
   "        return lambda1(x)\n"
   "    else:\n"
   "        return None\n"},
};

START_TEST(t_golden) {
  const char *got = print_defs("golden.ms", golden[_i].src);
  const char *want = lang_str_fmt("%s\n", golden[_i].want)->data;
  ck_assert_msg(strcmp(got, want) == 0, "printout of %s:\n%s\nexpected:\n%s", golden[_i].name, got, want);
}
END_TEST

/* ---- the ways in ---- */

START_TEST(t_builtins) {
  const char *prog[] = {
    "def sq(x):\n"
    "    return x * x\n"
    "def make(k):\n"
    "    return lambda v: v + k\n",
    "show_source(sq)\n"
    "show_source(make(3))\n"
    "show_ir(sq)\n"
    "print(show_source(sq) is None)\n",
  };
  const char *got = run_parts(prog, 2);
  const char *want =
      "def sq(x):\n"
      "    return x * x\n"
      "# k = 3\n"
      "def make_lambda1(v):\n"
      "    return v + k\n";
  ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "show_source printed:\n%s", got);
  ck_assert_msg(strstr(got, "graph @sq(%x)") && strstr(got, "%1 = mul(%x, %x)"), "show_ir printed:\n%s", got);
  ck_assert_msg(strstr(got, "True\n"), "show_source should return None:\n%s", got);
  const char *bad[] = {"show_source(len)\n"};
  got = run_parts(bad, 1);
  ck_assert_msg(strstr(got, "ERROR: show_source() expects a Mist function, not 'builtin"), "%s", got);
  const char *bad2[] = {"show_ir()\n"};
  got = run_parts(bad2, 1);
  ck_assert_msg(strstr(got, "ERROR: show_ir() takes exactly one argument (0 given)"), "%s", got);
}
END_TEST

/* A derivative, a graph no parser made, prints as source that parses
 * (and runs: test_grad_source.c). */
START_TEST(t_derivative_parses) {
  MistVM *vm = mist_new(0, NULL);
  StrBuf out;
  sb_init(&out);
  mist_set_write(vm, capture, &out);
  Value g;
  if (!lang_dict_get(vm->builtins, lang_str("grad"), &g)) {
    mist_free(vm);
    return;   /* no autodiff in this build */
  }
  const char *prog =
      "def f(x):\n"
      "    s = 0.0\n"
      "    for i in range(3):\n"
      "        s = s + x * x if x > 1.0 else s - x\n"
      "    return s\n"
      "show_source(grad(f))\n"
      "show_source(grad(grad(f)))\n";
  ck_assert_msg(mist_eval(vm, "d.ms", prog, false) == MIST_OK, "%s", mist_error(vm));
  const char *text = lang_str_new(out.data, out.len)->data;
  ck_assert_msg(strstr(text, "def "), "%s", text);
  size_t len = strlen(text);
  Ast *ast = parse_module(vm, lang_file_add(vm, "printed.ms", text, len), text, len);
  ck_assert_msg(ast != NULL, "the printout does not parse: %s\n%s", mist_error(vm), text);
  LowerResult lr;
  ck_assert_msg(lower_module(vm, ast, vm->main, false, &lr), "%s", mist_error(vm));
  mist_free(vm);
}
END_TEST

START_TEST(t_print_ir_flag) {
  MistVM *vm = mist_new(0, NULL);
  StrBuf out;
  sb_init(&out);
  mist_set_write(vm, capture, &out);
  ck_assert_int_eq(mist_eval(vm, "f.ms", "def f(a, b=1):\n    return a - b\n", false), MIST_OK);
  ck_assert_int_eq(mist_print_ir(vm, "f", MIST_IR_SOURCE), MIST_OK);
  ck_assert_str_eq(lang_str_new(out.data, out.len)->data, "def f(a, b=1):\n    return a - b\n");
  out.len = 0;
  ck_assert_int_eq(mist_print_ir(vm, "f", MIST_IR_LOWERED), MIST_OK);
  ck_assert_msg(strstr(lang_str_new(out.data, out.len)->data, "graph @f(%a, %b=1)"), "%s", out.data);
  mist_free(vm);
}
END_TEST

static Suite *source_suite(void) {
  Suite *s = suite_create("source");
  TCase *tc = tcase_create("programs");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, t_same_results, 0, NCASES);
  tcase_add_loop_test(tc, t_module, 0, (int)(sizeof modules / sizeof modules[0]));
  suite_add_tcase(s, tc);
  TCase *tc2 = tcase_create("text");
  tcase_set_timeout(tc2, 60);
  tcase_add_loop_test(tc2, t_golden, 0, (int)(sizeof golden / sizeof golden[0]));
  tcase_add_test(tc2, t_builtins);
  tcase_add_test(tc2, t_derivative_parses);
  tcase_add_test(tc2, t_print_ir_flag);
  suite_add_tcase(s, tc2);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(source_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
