#!/usr/bin/env python3
"""index_vs_numpy.py: Mist indexes tensors as NumPy indexes arrays.

Random subscripts of random tensors (ints, slices, None, `...`, int
lists and tensors of any shape, bool masks, several of them in one
subscript, adjacent or not) are read (t[i]) and written (t[i] = v) by
Mist and by NumPy, and the results compared (their shape and values,
through tolist()).  Subscripts NumPy refuses are left out, and so are those it accepts with a
DeprecationWarning (an out-of-bounds index in an empty result, which
NumPy will refuse and Mist refuses already).

    index_vs_numpy.py MIST [SEED [CASES]]

Exit status 0 when all agree, 1 on a difference, 77 (skipped) when NumPy
is not installed.
"""
import random
import sys
import warnings

import _mistrun

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)


def rand_index(rng, shape):
    """A subscript as (numpy object, Mist source text)."""
    items, texts = [], []
    nd = len(shape)
    axis = 0
    used_ellipsis = False
    count = rng.randint(1, min(4, nd + 1))
    for _ in range(count):
        r = rng.random()
        size = shape[axis] if axis < nd else 1
        if r < 0.2 and axis < nd:
            i = rng.randint(-size, size - 1)
            items.append(i)
            texts.append(str(i))
            axis += 1
        elif r < 0.4 and axis < nd:
            a = rng.choice([None, rng.randint(-size, size)])
            b = rng.choice([None, rng.randint(-size, size)])
            c = rng.choice([None, 1, 2, -1, -2])
            items.append(slice(a, b, c))
            texts.append("%s:%s:%s" % ("" if a is None else a, "" if b is None else b, "" if c is None else c))
            axis += 1
        elif r < 0.5:
            items.append(None)
            texts.append("None")
        elif r < 0.6 and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            texts.append("...")
        elif r < 0.9 and axis < nd:
            ishape = rng.choice([(2,), (3,), (1,), (2, 2), (2, 1), (1, 3)])
            vals = np.array([rng.randint(-size, size - 1) for _ in range(int(np.prod(ishape)))]).reshape(ishape)
            items.append(vals)
            if rng.random() < 0.5 and len(ishape) == 1:
                texts.append(repr(vals.tolist()))
            else:
                texts.append("tensor(%r).reshape(%r)" % (vals.reshape(-1).tolist(), ishape))
            axis += 1
        elif axis < nd:
            k = rng.randint(1, min(2, nd - axis))
            mshape = shape[axis:axis + k]
            m = np.array([rng.random() < 0.5 for _ in range(int(np.prod(mshape)))]).reshape(mshape)
            items.append(m)
            texts.append("tensor(%r).reshape(%r)" % (m.reshape(-1).tolist(), tuple(mshape)))
            axis += k
    return tuple(items), "[" + ", ".join(texts) + "]"


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    rng = random.Random(seed)
    warnings.simplefilter("error")
    program, want = [], []
    while len(want) < cases:
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        x = np.arange(int(np.prod(shape))).reshape(shape)
        idx, text = rand_index(rng, shape)
        try:
            got = x[idx]
            y = x.copy()
            y[idx] = -1
        except (IndexError, ValueError, DeprecationWarning):
            continue
        want.append("%r %r\n%r\n" % (list(got.shape), got.tolist(), y.tolist()))
        program.append("x = arange(%d).reshape(%r)" % (x.size, shape))
        program.append("g = x%s" % text)
        program.append("y = x")
        program.append("y%s = -1" % text)
        program.append("print(list(g.shape), g.tolist())")
        program.append("print(y.tolist())")
        program.append('print("----")')
    labels = [l for l in program if l.startswith("g = x")]
    return _mistrun.compare(mist, program, want, labels, "subscripts agree with NumPy")


if __name__ == "__main__":
    sys.exit(main())
