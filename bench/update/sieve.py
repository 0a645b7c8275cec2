# Twin of sieve.ms (CPython): the sieve of Eratosthenes for n = 10^6, a
# list updated one element at a time, then iterated.
import _timing


def sieve(n):
    is_p = [True] * (n + 1)
    is_p[0] = False
    is_p[1] = False
    i = 2
    while i * i <= n:
        if is_p[i]:
            j = i * i
            while j <= n:
                is_p[j] = False
                j += i
        i += 1
    count = 0
    for p in is_p:
        if p:
            count += 1
    return count


n = _timing.size(1000000)
ms, check = _timing.best_ms(lambda: sieve(n), _timing.repeats())
_timing.report("sieve", ms, check)
