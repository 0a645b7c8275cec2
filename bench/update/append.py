# Twin of append.ms (CPython): growing a list to 10^6 items with
# xs.append(v).
import _timing


def build(n):
    xs = []
    i = 0
    while i < n:
        xs.append(i * 3)
        i += 1
    return xs


def run(n):
    xs = build(n)
    return len(xs) + xs[n - 1] + xs[n // 2]


n = _timing.size(1000000)
ms, check = _timing.best_ms(lambda: run(n), _timing.repeats())
_timing.report("append", ms, check)
