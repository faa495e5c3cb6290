"""What a gradient through SciPy's integrators costs, relative to the computation itself.

    python benchmarks/calculus.py

* ODE: a damped, driven oscillator (3 parameters) solved by ``solve_ivp`` (RK45,
  rtol = atol = 1e-8), a squared misfit at 50 output times. The gradient comes from the
  adjoint rule, whose closure keeps the forward solve's interpolants (no second solve): the
  adjoint equation is linear, so it is solved on the forward solve's own steps (Gauss
  collocation propagators from Jacobians evaluated in a few batched reverse passes, each
  step checked against a lower order). Target: gradient <= 3x the solve. Where JAX is
  installed, the same problem with ``jax.experimental.ode.odeint`` (jit, float64) is timed
  too, for reference (its gradient is JAX's own adjoint).
* quad: an integral with two parameters in ``args``, once smooth (quad needs one
  subinterval: the integral costs 21 integrand calls, so pullback's fixed cost per
  gradient dominates) and once oscillatory (quad bisects many times). The smooth one's
  value is quad's first Gauss-Kronrod step computed by one pass of the integrand's adjoint
  over its 21 nodes (rules/_quad_first.py: quad's bits, QUADPACK's arithmetic), whose kept
  pullback gives the gradient; the oscillatory one calls quad, and the gradient takes one
  reverse pass of the integrand over the Gauss-Kronrod nodes of the subintervals quad chose
  (bisected further where the derivative needs it). Target: <= 3x quad.
  A third line has the smooth integrand as a closure reading an array at constant indices
  (``p[0]``, ``p[1]``): the array is spread over the nodes, and the same one pass serves.

Each line also gives central finite differences of the solve (2 solves per parameter) as a
reference cost and the largest relative difference between the two gradients. One run,
best of a few repeats (each a batch of calls for the quick ones); a missed target is
printed, never an error. The quad rows, whose calls take tens of microseconds, time the
integral and its gradient in alternating batches of this process's CPU time
(:func:`paired`): a busy machine's other processes, and its slow and fast moments, then
weigh on both alike.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.integrate as si

from pullback import value_and_grad

TIMES = np.linspace(0.0, 10.0, 50)
Y0 = np.array([1.0, 0.0])


def oscillator(t, y, p):
    return np.array([y[1], -p[0] * y[0] - p[1] * y[1] + p[2] * np.sin(t)])


def ode_loss(p, observed):
    sol = si.solve_ivp(oscillator, (0.0, 10.0), Y0, t_eval=TIMES, args=(p,), rtol=1e-8, atol=1e-8)
    r = sol.y[0] - observed
    return np.sum(r * r)


def jax_ode(p, observed):
    """``(primal, gradient time, gradient)`` of the ODE loss in JAX, or ``None``."""
    try:
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def rhs(y, t, q):
        return jnp.array([y[1], -q[0] * y[0] - q[1] * y[1] + q[2] * jnp.sin(t)])

    def loss(q):
        ys = odeint(rhs, jnp.asarray(Y0), jnp.asarray(TIMES), q, rtol=1e-8, atol=1e-8)
        r = ys[:, 0] - observed
        return jnp.sum(r * r)

    primal_fn, grad_fn = jax.jit(loss), jax.jit(jax.grad(loss))
    q = jnp.asarray(p)
    primal_fn(q).block_until_ready()  # compile first: jit time is not measured
    grad_fn(q).block_until_ready()
    primal, _ = best(lambda: primal_fn(q).block_until_ready())
    gradient, g = best(lambda: grad_fn(q).block_until_ready())
    return primal, gradient, np.asarray(g)


def integrand(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def quad_loss(c, k):
    return si.quad(integrand, 0.0, 3.0, args=(c, k))[0]


def oscillatory_loss(c, k):
    return si.quad(integrand, 0.0, 8.0, args=(c / 20, 20 * k), limit=200)[0]


def array_loss(c, k):
    """The parameters in an array a closure reads at constant indices (the call is
    rewritten so that the array travels through ``args``)."""
    p = np.array([c, k])
    return si.quad(lambda x: np.exp(-p[0] * x * x) * np.cos(p[1] * x), 0.0, 3.0)[0]


def best(fn, repeats=3):
    """``(seconds per call, a result)``: the best of ``repeats`` timings, each of a batch of
    calls lasting about 2 ms (one call for a slower function): a call of microseconds, timed
    alone, would measure the clock and the scheduler of a loaded machine as much as itself."""
    t = time.perf_counter()
    out = fn()
    n = max(1, int(2e-3 / max(time.perf_counter() - t, 1e-7)))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            out = fn()
        times.append((time.perf_counter() - t) / n)
    return min(times), out


def paired(primal_fn, gradient_fn, rounds=25, batch=4e-3):
    """``(primal seconds, gradient seconds, median ratio, gradient result)`` per call, from
    ``rounds`` alternating batches of each (about ``batch`` seconds each) timed by this
    process's CPU time (``time.process_time``: what other processes take is not counted,
    as wall-clock time would count it on a shared machine). The seconds are the best
    batch of each (their ratio is the line's figure, as timeit's minimum); the median of
    the rounds' own ratios (a primal batch and the gradient batch right after it saw the
    same machine) tells how far a busy machine moves it."""
    clock = time.process_time
    sizes = []
    for fn in (primal_fn, gradient_fn):
        # Warm up first (a gradient's second call compiles its fused sweeps: sized from
        # that call, its batches would hold two calls, each the first after a primal
        # batch, timing cold caches and the clock), then size from ten calls.
        for _ in range(_WARM_CALLS):
            fn()
        t = time.perf_counter()
        for _ in range(10):
            fn()
        sizes.append(max(1, int(batch / max((time.perf_counter() - t) / 10, 1e-7))))
    best_p = best_g = math.inf
    ratios = []
    out = None
    for _ in range(rounds):
        t = clock()
        for _ in range(sizes[0]):
            primal_fn()
        tp = (clock() - t) / sizes[0]
        t = clock()
        for _ in range(sizes[1]):
            out = gradient_fn()
        tg = (clock() - t) / sizes[1]
        best_p, best_g = min(best_p, tp), min(best_g, tg)
        if tp > 0:
            ratios.append(tg / tp)
    ratios.sort()
    return best_p, best_g, ratios[len(ratios) // 2], out


_WARM_CALLS = 20


def central_differences(f, args, h=1e-6):
    out = []
    for i, a in enumerate(args):
        a = np.asarray(a, dtype=float)
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            e = np.zeros_like(a)
            e[j] = h
            up = list(args)
            down = list(args)
            up[i], down[i] = a + e, a - e
            g[j] = (f(*up) - f(*down)) / (2 * h)
        out.append(g)
    return out


def report(name, primal, gradient, fd, diff, target=3.0, median=None):
    """One line; ``median``: :func:`paired`'s median ratio, printed beside."""
    ratio = gradient / primal
    verdict = "PASS" if ratio <= target else "MISS"
    spread = "" if median is None else f" (median of rounds {median:.2f}x)"
    print(
        f"{name:<34} primal {primal * 1e3:8.3f} ms   gradient {gradient * 1e3:8.3f} ms "
        f"= {ratio:5.2f}x{spread} (target <= {target:g}x) {verdict}   finite differences "
        f"{fd / primal:5.2f}x   max rel. difference {diff:.1e}"
    )


def main():
    p = np.array([2.0, 0.3, 0.8])
    observed = np.cos(1.4 * TIMES) * np.exp(-0.15 * TIMES)
    ode_grad = value_and_grad(ode_loss)
    ode_grad(p, observed)  # build the adjoints once (first-call cost is not measured)
    primal, _ = best(lambda: ode_loss(p, observed))
    gradient, (_, g) = best(lambda: ode_grad(p, observed))
    fd_time, (g_fd,) = best(lambda: central_differences(lambda q: ode_loss(q, observed), [p]), 1)
    diff = np.max(np.abs(g - g_fd) / np.maximum(np.abs(g_fd), 1e-8))
    report("ODE solve_ivp, 3 parameters", primal, gradient, fd_time, diff)
    found = jax_ode(p, observed)
    if found is None:
        print("  (JAX is not installed: no comparison with jax.experimental.ode.odeint)")
    else:
        jp, jg, g_jax = found
        jdiff = np.max(np.abs(g - g_jax) / np.maximum(np.abs(g_jax), 1e-8))
        print(
            f"  JAX odeint (jit, after compiling): primal {jp * 1e3:.2f} ms, gradient "
            f"{jg * 1e3:.2f} ms = {jg / jp:.2f}x its solve; pullback's gradient takes "
            f"{gradient / jg:.2f}x JAX's; max rel. difference of the gradients {jdiff:.1e}"
        )

    quads = (
        ("quad, 2 parameters", quad_loss),
        ("quad, oscillatory", oscillatory_loss),
        ("quad, closure reading p[0], p[1]", array_loss),
    )
    for name, loss in quads:
        quad_grad = value_and_grad(loss, wrt=(0, 1))
        quad_grad(0.7, 1.3)
        primal, gradient, ratio, (_, g) = paired(
            lambda loss=loss: loss(0.7, 1.3), lambda quad_grad=quad_grad: quad_grad(0.7, 1.3)
        )
        fd_time, g_fd = best(lambda loss=loss: central_differences(loss, [0.7, 1.3]), 3)
        g, g_fd = np.array(g), np.array([float(v) for v in g_fd])
        diff = np.max(np.abs(g - g_fd) / np.maximum(np.abs(g_fd), 1e-8))
        report(name, primal, gradient, fd_time, diff, median=ratio)


if __name__ == "__main__":
    main()
