#!/usr/bin/env python3
"""print_vs_numpy.py: Mist prints tensors as NumPy lays out arrays.

Random tensors (dtypes f32, f64, i32, i64, bool; 0 to 4 dimensions,
empty and summarised ones; values from many ranges, with nan, inf and
-0.0) and random print options are printed by Mist and compared with
NumPy's layout of the same values, character for character.  NumPy's
repr is array(..., dtype=float32); Mist keeps its own prefix and dtype,
tensor(..., f32), so the expected text is NumPy's array2string with
Mist's prefix, placed as NumPy's array_repr places the dtype: on the
last line if it fits within the line width, else on a line of its own.

    print_vs_numpy.py MIST [SEED [CASES]]

Exit status 0 when all agree, 1 on a difference (the first few are
shown), 77 (skipped) when NumPy is not installed.
"""
import random
import sys

import _mistrun

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
PREFIX = "tensor("


def expected(a, name, opts):
    """NumPy's _array_repr_implementation with Mist's prefix and dtype."""
    width = opts["linewidth"]
    if a.size > 0 or a.shape == (0,):
        lst = np.array2string(a, max_line_width=width, precision=opts["precision"],
                              suppress_small=opts["suppress"], separator=", ",
                              prefix=PREFIX, suffix=",", threshold=opts["threshold"],
                              edgeitems=opts["edgeitems"])
    else:
        lst = "[], shape=%r" % (a.shape,)
    arr = PREFIX + lst + ","
    dtype = name + ")"
    last = len(arr) - (arr.rfind("\n") + 1)
    spacer = "\n" + " " * len(PREFIX) if last + len(dtype) + 1 > width else " "
    return arr + spacer + dtype


def values(rng, kind, n):
    if kind == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if kind in ("i32", "i64"):
        big = 2**31 - 1 if kind == "i32" else 2**63 - 1
        r = rng.choice([9, 100, 100000, big])
        return [rng.randint(-r if rng.random() < 0.7 else 0, r) for _ in range(n)]
    style = rng.choice(["unit", "normal", "wide", "tiny", "huge", "whole", "mixed", "halves"])
    out = []
    for _ in range(n):
        if style == "unit":
            x = rng.random()
        elif style == "normal":
            x = rng.gauss(0, 1)
        elif style == "wide":
            x = rng.gauss(0, 1) * 10 ** rng.randint(-6, 9)
        elif style == "tiny":
            x = rng.gauss(0, 1) * 1e-7
        elif style == "huge":
            x = rng.gauss(0, 1) * 10 ** rng.randint(8, 120)
        elif style == "whole":
            x = float(rng.randint(-1000, 1000))
        elif style == "halves":
            x = rng.randint(-20, 20) / 4
        else:
            x = rng.choice([0.0, -0.0, 1.0, 0.1, 1 / 3, 2.5, 1e-5, 123456.789, 1e16])
        r = rng.random()
        if r < 0.03:
            x = float("nan")
        elif r < 0.05:
            x = float("inf") * rng.choice([1, -1])
        out.append(x)
    return out


def literal(x):
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, int):
        return str(x)
    if x != x:
        return 'float("nan")'
    if x in (float("inf"), float("-inf")):
        return 'float("%s")' % x
    return repr(x)


def shape_of(rng):
    r = rng.random()
    if r < 0.08:
        return ()
    if r < 0.14:
        return tuple(rng.choice([0, 2, 3]) for _ in range(rng.randint(1, 3)))
    if r < 0.24:
        return rng.choice([(1200,), (40, 30), (3, 400), (11, 10, 12), (2, 3, 200)])
    return tuple(rng.randint(1, 7) for _ in range(rng.randint(1, 4)))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rng = random.Random(seed)
    program, want = [], []
    for _ in range(cases):
        name = rng.choice(list(DTYPES))
        shape = shape_of(rng)
        n = 1
        for d in shape:
            n *= d
        vals = values(rng, name, n)
        opts = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 75, "suppress": False}
        if rng.random() < 0.4:
            opts["precision"] = rng.randint(0, 12)
            opts["threshold"] = rng.choice([5, 20, 100, 1000, 5000])
            opts["edgeitems"] = rng.randint(1, 4)
            opts["linewidth"] = rng.randint(10, 140)
            opts["suppress"] = rng.random() < 0.3
        a = np.array(vals, dtype=DTYPES[name]).reshape(shape)
        want.append(expected(a, name, opts))
        # the values as the dtype holds them, written exactly
        held = [v.item() for v in a.reshape(-1)]
        data = "[" + ", ".join(literal(v) for v in held) + "]"
        program.append("set_printoptions(precision=%d, threshold=%d, edgeitems=%d, linewidth=%d, suppress=%s)"
                       % (opts["precision"], opts["threshold"], opts["edgeitems"], opts["linewidth"],
                          opts["suppress"]))
        program.append('print(tensor(%s, dtype="%s").reshape(%r))' % (data, name, shape))
        program.append('print("----")')
    labels = ["tensor %d" % i for i in range(len(want))]
    return _mistrun.compare(mist, program, [w + "\n" for w in want], labels, "tensors print as NumPy does")


if __name__ == "__main__":
    sys.exit(main())
