"""The second-order check of one rule (``pullback.testing.check_rrule_second_order``).

A rule is differentiable twice when the generated gradient of code that calls it can be
transformed again: the rule's pullback is a transformable function (``pullback_fn``) or,
for an elementwise rule, its derivative functions are. The check

1. asks the registry for that second-order path (an ``AssertionError`` names the rule that
   has none: a missing path is a failure, not a known gap);
2. compares ``pullback_fn(dy, *args, **kwargs)`` with the rule's own pullback ``pb(dy)``
   (they must agree to rounding: generated code calls the function in place of ``pb``);
3. builds a probe ``L(leaves) = Re <fn(*args, **kwargs), W>`` (``W`` fixed and random, the
   float leaves of the arguments as its parameters) as real source, so that pullback
   transforms it like user code, and compares the Hessian-vector product ``H u`` computed
   by reverse over reverse (``vjp`` of ``grad(L)``, every differentiated leaf at once, so
   the mixed terms of a bilinear rule count) with the finite difference of the gradient,
   ``<H u, v> = d/dt <grad L(x + t u), v>``, in the precision of the inputs.

Every call gets its own copies of the lists and dicts among the arguments (a rule may
change them in place: ``del xs[p]``), as the probe builds them anew at each call; named
tuples stay named tuples in the probe (``Point(p0, p1)``), and a result that is a dict is
paired key by key. An argument given as :class:`OnSimplex` (probabilities that sum to 1,
which finite differences would leave) reaches the rule as ``q / np.sum(q)`` of the probe's
parameter ``q``: the check then runs along the simplex. An argument given as
:class:`Built` (an object made from floats) is made by the probe from its parameters.
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np

from ..api import grad, vjp
from ..records_dataclasses import field_names, fields_of, is_dataclass_value
from ..registry import NONDIFF, RULE, SCALAR, default_registry, qualified_name
from ..rules._util import Refused
from ..tangents import NO_TANGENT, ZERO, is_differentiable_value
from . import numeric as t

_PROBES = itertools.count()
#: (fn, probe source) -> the probe function: one per text, so its adjoints are reused
_PROBE_CACHE: dict = {}


class OnSimplex:
    """An argument of a case that is a point of the probability simplex (its entries sum
    to 1): the rule gets the point itself, the probe its normalization ``q / np.sum(q)``
    (the identity at the point), so that the second derivative is checked along it."""

    def __init__(self, point):
        self.point = point

    def __repr__(self) -> str:
        return f"OnSimplex({self.point!r})"


class Built:
    """An argument of a case that is an object made from floats (a frozen distribution
    ``multinomial(n, p)``): the rule gets ``constructor(*args)``, the probe makes it from
    its parameters at each call, so that the second derivative runs through the object
    into ``args`` (an :class:`OnSimplex` among them too)."""

    def __init__(self, constructor, *args):
        self.constructor = constructor
        self.args = args
        self.value = constructor(*[_fresh(a) for a in args])

    def __repr__(self) -> str:
        return f"Built({self.constructor!r}, {', '.join(map(repr, self.args))})"


def _float_leaf(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "fc"


def _holds_float(v) -> bool:
    """A float leaf, or a list/tuple (pairs: ``dict``'s input) holding one."""
    if isinstance(v, (list, tuple)):
        return any(map(_holds_float, v))
    return _float_leaf(v)


def _spell(value, leaves, constants, differentiate):
    """The source text of one argument: a probe parameter for a float leaf (an array also
    when not differentiated: a parameter's kind is known, a global's is not), a list/tuple
    display for a sequence holding differentiated ones, else a constant (a global)."""
    if isinstance(value, Built):
        if not differentiate:
            return _spell(value.value, leaves, constants, False)
        parts = [_spell(a, leaves, constants, True) for a in value.args]
        constants.append(value.constructor)
        return f"C{len(constants) - 1}(" + ", ".join(parts) + ")"
    if isinstance(value, OnSimplex):
        if not differentiate:
            return _spell(value.point, leaves, constants, False)
        leaves.append((value.point, True))
        q = f"p{len(leaves) - 1}"
        return f"({q} / np.sum({q}))"
    if _float_leaf(value) and (differentiate or isinstance(value, np.ndarray)):
        leaves.append((value, differentiate))
        return f"p{len(leaves) - 1}"
    if differentiate and is_dataclass_value(value) and _holds_float(fields_of(value)):
        # a dataclass, made by its class in the probe from its fields in order
        parts = [_spell(v, leaves, constants, True) for v in fields_of(value)]
        constants.append(type(value))
        return f"C{len(constants) - 1}(" + ", ".join(parts) + ")"
    if differentiate and isinstance(value, (list, tuple)) and any(map(_holds_float, value)):
        parts = [_spell(v, leaves, constants, True) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(parts) + "]"
        if hasattr(value, "_fields"):  # a named tuple, made by its class in the probe
            constants.append(type(value))
            return f"C{len(constants) - 1}(" + ", ".join(parts) + ")"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if differentiate and isinstance(value, dict) and any(map(_float_leaf, value.values())):
        parts = [f"{k!r}: {_spell(v, leaves, constants, True)}" for k, v in value.items()]
        return "{" + ", ".join(parts) + "}"
    if _literal(value):  # written out, so the transformation knows its kind
        return repr(value)
    constants.append(value)
    return f"C{len(constants) - 1}"


def _fresh(value):
    """``value`` with its lists and dicts copied (their items are not): one call's
    arguments, which a rule may change in place (an :class:`OnSimplex` is its point)."""
    if isinstance(value, OnSimplex):
        return value.point
    if isinstance(value, Built):
        return value.value
    if type(value) is list:
        return [_fresh(v) for v in value]
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_fresh(v) for v in value)
    return value


def _literal(value) -> bool:
    if type(value) is float:
        return np.isfinite(value)  # repr(inf) is no literal: a global instead
    if value is None or type(value) in (bool, int, str):
        return True
    return type(value) in (tuple, list) and all(map(_literal, value))


class _FieldWeights(dict):
    """The weights of a dataclass output, by field name (read as ``y.name``)."""


def _weights(y, rng):
    """Random weights with the structure of ``y`` (``None`` where ``y`` has no tangent)."""
    if is_dataclass_value(y):
        names = field_names(type(y))
        return _FieldWeights(
            {n: _weights(v, rng) for n, v in zip(names, fields_of(y), strict=True)}
        )
    if isinstance(y, (list, tuple)):
        return [_weights(v, rng) for v in y]
    if isinstance(y, dict):
        return {k: _weights(v, rng) for k, v in y.items()}
    if not is_differentiable_value(y):
        return None
    shape = np.shape(y)
    w = rng.standard_normal(shape)
    if np.iscomplexobj(y):
        w = w + 1j * rng.standard_normal(shape)
    return np.asarray(w) if isinstance(y, np.ndarray) else w.item()


def _pairing(expr, w, names):
    """Source text of ``Re <expr, w>`` (the weights become globals ``W<k>``)."""
    if isinstance(w, _FieldWeights):
        terms = [_pairing(f"{expr}.{k}", wk, names) for k, wk in w.items()]
        return " + ".join(t for t in terms if t)
    if isinstance(w, (list, dict)):
        items = w.items() if isinstance(w, dict) else enumerate(w)
        terms = [_pairing(f"{expr}[{k!r}]", wk, names) for k, wk in items]
        terms = [t for t in terms if t]
        return " + ".join(terms)
    if w is None:
        return ""
    names.append(w)
    name = f"W{len(names) - 1}"
    if np.iscomplexobj(w):
        return f"np.sum(np.real(np.conj({name}) * {expr}))"
    return f"np.sum({name} * {expr})"


def result_view(rule, y):
    """``{attribute: value}`` of the float attributes of a result object (a SciPy
    ``OptimizeResult``) that ``rule`` declares differentiable
    (``rule.extra["result_attributes"]``); ``None`` for any other output."""
    names = rule.extra.get("result_attributes", ()) if rule is not None else ()
    if not names or is_differentiable_value(y) or isinstance(y, (list, tuple)):
        return None
    view = {a: getattr(y, a, None) for a in names}
    return {a: v for a, v in view.items() if _float_leaf(v)} or None


def make_probe(fn, args, kwargs, wrt, y, rng, view=None):
    """``(probe, params)``: the function ``L(*leaves) = Re <fn(*args, **kwargs), W>``
    written as source (see the module docstring); for a result object (``view``, see
    :func:`result_view`) the sum of ``Re <y.attribute, W_attribute>``."""
    leaves: list = []
    constants: list = []
    spelled = [_spell(a, leaves, constants, wrt is None or i in wrt) for i, a in enumerate(args)]
    spelled += [f"{k}={_spell(v, leaves, constants, False)}" for k, v in kwargs.items()]
    weights: list = []
    if view is None:
        pairing = _pairing("y", _weights(y, rng), weights)
    else:
        terms = [_pairing(f"y.{a}", _weights(v, rng), weights) for a, v in view.items()]
        pairing = " + ".join(t for t in terms if t)
    if not pairing:
        raise AssertionError(f"{qualified_name(fn)}: the output has nothing to differentiate")
    params = ", ".join(f"p{k}" for k in range(len(leaves)))
    source = f"def probe({params}):\n    y = FN({', '.join(spelled)})\n    return {pairing}\n"
    values = {f"C{k}": c for k, c in enumerate(constants)}
    values.update({f"W{k}": w for k, w in enumerate(weights)})
    try:
        probe = _PROBE_CACHE.get((fn, source))
    except TypeError:  # an unhashable callable: a probe of its own
        probe = None
    if probe is None:
        filename = f"<pullback second-order probe {next(_PROBES)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        scope = {"np": np, "FN": fn}
        exec(compile(source, filename, "exec"), scope)  # noqa: S102 - our own probe text
        probe = scope["probe"]
        try:
            _PROBE_CACHE[fn, source] = probe
        except TypeError:
            pass
    # The same text calls the same probe with this case's constants and weights (globals,
    # which generated code reads when it runs): its adjoints are transformed once.
    probe.__globals__.update(values)
    return probe, leaves  # [(value, differentiated)]


def _leafwise(got, want):
    """Pairs of matching array leaves of two cotangent tuples (ZERO and NO_TANGENT skipped)."""
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(got) != sorted(want):
            raise AssertionError(f"cotangent keys {sorted(got)} against {sorted(want)}")
        for key in want:
            yield from _leafwise(got[key], want[key])
        return
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        if len(got) != len(want):
            raise AssertionError(f"{len(got)} cotangents against {len(want)}")
        for g, w in zip(got, want, strict=True):
            yield from _leafwise(g, w)
        return
    if got is NO_TANGENT or want is NO_TANGENT or got is None or want is None:
        return
    if got is ZERO and want is ZERO:
        return
    if isinstance(got, Refused) and isinstance(want, Refused):
        return  # no formula (interp1d's spline knots): both refuse where it is used
    g = np.zeros_like(want) if got is ZERO else got
    w = np.zeros_like(got) if want is ZERO else want
    yield np.asarray(g), np.asarray(w)


def _check_agreement(where, rule, args, kwargs, rng, random_like):
    # the pullback function gets the arguments the rule saw (after any change in place),
    # as generated code passes them
    args, kwargs = _fresh(args), _fresh(kwargs)
    y, pullback = rule.rrule(*args, **kwargs)
    view = result_view(rule, y)
    dy = random_like(y, rng) if view is None else random_like(view, rng)
    want = pullback(dy)
    got = rule.pullback_fn(dy, *args, **kwargs)
    # One cotangent per positional argument (a pullback function may have more parameters).
    got, want = tuple(got)[: len(args)], tuple(want)[: len(args)]
    for a, g in zip(args, got, strict=False):
        if isinstance(a, np.ndarray) and a.ndim and isinstance(g, (list, tuple)):
            raise AssertionError(
                f"{where}: its pullback function {rule.pullback_fn.__name__} gives an array "
                f"argument a {type(g).__name__} of cotangents: an array's cotangent is an "
                "array (generated code adds the cotangents of an array with +)"
            )
    for g, w in _leafwise(got, want):
        single = np.float32 in (g.dtype, w.dtype) or np.complex64 in (g.dtype, w.dtype)
        rtol, atol = (1e-5, 1e-6) if single else (1e-11, 1e-12)
        if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol):
            worst = np.max(np.abs(g - w)) if g.shape == w.shape else f"shape {g.shape}"
            raise AssertionError(
                f"{where}: its pullback function {rule.pullback_fn.__name__} disagrees with "
                f"the rule's pullback (worst difference {worst} against {w.shape})"
            )


def check_rrule_second_order(fn, *args, wrt=None, registry=None, rng=None, fd_step=1e-3, **kwargs):
    """Check that ``fn``'s rule is differentiable twice at ``fn(*args, **kwargs)``.

    ``wrt``: the argument positions differentiated (default: every argument holding a float
    or complex value, also inside a list or tuple). See the module docstring for what is
    checked. Raises ``AssertionError`` naming the rule and the failing step.
    """
    registry = default_registry() if registry is None else registry
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    rule = registry.lookup(fn)
    where = f"check_rrule_second_order({qualified_name(fn)})"
    if rule is None or rule.kind == NONDIFF:
        raise AssertionError(f"{where}: no rule to differentiate")
    if rule.kind == RULE:
        if not rule.pullback_fn_accepts(len(args), kwargs):
            raise AssertionError(
                f"{where}: the rule has no second-order path for this call (no transformable "
                "pullback function that takes it; register one with "
                "RuleRegistry.set_pullback_function)"
            )
        _check_agreement(where, rule, args, kwargs, rng, t.random_like)
    elif rule.kind != SCALAR:  # pragma: no cover - the registry knows three kinds
        raise AssertionError(f"{where}: unknown rule kind {rule.kind!r}")

    if wrt is None:
        wrt_set = _with_tangents(rule, args, kwargs, rng, t.random_like)
    else:
        wrt_set = {wrt} if isinstance(wrt, int) else set(wrt)
    y = fn(*_fresh(args), **_fresh(kwargs))
    probe, params = make_probe(fn, args, kwargs, wrt_set, y, rng, result_view(rule, y))
    values = [v for v, _ in params]
    chosen = tuple(k for k, (_, d) in enumerate(params) if d)
    leaves = [values[k] for k in chosen]
    if not leaves:
        raise AssertionError(f"{where}: no float argument to differentiate")
    # One leaf: plain values (grad with one position returns one gradient).
    positions = chosen[0] if len(chosen) == 1 else chosen
    options = {"registry": registry}
    gradient = grad(probe, wrt=positions, **options)
    precision = t.precision_of(leaves, y)
    rtol, atol = (10 * tol for tol in t.TOLERANCES[precision])
    up = t.upcast(list(values))
    for _ in range(2):
        us = tuple(_cast_like(t.direction(leaf, rng), leaf) for leaf in leaves)
        vs = tuple(t.direction(leaf, rng) for leaf in leaves)
        try:  # H u: the generated gradient differentiated again (reverse over reverse)
            _, back = vjp(gradient, *values, wrt=positions, **options)
            hu = back(us[0] if len(chosen) == 1 else us)
        except Exception as exc:
            raise AssertionError(
                f"{where}: reverse over reverse failed: {type(exc).__name__}: {exc}"
            ) from exc
        hu = (hu,) if len(chosen) == 1 else hu
        got = sum(t.pair(h, v) for h, v in zip(hu, vs, strict=True))
        scale_terms = sum(t.abs_pair(h, v) for h, v in zip(hu, vs, strict=True))

        def along(s, vs=vs):
            moved = list(up)
            for k, v in zip(chosen, vs, strict=True):
                moved[k] = up[k] + s * v
            g = gradient(*moved)
            g = (g,) if len(chosen) == 1 else g
            return sum(t.pair(gk, u) for gk, u in zip(g, us, strict=True))

        # <v, H u> = d/ds <grad L(x + s v), u> (H is symmetric)
        expected = t.fd_directional(along, fd_step)
        if not abs(got - expected) <= atol + rtol * (abs(expected) + scale_terms):
            raise AssertionError(
                f"{where} ({precision}): <v, H u> is {got:.10g} by reverse over reverse and "
                f"{expected:.10g} by differencing the gradient"
            )
    return "reverse over reverse"


def _with_tangents(rule, args, kwargs, rng, random_like):
    """The positions of the arguments the rule's pullback gives a cotangent (not
    ``NO_TANGENT``): the arguments a second derivative is taken in by default."""
    y, pullback = rule.rrule(*_fresh(args), **_fresh(kwargs))
    view = result_view(rule, y)
    cots = tuple(pullback(random_like(y if view is None else view, rng)))
    return {k for k, c in enumerate(cots[: len(args)]) if c is not NO_TANGENT and c is not None}


def _cast_like(u, leaf):
    if isinstance(leaf, np.ndarray):
        return np.asarray(u, dtype=leaf.dtype)
    if isinstance(leaf, np.generic):
        return leaf.dtype.type(u)
    return u
