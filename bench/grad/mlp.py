"""Twin of mlp.ms: the same 784-256-10 MLP, batch 64, float32, the same
deterministic data and the same operations (relu, log_softmax, the
one-hot cross-entropy averaged over the batch).  The function is the
loss under no_grad; the gradient is the loss with graph recording plus
autograd.grad with respect to all four parameters."""
import torch

import _timing

B, D_IN, D_HID, D_OUT = 64, 784, 256, 10


def det(shape, n, phase, scale):
    k = (torch.arange(n) % 97).to(torch.float32) * 0.37 + phase
    return torch.sin(k).reshape(shape) * scale


params = {
    "w1": det((D_IN, D_HID), D_IN * D_HID, 0.1, 0.05),
    "b1": det((D_HID,), D_HID, 0.2, 0.01),
    "w2": det((D_HID, D_OUT), D_HID * D_OUT, 0.3, 0.05),
    "b2": det((D_OUT,), D_OUT, 0.4, 0.01),
}
x = det((B, D_IN), B * D_IN, 0.5, 1.0)
y = torch.nn.functional.one_hot(torch.arange(B) % D_OUT, D_OUT).to(torch.float32)


def loss(p, x, y):
    h = torch.relu(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -torch.mean(torch.sum(torch.log_softmax(logits, dim=1) * y, dim=1))


def run_f():
    with torch.no_grad():
        return loss(params, x, y).item()


leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
names = list(leaves)


def run_grad():
    l = loss(leaves, x, y)
    return l, torch.autograd.grad(l, [leaves[k] for k in names])


_timing.setup()
n = _timing.repeats() * 10
ms, check = _timing.best_ms(run_f, n)
_timing.report_f(ms, check)
ms, (l, g) = _timing.best_ms(run_grad, n)
# the check (not timed): the loss plus the sum of every gradient entry
_timing.report_grad(ms, l.item() + sum(t.sum().item() for t in g))
