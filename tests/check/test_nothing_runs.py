"""For every code: grad(f) refuses the function before any of its code runs.

A profiler hook watches for a frame of the function's own code: it must never start while
pullback reads, checks and refuses the function (and does start when the function is
called, so the watch works).
"""

import inspect
import sys

import numpy as np
import pytest

import pullback
from pullback.errors import UnsupportedSyntaxError
from pullback.registry import default_registry

from . import cases

CASES = sorted(name for name in vars(cases) if name.startswith("pb"))


class BodyWatch:
    """Counts the frames of one code object that start while the watch is on."""

    def __init__(self, fn):
        self.code = fn.__code__
        self.started = 0

    def __enter__(self):
        self.previous = sys.getprofile()
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self.previous)

    def profile(self, frame, event, arg):
        if event == "call" and frame.f_code is self.code:
            self.started += 1


def arguments(fn):
    n = sum(
        1
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    return [np.linspace(0.5, 2.0, 4) for _ in range(n)]


@pytest.fixture(scope="module")
def registry():
    reg = default_registry().copy()
    reg.remove(sorted)  # the PB301 case relies on sorted having no rule
    return reg


@pytest.mark.parametrize("name", CASES)
def test_refused_before_the_body_runs(name, registry):
    fn = getattr(cases, name)
    args = arguments(fn)
    with BodyWatch(fn) as watch, pytest.raises(UnsupportedSyntaxError) as e:
        pullback.grad(fn, registry=registry)(*args)
    assert watch.started == 0, f"{name}: the body ran before the error"
    assert e.value.diagnostics[0].code == name[:5].upper()


def test_the_watch_sees_a_body_run():
    fn = cases.pb101_element
    with BodyWatch(fn) as watch:
        fn(np.ones(3), 0)
    assert watch.started == 1
