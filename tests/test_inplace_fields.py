"""A method run as written (no gradient flows through the call) that changes in place an
array field the differentiated code read before: ``y = MODEL.predict(x); MODEL.step()``
with ``self.v += 0.5`` in ``step``. The backward sweep keeps the array it read, so it would
read the changed values: main gave the gradient of another function, silently (9 where
6.75 is right). Now it is refused when it happens, at the user's line, with a fix that
works (bind a new array); a field only the object holds (a running statistic updated in
place, never read for the output) goes on as before. Gradients checked by hand and against
central differences of the primal run from the same state, float64 and float32.
"""

import numpy as np
import pytest

import pullback
from pullback import NotDifferentiableError
from pullback.errors import UnsupportedCallError


class Model:
    def __init__(self, dtype=np.float64):
        self.v = np.array([1.0, 2.0], dtype=dtype)
        self.running = np.zeros(2, dtype=dtype)

    def predict(self, x):
        return np.sum(self.v * x**2)

    def step(self):
        self.v += 0.5

    def step_rebinding(self):
        self.v = self.v + 0.5

    def step_by_index(self):
        self.v[0] = 0.0

    def step_fill(self):
        self.v.fill(3.0)

    def step_copyto(self):
        np.copyto(self.v, np.array([4.0, 5.0]))

    def step_out(self):
        np.multiply(self.v, 2.0, out=self.v)

    def step_through_helper(self):
        self._update(0.25)

    def _update(self, rate):
        self.v -= rate

    def track(self, x):
        self.running *= 0.9
        self.running += 0.1 * x


MODEL = Model()


def reset(dtype=np.float64):
    global MODEL
    MODEL = Model(dtype)


def helper(x, name):
    y = MODEL.predict(x)
    getattr(MODEL, name)()
    return y


def direct(x):
    y = MODEL.predict(x)
    MODEL.step()
    return y * 1.5


def through_helper(x):
    return helper_step(x) * 1.5


def helper_step(x):
    y = MODEL.predict(x)
    MODEL.step()
    return y


def rebinding(x):
    y = MODEL.predict(x)
    MODEL.step_rebinding()
    return y * 1.5


def tracked(x):
    y = MODEL.predict(x)
    MODEL.track(x)
    return y * 1.5


def by_index(x):
    y = MODEL.predict(x)
    MODEL.step_by_index()
    return y


def fill(x):
    y = MODEL.predict(x)
    MODEL.step_fill()
    return y


def copyto(x):
    y = MODEL.predict(x)
    MODEL.step_copyto()
    return y


def out(x):
    y = MODEL.predict(x)
    MODEL.step_out()
    return y


def nested(x):
    y = MODEL.predict(x)
    MODEL.step_through_helper()
    return y


X = np.array([1.5, 0.5])


@pytest.mark.parametrize(
    "f", [direct, through_helper, by_index, fill, copyto, out, nested], ids=lambda f: f.__name__
)
def test_a_field_changed_in_place_after_it_was_read_is_refused(f):
    reset()
    with pytest.raises(NotDifferentiableError) as info:
        pullback.grad(f)(X)
    text = str(info.value)
    assert "test_inplace_fields.py:" in text
    assert "() changed the array in the field 'v' of its object in place" in text


def test_golden_message():
    reset()
    with pytest.raises(NotDifferentiableError) as info:
        pullback.grad(direct)(X)
    line = direct.__code__.co_firstlineno + 2
    assert str(info.value) == (
        f"{__file__}:{line}:5: Model.step() changed the array in the field 'v' of its object "
        "in place, after the differentiated code read it (the call carries no gradient and "
        "runs as written): the backward sweep keeps that array and would read the changed "
        "values, a gradient of another function.\n"
        "Fix: in Model.step, bind the field to a new array instead (`self.v = self.v + ...` "
        "for `self.v += ...`), or make the call after the gradient is computed."
    )


def differences(f, x, dtype, eps):
    out = np.zeros_like(x, dtype=np.float64)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        reset(dtype)
        hi = f(x + e)
        reset(dtype)
        lo = f(x - e)
        out[k] = (hi - lo) / (2 * eps)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [rebinding, tracked], ids=lambda f: f.__name__)
def test_the_fix_and_fields_only_the_object_holds(f, dtype):
    x = X.astype(dtype)
    reset(dtype)
    got = pullback.grad(f)(x)
    assert MODEL.v.tolist() == ([1.5, 2.5] if f is rebinding else [1.0, 2.0])  # ran once
    want = 1.5 * 2 * np.array([1.0, 2.0]) * X  # the v the prediction read
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=rtol)
    eps = 1e-6 if dtype == np.float64 else 1e-2
    np.testing.assert_allclose(differences(f, x, dtype, eps), want, rtol=1e-4)


def test_a_call_that_changes_nothing_read_is_not_watched_twice():
    reset()
    assert pullback.grad(tracked)(X).tolist() == (3.0 * np.array([1.0, 2.0]) * X).tolist()
    np.testing.assert_allclose(MODEL.running, 0.1 * X)


@pytest.mark.parametrize("f", [rebinding, tracked], ids=lambda f: f.__name__)
def test_second_order_runs_the_call_once(f):
    reset()
    got = pullback.hessian(f)(X)
    np.testing.assert_allclose(got, np.diag(3.0 * np.array([1.0, 2.0])), rtol=1e-12)
    if f is rebinding:
        assert MODEL.v.tolist() == [1.5, 2.5]
    else:
        np.testing.assert_allclose(MODEL.running, 0.1 * X)


@pytest.mark.parametrize("f", [direct, through_helper], ids=lambda f: f.__name__)
def test_second_order_refuses_too(f):
    # (where the method runs in the function differentiated twice, the recompute's own
    # check refuses first: PB107, the call's state changed; in a helper's, this guard)
    reset()
    with pytest.raises((NotDifferentiableError, UnsupportedCallError)) as info:
        pullback.hessian(f)(X)
    text = str(info.value)
    assert "PB107" in text or "Model.step() changed the array" in text
    assert "test_inplace_fields.py:" in text
