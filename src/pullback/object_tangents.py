"""The tangent of an object a rule returns whose data its rule does not declare.

Forward mode takes a rule's tangent from its pullback (``rule_tangents``): for an object
(``Quad(a)`` of a user's ``@rrule(Quad)``) it cannot build one entry per field without
knowing the shape of the object's cotangent, which only the user's rules agree on (the
rule of a method called on the object returns it, the constructor's rule takes it). So the
object's tangent ``T = J t`` is kept by what it does to a cotangent: ``<c, T> = <J^T c, t>
= <pullback(c), t>``, exact for any shape the rules choose. That is all another rule's
tangent needs of it (``rule_tangents._inner``); anything else (user code reading a field,
arithmetic, the object handed to a function transformed in forward mode) raises a
:class:`~pullback.errors.NotDifferentiableError` at the user's line the object was made
on, with the fix: declare the data (``rule.extra["result_attributes"]``). A zero tangent
there would be silently wrong.

>>> t = ObjectTangent("Quad", lambda c: (2.0 * c,), (3.0,))
>>> float(t.paired_with(1.0, lambda c, d: c * d))
6.0
>>> try:
...     t + t
... except NotDifferentiableError as e:
...     print(str(e).splitlines()[0])
pullback cannot follow the tangent of the Quad a rule returns: its rule declares none of its data
"""

from __future__ import annotations

from .errors import (
    NotDifferentiableError,
    RaisesWhereUsed,
    running_sweep_lines,
    users_line_parts,
)


class ObjectTangent(RaisesWhereUsed):
    """``J t`` for an object a rule made, known by its pairing with a cotangent."""

    __slots__ = ("what", "pullback", "tangents", "lines")

    def __init__(self, what: str, pullback, tangents, lines=()):
        self.what = what  # the object's class name
        self.pullback = pullback  # the rule's pullback, restricted to this object
        self.tangents = tuple(tangents)  # the tangents of the rule's arguments
        self.lines = lines  # where generated code was when it was made (errors.py)

    @classmethod
    def placed(cls, what, pullback, tangents):
        """One made at the line the running forward sweep is at."""
        return cls(what, pullback, tangents, running_sweep_lines())

    def paired_with(self, cotangent, inner):
        """``<cotangent, J t>`` as ``<pullback(cotangent), t>``, ``inner`` pairing leaves."""
        cots = self.pullback(cotangent)
        total = 0.0
        for c, d in zip(cots, self.tangents, strict=False):
            total = total + inner(c, d)
        return total

    def error(self) -> NotDifferentiableError:
        """The error its use raises, at the user's line the object was made on."""
        where, at, quoted = users_line_parts(self.lines)
        exc = NotDifferentiableError(
            f"{at}pullback cannot follow the tangent of the {self.what} a rule returns: its "
            f"rule declares none of its data{quoted}\n"
            f"Forward mode (jvp, forward jacobian, hessian) passes that tangent only to "
            f"other rules' pullbacks; read here, it would be taken as zero.\n"
            f"Fix: declare the {self.what}'s differentiable attributes on its rule, "
            f'`registry.lookup({self.what}).extra["result_attributes"] = ("a", ...)`, and '
            f"give it, in the pullbacks, the cotangent as a dict of them; or use reverse mode "
            f"(grad, vjp)."
        )
        exc.users_place = where
        return exc

    def __repr__(self) -> str:
        return f"ObjectTangent({self.what!r})"
