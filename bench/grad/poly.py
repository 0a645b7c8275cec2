"""Twin of poly.ms: the same polynomial at the same N points, each point a
float64 torch scalar; the function under no_grad, the derivative with
autograd.grad (forward with graph recording, then backward)."""
import torch

import _timing

N = 10000


def f(x):
    return ((((((((0.5 * x - 1.25) * x + 2.0) * x - 0.75) * x + 1.5) * x - 3.0) * x + 0.25) * x - 2.5) * x + 1.0)


def run_f():
    acc = 0.0
    with torch.no_grad():
        for i in range(N):
            acc += f(torch.tensor(i * 1e-4, dtype=torch.float64)).item()
    return acc


def run_grad():
    acc = 0.0
    for i in range(N):
        x = torch.tensor(i * 1e-4, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(f(x), x)
        acc += g.item()
    return acc


_timing.setup()
n = _timing.repeats()
ms, check = _timing.best_ms(run_f, n)
_timing.report_f(ms, check)
ms, check = _timing.best_ms(run_grad, n)
_timing.report_grad(ms, check)
