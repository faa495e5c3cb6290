"""The pipeline that turns one user function into its generated adjoint.

>>> import numpy as np
>>> from pullback.registry import default_registry
>>> def f(x):
...     return np.sin(x) * x
>>> adj = build_adjoint(f, ("x",), default_registry(), lambda fn, act: None)  # doctest: +SKIP
>>> y, pullback = adj.forward(0.5)                                           # doctest: +SKIP
"""

from __future__ import annotations

from ..guards import WorldGuard
from ..lazy_patterns import LazyPattern
from .analyze import analyze
from .code import Line
from .codegen import generate
from .dunder_operators import dispatch_operators, dispatches_operators
from .kinds import SCALAR
from .pipeline import accepting_user_keywords, collector_paused, prepare
from .reverse import ReverseBuilder


class Adjoint:
    """A generated adjoint: ``forward(*args, **kwargs) -> (value, pullback)``.

    ``pullback(dvalue)`` returns a tuple with the cotangent of each parameter in ``wrt``
    (in parameter order). ``gradient`` and ``vjp`` are the differentiable-again variants
    (compiled on first use).
    """

    # A plain class, not a dataclass: dataclasses cost about half a millisecond each at
    # import, which every cold start pays.
    def __init__(self, fn, wrt, forward, backward, source, filename, line_map, fs,
                 higher=None, guard=None, calls_user_code=False, fused=None,
                 concrete=frozenset()):  # fmt: skip
        self.fn = fn
        self.wrt = wrt
        self.forward = forward
        self.backward = backward
        self.source = source
        self.filename = filename
        self.line_map = line_map
        self.fs = fs
        self.higher = higher
        self.guard = guard  # () -> bool: everything this adjoint baked in is unchanged
        self.calls_user_code = calls_user_code  # recursion needs more frames than the primal
        self._higher_done = None
        self.fused = fused  # () -> (fused sweeps, first reverse line) or None (codegen)
        self._fused_done = None
        # parameters whose cotangents the fused sweeps return concrete (arrays of their
        # shape and dtype, writable: what materialize gives), so grad's hot entry hands
        # them out unchecked (transform/direct_reads.py)
        self.concrete = concrete

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def replace(self, **changes) -> Adjoint:
        """A copy of this adjoint with ``changes`` (attribute -> value) made to it."""
        new = object.__new__(Adjoint)
        new.__dict__.update(self.__dict__)
        for name, value in changes.items():
            if name not in new.__dict__:
                raise TypeError(f"Adjoint has no field {name!r}")
            setattr(new, name, value)
        return new

    def _differentiable_again(self):
        if self._higher_done is None:
            self._higher_done = self.higher()
        return self._higher_done

    def fused_sweeps(self):
        """``(fn, line)``: both sweeps as one function ``fn(seed, *args) -> (value,
        cotangents)``, errors from ``line`` on being the reverse sweep's; or None."""
        if self._fused_done is None:
            self._fused_done = (self.fused() if self.fused is not None else None,)
        return self._fused_done[0]

    @property
    def gradient(self):
        """The fused gradient function (forward, seed 1.0, reverse), differentiable again."""
        return self._differentiable_again()[0]

    @property
    def vjp(self):
        """``vjp(dvalue, *args)``: the cotangents of ``wrt``, differentiable again."""
        return self._differentiable_again()[1]

    def user_location(self, generated_line: int):
        """``(filename, line, source)`` of the user line a generated line came from."""
        k = generated_line - 1
        if 0 <= k < len(self.line_map) and self.line_map[k] is not None:
            line = self.line_map[k]
            return self.fs.filename, line, self.fs.file_line(line)
        return None


def build_adjoint(fn, wrt, registry, adjoint_of, check=True, kinds_key=None) -> Adjoint:
    """Transform ``fn`` into an :class:`Adjoint` differentiated in the parameters ``wrt``
    (``None`` means every parameter), specialized on the argument kinds in ``kinds_key``
    (``(positional kinds, sorted (name, kind) pairs)``, see :mod:`.kinds`)."""
    with collector_paused():
        return _build_adjoint(fn, wrt, registry, adjoint_of, check, kinds_key)


def _build_adjoint(fn, wrt, registry, adjoint_of, check, kinds_key) -> Adjoint:
    prepared = prepare(fn, wrt, registry, kinds_key, check)
    fs, params, wrt, norm = prepared.fs, prepared.params, prepared.wrt, prepared.norm
    loops, activity, kinds = prepared.loops, prepared.activity, prepared.kinds
    diagnostic = prepared.diagnostic
    # `a + b` of an object (a parameter of unknown kind only where the kinds are the call's)
    if families := dispatches_operators(fn, fs):
        objects = params if kinds_key else ()
        varies = activity.varied.__contains__
        if dispatch_operators(norm.tree, kinds, activity.is_active, objects, families, varies):
            # d[x] became d.__pb_getitem__(x): a float key (an interpolant's f[x, y]) is
            # now an argument whose cotangent the user's method gives
            activity = analyze(norm.tree, list(wrt), registry)

    builder = ReverseBuilder(
        fs, norm, loops, activity, registry, wrt, adjoint_of, diagnostic, kinds
    )
    builder.plan_pullbacks()
    forward, backward, saved, ret_name = builder.build()
    stacks = [
        info.stack
        for info in loops
        if getattr(info, "has_reverse", False) and (info.snapshot or info.reverse_target is None)
    ]
    # Names saved or snapshotted that some path may leave unassigned start as None: any
    # saved name may be skipped by an early return (including the sweeps' own, such as a
    # loop's range), so every one that is not a parameter starts bound.
    top_level = _assigned_at_top_level(forward)
    stacked = set(stacks)  # (a set: one test per saved name, not a scan of every loop's)
    init_names = sorted(
        {n for info in loops for n in getattr(info, "snapshot", []) if n not in params}
        | {n for n in saved if n not in params and n not in top_level and n not in stacked}
        | {n for info in loops for n in info.unbound_at_entry}
    )
    code = generate(
        fs,
        fs.tree,
        forward,
        backward,
        saved,
        ret_name,
        init_names,
        stacks,
        norm.namespace,
        builder.gradient_return,
        names=(builder.saved, builder.dret),
        vjp_return=builder.vjp_return,
        releasable=_may_hold_array(kinds, builder.prefix, builder.dret),
    )
    return Adjoint(
        fn=fn,
        wrt=wrt,
        forward=accepting_user_keywords(code.forward, prepared.renames),
        backward=code.backward,
        source=code.source,
        filename=code.filename,
        line_map=code.line_map,
        fs=fs,
        higher=code.higher,
        guard=WorldGuard.from_source(fs, norm.live),
        calls_user_code=builder.calls_user_code,
        fused=code.fused,
        concrete=frozenset(builder.concrete),
    )


_TARGETS = LazyPattern(r"^\s*([^\W\d]\w*(?:\s*,\s*[^\W\d]\w*)*)\s*=(?!=)")


def _assigned_at_top_level(forward) -> set[str]:
    """Names the forward sweep assigns on every path (its top-level lines, up to the first
    compound statement, after which an early return may skip the rest)."""

    names: set[str] = set()
    add, match_targets = names.add, _TARGETS.match
    for item in forward:
        if item.__class__ is not Line:  # (no class derives from Line)
            break
        match = match_targets(item.text)
        if match:
            found = match.group(1)
            if "," in found:
                names.update(n.strip() for n in found.split(","))
            else:  # one name (most lines): nothing around it to strip
                add(found)
    return names


def _may_hold_array(kinds, prefix: str, dret: str):
    """Which names of the fused sweeps are worth releasing after their last use (see
    :mod:`.release`): not those that hold a scalar (a primal of scalar kind, its adjoint,
    the output cotangent)."""

    def releasable(name: str) -> bool:
        base = name[len(prefix) :] if name.startswith(prefix) else name
        return name != dret and kinds.get(base) != SCALAR

    return releasable
