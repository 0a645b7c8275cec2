"""Twin of ba_loop.ms: bundle adjustment as a loop over ADBench's ba1
observations (the first N, default 4000), each turn reading its camera's
and point's rows and computing its residuals with ba.py's functions on
those one-row tensors, in float64 PyTorch; half the sum of squared
residuals under no_grad, then its gradient with respect to all cameras,
points and weights.  With mem:PART, one part's peak RSS."""
import sys

import torch

import _timing
from ba import read_ba, reproj_err, w_err

cams, X, w, obs, feats = read_ba("../../tests/data/adbench/ba1_n49_m7776_p31843.txt")
N = 4000
mem = ""
for word in sys.argv[2:]:
    if word.startswith("mem:"):
        mem = word[4:]
    else:
        N = int(word)
obs = obs[:N].tolist()


def f(cams, X, w):
    total = 0.0
    for i in range(N):
        c, x = obs[i]
        e = reproj_err(cams[c:c + 1], X[x:x + 1], w[i:i + 1], feats[i:i + 1])
        we = w_err(w[i])
        total = total + (e * e).sum() + we * we
    return 0.5 * total


def run_f():
    with torch.no_grad():
        return f(cams, X, w).item()


def run_grad():
    return _timing.grad_sum(f, (cams, X, w))


if mem:
    _timing.setup()
    _timing.report_rss({"f": run_f, "grad": run_grad}[mem])
else:
    _timing.time_both(run_f, run_grad)
