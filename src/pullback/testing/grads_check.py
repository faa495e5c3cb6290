"""Check what :func:`pullback.vjp` computes for a whole function (:func:`check_grads`),
to first order and, through reverse over reverse, to second order."""

from __future__ import annotations

import numpy as np

from ..api import grad, vjp
from ..errors import PullbackError
from ..jacobian import hvp
from .comparisons import check_cotangent_type, check_directions
from .numeric import (
    TOLERANCES,
    abs_pair,
    direction,
    fd_directional,
    pair,
    precision_of,
    random_like,
    shift_arg,
    upcast,
)


# -- check_grads -------------------------------------------------------------------------
def check_grads(
    f,
    *args,
    wrt=0,
    order=1,
    rtol=None,
    atol=None,
    rng=None,
    registry=None,
    fd_step=1e-3,
    n_directions=2,
):
    """Compare what :func:`pullback.vjp` computes for ``f`` with finite differences.

    ``wrt`` is an argument index or a tuple of them. For ``order=1``: with a random output
    cotangent ``dy``, each cotangent ``dx`` that ``vjp(f, *args, wrt=wrt)`` returns must
    satisfy ``<dx, v> = d/dt <f(x + t v), dy>`` for random directions ``v``.

    For ``order=2`` and a scalar ``f``: the Hessian-vector product ``H u`` (``u`` random)
    from :func:`pullback.hvp` (reverse over reverse: the generated gradient differentiated
    again) is compared with finite differences of the reverse-mode gradient along random
    directions. For a non-scalar ``f``, or where pullback refuses the second derivative (a
    ``PullbackError``), the check compares finite differences of the reverse-mode
    gradient with a fourth-order mixed second difference of ``<f, dy>``: that checks the
    gradient to second order, but not a reverse-over-reverse code path. Tolerances for
    order 2 are ten times looser.

    Returns how the derivatives were checked: ``"reverse"`` (order 1),
    ``"reverse over reverse"`` or ``"finite differences of the gradient"`` (order 2).
    Raises ``AssertionError`` with the worst mismatch.
    """

    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    single = isinstance(wrt, (int, np.integer))
    wrt_t = (int(wrt),) if single else tuple(wrt)
    precision = precision_of(args)
    d_rtol, d_atol = TOLERANCES[precision]
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    label = f"check_grads({getattr(f, '__qualname__', f)!s})"
    options = {} if registry is None else {"registry": registry}

    if order == 1:
        y, back = vjp(f, *args, wrt=wrt, **options)
        dy = random_like(y, rng)
        cots = back(dy)
        cots = (cots,) if single else tuple(cots)
        _check_against_fd(
            label, f, args, wrt_t, dy, cots, rtol, atol, rng, fd_step, n_directions, precision
        )
        return "reverse"
    if order != 2:
        raise ValueError("check_grads supports order=1 and order=2")
    return _check_second_order(
        label, f, args, wrt_t, rtol * 10, atol * 10, rng, fd_step, precision, options
    )


def _check_against_fd(label, f, args, wrt_t, dy, cots, rtol, atol, rng, h, n_dirs, precision):
    if len(cots) != len(wrt_t):
        raise AssertionError(f"{label}: got {len(cots)} cotangents for wrt={wrt_t}")
    up_args = upcast(list(args))
    up_dy = upcast(dy)

    def objective(a):
        return pair(f(*a), up_dy)

    for k, i in enumerate(wrt_t):
        check_cotangent_type(label, f"argument {i}", cots[k], args[i])
        check_directions(
            label, objective, up_args, i, cots[k], n_dirs, h, rtol, atol, precision, rng
        )


def _inner(y, dy):
    """``Re <dy, y>``, written with NumPy calls that pullback can differentiate."""
    return np.real(np.vdot(dy, y))


def _check_second_order(label, f, args, wrt_t, rtol, atol, rng, h, precision, options):

    y0 = f(*args)
    if isinstance(y0, (tuple, list, dict)):
        raise ValueError("check_grads(order=2) needs a function with one array output")
    dy = random_like(y0, rng)
    us = tuple(direction(args[i], rng) for i in wrt_t)
    # Reverse over reverse, for a function with one scalar output: the Hessian-vector
    # product of f (through its generated gradient) against finite differences of the
    # reverse-mode gradient.
    if np.ndim(y0) == 0:
        try:
            products = [hvp(f, wrt=i, **options)(*args, us[k]) for k, i in enumerate(wrt_t)]
        except PullbackError:
            products = None
        if products is not None:
            up_args = upcast(list(args))
            for k, i in enumerate(wrt_t):

                def grad_along(a, i=i, k=k):
                    return pair(grad(f, wrt=i, **options)(*a), us[k])

                for _ in range(2):
                    w = direction(args[i], rng)
                    expected = fd_directional(
                        lambda t, i=i, w=w: grad_along(shift_arg(up_args, i, w, t)), h
                    )
                    got = pair(products[k], w)
                    scale = abs(expected) + abs_pair(products[k], w)
                    if not abs(got - expected) <= atol + rtol * scale:
                        raise AssertionError(
                            f"{label} (order 2, reverse over reverse): argument {i}: "
                            f"<H u, w> is {got:.10g} by reverse over reverse, {expected:.10g} "
                            "by differencing the reverse-mode gradient"
                        )
            return "reverse over reverse"

    # Fallback: finite differences of the reverse-mode gradient against a fourth-order
    # mixed second difference of <f, dy>.

    def reverse_along_u(a):
        _, back = vjp(f, *a, wrt=wrt_t, **options)
        gs = back(dy)
        return sum(pair(g, u) for g, u in zip(gs, us, strict=True))

    up_args = upcast(list(args))
    up_dy = upcast(dy)
    weights = ((-2, 1.0), (-1, -8.0), (1, 8.0), (2, -1.0))
    hh = max(h, 1e-2)
    for i in wrt_t:
        w = direction(args[i], rng)
        fd_of_grad = fd_directional(
            lambda t, i=i, w=w: reverse_along_u(shift_arg(up_args, i, w, t)), h
        )
        mixed = 0.0
        for p, cp in weights:
            for q, cq in weights:
                a = shift_arg(up_args, i, w, p * hh)
                for k, j in enumerate(wrt_t):
                    a = shift_arg(a, j, us[k], q * hh)
                mixed += cp * cq * pair(f(*a), up_dy)
        mixed /= 144.0 * hh * hh
        if not abs(mixed - fd_of_grad) <= atol + rtol * (abs(mixed) + abs(fd_of_grad)):
            raise AssertionError(
                f"{label} (order 2, finite differences of the gradient): argument {i}: the "
                f"derivative of <grad, u> along a random direction is {fd_of_grad:.10g} by "
                f"differencing the reverse-mode gradient, {mixed:.10g} by a mixed second "
                "difference of f"
            )
    return "finite differences of the gradient"


# -- hypothesis strategies ---------------------------------------------------------------
