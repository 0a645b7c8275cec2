"""Helpers shared by the PyTorch twins of the gradient benchmarks."""
import os
import sys

import torch


def setup():
    """Match Mist's thread pool: MIST_NUM_THREADS when set, else one
    thread per usable core (devices/pool.c).  One intra-op pool and no
    extra inter-op threads, so the two runtimes use the same cores."""
    n = int(os.environ.get("MIST_NUM_THREADS", "0") or 0)
    if n <= 0:
        n = len(os.sched_getaffinity(0))
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass


def repeats():
    return int(sys.argv[1]) if len(sys.argv) > 1 else 5


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _best_ms import best_ms  # noqa: E402  (the shared timing loop)


def report_f(ms, check):
    print(f"f_ms {ms:.4f} check {check:.6e}", flush=True)


def report_grad(ms, check):
    print(f"grad_ms {ms:.4f} check {check:.6e}", flush=True)


def time_both(run_f, run_grad):
    """The usual run: threads set, then the function's and the
    gradient's best times and checks, REPEAT runs each."""
    setup()
    n = repeats()
    ms, check = best_ms(run_f, n)
    report_f(ms, check)
    ms, check = best_ms(run_grad, n)
    report_grad(ms, check)


def grad_sum(f, params, *rest):
    """The sum of every entry of the gradient of f(*params, *rest) with
    respect to params (copies of them, so each run builds its own
    graph): a gradient run's check value."""
    leaves = [t.clone().requires_grad_(True) for t in params]
    return sum(g.sum().item() for g in torch.autograd.grad(f(*leaves, *rest), leaves))


def status_mb(key):
    """A size from /proc/self/status (VmRSS, VmHWM), in MB."""
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return float(line.split()[1]) / 1024.0
    return 0.0


def report_rss(run):
    """run() once and print the resident size before it and the
    process's peak after it (the line bench/grad_run.sh reads)."""
    base = status_mb("VmRSS")
    run()
    print(f"rss_mb base {base:.1f} peak {status_mb('VmHWM'):.1f}", flush=True)
