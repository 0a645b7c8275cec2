"""_subscripts.py: random subscripts for the NumPy comparisons (a
module, not a test): ints, slices with negative steps, None, `...`, int
lists and tensors of any shape (empty ones too) and bool masks, several
in one subscript, adjacent or not, now and then out of bounds."""
import numpy as np


def rand_index(rng, shape):
    """A subscript as (numpy object, Mist source text)."""
    items, texts = [], []
    nd, axis = len(shape), 0
    used_ellipsis = False
    for _ in range(rng.randint(1, min(4, nd + 1))):
        r = rng.random()
        size = shape[axis] if axis < nd else 1
        if r < 0.25 and axis < nd:
            i = rng.randint(-size - (rng.random() < 0.05), max(size - 1, 0))
            items.append(i)
            texts.append(str(i))
            axis += 1
        elif r < 0.5 and axis < nd:
            a = rng.choice([None, rng.randint(-size - 1, size + 1)])
            b = rng.choice([None, rng.randint(-size - 1, size + 1)])
            c = rng.choice([None, 1, 2, -1, -2, -3])
            items.append(slice(a, b, c))
            texts.append("%s:%s:%s" % ("" if a is None else a, "" if b is None else b, "" if c is None else c))
            axis += 1
        elif r < 0.58:
            items.append(None)
            texts.append("None")
        elif r < 0.65 and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            texts.append("...")
        elif r < 0.88 and axis < nd:
            ishape = rng.choice([(2,), (3,), (1,), (0,), (2, 2), (2, 1), (1, 3)])
            hi = max(size - 1, 0)
            vals = np.array([rng.randint(-size, hi) for _ in range(int(np.prod(ishape)))],
                            dtype=np.int64).reshape(ishape)
            items.append(vals)
            if len(ishape) == 1 and ishape[0] and rng.random() < 0.5:
                texts.append(repr(vals.tolist()))
            else:
                texts.append("tensor(%r, dtype=%r).reshape(%r)" % (vals.reshape(-1).tolist(), "i64", ishape))
            axis += 1
        elif axis < nd:
            k = rng.randint(1, min(2, nd - axis))
            mshape = shape[axis:axis + k]
            m = np.array([rng.random() < 0.5 for _ in range(int(np.prod(mshape)))], dtype=bool).reshape(mshape)
            items.append(m)
            texts.append("tensor(%r, dtype=%r).reshape(%r)" % (m.reshape(-1).tolist(), "bool", tuple(mshape)))
            axis += k
    if not items:
        items, texts = [Ellipsis], ["..."]
    return tuple(items), "[" + ", ".join(texts) + "]"


def mist_refuses(idx, shape):
    """Why Mist refuses a subscript that NumPy 1.24 takes, or None
    (docs/tensors.md, Indexing):
    a bool mask whose shape does not match the axes it stands for, also
    when it is empty (NumPy takes an empty mask for any axis), and an
    index array holding an index out of bounds, also when the selection
    is empty (NumPy then looks at no index)."""
    fill = len(shape) - sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1
                            for i in idx if i is not None and i is not Ellipsis)
    axis = 0
    for i in idx:
        if i is Ellipsis:
            axis += max(fill, 0)
        elif isinstance(i, np.ndarray) and i.dtype == bool:
            if i.shape != tuple(shape[axis:axis + i.ndim]):
                return "boolean index did not match"
            axis += i.ndim
        elif i is not None:
            if isinstance(i, np.ndarray) and axis < len(shape) and (
                    (i < -shape[axis]) | (i >= shape[axis])).any():
                return "index out of bounds"
            axis += 1
    return None
