"""Twin of loop.ms: the same 10^5-iteration loop on float64 torch scalars;
the function under no_grad, the derivative with autograd.grad."""
import torch

import _timing

STEPS = 100000


def f(a):
    x = torch.tensor(1.0, dtype=torch.float64)
    acc = torch.tensor(0.0, dtype=torch.float64)
    i = 0
    while i < STEPS:
        x = x * a + 0.5
        acc += x
        i += 1
    return acc


def run_f():
    with torch.no_grad():
        return f(torch.tensor(0.99999, dtype=torch.float64)).item()


def run_grad():
    a = torch.tensor(0.99999, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(f(a), a)
    return g.item()


_timing.setup()
n = _timing.repeats()
ms, check = _timing.best_ms(run_f, n)
_timing.report_f(ms, check)
ms, check = _timing.best_ms(run_grad, n)
_timing.report_grad(ms, check)
