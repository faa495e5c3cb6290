"""Helpers shared by the rules of SciPy's integrators and solvers (``scipy_quad``,
``scipy_ode``, ``scipy_optimize``).

These functions take a user's Python function and parameters passed through ``args=``.
Their rules differentiate the user's function with pullback itself (:func:`user_vjp`) and
return a cotangent for ``args`` — also when ``args`` is given by keyword, which the rule
convention otherwise never differentiates: :func:`register_solver` declares the keywords
(``Rule.extra["keyword_cotangents"]``) and the pullback then returns the positional
cotangents followed by one dict ``{keyword: cotangent}`` (:func:`call_cotangents`), which
the reverse sweep sends to the names passed there. A rule whose result is an object
(``OdeResult``, ``OptimizeResult``) declares the attributes user code may read from it
(``Rule.extra["result_attributes"]``): the cotangent of ``sol.y`` reaches the pullback as
the dict ``{"y": cotangent}``.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ..called_objects import refusing_hidden_records
from ..errors import ArgumentError, UnsupportedCallError
from ..registry import transformable
from ..tangents import is_differentiable_value
from ._args_trees import (
    is_float_tree,
    real_tree,
    register_tree_rules,
    tree_from_vector,
    tree_size,
    tree_upcast,
    tree_vector,
)
from ._user_vjp import UserVJP, user_vjp, user_vjp_of
from ._util import NO_TANGENT, ZERO, densify, finalize_like
from .numpy_functional_pullbacks import dense_like

__all__ = [
    "ArgsPack",
    "bound_call",
    "float_sequence",
    "float_tree",
    "dense_entry",
    "entry_cotangent",
    "entry_size",
    "reference_shape",
    "has_floats",
    "reference_form",
    "refuse_float_tree",
    "call_cotangents",
    "refuse_options",
    "register_solver",
    "register_with_reference",
    "same_parameters",
    "require_success",
    "result_cotangent",
    "UserVJP",
    "user_vjp",
    "user_vjp_of",
]


def register_solver(
    r,
    fn,
    rrule,
    *,
    keywords=("args",),
    attributes=(),
    notes="",
    keep_closure=False,
    receivers=(),
):
    """Register ``rrule`` for ``fn`` with the keywords whose cotangents it returns and the
    attributes of its result that carry a gradient. ``keep_closure``: the rule's forward
    keeps what its pullback needs (the solution, interpolants, subintervals), so gradients
    call its closure, and only code differentiated again the transformable pullback
    function, which is given the arguments alone and solves again. ``receivers``: the
    parameters whose functions the solver calls with ``args`` (its function first), so
    that a closure given there takes what it captures through ``args``
    (transform/solver_closures.py)."""
    name = f"{fn.__module__.split('._')[0]}.{fn.__name__}"
    rule = r.rule(fn, refusing_hidden_records(rrule, name), name=name, notes=notes)
    rule.extra["keyword_cotangents"] = tuple(keywords)
    rule.extra["result_attributes"] = tuple(attributes)
    if receivers:
        rule.extra["args_receivers"] = (_parameter_names(fn), tuple(receivers))
    if keep_closure:
        rule.extra["sweeps_keep_closure"] = True
    return rule


@functools.lru_cache(maxsize=64)
def _signature(fn) -> inspect.Signature:
    """The signature of a SciPy solver (a handful of module-level functions: read once, as
    a gradient that costs a few times its integral has no time for inspect per call)."""
    return inspect.signature(fn)


@functools.lru_cache(maxsize=64)
def _plain_parameters(fn):
    """``(names, defaults)`` of a solver whose parameters are all positional-or-keyword
    with defaults after the first few (quad, solve_ivp, odeint): bound without inspect.
    ``None`` for any other signature."""
    params = list(_signature(fn).parameters.values())
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
        return None
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    return tuple(p.name for p in params), defaults


@functools.lru_cache(maxsize=64)
def _parameter_names(fn) -> tuple:
    return tuple(_signature(fn).parameters)


def bound_call(fn, args, kwargs) -> dict:
    """``fn``'s parameters (defaults applied) as a dict, from a call ``fn(*args, **kwargs)``."""
    plain = _plain_parameters(fn)
    if plain is not None:
        names, defaults = plain
        if len(args) <= len(names) and not any(n in kwargs for n in names[: len(args)]):
            values = dict(defaults)
            values.update(zip(names, args, strict=False))
            values.update(kwargs)
            if len(values) == len(names):  # every parameter given once, no stranger
                return values
    sig = _signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"pullback: {fn.__name__}(...): {e}") from None
    bound.apply_defaults()
    values = dict(bound.arguments)
    for name, p in sig.parameters.items():  # **options collected by the signature
        if p.kind is p.VAR_KEYWORD:
            values.update(values.pop(name, {}))
    return values


def call_cotangents(fn, args, kwargs, cots: dict, keywords=("args",)) -> tuple:
    """The pullback's answer: one cotangent per positional argument of the call, then (if
    the call passed one of ``keywords`` by keyword) the dict of their cotangents.
    ``cots`` maps parameter names to cotangents; the others get ``NO_TANGENT``."""
    names = _parameter_names(fn)
    out = tuple(cots.get(names[k], NO_TANGENT) for k in range(len(args)))
    passed = [k for k in keywords if k in kwargs]
    if passed:
        out += ({k: cots.get(k, NO_TANGENT) for k in passed},)
    return out


def _upcast(v):
    if isinstance(v, np.ndarray):
        return v.astype(np.float64) if v.dtype == np.float32 else v
    if float_sequence(v) and any(isinstance(e, np.float32) for e in v):
        # (a tuple of float32 scalars too: a derivative's integrand in float32 is noise to
        # the integrals behind a second derivative)
        values = [np.float64(e) if isinstance(e, np.float32) else e for e in v]
        return type(v)(*values) if hasattr(v, "_fields") else type(v)(values)
    return np.float64(v) if isinstance(v, np.float32) else v


def float_sequence(v) -> bool:
    """A tuple, list or named tuple of real floats, Python's or NumPy's (``args=((c,
    k),)``, ``args=((p[0], p[1]),)``): its floats are parameters too, flattened in order."""
    return (
        isinstance(v, (tuple, list))
        and bool(v)
        and all(type(e) is float or isinstance(e, np.floating) for e in v)
    )


def has_floats(v) -> bool:
    """Whether a solver's ``args`` (or one entry) holds a float parameter: what
    ``differentiable`` says, and a named tuple of floats too (a helper of the transformable
    pullbacks: the question carries no gradient)."""
    if isinstance(v, (tuple, list)):
        return any(has_floats(e) for e in v)
    if isinstance(v, dict):
        return any(has_floats(e) for e in v.values())
    return is_differentiable_value(v)


def float_tree(v) -> bool:
    """An ``args`` entry that is a dict, tuple, list or named tuple (nested) holding floats,
    other than a flat :func:`float_sequence`: its float leaves are parameters, taken apart
    by rules/_args_trees.py."""
    return isinstance(v, (tuple, list, dict)) and not float_sequence(v) and is_float_tree(v)


def entry_size(x) -> int:
    """The number of floats of an ``args`` entry holding some (a tree's: its leaves')."""
    return tree_size(x) if float_tree(x) else int(np.size(x))


def reference_shape(x) -> tuple:
    """The shape of an ``args`` entry's cotangent in the reference computations of second
    derivatives (:func:`reference_form`): a tree's is the vector of its leaves'."""
    return (tree_size(x),) if float_tree(x) else np.shape(x)


def refuse_float_tree(params):
    """Refuse an ``args`` entry that is a tree holding complex values (the solver rules
    take apart trees of real floats only): their gradient would be lost."""
    for k, v in enumerate(params):
        if isinstance(v, (tuple, list, dict)) and has_floats(v) and not real_tree(v):
            raise UnsupportedCallError(
                f"pullback: a parameter of the function a SciPy solver calls (entry {k} of "
                f"args=, or a variable a lambda or nested def given to the solver reads) is "
                f"a {type(v).__name__} holding complex values, which the solver rules do "
                "not take apart from a dict or sequence: their gradient would be lost.\n"
                "Fix: pass the complex parameter as an entry of args= of its own (a complex "
                "NumPy array), or its real and imaginary parts as floats."
            )


@transformable
def dense_entry(c, x):
    """The cotangent ``c`` of an ``args`` entry ``x`` as an array (a float sequence's as
    the vector of its floats, zeros where ``c`` has none)."""
    if float_tree(x):
        return tree_vector(c, x)
    if not float_sequence(x):
        return dense_like(c, x)
    whole = c is ZERO or c is NO_TANGENT or c is None
    out = ()
    for i in range(len(x)):
        if whole or c[i] is ZERO or c[i] is NO_TANGENT or c[i] is None:
            out = out + (0.0,)
        else:
            out = out + (c[i],)
    return np.asarray(np.stack(out), dtype=np.float64)


@transformable
def entry_cotangent(d, x):
    """The cotangent of an ``args`` entry ``x`` from the array ``d`` (a float sequence's
    put back as a tuple or list of its floats; ``NO_TANGENT`` without floats)."""
    if not has_floats(x):
        return NO_TANGENT
    if float_tree(x):
        return tree_from_vector(d, x)
    if not float_sequence(x):
        return d
    if isinstance(x, list):
        return [d[i] for i in range(len(x))]
    return tuple([d[i] for i in range(len(x))])


#: The family the solvers' shared helpers are listed under, whichever solver family loads
#: first (quad, the ODE solvers and optimize each register them): a fixed label keeps
#: the listing the same in every order of loading.
ARGS_HELPERS_FAMILY = "scipy_quad"


def register_arg_helpers(reg):
    """The non-differentiable helpers the transformable pullbacks of the solvers call."""
    family = ARGS_HELPERS_FAMILY
    reg.non_differentiable(
        has_floats,
        float_sequence,
        float_tree,
        entry_size,
        reference_shape,
        refuse_float_tree,
        family=family,
        trusted=True,
    )
    register_tree_rules(reg, family)


def reference_form(dargs, params) -> tuple:
    """The first-order rule's ``args`` cotangent as the reference computations of second
    derivatives give it: a tuple like ``params``, 0.0 for an entry without floats, a
    float64 array for a :func:`float_sequence` (the pullback functions put it back in the
    sequence's form)."""
    if dargs is NO_TANGENT:
        dargs = (NO_TANGENT,) * len(params)
    return tuple(
        0.0
        if c is NO_TANGENT
        else np.array(c, dtype=np.float64)
        if float_sequence(p)
        else tree_vector(c, p)
        if float_tree(p)
        else c
        for c, p in zip(dargs, params, strict=True)
    )


def _sequence_part(c, n) -> np.ndarray:
    """The flat cotangent of a :func:`float_sequence` of ``n`` floats from its cotangent
    (one like it, with ``ZERO`` for floats not read, or ``ZERO``)."""
    if c is ZERO or c is NO_TANGENT or c is None:
        return np.zeros(n)
    return np.array([0.0 if e is ZERO or e is NO_TANGENT or e is None else e for e in c])


def _real_float(v) -> bool:
    return is_differentiable_value(v) and not np.iscomplexobj(v)


@functools.lru_cache(maxsize=64)
def _positions(n) -> tuple:
    """``(0, ..., n - 1)``: the positions of the parameters of an ``args`` of ``n`` entries
    that are all floats (kept per ``n``: made at every gradient otherwise)."""
    return tuple(range(n))


class ArgsPack:
    """The float values among a call's ``args`` flattened into one vector (the parameters
    an adjoint or implicit solve works with) and cotangents mapped back to ``args``."""

    __slots__ = ("index", "args", "given", "sizes", "size", "scalars", "plain", "floats", "single")

    def __init__(self, args):
        # SciPy accepts a single non-tuple value (args=[c, k] is one list): its cotangent
        # is that value's, not a tuple's
        self.single = args is not None and not isinstance(args, tuple)
        if args is None:
            args = ()
        elif self.single:
            args = (args,)
        # (a Python float, the usual parameter, is taken without the general checks: a
        # gradient of a small integral costs a few times the integral, microseconds; one
        # loop decides the kind, a generator's frame per question would cost more)
        floats = plain = True
        for a in args:
            if type(a) is not float:
                floats = False
                if type(a) is not np.ndarray or a.dtype.char != "d":
                    plain = False
                    break
        self.floats = floats
        if floats:  # the usual call: nothing to convert
            self.index = _positions(len(args))
            self.args = self.given = args
            self.sizes = [1] * len(args)
            self.size = len(args)
            self.scalars = self.plain = True
            return
        # Python floats and float64 arrays (a closure's array, passed on by the rewrite of
        # its call): nothing to convert either, the cotangents are the flat vector's parts
        self.plain = plain
        if plain:
            self.index = _positions(len(args))
            self.args = self.given = args
            self.sizes = sizes = [1 if type(a) is float else a.size for a in args]
            self.size = sum(sizes)
            self.scalars = self.size == len(args)  # (a float64 array of size 1 is 0-d or not)
            if not self.scalars:
                return
            self.scalars = all(type(a) is float or a.ndim == 0 for a in args)
            return
        refuse_float_tree(args)
        self.index = tuple(
            k
            for k, a in enumerate(args)
            if type(a) is float or _real_float(a) or float_sequence(a) or float_tree(a)
        )
        # The user's function runs on float64 parameters (float32 ones upcast): the
        # integrals and solves behind a gradient need the accuracy (the cotangents are
        # cast back to each argument's dtype).
        self.args = tuple(
            (tree_upcast(a) if float_tree(a) else _upcast(a)) if k in self.index else a
            for k, a in enumerate(args)
        )
        self.given = args
        self.sizes = [
            1
            if type(args[k]) is float
            else len(args[k])
            if float_sequence(args[k])
            else tree_size(args[k])
            if float_tree(args[k])
            # (np.size: a list of floats is an array_like of that many)
            else int(np.size(args[k]))
            for k in self.index
        ]
        self.size = sum(self.sizes)
        self.scalars = all(
            type(args[k]) is float or (not float_tree(args[k]) and np.ndim(args[k]) == 0)
            for k in self.index
        )

    def flatten(self, cots) -> np.ndarray:
        """The cotangents of ``args[k]`` for ``k`` in ``index`` as one float64 vector."""
        parts = [
            _sequence_part(c, len(self.args[k]))
            if float_sequence(self.args[k])
            else tree_vector(c, self.args[k])
            if float_tree(self.args[k])
            else np.ravel(np.asarray(densify(c), dtype=np.float64))
            for k, c in zip(self.index, cots, strict=True)
        ]
        if not parts:
            return np.zeros(0)
        return np.concatenate(
            [p if p.size == n else np.zeros(n) for p, n in zip(parts, self.sizes, strict=True)]
        )

    def cotangent(self, flat):
        """The cotangent of the whole ``args`` tuple from a flat vector or list of floats
        (``NO_TANGENT`` for its non-float entries and for an ``args`` without floats; the
        value's own for a single non-tuple value)."""
        if not self.index:
            return NO_TANGENT
        out = self._cotangents(flat)
        return out[0] if self.single else out

    def _cotangents(self, flat) -> tuple:
        if self.floats:  # all Python floats
            # (what finalize_like gives them)
            return tuple(map(np.float64, flat if type(flat) is list else flat.tolist()))
        if self.plain and len(self.given) == 1:  # one float64 array (a closure's): all of flat
            x = self.given[0]
            d = np.array(flat, dtype=np.float64)
            return (d if x.ndim == 1 else d.reshape(x.shape),)
        out = [NO_TANGENT] * len(self.args)
        start = 0
        for k, n in zip(self.index, self.sizes, strict=True):
            x = self.given[k]
            if type(x) is float:  # what finalize_like gives it
                out[k] = np.float64(flat[start])
            elif self.plain:  # (a float64 array: what finalize_like gives it too)
                out[k] = np.array(flat[start : start + n], dtype=np.float64).reshape(x.shape)
            elif float_sequence(x):  # a tuple, list or named tuple of floats: one like it
                values = [
                    np.float64(v) if type(e) is float else type(e)(v)
                    for v, e in zip(flat[start : start + n], x, strict=True)
                ]
                out[k] = type(x)(*values) if hasattr(x, "_fields") else type(x)(values)
            elif float_tree(x):  # a dict or nested sequence: a tree like it
                out[k] = tree_from_vector(flat[start : start + n], x)
            else:
                out[k] = finalize_like(np.reshape(flat[start : start + n], np.shape(x)), x)
            start += n
        return tuple(out)


def result_cotangent(dy, key):
    """The cotangent of ``result.key`` (or ``result[key]``) from the cotangent of a result
    object (a dict ``{attribute: cotangent}`` or ``ZERO``)."""
    if dy is ZERO or dy is NO_TANGENT or dy is None:
        return ZERO
    if isinstance(dy, dict):
        g = dy.get(key, ZERO)
        return ZERO if g is None else densify(g)
    raise ArgumentError(
        f"pullback: the cotangent of a SciPy result object must be a dict of its attributes, "
        f"got {type(dy).__name__}"
    )


def require_success(result, name, what="converge"):
    """Refuse to differentiate a solution the solver says it did not find."""
    if not result.get("success", True):
        raise UnsupportedCallError(
            f"pullback: {name} did not {what} ({result.get('message', 'no message')!s}); "
            "its solution has no derivative to give.\n"
            "Fix: make the solver succeed (a better starting point, more iterations, looser "
            "tolerances) or check `.success` before differentiating through it."
        )


def require_square(name, g, x):
    """Refuse a system ``G(x) = 0`` whose number of equations is not that of unknowns: the
    implicit function theorem needs a square Jacobian."""
    m, n = int(np.size(g)), int(np.size(x))
    if m != n:
        raise UnsupportedCallError(
            f"pullback: {name}: {m} equations for {n} unknowns; the implicit function theorem "
            "needs a square system.\nFix: give the function one equation per unknown, or fit "
            "an overdetermined system with scipy.optimize.least_squares, whose solution is "
            "differentiated."
        )


# A Newton step this large from a solution, relative to it, is no solver's slack: the
# point solves nothing (a minimum on a kink, which a derivative-free method calls converged)
STATIONARY_STEP = 1e-2


def require_stationary(name, jac, g, x):
    """Refuse where the Newton step ``jac^-1 g`` from the solution ``x`` of ``G = 0`` (``g``
    the value of ``G`` there, ``jac`` its Jacobian) is large: ``G`` is not 0 there, and
    the implicit function theorem does not hold (the solution follows a kink of the
    objective on one side and not on the other)."""
    g = np.ravel(np.asarray(densify(g), dtype=np.float64))
    if not g.size:
        return
    try:
        step = float(np.linalg.norm(np.linalg.solve(jac, g)))
    except np.linalg.LinAlgError:
        return  # (singular: the caller's own solve refuses it)
    scale = max(1.0, float(np.linalg.norm(np.asarray(x, dtype=np.float64))))
    if step <= STATIONARY_STEP * scale:
        return
    raise UnsupportedCallError(
        f"pullback: {name}: the gradient of the objective (or the residual) at the solution "
        f"is not 0: a Newton step of size {step:.3g} from it, where a converged smooth "
        "solution is within the solver's tolerance. The objective is not smooth there (a "
        "kink, such as np.interp between its grid points or abs), so the solution has no "
        "derivative.\n"
        "Fix: make the objective smooth near the solution (for np.interp on a grid, a "
        "smooth fit of the same values, np.polyval(np.polyfit(grid, w, 3), x)), or another "
        "smooth approximation of the kink."
    )


def refuse_options(name, p: dict, options: dict):
    """Refuse options the rule does not differentiate: ``{option: why}``, refused when the
    call sets them to something true."""
    for option, why in options.items():
        value = p.get(option)
        if value is None or value is False or (type(value) is int and value == 0):
            continue
        raise UnsupportedCallError(
            f"pullback: {name}(..., {option}=...) is not differentiated: {why}.\n"
            f"Fix: call {name} without {option}=, or differentiate it in a custom rule."
        )


def register_with_reference(reg, family, fast, reference_pullback, notes=""):
    """Register ``fast`` — a primitive that computes a solver's cotangents the fast way
    (the first-order rule's own code) — with the derivatives of a *reference* computation
    of the same numbers written in the differentiable subset: ``reference_pullback(c,
    *args)``, a transformable function that returns the cotangents of the reference's
    arguments (``user_function_vjp(c, reference, *args)``). First derivatives cost what
    the first-order rule costs; a second derivative differentiates the reference (another
    quad or ODE solve of the integrand's or right-hand side's derivatives)."""

    def fast_rrule(*args):
        y = fast(*args)

        def fast_pullback(c):
            return tuple(reference_pullback(c, *args))

        return y, fast_pullback

    rule = reg.register(fast, fast_rrule, family=family, trusted=True)
    rule.notes = notes
    reg.set_pullback_function(fast, reference_pullback)
    return rule


def same_parameters(pullback_fn, fn) -> bool:
    """Whether ``pullback_fn`` (after ``dy``) has ``fn``'s positional-or-keyword parameters
    with the same defaults: it passes them on, so another SciPy's signature must not meet
    it (the rule then keeps its first-order pullback)."""
    mine = list(inspect.signature(pullback_fn).parameters.values())[1:]
    theirs = list(_signature(fn).parameters.values())
    return [(p.name, p.default, p.kind) for p in mine] == [
        (p.name, p.default, p.kind) for p in theirs
    ]
