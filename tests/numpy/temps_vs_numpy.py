#!/usr/bin/env python3
"""temps_vs_numpy.py: random programs of tensor temporaries, run by Mist
and by NumPy.

Arithmetic may write its result over an operand that nothing reads
afterwards (docs/tensors.md, Memory; ir/eval.c, dead_temporary).  A
mistake there changes a value that is still read: these programs make
that likely to show.  Each case is a function (or, now and then, the
same statements at the top level) of a few tensors of 2 KiB or more,
whose statements bind values used once, twice or three times: sums,
differences and products with tensors, broadcast rows and columns and
numbers, negations, divisions by powers of two, matrix products, a
closure that reads earlier values and is called twice, and a loop that
carries a value round.  Every value feeds what the case prints, so a
value written over too early changes the output.  NumPy computes what
each case must print (the values are small whole numbers in float32,
float64 or int64, one kind per case, so both sides round alike; sums are
compared to a relative 1e-5).

    temps_vs_numpy.py MIST [SEED [CASES]]     default seed 1, 300 cases

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

NP = {"f32": np.float32, "f64": np.float64, "i64": np.int64}


def leaf(rng, d, shape):
    """(mist text, array): whole numbers in [-3, 3] from a formula both
    sides compute alike (no long literal)."""
    n = int(np.prod(shape))
    k, m = rng.randint(1, 11), rng.choice([5, 7, 9])
    a = ((np.arange(n) * k) % m - m // 2).astype(NP[d]).reshape(shape)
    text = "(((arange(%d) * %d) %% %d - %d).astype(%r)).reshape(%r)" % (n, k, m, m // 2, d, shape)
    return text, a


class Case:
    """Statements building values v0, v1...; uses[i] counts the reads of
    vi so far, and every value read fewer than once is printed."""

    def __init__(self, rng, d):
        self.rng, self.d = rng, d
        self.is_float = d != "i64"
        self.rows, self.cols = rng.choice([(24, 40), (40, 24), (8, 96), (32, 32)])
        self.lines, self.vals, self.uses = [], [], []
        self.params = []   # (name, mist text, array)

    def param(self, shape):
        name = "x%d" % len(self.params)
        text, a = leaf(self.rng, self.d, shape)
        self.params.append((name, text, a))
        return name, a

    def new(self, text, value):
        name = "v%d" % len(self.vals)
        self.lines.append("%s = %s" % (name, text))
        self.vals.append((name, value))
        self.uses.append(0)
        return name, value

    def pick(self):
        """A value to read: a recent one more often, and one read already
        now and then (a second or third use)."""
        i = len(self.vals) - 1 - min(int(self.rng.expovariate(0.7)), len(self.vals) - 1)
        self.uses[i] += 1
        return self.vals[i]

    def number(self):
        if self.is_float:
            return self.rng.choice([1.0, 2.0, 0.5, -1.0, 3.0])
        return self.rng.choice([1, 2, -1, 3])

    def step(self):
        rng = self.rng
        kind = rng.random()
        if kind < 0.45:   # a op b, both full-size
            (ta, a), (tb, b) = self.pick(), self.pick()
            op = rng.choice("+-*")
            return self.new("%s %s %s" % (ta, op, tb), self.binop(op, a, b))
        if kind < 0.6:   # with a number, on either side
            (ta, a), s = self.pick(), self.number()
            op = rng.choice("+-*")
            if self.is_float and rng.random() < 0.2:
                return self.new("%s / 2.0" % ta, (a / NP[self.d](2.0)).astype(NP[self.d]))
            if rng.random() < 0.5:
                return self.new("%s %s %r" % (ta, op, s), self.binop(op, a, np.array(s, NP[self.d])))
            return self.new("%r %s %s" % (s, op, ta), self.binop(op, np.array(s, NP[self.d]), a))
        if kind < 0.7:   # with a broadcast row or column
            (ta, a) = self.pick()
            shape = (self.cols,) if rng.random() < 0.5 else (self.rows, 1)
            tp, p = self.param(shape)
            op = rng.choice("+-*")
            if rng.random() < 0.5:
                return self.new("%s %s %s" % (ta, op, tp), self.binop(op, a, p))
            return self.new("%s %s %s" % (tp, op, ta), self.binop(op, p, a))
        if kind < 0.77:
            (ta, a) = self.pick()
            return self.new("-%s" % ta, -a)
        if kind < 0.84:   # a matrix product back to the same shape
            (ta, a) = self.pick()
            tm, mm = self.param((self.cols, self.cols))
            r = a @ (mm % 2)
            return self.new("%s @ (%s %% 2)" % (ta, tm), r.astype(NP[self.d]))
        if kind < 0.92:   # a closure over earlier values, called twice
            (ta, a), (tb, b) = self.pick(), self.pick()
            s1, s2 = self.number(), self.number()
            f = "f%d" % len(self.vals)
            self.lines.append("%s = lambda s: %s * s + %s" % (f, ta, tb))
            one = lambda s: self.binop("+", self.binop("*", a, np.array(s, NP[self.d])), b)
            return self.new("%s(%r) - %s(%r)" % (f, s1, f, s2), self.binop("-", one(s1), one(s2)))
        (ta, a), (tb, b) = self.pick(), self.pick()   # a loop carrying a value round
        acc = a
        half = 0.5 if self.is_float else 1
        for _ in range(2):
            acc = self.binop("+", self.binop("*", acc, np.array(half, NP[self.d])), b)
        name = "v%d" % len(self.vals)
        self.lines += ["%s = %s" % (name, ta), "for it in range(2):",
                       "    %s = %s * %r + %s" % (name, name, half, tb)]
        self.vals.append((name, acc))
        self.uses.append(0)
        return name, acc

    def binop(self, op, a, b):
        f = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
        return np.asarray(f(a, b)).astype(NP[self.d])


def make_case(rng, i):
    """(Mist lines of case i, what it prints per NumPy)."""
    d = rng.choice(["f32", "f32", "f64", "i64"])
    c = Case(rng, d)
    for _ in range(rng.randint(1, 2)):
        c.vals.append(c.param((c.rows, c.cols)))
        c.uses.append(1)   # (parameters are never temporaries)
    for _ in range(rng.randint(3, 9)):
        c.step()
    out = [(n, v) for (n, v), u in zip(c.vals, c.uses) if u == 0]
    shown = "(%s,)" % ", ".join(n for n, _ in out)
    if rng.random() < 0.8:
        lines = ["def case%d(%s):" % (i, ", ".join(n for n, _, _ in c.params))]
        lines += ["    " + l for l in c.lines] + ["    return %s" % shown]
        lines += ["for r in case%d(%s):" % (i, ", ".join(t for _, t, _ in c.params)), "    show(r)"]
    else:   # at the top level
        lines = ["%s = %s" % (n, t) for n, t, _ in c.params] + c.lines
        lines += ["for r in %s:" % shown, "    show(r)"]
    return lines, [v for _, v in out]


SHOW = ["def show(r):",
        "    e = r.reshape(-1)",
        "    print(r.shape, r.dtype, r.astype('f64').sum().item(), e[0].item(), e[-1].item(), "
        "abs(r).astype('f64').max().item())"]


def expect(v):
    e = v.reshape(-1)
    return (tuple(v.shape), {np.dtype(t): k for k, t in NP.items()}[v.dtype], float(v.astype(np.float64).sum()),
            float(e[0]), float(e[-1]), float(np.abs(v).astype(np.float64).max()))


def parse(line):
    """A line of show(): (shape, dtype, sum, first, last, max |x|)."""
    shape, rest = line.split(") ", 1)
    words = rest.split()
    return (tuple(eval(shape + ")")), words[0], *[float(w) for w in words[1:]])


def close(x, y):
    return x == y or abs(x - y) <= 1e-5 * max(abs(x), abs(y))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    ncases = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rng = random.Random(seed)
    program, wants, labels = list(SHOW), [], []
    for i in range(ncases):
        lines, want = make_case(rng, i)
        program += lines + ['print("----")']
        wants.append([expect(w) for w in want])
        labels.append("\n  " + "\n  ".join(lines))

    def agree(text, want):
        rows = [parse(l) for l in text.strip().split("\n") if l]
        return len(rows) == len(want) and all(
            r[0] == e[0] and r[1] == e[1] and all(close(x, y) for x, y in zip(r[2:], e[2:]))
            for r, e in zip(rows, want))

    return _mistrun.compare(mist, program, wants, labels, "programs agree with NumPy, seed %d" % seed, agree)


if __name__ == "__main__":
    sys.exit(main())
