#!/usr/bin/env python3
"""percent_vs_python.py: `str % args` formats as CPython's does.

Random printf-style formats (flags `- + space # 0`, widths and
precisions given or taken by `*`, a length modifier, every conversion
type) applied to random arguments of the types each conversion takes
(ints, floats with inf, nan, -0.0, subnormals and huge ones, strs with
quotes and non-ASCII text, bools, None, containers), as a tuple, a
single value or a dict for `%(key)s`; then a fixed list of cases that
are errors in Python, each of which must stop Mist with Python's
message.  Each case runs in eager mode and in graph mode (inside a
compiled function), and its repr must be CPython's, character for
character.

    percent_vs_python.py MIST [SEED [CASES]]

Exit status 0 when all agree, 1 on a difference (the first few shown).
"""
import random
import sys

from _source import run_source

STRS = ["", "a", "abc", "it's", 'say "hi"', "back\\slash", "é", "naïve café", "☃x", "😀", "  pad  "]
FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 2.5, 3.14159, 1e-7, 1e16, 123456789.125, -1e300, 5e-324, 1e-310,
          float("inf"), float("-inf"), float("nan"), 0.5, 99.995, 1.005, 2.675]
INTS = [0, 1, -1, 7, 42, -255, 255, 1000, 65, 233, 9731, 2**31, -(2**40), 2**62, -(2**63), 2**63 - 1]


def mist_literal(v):
    """v as Mist source."""
    if isinstance(v, float):
        if v != v:
            return "float('nan')"
        if v in (float("inf"), float("-inf")):
            return "float('%s')" % v
        return repr(v)
    if isinstance(v, int) and not isinstance(v, bool) and v == -(2**63):
        return "(-9223372036854775807 - 1)"
    if isinstance(v, tuple):
        return "(" + "".join(mist_literal(x) + ", " for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(mist_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join("%r: %s" % (k, mist_literal(x)) for k, x in v.items()) + "}"
    return repr(v)


def random_arg(r, t):
    if t in "sra":
        kind = r.randrange(7)
        if kind == 0:
            return r.choice(INTS)
        if kind == 1:
            return r.choice(FLOATS)
        if kind == 2:
            return r.choice([True, False, None])
        if kind == 3:
            return [r.choice(INTS), r.choice(STRS)]
        if kind == 4:
            return {"k": r.choice(FLOATS)}
        return r.choice(STRS)
    if t in "diu":
        kind = r.randrange(5)
        if kind == 0:
            return r.choice([True, False])
        if kind == 1:
            # (floats past 2**63 make ints Mist's 64 bits cannot hold)
            return r.choice([x for x in FLOATS if x == x and abs(x) < 2.0**63])
        return r.choice(INTS)
    if t in "oxX":
        return r.choice(INTS + [True])
    if t in "eEfFgG":
        kind = r.randrange(4)
        if kind == 0:
            return r.choice(INTS)
        return r.choice(FLOATS)
    # c
    return r.choice([65, 97, 233, 9731, 128512, 0x41, "x", "é", "☃"])


def random_conversion(r, args, keyed):
    t = r.choice("sradiuoxXeEfFgGc")
    spec = "%"
    if keyed is not None:
        key = "k%d" % len(keyed)
        spec += "(%s)" % key
    spec += "".join(r.choice("-+ #0") for _ in range(r.choice([0, 0, 1, 2, 3])))
    star = []
    w = r.randrange(5)
    if w == 1:
        spec += str(r.randrange(13))
    elif w == 2 and keyed is None:
        spec += "*"
        star.append(r.randrange(-8, 13))
    p = r.randrange(5)
    if p == 1:
        spec += "."
    elif p == 2:
        spec += "." + str(r.randrange(12))
    elif p == 3 and keyed is None:
        spec += ".*"
        star.append(r.randrange(0, 12))
    if r.randrange(8) == 0:
        spec += "l"
    spec += t
    value = random_arg(r, t)
    if keyed is not None:
        keyed[key] = value
    else:
        args.extend(star)
        args.append(value)
    return spec


def random_case(r):
    keyed = {} if r.randrange(6) == 0 else None
    args = []
    parts = []
    for _ in range(r.choice([1, 1, 2, 3])):
        parts.append(r.choice(["", "", "x", " = ", "|", "%%", "é:"]))
        parts.append(random_conversion(r, args, keyed))
    parts.append(r.choice(["", "!", "%%"]))
    fmt = "".join(parts)
    if keyed is not None:
        return fmt, keyed
    if len(args) == 1 and not isinstance(args[0], (tuple, dict)) and r.randrange(2):
        return fmt, args[0]
    return fmt, tuple(args)


ERRORS = [
    ("%d %d", (1,)), ("%d", (1, 2)), ("abc", 5), ("%q", 1), ("%", 1), ("x%", ()), ("%x", 1.5),
    ("%d", "a"), ("%f", "a"), ("%c", "ab"), ("%c", 1114112), ("%c", -1), ("%(a)s", 1),
    ("%(a)s", {"b": 1}), ("%d", float("nan")), ("%d", float("inf")), ("%*s", ("a", "b")),
    ("%5%", ()), ("%5%", (1,)), ("%(a)%", {"a": 1}), ("%\x01", 1), ("%é", 1), ("%(a", {"a": 1}),
    ("%s", ()), ("%s", (1, 2)), ("%.*f", ("x", 1.0)), ("%o", 2.0), ("%e", None),
]


def python_says(fmt, args):
    try:
        return repr(fmt % args)
    except Exception as e:  # the message only: Mist's first error line has no kind
        return ("KeyError: " if isinstance(e, KeyError) else "") + str(e)


def program(cases):
    lines = ["def fmt(f, a):", "    return f % a", ""]
    for f, a in cases:
        lines.append("print(repr(fmt(%s, %s)))" % (mist_literal(f), mist_literal(a)))
    return "\n".join(lines) + "\n"


def main():
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    r = random.Random(seed)
    cases = []
    while len(cases) < n:
        f, a = random_case(r)
        try:
            f % a
        except Exception:
            continue   # (errors come from the fixed list)
        cases.append((f, a))
    want = [python_says(f, a) for f, a in cases]
    bad = 0
    for mode in ("eager", "graph"):
        run = run_source([mist, "--mode=" + mode], program(cases))
        got = run.stdout.split("\n")
        if run.returncode != 0:
            print("%s mode: mist failed: %s" % (mode, run.stderr[:2000]))
            return 1
        for i, w in enumerate(want):
            if got[i] != w:
                bad += 1
                if bad <= 8:
                    print("%s mode: %r %% %r\n  python: %s\n  mist:   %s" % (mode, cases[i][0], cases[i][1], w, got[i]))
        for f, a in ERRORS:
            w = python_says(f, a)
            run = run_source([mist, "--mode=" + mode], program([(f, a)]))
            first = run.stderr.split("\n")[0]
            g = first.split("error: ", 1)[-1] if run.returncode == 1 else "exit %d: %s" % (run.returncode, run.stdout)
            if g != w:
                bad += 1
                if bad <= 8:
                    print("%s mode: %r %% %r\n  python: %s\n  mist:   %s" % (mode, f, a, w, g))
    print("%d random cases and %d errors, in eager and graph mode: %d differ" % (n, len(ERRORS), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
