"""An array a user function only reads, then changed in place by the caller: ``J =
jacobian(q)`` then ``q += alpha * J.T @ err`` (a Jacobian-transpose IK step), ``forces =
forces_of(pos)`` then ``pos += dt * vel`` (velocity Verlet), ``s = energy(y)`` then
``y[0] = ...``. Once the call has returned, no name holds the array through it when the
callee reads its parameter only at once and does not return it (check/argument_reads.py,
check/alias_uses.py), so the in-place change is the caller's alone. A callee that returns
its parameter (or a view of it), or keeps it, leaves the write refused.
"""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback


def energy(y):
    return np.sum(y**2)


def jacobian(q):
    J = np.zeros((2, 2))
    J[0, 0] = -np.sin(q[0]) - 0.5 * np.sin(q[0] + q[1])
    J[0, 1] = -0.5 * np.sin(q[0] + q[1])
    J[1, 0] = np.cos(q[0]) + 0.5 * np.cos(q[0] + q[1])
    J[1, 1] = 0.5 * np.cos(q[0] + q[1])
    return J


def tip(q):
    return np.array(
        [np.cos(q[0]) + 0.5 * np.cos(q[0] + q[1]), np.sin(q[0]) + 0.5 * np.sin(q[0] + q[1])]
    )


def ik_steps(q0):
    goal = np.array([0.6, 0.9])
    q = q0.copy()
    for _ in range(3):
        J = jacobian(q)
        q += 0.3 * J.T @ (goal - tip(q))
    return np.sum((goal - tip(q)) ** 2)


def stored_after(x):
    y = x * 1.0
    s = energy(y)
    y[0] = 5.0 * y[1]
    y += x
    return s + np.sum(y**3)


def scaled_in_a_loop(x):
    y = x.copy()
    total = 0.0
    for k in range(3):
        total = total + energy(y) * (k + 1)
        y *= x
        y[1] = y[0] * 0.5
    return total + np.sum(y)


def forces(pos):
    d = pos[0] - pos[1]
    return np.array([-d, d]) * np.sum(d**2)


def verlet(x0):
    pos = x0.reshape(2, 2).copy()
    vel = np.zeros_like(pos)
    f = forces(pos)
    for _ in range(3):
        vel += 0.05 * f
        pos += 0.1 * vel
        f = forces(pos)
    return np.sum(vel**2) + np.sum(pos[:, 0] ** 2)


CASES = {
    "ik_steps": (ik_steps, np.array([0.4, 0.9])),
    "stored_after": (stored_after, np.array([0.3, -0.7, 1.1, 0.4])),
    "scaled_in_a_loop": (scaled_in_a_loop, np.array([0.3, -0.7, 1.1, 0.4])),
    "verlet": (verlet, np.array([0.0, 0.2, 1.1, -0.3])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient(name):
    f, x = CASES[name]
    check_grad(f, x)
    check_grad(f, x.astype(np.float32))


@pytest.mark.parametrize("name", ["ik_steps", "scaled_in_a_loop"])
def test_second_order(name):
    f, x = CASES[name]
    v = np.linspace(-0.5, 0.5, x.size)
    check_hvp(f, x, v)
    check_jvp(f, (x,), (v,))


def itself(y):
    return y


def first_half(y):
    return y[: len(y) // 2]


KEPT = []


def keeps(y):
    KEPT.append(y)
    return np.sum(y)


def through_itself(x):
    y = x.copy()
    z = itself(y)
    y += 1.0
    return np.sum(z * x)


def through_a_view(x):
    y = x.copy()
    z = first_half(y)
    y[0] = 3.0
    return np.sum(z * x[:2])


def through_a_keeper(x):
    y = x.copy()
    s = keeps(y)
    y *= 2.0
    return s + np.sum(KEPT[-1] * x)


@pytest.mark.parametrize(
    "f, says",
    [
        (through_itself, ("PB105", "'y += ...'", "`y = y + 1.0`")),
        (through_a_view, ("PB101", "an element of 'y'")),
        (through_a_keeper, ("PB105", "'y *= ...'", "`y = y * 2.0`")),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_refused_when_the_callee_returns_or_keeps_it(f, says):
    with pytest.raises(pullback.PullbackError) as info:
        pullback.grad(f)(np.array([0.3, -0.7, 1.1, 0.4]))
    for text in says:
        assert text in str(info.value), str(info.value)
