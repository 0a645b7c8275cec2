"""Twin of gmm.ms: ADBench's GMM objective (d=10, k=5, n=1000) in float64
PyTorch, written with the same tensor operations as Mist's
(tests/scripts/adbench/_adbench.ms); the objective under no_grad, then
a forward pass and autograd.grad with respect to alphas, means, icf."""
import math

import torch

import _timing

PI = 3.14159265359  # ADBench's defs.h


def read_gmm(path):
    w = open(path).read().split()
    d, k, n = int(w[0]), int(w[1]), int(w[2])
    isz = d * (d + 1) // 2
    v = [float(t) for t in w[3:]]
    f64 = lambda a: torch.tensor(a, dtype=torch.float64)
    at = 0
    alphas = f64(v[at:at + k]); at += k
    means = f64(v[at:at + k * d]).reshape(k, d); at += k * d
    icf = f64(v[at:at + k * isz]).reshape(k, isz); at += k * isz
    x = f64(v[at:at + n * d]).reshape(n, d); at += n * d
    return alphas, means, icf, x, v[at], int(v[at + 1])


def log_gamma_distrib(a, p):
    return 0.25 * p * (p - 1) * math.log(PI) + sum(math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def tril_index(d):
    return torch.tensor([[1 + i * (d - 1) - i * (i - 1) // 2 + (j - i - 1) if j > i else 0
                          for i in range(d)] for j in range(d)])


def gmm_objective(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    qs = icf[:, :d]
    Qdiags = torch.exp(qs)
    sum_qs = qs.sum(1)
    ltri = icf[:, d:]
    Ls = torch.cat([torch.zeros((k, 1), dtype=torch.float64), ltri], 1)[:, tril_index(d)]
    xc = x[None, :, :] - means[:, None, :]
    Qxc = Qdiags[:, None, :] * xc + xc @ Ls.transpose(1, 2)
    main_term = alphas[:, None] + sum_qs[:, None] - 0.5 * (Qxc * Qxc).sum(2)
    slse = torch.logsumexp(main_term, 0).sum()
    CONSTANT = -n * d * 0.5 * math.log(2 * PI)
    nw = d + m + 1
    C = nw * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_distrib(0.5 * nw, d)
    frobenius = (Qdiags * Qdiags).sum(1) + (ltri * ltri).sum(1)
    prior = (0.5 * gamma * gamma * frobenius - m * sum_qs).sum() - k * C
    return CONSTANT + slse - n * torch.logsumexp(alphas, 0) + prior


alphas, means, icf, x, gamma, m = read_gmm("../../tests/data/adbench/gmm_d10_K5.txt")


def run_f():
    with torch.no_grad():
        return gmm_objective(alphas, means, icf, x, gamma, m).item()


_timing.time_both(run_f, lambda: _timing.grad_sum(gmm_objective, (alphas, means, icf), x, gamma, m))
