"""A pullback error reaches the user with the user's frames only: the message names the
line and the fix, and the transform's twenty frames would bury it (errors.for_user)."""

import os
import sys
import traceback

import numpy as np
import pytest

import pullback
from pullback import (
    PullbackError,
    grad,
    hessian,
    hvp,
    jacobian,
    jvp,
    stacked_jvp,
    value_and_grad,
    vjp,
)

PACKAGE = os.path.dirname(os.path.abspath(pullback.__file__)) + os.sep
NEEDS_311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="Python 3.10 re-raises the caught traceback whole"
)


def _frames(exc):
    return [(f.filename, f.name) for f in traceback.extract_tb(exc.__traceback__)]


def _internal(frames):
    return [f for f in frames if f[0].startswith(PACKAGE) or f[0].startswith("<pullback")]


def refused(x):  # PB202 (a context manager) before anything runs
    with memoryview(x) as _m:
        y = np.sum(x)
    y = y + 0.0
    return y


def reinterpreted(x):  # refused by a rule while the gradient runs
    return np.sum(x.view(np.int64) * 1.0)


def _cube(x):
    return x**3


REGISTRY = pullback.RuleRegistry()


@pullback.rrule(_cube, registry=REGISTRY)
def _cube_rule(x):
    def cube_pullback(dy):
        raise pullback.RuleError("raised by the user's own rule")

    return _cube(x), cube_pullback


def calls_cube(x):
    return _cube(x) * x


def _raised(call):
    with pytest.raises(PullbackError) as info:
        call()
    return info.value


X = np.array([1.0, 2.0])


@NEEDS_311
@pytest.mark.parametrize(
    "call",
    [
        lambda: grad(refused)(X),
        lambda: value_and_grad(refused)(X),
        lambda: grad(reinterpreted)(X),
        lambda: grad(reinterpreted)(X),  # the second call: the cached adjoint's path
        lambda: grad(reinterpreted).into(np.zeros(2), X),
        lambda: vjp(reinterpreted, X)[1](1.0),
        lambda: jacobian(refused)(X),
        lambda: jacobian(reinterpreted, mode="forward")(X),
        lambda: hessian(reinterpreted)(X),
        lambda: hvp(reinterpreted)(X, X),
        lambda: jvp(reinterpreted, (X,), (X,)),
        lambda: stacked_jvp(refused, (X,), (np.eye(2),)),
    ],
    ids=[
        "check",
        "value_and_grad",
        "rule",
        "rule-again",
        "into",
        "vjp",
        "jacobian",
        "jacobian-forward",
        "hessian",
        "hvp",
        "jvp",
        "stacked_jvp",
    ],
)
def test_no_frame_of_pullback_reaches_the_user(call):
    exc = _raised(call)
    frames = _frames(exc)
    assert _internal(frames) == []
    assert frames[-1][0] == __file__  # the test's own call is what is left


@NEEDS_311
def test_the_users_own_frames_stay():
    # the user's rule runs as they wrote it (generated code is pullback's own)
    # (the error the rule raised is the cause of the one naming the user's line)
    exc = _raised(lambda: grad(calls_cube, registry=REGISTRY)(2.0))
    assert "test_error_tracebacks.py" in str(exc)
    cause = exc.__cause__
    assert [name for _, name in _frames(cause)] == ["cube_pullback"]
    assert _internal(_frames(exc)) == [] and _internal(_frames(cause)) == []


def test_the_full_traceback_on_request(monkeypatch):
    monkeypatch.setenv("PULLBACK_TRACEBACK", "full")
    exc = _raised(lambda: grad(reinterpreted)(X))
    assert _internal(_frames(exc)) != []


def test_the_message_is_unchanged():
    exc = _raised(lambda: grad(refused)(X))
    assert "PB202" in str(exc) and "test_error_tracebacks.py" in str(exc)
