"""Second-order cases for every rule: the inputs at which reverse over reverse through a
rule's pullback is checked against finite differences of its gradient
(``test_second_order_coverage.py`` runs them and fails for a rule that has none).

Each rule family's cases live in a module ``so_<family>.py`` beside this one, which
calls :func:`case` once per input::

    case("numpy.tanh", X)                    # every float argument differentiated
    case("numpy.linalg.solve", A, b, wrt=(0, 1))
    case("scipy.stats.norm.logpdf", X, 0.3, 1.7)

The key is the rule's name as ``python -m pullback rules`` lists it.
"""

from __future__ import annotations

CASES: dict[str, list] = {}


def case(rule_name: str, *args, wrt=None, **kwargs) -> None:
    """Check ``rule_name`` to second order at ``fn(*args, **kwargs)`` (``wrt``: the
    differentiated argument positions; default every float argument)."""
    CASES.setdefault(rule_name, []).append((args, kwargs, wrt))


#: Cases that test_second_order_coverage.py runs itself although their family's cases run
#: elsewhere: scipy.linalg's factorizations, whose results are tuples and whose calls take
#: keywords, which that family's own runner (test_so_scipy_calculus.py) does not take.
COVERAGE_CASES: dict[str, list] = {}


def coverage_case(rule_name: str, *args, wrt=None, **kwargs) -> None:
    """As :func:`case`, for a case that test_second_order_coverage.py runs."""
    COVERAGE_CASES.setdefault(rule_name, []).append((args, kwargs, wrt))
