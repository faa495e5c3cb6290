"""`hypothesis <https://hypothesis.readthedocs.io>`_ strategies for inputs inside a
function's domain (hypothesis is needed only when these are called)."""

from __future__ import annotations

import numpy as np

#: Named input domains ``(low, high)``; each stays clear of its function's singular points.
DOMAINS = {
    "real": (-2.0, 2.0),
    "small": (-0.5, 0.5),
    "positive": (0.2, 3.0),
    "unit": (-0.9, 0.9),
    "open01": (0.05, 0.95),
    "above1": (1.1, 3.0),
    "nonzero": (-2.0, 2.0),  # with ``avoid=(0.0,)`` by default
}
_DEFAULT_AVOID = {"nonzero": (0.0,)}


def _domain(domain):
    if isinstance(domain, str):
        return DOMAINS[domain], _DEFAULT_AVOID.get(domain, ())
    return tuple(domain), ()


def arrays(dtype=np.float64, shape=(3,), domain="real", avoid=(), margin=0.1):
    """A hypothesis strategy for arrays of ``dtype`` and ``shape`` (a tuple or a strategy)
    whose elements lie in ``domain`` (a name from :data:`DOMAINS` or ``(low, high)``) and at
    least ``margin`` away from each point of ``avoid`` (non-differentiable points).
    """
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    (lo, hi), default_avoid = _domain(domain)
    avoid = tuple(avoid) + tuple(default_avoid)
    dtype = np.dtype(dtype)
    width = 32 if dtype in (np.float32, np.complex64) else 64
    if width == 32:  # bounds exactly representable in float32, inside the domain
        lo32, hi32 = np.float32(lo), np.float32(hi)
        lo = float(lo32 if lo32 >= lo else np.nextafter(lo32, np.float32(np.inf)))
        hi = float(hi32 if hi32 <= hi else np.nextafter(hi32, np.float32(-np.inf)))
    real = st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False)
    if avoid:
        real = real.filter(lambda v: all(abs(v - p) >= margin for p in avoid))
    elements = real
    if dtype.kind == "c":
        elements = st.builds(complex, real, real)
    return hnp.arrays(dtype, shape, elements=elements)


def distinct_arrays(dtype=np.float64, shape=(4,), domain="real", gap=0.05):
    """Arrays whose elements differ pairwise by at least ``gap`` (no ties: for sort,
    max, median...)."""
    from hypothesis import strategies as st

    (lo, hi), _ = _domain(domain)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if n * gap > hi - lo:
        raise ValueError("the domain is too small for that many distinct elements")
    slack = (hi - lo) - n * gap

    @st.composite
    def build(draw):
        cuts = sorted(draw(st.lists(st.floats(0, slack), min_size=n, max_size=n)))
        values = [lo + c + k * gap for k, c in enumerate(cuts)]
        order = draw(st.permutations(range(n)))
        return np.asarray([values[j] for j in order], dtype=dtype).reshape(shape)

    return build()


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A hypothesis strategy for ``num_shapes`` shapes that broadcast together."""
    from hypothesis.extra import numpy as hnp

    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes,
        min_dims=min_dims,
        max_dims=max_dims,
        min_side=min_side,
        max_side=max_side,
    ).map(lambda b: b.input_shapes)
