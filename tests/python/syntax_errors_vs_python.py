#!/usr/bin/env python3
"""syntax_errors_vs_python.py: random syntax mistakes are reported as CPython 3.11 reports them.

Each program is a few valid lines with one mistake in a random place (at
top level, in a def, in an if block): `=` written for `==` in an if,
elif or while condition, inside parentheses, brackets or braces, or in a
call's argument; an assignment to something that is not a target (a
call, a literal, an operator, an attribute, a subscript, a comparison,
a display), alone, in a tuple of targets or in a chain of them, with
values of every precedence after the `=`; two expressions side by side
in brackets (a missing comma), a dict key without its value, a token
missing inside brackets; Python 2's print statement;
a stray token after an if, while or for header, or a header with no
colon; an unterminated triple-quoted string.  Mist's error (the message,
its line and column, and how many carets) must be CPython's, which
`compile` gives without running anything.

    syntax_errors_vs_python.py MIST [SEED [PROGRAMS]]

Exit status 0 when all agree, 1 on a difference (the first few shown),
77 (skipped) under a Python other than 3.11, whose messages differ.
"""
import random
import re
import sys
import warnings

from _source import run_source

# Left of a mistaken `=`: names, valid targets, and expressions of each
# precedence that are not targets.
LEFT = ["x", "y", "f()", "f(x)", "a.b", "a[0]", "1", "'s'", "x + 1", "-x", "(x)", "(f())", "[x]",
        "True", "None", "(x, y)", "x < y", "not x", "x if y else z", "{'k': x}", "[v for v in y]",
        "x * (y + 1)", "f(x)[1]", "2.5"]
# Right of it: what Python's parser reads first decides its message.
RIGHT = ["1", "y", "x + 1", "(1)", "not y", "lambda: 1", "x < y", "-1", "[1, 2]", "'s'",
         "1 if y else 2", "f(x)", "x == 1", "(1, 2)", "a.b", "x and y"]
TARGETS = ["x", "y", "a[0]", "p, q", "[p, q]"]
# Expressions side by side where a comma was forgotten.
ATOMS = ["1", "x", "'ab'", "f(x)", "(1)", "[2]", "{3: 4}", "None", "2.5", "x.y", "y[0]", "lambda: 1"]


def mistake(r):
    """One line with a syntax error, and whether it opens a block."""
    left, right = r.choice(LEFT), r.choice(RIGHT)
    eq = "%s = %s" % (left, right) + (" = 2" if r.randrange(4) == 0 else "")
    k = r.randrange(13)
    if k == 0:
        return "%s %s:" % (r.choice(["if", "while"]), eq), True
    if k == 1:
        return "x = %s" % r.choice(["(%s)", "[%s]", "{%s}", "[0, %s]", "(0, %s)", "f((%s))"]) % eq, False
    if k == 2:
        return "print(%s)" % eq, False
    if k in (3, 4, 5):     # an assignment statement with a bad target somewhere
        n = r.randint(1, 3)
        targets = [r.choice(TARGETS) for _ in range(n)]
        i = r.randrange(n)
        targets[i] = r.choice([left, "p, " + left, left + ", p"])
        return "%s = %s" % (" = ".join(targets), right), False
    if k == 6:
        return "print %s" % r.choice(["'hello'", "x", "x, y", "'%d' % x", "x + 1"]), False
    if k == 7:
        return r.choice(["for i in range(3) x:", "if x y:", "while x y:", "for i in y z:", "if x", "while x",
                         "for i in y", "if x == 1 1:"]), True
    if k == 8:
        return "print(f(%s))" % eq, False
    if k == 9:
        return "x = %s" % r.choice(["[%s, 1]", "(%s, 1)"]) % eq, False
    if k == 10:
        return "if y:\n    pass\nelif %s:" % eq, True
    if k == 11:   # a missing comma, or another token missing inside brackets
        a, b = r.choice(ATOMS), r.choice(ATOMS)
        return "x = " + r.choice(["[%s %s]", "(%s %s)", "{%s %s}", "{'k': %s %s}", "f(a=%s %s)", "y[%s %s]",
                                  "y[1:%s %s]", "[0, %s %s]", "(0, %s %s)", "[1 if y else %s %s]", "f(0, %s %s)",
                                  "{1: %s, %s}", "(lambda q %s)(%s)", "[v for v %s in y%.0s]", "y[0:1:2:%s %s]",
                                  "{'k': 1, %s %s}"]) % (a, b), False
    return "doc = \"\"\"never closed", False


def program(r):
    lines = ["x = 1", "y = 2"]
    for _ in range(r.randint(0, 3)):
        lines.append(r.choice(["print(x + y)", "z = [x, y]", "if x < y:\n    y = x", "def g(v):\n    return v * 2"]))
    bad, opens = mistake(r)
    where = r.randrange(3)
    body = bad + ("\n    pass" if opens and not bad.endswith(("if x", "while x", "for i in y")) else "")
    if where == 0:
        lines.append(body)
    elif where == 1:
        lines.append("def h(x):\n" + "\n".join("    " + l for l in body.split("\n")))
    else:
        lines.append("if x:\n" + "\n".join("    " + l for l in body.split("\n")))
    if r.randrange(2):
        lines.append("print(x)")
    if bad.startswith("doc"):
        lines.append("more text")
    return "\n".join(lines) + "\n"


def python_error(src):
    """(line, col, carets, message) of CPython's SyntaxError, or None."""
    try:
        with warnings.catch_warnings():   # "'int' object is not callable; perhaps you missed a comma?"
            warnings.simplefilter("ignore")
            compile(src, "p.ms", "exec")
    except SyntaxError as e:
        col = e.offset or 1
        carets = 1
        if e.end_lineno == e.lineno and e.end_offset and e.end_offset > col:
            carets = e.end_offset - col
        return (e.lineno, col, carets, e.msg)
    return None


def mist_error(mist, src):
    p = run_source([mist], src)
    lines = p.stderr.splitlines()
    m = re.match(r".*?:(\d+):(\d+): error: (.*)$", lines[0]) if lines else None
    if p.returncode != 1 or not m or len(lines) < 3:
        return ("exit %d" % p.returncode, p.stderr)
    return (int(m.group(1)), int(m.group(2)), lines[2].count("^"), m.group(3))


def main():
    if sys.version_info[:2] != (3, 11):
        print("CPython 3.11 is needed (its messages are the reference): skipped")
        return 77
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    nprog = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    r = random.Random(seed)
    bad = n = 0
    for _ in range(nprog):
        src = program(r)
        want = python_error(src)
        if want is None:
            continue
        n += 1
        got = mist_error(mist, src)
        if got != want:
            bad += 1
            if bad <= 5:
                print("---\n%s--- python: %r\n--- mist:   %r" % (src, want, got))
    print("%d programs with a syntax error: %d differ from CPython" % (n, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
