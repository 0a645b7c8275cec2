#!/usr/bin/env python3
"""ops_vs_numpy.py: random tensor programs, run by Mist and by NumPy.

Each case makes a few small tensors (random shapes with 0- and 1-size
axes, dtypes bool, i32, i64, f32, f64, a NaN now and then) and applies one
to three operations to them: broadcasting arithmetic, comparisons,
where, math functions, reductions with axes and keepdims, reshape with
-1, transpose, concat and stack, subscripts (ints, slices with negative
steps, None, `...`, int lists and tensors, bool masks), setitem, astype
and matmul, sometimes with a Python number as an operand, and gradients
of subscripts and updates (grad_stmts: the sensitivity of x[i] scattered
back to x, of x[i] = v to x and v, against sums NumPy makes).  NumPy computes
what each case must give, under Mist's documented dtype rules
(docs/tensors.md, *Differences from NumPy*: the places where Mist differs
from NumPy on purpose are written out below where they apply, each
naming its rule); the value, shape and dtype Mist prints are compared
with it, and where NumPy raises, Mist must raise too (an error, never a
crash).

    ops_vs_numpy.py MIST [SEED [CASES]]     default seed 1, 600 cases

Exit status 0 when all agree, 1 on a difference, 77 (skipped) when NumPy
is not installed.
"""
import bisect
import os
import random
import re
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

import _subscripts   # noqa: E402 (it needs numpy)

DTYPES = ["bool", "i32", "i64", "f32", "f64"]
NP = {"bool": np.bool_, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
NAME = {np.dtype(v): k for k, v in NP.items()}


class Refused(Exception):
    """The case is an error: NumPy (or a documented Mist rule) refuses it."""


def dtype_of(a):
    return NAME[a.dtype]


def is_float(d):
    return d in ("f32", "f64")


def promote(*ds):
    """Tensor with tensor: the larger in bool < i32 < i64 < f32 < f64.
    docs/tensors.md, Dtypes and promotion: i32 or i64 with f32 gives f32
    (NumPy: f64)."""
    return max(ds, key=DTYPES.index)


def np_call(f, *args, **kw):
    """f(*args), NumPy's errors made Refused, and its DeprecationWarnings
    too (an out-of-bounds index into an empty result: NumPy will refuse
    it, Mist refuses it already)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            return f(*args, **kw)
    except (ValueError, IndexError, TypeError, np.AxisError, DeprecationWarning) as e:
        raise Refused(str(e))


def mist_cast(a, d):
    """a as dtype d by Mist's casts (docs/tensors.md, Other rules): float
    to int truncates toward zero, saturates at the type's limits, and NaN
    becomes 0 (NumPy: undefined)."""
    a = np.asarray(a)
    if a.dtype.kind == "f" and d in ("i32", "i64"):
        info = np.iinfo(NP[d])
        b = np.trunc(np.nan_to_num(a.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
        high, low = b >= float(info.max) + 1, b < float(info.min)
        r = np.where(high | low, 0, b).astype(NP[d])
        r[high] = info.max
        r[low] = info.min
        return r
    return a.astype(NP[d])


# ---- making tensors -------------------------------------------------------

def rand_shape(rng, ndim=None):
    if ndim is None:
        ndim = rng.choice([0, 1, 1, 2, 2, 2, 3, 3])
    return tuple(0 if rng.random() < 0.08 else rng.choice([1, 1, 2, 2, 3, 3, 4]) for _ in range(ndim))


def rand_values(rng, d, n, nonneg=False, nonzero=False):
    if d == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    lo = 0 if nonneg else -4
    if d in ("i32", "i64"):
        vals = [rng.randint(lo, 4) for _ in range(n)]
        top = 2 ** (31 if d == "i32" else 63) - 1
        while n and rng.random() < 0.08:   # near the limits: sums that overflow on the way
            vals[rng.randrange(n)] = rng.choice([top, -top, top // 2 + 1, -(top // 2 + 1)])
        return [v if v or not nonzero else 1 for v in vals]
    vals = [rng.randint(4 * lo, 16) / 4 for _ in range(n)]
    vals = [v if v or not nonzero else 0.5 for v in vals]
    if rng.random() < 0.05 and n:
        vals[rng.randrange(n)] = float("nan")
    return vals


def fmt(v):
    if isinstance(v, float) and v != v:
        return "nan"
    if not isinstance(v, bool) and v < 0:
        return "(%r)" % v   # -2 ** t is -(2 ** t)
    return repr(v)


def leaf(rng, shape=None, d=None, **kw):
    """(mist text, array) for a random tensor."""
    shape = rand_shape(rng) if shape is None else shape
    d = rng.choice(DTYPES) if d is None else d
    n = int(np.prod(shape))
    vals = rand_values(rng, d, n, **kw)
    a = np.array(vals, dtype=NP[d]).reshape(shape)
    if n == 0:
        text = "zeros(%r, dtype=%r)" % (shape, d)
    elif len(shape) == 0:
        text = "tensor(%s, dtype=%r)" % (fmt(vals[0]), d)
    else:
        text = "tensor([%s], dtype=%r).reshape(%r)" % (", ".join(fmt(v) for v in vals), d, shape)
    return text, a


def broadcastable_shape(rng, shape):
    """A shape that broadcasts with `shape` (usually), or one that does not."""
    if rng.random() < 0.05:
        return rand_shape(rng)
    s = list(shape[rng.randint(0, len(shape)):]) if shape else []
    s = [1 if rng.random() < 0.3 else x for x in s]
    if rng.random() < 0.15:
        s = [rng.choice([1, 2])] + s
    return tuple(s)


# ---- the operations: each takes (mist text, array) and returns the Mist
# text of the result and a function computing it, which raises Refused
# where Mist must raise

ARITH = ["+", "-", "*", "/", "//", "%", "**"]
NP_BIN = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide,
          "%": np.remainder, "**": np.power, "maximum": np.maximum, "minimum": np.minimum,
          "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
          ">": np.greater, ">=": np.greater_equal}


def scalar_dtype(td, s):
    """docs/tensors.md, Dtypes and promotion: a Python number with a tensor
    takes the tensor's dtype; a float with an int or bool tensor gives f32,
    an int with a bool tensor i64 (NumPy: f64 for the float)."""
    if isinstance(s, float) and not is_float(td):
        return "f32"
    if isinstance(s, int) and td == "bool":
        return "i64"
    return td


def binop(rng, x):
    (tx, a) = x
    op = rng.choice(ARITH + ARITH + ["maximum", "minimum"])
    if rng.random() < 0.3:   # a Python number
        s = rng.choice([rng.randint(-3, 3), rng.randint(-8, 8) / 4])
        if op == "**" and not (isinstance(s, float) or is_float(dtype_of(a))):
            s = abs(s)
        rd = scalar_dtype(dtype_of(a), s)
        b = np.array(s, dtype=NP[rd])
        left = rng.random() < 0.3 and op not in ("maximum", "minimum")
        ty = fmt(s)
        if left:
            a, b, tx, ty = b, a.astype(NP[rd]), ty, tx
    else:
        ty, b = leaf(rng, broadcastable_shape(rng, a.shape), nonneg=op == "**", nonzero=op in ("//", "%"))
        rd = promote(dtype_of(a), dtype_of(b))
    if op in ARITH and rd == "bool":
        rd = "i64"   # docs/tensors.md (*): arithmetic on two bools computes in i64
    cd = rd
    if op == "/" and not is_float(rd):
        rd, cd = "f32", "f64"   # docs/tensors.md, Other rules: / of integers gives f32
    text = "%s(%s, %s)" % (op, tx, ty) if op in ("maximum", "minimum") else "(%s %s %s)" % (tx, op, ty)

    def value():
        shape = np_call(np.broadcast_shapes, a.shape, b.shape)
        bb = np.broadcast_to(b, shape)
        if not is_float(cd) and op in ("//", "%") and (bb == 0).any():
            raise Refused("integer division or modulo by zero")   # docs: ZeroDivisionError, not 0
        if not is_float(cd) and op == "**" and (bb < 0).any():
            raise Refused("integers to negative integer powers")
        return np.asarray(np_call(NP_BIN[op], a.astype(NP[cd]), b.astype(NP[cd]))).astype(NP[rd])
    return text, value


def compare(rng, x):
    tx, a = x
    op = rng.choice(["==", "!=", "<", "<=", ">", ">="])
    if rng.random() < 0.3:
        s = rng.choice([rng.randint(-3, 3), rng.randint(-8, 8) / 4])
        cd, ty = scalar_dtype(dtype_of(a), s), fmt(s)
        b = np.array(s, dtype=NP[cd])
    else:
        ty, b = leaf(rng, broadcastable_shape(rng, a.shape))
        cd = promote(dtype_of(a), dtype_of(b))
    return "(%s %s %s)" % (tx, op, ty), lambda: np.asarray(np_call(NP_BIN[op], a.astype(NP[cd]), b.astype(NP[cd])))


def where_op(rng, x):
    tx, a = x
    if rng.random() < 0.5:
        tc, cv = compare(rng, x)
    else:
        tc, c = leaf(rng, broadcastable_shape(rng, a.shape), "bool")
        cv = lambda: c
    ty, b = leaf(rng, broadcastable_shape(rng, a.shape))
    rd = promote(dtype_of(a), dtype_of(b))
    return "where(%s, %s, %s)" % (tc, tx, ty), lambda: np_call(np.where, cv(), a.astype(NP[rd]), b.astype(NP[rd]))


def unary(rng, x):
    tx, a = x
    d = dtype_of(a)
    f = rng.choice(["-", "abs", "relu", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "round"])
    if f in ("-", "abs", "relu"):
        rd = "i64" if d == "bool" else d   # docs/tensors.md, Other rules: abs, relu and - of bools give i64
        b = a.astype(NP[rd])
        r = -b if f == "-" else np.abs(b) if f == "abs" else np.maximum(b, np.array(0, dtype=NP[rd]))
        return ("(-%s)" % tx if f == "-" else "%s(%s)" % (f, tx)), lambda: r.astype(NP[rd])
    if f == "round":
        if not is_float(d):
            f = "exp"
        else:
            return "round(%s)" % tx, lambda: np.round(a)
    rd = d if is_float(d) else "f32"   # docs: math functions of ints and bools give f32
    b = a.astype(NP[rd])
    with np.errstate(all="ignore"):
        r = 1 / (1 + np.exp(-b)) if f == "sigmoid" else getattr(np, f)(b)
    return "%s(%s)" % (f, tx), lambda: r.astype(NP[rd])


def rand_axis(rng, nd, tuples=True):
    r = rng.random()
    if r < 0.25:
        return None
    if nd == 0:
        return rng.choice([None, 0, -1])
    if r < 0.8 or not tuples:
        return rng.randint(-nd - (rng.random() < 0.05), nd - 1 + (rng.random() < 0.05))
    k = rng.randint(1, nd)
    axes = rng.sample(range(-nd, nd), k) if rng.random() < 0.1 else rng.sample(range(nd), k)
    return tuple(axes)


def reduce_op(rng, x):
    tx, a = x
    d = dtype_of(a)
    f = rng.choice(["sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin"])
    arg = f in ("argmax", "argmin")
    axis = rand_axis(rng, a.ndim, tuples=not arg)
    keep = rng.random() < 0.3
    if axis is None and not keep and rng.random() < 0.5:
        text = "%s(%s)" % (f, tx) if f in ("sum", "max", "min", "any", "all") else "%s.%s()" % (tx, f)
    else:
        text = "%s.%s(axis=%r%s)" % (tx, f, axis, ", keepdims=True" if keep else "")
    # docs/tensors.md, Other rules: sum and prod of bool, i32, i64 give
    # i64, mean of them f32 (NumPy: f64), any and all bool
    if f in ("sum", "prod"):
        cd = d if is_float(d) else "i64"
        rd = cd
    elif f == "mean":
        cd, rd = ("f64", "f32") if not is_float(d) else (d, d)
    else:
        cd = rd = "i64" if arg else "bool" if f in ("any", "all") else d
    b = a.astype(NP[cd]) if not arg else a

    def value():
        if a.ndim == 0 and axis is not None:
            # docs/tensors.md, Reductions: a 0-d tensor has no axis 0 or
            # -1 (NumPy takes them in all but mean, an old exception)
            raise Refused("axis out of bounds for a 0-d tensor")
        if isinstance(axis, tuple) and len(set(ax % a.ndim for ax in axis)) < len(axis):
            raise Refused("duplicate value in 'axis'")
        r = np_call(getattr(np, {"max": "amax", "min": "amin"}.get(f, f)), b, axis=axis, keepdims=keep)
        if f in ("sum", "prod") and not is_float(cd):
            # docs/tensors.md, Other rules: integer sums and products are
            # exact, an error when the result does not fit (NumPy wraps)
            exact = getattr(np, f)(a.astype(object), axis=axis, keepdims=keep)
            if any(not -2 ** 63 <= int(v) < 2 ** 63 for v in np.asarray(exact).reshape(-1)):
                raise Refused("integer overflow")
        return np.asarray(r).astype(NP[rd])
    return text, value


def reshape_op(rng, x):
    tx, a = x
    n = a.size
    dims = []
    rest = n
    for _ in range(rng.randint(0, 3)):
        divs = [k for k in range(1, 5) if rest % k == 0] if rest else [0, 1, 2]
        k = rng.choice(divs)
        dims.append(k)
        rest = rest // k if k else rest
    dims.append(rest)
    rng.shuffle(dims)
    if rng.random() < 0.1:
        dims[rng.randrange(len(dims))] += 1
    if rng.random() < 0.5:
        dims[rng.randrange(len(dims))] = -1
    shape = tuple(dims)
    form = rng.random()
    if form < 0.4:
        text = "%s.reshape(%r)" % (tx, shape)
    elif form < 0.7 and shape:
        text = "%s.reshape(%s)" % (tx, ", ".join(map(str, shape)))
    else:
        text = "reshape(%s, %r)" % (tx, shape)
    return text, lambda: np_call(np.reshape, a, shape)


def transpose_op(rng, x):
    tx, a = x
    r = rng.random()
    if r < 0.3:
        return "%s.T" % tx, lambda: a.T
    perm = list(range(a.ndim))
    rng.shuffle(perm)
    if rng.random() < 0.05 and perm:
        perm[0] = perm[-1] if len(perm) > 1 else 5
    if r < 0.6:
        return "transpose(%s, %r)" % (tx, tuple(perm)), lambda: np_call(np.transpose, a, perm)
    return "%s.transpose(%s)" % (tx, ", ".join(map(str, perm))), lambda: np_call(np.transpose, a, perm)


def join_op(rng, x):
    tx, a = x
    f = rng.choice(["concat", "stack"])
    nd = a.ndim
    axis = rng.randint(-nd - (f == "stack"), nd - (f == "concat")) if nd or f == "stack" else 0
    parts = [(tx, a)]
    for _ in range(rng.randint(0, 2)):
        shape = list(a.shape)
        if f == "concat" and nd and rng.random() < 0.7:
            shape[axis % nd] = rng.choice([0, 1, 2, 3])
        if rng.random() < 0.05:
            shape = list(rand_shape(rng))
        parts.append(leaf(rng, tuple(shape)))
    rd = promote(*[dtype_of(p[1]) for p in parts])
    arrays = [p[1].astype(NP[rd]) for p in parts]
    text = "%s([%s], axis=%d)" % (f, ", ".join(p[0] for p in parts), axis)
    g = np.concatenate if f == "concat" else np.stack
    return text, lambda: np_call(g, arrays, axis=axis)


def refuse(idx, shape):
    why = _subscripts.mist_refuses(idx, shape)
    if why:
        raise Refused(why)


def getitem_op(rng, x):
    tx, a = x
    idx, text = _subscripts.rand_index(rng, a.shape)

    def value():
        refuse(idx, a.shape)
        return np.asarray(np_call(a.__getitem__, idx))
    return "%s%s" % (tx, text), value


def rand_subscript(rng, a):
    """A random subscript of a: (numpy object, Mist text, the shape it
    selects, () when NumPy refuses it)."""
    idx, text = _subscripts.rand_index(rng, a.shape)
    try:
        return idx, text, np.shape(a[idx])
    except (IndexError, ValueError):
        return idx, text, ()


def setitem_stmts(rng, x):
    """(statements, value): r = x; r[i] = v."""
    tx, a = x
    idx, text, sel_shape = rand_subscript(rng, a)
    if rng.random() < 0.4:
        v = rng.choice([rng.randint(-3, 3), rng.randint(-8, 8) / 4, True])
        tv, vv = fmt(v), v
    else:
        tv, vv = leaf(rng, broadcastable_shape(rng, sel_shape))

    def value():
        refuse(idx, a.shape)
        sel = np.asarray(np_call(a.__getitem__, idx))
        v = mist_cast(vv, dtype_of(a))
        # a value may have more axes than the place it goes to when the
        # extra leading ones have size 1 (NumPy's rule, which its path
        # for one bool mask forgets)
        while v.ndim > sel.ndim and v.shape[0] == 1:
            v = v.reshape(v.shape[1:])
        # docs/tensors.md, Indexing: the value must broadcast to the
        # selection, also an empty one (NumPy lets an array index that
        # selects nothing take any value)
        np_call(np.broadcast_to, v, sel.shape)
        r = a.copy()
        np_call(r.__setitem__, idx, v)
        return r
    return ["r = %s" % tx, "r%s = %s" % (text, tv)], value


def astype_op(rng, x):
    tx, a = x
    d = rng.choice(DTYPES)
    text = "%s.astype(%r)" % (tx, d) if rng.random() < 0.7 else "astype(%s, %r)" % (tx, d)
    return text, lambda: mist_cast(a, d)


def matmul_op(rng, x):
    tx, a = x
    if a.ndim == 0 or rng.random() < 0.05:
        bshape = rand_shape(rng)
    elif a.ndim == 1:
        bshape = (a.shape[0],) if rng.random() < 0.5 else (a.shape[0], rng.randint(1, 3))
    else:
        k = a.shape[-1]
        batch = broadcastable_shape(rng, a.shape[:-2]) if rng.random() < 0.5 else ()
        bshape = (k,) if rng.random() < 0.3 else batch + (k, rng.randint(0, 3))
    tb, b = leaf(rng, bshape)
    rd = promote(dtype_of(a), dtype_of(b))
    if rd == "bool":
        rd = "i64"   # docs/tensors.md (*): arithmetic (and @) on two bools computes in i64
    text = "(%s @ %s)" % (tx, tb) if rng.random() < 0.6 else "matmul(%s, %s)" % (tx, tb)
    return text, lambda: np.asarray(np_call(np.matmul, a.astype(NP[rd]), b.astype(NP[rd])))


def grad_stmts(rng, x):
    """(statements, value): the gradient of sum(W * x[i]) or of
    sum(W * (x with x[i] = v)) by Mist's grad, against the sums NumPy
    makes: an element read k times gets the k weights it meets (its
    position in x counted with bincount), an element written gets none,
    and v gets the weights of the places it was written to, summed over
    the axes it was broadcast along."""
    tx, a = x
    idx, text, sel_shape = rand_subscript(rng, a)
    tw, w = leaf(rng, sel_shape, rng.choice(["f32", "f64"]))
    positions = np.arange(a.size).reshape(a.shape)
    if rng.random() < 0.5:
        def value():
            refuse(idx, a.shape)
            at = np.asarray(np_call(positions.__getitem__, idx))
            weights = np.broadcast_to(w, at.shape).astype(np.float64).reshape(-1)
            g = np.bincount(at.reshape(-1), weights=weights, minlength=a.size)
            return g.reshape(a.shape).astype(a.dtype)
        return ["r = grad(lambda t: (t%s * %s).sum())(%s)" % (text, tw, tx)], value
    tw, w = leaf(rng, a.shape, rng.choice(["f32", "f64"]))
    tv, v = leaf(rng, broadcastable_shape(rng, sel_shape), rng.choice(["f32", "f64"]))
    try:
        at = positions[idx]
        # an element written twice takes one of its values, which one is
        # not promised: then only the gradient with respect to x
        wrt_v = len(np.unique(at)) == np.size(at) and rng.random() < 0.5
    except (IndexError, ValueError):
        wrt_v = False

    def value():
        refuse(idx, a.shape)
        at = np.asarray(np_call(positions.__getitem__, idx))
        vv = v
        while vv.ndim > at.ndim and vv.shape[0] == 1:
            vv = vv.reshape(vv.shape[1:])
        np_call(np.broadcast_to, vv, at.shape)
        if not wrt_v:
            kept = np.ones(a.size)
            kept[at.reshape(-1)] = 0
            return np.where(kept.reshape(a.shape) == 1, w.astype(np.float64), 0.0).astype(a.dtype)
        g = w.astype(np.float64).reshape(-1)[at]
        g = g.sum(axis=tuple(range(at.ndim - vv.ndim))) if at.ndim > vv.ndim else g
        g = g.sum(axis=tuple(k for k in range(vv.ndim) if vv.shape[k] == 1 and g.shape[k] != 1), keepdims=True)
        return g.reshape(v.shape).astype(v.dtype)
    return ["def gf(t, v):", "    r = t", "    r%s = v" % text, "    return (r * %s).sum()" % tw,
            "r = grad(gf, argnums=%d)(%s, %s)" % (int(wrt_v), tx, tv)], value


EXPR_OPS = [binop, binop, compare, where_op, unary, reduce_op, reshape_op, transpose_op, join_op,
            getitem_op, getitem_op, astype_op, matmul_op]


def make_case(rng):
    """(Mist statements ending with r bound, expected array or a Refused)."""
    x = leaf(rng)
    stmts = []
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        if rng.random() < 0.12 or (rng.random() < 0.12 and is_float(dtype_of(x[1]))):
            more, value = (setitem_stmts if rng.random() < 0.5 or not is_float(dtype_of(x[1]))
                           else grad_stmts)(rng, x)
            stmts += more
            t = "r"
        else:
            t, value = rng.choice(EXPR_OPS)(rng, x)
            if len(t) > 400:
                stmts.append("r = %s" % t)
                t = "r"
        try:
            x = (t, np.asarray(value()))
        except Refused as e:
            return stmts + ["r = %s" % t], e
    return stmts + ["r = %s" % x[0]], x[1]


def run_mist(mist, lines):
    with tempfile.NamedTemporaryFile("w", suffix=".ms", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        return subprocess.run([mist, path], capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)


def parse(text):
    """The three lines a case prints: shape, dtype, tolist()."""
    lines = text.split("\n")
    env = {"nan": float("nan"), "inf": float("inf"), "True": True, "False": False}
    return eval(lines[0], env), lines[1], eval(lines[2], env)


def agree(want, got_text):
    """None when Mist's printed result matches want, else what differs."""
    try:
        shape, d, vals = parse(got_text)
    except Exception:
        return "unreadable output %r" % got_text
    if tuple(shape) != want.shape:
        return "shape %r, numpy %r" % (shape, want.shape)
    if d != dtype_of(want):
        return "dtype %s, expected %s" % (d, dtype_of(want))
    g = np.array(vals, dtype=np.float64).reshape(want.shape)
    w = want.astype(np.float64)
    # f32 values met on the way (exp of a bool, say) may differ by an ulp
    # from NumPy's, also when they end in an f64
    tol = 2e-5 if is_float(d) else 0
    if not np.allclose(g, w, rtol=tol, atol=tol, equal_nan=True):
        return "values %r, expected %r" % (vals, want.tolist())
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mist = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    ncases = int(sys.argv[3]) if len(sys.argv) > 3 else 600
    rng = random.Random(seed)
    cases = [make_case(rng) for _ in range(ncases)]
    good = [(s, w) for s, w in cases if not isinstance(w, Refused)]
    refused = [(s, w) for s, w in cases if isinstance(w, Refused)]
    bad = []
    # The cases that must give a value, in one run; one that stops it with
    # an error is reported, and the run goes on from the case after it.
    start = 0
    while start < len(good):
        program, first_line = [], []
        for stmts, _ in good[start:]:
            first_line.append(len(program) + 1)
            program += stmts
            program += ["print(r.shape)", "print(r.dtype)", "print(r.tolist())", 'print("----")']
        run = run_mist(mist, program)
        done = run.stdout.split("----\n")[:-1]
        failed = None
        if run.returncode != 0:
            # the case whose line the error names (FILE:LINE:COL); a
            # syntax error stops the cases before it from running too
            err = run.stderr.strip().split("\n")[0]
            m = re.match(r"[^:]*:(\d+):\d+: ", err)
            failed = bisect.bisect_right(first_line, int(m.group(1))) - 1 if m else len(done)
            done = done[:failed]
        for (stmts, want), got in zip(good[start:], done):
            why = agree(want, got)
            if why:
                bad.append((stmts, why))
        if failed is None and len(done) < len(good) - start:
            bad += [(stmts, "no output from mist") for stmts, _ in good[start + len(done):]]
            break
        start += len(done)
        if failed is not None and start + failed - len(done) < len(good):
            stmts = good.pop(start + failed - len(done))[0]
            bad.append((stmts, "mist raised where NumPy did not: %s" % err))
    # The cases NumPy refuses, one run each: Mist must raise (status 1,
    # an error message), not crash and not give a value.
    for stmts, why in refused:
        run = run_mist(mist, stmts)
        if run.returncode != 1 or "error:" not in run.stderr:
            bad.append((stmts, "numpy raised (%s), mist: status %d, %s" % (
                why, run.returncode, (run.stderr or run.stdout).strip()[:300])))
    for stmts, why in bad[:int(os.environ.get("SHOW", 8))]:
        print("differs: %s\n  %s" % (why, "\n  ".join(stmts)))
    print("%d of %d programs agree with NumPy (%d raise in both), seed %d" % (
        ncases - len(bad), ncases, len(refused), seed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
