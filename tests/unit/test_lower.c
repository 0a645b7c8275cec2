/* test_lower.c: the Check suite of parser/lower.c, the lowering of the
 * AST to IR graphs.
 *
 * Each case is a small program with a top-level function f.  The case
 * lowers it (parse_module + lower_module, as api/mist.c does) and
 * checks four things:
 *
 *  - golden: ir_print_graph of f equals the expected IR text, which
 *    pins down the shape of the lowering (SSA names, join graphs for
 *    `if`, header/body/exit/after graphs for loops, free variables of
 *    nested functions, the order of evaluation);
 *  - verify: the whole unit passes ir_verify_unit;
 *  - round trip: printing the unit, reading the text back (ir_read) and
 *    printing again gives the same text;
 *  - run: the module prints what python3 prints for the same program
 *    (the expected outputs were made with python3; every program is
 *    valid Python with the same meaning in Mist), the unit read back
 *    from text prints the same when run in a fresh module, and f called
 *    with the module's ARGS gives equal results in both (also through a
 *    closure built from the bare graph where f has no free variables).
 *
 * When the lowering changes on purpose, regenerate an expected text with
 * `mist ir FILE.ms f` on the case's program and review the difference.
 * A second group checks what the lowering itself rejects and the REPL's
 * echo mode.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "mist.h"
#include "parser/lower.h"
#include "parser/parse.h"

typedef struct Case {
  const char *file;
  const char *src;
  const char *out;   /* what the program prints (python3's output) */
  const char *ir;    /* ir_print_graph of f */
} Case;

static const Case cases[] = {
  {"straight.ms",
    "def f(x, y):\n"
    "    z = x * 2 + y\n"
    "    return z - 1 / x\n"
    "ARGS = (4, 3)\n"
    "print(f(4, 3), f(-2, 0.5))\n",
    "10.75 -3.0\n",
    "# file straight.ms\n"
    "graph @f(%x, %y) : function {  # 1:1+3\n"
    "  %1 = mul(%x, 2)  # 2:9+5\n"
    "  %z = add(%1, %y)  # 2:9+9\n"
    "  %2 = truediv(1, %x)  # 3:16+5\n"
    "  %3 = sub(%z, %2)  # 3:12+9\n"
    "  return %3\n"
    "}\n"},
  {"if_join.ms",
    "def f(x):\n"
    "    if x > 0:\n"
    "        y = 1\n"
    "    else:\n"
    "        y = -1\n"
    "    return y * 10\n"
    "ARGS = (3,)\n"
    "print(f(3), f(-3), f(0))\n",
    "10 -10 -10\n",
    "# file if_join.ms\n"
    "graph @f(%x) : function {  # 1:1+3\n"
    "  %1 = gt(%x, 0)  # 2:8+5\n"
    "  %2 = switch(%1, @f.if2, @f.else3)  # 2:5+2\n"
    "  %3 = %2()  # 2:5+2\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.join1(%y.2) in @f : join {  # 2:5+2\n"
    "  %4 = check_bound(%y.2, \"y\")  # 6:12\n"
    "  %5 = mul(%4, 10)  # 6:12+6\n"
    "  return %5\n"
    "}\n"
    "\n"
    "graph @f.if2() in @f : branch {  # 2:5+2\n"
    "  %6 = @f.join1(1)  # 3:9+5\n"
    "  return %6\n"
    "}\n"
    "\n"
    "graph @f.else3() in @f : branch {  # 2:5+2\n"
    "  %y.3 = neg(1)  # 5:13+2\n"
    "  %7 = @f.join1(%y.3)  # 5:9+6\n"
    "  return %7\n"
    "}\n"},
  {"while_loop.ms",
    "def f(n):\n"
    "    i = 0\n"
    "    s = 0\n"
    "    while i < n:\n"
    "        s += i\n"
    "        i += 1\n"
    "    return s\n"
    "ARGS = (10,)\n"
    "print(f(0), f(10))\n",
    "0 45\n",
    "# file while_loop.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = @f.while1(0, 0)  # 4:5+5\n"
    "  return %1\n"
    "}\n"
    "\n"
    "graph @f.while1(%s.2, %i.2) in @f : loop {  # 4:5+5\n"
    "  %2 = lt(%i.2, %n)  # 4:11+5\n"
    "  %3 = switch(%2, @f.body3, @f.exit4)  # 4:5+5\n"
    "  %4 = %3()  # 4:5+5\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f.after2(%s.3, %i.3) in @f : join {  # 4:5+5\n"
    "  return %s.3\n"
    "}\n"
    "\n"
    "graph @f.body3() in @f.while1 : branch, body {  # 4:5+5\n"
    "  %s.4 = add(%s.2, %i.2)  # 5:9+6\n"
    "  %i.4 = add(%i.2, 1)  # 6:9+6\n"
    "  %5 = @f.while1(%s.4, %i.4)  # 6:9+6\n"
    "  return %5\n"
    "}\n"
    "\n"
    "graph @f.exit4() in @f.while1 : branch {  # 4:5+5\n"
    "  %6 = @f.after2(%s.2, %i.2)  # 4:5+5\n"
    "  return %6\n"
    "}\n"},
  {"for_range.ms",
    "def f(n):\n"
    "    s = 0\n"
    "    for i in range(1, n, 2):\n"
    "        s += i * i\n"
    "    return s\n"
    "ARGS = (10,)\n"
    "print(f(10), f(0))\n",
    "165 0\n",
    "# file for_range.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = $range(1, %n, 2)  # 3:14+14\n"
    "  %2 = @f.for1(1, Unbound, 0)  # 3:5+3\n"
    "  return %2\n"
    "}\n"
    "\n"
    "graph @f.for1(%3, %i.2, %s.2) in @f : loop {  # 3:5+3\n"
    "  %4 = lt(%3, %n)  # 3:5+3\n"
    "  %5 = switch(%4, @f.body3, @f.exit4)  # 3:5+3\n"
    "  %6 = %5()  # 3:5+3\n"
    "  return %6\n"
    "}\n"
    "\n"
    "graph @f.after2(%i.3, %s.3) in @f : join {  # 3:5+3\n"
    "  return %s.3\n"
    "}\n"
    "\n"
    "graph @f.body3() in @f.for1 : branch, body {  # 3:5+3\n"
    "  %7 = mul(%3, %3)  # 4:14+5\n"
    "  %s.4 = add(%s.2, %7)  # 4:9+10\n"
    "  %8 = add(%3, 2)  # 4:9+10\n"
    "  %9 = @f.for1(%8, %3, %s.4)  # 4:9+10\n"
    "  return %9\n"
    "}\n"
    "\n"
    "graph @f.exit4() in @f.for1 : branch {  # 3:5+3\n"
    "  %10 = @f.after2(%i.2, %s.2)  # 3:5+3\n"
    "  return %10\n"
    "}\n"},
  {"for_list.ms",
    "def f(xs):\n"
    "    s = \"\"\n"
    "    for x in xs:\n"
    "        s = s + str(x)\n"
    "    return s\n"
    "ARGS = ([1, \"a\", 2.5],)\n"
    "print(f([1, \"a\", 2.5]), f(()), f(\"hey\"))\n",
    "1a2.5  hey\n",
    "# file for_list.ms\n"
    "graph @f(%xs) : function {  # 1:1+3\n"
    "  %1 = iter_seq(%xs)  # 3:14+2\n"
    "  %2 = len(%1)  # 3:14+2\n"
    "  %3 = @f.for1(0, Unbound, \"\")  # 3:5+3\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.for1(%4, %x.2, %s.2) in @f : loop {  # 3:5+3\n"
    "  %5 = lt(%4, %2)  # 3:5+3\n"
    "  %6 = switch(%5, @f.body3, @f.exit4)  # 3:5+3\n"
    "  %7 = %6()  # 3:5+3\n"
    "  return %7\n"
    "}\n"
    "\n"
    "graph @f.after2(%x.3, %s.3) in @f : join {  # 3:5+3\n"
    "  return %s.3\n"
    "}\n"
    "\n"
    "graph @f.body3() in @f.for1 : branch, body {  # 3:5+3\n"
    "  %x.4 = getitem(%1, %4)  # 3:9\n"
    "  %8 = $str(%x.4)  # 4:17+6\n"
    "  %s.4 = add(%s.2, %8)  # 4:13+10\n"
    "  %9 = add(%4, 1)  # 4:9+14\n"
    "  %10 = @f.for1(%9, %x.4, %s.4)  # 4:9+14\n"
    "  return %10\n"
    "}\n"
    "\n"
    "graph @f.exit4() in @f.for1 : branch {  # 3:5+3\n"
    "  %11 = @f.after2(%x.2, %s.2)  # 3:5+3\n"
    "  return %11\n"
    "}\n"},
  {"break_continue.ms",
    "def f(n):\n"
    "    i = 0\n"
    "    total = 0\n"
    "    while True:\n"
    "        i += 1\n"
    "        if i > n:\n"
    "            break\n"
    "        if i % 3 == 0:\n"
    "            continue\n"
    "        total += i\n"
    "    return total\n"
    "ARGS = (10,)\n"
    "print(f(10), f(0))\n",
    "37 0\n",
    "# file break_continue.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = @f.while1(0, 0)  # 4:5+5\n"
    "  return %1\n"
    "}\n"
    "\n"
    "graph @f.while1(%i.2, %total.2) in @f : loop {  # 4:5+5\n"
    "  %2 = switch(True, @f.body3, @f.exit4)  # 4:5+5\n"
    "  %3 = %2()  # 4:5+5\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.after2(%i.3, %total.3) in @f : join {  # 4:5+5\n"
    "  return %total.3\n"
    "}\n"
    "\n"
    "graph @f.body3() in @f.while1 : branch, body {  # 4:5+5\n"
    "  %i.4 = add(%i.2, 1)  # 5:9+6\n"
    "  %4 = gt(%i.4, %n)  # 6:12+5\n"
    "  %5 = switch(%4, @f.if9, @f.else10)  # 6:9+2\n"
    "  %6 = %5()  # 6:9+2\n"
    "  return %6\n"
    "}\n"
    "\n"
    "graph @f.exit4() in @f.while1 : branch {  # 4:5+5\n"
    "  %7 = @f.after2(%i.2, %total.2)  # 4:5+5\n"
    "  return %7\n"
    "}\n"
    "\n"
    "graph @f.join5() in @f.body3 : join {  # 6:9+2\n"
    "  %8 = mod(%i.4, 3)  # 8:12+5\n"
    "  %9 = eq(%8, 0)  # 8:12+10\n"
    "  %10 = switch(%9, @f.if7, @f.else8)  # 8:9+2\n"
    "  %11 = %10()  # 8:9+2\n"
    "  return %11\n"
    "}\n"
    "\n"
    "graph @f.join6() in @f.join5 : join {  # 8:9+2\n"
    "  %total.4 = add(%total.2, %i.4)  # 10:9+10\n"
    "  %12 = @f.while1(%i.4, %total.4)  # 10:9+10\n"
    "  return %12\n"
    "}\n"
    "\n"
    "graph @f.if7() in @f.join5 : branch {  # 8:9+2\n"
    "  %13 = @f.while1(%i.4, %total.2)  # 9:13+8\n"
    "  return %13\n"
    "}\n"
    "\n"
    "graph @f.else8() in @f.join5 : branch {  # 8:9+2\n"
    "  %14 = @f.join6()  # 8:9+2\n"
    "  return %14\n"
    "}\n"
    "\n"
    "graph @f.if9() in @f.body3 : branch {  # 6:9+2\n"
    "  %15 = @f.after2(%i.4, %total.2)  # 7:13+5\n"
    "  return %15\n"
    "}\n"
    "\n"
    "graph @f.else10() in @f.body3 : branch {  # 6:9+2\n"
    "  %16 = @f.join5()  # 6:9+2\n"
    "  return %16\n"
    "}\n"},
  {"free_var.ms",
    "def f(n):\n"
    "    def g(x):\n"
    "        return x + n\n"
    "    return g(1) * g(2)\n"
    "ARGS = (5,)\n"
    "print(f(5), f(-1))\n",
    "42 0\n",
    "# file free_var.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = @f.g(1)  # 4:12+4\n"
    "  %2 = @f.g(2)  # 4:19+4\n"
    "  %3 = mul(%1, %2)  # 4:12+11\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.g(%x) in @f : function {  # 2:5+3\n"
    "  %4 = add(%x, %n)  # 3:16+5\n"
    "  return %4\n"
    "}\n"},
  {"lambda_default.ms",
    "def f(n):\n"
    "    h = lambda a, b=n: a * b\n"
    "    return h(2) + h(2, 3)\n"
    "ARGS = (7,)\n"
    "print(f(7))\n",
    "20\n",
    "# file lambda_default.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = @f.lambda1(2)  # 3:12+4\n"
    "  %2 = @f.lambda1(2, 3)  # 3:19+7\n"
    "  %3 = add(%1, %2)  # 3:12+14\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.lambda1(%a, %b=%n) in @f : function {  # 2:9+20\n"
    "  %4 = mul(%a, %b)  # 2:24+5\n"
    "  return %4\n"
    "}\n"},
  {"unpack.ms",
    "def f(p):\n"
    "    a, (b, c) = p\n"
    "    return c, b, a\n"
    "ARGS = ((1, [2, 3]),)\n"
    "print(f((1, [2, 3])), f([0, \"ab\"]))\n",
    "(3, 2, 1) ('b', 'a', 0)\n",
    "# file unpack.ms\n"
    "graph @f(%p) : function {  # 1:1+3\n"
    "  %1 = unpack(%p, 2)  # 2:5+9\n"
    "  %a = getitem(%1, 0)  # 2:5\n"
    "  %2 = getitem(%1, 1)  # 2:8+6\n"
    "  %3 = unpack(%2, 2)  # 2:8+6\n"
    "  %b = getitem(%3, 0)  # 2:9\n"
    "  %c = getitem(%3, 1)  # 2:12\n"
    "  %4 = make_tuple(%c, %b, %a)  # 3:12+7\n"
    "  return %4\n"
    "}\n"},
  {"setitem.ms",
    "def f(xs, d):\n"
    "    xs[0] = d[\"a\"]\n"
    "    d[\"k\"] = len(xs)\n"
    "    xs[1:] = [9]\n"
    "    return xs, d\n"
    "ARGS = ([1, 2, 3], {\"a\": 0})\n"
    "print(f([1, 2, 3], {\"a\": 0}))\n",
    "([0, 9], {'a': 0, 'k': 3})\n",
    "# file setitem.ms\n"
    "graph @f(%xs.2, %d.2) : function {  # 1:1+3\n"
    "  %1 = getitem(%d.2, \"a\")  # 2:13+6\n"
    "  %xs.3 = setitem(%xs.2, 0, %1)  # 2:5+5\n"
    "  %2 = $len(%xs.3)  # 3:14+7\n"
    "  %d.3 = setitem(%d.2, \"k\", %2)  # 3:5+6\n"
    "  %3 = make_list(9)  # 4:14+3\n"
    "  %4 = slice(1, None, None)  # 4:8+2\n"
    "  %xs.4 = setitem(%xs.3, %4, %3)  # 4:5+6\n"
    "  %5 = make_tuple(%xs.4, %d.3)  # 5:12+5\n"
    "  return %5\n"
    "}\n"},
  {"augassign.ms",
    "def f(n, xs):\n"
    "    n += 1\n"
    "    n *= 3\n"
    "    xs[1] -= n\n"
    "    return n, xs\n"
    "ARGS = (2, [10, 20])\n"
    "print(f(2, [10, 20]))\n",
    "(9, [10, 11])\n",
    "# file augassign.ms\n"
    "graph @f(%n.2, %xs.2) : function {  # 1:1+3\n"
    "  %n.3 = add(%n.2, 1)  # 2:5+6\n"
    "  %n.4 = mul(%n.3, 3)  # 3:5+6\n"
    "  %1 = getitem(%xs.2, 1)  # 4:5+5\n"
    "  %2 = sub(%1, %n.4)  # 4:5+10\n"
    "  %xs.3 = setitem(%xs.2, 1, %2)  # 4:5+5\n"
    "  %3 = make_tuple(%n.4, %xs.3)  # 5:12+5\n"
    "  return %3\n"
    "}\n"},
  {"and_or.ms",
    "def f(a, b, c):\n"
    "    return a and b or c\n"
    "ARGS = (1, 0, \"c\")\n"
    "print(f(1, 0, \"c\"), f(1, 2, 3), f(0, 2, 3), f([], None, \"\"))\n",
    "c 2 3 \n",
    "# file and_or.ms\n"
    "graph @f(%a, %b, %c) : function {  # 1:1+3\n"
    "  %1 = switch(%a, @f.and1, @f.keep2)  # 2:12+7\n"
    "  %2 = %1()  # 2:12+7\n"
    "  %3 = switch(%2, @f.keep4, @f.or3)  # 2:12+12\n"
    "  %4 = %3()  # 2:12+12\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f.and1() in @f : branch {  # 2:12+7\n"
    "  return %b\n"
    "}\n"
    "\n"
    "graph @f.keep2() in @f : branch {  # 2:12+7\n"
    "  return %a\n"
    "}\n"
    "\n"
    "graph @f.or3() in @f : branch {  # 2:12+12\n"
    "  return %c\n"
    "}\n"
    "\n"
    "graph @f.keep4() in @f : branch {  # 2:12+12\n"
    "  return %2\n"
    "}\n"},
  {"chained.ms",
    "def f(a, b, c):\n"
    "    return a < b <= c != a\n"
    "ARGS = (1, 2, 2)\n"
    "print(f(1, 2, 2), f(2, 1, 3), f(1, 2, 1), f(1, 1, 1))\n",
    "True False False False\n",
    "# file chained.ms\n"
    "graph @f(%a, %b, %c) : function {  # 1:1+3\n"
    "  %1 = lt(%a, %b)  # 2:12+15\n"
    "  %2 = switch(%1, @f.and1, @f.keep4)  # 2:12+15\n"
    "  %3 = %2()  # 2:12+15\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.and1() in @f : branch {  # 2:12+15\n"
    "  %4 = le(%b, %c)  # 2:12+15\n"
    "  %5 = switch(%4, @f.and2, @f.keep3)  # 2:12+15\n"
    "  %6 = %5()  # 2:12+15\n"
    "  return %6\n"
    "}\n"
    "\n"
    "graph @f.and2() in @f.and1 : branch {  # 2:12+15\n"
    "  %7 = ne(%c, %a)  # 2:12+15\n"
    "  return %7\n"
    "}\n"
    "\n"
    "graph @f.keep3() in @f.and1 : branch {  # 2:12+15\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f.keep4() in @f : branch {  # 2:12+15\n"
    "  return %1\n"
    "}\n"},
  {"fstring.ms",
    "def f(x, w):\n"
    "    return f\"x={x:>{w}.2f}|{w!r}|{x:e}\"\n"
    "ARGS = (3.14159, 8)\n"
    "print(f(3.14159, 8), f(-1, 3))\n",
    "x=    3.14|8|3.141590e+00 x=-1.00|3|-1.000000e+00\n",
    "# file fstring.ms\n"
    "graph @f(%x, %w) : function {  # 1:1+3\n"
    "  %1 = format(%w, \"\")  # 2:20+3\n"
    "  %2 = concat_str(\">\", %1, \".2f\")  # 2:16+11\n"
    "  %3 = format(%x, %2)  # 2:16+11\n"
    "  %4 = repr(%w)  # 2:28+5\n"
    "  %5 = format(%4, \"\")  # 2:28+5\n"
    "  %6 = format(%x, \"e\")  # 2:34+5\n"
    "  %7 = concat_str(\"x=\", %3, \"|\", %5, \"|\", %6)  # 2:12+28\n"
    "  return %7\n"
    "}\n"},
  {"module_names.ms",
    "K = 2 * 5\n"
    "def f(x):\n"
    "    return g(x) + K + len(x)\n"
    "def g(x):\n"
    "    return x[0]\n"
    "ARGS = ([5],)\n"
    "print(f([5]))\n",
    "16\n",
    "# file module_names.ms\n"
    "graph @f(%x) : function {  # 2:1+3\n"
    "  %1 = global(\"g\")  # 3:12\n"
    "  %2 = %1(%x)  # 3:12+4\n"
    "  %3 = add(%2, %K.2)  # 3:12+8\n"
    "  %4 = $len(%x)  # 3:23+6\n"
    "  %5 = add(%3, %4)  # 3:12+17\n"
    "  return %5\n"
    "}\n"},
  {"nested_recursion.ms",
    "def f(n):\n"
    "    def fact(k):\n"
    "        return 1 if k == 0 else k * fact(k - 1)\n"
    "    return fact(n)\n"
    "ARGS = (5,)\n"
    "print(f(5), f(0))\n",
    "120 1\n",
    "# file nested_recursion.ms\n"
    "graph @f(%n) : function {  # 1:1+3\n"
    "  %1 = @f.fact(%n)  # 4:12+7\n"
    "  return %1\n"
    "}\n"
    "\n"
    "graph @f.fact(%k) in @f : function {  # 2:5+3\n"
    "  %2 = eq(%k, 0)  # 3:21+6\n"
    "  %3 = switch(%2, @f.fact.then1, @f.fact.else2)  # 3:16+32\n"
    "  %4 = %3()  # 3:16+32\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f.fact.then1() in @f.fact : branch {  # 3:16+32\n"
    "  return 1\n"
    "}\n"
    "\n"
    "graph @f.fact.else2() in @f.fact : branch {  # 3:16+32\n"
    "  %5 = sub(%k, 1)  # 3:42+5\n"
    "  %6 = @f.fact(%5)  # 3:37+11\n"
    "  %7 = mul(%k, %6)  # 3:33+15\n"
    "  return %7\n"
    "}\n"},
  {"for_call.ms",
    "def f(n):\n"
    "    for x in g(n):\n"
    "        n += x\n"
    "    return n\n"
    "def g(n):\n"
    "    return [n, 2 * n]\n"
    "ARGS = (3,)\n"
    "print(f(3), f(0))\n",
    "12 0\n",
    "# file for_call.ms\n"
    "graph @f(%n.2) : function {  # 1:1+3\n"
    "  %1 = global(\"g\")  # 2:14\n"
    "  %2 = %1(%n.2)  # 2:14+4\n"
    "  %3 = iter_seq(%2)  # 2:14+4\n"
    "  %4 = len(%3)  # 2:14+4\n"
    "  %5 = @f.for1(0, Unbound, %n.2)  # 2:5+3\n"
    "  return %5\n"
    "}\n"
    "\n"
    "graph @f.for1(%6, %x.2, %n.3) in @f : loop {  # 2:5+3\n"
    "  %7 = lt(%6, %4)  # 2:5+3\n"
    "  %8 = switch(%7, @f.body3, @f.exit4)  # 2:5+3\n"
    "  %9 = %8()  # 2:5+3\n"
    "  return %9\n"
    "}\n"
    "\n"
    "graph @f.after2(%x.3, %n.4) in @f : join {  # 2:5+3\n"
    "  return %n.4\n"
    "}\n"
    "\n"
    "graph @f.body3() in @f.for1 : branch, body {  # 2:5+3\n"
    "  %x.4 = getitem(%3, %6)  # 2:9\n"
    "  %n.5 = add(%n.3, %x.4)  # 3:9+6\n"
    "  %10 = add(%6, 1)  # 3:9+6\n"
    "  %11 = @f.for1(%10, %x.4, %n.5)  # 3:9+6\n"
    "  return %11\n"
    "}\n"
    "\n"
    "graph @f.exit4() in @f.for1 : branch {  # 2:5+3\n"
    "  %12 = @f.after2(%x.2, %n.3)  # 2:5+3\n"
    "  return %12\n"
    "}\n"},
};

enum { NCASES = (int)(sizeof cases / sizeof cases[0]) };

static MistVM *vm;
static StrBuf output;

static void capture(void *user, const char *text, size_t len) {
  (void)user;
  sb_add(&output, text, len);
}

static void setup(void) {
  vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  sb_init(&output);
  mist_set_write(vm, capture, NULL);
}

static void teardown(void) {
  mist_free(vm);
  vm = NULL;
}

static const char *err_msg(void) { return vm->err.set ? mist_error(vm) : "(no error)"; }

/* Parse and lower src as file `name` into module m; the unit must verify. */
static LowerResult lower_src(const char *name, const char *src, ObjModule *m, bool echo) {
  size_t len = strlen(src);
  int fid = lang_file_add(vm, name, src, len);
  Ast *ast = parse_module(vm, fid, src, len);
  ck_assert_msg(ast != NULL, "%s: parse failed: %s", name, err_msg());
  LowerResult lr;
  ck_assert_msg(lower_module(vm, ast, m, echo, &lr), "%s: lowering failed: %s", name, err_msg());
  ck_assert_msg(ir_verify_unit(vm, lr.unit), "%s: unit does not verify: %s", name, err_msg());
  return lr;
}

static IrGraph *find_graph(IrUnit *u, const char *name) {
  for (int i = 0; i < u->ngraphs; i++)
    if (strcmp(u->graphs[i]->name->data, name) == 0) return u->graphs[i];
  ck_abort_msg("no graph @%s", name);
  return NULL;
}

static char *print_graph(IrGraph *g) {
  StrBuf sb;
  sb_init(&sb);
  ir_print_graph(vm, g, &sb);
  return sb.data;
}

static char *print_unit(IrUnit *u) {
  StrBuf sb;
  sb_init(&sb);
  ir_print_unit(vm, u, &sb);
  return sb.data;
}

/* A module like the API's own (api/mist.c), for running a unit apart
 * from vm->main. */
static ObjModule *fresh_module(const char *name) {
  ObjModule *m = lang_alloc(sizeof *m);
  m->obj.kind = O_MODULE;
  m->name = lang_str(name);
  m->path = lang_str(name);
  m->names = lang_dict_new();
  m->file_id = -1;
  return m;
}

static Value module_get(ObjModule *m, const char *name) {
  Value slot;
  ck_assert_msg(m->names && lang_dict_get(m->names, lang_str(name), &slot), "no global '%s'", name);
  return m->slots[slot.i];
}

static char *repr(Value v) {
  StrBuf sb;
  sb_init(&sb);
  ck_assert_msg(lang_repr(vm, v, &sb), "repr failed: %s", err_msg());
  return sb.data;
}

/* Run a unit's main graph and return what it printed. */
static char *run_main(IrGraph *main) {
  output.len = 0;
  sb_addc(&output, 0);
  output.len = 0;
  Value r;
  ck_assert_msg(ev_run_main(vm, main, &r), "run failed: %s", err_msg());
  return lang_str_new(output.data ? output.data : "", output.len)->data;
}

/* f(*args) for a callable value. */
static Value call_with(Value f, Value args) {
  ck_assert(v_is_obj(args, O_TUPLE));
  ObjSeq *t = (ObjSeq *)args.o;
  Value r;
  ck_assert_msg(ev_call(vm, f, (int)t->len, t->items, NULL, &r), "call failed: %s", err_msg());
  return r;
}

/* ---- each case: golden IR, verify, round trip, run ---- */

START_TEST(t_golden) {
  const Case *c = &cases[_i];
  LowerResult lr = lower_src(c->file, c->src, vm->main, false);
  char *text = print_graph(find_graph(lr.unit, "f"));
  ck_assert_msg(strcmp(text, c->ir) == 0, "%s: IR differs\n--- expected:\n%s--- got:\n%s", c->file,
                c->ir, text);
}
END_TEST

START_TEST(t_round_trip) {
  const Case *c = &cases[_i];
  LowerResult lr = lower_src(c->file, c->src, vm->main, false);
  char *t1 = print_unit(lr.unit);
  IrUnit *u2 = ir_read(vm, c->file, t1, strlen(t1));
  ck_assert_msg(u2 != NULL, "%s: ir_read failed: %s\n%s", c->file, err_msg(), t1);
  ck_assert_msg(ir_verify_unit(vm, u2), "%s: re-read unit does not verify: %s", c->file, err_msg());
  char *t2 = print_unit(u2);
  ck_assert_msg(strcmp(t1, t2) == 0, "%s: round trip differs\n--- first:\n%s--- second:\n%s", c->file,
                t1, t2);
  ck_assert_int_eq(u2->ngraphs, lr.unit->ngraphs);
  /* the function's own printout survives the trip too */
  ck_assert_str_eq(print_graph(find_graph(u2, "f")), c->ir);
}
END_TEST

START_TEST(t_run_read_back) {
  const Case *c = &cases[_i];
  LowerResult lr = lower_src(c->file, c->src, vm->main, false);
  ck_assert_str_eq(run_main(lr.main), c->out);
  Value args = module_get(vm->main, "ARGS");
  Value want = call_with(module_get(vm->main, "f"), args);

  /* the same program, from its text form, in a module of its own */
  char *text = print_unit(lr.unit);
  IrUnit *u2 = ir_read(vm, c->file, text, strlen(text));
  ck_assert_msg(u2 != NULL, "%s: ir_read failed: %s", c->file, err_msg());
  ObjModule *m2 = fresh_module("copy");
  for (int i = 0; i < u2->ngraphs; i++) u2->graphs[i]->module = m2;
  IrGraph *main2 = find_graph(u2, "__main__");
  ck_assert_str_eq(run_main(main2), c->out);
  Value got = call_with(module_get(m2, "f"), module_get(m2, "ARGS"));
  ck_assert_msg(lang_equal(want, got), "%s: f(*ARGS) gave %s, read back %s", c->file, repr(want),
                repr(got));
  ck_assert_str_eq(repr(want), repr(got));

  /* a bare graph with no free variables is callable as a closure */
  IrGraph *f2 = find_graph(u2, "f");
  ir_free_vars(f2);
  if (f2->nfv == 0) {
    Value g = ir_const_graph(u2, f2, span_none())->value;
    ck_assert_str_eq(repr(call_with(g, args)), repr(want));
  }
}
END_TEST

/* ---- what parsing and lowering reject before anything runs ---- */

static const struct {
  const char *src;
  const char *msg;
  int line, col;
} bad[] = {
  {"return 1\n", "'return' outside function", 1, 1},
  {"x = 1\nif x:\n    return x\n", "'return' outside function", 3, 5},
  {"break\n", "'break' outside loop", 1, 1},
  {"def f():\n    continue\n", "'continue' not properly in loop", 2, 5},
  {"for i in range(3):\n    def g():\n        break\n", "'break' outside loop", 3, 9},
  {"x = 1\nx.y = 2\n", "cannot assign to an attribute: Mist values are immutable", 2, 1},
  {"x = 1\nx.y += 2\n", "cannot assign to an attribute: Mist values are immutable", 2, 1},
  {"def f(x):\n    x.y, z = 1, 2\n", "cannot assign to an attribute: Mist values are immutable", 2, 5},
};

START_TEST(t_lower_errors) {
  const char *src = bad[_i].src;
  size_t len = strlen(src);
  int fid = lang_file_add(vm, "bad.ms", src, len);
  /* the parser finds some of these itself; the rest must stop the lowering */
  Ast *ast = parse_module(vm, fid, src, len);
  LowerResult lr;
  ck_assert_msg(!ast || !lower_module(vm, ast, vm->main, false, &lr), "should fail: %s", src);
  ck_assert_str_eq(vm->err.kind, "SyntaxError");
  ck_assert_str_eq(vm->err.message->data, bad[_i].msg);
  ck_assert_int_eq(vm->err.span.line, bad[_i].line);
  ck_assert_int_eq(vm->err.span.col, bad[_i].col);
}
END_TEST

/* echo mode: a lone expression statement is the main graph's result */
START_TEST(t_echo) {
  static const struct {
    const char *src;
    const char *result;
  } ex[] = {
    {"1 + 2\n", "3"},
    {"'a' * 2\n", "'aa'"},
    {"(1, [2.5])\n", "(1, [2.5])"},
    {"x = 1\n", "None"},
    {"1\n2\n", "None"},
    {"print\n", "<built-in function print>"},
  };
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    LowerResult lr = lower_src("<echo>", ex[i].src, vm->main, true);
    Value r;
    ck_assert_msg(ev_run_main(vm, lr.main, &r), "%s", err_msg());
    ck_assert_str_eq(repr(r), ex[i].result);
    /* without echo the module's result is always None */
    lr = lower_src("<echo>", ex[i].src, vm->main, false);
    ck_assert(ev_run_main(vm, lr.main, &r));
    ck_assert_int_eq(r.tag, V_NONE);
  }
}
END_TEST

/* Closures capture values: a lambda made in a loop keeps the counter's
 * value at that iteration, and module names bound before a def are
 * captured while later ones are read when the function runs. */
START_TEST(t_capture_values) {
  const char *src =
    "fs = []\n"
    "for i in range(3):\n"
    "    fs = fs + [lambda: i * 10]\n"
    "x = 1 + 0\n"
    "def early():\n"
    "    return x\n"
    "def late():\n"
    "    return y\n"
    "x = 2\n"
    "y = 3\n"
    "print(fs[0](), fs[1](), fs[2](), early(), late(), x)\n";
  LowerResult lr = lower_src("capture.ms", src, vm->main, false);
  ck_assert_str_eq(run_main(lr.main), "0 10 20 1 3 2\n");
  /* early() reads x as a free variable, late() reads y as a global */
  char *early = print_graph(find_graph(lr.unit, "early"));
  ck_assert_msg(strstr(early, "return %x") && !strstr(early, "global"), "%s", early);
  char *late = print_graph(find_graph(lr.unit, "late"));
  ck_assert_msg(strstr(late, "global(\"y\")") != NULL, "%s", late);
}
END_TEST

static Suite *lower_suite(void) {
  Suite *s = suite_create("lower");
  TCase *tc = tcase_create("cases");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, t_golden, 0, NCASES);
  tcase_add_loop_test(tc, t_round_trip, 0, NCASES);
  tcase_add_loop_test(tc, t_run_read_back, 0, NCASES);
  suite_add_tcase(s, tc);
  TCase *tc2 = tcase_create("rules");
  tcase_add_checked_fixture(tc2, setup, teardown);
  tcase_set_timeout(tc2, 60);
  tcase_add_loop_test(tc2, t_lower_errors, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc2, t_echo);
  tcase_add_test(tc2, t_capture_values);
  suite_add_tcase(s, tc2);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(lower_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
