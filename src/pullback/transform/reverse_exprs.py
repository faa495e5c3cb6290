"""Adjoints of operators and index reads.

Arithmetic is written inline: ``t = a * b`` gives ``d_a += d_t * b`` (with ``unbroadcast``
only where shapes may differ, and conjugates only where values may be complex); an index
read ``t = x[i]`` records ``(i, d_t)`` on a chain that one ``fold_reads`` turns into the
adjoint of ``x``.
"""

from __future__ import annotations

import gast

from .. import backends
from .code import Line
from .kinds import FOREIGN_ARRAYS, REAL_SEQUENCE, is_real
from .kinds import SCALAR as SCALAR_KIND
from .shape_proof import shape_keys
from .sweep_common import index_expr, src


def zero_safe(g: str, deriv: str) -> str:
    """The product of the cotangent ``g`` with a local derivative that may be infinite or
    NaN, as generated code: 0 where ``g`` is exactly 0 (pullback.zero_safe)."""
    return f"zero_safe_product({g}, {deriv})"


def zero_safe_inline(g: str, deriv: str, product: str | None = None) -> str:
    """:func:`zero_safe` for the sweeps: a nonzero float cotangent (a scalar loop's) takes
    the plain ``product`` (``g * deriv`` unless given, as it was written before) with no
    call (a zero one is what needs the helper); anything else (an array, a NumPy scalar of
    another type, a stack of directions) has that product checked by the helper."""
    product = product or f"{g} * {deriv}"
    return (
        f"({product} if ({g}.__class__ is float or {g}.__class__ is _pb_float64) "
        f"and {g} else zero_safe_fixed({g}, {product}))"
    )


def smooth_exponent(b) -> bool:
    """Whether ``a ** b``'s derivative in ``a`` is finite wherever ``a`` is: ``b`` a
    constant nonnegative integer (``a ** 0.5`` and ``a ** -1`` are not at 0)."""
    return (
        isinstance(b, gast.Constant)
        and isinstance(b.value, (int, float))
        and not isinstance(b.value, bool)
        and b.value >= 0
        and float(b.value).is_integer()
    )


class ExpressionAdjoints:
    """:class:`~.reverse.ReverseBuilder`: operators and index reads."""

    shape_keys = None  # {name: shape key} of the function, on first use (see shape_proof)

    def known_kind(self, node) -> bool:
        """Whether an operand is provably a number or an array (not a tuple or list)."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex)) and not isinstance(
                node.value, bool
            )
        return isinstance(node, gast.Name) and is_real(self.kinds.get(node.id))

    def conj(self, expr: str) -> str:
        """The conjugate of ``expr`` in generated code. An adjoint of array-API arguments
        conjugates on their namespace and keeps Python numbers Python numbers (np.conj
        would give a NumPy scalar, which such arrays refuse as an operand). Otherwise
        runtime.conjugate, which keeps a symbolic zero symbolic: an operand of unknown kind may
        be a cotangent that is ``ZERO`` at run time when the function is itself a gradient."""
        if self.kinds.get(FOREIGN_ARRAYS):
            return f"{self.bind('conj', backends.conj)}({expr})"
        return f"_pb_conjugate({expr})"

    def real_array(self, name) -> bool:
        """Whether ``name`` is provably a real array (not a number: scalar code keeps the
        user's order, ``3.0 * d``)."""
        kind = self.kinds.get(name)
        return kind != SCALAR_KIND and is_real(kind)

    def known_real(self, node) -> bool:
        """Whether an operand is provably real (so its conjugate is itself): a real
        constant, or a name whose kind is a real number or array."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return isinstance(node, gast.Name) and is_real(self.kinds.get(node.id))

    def may_repeat(self, a, b) -> bool:
        """Whether ``a * b`` may repeat a tuple or list: one operand's kind is unknown or a
        sequence, and the other may be an int (a float or an array never repeats)."""

        def may_be_sequence(node):
            if not isinstance(node, gast.Name):
                return False
            kind = self.kinds.get(node.id)
            return kind is None or kind == REAL_SEQUENCE

        def may_be_int(node):
            if isinstance(node, gast.Constant):
                return isinstance(node.value, int)
            return isinstance(node, gast.Name) and self.kinds.get(node.id) in (None, SCALAR_KIND)

        return (may_be_sequence(a) and may_be_int(b)) or (may_be_sequence(b) and may_be_int(a))

    def same_shape(self, operand, other, result) -> bool:
        """True when ``operand`` provably has the shape of ``result`` (no unbroadcast)."""
        if isinstance(other, gast.Constant) and isinstance(other.value, (int, float)):
            return True
        if isinstance(other, gast.Name) and self.kinds.get(other.id) == SCALAR_KIND:
            return True
        # Equal ranks do not mean equal shapes ((3, 1) * (1, 4)); only scalars are sure, and
        # operands with one shape key (reads of one array by like indices, see shape_proof).
        if isinstance(operand, gast.Name) and isinstance(other, gast.Name):
            if self.shape_keys is None:
                self.shape_keys = shape_keys(self.tree, self.kinds)
            key = self.shape_keys.get(operand.id)
            if key is not None and key == self.shape_keys.get(other.id):
                return True
        if isinstance(operand, gast.Name):
            return (
                self.kinds.get(operand.id) == SCALAR_KIND and self.kinds.get(result) == SCALAR_KIND
            )
        return False

    @staticmethod
    def operator_cotangents(op, c, g, sa, sb, line):
        """``c = plus_cotangents(g, a, b)`` (or ``times_``) for operands of unknown kind:
        in the sweeps the fast path of :mod:`pullback.sweep_cotangents` (no calls for real
        scalars or arrays of one shape), in differentiable-again code the transformable
        helper."""
        args = f"({g}, {sa}, {sb})"
        return Line(f"{c} = _pb_{op}_fast{args}", src=line, alt=f"{c} = {op}_cotangents{args}")

    def contrib_zero_safe(self, name, g, deriv, wrap, reads, state, line, out, product=None):
        """``contrib`` of ``g * deriv`` made zero-safe: the inline form in the sweeps, the
        helper's call (which has a rule) where the code must be differentiable again."""
        fast, plain = zero_safe_inline(g, deriv, product), zero_safe(g, deriv)
        start = len(out)
        self.contrib(name, wrap(fast), reads, state, line, out)
        inner = fast[1:-1]  # (a wrapper may drop the outer parentheses: where's masks)
        for item in out[start:]:
            if isinstance(item, Line) and inner in item.text:
                item.alt = (item.alt or item.text).replace(inner, plain)

    def rev_binop(self, s, t, g, v, state, out):
        line = s.lineno
        a, b = v.left, v.right
        op = type(v.op)
        an = a.id if isinstance(a, gast.Name) else None
        bn = b.id if isinstance(b, gast.Name) else None
        # With a scalar on one side the result has the other side's shape.
        a_ub = not self.same_shape(a, b, t)
        b_ub = not self.same_shape(b, a, t)
        sa, sb = src(a), src(b)

        def ub(expr, x, needed):
            return f"unbroadcast({expr}, {x})" if needed else expr

        reads_a = {n for n in (an, bn) if n}

        def cj(expr, node):
            # The cotangent of a product conjugates the other factor; real values
            # (proved by their kind) skip it.
            return expr if self.known_real(node) else self.conj(expr)

        real = self.known_real(a) and self.known_real(b)
        if an and an == bn and op in (gast.Add, gast.Mult):
            # x + x and x * x: one contribution instead of two. The factor of x * x is
            # formed first (an array of x's shape, not of the cotangent's, which may be a
            # stack of directions) and is a float: ``2 * d`` with ``d`` of unknown kind may
            # repeat a sequence, so its second-order adjoint would need times_cotangents.
            expr = f"2 * {g}" if op is gast.Add else f"{g} * (2.0 * {cj(sa, a)})"
            self.contrib(an, ub(expr, sa, a_ub), reads_a, state, line, out)
        elif op is gast.Add and not real:
            # Operands of unknown kind may be tuples or lists: + concatenates them.
            c = self.temp()
            out.append(self.operator_cotangents("plus", c, g, sa, sb, line))
            if an:
                self.contrib(an, f"{c}[0]", (), state, line, out)
            if bn:
                self.contrib(bn, f"{c}[1]", (), state, line, out)
        elif op is gast.Add:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                self.contrib(bn, ub(g, sb, b_ub), reads_a, state, line, out)
        elif op is gast.Sub:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                self.contrib(bn, ub(f"-{g}", sb, b_ub), reads_a, state, line, out)
        elif op is gast.Mult and self.may_repeat(a, b):
            # Operands of unknown kind may be a tuple or list and an int: * repeats it.
            c = self.temp()
            out.append(self.operator_cotangents("times", c, g, sa, sb, line))
            if an:
                self.contrib(an, f"{c}[0]", (), state, line, out)
            if bn:
                self.contrib(bn, f"{c}[1]", (), state, line, out)
        elif op is gast.Mult:
            if an:
                self.contrib(an, ub(f"{g} * {cj(sb, b)}", sa, a_ub), reads_a, state, line, out)
            if bn and isinstance(a, gast.Constant) and self.known_real(a) and self.real_array(bn):
                # a real constant after the cotangent: 100.0 * x's adjoint is d * 100.0
                self.contrib(bn, ub(f"{g} * {sa}", sb, b_ub), reads_a, state, line, out)
            elif bn:
                # the cotangent first, as for a: the same numbers (an elementwise product
                # commutes exactly), and a stack of directions (diagonal_stack.py) takes
                # its own operator instead of NumPy's ufunc dispatch
                self.contrib(bn, ub(f"{g} * {cj(sa, a)}", sb, b_ub), reads_a, state, line, out)
        elif op is gast.Div:
            # a denominator that may be 0 (anything but a nonzero constant): 1 / b may be
            # infinite where the cotangent is 0 (the entry discarded), see zero_safe.py
            safe = isinstance(b, gast.Constant) and b.value != 0
            if an and safe:
                self.contrib(an, ub(f"{g} / {cj(sb, b)}", sa, a_ub), reads_a, state, line, out)
            elif an:
                self.contrib_zero_safe(
                    an, g, f"(1.0 / {cj(sb, b)})", lambda e: ub(e, sa, a_ub), reads_a, state,
                    line, out, product=f"{g} / {cj(sb, b)}",
                )  # fmt: skip
            if bn:
                quotient = f"{t} / {sb}" if real else self.conj(f"{t} / {sb}")
                if safe:
                    expr = f"-{g} * {t} / {sb}" if real else f"-{g} * {quotient}"
                    self.contrib(bn, ub(expr, sb, b_ub), reads_a | {t}, state, line, out)
                else:
                    product = f"-{g} * {t} / {sb}" if real else f"-{g} * {quotient}"
                    self.contrib_zero_safe(
                        bn, g, f"(-({quotient}))", lambda e: ub(e, sb, b_ub),
                        reads_a | {t}, state, line, out, product=product,
                    )  # fmt: skip
        elif op is gast.Pow:
            if an:
                if isinstance(b, gast.Constant) and b.value == 2 and self.real_array(an):
                    # the array first: ndarray.__mul__ directly, not float.__mul__ failing
                    # over to ndarray.__rmul__ (a fifth of a small product's cost)
                    deriv = f"{sa} * 2.0"
                elif isinstance(b, gast.Constant) and b.value == 2:
                    deriv = f"2.0 * {cj(sa, a)}"  # a float: see x * x above
                elif isinstance(b, gast.Constant) and b.value == 1:
                    deriv = None
                elif isinstance(b, gast.Constant) and b.value == 0:
                    deriv = "0"  # a ** 0 is 1 everywhere (0 ** -1 would divide by zero)
                elif isinstance(b, gast.Constant):
                    deriv = f"{sb} * {sa} ** {src(gast.Constant(b.value - 1, None))}"
                else:
                    # an exponent that may be 0 where the base is (runtime.py says how)
                    deriv = f"pow_base_derivative({sa}, {sb})"
                if (
                    deriv is not None
                    and not real
                    and not deriv.startswith("2.0 * ")
                    and not deriv.endswith(" * 2.0")
                ):
                    deriv = self.conj(deriv)
                # the derivative first: one product with the cotangent, not two
                expr = g if deriv is None else f"{g} * ({deriv})"
                if deriv is not None and not smooth_exponent(b):
                    # (a ** 0.5, a ** -1, a ** b: infinite at a = 0, see zero_safe.py)
                    self.contrib_zero_safe(
                        an, g, f"({deriv})", lambda e: ub(e, sa, a_ub), reads_a, state, line,
                        out,
                    )  # fmt: skip
                else:
                    self.contrib(an, ub(expr, sa, a_ub), reads_a, state, line, out)
            if bn:
                expr = f"pow_exponent_cotangent({g}, {sa}, {t})"
                self.contrib(bn, ub(expr, sb, b_ub), reads_a | {t}, state, line, out)
        elif op is gast.Mod:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                expr = f"-{g} * ({sa} // {sb})"
                self.contrib(bn, ub(expr, sb, b_ub), reads_a, state, line, out)
        elif op is gast.MatMult:
            if an:
                expr = f"matmul_lhs_cotangent({g}, {sa}, {sb})"
                self.contrib(an, expr, reads_a, state, line, out)
            if bn:
                expr = f"matmul_rhs_cotangent({g}, {sa}, {sb})"
                self.contrib(bn, expr, reads_a, state, line, out)

    def reads_chain(self, name: str) -> str:
        if name not in self.chains:
            base = f"_reads_{name.lstrip('_')}" if not name.startswith("_t") else f"_reads{name}"
            self.chains[name] = self.internal(base)
        return self.chains[name]

    def rev_subscript(self, t, g, v, state, out, line):
        base = v.value
        if not isinstance(base, gast.Name) or not self.activity.is_active(base.id):
            return
        b = base.id
        if state.get(b) == "Z":  # the chain and the adjoint are consumed together
            out.append(Line(f"{self.adj(b)} = ZERO", src=line))
            state[b] = "M"
        chain = self.reads_chain(b)
        out.append(Line(f"{chain} = ({index_expr(v.slice)}, {g}, {chain})", src=line))

    def fold(self, name, out, line):
        """Fold the recorded index reads of ``name`` into its adjoint."""
        a = self.adj(name)
        current = self.alias.pop(name, a)
        self.write(name, out, line)
        chain = self.reads_chain(name)
        out.append(Line(f"{a} = fold_reads({current}, {name}, {chain})", src=line))
        out.append(Line(f"{chain} = None", src=line))
