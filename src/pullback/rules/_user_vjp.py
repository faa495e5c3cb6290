"""The vjp of a user's function (an integrand, a right-hand side) as SciPy's solver rules
call it, once per evaluation or once per node pass: :class:`UserVJP`, kept with the
function's generated code (:func:`user_vjp_of`).
"""

from __future__ import annotations

import types
import weakref

from ..cache import function_entries
from ..registry import ENTRY_POINTS, default_registry
from ..tangents import materialize

__all__ = ["UserVJP", "user_vjp", "user_vjp_of"]


class UserVJP:
    """``(y, pullback)`` of a user's function through pullback itself, called once per
    right-hand-side or integrand evaluation: what :func:`pullback.vjp` does, with the
    parameter names resolved once and the adjoint kept per argument kinds (its guard is
    still checked on every call, as the adjoint cache does, so an edited function or
    registry is seen). ``pullback(dy)`` returns one cotangent per position in ``wrt``."""

    def __init__(self, fn, wrt):
        self.fn = fn
        self.wrt = tuple(wrt)
        self.names, _ = ENTRY_POINTS.resolve_wrt(fn, self.wrt)
        self._adjoints: dict = {}
        self._keyed: dict = {}
        self.proof = None  # the elementwise proof's entry for fn (rules/_elementwise.py)
        self.steps: dict = {}  # quad's first-step passes per interval (rules/_quad_first.py)

    def adjoint(self, args, one_shape=None):
        """The generated adjoint for a call with ``args`` (built once per kinds).
        ``one_shape``: ``(position, leading axes)`` of the arguments the caller made float
        arrays of one shape and dtype after those axes (its adjoint then needs no
        ``unbroadcast`` between them: see ``transform/shape_proof.py``)."""
        registry = default_registry()
        kinds = ENTRY_POINTS.kinds_key(args, {}, one_shape)
        key = (id(registry), registry.version, kinds)
        adj = self._adjoints.get(key)
        if adj is None or not adj.guard():
            adj = ENTRY_POINTS.get_adjoint(self.fn, self.names, registry, kinds)
            self._adjoints[key] = adj
        return adj

    def adjoint_keyed(self, key, args, one_shape=None):
        """:meth:`adjoint` for a caller that knows a cheap ``key`` deciding the kinds of
        ``args`` (the types of scalars, the ranks of arrays) and ``one_shape``, without
        computing them."""
        adj = self.keyed(key)
        if adj is None:
            registry = default_registry()
            full = (id(registry), registry.version, key)
            adj = self._keyed[full] = self.adjoint(args, one_shape)
        return adj

    def keyed(self, key):
        """The adjoint :meth:`adjoint_keyed` kept for ``key`` while its guard holds (under
        the default registry at its version), else ``None``: a caller that must first
        build the arguments the kinds are read from builds them only then."""
        registry = default_registry()
        adj = self._keyed.get((id(registry), registry.version, key))
        return adj if adj is not None and adj.guard() else None

    def __call__(self, args):
        y, back = ENTRY_POINTS.run_forward(self.adjoint(args), args, {})
        like = [args[k] for k in self.wrt]

        def user_pullback(dy):
            cots = ENTRY_POINTS.run_pullback(back, dy)
            return tuple(materialize(c, v) for c, v in zip(cots, like, strict=True))

        return y, user_pullback


# The UserVJP found last, held weakly (replaced whole): an optimizer's gradients ask for
# the same integrand's again and again, and even a dict lookup on the function costs.
_LAST_VJP = [None]


def user_vjp_of(fn, wrt) -> UserVJP:
    """The :class:`UserVJP` of ``fn`` for ``wrt``: one per (function, wrt), kept on a Python
    function with its generated code (:func:`~pullback.cache.function_entries`), so an
    integrand's parameter names are resolved once and the UserVJP, which holds the
    function and its adjoints, dies with it (a weak dictionary keyed by the function would
    never free an entry whose value holds its key). Made afresh for other callables."""
    last = _LAST_VJP[0]() if _LAST_VJP[0] is not None else None
    if last is not None and last.fn is fn and last.wrt == wrt:
        return last
    wrt = tuple(wrt)
    entries = function_entries(fn) if type(fn) is types.FunctionType else None
    if entries is None:
        return UserVJP(fn, wrt)
    key = (_USER_VJP, wrt)
    found = entries.get(key)
    if found is None:
        found = entries[key] = UserVJP(fn, wrt)
    _LAST_VJP[0] = weakref.ref(found)
    return found


_USER_VJP = "user_vjp"  # (the key's tag among a function's generated entries)


def user_vjp(fn, args, wrt):
    """``(y, pullback)`` of a user's function at ``args`` (see :class:`UserVJP`)."""
    return user_vjp_of(fn, wrt)(args)
