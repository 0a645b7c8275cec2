"""Twin of mlp2.ms: one training step of a 784-256-256-10 MLP on a batch
of 64 in float32 PyTorch: the loss under no_grad, then autograd and an
SGD update of every parameter."""
import torch

import _timing

B = 64
SIZES = [784, 256, 256, 10]


def det(shape, n, phase, scale):
    k = (torch.arange(n) % 97).to(torch.float32) * 0.37 + phase
    return torch.sin(k).reshape(shape) * scale


params = {}
for i in range(3):
    a, b = SIZES[i], SIZES[i + 1]
    params[f"w{i}"] = det((a, b), a * b, 0.1 * i + 0.1, 0.05)
    params[f"b{i}"] = det((b,), b, 0.1 * i + 0.2, 0.01)
x = det((B, SIZES[0]), B * SIZES[0], 0.5, 1.0)
y = torch.nn.functional.one_hot(torch.arange(B) % 10, 10).to(torch.float32)


def loss(p, x, y):
    h = torch.relu(x @ p["w0"] + p["b0"])
    h = torch.relu(h @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -torch.mean(torch.sum(torch.log_softmax(logits, dim=1) * y, dim=1))


def run_f():
    with torch.no_grad():
        return loss(params, x, y).item()


names = list(params)


def run_step():
    leaves = {k: params[k].clone().requires_grad_(True) for k in names}
    l = loss(leaves, x, y)
    g = torch.autograd.grad(l, [leaves[k] for k in names])
    with torch.no_grad():
        new = {k: leaves[k] - 0.01 * gk for k, gk in zip(names, g)}
    return l, new


_timing.setup()
n = _timing.repeats() * 10
ms, check = _timing.best_ms(run_f, n)
_timing.report_f(ms, check)
ms, lp = _timing.best_ms(run_step, n)
l, p = lp
total = l.item() + sum(v.sum().item() for v in p.values())
_timing.report_grad(ms, total)
