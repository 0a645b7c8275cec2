"""Helpers shared by the CPython and NumPy twins of the update
benchmarks: the same as _timing.ms."""
import os
import sys


def repeats():
    return int(sys.argv[1]) if len(sys.argv) > 1 else 5


def size(default):
    return int(sys.argv[2]) if len(sys.argv) > 2 else default


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _best_ms import best_ms  # noqa: E402  (the shared timing loop)


def report(case, ms, check):
    print(f"{case} ms {ms:.4f} check {check}", flush=True)
