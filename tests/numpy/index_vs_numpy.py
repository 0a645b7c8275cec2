#!/usr/bin/env python3
"""index_vs_numpy.py: Mist indexes tensors as NumPy indexes arrays.

Random subscripts of random tensors (_subscripts.py: ints, slices, None,
`...`, int lists and tensors of any shape, bool masks, several of them
in one subscript, adjacent or not) are read (t[i]) and written (t[i] = v)
by Mist and by NumPy, and the results compared (their shape and values,
through tolist()).  Subscripts NumPy refuses are left out, and so are
those it accepts with a DeprecationWarning or that Mist refuses on
purpose (an out-of-bounds index or a mask of the wrong shape in an empty
selection, docs/tensors.md, Indexing); ops_vs_numpy.py checks that both
refuse them.

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

import _subscripts   # noqa: E402 (it needs numpy)


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
        idx, text = _subscripts.rand_index(rng, shape)
        if _subscripts.mist_refuses(idx, shape):
            continue
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
