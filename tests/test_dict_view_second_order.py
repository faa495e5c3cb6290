"""A second derivative through ``d.values()``/``d.items()`` is refused with the rewrite that
has one (reading the values by key); it said 'call the function by its name', which does
not apply to a dict's method (found by probe_fin)."""

import numpy as np
import pytest
from fd import check_hvp

import pullback

X = np.array([0.3, -0.7, 1.1])


def through_values(x):
    params = {"a": x[0], "b": x[1]}
    return sum(list(params.values())) * x[2]


def through_items(x):
    params = {f"w{i}": x[i] for i in range(3)}
    return sum(v**2 for _, v in params.items()) * params["w0"]


def values_by_key(x):
    params = {"a": x[0], "b": x[1]}
    return sum([params[k] for k in params]) * x[2]


def items_by_key(x):
    params = {f"w{i}": x[i] for i in range(3)}
    return sum(v**2 for _, v in [(k, params[k]) for k in params]) * params["w0"]


@pytest.mark.parametrize(
    "f,view", [(through_values, "dict.values()"), (through_items, "dict.items()")]
)
def test_second_derivative_through_a_dict_view_is_refused_with_the_rewrite(f, view):
    with pytest.raises(pullback.HigherOrderError) as info:
        pullback.hvp(f)(X, np.ones(3))
    message = str(info.value)
    assert f"a second derivative through '{view}' is not supported yet" in message
    assert "`[d[k] for k in d]`" in message


@pytest.mark.parametrize("f", [values_by_key, items_by_key])
def test_the_rewrite_has_second_derivatives(f):
    check_hvp(f, X, np.array([0.5, -1.0, 0.25]))
