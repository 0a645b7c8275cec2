#!/usr/bin/env python3
"""builtin_value_errors.py: a builtin with a derivative rule, passed as a
value to grad, value_and_grad, jvp, vjp, jacobian and hessian or called
in a function they differentiate, with arguments it does not take, stops
with the message of the same wrong call made directly (`exp(0.5, 0.25)`:
"exp() takes exactly one argument (2 given)"), in eager and in graph mode,
and no internal name (a rule J_exp, F_max, a helper of stdlib/ad_rules.ms)
appears in it; the same for x.exp(...) as a method.  (Mist against Mist: the
direct call is the reference.)

    builtin_value_errors.py MIST

Exit status 0 when all agree, 1 on a difference (each shown).
"""
import os
import subprocess
import sys
import tempfile

UNARY = "exp log sqrt sin cos tanh sigmoid relu tan asin acos atan log2 log10 lgamma erf floor ceil abs".split()
BINARY = "pow maximum minimum atan2".split()
INTERNAL = ["J_", "F_", "_minmax", "_apply", "<max/min"]


def cases():
    """(direct call, the same mistake under a derivative)"""
    for u in UNARY:
        d = f"{u}(0.5, 0.25)"
        for t in [f"grad({u}, argnums=1)(0.5, 0.25)", f"value_and_grad({u}, argnums=(0, 1))(0.5, 0.25)",
                  f"jvp({u}, (0.5, 0.25), (1.0, 1.0))", f"vjp({u}, 0.5, 0.25)", f"jacobian({u}, argnums=1)(0.5, 0.25)",
                  f"hessian({u}, argnums=(0, 1))(0.5, 0.25)", f"grad(lambda x: {u}(x, 0.25))(0.5)",
                  f"jvp(lambda x: {u}(x, 0.25), (0.5,), (1.0,))", f"grad(grad(lambda x: {u}(x, 0.25)))(0.5)"]:
            yield d, t
        for t in [f"grad(lambda x: {u}() + x)(0.5)", f"jvp(lambda x: {u}() + x, (0.5,), (1.0,))"]:
            yield f"{u}()", t
        # as a method
        for t in [f"grad(lambda x: x.{u}(0.25))(0.5)", f"jvp(lambda x: x.{u}(0.25), (0.5,), (1.0,))",
                  f"grad(grad(lambda x: x.{u}(0.25)))(0.5)", f"jvp(grad(lambda x: x.{u}(0.25)), (0.5,), (1.0,))"]:
            yield f"(0.5).{u}(0.25)", t
        yield f"(0.5).{u}(foo=0.25)", f"grad(lambda x: x.{u}(foo=0.25))(0.5)"
    for b in BINARY:
        for t in [f"grad(lambda x: {b}(x))(0.5)", f"jvp(lambda x: {b}(x), (0.5,), (1.0,))", f"vjp({b}, 0.5)",
                  f"jvp({b}, (0.5,), (1.0,))"]:
            yield f"{b}(0.5)", t
        for t in [f"grad({b}, argnums=2)(0.5, 0.25, 0.125)", f"grad(lambda x: {b}(x, 0.25, 0.125))(0.5)",
                  f"jvp({b}, (0.5, 0.25, 0.125), (1.0, 1.0, 1.0))", f"vjp({b}, 0.5, 0.25, 0.125)",
                  f"jacobian({b}, argnums=2)(0.5, 0.25, 0.125)", f"jvp(lambda x: {b}(x, 0.25, 0.125), (0.5,), (1.0,))"]:
            yield f"{b}(0.5, 0.25, 0.125)", t
    for m in ["max", "min"]:
        yield f"{m}(0.5, None)", f"grad(lambda x: {m}(x, None))(0.5)"
        yield f"{m}(0.5, None)", f"jvp(lambda x: {m}(x, None), (0.5,), (1.0,))"
        yield f"{m}(0.5, None)", f"grad({m})(0.5, None)"
        yield f"{m}(0.5, None, 1.0, 2.0)", f"grad(lambda x: {m}(x, None, 1.0, 2.0))(0.5)"
        yield f"{m}(0.5)", f"grad({m})(0.5)"
        yield f"{m}(0.5)", f"grad(lambda x: {m}(x))(0.5)"
        yield f"{m}()", f"grad(lambda x: {m}() + x)(0.5)"
        yield f"{m}([])", f"grad(lambda x: {m}([]) + x)(0.5)"
        yield (f"{m}([0.5, 1.0], default=2.0, key=None, foo=1)",
               f"grad(lambda x: {m}([x, 1.0], default=2.0, key=None, foo=1))(0.5)")
        yield f"{m}(0.5, 1.0, default=2.0)", f"grad(lambda x: {m}(x, 1.0, default=2.0))(0.5)"
        yield f"{m}(0.5, 1.0, key=3.0)", f"grad(lambda x: {m}(x, 1.0, key=3.0))(0.5)"
        yield f"{m}(0.5, 1.0, axis=3)", f"grad(lambda x: {m}(x, 1.0, axis=3))(0.5)"
        yield f"{m}(0.5, 1.0, axis=3)", f"jvp(lambda x: {m}(x, 1.0, axis=3), (0.5,), (1.0,))"


def message(mist, mode, src, path):
    """the text after 'error: ' of the first line of stderr ('' for none)"""
    with open(path, "w") as f:
        f.write(f"print({src})\n")
    r = subprocess.run([mist] + mode + [path], capture_output=True, text=True, timeout=120)
    first = r.stderr.split("\n")[0]
    return first.split("error: ", 1)[-1] if first else ""


def main():
    mist = sys.argv[1]
    bad = n = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.ms")
        for mode in ([], ["--mode=graph"]):
            for direct, under in cases():
                n += 1
                want, got = message(mist, mode, direct, path), message(mist, mode, under, path)
                if not want or got != want or any(s in got for s in INTERNAL):
                    bad += 1
                    print(f"DIFF {' '.join(mode)} {under}\n  direct: {want}\n  under:  {got}")
    print(f"{n} cases, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
