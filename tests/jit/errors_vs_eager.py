#!/usr/bin/env python3
"""errors_vs_eager.py: random programs that fail print the same in both modes.

Each program makes an error strike at a random point of its run: deep
in a chain of calls (non-tail calls, so the traceback has several
frames, and tail calls), on some turn of a loop, at some depth of a
recursion (40 and 1500 levels: "[Previous line repeated N more times]"),
inside a closure, a nested def, a comprehension, a lambda that
map/filter/sorted call, an unknown closure a higher-order function
calls, a jit'd function, the forward pass of grad (of jit, under jit,
value_and_grad, grad of grad, jacobian, jvp, vjp) of a function that
fails (or of one calling functions that fail: its stderr must then be
that of the plain call of the function, but for the derivative's own
frames), a loop's else block, a while
loop's condition, a default value; after the program has printed some
lines, and after the same functions have run (and compiled) without
failing.  The errors are those the language raises at run time (the
f_ functions below): division and modulo by zero (int and float), int
overflow (also negation, abs, // -1, **, in a loop), failed asserts
(with messages of floats, bools, tuples), list/tuple/str index out of
range, missing dict keys, type errors (operands, len, calls, compares,
iteration, None, augmented assignments and `**`), value errors of str and list methods and int() /
float(), empty min/max, unpacking, mutating methods, unknown attributes
and names, unbound locals, arity and keywords, float to int (inf, nan,
too big), math domain and range errors, format specs and `%`, a zero
range step, exit(N) and exit(str), the recursion limit (past it, and
just below or past it from whatever depth, through non-tail calls,
tail calls and a base-case test), grad of a non-scalar or of an int
(also jacobian and hessian of an int, and a derivative's call as the tail
call of a leaf function, its error then placed at that call),
and tensor errors (shapes that do not broadcast, also in a compiled
elementwise chain, matmul, concat, stack, item, index out of bounds,
bad axis, bad reshape, negative dimension).  Mist has no try/except
(LANGUAGE.md, "Not supported"), so nothing catches them.

Every program runs as `mist prog.ms` and `mist --mode=graph prog.ms`
in the same folder; stdout, stderr (message, FILE:LINE:COL, source
line, carets, traceback) and the exit status must be the same, byte
for byte.  One in four runs again in both modes with stderr and stdout
in one pipe (their order; graph mode then from the compile cache).
Two variants run in eager mode and must print the same again: with
`@jit` on some of its functions, and with `set_mode("graph")` at some
point of its main code (each in place of a comment line, so that line
numbers stay).  A program that is also valid Python (no tensors, grad,
jit, overflow, deep recursion or exit) runs under python3 too: its
stdout must be Mist's, and Python's message (the text after `XError: `
on its last line; a KeyError's whole line; "assertion failed: " before
an assert's) and the line of its innermost frame must be those of
Mist's first stderr line.

    errors_vs_eager.py MIST [SEED [PROGRAMS]] [--keep DIR] [--no-python] [--only KIND,...]

--keep DIR writes the programs that differ into DIR; --only picks the
faults (the names of the f_ functions below, without f_).  Exit status
0 when all agree, 1 on a difference (the first few shown, with the
program).  The same SEED and PROGRAMS give the same programs.  Graph
mode compiles into $MIST_CACHE_DIR (ctest's), else a folder of its own,
never the user's cache.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------
# Faults.  Each is a function of the generator and the name of an int
# variable `z` that is 0 exactly when the fault must strike and in
# 1..Z otherwise; it returns (statements, python_ok), the statements
# computing something into `v` (an int) from z, failing when z == 0.
# ---------------------------------------------------------------------

BIG = "9223372036854775807"


def f_intdiv(g, z):
    return ["v = (17 + %s) // %s" % (z, z)], True


def f_intmod(g, z):
    return ["v = (%d - %s) %% %s" % (g.r.randint(-9, 9), z, z)], True


def f_truediv(g, z):
    return ["v = int(3.5 / %s)" % z], True


def f_floatdiv(g, z):
    return ["v = int(float(%s) * 2.0 / float(%s))" % (z, z)], True


def f_floatfloordiv(g, z):
    return ["v = int(7.0 // float(%s))" % z], True


def f_divmod(g, z):
    return ["q, m = divmod(%d, %s)" % (g.r.randint(1, 50), z), "v = q + m"], True


def f_overflow(g, z):
    k = g.r.randrange(3)
    if k == 0:
        return ["v = %s - %s + 1" % (BIG, z)], False
    if k == 1:
        return ["v = (%s + 3037000499) * (3037000500 - %s)" % (z, z)], False
    return ["v = -%s - 1 - (%s == 0)" % (BIG, z)], False


def f_assert(g, z):
    k = g.r.randrange(4)
    if k == 0:
        return ["assert %s != 0" % z, "v = %s" % z], True
    if k == 1:
        return ["assert %s > 0, \"z reached \" + str(%s)" % (z, z), "v = %s + 1" % z], True
    if k == 2:
        return ["assert %s, f\"failed with {%s} left\"" % (z, z), "v = 2 * %s" % z], True
    # a message of values compiled code computed: floats, bools, a tuple
    return ["w = (%s + 1) / 3" % z,
            "assert %s, f\"{w} {w * 1e20} {-0.0 * w} {w:.3e} {%s == 0} {(w, %s)} {[w]}\" + str(w / 7)" % (z, z, z),
            "v = %s" % z], True


def f_list_index(g, z):
    n = g.r.randint(3, 6)
    xs = "[" + ", ".join(str(g.r.randint(-9, 9)) for _ in range(n)) + "]"
    return ["v = %s[%d - %s]" % (xs, n, z) if g.r.random() < 0.5 else "v = %s[%s - %d - 1]" % (xs, z, n)], True


def f_tuple_index(g, z):
    n = g.r.randint(2, 5)
    return ["t = (" + ", ".join(str(g.r.randint(0, 9)) for _ in range(n)) + ",)", "v = t[%d - %s]" % (n, z)], True


def f_str_index(g, z):
    s = g.r.choice(["abc", "Hello", "naïve", "xy"])
    return ["v = len(%r[%d - %s])" % (s, len(s), z)], True


def f_key(g, z):
    return ["d = {\"k1\": 1, \"k2\": 2, \"k3\": 3, \"k4\": 4, \"k5\": 5}",
            "v = d[\"k\" + str(%s)] if %s < 6 else %s" % (z, z, z)], True


def f_type_add(g, z):
    return ["w = \"s\" if %s == 0 else 1" % z, "v = w + 1"], True


def f_type_len(g, z):
    return ["w = [1, 2] if %s else 3" % z, "v = len(w)"], True


def f_type_call(g, z):
    return ["h = (lambda q: q + 1) if %s else 4" % z, "v = h(%s)" % z], True


def f_str_method(g, z):
    k = g.r.randrange(4)
    if k == 0:
        return ["v = \"abcabc\".index(\"c\" if %s else \"q\")" % z], True
    if k == 1:
        return ["v = int(\"12\" if %s else \"1x\")" % z], True
    if k == 2:
        return ["v = [3, 4, 5].index(5 if %s else 9)" % z], True
    return ["v = int(float(\"2.5\" if %s else \"two\"))" % z], True


def f_empty(g, z):
    f = g.r.choice(["min", "max"])
    return ["v = %s([%s] * min(%s, 3))" % (f, z, z)], True


def f_unpack(g, z):
    return ["a, b = (1, 2, 3)[:%s + 1] if %s < 2 else (%s, 1)" % (z, z, z), "v = a + b"], True


def f_mutate(g, z):
    return ["w = [%s]" % z, "if %s == 0:" % z, "    w.append(1)", "v = len(w)"], False


def f_attr(g, z):
    return ["w = \"ab\" * %s" % z, "v = len(w) if %s else len(w.uper())" % z], True


def f_recursion(g, z):
    return ["v = deep(0) if %s == 0 else %s" % (z, z)], False


def f_exit(g, z):
    return ["if %s == 0:" % z, "    exit(%d)" % g.r.choice([0, 1, 3]), "v = %s" % z], False


def f_tensor_shape(g, z):
    return ["tz = zeros((2, 3)) + ones((2, 3 + (%s == 0)))" % z, "v = int(tz.sum().item())"], False


def f_tensor_matmul(g, z):
    return ["tz = ones((2, 3)) @ ones((3 - (%s == 0), 2))" % z, "v = int(tz.sum().item())"], False


def f_tensor_index(g, z):
    return ["tz = arange(4)", "v = int(tz[4 - %s].item())" % z], False


def f_tensor_axis(g, z):
    return ["tz = ones((2, 3))", "v = int(tz.sum(axis=(1 if %s else 2)).sum().item())" % z], False


def f_tensor_reshape(g, z):
    return ["tz = arange(6).reshape((2 + (%s == 0), 3))" % z, "v = int(tz.sum().item())"], False


def f_negate(g, z):
    k = g.r.randrange(4)
    if k == 0:
        return ["v = -(-%s - 1 + %s)" % (BIG, z)], False
    if k == 1:
        return ["v = abs(-%s - 1 + %s)" % (BIG, z)], False
    if k == 2:
        return ["v = (-%s - 1 + %s) // -1" % (BIG, z)], False
    return ["v = 2 ** (62 + (%s == 0))" % z], False


def f_float_edge(g, z):
    k = g.r.randrange(7)
    if k == 0:
        return ["v = int(float(\"inf\") if %s == 0 else 2.5)" % z], True
    if k == 1:
        return ["v = int(float(\"nan\") if %s == 0 else 2.5)" % z], True
    if k == 2:
        return ["v = int(float(%s) ** -1)" % z], True
    if k == 3:
        return ["v = int(%s ** -1 * 4)" % z], True
    if k == 4:
        return ["v = int(7.5 %% float(%s))" % z], True
    if k == 5:
        return ["v = int(divmod(7.5, float(%s))[0])" % z], True
    return ["v = int((float(%s) - 8.0) ** 0.5 if %s == 0 else 1.0)" % (z, z)], False


def f_math(g, z):
    fn = g.r.choice(["sqrt", "log", "exp", "log2", "log10", "asin", "acos"])
    arg = {"sqrt": "float(%s) - 0.5", "log": "float(%s)", "exp": "800.0 * float(%s == 0)",
           "log2": "float(%s) - 1.0", "log10": "-float(%s == 0)", "asin": "1.0 + float(%s == 0)",
           "acos": "-1.5 * float(%s == 0)"}[fn] % z
    return ["w = %s(%s)" % (fn, arg), "v = %s if w == w else -1" % z], False


def f_format(g, z):
    k = g.r.randrange(5)
    if k == 0:
        return ["v = len(f\"{(2.5 if %s == 0 else 3):d}\")" % z], True
    if k == 1:
        return ["v = len((\"{} {}\" if %s == 0 else \"{}\").format(%s))" % (z, z)], True
    if k == 2:
        return ["v = len(\"%%d\" %% (\"a\" if %s == 0 else %s))" % (z, z)], True
    if k == 3:
        return ["v = len(\"%%d %%d\" %% ((%s,) if %s == 0 else (%s, 1)))" % (z, z, z)], True
    return ["v = len(f\"{%s:>{%s - 1}}\")" % (z, z)], True


def f_setitem(g, z):
    k = g.r.randrange(4)
    if k == 0:
        return ["w = [1, 2, 3]", "w[3 - %s] = 9" % z, "v = w[0]"], True
    if k == 1:
        return ["w = {\"a\": 1}", "w[\"a\"] = w[\"b\" if %s == 0 else \"a\"] + 1" % z, "v = w[\"a\"]"], True
    if k == 2:
        return ["w = (1, 2) if %s == 0 else [1, 2]" % z, "w[0] = 5", "v = w[1]"], True
    return ["tz = zeros((3,))", "tz[3 - %s] = 1.0" % z, "v = int(tz.sum().item())"], False


def f_compare(g, z):
    return ["w = \"a\" if %s == 0 else 1" % z, "v = %s if w < 2 else 0" % z], True


def f_arity(g, z):
    k = g.r.randrange(3)
    if k == 0:
        return ["h = (lambda q: q) if %s else (lambda q, r: q)" % z, "v = h(%s)" % z], False
    if k == 1:
        return ["v = ar2(%s) if %s == 0 else ar2(%s, 1)" % (z, z, z)], True
    return ["v = ar2(%s, 1, q=2) if %s == 0 else ar2(%s, 1)" % (z, z, z)], True


def f_range0(g, z):
    return ["v = len(range(0, 10, %s))" % z], True


def f_index_type(g, z):
    return ["v = [1, 2][None if %s == 0 else 1]" % z], True


def f_sum_str(g, z):
    return ["v = len(sorted([1, \"a\" if %s == 0 else 2]))" % z], True


def f_recursion_edge(g, z):
    # Recursion whose depth lands just below or just past the limit,
    # from whatever depth the call is made at.
    g.python_ok = False
    return ["v = down(LIMIT - %d + 2 * (%s == 0)) if %s < 2 else %s" % (g.r.randint(-3, 14), z, z, z)], False


def f_tensor_item(g, z):
    return ["tz = ones((1 + (%s == 0),))" % z, "v = int(tz.item())"], False


def f_tensor_more(g, z):
    k = g.r.randrange(4)
    if k == 0:
        return ["tz = concat([ones((2, 2)), ones((1, 2 + (%s == 0)))], axis=0)" % z, "v = int(tz.sum().item())"], False
    if k == 1:
        return ["tz = softmax(ones((2, 3)), axis=(1 if %s else 5))" % z, "v = int(tz.sum().item())"], False
    if k == 2:
        return ["tz = arange(6.0)[:6 - %s].reshape((2, 3))" % z, "v = int(tz.sum().item())"], False
    return ["tz = stack([ones((2,)), ones((2 + (%s == 0),))])" % z, "v = int(tz.sum().item())"], False


def f_tensor_fused(g, z):
    # typed tensors into a compiled elementwise chain; the last call's
    # shapes do not broadcast (a new signature, whose inference fails)
    k = g.r.randrange(3)
    if k == 0:
        return ["tz = chain(ones((3,)), ones((3 + (%s == 0),)))" % z, "v = int(tz.sum().item())"], False
    if k == 1:
        return ["tz = chain(ones((2, 3)), ones((3 - (%s == 0), 2)).T)" % z, "v = int(tz.sum().item())"], False
    return ["tz = chain(arange(4.0), arange(4.0))", "v = int(tz[4 - %s].item())" % z], False


def f_grad_misuse(g, z):
    k = g.r.randrange(6)
    # a derivative called last, its value a float: in the tail route, a
    # tail call of the derivative, whose own error has no place of its
    # own (it is placed at that call); jacobian and hessian check their
    # arguments as grad does
    if k == 3:
        return ["v = grad(lambda x: x * 2.0)(%s if %s == 0 else 1.5)" % (z, z)], False
    if k == 4:
        return ["v = hessian(lambda x: x * x * 3.0)(%s if %s == 0 else 1.5)" % (z, z)], False
    if k == 5:
        return ["v = jacobian(lambda x: x * 3.0)(%s if %s == 0 else 0.5)" % (z, z)], False
    if k == 0:
        return ["v = int(grad(lambda x: x * ones((1 + (%s == 0),)))(1.0).item() if %s else grad(lambda x: x * ones((1 + (%s == 0),)))(1.0))" % (z, z, z)], False
    if k == 1:
        return ["v = int(grad(lambda x: x * 2.0)(%s if %s == 0 else 1.5))" % (z, z)], False
    return ["v = int(grad(lambda x: x[%d - %s] * 2.0)(ones((3,))).sum().item())" % (3, z)], False


def f_mutual(g, z):
    return ["v = ping(%d, %s)" % (g.r.randint(0, 6), z)], True


def f_none(g, z):
    k = g.r.randrange(3)
    if k == 0:
        return ["w = None if %s == 0 else %s" % (z, z), "v = w + 1"], True
    if k == 1:
        return ["w = None if %s == 0 else [%s]" % (z, z), "v = w[0]"], True
    return ["w = None if %s == 0 else \"ab\"" % z, "v = len(w.upper())"], True


def f_unbound(g, z):
    if g.r.random() < 0.5:
        return ["if %s:" % z, "    u = %s" % z, "v = u + 1"], True
    return ["for j in range(%s):" % z, "    u = j", "v = u * 2"], True


def f_name(g, z):
    return ["v = %s if %s else %s" % (z, z, g.r.choice(["zz", "undefined_thing", "lefa1", "ar3"]))], True


def f_float_int(g, z):
    k = g.r.randrange(3)
    if k == 0:
        return ["v = round(float(\"inf\") if %s == 0 else 1.5)" % z], True
    if k == 1:
        return ["v = int(1e19 * float(%s == 0) + 1.0)" % z], False
    return ["v = round(float(\"nan\") if %s == 0 else 2.5)" % z], True


def f_exit_msg(g, z):
    return ["if %s == 0:" % z, "    exit(\"stopped at \" + str(%s))" % z, "v = %s" % z], False


def f_tensor_misc(g, z):
    k = g.r.randrange(5)
    if k == 0:
        return ["tz = zeros((%s - 1, 2))" % z, "v = int(tz.sum().item())"], False
    if k == 1:
        return ["tz = arange(12.0).reshape((-1, 5 - (%s > 0)))" % z, "v = int(tz.sum().item())"], False
    if k == 2:
        return ["tz = arange(3.0) @ arange(3.0 + float(%s == 0))" % z, "v = int(tz.item())"], False
    if k == 3:
        return ["tz = ones((2, 3))", "v = int(tz[1, 3 - %s].item())" % z], False
    return ["tz = ones((2, 3))", "v = int(tz[-3 + (%s > 0), 0].item())" % z], False


def f_recursion_tail(g, z):
    g.python_ok = False
    return ["v = tdown(LIMIT - %d + 2 * (%s == 0)) if %s < 2 else %s" % (g.r.randint(-3, 14), z, z, z)], False


def f_recursion_base(g, z):
    g.python_ok = False
    return ["v = bdown(LIMIT - %d + 2 * (%s == 0)) if %s < 2 else %s" % (g.r.randint(-3, 14), z, z, z)], False


def f_type_more(g, z):
    e = g.r.choice(["list(w)", "abs(w)", "-w", "w * 2.5", "[1, 2] + w", "w - w", "len(None) if w == 0 else w",
                    "\",\".join([w, 2])", "sum(w)", "max(w, \"a\")", "w.split(\"\")", "[q for q in w]",
                    "(1 < w < 3)", "w[1:2:0]", "round(w, \"a\")"])
    good = {"list(w)": "[%s]", "abs(w)": "%s", "-w": "%s", "w * 2.5": "%s", "[1, 2] + w": "[%s]",
            "w - w": "%s", "len(None) if w == 0 else w": "%s", "\",\".join([w, 2])": "\"%s\"",
            "sum(w)": "[%s]", "max(w, \"a\")": "\"%s\"", "w.split(\"\")": "\"%s\"", "[q for q in w]": "[%s]",
            "(1 < w < 3)": "%s", "w[1:2:0]": "[%s]", "round(w, \"a\")": "%s"}[e] % z
    bad = "(%s,)" % z if good.startswith("[") else "\"s\"" if not good.startswith("\"") else z
    if e == "len(None) if w == 0 else w":
        bad = "0"
    return ["w = %s if %s == 0 else %s" % (bad, z, good), "v = len(str(%s))" % e], True


def f_type_aug(g, z):
    # an augmented assignment's TypeError names its operator with the '=' ("for -=:"),
    # and ** says "** or pow()"
    op = g.r.choice(["+", "-", "*", "/", "//", "%", "**"])
    k = g.r.randrange(4)
    if k == 0:
        return ["w = None if %s == 0 else 1" % z, "v = 2", "v %s= w" % op], True
    if k == 1:
        return ["w = None if %s == 0 else 1" % z, "e = {\"k\": w}", "e[\"k\"] %s= 2" % op, "v = e[\"k\"]"], True
    if k == 2:
        return ["w = [None] if %s == 0 else [3]" % z, "w[0]  %s=  3" % op, "v = w[0]"], True
    return ["w = \"s\" if %s == 0 else 2" % z, "v = w %s 2 if %s else 1 %s w" % (op, z, op)], True


def f_overflow_loop(g, z):
    return ["w = 1", "for j in range(39 + (%s == 0)):" % z, "    w = w * 3", "v = w %% 1000 + %s" % z], False


FAULTS = [f_type_more, f_type_more, f_type_aug, f_type_aug, f_overflow_loop, f_none, f_unbound, f_name, f_float_int, f_exit_msg, f_tensor_misc, f_recursion_tail,
          f_recursion_base, f_tensor_fused, f_grad_misuse, f_mutual, f_negate, f_float_edge, f_math, f_format, f_setitem, f_compare, f_arity, f_range0,
          f_index_type, f_sum_str, f_recursion_edge, f_tensor_item, f_tensor_more,
          f_intdiv, f_intmod, f_truediv, f_floatdiv, f_floatfloordiv, f_divmod,
          f_overflow, f_assert, f_list_index, f_tuple_index, f_str_index, f_key,
          f_type_add, f_type_len, f_type_call, f_str_method, f_empty, f_unpack,
          f_mutate, f_attr, f_recursion, f_exit, f_tensor_shape, f_tensor_matmul,
          f_tensor_index, f_tensor_axis, f_tensor_reshape]


ONLY = []      # --only KIND,KIND: just those faults


def indent(lines, n=1):
    return ["    " * n + l for l in lines]


class Gen:
    def __init__(self, r):
        self.r = r
        self.defs = []          # top-level lines
        self.python_ok = True
        self.nfun = 0
        self.kinds = []
        self.plain = None       # (a derivative's call, the plain call of its function)

    def fresh(self, base):
        self.nfun += 1
        return "%s%d" % (base, self.nfun)

    def fault_body(self, z):
        """Statements computing v from the int variable z, failing at 0."""
        f = self.r.choice([f for f in FAULTS if not ONLY or f.__name__[2:] in ONLY])
        self.kinds.append(f.__name__[2:])
        lines, ok = f(self, z)
        if not ok:
            self.python_ok = False
        return lines

    def leaf(self):
        """A function leaf(z) -> int that fails when z == 0, by one of
        several routes to the faulting code."""
        r = self.r
        name = self.fresh("leaf")
        route = r.randrange(16)
        body = self.fault_body("z")
        L = ["# -", "def %s(z):" % name]
        if route == 15 and body[-1].startswith("v = "):   # the last value returned: a tail call
            L += indent(body[:-1]) + ["    return " + body[-1][4:]]
        elif route in (0, 15):               # straight
            L += indent(body) + ["    return v"]
        elif route == 1:                     # a nested def, called
            L += ["    def inner(z):"] + indent(body, 2) + ["        return v", "    return inner(z) + 1"]
        elif route == 2:                     # a closure over z, no arguments
            L += ["    def clo():"] + indent(body, 2) + ["        return v", "    c = clo", "    return c() * 2"]
        elif route == 3:                     # a comprehension over a countdown
            L += ["    def one(z):"] + indent(body, 2) + ["        return v",
                  "    ws = [one(j) for j in range(z + 2, z - 1, -1)]", "    return sum(ws)"]
        elif route == 4:                     # map / filter / sorted with a lambda
            fn = r.choice(["map", "filter", "sorted"])
            L += ["    def one(z):"] + indent(body, 2) + ["        return v"]
            if fn == "map":
                L += ["    return sum(list(map(lambda j: one(j), [z + 2, z + 1, z])))"]
            elif fn == "filter":
                L += ["    return len(list(filter(lambda j: one(j) > -1000000, [z + 1, z])))"]
            else:
                L += ["    return sorted([z + 1, z], key=lambda j: one(j))[0]"]
        elif route == 5:                     # a while loop counting down to z
            L += ["    k = z + %d" % r.randint(1, 4), "    acc = 0", "    while k >= z:",
                  "        def one(z):"] + indent(body, 3) + ["            return v",
                  "        acc += one(k - z + z) if k > z else one(z)", "        k -= 1", "    return acc"]
        elif route == 6:                     # recursion down to the fault
            depth = r.choice([1, 2, 3, 5, 40, 1500])
            if depth > 900:                  # past CPython's recursion limit
                self.python_ok = False
            L += ["    def rec(n, z):", "        if n == 0:"] + indent(body, 3) + ["            return v",
                  "        return 1 + rec(n - 1, z)", "    return rec(%d, z)" % depth]
        elif route == 11:                    # a for loop's else block, after a break that did not happen
            L += ["    acc = 0", "    for i in range(3):", "        if i > z + 5:", "            break",
                  "        acc += i", "    else:"] + indent(body, 2) + ["        acc += v", "    return acc"]
        elif route == 12:                    # the condition of a while loop
            L += ["    def one(z):"] + indent(body, 2) + ["        return v",
                  "    i = 0", "    while i < 8 and one(z + 2 - i) > -1000000:", "        i += 1", "    return i"]
        elif route == 13:                    # a default value, computed when the def runs
            L += ["    def one(z):"] + indent(body, 2) + ["        return v",
                  "    def h(q, r=one(z)):", "        return q + r", "    return h(z)"]
        elif route == 10:                    # an unknown closure through a higher-order function
            L += ["    def one(z):"] + indent(body, 2) + ["        return v",
                  "    def twice(h, q):", "        return h(q + 1) + h(q)",
                  "    return twice(one if z >= 0 else abs, z)"]
        elif route in (7, 14):   # grad of a function failing in its forward pass
            self.python_ok = False
            wrap = r.choice(["grad(g)", "jit(grad(g))", "grad(jit(g))", "value_and_grad(g)", "grad(grad(g))",
                             "jacobian(g)", "(lambda x: jvp(g, (x,), (1.0,))[1])", "(lambda x: vjp(g, x)[1](1.0)[0])"])
            if route == 7:
                L += ["    def g(x):"] + indent(body, 2) + ["        return x * x * float(v)"]
            else:                            # in functions that g calls (which the derivative inlines)
                L += ["    def h2(y):"] + indent(body, 2) + ["        return y * float(v)",
                      "    def h1(y):", "        return %s" % r.choice(["h2(y) * y", "h2(y * y)", "y + h2(y) * 2.0"]),
                      "    def g(x):", "        return %s" % r.choice(["h1(x) * x", "h1(x * 0.5)", "x * x + h1(x)"])]
            L += ["    r = %s(1.5)" % wrap]
            # (kept small: a fault's value may be as large as 2 ** 62, and
            # the check below runs g(1.5) in place of the derivative, whose
            # different values must not make the callers' sums overflow
            # sooner or later than the derivative's: seed 7000001)
            L += ["    return int((r[0] + r[1]) % 1000.0)" if wrap.startswith("value") else "    return int(r % 1000.0)"]
            if not wrap.startswith("value") and not wrap.startswith("(lambda"):
                self.plain = ("%s(1.5)" % wrap, "g(1.5)")
        elif route == 8:                     # jit of a nested function
            self.python_ok = False
            L += ["    @jit", "    def inner(z):"] + indent(body, 2) + ["        return v", "    return inner(z)"]
        else:                                # a for loop whose last turn fails
            L += ["    acc = 0", "    for i in range(%d, -1, -1):" % r.randint(1, 4), "        zz = z + i"] + \
                indent(self.rename(body, "z", "zz"), 2) + ["        acc += v", "    return acc"]
        self.defs += L + [""]
        return name

    def rename(self, lines, a, b):
        return [re.sub(r"\b%s\b" % a, b, l) for l in lines]

    def chain(self, leafname, depth):
        """Functions f(n, k) calling down to leaf(z), z = k - n or so."""
        r = self.r
        callee = leafname
        first = True
        for _ in range(depth):
            name = self.fresh("f")
            style = r.randrange(6)
            call = "%s(z)" % callee if first else "%s(n, k)" % callee
            zexpr = "k - n"
            L = ["# -", "def %s(n, k):" % name]
            if first:
                L += ["    z = %s" % zexpr]
            if r.random() < 0.4:
                L += ["    print(\"in %s\", n, k, n / 3, (n + 1) * 1e20, -0.0 * n, n == k)" % name]
            if style == 0:      # tail call: the frame is gone
                L += ["    return %s" % call]
            elif style == 1:    # non-tail call
                L += ["    r = %s" % call, "    return r + 1"]
            elif style == 2:    # inside an f-string
                L += ["    s = f\"{%s}!\"" % call, "    return len(s)"]
            elif style == 3:    # inside a loop
                if first:
                    L = ["# -", "def %s(n, k):" % name, "    acc = 0", "    for j in range(n + 1):",
                         "        z = k - j", "        acc += %s" % call, "    return acc"]
                else:
                    L += ["    acc = 0", "    for j in range(2):", "        acc += %s" % call, "    return acc"]
            elif style == 4:    # conditional expression
                L += ["    return (%s if n >= 0 else 0) * 2" % call]
            else:               # inside a tuple, unpacked
                L += ["    a, b = (%s, n)" % call, "    return a - b"]
            self.defs += L + [""]
            callee = name
            first = False
        return callee

    def program(self):
        r = self.r
        self.defs += ["LIMIT = 200000", "", "def deep(n):", "    return 1 + deep(n + 1)", "",
                      "def down(n):", "    return 0 if n <= 0 else 1 + down(n - 1)", "",
                      "def ar2(a, b):", "    return a + b", "",
                      "def chain(a, b):", "    return exp(a) * b + tanh(a) - where(a > b, a, b)", "",
                      "def tdown(n):", "    if n <= 0:", "        return 0", "    return tdown(n - 1)", "",
                      "def bdown(n):", "    if n < 2:", "        return n", "    return bdown(n - 1) + bdown(n % 2) + 1", "",
                      "def ping(n, z):", "    return pong(n - 1, z) + 1 if n > 0 else 100 // z", "",
                      "def pong(n, z):", "    return ping(n - 1, z) * 2 if n > 0 else len([1, 2][:z][1:] + [z][z - 1:z])", ""]
        top = self.chain(self.leaf(), r.randint(1, 5))
        k = r.randint(2, 6)
        main = []
        if r.random() < 0.7:
            main.append("print(\"start\")")
        # calls that do not fail (z stays >= 1), then the one that does
        for n in range(0, k + 1):
            main.append("print(%s(%d, %d))" % (top, n, k))
        main.append("print(\"not reached\")")
        main.insert(r.randrange(len(main)), "# mode")
        if r.random() < 0.5:
            body = ["def main():"] + indent(main) + ["", "main()"]
        else:
            body = main
        return "\n".join(self.defs + body) + "\n"

    def variants(self, src):
        """The program with @jit on some of its functions, and with
        set_mode("graph") at some point of its main code, each in place
        of a comment line so that every line keeps its number: both run
        in eager mode and must print what graph mode prints."""
        r = self.r
        jitted = re.sub(r"^# -$", lambda m: "@jit" if r.random() < 0.5 else m.group(0), src, flags=re.M)
        switched = src.replace("# mode", "set_mode(\"graph\")")
        return [("eager, @jit", jitted), ("eager, set_mode", switched)]


def run(cmd, cwd, merged=False):
    """stdout, stderr and the exit status; with merged, stderr goes into
    stdout (so the order the two were written in shows) and is ""."""
    if merged:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    else:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.stdout, p.stderr or "", p.returncode


PY_MSG = re.compile(r"^(\w+Error|AssertionError)(: (.*))?$")


def python_check(mist_out, mist_err, py):
    """None when Mist's first stderr line agrees with CPython's error."""
    out, err, rc = py
    if out != mist_out[0]:
        return "stdout differs from python3's"
    if rc == 0 and mist_out[2] == 0 and not err and not mist_err:
        return None
    lines = err.rstrip("\n").split("\n")
    m = PY_MSG.match(lines[-1])
    if not m:
        return "python3's last line is not an error: %r" % lines[-1]
    msg = m.group(3) or ""
    if m.group(1) == "KeyError":
        msg = lines[-1]
    if m.group(1) == "AssertionError":
        msg = "assertion failed" + (": " + msg if msg else "")
    pyline = None
    for l in lines:
        mm = re.match(r'\s*File "[^"]*prog\.ms", line (\d+)', l)
        if mm:
            pyline = int(mm.group(1))
    first = mist_err.split("\n", 1)[0]
    mm = re.match(r"prog\.ms:(\d+):\d+: error: (.*)$", first)
    if not mm:
        return "mist's first stderr line is not an error: %r" % first
    if mm.group(2) != msg:
        return "message %r, python3 says %r" % (mm.group(2), msg)
    if int(mm.group(1)) != pyline:
        return "line %s, python3 says %s" % (mm.group(1), pyline)
    return None


def main():
    argv = [a for a in sys.argv[1:]]
    keep = None
    if "--keep" in argv:
        i = argv.index("--keep")
        keep = argv[i + 1]
        del argv[i:i + 2]
    if "--only" in argv:
        i = argv.index("--only")
        ONLY.extend(argv[i + 1].split(","))
        del argv[i:i + 2]
    use_python = "--no-python" not in argv
    argv = [a for a in argv if a != "--no-python"]
    mist = os.path.abspath(argv[0])
    seed = int(argv[1]) if len(argv) > 1 else 1
    nprog = int(argv[2]) if len(argv) > 2 else 100
    bad = 0
    kinds = {}
    pychecked = 0
    with tempfile.TemporaryDirectory() as tmp:
        # never the user's compile cache (ctest gives the tests' own)
        os.environ.setdefault("MIST_CACHE_DIR", os.path.join(tmp, "cache"))
        for p in range(nprog):
            g = Gen(random.Random(seed * 1000003 + p))
            src = g.program()
            for k in g.kinds:
                kinds[k] = kinds.get(k, 0) + 1
            with open(os.path.join(tmp, "prog.ms"), "w") as f:
                f.write(src)
            eager = run([mist, "prog.ms"], tmp)
            graph = run([mist, "--mode=graph", "prog.ms"], tmp)
            why = None
            if eager != graph:
                why = "graph mode differs from eager mode"
            elif eager[2] not in (0, 1, 3) or eager[1] and ": error: " not in eager[1] and eager[1] != "stopped at 0\n":
                why = "eager mode exited %d" % eager[2]
            elif p % 4 == 0:
                # stdout and stderr into one pipe (the order they were
                # written in), graph mode from the compile cache now
                me, mg = run([mist, "prog.ms"], tmp, True), run([mist, "--mode=graph", "prog.ms"], tmp, True)
                if me != mg:
                    why, eager, graph = "graph mode differs from eager mode (stdout and stderr merged)", me, mg
            if not why:
                for what, vsrc in g.variants(src):
                    with open(os.path.join(tmp, "prog.ms"), "w") as f:
                        f.write(vsrc)
                    got = run([mist, "prog.ms"], tmp)
                    if got != eager:
                        why, src, graph = "%s differs from eager mode" % what, vsrc, got
                        break
            if not why and g.plain and eager[2] == 1:
                # the derivative's error is the function's own, with its
                # traceback, but for the derivative's frame
                with open(os.path.join(tmp, "prog.ms"), "w") as f:
                    f.write(src.replace(*g.plain))
                plain = run([mist, "prog.ms"], tmp)
                frame = re.compile(r"^  prog\.ms:\d+:\d+ in (grad|jacobian)\((grad\()?g\)?\)\n", re.M)
                # (the derivative's frame is one more level of recursion)
                times = re.compile(r"repeated \d+ more time")
                if times.sub("", frame.sub("", eager[1])) != times.sub("", plain[1]):
                    why, graph = "the derivative's error differs from the function's (%s)" % g.plain[1], plain
            if not why and use_python and g.python_ok:
                with open(os.path.join(tmp, "prog.ms"), "w") as f:
                    f.write(src)
                pychecked += 1
                why = python_check(eager, eager[1], run([sys.executable, "prog.ms"], tmp))
                if why:
                    why = "against CPython: " + why
            if why:
                bad += 1
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    with open(os.path.join(keep, "prog%d_%d.ms" % (seed, p)), "w") as f:
                        f.write(src)
                if bad <= 3:
                    print("program %d (seed %d): %s\n%s" % (p, seed, why, src))
                    for what, (o, e, rc) in (("eager", eager), ("the other", graph)):
                        print("--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s" % (what, rc, o, e))
    print("%d programs (seed %d), %d also against python3: %d differ" % (nprog, seed, pychecked, bad))
    print("faults: " + ", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
