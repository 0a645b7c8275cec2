# Twin of tensor_set.ms (NumPy): setting each element of a 10^5-element
# float32 array in a loop.
import numpy as np

import _timing


def fill(n):
    t = np.zeros(n, dtype=np.float32)
    for i in range(n):
        t[i] = i % 7 + 0.5
    return t


def run(n):
    t = fill(n)
    return t.sum().item() + t[n - 1].item()


n = _timing.size(100000)
ms, check = _timing.best_ms(lambda: run(n), _timing.repeats())
_timing.report("tensor_set", ms, check)
