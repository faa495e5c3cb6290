"""The arguments of a differentiated call: which parameters ``wrt`` names, their values,
what can be differentiated, and the kinds an adjoint is specialized on.

>>> def f(w, x, scale=1.0):
...     return scale * w * x
>>> resolve_wrt(f, (0, "scale"))
(('w', 'scale'), False)
"""

from __future__ import annotations

import ast
import inspect
import itertools
import types
from typing import NamedTuple

import numpy as np

from . import backends
from .errors import ArgumentError, HigherOrderError, NotDifferentiableError, describe
from .lazy_patterns import LazyPattern
from .plain_classes import is_candidate
from .records_dataclasses import fields_of, is_dataclass_value
from .tangents import NO_TANGENT, ZERO, is_differentiable_value, is_zero
from .transform.codegen import forget_with, remember_source
from .transform.kinds import ONE_SHAPE, kind_of
from .value_leaves import leaves as _leaves
from .wrapped_signatures import code_signature, vararg_offset


def kinds_key(args, kwargs, one_shape=None):
    """What the adjoint is specialized on: the kinds (scalar, array rank) of the arguments.
    ``one_shape``: a frozenset of ``(position, leading axes)`` of positional arguments that
    the caller made float arrays of one shape and dtype after those axes (see
    :data:`~pullback.transform.kinds.ONE_SHAPE`; only without ``kwargs``)."""
    pos = tuple(kind_of(a) for a in args)
    if None in pos:  # containers, objects, complex or subclassed arrays: the slow path
        for a in args:
            refuse_array_subclass(a)
    if one_shape:
        if kwargs:
            raise TypeError("kinds_key: one_shape is for positional arguments alone")
        return pos, ((ONE_SHAPE, frozenset(one_shape)),)
    if not kwargs:
        return pos, ()
    for v in kwargs.values():
        refuse_array_subclass(v)
    return pos, tuple(sorted((k, kind_of(v)) for k, v in kwargs.items()))


_ndarray = np.ndarray
_float64 = np.float64


def fast_kinds(args):
    """A cheap key for positional arguments that are all floats, ints or real NumPy arrays
    (``float``, ``int``, ``np.float64`` or ``(ndim, dtype kind)`` each): it decides the
    kinds the adjoint is specialized on, and which arguments are float. ``None`` for
    anything else."""
    key = []
    for a in args:
        t = type(a)
        if t is float or t is int or t is _float64:
            key.append(t)
        elif t is _ndarray and a.dtype.kind in "fiub":
            key.append((a.ndim, a.dtype.kind))
        else:
            return None
    return tuple(key)


def call_shape(args, kwargs):
    """A key for a call's arguments that decides everything a dynamic call derives from
    their values (adjoints.LazyAdjoint._call_dynamic): the kinds the adjoint is
    specialized on, which arguments hold floats, and that no leaf is an array subclass to
    refuse. Each leaf's exact type (an array's rank and dtype kind too), each record's
    class and fields, each container's type and length, each other object's type (when
    it alone decides: :func:`_opaque`); ``None`` (no key: derive it all again) for any
    other value.

    >>> call_shape((1.0, [2, "a"]), {"s": None}) == (
    ...     (float, (list, (int, str))), (("s", type(None)),))
    True
    """
    pos = _shape_of(args)
    if pos is None:
        return None
    if not kwargs:
        return pos, ()
    words = _shape_of(tuple(kwargs.values()))
    return None if words is None else (pos, tuple(zip(kwargs, words, strict=True)))


#: Leaf types whose value decides nothing beyond their type: is_differentiable_value,
#: kind_of and the refusal of array subclasses all give one answer per type.
_TYPE_ONLY = frozenset(
    {float, int, bool, complex, str, type(None), _float64, np.float32, np.int64, np.ufunc}
    | {types.FunctionType, types.BuiltinFunctionType, types.MethodType}
)


def _shape_of(values):
    out = []
    for v in values:
        t = type(v)
        if t in _TYPE_ONLY:
            out.append(t)
        elif t is _ndarray:
            out.append((v.ndim, v.dtype.kind))
        elif t is tuple or t is list:
            inner = _shape_of(v)
            if inner is None:
                return None
            out.append((t, inner))
        elif t is dict:
            inner = _shape_of(tuple(v.values()))
            if inner is None:
                return None
            out.append((t, tuple(v), inner))
        elif is_dataclass_value(v):  # a dataclass instance or a plain record
            inner = _shape_of(fields_of(v))
            if inner is None:
                return None
            out.append((t, inner))
        elif _opaque(v, t):  # an object of a user class (a method's self, a model)
            out.append((t, _OBJECT))
        else:
            return None
    return tuple(out)


_OBJECT = "object"
# Types whose instances' leaves, kinds or refusals depend on more than their type.
_NOT_OPAQUE = (tuple, list, dict, _ndarray, np.generic)


def _opaque(v, t) -> bool:
    """Whether ``v`` (no record) is a leaf whose every answer a call's plan derives from
    it is its type's: not differentiable, no kind, nothing to refuse (an instance of a
    plain user class, a module). Not a container or NumPy value (their leaves decide),
    nor a Dask or array-API array (differentiable by dtype)."""
    return not issubclass(t, _NOT_OPAQUE) and not backends.is_foreign_array(v)


# ndarray subclasses whose arithmetic is NumPy's own. Not np.matrix: its `*` and `**` are
# matrix products and powers, while the rules of the operators are the elementwise ones
# (a gradient through `m * m` came out wrong).
_PLAIN_ARRAY_TYPES = (np.ndarray, np.memmap)


def refuse_array_subclass(value, name=None):
    """Refuse an argument (or a leaf of one) that is an ndarray subclass with semantics of
    its own: a masked array's mask would be ignored by the gradient while the primal
    honours it."""
    for leaf in _leaves(value):
        if isinstance(leaf, np.ndarray) and type(leaf) not in _PLAIN_ARRAY_TYPES:
            what = f"'{name}' is" if name else "an argument is"
            if isinstance(leaf, np.matrix):
                raise NotDifferentiableError(
                    f"{what} a numpy.matrix: its `*` and `**` are matrix products and "
                    "powers, which pullback's rules (those of arrays) do not follow.\n"
                    "Fix: pass np.asarray(...) of it and write the matrix products with `@` "
                    "(and np.linalg.matrix_power for `**`)."
                )
            if isinstance(leaf, np.ma.MaskedArray):
                raise NotDifferentiableError(
                    f"{what} a numpy.ma.MaskedArray: NumPy honours its mask, but "
                    "pullback's gradients follow plain arrays and would ignore it.\n"
                    "Fix: pass the data and the mask as plain arrays and apply the mask in "
                    "the function, e.g. `np.where(mask, 0.0, x.data)` or `x.filled(0.0)`."
                )
            raise NotDifferentiableError(
                f"{what} a {type(leaf).__module__}.{type(leaf).__name__}, an ndarray "
                "subclass whose operations may differ from NumPy's; pullback's rules "
                "follow plain NumPy arrays.\n"
                "Fix: pass np.asarray(...) of it."
            )


def _signature(fn):
    try:
        return code_signature(fn)
    except (TypeError, ValueError):
        return None


class ParameterGroups(NamedTuple):
    """``fn``'s parameters by kind, read from one signature: ``named`` (all but ``*args``
    and ``**kwargs``), ``positional`` (those that take a position), and the names of the
    ``*args`` and ``**kwargs`` parameters (None where absent)."""

    named: tuple[str, ...]
    positional: tuple[str, ...]
    vararg: str | None
    varkw: str | None


_NO_PARAMETERS = ParameterGroups((), (), None, None)


def parameter_groups(fn) -> ParameterGroups:
    """:class:`ParameterGroups` of ``fn`` (none when it has no signature). One signature
    lookup serves every question a call of ``vjp``/``jvp`` asks about its parameters."""
    sig = _signature(fn)
    if sig is None:
        return _NO_PARAMETERS
    named, positional = [], []
    vararg = varkw = None
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            vararg = p.name
        elif p.kind is p.VAR_KEYWORD:
            varkw = p.name
        else:
            named.append(p.name)
            if p.kind is not p.KEYWORD_ONLY:
                positional.append(p.name)
    return ParameterGroups(tuple(named), tuple(positional), vararg, varkw)


def _param_names(fn) -> list[str]:
    return list(parameter_groups(fn).named)


def _star_names(fn) -> tuple[str | None, str | None]:
    """The names of ``fn``'s ``*args`` and ``**kwargs`` parameters (None where absent)."""
    groups = parameter_groups(fn)
    return groups.vararg, groups.varkw


def _positional_names(fn) -> list[str]:
    return list(parameter_groups(fn).positional)


def element_name(param: str, key) -> str:
    """How ``wrt`` names one element of a ``*args`` tuple or one ``**kwargs`` entry:
    ``"args[2]"``, ``"kwargs['scale']"`` (see :func:`split_wrt`)."""
    return f"{param}[{key!r}]"


_ELEMENT = LazyPattern(r"^([^\W\d]\w*)\[(.+)\]$")


def split_element(name: str):
    """``(param, key)`` of an element name, or ``(name, None)`` for a whole parameter."""
    match = _ELEMENT.match(name)
    if match is None:
        return name, None
    return match.group(1), ast.literal_eval(match.group(2))


def split_wrt(wrt) -> tuple[tuple[str, ...], list | None]:
    """The parameters an adjoint must differentiate for ``wrt`` (which may name elements
    of ``*args``/``**kwargs``), and for each entry of ``wrt`` ``(position among those
    parameters, key or None)``; ``None`` instead of that list when ``wrt`` names only
    whole parameters."""
    if wrt is None or not any(_ELEMENT.match(w) for w in wrt):
        return wrt, None
    params: list[str] = []
    picks = []
    for w in wrt:
        param, key = split_element(w)
        if param not in params:
            params.append(param)
        picks.append((params.index(param), key))
    return tuple(params), picks


def pick_cotangents(cotangents, picks) -> tuple:
    """The cotangents of the entries of ``wrt`` from those of its parameters (an element
    of ``*args`` is an item of the tuple cotangent of ``args``)."""
    out = []
    for k, key in picks:
        c = cotangents[k]
        if key is not None:
            c = ZERO if c is ZERO or c is NO_TANGENT else c[key]
        out.append(c)
    return tuple(out)


def resolve_wrt(fn, wrt) -> tuple[tuple[str, ...], bool]:
    """``wrt`` (index, name or tuple of them) as parameter names; and whether it was single.

    An index past the named positional parameters names an element of ``*args``
    (``"args[0]"``); a name that is no parameter names an entry of ``**kwargs``.
    """
    groups = parameter_groups(fn)
    vararg, varkw = groups.vararg, groups.varkw
    names = [*groups.named, *(n for n in (vararg, varkw) if n is not None)]
    positional = groups.positional
    single = not isinstance(wrt, (tuple, list))
    items = [wrt] if single else list(wrt)
    if not items:
        raise ArgumentError(
            "wrt=() asks for no gradient; give at least one argument index or name."
        )
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str, np.integer)):
            raise ArgumentError(
                f"wrt={wrt!r}: each entry must be an argument index or a parameter name, "
                f"not {type(item).__name__}."
            )
        if isinstance(item, str):
            param, key = split_element(item)
            if item in names:
                out.append(item)
            elif key is not None and param in (vararg, varkw) and param is not None:
                out.append(item)  # an element already named (``"args[1]"``, resolved once)
            elif varkw is not None and item.isidentifier():
                out.append(element_name(varkw, item))
            else:
                raise ArgumentError(
                    f"wrt={item!r} names no parameter of '{_name(fn)}'; its parameters are "
                    f"{', '.join(names) or '(none)'}."
                )
            continue
        k = int(item)
        # Without *args an index counts every named parameter (keyword-only ones last).
        indexed = positional if vararg is not None else groups.named
        if vararg is not None and k >= len(indexed):
            out.append(element_name(vararg, k - len(indexed) + vararg_offset(fn)))
        elif -len(indexed) <= k < len(indexed):
            out.append(indexed[k])
        else:
            raise ArgumentError(
                f"wrt={item} is out of range: '{_name(fn)}' has {len(indexed)} parameter"
                f"{'' if len(indexed) == 1 else 's'} ({', '.join(indexed) or 'none'})."
            )
    if len(set(out)) != len(out):
        raise ArgumentError(f"wrt={wrt!r} names the same parameter twice.")
    return tuple(out), single


def _name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else describe(fn)


def _bound_values(fn, args, kwargs, names):
    sig = _signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise ArgumentError(f"cannot call '{_name(fn)}' with these arguments: {exc}") from None
    bound.apply_defaults()
    out = []
    for n in names:
        param, key = split_element(n)
        value = bound.arguments[param]
        if isinstance(key, int) and sig.parameters[param].kind is inspect.Parameter.VAR_POSITIONAL:
            key -= vararg_offset(fn)  # (the name counts the bound arguments too)
        if key is not None:
            try:
                value = value[key]
            except (IndexError, KeyError):
                what = "extra positional argument" if isinstance(key, int) else "keyword"
                raise ArgumentError(
                    f"wrt names {n!r} of '{_name(fn)}', but this call gives no such "
                    f"{what} ({len(value)} given through '{param}').\n"
                    "Fix: pass that argument, or leave it out of wrt."
                ) from None
        out.append(value)
    return out


def _positional_indices(fn, names):
    """Where each parameter in ``names`` stands among the positional parameters, or None."""
    sig = _signature(fn)
    if sig is None:
        return None
    positional = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if any(n not in positional for n in names):
        return None
    return [positional.index(n) for n in names]


def _check_differentiable(fn, name, value):
    """Refuse an argument with nothing to differentiate (an int, a bool, a string)."""
    t = type(value)
    if t is float or (t is np.ndarray and value.dtype.kind in "fc"):
        return
    refuse_array_subclass(value, name)
    leaves = list(_leaves(value))
    if len(leaves) > 1 or leaves[0] is not value:
        _refuse_held_objects(fn, name, leaves)
    if any(is_differentiable_value(v) for v in leaves):
        return
    kind = type(value).__name__
    if isinstance(value, (np.ndarray, np.generic)):
        kind = f"{kind} of dtype {value.dtype}"
    elif backends.is_foreign_array(value):
        kind = f"{type(value).__module__}.{kind} of dtype {value.dtype}"
    article = "an" if kind[0] in "aeiou" else "a"
    fix = (
        f"pass a floating-point value (e.g. float({name}) or "
        f"np.asarray({name}, dtype=float)), or leave '{name}' out of wrt."
    )
    if is_candidate(type(value)):  # an object of a user's plain class (plain_classes.py)
        fix = (
            f"pass the arrays it holds as the arguments, and build the {kind} inside the "
            "function (an object built there is differentiated through its __init__ and "
            f"methods), or make {kind} a @dataclass (its gradient is then a {kind}); see "
            "docs/limitations.md#PB501."
        )
    raise NotDifferentiableError(
        f"cannot differentiate '{_name(fn)}' with respect to '{name}': it is {article} {kind}, "
        f"which has no gradient.\nFix: {fix}"
    )


def _refuse_held_objects(fn, name, leaves):
    """Refuse an argument that holds, in an item or a field, an object of a user's plain
    class with numbers or arrays in it (``D(v=Seq([...]))``): the reverse sweep would
    follow its fields, but its gradient has no form to be given back in (a dataclass's is
    the same dataclass; a plain class has none), so it would come back as None."""
    for v in leaves:
        if not is_candidate(type(v)) or is_differentiable_value(v):
            continue
        held = getattr(v, "__dict__", None)
        if not isinstance(held, dict):
            continue
        if any(is_differentiable_value(x) for x in _leaves(list(held.values()))):
            kind = type(v).__name__
            raise NotDifferentiableError(
                f"cannot differentiate '{_name(fn)}' with respect to '{name}': it holds "
                f"{'an' if kind[0].lower() in 'aeiou' else 'a'} {kind} (an object of a plain "
                "class) with numbers or arrays in it, whose gradient pullback cannot give "
                f"back.\nFix: make {kind} a @dataclass (its gradient is then a {kind}), or "
                f"build the {kind} inside the function from arrays passed as arguments; see "
                "docs/limitations.md#PB501."
            )


def picked_adjoint(adj, wrt, picks):
    """``adj`` (differentiated in the parameters holding ``wrt``) whose pullback returns the
    cotangents of the entries of ``wrt`` themselves (elements of ``*args``/``**kwargs``)."""
    forward = adj.forward

    def picked_forward(*args, **kwargs):
        y, pullback = forward(*args, **kwargs)

        def picked_pullback(dy):
            return pick_cotangents(pullback(dy), picks)

        return y, picked_pullback

    def higher():
        keywords = [key for _, key in picks if isinstance(key, str)]
        if keywords:
            # The picked functions would pass **kwargs on to the gradient: a star-call
            # whose reverse, differentiated again, refuses keyword gradients (star_runtime
            # gives keyword arguments their cotangents at first order only).
            key = keywords[0]
            raise HigherOrderError(
                f"cannot take a second derivative of '{_name(adj.fn)}' with respect to "
                f"{key!r}, an entry of its '**kwargs': such an entry is differentiated once "
                f"only.\nFix: give {key!r} a keyword-only parameter of its own "
                f"(def {_name(adj.fn)}(..., *, {key}, **kwargs))."
            )
        gradient, vjp = adj._differentiable_again()
        return picked_functions(gradient, vjp, picks, len(adj.wrt) == 1, len(wrt) == 1)

    # Not the base adjoint's compiled variants: theirs return whole parameters.
    return adj.replace(
        wrt=tuple(wrt),
        forward=picked_forward,
        higher=higher,
        fused=None,
        _higher_done=None,
        _fused_done=None,
    )


def picked_functions(gradient, vjp, picks, one_parameter: bool, one_pick: bool):
    """The differentiable-again ``(gradient, vjp)`` of a picked adjoint: Python functions
    with the signatures of the base ``gradient`` and ``vjp`` that call them and index the
    picked entries out of their results, written as source so that pullback can
    differentiate them once more (Hessians with respect to an element of ``*args``).

    ``one_parameter``: the base gradient returns its one parameter's cotangent bare;
    ``one_pick``: the picked gradient returns its one entry bare.
    """

    def entry(result, k, key, bare):
        text = result if bare else f"{result}[{k}]"
        return text if key is None else f"{text}[{key!r}]"

    def wrapper(fn, label, bare_whole, bare_pick):
        sig = inspect.signature(fn)
        params, call = [], []
        for p in sig.parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                params.append(f"*{p.name}")
                call.append(f"*{p.name}")
            elif p.kind is p.VAR_KEYWORD:
                params.append(f"**{p.name}")
                call.append(f"**{p.name}")
            elif p.kind is p.KEYWORD_ONLY:
                if not any(q.startswith("*") for q in params):
                    params.append("*")
                params.append(p.name)
                call.append(f"{p.name}={p.name}")
            else:
                params.append(p.name)
                call.append(p.name)
        picked = [entry("__pullback_whole__", k, key, bare_whole) for k, key in picks]
        result = picked[0] if bare_pick else "(" + ", ".join(picked) + ",)"
        name = f"{fn.__name__}__picked"
        source = (
            f"def {name}({', '.join(params)}):\n"
            f"    __pullback_whole__ = __pullback_{label}__({', '.join(call)})\n"
            f"    return {result}\n"
        )
        filename = f"<pullback picked {label} of {fn.__qualname__} #{next(_PICKED_SERIAL)}>"
        remember_source(filename, source)
        unit = {f"__pullback_{label}__": fn}
        exec(compile(source, filename, "exec"), unit)  # noqa: S102 - generated from a signature
        out = unit[name]
        out.__defaults__ = fn.__defaults__
        out.__kwdefaults__ = fn.__kwdefaults__
        forget_with(out, filename)
        return out

    return (
        wrapper(gradient, "gradient", one_parameter, one_pick),
        wrapper(vjp, "vjp", False, False),
    )


_PICKED_SERIAL = itertools.count(1)


def tangent_parameters(fn, tangents, keyword_tangents, kwargs=()) -> tuple[tuple, list]:
    """The parameters of ``fn`` that move, and their tangents, for positional tangents
    ``tangents`` and keyword tangents ``keyword_tangents`` (zeros are skipped). Arguments
    that land in ``*args`` or ``**kwargs`` give that tuple or dict one tangent, with
    ``ZERO`` for the elements that do not move."""
    groups = parameter_groups(fn)
    positional, vararg, varkw = groups.positional, groups.vararg, groups.varkw
    names, values = [], []
    extra = [d for d in tangents[len(positional) :]]
    for name, d in zip(positional, tangents, strict=False):
        if not is_zero(d):
            names.append(name)
            values.append(d)
    if vararg is not None and any(not is_zero(d) for d in extra):
        names.append(vararg)
        values.append(tuple(ZERO if is_zero(d) else d for d in extra))
    named = groups.named
    spread = {k: ZERO for k in kwargs if k not in named}
    moves = False
    for key in sorted(keyword_tangents):
        d = keyword_tangents[key]
        if is_zero(d):
            continue
        if varkw is not None and key not in named:
            spread[key] = d
            moves = True
        else:
            names.append(key)
            values.append(d)
    if moves:
        names.append(varkw)
        values.append(spread)
    return tuple(names), values


def spread_arguments(sig, bound) -> list:
    """``[(name, value)]`` of a call bound to ``sig`` (``inspect.BoundArguments``), in
    parameter order: what lands in ``*args`` or ``**kwargs`` is listed element by element,
    named as :func:`element_name` names it (so the first entries are the positional
    arguments, in order)."""
    out = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is kind.VAR_POSITIONAL:
            out.extend((element_name(name, j), v) for j, v in enumerate(value))
        elif kind is kind.VAR_KEYWORD:
            out.extend((element_name(name, key), v) for key, v in value.items())
        else:
            out.append((name, value))
    return out
