"""Second-order cases: math, builtins, operator, ndarray methods and the runtime helpers
that generated code calls (see second_order_table.py)."""

from __future__ import annotations

import math
import operator

import numpy as np
from rule_inputs import make
from second_order_table import case
from test_math_rules import BINARY as MATH_BINARY
from test_math_rules import UNARY as MATH_UNARY
from test_operator_rules import BINARY as OPERATOR_BINARY

from pullback import default_registry


def rule_name(fn) -> str:
    """The name a rule is listed under (the key of its cases)."""
    return default_registry().lookup(fn).name


# -- elementwise (scalar) rules: their derivative functions are differentiated again ----
for _fn, _x in MATH_UNARY:
    case(rule_name(_fn), _x)
for _fn, _a, _b in MATH_BINARY:
    if default_registry().lookup(_fn).kind == "scalar":  # math.hypot is a rule: below
        case(rule_name(_fn), _a, _b)

for _op, _da, _db in OPERATOR_BINARY:
    case(rule_name(_op), make(_da, (2, 3)), make(_db, (3,), seed=1))
    case(rule_name(_op), float(make(_da, (), seed=2)), float(make(_db, (), seed=3)))
for _op in (operator.neg, operator.pos, operator.abs):
    case(rule_name(_op), make("nonzero", (2, 3)))

case("abs", make("nonzero", (3,)))
case("abs", -1.25)
case("pow", make("positive", (3,)), make("real", (3,), seed=1))
case("pow", 1.7, 2.3)
case("pow", make("real", (3,)), 3)

# -- the runtime helpers generated adjoints call (third derivatives go through these) ----
M = make("real", (3, 4))
N = make("real", (4, 2), seed=1)
G = make("real", (3, 2), seed=2)
V3 = make("real", (3,), seed=3)
V4 = make("real", (4,), seed=4)
case("pullback.tangents.densify", M)
case("pullback.runtime.as_sequence", [V3, V3 * 2.0])
case("pullback.unpacking.zip_bounded", [V3, V3 * 2.0], None, wrt=(0,))
case("pullback.runtime.sequence_cotangent", (V3, V4), (1.0, 2.0), wrt=(0,))
case("pullback.tangents.add", M, M[::-1])
case("pullback.tangents.unbroadcast", M, V4)
case("pullback.tangents.unbroadcast", M, np.zeros((1, 4)), wrt=(0,))
case("pullback.tangents.getitem_cotangent", [V3, V4], [V3, V4], 1, V4 * 2.0, wrt=(0, 3))
case("pullback.runtime.tuple_item", (V3,), 0)
case("pullback.runtime.matmul_lhs_cotangent", G, M, N)
case("pullback.runtime.matmul_lhs_cotangent", V3, V4, N[:, :1] @ np.ones((1, 3)))
case("pullback.runtime.matmul_lhs_cotangent", G[None] * 1.5, M[None], N)
case("pullback.runtime.matmul_rhs_cotangent", G, M, N)
case("pullback.runtime.matmul_rhs_cotangent", V3, M, V4)
case("pullback.runtime.matmul_rhs_cotangent", G[None] * 1.5, M, N[None])
case("pullback.runtime.pow_exponent_cotangent", V3, make("positive", (3,), seed=5), V3 * 0.5)
case("pullback.zero_safe.zero_safe_product", M, M * 0.5 + 1.0)
case("pullback.zero_safe.zero_safe_product", M, V4)  # (broadcast: summed back)
case("pullback.zero_safe.zero_safe_product", 1.5, -0.75)
case("pullback.runtime.dict_item", {"a": V3}, "a")
case("pullback.runtime.plus_cotangents", M, M, V4)
case("pullback.runtime.plus_cotangents", [V3, V4], [V3], [V4])
case("pullback.runtime.repeat_cotangent", [V3, V4, V3, V4], [V3, V4], 2, wrt=0)
case("pullback.runtime.repeat_cotangent", (1.5, 0.5, -2.0), (0.0,), 3, wrt=0)
case("pullback.read_folds.fold_reads", M, M, (1, V4, (0, V4 * 2.0, None)))
case("pullback.read_folds.fold_reads", [V3, V4], [V3, V4], (1, V4 * 0.5, None))
case("pullback.tangents.read_cotangent", M, M, (1, slice(None)), V4, wrt=(0,))
case("pullback.tangents.read_cotangent", M, M, slice(0, 2), V4, wrt=(0,))
case("pullback.tangents.broadcast_cotangent", V4, (3, 4), wrt=(0,))
case("pullback.where_masks.masked", M, np.arange(12).reshape(3, 4) % 3 > 0, wrt=(0,))
case("pullback.where_masks.masked", V4, None, wrt=(0,))
case("pullback.where_masks.kept", M, np.arange(12).reshape(3, 4) % 3 > 0, wrt=(0,))
case("pullback.where_masks.kept", V4, None, wrt=(0,))

# -- math functions that are rules ------------------------------------------------------
case("math.hypot", 3.0, -4.0)
case("math.hypot", 1.5, -2.0, 0.5)
case("math.hypot", 2.0)
case("math.dist", [1.0, 2.0, -0.5], [0.3, -1.0, 0.2])
case("math.dist", (1.0, 2.0), (0.5, 0.25))
case("math.fsum", [0.5, 1.5, -2.0])
case("copy.copy", M)
case("copy.deepcopy", M)
case("typing.cast", float, M, wrt=(1,))
case("typing.cast", "float", 1.7, wrt=(1,))
case("copy.deepcopy", [0.5, 1.5, -2.0])
case("dict.get", {"a": M, "b": 0.5}, "a")
case("dict.get", {"a": M}, "b", V3)
case("dict", {"a": M, "b": 0.5})
case("dict", [("a", M), ("b", 0.5), ("a", V3)])  # a repeated key: the last pair is kept
case("dict", (["a", 1.5], ["b", M]))
case("dict.copy", {"a": M, "b": V3})
case("math.prod", [0.5, 1.5, -2.0])
if hasattr(math, "sumprod"):  # Python 3.12+
    case("math.sumprod", [0.5, 1.5, -2.0], [1.25, -0.5, 0.75])
    case("math.sumprod", (0.5, 2.0), np.array([1.5, -1.0]))
case("math.prod", (0.5, 0.0, -2.0))
# a 1-d array argument: its cotangent is an array (generated code adds them with +)
case("math.prod", np.array([0.5, 1.5, -2.0]))
case("math.fsum", np.array([0.5, 1.5, -2.0]))
case("math.dist", np.array([1.0, 2.0, -0.5]), [0.3, -1.0, 0.2])
case("math.modf", 2.75)
case("math.frexp", 5.5)
case("operator.matmul", M, N)
case("operator.matmul", V3, M)

# -- ndarray methods and casts ------------------------------------------------------------
case("ndarray.item", M, (1, 2))
case("ndarray.item", M, 5)
case("ndarray.item", np.array([1.5]))
case("generic.item", np.float64(1.5))
case("generic.item", np.float32(-0.75))
case("ndarray.tolist", M)
# itemgetter of arrays (items read twice: summed); of lists the closure, refused by name
case("operator.itemgetter.__call__", operator.itemgetter(1), M)
case("operator.itemgetter.__call__", operator.itemgetter(0, 1, 0), np.array([0.5, 1.5, -2.0]))
case("operator.itemgetter.__call__", operator.itemgetter((1, 2), (0, slice(1, 3))), M)
case("ndarray.tolist", np.arange(8.0).reshape(2, 2, 2) * 0.1 + 0.3)
case("numpy.real_if_close", M)
case("math.ldexp", 1.5, 3)

# -- builtins with transformable pullbacks (builtins_pullbacks.py) ----------------------
case("float", np.float64(1.25))
case("float", np.array(-0.75))
case("sum", make("real", (4,), seed=8))
case("sum", [1.5, -0.5, 2.0])
case("sum", (V3, 2.0 * V3), 0.5)
case("max", [0.3, 1.7, -0.4])
case("max", 0.3, 1.2)
case("max", make("real", (4,), seed=9))
case("min", (0.3, -1.7, 0.4))
case("min", 0.3, 1.2, -0.5)
# the rows of a matrix: by a key, and (one element each) compared as arrays
case("max", make("real", (3, 2), seed=13), key=lambda row: float(row[0] - row[1]))
case("min", make("real", (4, 1), seed=14))
case("sorted", [0.3, 1.7, -0.4])
case("sorted", make("real", (4,), seed=12), reverse=True)
case("sorted", (V3, -2.0 * V3, 0.5 * V3), key=lambda v: float(v[0]))
case("sorted", [1.5, -0.5, 1.25, 0.25], key=abs)
case("list", make("real", (3,), seed=10))
case("list", (V3, 1.5))
case("tuple", make("real", (2, 3), seed=11))
case("tuple", [0.5, V3])
