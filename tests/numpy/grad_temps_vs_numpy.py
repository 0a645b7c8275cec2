#!/usr/bin/env python3
"""grad_temps_vs_numpy.py: random differentiable programs of tensor
temporaries, their values and gradients computed by Mist and by NumPy.

The interpreter writes results over temporaries that nothing reads
afterwards, and computes x + s * y in one pass (docs/tensors.md,
Memory; ir/eval.c, dead_temporary): in a forward pass a temporary may
still be read by the backward pass, for its value or only for its shape,
and a sensitivity may be written over.  A mistake there changes a value
that is still read, or reads one never made: these programs make that
likely to show, under grad as well as plainly.  Each case is a function
of a few float tensors whose statements bind values used
once, twice or three times: sums, differences and products with
tensors, numbers, broadcast rows and columns; x + s * y and x - y * s;
x @ w + b and relu, tanh or sigmoid of it; negations, sums over an axis
broadcast back, a transpose and a reshape (views), a slice, a list
indexed, a closure over earlier values called twice, and a loop carrying
a value round, and rows read in two blocks put back together the other
way round (a backward pass adds each block's sensitivity into the sum of
the others, ir_gadd_sens_at).  A case's tensors are small (under 64
elements, in the collector's heap) now and then.  It returns the sum of each value never read, weighted by
a constant; the program prints that and its gradient with respect to
every argument (grad with argnums), and after a value_and_grad, the SGD
update p - 0.5 * g of each argument.  NumPy computes the same, the
gradient by its own reverse mode below (whole numbers in float64 stay
exact but for tanh and sigmoid, which only float64 cases use; sums are
compared to 1e-9 of the sum of the magnitudes, 1e-4 in float32).

    grad_temps_vs_numpy.py MIST [SEED [CASES]]     default seed 1, 150 cases

Exit status 0 when all agree, 1 on a difference, 77 (skipped) when NumPy
is not installed.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

import _mistrun   # noqa: E402

NP = {"f32": np.float32, "f64": np.float64}


# ---- NumPy's side: values that remember how they were made ----

class V:
    """A value of the program and, once back() has run, its gradient."""
    made = 0

    def __init__(self, a, parents=()):
        self.a, self.parents, self.g = a, parents, None   # parents: (V, d -> its part)
        self.order = V.made
        V.made += 1

    def add_grad(self, d):
        self.g = d if self.g is None else self.g + d


def unbroadcast(d, shape):
    while d.ndim > len(shape):
        d = d.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and d.shape[i] != 1:
            d = d.sum(axis=i, keepdims=True)
    return d


def back(outs):
    """Reverse mode from outs (whose gradients are set): each value's
    gradient reaches its parents once all of it is in, newest first."""
    seen, pending = {}, list(outs)
    while pending:
        v = pending.pop()
        if id(v) not in seen:
            seen[id(v)] = v
            pending += [p for p, _ in v.parents]
    for v in sorted(seen.values(), key=lambda v: -v.order):
        if v.g is not None:
            for p, f in v.parents:
                p.add_grad(f(v.g))


class Case:
    """Statements building values v0, v1...; uses[i] counts the reads of
    vi so far, and every value read fewer than once is returned."""

    def __init__(self, rng, d):
        self.rng, self.d, self.t = rng, d, NP[d]
        self.rows, self.cols = rng.choice([(24, 40), (40, 24), (16, 64), (32, 32), (3, 5), (6, 2), (4, 4)])
        self.lines, self.vals, self.uses = [], [], []
        self.params = []   # (name, mist text, V)

    def leaf(self, shape, lo=-2, hi=2):
        n = int(np.prod(shape))
        k, m = self.rng.randint(1, 11), hi - lo + 1
        a = ((np.arange(n) * k) % m + lo).astype(self.t).reshape(shape)
        text = "((arange(%d) * %d) %% %d + %d).astype(%r).reshape(%r)" % (n, k, m, lo, self.d, shape)
        return text, a

    def param(self, shape, lo=-2, hi=2):
        name = "x%d" % len(self.params)
        text, a = self.leaf(shape, lo, hi)
        v = V(a)
        self.params.append((name, text, v))
        return name, v

    def new(self, text, v):
        name = "v%d" % len(self.vals)
        self.lines.append("%s = %s" % (name, text))
        return self.bind(name, v)

    def bind(self, name, v):
        self.vals.append((name, v))
        self.uses.append(0)
        return name, v

    def pick(self):
        """A value to read: a recent one more often, and one read already
        now and then (a second or third use)."""
        i = len(self.vals) - 1 - min(int(self.rng.expovariate(0.7)), len(self.vals) - 1)
        self.uses[i] += 1
        return self.vals[i]

    def number(self):
        return self.rng.choice([1.0, 2.0, 0.5, -1.0, 3.0, -0.5])

    # -- operations: each makes a V with its parents' gradient parts --

    def op(self, o, x, y):
        a, b = x.a, y.a
        r = {"+": a + b, "-": a - b, "*": a * b}[o].astype(self.t)
        parts = {"+": (lambda d: d, lambda d: d), "-": (lambda d: d, lambda d: -d),
                 "*": (lambda d: d * b, lambda d: d * a)}[o]
        return V(r, ((x, lambda d: unbroadcast(parts[0](d), a.shape)),
                     (y, lambda d: unbroadcast(parts[1](d), b.shape))))

    def scalar(self, o, x, s, first):
        a, s = x.a, self.t(s)
        if o == "*":
            return V((a * s).astype(self.t), ((x, lambda d: d * s),))
        if o == "+":
            return V((a + s).astype(self.t), ((x, lambda d: d),))
        sign = -1 if first else 1
        return V((s - a if first else a - s).astype(self.t), ((x, lambda d: sign * d),))

    def unary(self, f, x):
        a = x.a
        if f == "neg":
            return V(-a, ((x, lambda d: -d),))
        if f == "relu":
            return V(np.maximum(a, 0).astype(self.t), ((x, lambda d: d * (a > 0)),))
        # in float64, rounded once, as Mist's kernels; the sensitivity in
        # Mist's order (lang_tensor_act_sens)
        one = self.t(1)
        a64 = a.astype(np.float64)
        if f == "tanh":
            y = np.tanh(a64).astype(self.t)
            return V(y, ((x, lambda d: d * (one - y * y)),))
        y = (1 / (1 + np.exp(-a64))).astype(self.t)
        return V(y, ((x, lambda d: (d * y) * (one - y)),))

    def matmul(self, x, w):
        a, b = x.a, w.a
        return V((a @ b).astype(self.t), ((x, lambda d: d @ b.T), (w, lambda d: a.T @ d)))

    def step(self):
        rng = self.rng
        kind = rng.random()
        if kind < 0.25:   # a op b, both full-size
            (ta, a), (tb, b) = self.pick(), self.pick()
            o = rng.choice("+-*")
            return self.new("%s %s %s" % (ta, o, tb), self.op(o, a, b))
        if kind < 0.35:   # with a number, on either side
            (ta, a), s = self.pick(), self.number()
            o = rng.choice("+-*")
            if rng.random() < 0.5:
                return self.new("%s %s %r" % (ta, o, s), self.scalar(o, a, s, False))
            return self.new("%r %s %s" % (s, o, ta), self.scalar(o, a, s, True))
        if kind < 0.5:   # x + s * y, x - y * s, s * y - x...: the product in one pass with the sum
            (ta, a), (tb, b), s = self.pick(), self.pick(), self.number()
            prod = "%r * %s" % (s, tb) if rng.random() < 0.5 else "%s * %r" % (tb, s)
            pv = self.scalar("*", b, s, False)
            o = rng.choice("+-")
            if rng.random() < 0.5:
                return self.new("%s %s %s" % (ta, o, prod), self.op(o, a, pv))
            return self.new("%s %s %s" % (prod, o, ta), self.op(o, pv, a))
        if kind < 0.58:   # with a broadcast row or column
            (ta, a) = self.pick()
            tp, p = self.param((self.cols,) if rng.random() < 0.5 else (self.rows, 1))
            o = rng.choice("+-*")
            if rng.random() < 0.5:
                return self.new("%s %s %s" % (ta, o, tp), self.op(o, a, p))
            return self.new("%s %s %s" % (tp, o, ta), self.op(o, p, a))
        if kind < 0.7:   # a layer: x @ w + b, then an activation (or not)
            (ta, a) = self.pick()
            tw, w = self.param((self.cols, self.cols), -1, 1)
            tb, b = self.param((self.cols,))
            # (tanh and sigmoid in float64 only: saturated, their float32
            # derivatives are a few bits, which the two sides round apart)
            f = rng.choice(["relu", "relu", "tanh", "sigmoid", None] if self.d == "f64" else ["relu", None])
            y = self.op("+", self.matmul(a, w), b)
            text = "%s @ %s + %s" % (ta, tw, tb)
            if f is None:
                return self.new(text, y)
            return self.new("%s(%s)" % (f, text), self.unary(f, y))
        if kind < 0.75:
            (ta, a) = self.pick()
            f = rng.choice(["neg", "relu", "relu"])
            return self.new("-%s" % ta if f == "neg" else "relu(%s)" % ta, self.unary(f, a))
        if kind < 0.8:   # a sum over the rows, broadcast back
            (ta, a), (tb, b) = self.pick(), self.pick()
            s = V(b.a.sum(axis=0), ((b, lambda d: np.broadcast_to(d, b.a.shape)),))
            return self.new("%s * %s.sum(axis=0)" % (ta, tb), self.op("*", a, s))
        if kind < 0.86:   # views: a transpose and a reshape, of temporaries
            (ta, a), (tb, b) = self.pick(), self.pick()
            if rng.random() < 0.5:
                t2 = self.scalar("*", a, 2.0, False)
                tt = V(t2.a.T, ((t2, lambda d: d.T),))
                tr = V(tt.a.T, ((tt, lambda d: d.T),))
                return self.new("(%s * 2.0).T.T - %s" % (ta, tb), self.op("-", tr, b))
            t2 = self.op("+", a, b)
            shape = t2.a.shape
            flat = V(t2.a.reshape(-1), ((t2, lambda d: d.reshape(shape)),))
            m = self.scalar("*", flat, 1.0, False)
            return self.new("((%s + %s).reshape(-1) * 1.0).reshape(%r)" % (ta, tb, shape),
                            V(m.a.reshape(shape), ((m, lambda d: d.reshape(-1)),)))
        if kind < 0.88:   # rows in two blocks, swapped: each block's sensitivity into the other's sum
            (ta, a) = self.pick()
            k, n = rng.randint(1, self.rows - 1), self.rows
            r = V(np.concatenate([a.a[k:], a.a[:k]]), ((a, lambda d: np.concatenate([d[n - k:], d[:n - k]])),))
            return self.new("concat([%s[%d:], %s[0:%d]]) * 1.0" % (ta, k, ta, k), self.scalar("*", r, 1.0, False))
        if kind < 0.9:   # a list of temporaries, one read back, and a slice kept whole
            (ta, a), (tb, b) = self.pick(), self.pick()
            k = rng.randint(0, 1)
            t0, t1 = self.scalar("*", a, 0.5, False), self.op("-", a, b)
            pick = (t0, t1)[k]
            sl = V(pick.a[0:], ((pick, lambda d: d),))
            return self.new("[%s * 0.5, %s - %s][%d][0:] + %s" % (ta, ta, tb, k, tb), self.op("+", sl, b))
        if kind < 0.95:   # a closure over earlier values, called twice
            (ta, a), (tb, b) = self.pick(), self.pick()
            s1, s2 = self.number(), self.number()
            f = "f%d" % len(self.vals)
            self.lines.append("%s = lambda s: %s * s + %s" % (f, ta, tb))
            one = lambda s: self.op("+", self.scalar("*", a, s, False), b)
            return self.new("%s(%r) - %s(%r)" % (f, s1, f, s2), self.op("-", one(s1), one(s2)))
        (ta, a), (tb, b) = self.pick(), self.pick()   # a loop carrying a value round
        acc = a
        for _ in range(2):
            acc = self.op("+", self.scalar("*", acc, 0.5, False), b)
        name = "v%d" % len(self.vals)
        self.lines += ["%s = %s" % (name, ta), "for it in range(2):",
                       "    %s = %s * 0.5 + %s" % (name, name, tb)]
        return self.bind(name, acc)


def make_case(rng, i):
    """(Mist lines of case i, what it prints per NumPy, whether loosely)."""
    d = rng.choice(["f64", "f64", "f32"])
    c = Case(rng, d)
    for _ in range(rng.randint(1, 2)):
        c.vals.append(c.param((c.rows, c.cols)))
        c.uses.append(1)   # (parameters are never temporaries)
    for _ in range(rng.randint(3, 9)):
        c.step()
    out = [(n, v) for (n, v), u in zip(c.vals, c.uses) if u == 0]
    terms, loss = [], 0.0
    consts = []
    for k, (n, v) in enumerate(out):
        text, w = c.leaf(v.a.shape, -3, 3)
        cname = "c%d_%d" % (i, k)
        consts.append("%s = %s" % (cname, text))
        terms.append("sum(%s * %s)" % (n, cname))
        loss += float((v.a.astype(np.float64) * w).sum())
        v.add_grad(w.astype(c.t))
    back([v for _, v in out])
    names = [n for n, _, _ in c.params]
    args = ["a%d_%d" % (i, k) for k in range(len(names))]
    call = ", ".join(args)
    lines = consts + ["%s = %s" % (a, t) for a, (_, t, _) in zip(args, c.params)]
    lines += ["def case%d(%s):" % (i, ", ".join(names))]
    lines += ["    " + l for l in c.lines] + ["    return %s" % " + ".join(terms)]
    nums = tuple(range(len(names)))
    lines += ["print(item(case%d(%s)))" % (i, call),
              "for g in grad(case%d, argnums=%r)(%s):" % (i, nums, call),
              "    show(g)",
              "l%d, g%d = value_and_grad(case%d, argnums=%r)(%s)" % (i, i, i, nums, call),
              "print(item(l%d))" % i,
              "a%d = (%s,)" % (i, call),
              "for k in range(%d):" % len(names),
              "    show(a%d[k] - 0.5 * g%d[k])" % (i, i)]
    grads = [v.g if v.g is not None else np.zeros_like(v.a) for _, _, v in c.params]
    want = [loss] + [expect(g) for g in grads] + [loss]
    want += [expect((v.a - c.t(0.5) * g).astype(c.t)) for (_, _, v), g in zip(c.params, grads)]
    return lines, want, d == "f32"


SHOW = ["def show(r):",
        "    w = (arange(r.size) % 5 - 2).reshape(r.shape)",
        "    print(r.shape, r.astype('f64').sum().item(), abs(r).astype('f64').sum().item(), "
        "(r.astype('f64') * w).sum().item())"]


def expect(v):
    v = np.asarray(v)
    w = (np.arange(v.size) % 5 - 2).reshape(v.shape)
    v64 = v.astype(np.float64)
    return (tuple(v.shape), float(v64.sum()), float(np.abs(v64).sum()), float((v64 * w).sum()))


def parse(line):
    """A line of show() (shape, three sums), or of a loss (a float)."""
    if not line.startswith("("):
        return float(line)
    shape, rest = line.split(") ", 1)
    return (tuple(eval(shape + ")")), *[float(w) for w in rest.split()])


def close(x, y, tol):
    return x == y or abs(x - y) <= tol * max(abs(x), abs(y), 1.0)


def agree(got, want, tol):
    """A loss to a relative tol; a show() row's sums to tol times the sum
    of the magnitudes (the weighted sum cancels, and float32 roundings
    differ between the two sides' exp)."""
    if isinstance(want, float):
        return isinstance(got, float) and close(got, want, tol)
    if isinstance(got, float) or got[0] != want[0]:
        return False
    scale = 2 * max(got[2], want[2], 1.0)
    return all(x == y or abs(x - y) <= tol * scale for x, y in zip(got[1:], want[1:]))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    ncases = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    rng = random.Random(seed)
    program, wants, labels = list(SHOW), [], []
    for i in range(ncases):
        lines, want, loose = make_case(rng, i)
        program += lines + ['print("----")']
        wants.append((want, 1e-4 if loose else 1e-9))
        labels.append("\n  " + "\n  ".join(lines))

    def case_agrees(text, want):
        rows = [parse(l) for l in text.strip().split("\n") if l]
        want, tol = want
        return len(rows) == len(want) and all(agree(r, w, tol) for r, w in zip(rows, want))

    return _mistrun.compare(mist, program, wants, labels, "programs agree with NumPy, seed %d" % seed,
                            case_agrees)


if __name__ == "__main__":
    sys.exit(main())
