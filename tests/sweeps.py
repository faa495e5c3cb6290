"""Sampling broad test sweeps: every case under ``pytest --long``, a spread sample otherwise.

>>> import os
>>> os.environ.pop("PULLBACK_TESTS_LONG", None) and None
>>> sweep(list(range(10)), quick=3)
[0, 4, 9]
>>> os.environ["PULLBACK_TESTS_LONG"] = "1"
>>> len(sweep(list(range(10)), quick=3))
10
>>> del os.environ["PULLBACK_TESTS_LONG"]
"""

import os

# The switch reaches test modules through the environment because sweeps are parametrized
# at import, before any fixture exists; pytest-xdist workers run pytest_configure too.
LONG_RUN_VARIABLE = "PULLBACK_TESTS_LONG"


def long_run():
    """True under ``pytest --long`` (see tests/conftest.py)."""
    return os.environ.get(LONG_RUN_VARIABLE) == "1"


def sweep(cases, quick):
    """``cases`` whole under ``--long``; else ``quick`` of them spread evenly, first and last kept.

    The sample is deterministic (no seed to drift between runs), so a failure seen in the
    quick run is seen again, and every region of a sorted sweep stays represented.
    """
    cases = list(cases)
    if long_run() or quick >= len(cases):
        return cases
    if quick <= 1:
        return cases[:quick]
    step = (len(cases) - 1) / (quick - 1)
    return [cases[round(k * step)] for k in range(quick)]
