"""The quick/thorough switch of the test suite (tests/sweeps.py, tests/conftest.py)."""

import doctest
import gc

import pytest
import sweeps
from conftest import SurvivorsFrozen


def test_quick_sample_is_spread_and_deterministic(monkeypatch):
    monkeypatch.delenv(sweeps.LONG_RUN_VARIABLE, raising=False)
    cases = [f"case{k}" for k in range(11)]
    sample = sweeps.sweep(cases, quick=4)
    assert sample == ["case0", "case3", "case7", "case10"]
    assert sweeps.sweep(cases, quick=4) == sample
    assert sweeps.sweep(cases, quick=20) == cases
    assert sweeps.sweep(cases, quick=1) == ["case0"]


def test_long_run_keeps_every_case(monkeypatch):
    monkeypatch.setenv(sweeps.LONG_RUN_VARIABLE, "1")
    assert sweeps.long_run()
    assert sweeps.sweep(range(50), quick=5) == list(range(50))


def test_doctest(monkeypatch):
    monkeypatch.delenv(sweeps.LONG_RUN_VARIABLE, raising=False)
    assert doctest.testmod(sweeps).failed == 0


@pytest.mark.long
def test_marked_tests_run_only_when_long():
    assert sweeps.long_run()


def test_what_survives_a_full_collection_is_frozen_after_the_test():
    freezer = SurvivorsFrozen()
    enabled = gc.isenabled()
    gc.disable()  # only the collections the test asks for
    try:
        freezer.pytest_runtest_logfinish()  # no full collection yet: nothing to freeze
        assert not freezer.full_collection_ran
        gc.collect(1)  # a younger generation's collection is not a full one
        assert not freezer.full_collection_ran
        gc.collect()
        assert freezer.full_collection_ran
        kept = [[k] for k in range(100)]  # alive across the freeze
        freezer.pytest_runtest_logfinish()
        assert not freezer.full_collection_ran
        assert gc.get_freeze_count() >= len(kept)
        assert not any(x is kept for x in gc.get_objects())  # frozen: no collection walks it
    finally:
        freezer.pytest_unconfigure()
        if enabled:
            gc.enable()
    assert freezer._note not in gc.callbacks
