"""Functions that raise and assert, for tests/test_raise_and_assert.py: in a module of
their own because pytest rewrites the `assert` statements of test modules, so that their
code no longer matches their source (pullback then refuses to differentiate them)."""

import numpy as np


class BadInput(Exception):
    pass


LIMIT = 10.0
v = 100.0  # a global a comprehension's own `v` must not read


def checked_square(x):
    if np.any(x < 0):
        raise BadInput(f"negative entry in {x}")
    assert np.all(x < LIMIT), f"an entry is over {LIMIT}"
    assert all(v > -1 for v in np.atleast_1d(x)), "the comprehension's v"
    return np.sum(x * x)


def singular(x):
    if x == 0.0:
        raise np.linalg.LinAlgError("singular")
    return 1.0 / x


def always_raises(x):
    raise BadInput(f"cannot evaluate at {x}")


def calls_always_raises(x, flag):
    if flag:
        return always_raises(x) * x
    return x * x


def assert_in_loop(x):
    s = 0.0
    for k in range(3):
        assert np.isfinite(s), "diverged"
        s = s + np.sin(x * k)
    return s
