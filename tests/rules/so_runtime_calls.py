"""Second-order cases for the reverse of calls found at run time and of star-calls
(``function_vjp``, ``method_vjp``, ``user_function_vjp``, ``star_call_vjp``,
``star_method_vjp``), the linear helpers around them (pullback.dynamic_reverse,
pullback.star_runtime) and the cotangent helpers of lists and dicts (pullback.containers):
each pullback is transformable and closes on these functions, so a third derivative of
user code through them runs (tests/test_third_order_runtime_calls.py checks that on user
code, and a fourth once). See second_order_table.py."""

from __future__ import annotations

import numpy as np
from second_order_table import case

import pullback  # noqa: F401 - installs the entry points the call site uses
from pullback.dynamic_vjps import vjp_function
from pullback.rules.user_function_calls import rule_site

_RNG = np.random.default_rng(13)
_X = _RNG.normal(size=3)
_G = _RNG.normal(size=3)


def cubic(x, y):
    return np.sin(x) * y**3 + x * x * y


def one(x):
    return np.sin(x) * x**3


def scaled(*xs):
    return xs[0] * np.cos(xs[1])


class Model:
    def __init__(self, w):
        self.w = w

    def energy(self, x, s):
        return self.w * np.sin(x) * s**2

    def shifted(self, x, *, s=1.0):
        return self.w * np.sin(x) * s**2


def keyword_only(x, *, s=1.0):
    return np.sin(x) * s**3


_MODEL = Model(np.array([0.5, -1.0, 2.0]))
_SITE = rule_site()
_D = "pullback.dynamic_vjps."
case(_D + "function_vjp", _SITE, _G, one, _X)
case(_D + "function_vjp", _SITE, 0.3, cubic, 0.4, 0.7)
case(_D + "function_vjp", _SITE, 1.3, scaled, 0.4, -0.9)  # a *args callee
case(_D + "method_vjp", _SITE, _G, _MODEL, "energy", _X, 1.2)
case("pullback.rules.user_function_calls.user_function_vjp", _G, one, _X)
case("pullback.rules.user_function_calls.user_function_vjp", 0.3, cubic, 0.4, 0.7)

_S = "pullback.star_runtime."
case(_S + "star_call_vjp", _SITE, False, 0.3, cubic, (0.4,), {"y": 0.7})  # moved to position
case(_S + "star_call_vjp", _SITE, False, _G, one, (_X,), {})
case(_S + "star_call_vjp", _SITE, False, 1.3, scaled, (0.4, -0.9), {})
case(_S + "star_call_vjp", _SITE, False, [0.5, -1.0, 2.0], sorted, ([0.3, 0.1, 0.2],), {})
case(_S + "star_method_vjp", _SITE, False, _G, _MODEL, "energy", (_X, 1.2), {})
# a keyword no position takes: through the callee's keyword shim (keyword_shims.py)
case(_S + "star_call_vjp", _SITE, True, _G, keyword_only, (_X,), {"s": 0.7})
case(_S + "star_method_vjp", _SITE, True, _G, _MODEL, "shifted", (_X,), {"s": 1.2})

# the linear helpers: cotangents laid out per argument and back, a star-call's operands
# and positional arguments, a permutation and its transpose
_F = "pullback.dynamic_reverse."
_LAYOUT = (_G, 0.5)  # what the vjp function of cubic returns: (dx, dy)
case(_F + "vjp_layout", cubic, _LAYOUT, 0, 1)
case(_F + "vjp_output", cubic, (None, _G, 0.5), 0, 1)
_VJP = vjp_function(_SITE, None, cubic, (0.3, 0.7), {})  # the generated vjp of cubic
case(_F + "vjp_apply", _SITE, 0.9, _VJP, (0.3, 0.7), {})
# (with keywords moved to positions: through star_call_vjp's case above, whose pullback
# spreads its operands; the probe does not take a dict of floats as an input)
case(_S + "star_spread", (_X, 0.4), ({},), 2, [], {}, ())
case(_S + "star_packed", (_X, 0.4, 1.5), 2, ["b"], {"b": 1.0}, ())
_ITEMS = ([0.3, 0.1, 0.2],)
case(_S + "star_permuted", (None, ([1.0, 2.0, 3.0],), 0.0), sorted, _ITEMS, {}, ())
case(_S + "star_unpermuted", [1.0, 2.0, 3.0], sorted, _ITEMS, {}, ())
# a star method call as the star-call of its function, the receiver first, and back
case(_S + "call_as_method", (None, (0.4, _X, 1.2), 0.0), 2, wrt=(0,))
case(_S + "method_as_call", (0.4, None, (_X, 1.2), 0.0), 2, wrt=(0,))
# an object called with keywords: its star-call's cotangents as its __call__'s and back
_O = "pullback.called_objects."
case(_O + "call_as_object_method", (0.4, (_X, 1.2), 0.0), wrt=(0,))
case(_O + "object_method_as_call", (0.4, None, (_X, 1.2), 0.0), wrt=(0,))
# a parameter passed at its default (solve_ivp's method before its args): no cotangent
case(_S + "star_defaults", (_X, 0.4, 0.0), {2: 2.5}, wrt=(0,))
case(_S + "star_unfilled", (_X, 0.4, 1.5), {2: 2.5}, wrt=(0,))

_C = "pullback.containers."
case(_C + "append_cotangent", [0.5, _X, 2.0])
case(_C + "append_cotangent", [_X, np.array([0.2, -0.4]), 1.5, -0.3])
case(_C + "append_cotangent_split", [0.5, _X, 2.0])
case(_C + "append_joined", ([0.5, _X], 2.0), [0.0, 0.0, 0.0])
case(_C + "dict_set_cotangent", {"a": 0.5, "b": _X}, "b")
# its transpose, whose result is a dict (paired key by key): the cotangents of the dict
# before d[key] = v (none at key) and of v
_KEYS = {"a": 0.0, "b": 0.0, "c": 0.0}
case(_C + "dict_joined", ({"a": 0.5}, 1.5), {"a": 0.0, "b": 0.0}, "b", wrt=(0,))
case(_C + "dict_joined", ({"a": _X, "c": -0.2}, _X), _KEYS, "b", wrt=(0,))

# a dict view's cotangent (d.items() found at run time) and its transpose: linear in
# their first argument; the dict gives only its keys
_V = "pullback.dict_views."
_PARAMS = {"w": 0.0, "b": 0.0}
case(_V + "view_cotangent_dict", [0.5, _X], _PARAMS, "values", wrt=(0,))
case(_V + "view_cotangent_dict", [(None, _X), (None, -0.4)], _PARAMS, "items", wrt=(0,))
case(_V + "dict_cotangent_view", {"w": 0.5, "b": _X}, _PARAMS, "values", wrt=(0,))
case(_V + "dict_cotangent_view", {"w": _X, "b": 1.5}, _PARAMS, "items", wrt=(0,))
# the function a call of a value runs in a derivative differentiated again: the value
# itself (its cotangent passes: a callable made from data varies in the next derivative)
case("pullback.dynamic_calls.as_constructed", _X)
