# Twin of wordcount.ms (CPython): counting 10^5 words into a dict by
# `d[w] = d.get(w, 0) + 1`.
import _timing


def count(n):
    d = {}
    i = 0
    while i < n:
        w = "w" + str((i * 7919) % 20011)
        d[w] = d.get(w, 0) + 1
        i += 1
    return d


def run(n):
    d = count(n)
    return len(d) * 1000 + d["w0"] * 10 + d["w17"]


n = _timing.size(100000)
ms, check = _timing.best_ms(lambda: run(n), _timing.repeats())
_timing.report("wordcount", ms, check)
