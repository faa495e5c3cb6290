"""Stores into the rows of a local list of lists, ``rows[i][j] (op)= v``, refused at the
user's line when a row may be seen from another place (where Python would show the change).
The stores allowed — every row a new list only ``rows`` holds (list_analysis.rows_refusal)
— are checked with the slice stores, in tests/test_list_mutation_slices.py."""

import list_nested_cases as cases
import numpy as np
import pytest

from pullback import grad
from pullback.check import check
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, 0.7, -0.4, 1.1, 0.6])


@pytest.mark.parametrize("f", cases.REFUSED, ids=lambda f: f.__name__)
def test_a_row_seen_from_another_place_is_refused(f):
    found = check(f)
    assert [d.code for d in found] == ["PB106"], [d.header() for d in found]
    assert "changes a list inside 'rows'" in found[0].message
    assert found[0].line == f.__code__.co_firstlineno + _line(f)
    with pytest.raises(UnsupportedSyntaxError):
        grad(f)(X)


def _line(f):
    """The offset of the nested store's line from the function's first line."""
    import inspect

    lines = inspect.getsource(f).splitlines()
    return next(k for k, text in enumerate(lines) if "rows[" in text and "][0] = " in text)
