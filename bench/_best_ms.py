"""The timing loop every Python twin of a benchmark shares (bench/grad
and bench/update), the same as their _timing.ms: warm up, then the best
of n runs."""
import time

BUDGET_S = 10.0
WARMUP_S = 0.3


def best_ms(run, n):
    """Run to warm up, again until WARMUP_S seconds have passed, then n
    times (but stop after 3 once the timed runs have taken BUDGET_S
    seconds, for the slow cases): the fastest in ms, and the last
    result."""
    t0 = time.perf_counter()
    result = run()
    while time.perf_counter() - t0 < WARMUP_S:
        result = run()
    best = -1.0
    spent = 0.0
    for i in range(n):
        t0 = time.perf_counter()
        result = run()
        t = time.perf_counter() - t0
        spent += t
        if best < 0.0 or t * 1000.0 < best:
            best = t * 1000.0
        if i >= 2 and spent > BUDGET_S:
            break
    return best, result
