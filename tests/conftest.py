"""Shared pytest configuration.

Two speeds. The default run keeps the suite within its budget: hypothesis draws a few
examples per property, and broad sweeps run a deterministic sample of their cases. The
thorough run, ``pytest --long``, draws many examples (hypothesis profile ``long``) and runs
every case of every sweep; ``pytest --hypothesis-profile=long`` alone raises only the
hypothesis draws.

A sweep marks itself with ``@pytest.mark.long`` when the whole test belongs to the thorough
run, or samples its cases with :func:`sweep`, which keeps every case under ``--long``.
"""

import gc
import os

import pytest
from hypothesis import HealthCheck, settings
from sweeps import LONG_RUN_VARIABLE

settings.register_profile(
    "fast",
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("fast")


def pytest_addoption(parser):
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run every case of the broad sweeps and many hypothesis examples",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "long: part of the thorough run only (pytest --long)")
    config.pluginmanager.register(SurvivorsFrozen(), "pullback-survivors-frozen")
    if config.getoption("--long"):
        os.environ[LONG_RUN_VARIABLE] = "1"
        settings.load_profile("long")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="thorough run only: pytest --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


class SurvivorsFrozen:
    """After a test during which a full garbage collection ran, what survived it is frozen.

    A worker of a full run keeps alive what its earlier tests made (test modules, their
    functions, the adjoints cached on them): over a million objects late in the run, and
    every full collection, which the collector starts by itself each time the old
    generation has grown by a quarter, walks them all again (about a second each, most of
    a run's collector time). ``gc.freeze`` after such a collection moves the objects that
    survived it, which a test suite mostly keeps to its end, to the permanent generation:
    later collections walk only what was made since. Objects still die by their reference
    counts; a frozen cycle that becomes garbage is left (memory, never an answer). Frozen
    between tests only, so a test's own objects are collected as they always are.
    """

    def __init__(self):
        self.full_collection_ran = False
        gc.callbacks.append(self._note)

    def _note(self, phase, info):
        if phase == "stop" and info["generation"] == 2:
            self.full_collection_ran = True

    def pytest_runtest_logfinish(self):
        if self.full_collection_ran:
            self.full_collection_ran = False
            gc.freeze()

    def pytest_unconfigure(self):
        gc.callbacks.remove(self._note)


@pytest.fixture
def own_heap():
    """Keep what earlier tests left alive out of this test's garbage collections.

    A test that calls ``gc.collect()`` (to check that something it made is freed) or counts
    ``gc.get_objects()`` would otherwise scan every object the worker's earlier tests left
    alive: about 8 s a call late in a full run, against milliseconds alone. ``gc.freeze``
    moves those objects to the permanent generation, which collections and
    ``gc.get_objects()`` skip; the test's own objects are collected and counted as before, so
    a leak of something it made still shows. After the test, its garbage is collected (a
    collection of its own objects only) and what it left alive is frozen with the rest, as
    :class:`SurvivorsFrozen` would after a full collection: nothing frozen goes back to be
    walked by every later full collection.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()
