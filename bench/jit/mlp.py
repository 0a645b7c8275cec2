"""PyTorch twin of mlp.ms (bench/jit_mlp_run.sh): one training step of a
784-256-256-10 MLP on a batch of B in float32, with mlp2.py's data and
operations: the loss under no_grad (the forward pass), then the step:
autograd of the loss with respect to the six parameters and the SGD
update into new tensors.

    python3 mlp.py N B [THREADS]

Prints the BLAS that torch's products reach (Debian's python3-torch
calls OpenBLAS, loaded by the dynamic linker: its core, which
OPENBLAS_CORETYPE sets), then the line mlp.ms prints."""
import ctypes
import os
import sys
import time

import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
B = int(sys.argv[2]) if len(sys.argv) > 2 else 64
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 1
SIZES = [784, 256, 256, 10]
torch.set_num_threads(THREADS)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass


def blas_core():
    """The OpenBLAS in this process (torch linked it): config and core."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD)
    except OSError:
        return "no OpenBLAS loaded"
    lib.openblas_get_config.restype = ctypes.c_char_p
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return f"{lib.openblas_get_config().decode()}; core {lib.openblas_get_corename().decode()}"


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
names = list(params)


def loss(p, x, y):
    h = torch.relu(x @ p["w0"] + p["b0"])
    h = torch.relu(h @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -torch.mean(torch.sum(torch.log_softmax(logits, dim=1) * y, dim=1))


def forward():
    with torch.no_grad():
        return loss(params, x, y)


def step():
    leaves = {k: params[k].clone().requires_grad_(True) for k in names}
    l = loss(leaves, x, y)
    g = torch.autograd.grad(l, [leaves[k] for k in names])
    with torch.no_grad():
        new = {k: leaves[k] - 0.01 * gk for k, gk in zip(names, g)}
    return l.detach(), new


def gradient():
    leaves = {k: params[k].clone().requires_grad_(True) for k in names}
    l = loss(leaves, x, y)
    return l.detach(), torch.autograd.grad(l, [leaves[k] for k in names])


def best_ms(run):
    best = 1e9
    for _ in range(N):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best * 1000.0


forward()
print(f"blas {blas_core()}; torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
t0 = time.perf_counter()
while time.perf_counter() - t0 < 0.3:
    forward()
    step()
f_ms = best_ms(forward)
s_ms = best_ms(step)
g_ms = best_ms(gradient)
l, p = step()
check = l.double().item() + sum(v.double().sum().item() for v in p.values())
print(f"batch {B} forward_ms {f_ms:.4f} step_ms {s_ms:.4f} grad_ms {g_ms:.4f} check {check:.9e}")
