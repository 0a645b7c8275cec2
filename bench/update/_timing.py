"""Helpers shared by the CPython and NumPy twins of the update
benchmarks: the same as _timing.ms."""
import sys
import time


def repeats():
    return int(sys.argv[1]) if len(sys.argv) > 1 else 5


def size(default):
    return int(sys.argv[2]) if len(sys.argv) > 2 else default


BUDGET_S = 10.0
WARMUP_S = 0.3


def best_ms(run, n):
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


def report(case, ms, check):
    print(f"{case} ms {ms:.4f} check {check}", flush=True)
