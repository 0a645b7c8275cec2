"""Twin of ba.ms: ADBench's bundle adjustment (ba1: 49 cameras, 7776
points, 31843 observations) in float64 PyTorch, written with the same
tensor operations as Mist's (tests/scripts/adbench/_adbench.ms): the
residuals under no_grad; the Jacobian's blocks by two autograd.grad
calls over all observations' rows; grad_sq, the gradient of half the
sum of squared residuals.  With mem:PART, one part's peak RSS."""
import sys

import torch

import _timing


def read_ba(path):
    w = open(path).read().split()
    n, m, p = int(w[0]), int(w[1]), int(w[2])
    v = [float(t) for t in w[3:]]
    f64 = lambda a: torch.tensor(a, dtype=torch.float64)
    i = torch.arange(p)
    return (f64(v[0:11]).expand(n, 11).clone(), f64(v[11:14]).expand(m, 3).clone(),
            torch.full((p,), v[14], dtype=torch.float64),
            torch.stack([i % n, i % m], 1), f64(v[15:17]).expand(p, 2).clone())


def cross(a, b):
    return torch.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                        a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                        a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], 1)


def rodrigues_rotate_point(rot, X):
    sqtheta = (rot * rot).sum(1)
    nonzero = sqtheta != 0.0
    theta = torch.sqrt(torch.where(nonzero, sqtheta, torch.ones_like(sqtheta)))[:, None]
    costheta = torch.cos(theta)
    sintheta = torch.sin(theta)
    w = rot / theta
    tmp = (w * X).sum(1)[:, None] * (1.0 - costheta)
    rotated = X * costheta + cross(w, X) * sintheta + w * tmp
    small = X + cross(rot, X)
    return torch.where(nonzero[:, None], rotated, small)


def radial_distort(rad, proj):
    rsq = (proj * proj).sum(1)
    L = 1.0 + rad[:, 0] * rsq + rad[:, 1] * rsq * rsq
    return proj * L[:, None]


def project(cam, X):
    Xcam = rodrigues_rotate_point(cam[:, 0:3], X - cam[:, 3:6])
    distorted = radial_distort(cam[:, 9:11], Xcam[:, 0:2] / Xcam[:, 2:3])
    return distorted * cam[:, 6:7] + cam[:, 7:9]


def reproj_err(cam, X, w, feats):
    return w[:, None] * (project(cam, X) - feats)


def w_err(w):
    return 1.0 - w * w


def run_f():
    with torch.no_grad():
        e = reproj_err(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        return (e.sum() + w_err(w).sum()).item()


def run_jac():
    c = cams[obs[:, 0]].requires_grad_(True)
    x = X[obs[:, 1]].requires_grad_(True)
    v = w.clone().requires_grad_(True)
    e = reproj_err(c, x, v, feats)
    rows = []
    for r in range(2):
        ct = torch.nn.functional.one_hot(torch.full((p,), r), 2).to(torch.float64)
        dc, dx, dw = torch.autograd.grad(e, [c, x, v], ct, retain_graph=(r == 0))
        rows.append(torch.cat([dc, dx, dw[:, None]], 1))
    v2 = w.clone().requires_grad_(True)
    (dwerr,) = torch.autograd.grad(w_err(v2).sum(), [v2])
    return (torch.stack(rows, 1).sum() + dwerr.sum()).item()


def half_sq(cams, X, w):
    e = reproj_err(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
    we = w_err(w)
    return 0.5 * ((e * e).sum() + (we * we).sum())


def run_grad_sq():
    return _timing.grad_sum(half_sq, (cams, X, w))


def main():
    global cams, X, w, obs, feats, p
    cams, X, w, obs, feats = read_ba("../../tests/data/adbench/ba1_n49_m7776_p31843.txt")
    p = w.shape[0]
    _timing.setup()
    parts = {"f": run_f, "grad": run_jac, "grad_sq": run_grad_sq}
    if len(sys.argv) > 2 and sys.argv[2].startswith("mem:"):
        _timing.report_rss(parts[sys.argv[2][4:]])
    else:
        n = _timing.repeats()
        ms, check = _timing.best_ms(run_f, n)
        _timing.report_f(ms, check)
        ms, check = _timing.best_ms(run_jac, n)
        _timing.report_grad(ms, check)
        ms, check = _timing.best_ms(run_grad_sq, n)
        print(f"grad_sq_ms {ms:.4f} check {check:.6e}", flush=True)


if __name__ == "__main__":
    main()
