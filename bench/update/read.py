# Twin of read.ms (CPython; NumPy for the tensor): indexing, iteration
# and printing of lists, tuples, dicts and a tensor.
import numpy as np

import _timing


def index_list(xs):
    s = 0
    i = 0
    n = len(xs)
    while i < n:
        s += xs[i]
        i += 1
    return s


def iterate_list(xs):
    s = 0
    for x in xs:
        s += x
    return s


def lookup_dict(d, keys):
    s = 0
    for k in keys:
        s += d[k]
    return s


def index_tensor(t):
    s = 0.0
    i = 0
    n = len(t)
    while i < n:
        s += t[i].item()
        i += 1
    return s


def index_tuple(t, n):
    s = 0
    i = 0
    while i < n:
        s += t[i % 8]
        i += 1
    return s


n = _timing.size(1000000)
reps = _timing.repeats()
xs = list(range(n))
keys = [str(i) for i in range(n // 10)]
d = {}
for k in keys:
    d[k] = len(k)
t = np.arange(n // 10, dtype=np.float32) * np.float32(0.5)
tup = (1, 2, 3, 4, 5, 6, 7, 8)
small = xs[0:n // 10]

ms, check = _timing.best_ms(lambda: index_list(xs), reps)
_timing.report("index_list", ms, check)
ms, check = _timing.best_ms(lambda: iterate_list(xs), reps)
_timing.report("iterate_list", ms, check)
ms, check = _timing.best_ms(lambda: index_tuple(tup, n), reps)
_timing.report("index_tuple", ms, check)
ms, check = _timing.best_ms(lambda: lookup_dict(d, keys), reps)
_timing.report("lookup_dict", ms, check)
ms, check = _timing.best_ms(lambda: index_tensor(t), reps)
_timing.report("index_tensor", ms, check)
ms, check = _timing.best_ms(lambda: len(str(small)) + len(str(d)), reps)
_timing.report("print", ms, check)
