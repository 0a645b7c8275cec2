#!/usr/bin/env python3
"""globals_vs_python.py: functions that read globals bound again between
calls print what CPython prints.

Random module-level programs: functions (use0, use1, ...) call globals
G0, G1, ... that the module code binds, then binds again, between calls,
to builtins (abs, str, float, bool), lambdas and defs that return values
of other types (ints, floats, strs, lists, tuples, dicts, None), and the
functions call each other.  Each program is valid Python and valid Mist
(Mist reads a global bound after a def when the call runs, as Python
does).  It runs in eager mode and in graph mode, where each function
compiles for the globals it read and must compile again, and infer
again, when one is bound again; both must print what python3 prints.

    globals_vs_python.py MIST [SEED [PROGRAMS]]

Exit status 0 when all agree, 1 on a difference (the first few shown).
"""
import random
import sys

from _source import NO_CACHE, output_of as run

CALLABLES = ["abs", "str", "float", "bool", "lambda v: [v]", "lambda v: (v, v)", "lambda v: v * 1.5",
             "lambda v: str(v) + '!'", "lambda v: v if v > 0 else None", "lambda v: {'k': v}",
             "lambda v: -v"]
DEFS = ["return v + 1", "return [v, str(v)]", "return (v,) * 2", "return {'a': v, 'b': 2.5}",
        "return None if v % 2 else v", "return float(v) / 4"]


def program(r):
    nglob = r.randint(1, 3)
    lines = []
    uses = []
    for k in range(r.randint(1, 3)):
        name = "use%d" % k
        g = "G%d" % r.randrange(nglob)
        h = "G%d" % r.randrange(nglob)
        body = r.choice(["(%s(x), %s(x - 1))" % (g, h), "[%s(x)] * 2" % g, "str(%s(x)) + '|'" % g,
                         "%s(x)" % g])
        if uses and r.randrange(2):
            body = "%s(x) if x > 0 else %s" % (r.choice(uses), body)
        lines.append("def %s(x):" % name)
        lines.append("    return %s" % body)
        uses.append(name)
    for i in range(nglob):
        lines.append("G%d = %s" % (i, r.choice(CALLABLES)))
    for _ in range(r.randint(4, 9)):
        k = r.randrange(3)
        g = "G%d" % r.randrange(nglob)
        if k == 0:
            lines.append("%s = %s" % (g, r.choice(CALLABLES)))
        elif k == 1:
            lines.append("def %s(v):" % g)
            lines.append("    %s" % r.choice(DEFS))
        lines.append("print(%s(%d), %s(%d))" % (r.choice(uses), r.randint(-3, 4), r.choice(uses), r.randint(-3, 4)))
    return "\n".join(lines) + "\n"


def main():
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    nprog = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    r = random.Random(seed)
    bad = 0
    for p in range(nprog):
        src = program(r)
        want = run([sys.executable], src)
        for what, cmd in (("eager", [mist]), ("graph", [mist, "--mode=graph"])):
            got = run(cmd, src, NO_CACHE)
            if got != want:
                bad += 1
                if bad <= 3:
                    print("program %d (%s mode):\n%s--- python:\n%s--- mist:\n%s" % (p, what, src, want, got))
    print("%d programs, in eager and graph mode: %d runs differ from CPython" % (nprog, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
