"""A cotangent no rule can compute, that raises only where it is used.

A rule whose argument has no derivative formula (a Bessel function's float order, Riemann
zeta's ``x`` below -2, the matrix of ``expm_multiply``) returns a :class:`Refused` as that
argument's cotangent and still runs: the argument may be a constant the user does not differentiate.
"""

from __future__ import annotations

from .errors import NotDifferentiableError, running_sweep_lines, users_line_of


def refuse_refused(y) -> None:
    """Raise the refusal a function's output ``y`` (or an item of a tuple or list ``y``)
    holds: a gradient differentiated again whose first derivative needed the refused
    cotangent (``hessian``, ``jacobian(grad(f))``, ``vjp(grad(f), ...)``).

    >>> refuse_refused((1.0, [2.0]))
    """
    t = type(y)
    if t is Refused:
        raise y.error()
    if t is tuple or t is list:
        for v in y:
            if type(v) is Refused:
                raise v.error()


class Refused:
    """A cotangent pullback cannot compute (a parameter with no derivative formula): it
    raises only where a gradient has to flow through it, naming what, why and the user's
    line it came from.

    Cotangent arithmetic on it (the accumulation ``+`` of two uses, a scaling by the chain
    rule, the linear ufuncs) gives a ``Refused`` again instead of raising: the parameter may
    be a constant the user does not differentiate that shares a tuple, list or dict with
    differentiated values, whose cotangent is then built and dropped. Anything that needs
    its value (a reduction, a conversion to an array or a float: what a requested gradient
    or a non-linear step does) raises :class:`~pullback.errors.NotDifferentiableError`.
    The first operation, or the rule that returns it (:meth:`placed`), records the user's
    line the running sweep is at.

    (In a module of its own, below the rules that make it: the API's entry points refuse
    one that reaches a function's output, a gradient differentiated again.)

    >>> r = Refused("f with respect to its order v", "no closed form")
    >>> (r + 1.0) * 2.0 - r
    Refused('f with respect to its order v')
    >>> try:
    ...     float(r)
    ... except NotDifferentiableError as e:
    ...     print(str(e).splitlines()[0])
    pullback cannot differentiate f with respect to its order v: no closed form
    """

    __slots__ = ("what", "why", "lines")
    __array_priority__ = 1000  # so that ndarray * Refused reaches __rmul__

    def __init__(self, what: str, why: str, lines=()):
        self.what = what
        self.why = why
        self.lines = lines  # where generated code was when it was made (errors.py)

    @property
    def where(self):
        """``(filename, line, text)`` of the user's line it came from, or None."""
        return users_line_of(self.lines)

    def placed(self) -> Refused:
        """This refusal with the lines the running sweep is at (itself once it has them; a
        copy otherwise: the rules keep theirs as shared constants)."""
        if self.lines:
            return self
        lines = running_sweep_lines()
        return Refused(self.what, self.why, lines) if lines else self

    def error(self) -> NotDifferentiableError:
        """The error its use raises, at the user's line it came from where one is known."""
        at, quoted = "", ""
        where = self.where
        if where is not None:
            filename, line, text = where
            at, quoted = f"{filename}:{line}: ", f"\n        {text}"
        exc = NotDifferentiableError(
            f"{at}pullback cannot differentiate {self.what}: {self.why}{quoted}\n"
            "Fix: keep that parameter constant: do not differentiate with respect to it, and "
            "pass it on its own, not as an element of an array that holds differentiated "
            "values (a tuple, list or dict may hold both); or register your own rule with "
            "`@pullback.rrule(...)`."
        )
        exc.users_place = where  # (the sweep's wrapper names no other line)
        return exc

    def _raise(self, *_args, **_kwargs):
        raise self.error()

    def _stays(self, *_args, **_kwargs):
        return self.placed()

    # cotangent arithmetic: the sum or scaling of a refused cotangent is refused
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _stays
    __truediv__ = __neg__ = __pos__ = conjugate = conj = _stays
    # a value needed: the gradient flows through the refused parameter
    __rtruediv__ = __array__ = __float__ = __complex__ = __int__ = __index__ = _raise

    _LINEAR = frozenset(("add", "subtract", "multiply", "divide", "true_divide", "negative",
                         "positive", "conjugate"))  # fmt: skip

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc.__name__ in Refused._LINEAR and "out" not in kwargs:
            if ufunc.__name__ not in ("divide", "true_divide") or inputs[0] is self:
                return self.placed()
        raise self.error()

    def __repr__(self) -> str:
        return f"Refused({self.what!r})"
