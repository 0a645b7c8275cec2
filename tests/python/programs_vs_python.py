#!/usr/bin/env python3
"""programs_vs_python.py: random everyday programs print what CPython prints.

Random programs over ints, floats, bools, strs, lists, tuples and
dicts with string keys, with for, while, if/elif/else, break, continue,
a loop's else block, small recursive functions and recursions that
nest their argument deeper on each call among their statements: arithmetic (Python's floor division
and modulo, true division, powers), comparisons and boolean logic,
builtins (len abs round min max sum sorted reversed enumerate zip map
filter any all int float str bool list tuple format divmod, help of a
function with a docstring in any of Python's quotes), str methods
(partition, splitlines and the common ones) and slicing, f-strings with
format specs and printf-style `%`, comprehensions, conditional
expressions.  Each program is valid Python and valid Mist, written so
that it raises nothing and keeps ints within 64 bits; every value it
makes is printed.  It runs as module code in eager mode, inside a
function in graph mode (compiled), and as module code in graph mode
(its top-level functions compiled, called from the interpreted module
code and from each other), and all must print exactly what python3
prints.

    programs_vs_python.py MIST [SEED [PROGRAMS]]

Exit status 0 when all agree, 1 on a difference (the first few shown).
"""
import random
import sys

from _source import output_of as run

WORDS = ["a", "bc", "Hello", "x y", " pad ", "é", "naïve", "A-B-C", "", "snake_case", "12", "3.5", "\u0378\xa0\u200b"]


class Gen:
    def __init__(self, r):
        self.r = r
        self.vars = {"int": [], "float": [], "bool": [], "str": [], "list": [], "tuple": [], "dict": []}
        self.lines = []
        self.n = 0

    def pick(self, t):
        vs = self.vars[t]
        return self.r.choice(vs) if vs else None

    # ---- expressions of each type; small ints, no errors ----
    def int_(self, d):
        r = self.r
        v = self.pick("int")
        if d <= 0 or r.random() < 0.25:
            return v if v and r.random() < 0.7 else str(r.randint(-20, 20))
        k = r.randrange(14)
        a, b = self.int_(d - 1), self.int_(d - 1)
        if k == 0: return "(%s + %s)" % (a, b)
        if k == 1: return "(%s - %s)" % (a, b)
        if k == 2: return "((%s %% 97) * (%s %% 89))" % (a, b)
        if k == 3: return "(%s // (abs(%s) + 1))" % (a, b)
        if k == 4: return "(%s %% (abs(%s) + 2))" % (a, b)
        if k == 5: return "(%s %% 7) ** 3" % a
        if k == 6 and self.pick("str"): return "len(%s)" % self.str_(d - 1)
        if k == 7 and self.pick("list"): return "sum(%s)" % self.list_(d - 1)
        if k == 8: return "min(%s, %s, -3)" % (a, b)
        if k == 9: return "max([%s, %s])" % (a, b)
        if k == 10 and self.pick("float"): return "int(%s)" % self.float_(d - 1)
        if k == 11 and self.pick("float"): return "round(%s)" % self.float_(d - 1)
        if k == 12: return "(%s if %s else %s)" % (a, self.bool_(d - 1), b)
        if k == 13 and self.pick("list"):
            l = self.list_(d - 1)
            return "(%s[%s %% len(%s)] if %s else 0)" % (l, a, l, l)
        return "abs(%s)" % a

    def float_(self, d):
        r = self.r
        v = self.pick("float")
        if d <= 0 or r.random() < 0.25:
            return v if v and r.random() < 0.7 else r.choice(["0.5", "-1.25", "3.0", "0.1", "2.5", "1e-3", "-0.0", "7.75"])
        k = r.randrange(9)
        a, b = self.float_(d - 1), self.float_(d - 1)
        if k == 0: return "(%s + %s)" % (a, b)
        if k == 1: return "(%s * %s)" % (a, self.int_(d - 1))
        if k == 2: return "(%s / (abs(%s) + 0.5))" % (a, b)
        if k == 3: return "(%s / 4)" % self.int_(d - 1)
        if k == 4: return "round(%s, %d)" % (a, r.randrange(4))
        if k == 5: return "float(%s)" % self.int_(d - 1)
        if k == 6: return "abs(%s - %s)" % (a, b)
        if k == 7: return "max(%s, %s)" % (a, b)
        return "(%s %% 1.5)" % a

    def bool_(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.2:
            v = self.pick("bool")
            return v if v and r.random() < 0.6 else r.choice(["True", "False"])
        k = r.randrange(8)
        if k == 0: return "(%s < %s)" % (self.int_(d - 1), self.int_(d - 1))
        if k == 1: return "(%s == %s)" % (self.str_(d - 1), self.str_(d - 1))
        if k == 2: return "(%s and %s)" % (self.bool_(d - 1), self.bool_(d - 1))
        if k == 3: return "(not %s)" % self.bool_(d - 1)
        if k == 4: return "(%s in %s)" % (self.str_(0), self.str_(d - 1))
        if k == 5 and self.pick("list"): return "(%s in %s)" % (self.int_(0), self.list_(d - 1))
        if k == 6: return "(%s <= %s < %s)" % (self.float_(d - 1), self.float_(d - 1), self.float_(d - 1))
        return "bool(%s)" % self.int_(d - 1)

    def str_(self, d):
        r = self.r
        v = self.pick("str")
        if d <= 0 or r.random() < 0.2:
            return v if v and r.random() < 0.6 else repr(r.choice(WORDS))
        k = r.randrange(17)
        a = self.str_(d - 1)
        if k == 0: return "(%s + %s)" % (a, self.str_(d - 1))
        if k == 1: return "%s[%d:%d]" % (a, r.randint(-4, 3), r.randint(-2, 6))
        if k == 2:
            # (a method taken from its type is Python's unbound method)
            return r.choice(["%s.upper()", "str.upper(%s)", "%s.casefold()", "str.lower(%s)"]) % a
        if k == 3: return "%s.strip()" % a
        if k == 4: return "%s.replace(%r, %r)" % (a, r.choice(["a", "-", " "]), r.choice(["", "_", "xy"]))
        if k == 5: return "str(%s)" % self.int_(d - 1)
        if k == 6: return "str(%s)" % self.float_(d - 1)
        if k == 7: return "%r.join(%s)" % (r.choice([",", " ", ""]), self.strlist(d - 1))
        if k == 8:
            # (an f-string's fields name a variable or a number: Python
            # 3.11 allows no quote of the f-string's own kind inside)
            spec = r.choice(["", ":>6", ":<4", ":^7", ":08.3f", ":.2e", ":+d", ":,", ":x", ":g", ":.1%"])
            if spec in (":+d", ":,", ":x"):
                return 'f"<{%s%s}>"' % (self.pick("int") or r.randint(-999, 99999), spec)
            if spec in (":08.3f", ":.2e", ":g", ":.1%"):
                return 'f"{%s%s}|"' % (self.pick("float") or r.choice(["0.125", "-2.5", "1e-7"]), spec)
            return 'f"[{%s%s}]"' % (self.pick("str") or self.pick("int") or "1", spec)
        if k == 9: return "(%s * %d)" % (a, r.randrange(3))
        if k == 10: return "%s[::-1]" % a
        if k == 11: return "%s.lower().title()" % a
        if k == 12: return "repr(%s)" % a
        if k == 13: return "format(%s, %r)" % (self.float_(d - 1), r.choice([".2f", "10.3g", "e"]))
        if k == 14: return "%s.%s(%r)[%d]" % (a, r.choice(["partition", "rpartition"]), r.choice(["a", " ", "-"]), r.randrange(3))
        if k == 15: return "(%s %% (%s,))" % (r.choice(["'%5d|'", "'%-6s;'", "'%.3f'", "'%+x'"]) , self.int_(d - 1))
        return "(%s if %s else %s)" % (a, self.bool_(d - 1), self.str_(d - 1))

    def strlist(self, d):
        r = self.r
        k = r.randrange(4)
        if k == 3: return "(%s + '\\n' + %s).splitlines()" % (self.str_(d), self.str_(d))
        if k == 0:
            return (r.choice(["%s.split()", "sorted(%s.split(), key=str.lower)", "list(map(str.strip, %s.split(',')))"])
                    % self.str_(d))
        if k == 1: return "[str(q) for q in %s]" % self.list_(d)
        return "sorted([%s, %s])" % (self.str_(d), self.str_(d))

    def list_(self, d):
        r = self.r
        v = self.pick("list")
        if d <= 0 or r.random() < 0.2:
            return v if v and r.random() < 0.6 else "[%s]" % ", ".join(str(r.randint(-9, 9)) for _ in range(r.randrange(5)))
        k = r.randrange(11)
        a = self.list_(d - 1)
        if k == 0: return "(%s + %s)" % (a, self.list_(d - 1))
        if k == 1: return "sorted(%s)" % a
        if k == 2: return "sorted(%s, reverse=True)" % a
        if k == 3: return "list(reversed(%s))" % a
        if k == 4: return "[q * %s for q in %s if q %% 2 == 0]" % (self.int_(0), a)
        if k == 5: return "%s[%d:%d]" % (a, r.randint(-3, 2), r.randint(-1, 5))
        if k == 6: return "list(map(lambda q: q %% 5, %s))" % a
        if k == 7: return "[i for i, q in enumerate(%s) if q > 0]" % a
        if k == 8: return "list(range(%d, %d, %d))" % (r.randint(-5, 5), r.randint(-5, 9), r.choice([1, 2, -1, 3]))
        if k == 9: return "[len(s) for s in %s]" % self.strlist(d - 1)
        return "list(filter(lambda q: q != 0, %s))" % a

    def tuple_(self, d):
        r = self.r
        k = r.randrange(4)
        if k == 0: return "(%s, %s)" % (self.int_(d), self.str_(d))
        if k == 1: return "divmod(%s, %d)" % (self.int_(d), r.choice([3, -4, 7]))
        if k == 2: return "tuple(zip(%s, %s))" % (self.list_(d), self.strlist(d))
        return "(%s,)" % self.float_(d)

    def dict_(self, d):
        r = self.r
        k = r.randrange(3)
        if k == 0: return "{%s}" % ", ".join("%r: %s" % (w, self.int_(d)) for w in r.sample(["a", "b", "k", "z"], r.randrange(4)))
        if k == 1: return "{s: len(s) for s in %s}" % self.strlist(d)
        return "dict(zip(%s, %s))" % (self.strlist(d), self.list_(d))

    def control(self):
        """A statement with control flow, binding a new int or str."""
        r = self.r
        name = "c%d" % self.n
        self.n += 1
        k = r.randrange(5)
        L = self.lines
        if k == 4:
            # a recursion that nests its argument deeper on every call
            # (graph mode once never finished compiling one)
            fn = "nest%d" % self.n
            wrap = r.choice(["[x]", "(x, n)", "{'k': x}", "[x] if n % 2 else (x, 1.5)", "{'a': x} if n % 3 == 0 else [x, x]"])
            L.append("def %s(x, n):" % fn)
            L.append("    return x if n <= 0 else %s(%s, n - 1)" % (fn, wrap))
            L.append("%s = str(%s(%s, %d))" % (name, fn, self.int_(0), r.randint(0, 12)))
            self.vars["str"].append(name)
        elif k == 0:
            L.append("%s = 0" % name)
            L.append("for q in %s:" % self.list_(2))
            L.append("    if q % 3 == 0:")
            L.append("        continue")
            L.append("    %s += q * %s" % (name, self.int_(1)))
            L.append("    if %s > %d:" % (name, r.randint(0, 60)))
            L.append("        break")
            if r.randrange(2):
                L.append("else:")
                L.append("    %s -= 1000" % name)
            self.vars["int"].append(name)
        elif k == 1:
            L.append("if %s:" % self.bool_(2))
            L.append("    %s = %s" % (name, self.str_(2)))
            L.append("elif %s:" % self.bool_(2))
            L.append("    %s = %s" % (name, self.str_(1)))
            L.append("else:")
            L.append("    %s = %s" % (name, self.str_(1)))
            self.vars["str"].append(name)
        elif k == 2:
            fn = "fn%d" % self.n
            L.append("def %s(a, b=3):" % fn)
            # a docstring help() shows, in any of Python's quotes
            doc = r.choice([None, None, '"""Doc of %s."""' % fn, "'one line, \\'quoted\\''", '"tab\\there"',
                            '"""First line.\n\n       Indented more.\n    """'])
            if doc:
                L.append("    " + doc)
            L.append("    if a < 0:")
            L.append("        return -a * b")
            L.append("    return (a * b) %% 11 - len(str(a)) + (%s(a - 7) if a > 5 else 0)" % fn)
            # (arguments kept small: Python's recursion stops at depth 1000)
            L.append("%s = %s(%s %% 200) + %s(%s %% 200, b=%s)" % (name, fn, self.int_(1), fn, self.int_(1), self.int_(0)))
            if doc or r.randrange(4) == 0:
                L.append("help(%s)" % fn)
            self.vars["int"].append(name)
        else:
            L.append("%s = %s" % (name, self.int_(1)))
            L.append("steps = 0")
            L.append("while %s != 1 and steps < 20:" % name)
            L.append("    %s = %s // 2 if %s %% 2 == 0 else 3 * %s + 1" % (name, name, name, name))
            L.append("    steps += 1")
            L.append("    if %s == 5:" % name)
            L.append("        break")
            L.append("print(steps)")
            self.vars["int"].append(name)
        L.append("print(%s)" % name)

    def statement(self):
        r = self.r
        if r.randrange(5) == 0:
            return self.control()
        t = r.choice(["int", "int", "float", "bool", "str", "str", "list", "list", "tuple", "dict"])
        e = getattr(self, t + "_")(r.randint(1, 3))
        name = "%s%d" % (t[0], self.n)
        self.n += 1
        self.lines.append("%s = %s" % (name, e))
        if t == "dict":
            self.lines.append("print(%s, sorted(%s.items()), len(%s), %r in %s, %s.get('a', -1))" % (name, name, name, "k", name, name))
        elif t == "float":
            self.lines.append("print(%s, repr(%s))" % (name, name))
        else:
            self.lines.append("print(%s)" % name)
        if t != "tuple" and t != "dict":
            self.vars[t].append(name)


def program(r, n):
    g = Gen(r)
    for _ in range(n):
        g.statement()
    return g.lines


def main():
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    nprog = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    r = random.Random(seed)
    bad = 0
    for p in range(nprog):
        lines = program(r, 12)
        module = "\n".join(lines) + "\n"
        inside = "def main():\n" + "".join("    " + l + "\n" for l in lines) + "\n\nmain()\n"
        want = run([sys.executable], module)
        for what, cmd, src in (("eager", [mist], module), ("graph", [mist, "--mode=graph"], inside),
                               ("graph, module code", [mist, "--mode=graph"], module)):
            got = run(cmd, src)
            if got != want:
                bad += 1
                if bad <= 3:
                    wl, gl = want.splitlines(), got.splitlines()
                    i = next((k for k in range(min(len(wl), len(gl))) if wl[k] != gl[k]), min(len(wl), len(gl)))
                    print("program %d (%s mode) differs at output line %d:\n%s\n--- python:\n%s\n--- mist:\n%s\n" %
                          (p, what, i + 1, module, "\n".join(wl[i:i + 3]), "\n".join(gl[i:i + 3])))
    print("%d programs, in eager and graph mode: %d runs differ from CPython" % (nprog, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
