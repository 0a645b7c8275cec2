"""Twin of rows.ms: the same loop over the rows of an N x 16 table in
float32 torch tensors; the function under no_grad, the derivative with
autograd.grad with respect to w, then to w and the table."""
import sys

import torch

import _timing

D = 16


def det(shape, n, phase, scale):
    k = (torch.arange(n) % 97) * 0.37 + phase
    return torch.sin(k).reshape(shape).float() * scale


def f(w, rows):
    h = torch.tensor(0.0)
    for t in range(len(rows)):
        h = torch.tanh((rows[t] * w).sum() + 0.5 * h)
    return h


N = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
rows = det((N, D), N * D, 0.1, 1.0)
w = det((D,), D, 0.2, 0.5)


def run_f():
    with torch.no_grad():
        return f(w, rows).item()


def run_grad():
    wg = w.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(wg, rows), wg)
    return g.sum().item()


def run_grad_rows():
    wg = w.clone().requires_grad_(True)
    rg = rows.clone().requires_grad_(True)
    g = torch.autograd.grad(f(wg, rg), (wg, rg))
    return g[1].sum().item()


_timing.setup()
n = _timing.repeats()
ms, check = _timing.best_ms(run_f, n)
_timing.report_f(ms, check)
ms, check = _timing.best_ms(run_grad, n)
_timing.report_grad(ms, check)
ms, check = _timing.best_ms(run_grad_rows, n)
print(f"grad_rows_ms {ms:.4f} check {check:.6e}")
