"""Operands that provably have one shape: ``unbroadcast`` is left out of their adjoints.

A row update of a stencil reads four blocks of one array and adds them::

    _t6 = g_2[_t4, 1:_t5]      # _t5 = -1
    _t9 = g_2[_t7, 1:_t8]
    _t10 = _t6 + _t9

``unbroadcast(d__t10, _t6)`` is the identity here, but the adjoint called it for every
operand of every row. This pass gives names a *shape key*; two operands with one key have
one shape, whatever the array's shape is:

* ``t = A[p1, p2, ...]`` where ``A`` is an array (its kind ``("array", ndim)``) and every
  part is an integer (a constant, a ``range`` loop's target, or a sum or difference of such)
  or a slice ``a:b`` (step absent or 1) with constant ``a >= 0`` (or absent) and constant
  ``b <= 0`` (or absent, as 0): such a slice has ``max(0, n + b - a)`` entries along an axis
  of length ``n``, so the key keeps ``b - a`` only. An integer part removes its axis
  whatever its value (out of range raises). The key names ``A`` and the *binding* of ``A``
  it was read from: the statement list it is in and how many times that list rebound
  ``A`` before the read; two reads in different lists never share a key;
* ``t = u op v`` (``+ - * / **``) where ``u`` and ``v`` have one key, or one of them is a
  scalar constant or a name of scalar kind: ``t`` has the other's key (``x[:-1] ** 2``);
  ``t = -u`` has ``u``'s key;
* ``t = ufunc(u, v, ...)`` (a NumPy ufunc of one output and no core dimensions, its
  inputs positional, no keyword) likewise: its result has its inputs' broadcast shape;
* parameters a caller guarantees to be arrays of one shape (``kinds[ONE_SHAPE]``, see
  :mod:`.kinds`: quad's node pass) share one key, and a read ``p[i, j]`` of as many
  integers as ``p``'s leading axes there has that key too (``p`` spread to ``p.shape +
  x.shape``: ``p[0]`` has ``x``'s shape).

>>> tree = gast.parse("def f(g):\\n    for i in range(3):\\n        a = g[i, 1:-1]\\n"
...                   "        b = g[i, :-2]\\n        c = a + b\\n        d = g[i, 1:]")
>>> keys = shape_keys(tree, {"g": ("array", 2)})
>>> keys["a"] == keys["b"] == keys["c"], keys["a"] == keys["d"]
(True, False)
>>> tree = gast.parse("def f(x, c, p):\\n    a = c * x\\n    b = np.exp(a)\\n"
...                   "    q = p[0]\\n    r = q * b")
>>> kinds = {"x": ("array", 1), "c": ("array", 1), "p": ("array", 2),
...          ONE_SHAPE: frozenset({("x", 0), ("c", 0), ("p", 1)})}
>>> from pullback.resolve import Callee  # (what resolve attaches to a call of np.exp)
>>> _ = [setattr(n, "pb_callee", Callee("object", np.exp)) for n in gast.walk(tree)
...      if isinstance(n, gast.Call)]
>>> keys = shape_keys(tree, kinds)
>>> keys["a"] == keys["b"] == keys["q"] == keys["r"] == keys["x"]
True
"""

from __future__ import annotations

import itertools

import gast
import numpy as np

from ..tree_walk import all_nodes
from .kinds import ONE_SHAPE, SCALAR
from .loop_identity import name_bindings

_SAME_SHAPE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
# The key of the parameters a caller made arrays of one shape (kinds[ONE_SHAPE]).
_ONE_SHAPE_KEY = ("one-shape",)


def _int_constant(node, consts):
    """The int value of a constant, ``-constant`` or a name bound once to one, else None."""
    if isinstance(node, gast.Name):
        node = consts.get(node.id)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _int_constant(node.operand, {})
        return None if inner is None else -inner
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


class _Prover:
    def __init__(self, tree, kinds):
        self.kinds = kinds
        self.keys: dict = {}
        nodes = all_nodes(tree)  # one walk (the order of ast.walk) for both facts
        counts, values = name_bindings(nodes)
        self.loop_targets: set[str] = {
            node.target.id
            for node in nodes
            if isinstance(node, gast.For)
            and isinstance(node.target, gast.Name)
            and isinstance(node.iter, gast.Call)
            and isinstance(node.iter.func, gast.Name)
            and node.iter.func.id == "range"
        }
        self.loop_targets = {n for n in self.loop_targets if counts.get(n) == 1}
        # names bound once: their one value (constants, index arithmetic)
        self.once = {n: v[0] for n, v in values.items() if counts.get(n) == 1}
        self.int_names: set[str] = set()
        self._blocks = itertools.count()
        # parameters of one shape after their leading axes (bound only by the call)
        self.one_shape: dict[str, int] = {}
        for name, axes in kinds.get(ONE_SHAPE, ()):
            kind = kinds.get(name)
            if (
                counts.get(name) == 1
                and name not in values
                and isinstance(kind, tuple)
                and kind[0] == "array"
                and isinstance(kind[1], int)
                and kind[1] > axes
            ):
                self.one_shape[name] = axes
                if axes == 0:
                    self.keys[name] = _ONE_SHAPE_KEY

    def is_int(self, node, depth=0) -> bool:
        if _int_constant(node, self.once) is not None:
            return True
        if depth > 8:
            return False
        if isinstance(node, gast.Name):
            if node.id in self.loop_targets:
                return True
            value = self.once.get(node.id)
        else:
            value = node
        return (
            isinstance(value, gast.BinOp)
            and isinstance(value.op, (gast.Add, gast.Sub))
            and self.is_int(value.left, depth + 1)
            and self.is_int(value.right, depth + 1)
        )

    def part(self, node):
        if isinstance(node, gast.Slice):
            if node.step is not None and _int_constant(node.step, self.once) != 1:
                return None
            lower = 0 if node.lower is None else _int_constant(node.lower, self.once)
            upper = 0 if node.upper is None else _int_constant(node.upper, self.once)
            if lower is None or upper is None or lower < 0 or upper > 0:
                return None
            return ("slice", upper - lower)
        return "int" if self.is_int(node) else None

    def read_key(self, value, binding):
        base = value.value
        if not isinstance(base, gast.Name):
            return None
        kind = self.kinds.get(base.id)
        if not (isinstance(kind, tuple) and kind[0] == "array" and isinstance(kind[1], int)):
            return None
        parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        keyed = tuple(self.part(p) for p in parts)
        if None in keyed:
            return None
        axes = self.one_shape.get(base.id, 0)
        if axes and len(keyed) == axes and all(k == "int" for k in keyed):
            return _ONE_SHAPE_KEY  # an element of p's leading axes: the common shape
        return ("read", binding(base.id), keyed)

    def operand_key(self, node):
        if isinstance(node, gast.Constant):
            ok = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
            return "scalar" if ok else None
        if isinstance(node, gast.Name):
            if self.kinds.get(node.id) == SCALAR:
                return "scalar"
            return self.keys.get(node.id)
        return None

    def block(self, stmts):
        block_id = next(self._blocks)
        rebound: dict[str, int] = {}

        def binding(name):
            return (block_id, name, rebound.get(name, 0))

        for s in stmts:
            if isinstance(s, gast.Assign) and len(s.targets) == 1:
                target = s.targets[0]
                if isinstance(target, gast.Name) and target.id in self.once:
                    key = self.value_key(s.value, binding)
                    if key is not None:
                        self.keys[target.id] = key
            for node in all_nodes(s):  # any binding in the statement (nested blocks too)
                if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                    rebound[node.id] = rebound.get(node.id, 0) + 1
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    self.block(inner)

    def value_key(self, value, binding):
        if isinstance(value, gast.Subscript):
            return self.read_key(value, binding)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
            key = self.operand_key(value.operand)
            return None if key == "scalar" else key
        if isinstance(value, gast.BinOp) and isinstance(value.op, _SAME_SHAPE_OPS):
            return _common((self.operand_key(value.left), self.operand_key(value.right)))
        if isinstance(value, gast.Call) and value.args and not value.keywords:
            callee = getattr(value, "pb_callee", None)
            fn = callee.obj if callee is not None and callee.kind == "object" else None
            if (  # (not a generalized ufunc: np.matmul's result is not its inputs' shape)
                type(fn) is np.ufunc
                and fn.signature is None
                and fn.nout == 1
                and fn.nin == len(value.args)
            ):
                return _common([self.operand_key(a) for a in value.args])
        return None


def _common(keys):
    """The key of an elementwise result of operands with ``keys`` (``"scalar"`` for a
    scalar): the one key of its array operands, else None."""
    found = None
    for key in keys:
        if key is None:
            return None
        if key == "scalar":
            continue
        if found is not None and key != found:
            return None
        found = key
    return found


def shape_keys(tree, kinds) -> dict:
    """``{name: key}``: names with one key have one shape (see the module docstring)."""
    prover = _Prover(tree, kinds)
    body = tree.body[0].body if isinstance(tree, gast.Module) else tree.body
    prover.block(body)
    return prover.keys
