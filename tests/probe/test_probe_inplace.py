# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Probe: writes into local arrays as numerical code makes them.

sort of a copy, copyto/fill, ufuncs with out=, repeated and fancy index stores and +=,
np.put, row swaps, masked stores, diagonal stores, chains of in-place operators; and the
writes through aliases and views pullback refuses (PB101), with the rewrites the messages
name (which are probes too, with np.average's weights passed positionally and a list in a
dict rebuilt instead of appended to). Every probe to second order against central
differences.
"""

import numpy as np
import pytest
from probe_harness import check_probe, check_refusal


def sort_inplace_copy(x):
    a = x.copy()
    a.sort()
    return a[0] * 3 + a[2]


def copyto_fill(x):
    buf = np.empty(3)
    np.copyto(buf, x ** 2)
    buf2 = np.empty(2)
    buf2.fill(x[0])
    return np.sum(buf * np.arange(3.0)) + np.sum(buf2)


def ufunc_out(x):
    out = np.zeros(3)
    np.add(x, 1.0, out=out)
    np.multiply(out, x, out=out)
    return np.sum(out)


def repeated_index_store(x):
    a = np.zeros(3)
    a[[0, 0, 1]] = x
    return a @ np.array([1.0, 2.0, 3.0])


def fancy_plus_equals(x):
    a = np.zeros(3)
    a[[0, 0, 2]] += x
    return a @ np.array([1.0, 2.0, 3.0])


def put_place(x):
    a = np.zeros(4)
    np.put(a, [1, 3], x[:2])
    return np.sum(a * np.arange(4.0))


def swap_rows(x):
    M = np.stack([x, x ** 2, np.ones(3)])
    M[[0, 1]] = M[[1, 0]]
    return np.sum(M * np.arange(9.0).reshape(3, 3))


def bool_mask_store(x):
    a = x.copy()
    a[a < 0] = 0.0
    a[a > 1] = a[a > 1] ** 2
    return np.sum(a * np.array([1.0, 2.0, 3.0]))


def diag_write(x):
    M = np.zeros((3, 3))
    M[np.diag_indices(3)] = x
    M[0, 1] = x[2]
    return np.sum(M @ M)


def inplace_ops_chain(x):
    a = np.ones(3)
    a *= x
    a += x ** 2
    a /= 2.0
    a -= x[0]
    a **= 2
    return np.sum(a)


def alias_local(x):
    a = np.zeros(3)
    b = a
    b[0] = x[0] ** 2
    b[2] = x[1]
    return np.sum(a * np.arange(1.0, 4.0))


def column_view_write(x):
    M = np.zeros((3, 2))
    v = M[:, 0]
    v[:] = x * 2
    return np.sum(M ** 2) + M[1, 0]


def transpose_view_write(x):
    M = np.zeros((2, 3))
    M.T[0] = x[:2]
    return np.sum(M * np.arange(6.0).reshape(2, 3))


def overlapping_shift(x):
    a = x ** 2
    a[1:] = a[:-1]
    return a @ np.array([1.0, 2.0, 3.0])


def reshape_view_write(x):
    a = np.zeros(6)
    m = a.reshape(2, 3)
    m[1] = x
    return a @ np.arange(6.0)


def ravel_view_write(x):
    M = np.zeros((2, 3))
    flat = M.ravel()
    flat[:3] = x
    return np.sum(M * np.arange(6.0).reshape(2, 3))


def avg_pos(x, w=np.array([1.0, 2.0, 3.0])):
    return np.average(x ** 2, None, w) + np.average(x, None, x ** 2)


def dict_lists_fixed(x):
    hist = {"loss": []}
    for i in range(3):
        hist["loss"] = hist["loss"] + [x[i] ** 2]
    return sum(hist["loss"])


def overlap_fixed(x):
    a = x ** 2
    a[1:] = a[:-1].copy()
    return a @ np.array([1.0, 2.0, 3.0])



P3 = np.array([0.3, -0.7, 1.1])

PROBES = {
    "sort_inplace_copy": (sort_inplace_copy, (P3,), True),
    "copyto_fill": (copyto_fill, (P3,), True),
    "ufunc_out": (ufunc_out, (P3,), True),
    "repeated_index_store": (repeated_index_store, (P3,), True),
    "fancy_plus_equals": (fancy_plus_equals, (P3,), True),
    "put_place": (put_place, (P3,), True),
    "swap_rows": (swap_rows, (P3,), True),
    "bool_mask_store": (bool_mask_store, (P3,), True),
    "diag_write": (diag_write, (P3,), True),
    "inplace_ops_chain": (inplace_ops_chain, (P3,), True),
    "avg_pos": (avg_pos, (P3,), True),
    "dict_lists_fixed": (dict_lists_fixed, (P3,), True),
    "overlap_fixed": (overlap_fixed, (P3,), True),
    "overlapping_shift": (overlapping_shift, (P3,), True),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)


REFUSED = {
    "alias_local": (alias_local, (P3,), ("PB101", "b[0] = x[0] ** 2")),
    "column_view_write": (column_view_write, (P3,), ("PB101", "v[:] = x * 2")),
    "transpose_view_write": (
        transpose_view_write, (P3,), ("PB101", "`M[j, i] = ...` for `M.T[i, j] = ...`")
    ),
    "reshape_view_write": (
        reshape_view_write, (P3,), ("PB101", "'m' is `a.reshape(2, 3)`, which may be a view")
    ),
    "ravel_view_write": (
        ravel_view_write, (P3,), ("PB101", "'flat' is `M.ravel()`, which may be a view")
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    f, args, says = REFUSED[name]
    check_refusal(f, *args, says=says)
