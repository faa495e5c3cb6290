"""Property test: programs generated *around* a differentiated function — globals, closure
cells, defaults, helpers, decorators, containers and methods — change between calls, and
every gradient must be the derivative of what the function computes at that moment.

Hypothesis draws which pieces the function uses and a sequence of changes to its world;
after each change both the gradient built at the start and a brand-new one are compared
with central finite differences of the function as it runs then.
"""

from __future__ import annotations

import importlib.util
import itertools
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from fd import numerical_grad
from hypothesis import given
from hypothesis import strategies as st

from pullback import grad

MODULE = '''
import functools

import numpy as np

G_SCALE = 1.5
G_VEC = np.array([0.5, -1.0, 2.0])
G_MODE = "sin"
CONFIG = {"p": 2.0}


def helper_square(x):
    return np.sum(x * x)


def helper_cube(x):
    return np.sum(x ** 3) / 3.0


def helper_sin(x):
    return np.sum(np.sin(x))


helper = helper_square


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def make_scaled(c):
    def scaled(x):
        return c * np.sum(np.tanh(x))

    def set_c(value):
        nonlocal c
        c = value

    return scaled, set_c


SCALED, SET_C = make_scaled(0.75)


class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.w * x * x)


MODEL = Model(np.array([1.0, 2.0, 3.0]))


{decorator}
def f(x, k={default}):
    return {body}
'''

TERMS = {
    "scalar": "G_SCALE * np.sum(x * x)",
    "array": "np.sum(G_VEC * x)",
    "flag": '(np.sum(np.sin(x)) if G_MODE == "sin" else np.sum(x ** 3))',
    "helper": "helper(x)",
    "default": "k * np.sum(x)",
    "closure": "SCALED(x)",
    "container": 'CONFIG["p"] * np.sum(x ** 2)',
    "method": "MODEL.loss(x)",
}


def _apply(mod, change, value):
    """Change the world of ``mod.f`` the way user code does between two calls."""
    if change == "scalar":
        mod.G_SCALE = value
    elif change == "array":
        mod.G_VEC = np.array([value, -value, 1.0 + value])
    elif change == "flag":
        mod.G_MODE = "cube" if mod.G_MODE == "sin" else "sin"
    elif change == "helper":
        options = [mod.helper_square, mod.helper_cube, mod.helper_sin]
        mod.helper = options[(options.index(mod.helper) + 1) % 3]
    elif change == "default":
        f = getattr(mod.f, "__wrapped__", mod.f)
        f.__defaults__ = (value,)
    elif change == "closure":
        mod.SET_C(value)
    elif change == "container":
        mod.CONFIG["p"] = value
    elif change == "method":
        mod.MODEL.w = mod.MODEL.w * value
    elif change == "instance":
        mod.MODEL = mod.Model(np.array([value, 1.0, -value]))


_serial = itertools.count()


def _load(text):
    folder = Path(tempfile.mkdtemp(prefix="pullback_world_"))
    name = f"pb_world_{next(_serial)}"
    path = folder / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check(mod, built, x):
    expected = numerical_grad(mod.f, (x,), 0)
    for g in (built, grad(mod.f)):
        np.testing.assert_allclose(g(x), expected, rtol=1e-5, atol=1e-6)


@given(
    terms=st.lists(st.sampled_from(sorted(TERMS)), min_size=1, max_size=4, unique=True),
    decorated=st.booleans(),
    changes=st.lists(
        st.tuples(
            st.sampled_from(sorted(TERMS) + ["instance"]),
            st.floats(0.25, 2.5, allow_nan=False),
        ),
        min_size=1,
        max_size=5,
    ),
    seed=st.integers(0, 2**16),
)
def test_gradients_follow_a_changing_world(terms, decorated, changes, seed):
    body = " + ".join(TERMS[t] for t in terms)
    text = (
        textwrap.dedent(MODULE)
        .replace("{decorator}", "@forwarding" if decorated else "")
        .replace("{default}", "0.5")
        .replace("{body}", body)
    )
    mod = _load(text)
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, 3)
    built = grad(mod.f)
    _check(mod, built, x)
    for change, value in changes:
        _apply(mod, change, value)
        _check(mod, built, x)
