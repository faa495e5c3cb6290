# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Programs for test_probe_combined.py (part 2): try/except inside methods, closures
that escape, user classes with operators and containers, and the rewrites the refusals'
messages ask for."""

import dataclasses
import math

import numpy as np
from combined_programs import RK4Integrator  # noqa: E402

import pullback


# -- combos: try inside methods, closures escaping a class, where in a class
class SafeDivider:
    def __init__(self, default=0.0):
        self.default = default

    def __call__(self, a, b):
        try:
            return a / b
        except ZeroDivisionError:
            return self.default


def safe_ratio_sum(x):
    div = SafeDivider()
    return div(x, 2.0) + div(x * x, 0.0) + div(1.0, x)


def parse_or_default(x, spec="1.5"):
    try:
        scale = float(spec)
    except ValueError:
        scale = 1.0
    return scale * x ** 2


def key_error_fallback(x, cache={"a": 2.0}):
    try:
        c = cache["b"]
    except KeyError:
        c = 3.0
    return c * np.sum(x ** 2)


def try_in_loop_accumulate(x):
    total = 0.0
    for v in [1.0, 0.0, 2.0, -1.0]:
        try:
            total = total + x / v
        except ZeroDivisionError:
            total = total + x * x
    return total


def make_counter_model(w):
    class Counter:
        def __init__(self):
            self.calls = 0

        def __call__(self, v):
            self.calls += 1
            return w * v

    return Counter()


def penalty_builder(weights):
    fns = []
    for i, wt in enumerate(weights):
        fns.append(lambda x, i=i, wt=wt: wt * x[i] ** 2)
    return fns


def escaping_penalties(x):
    fns = penalty_builder([1.0, 2.0, 3.0])
    return sum(f(x) for f in fns)


def returned_closure_used(x):
    def make_poly(coefs):
        def poly(t):
            return sum(c * t ** k for k, c in enumerate(coefs))
        return poly

    p = make_poly([1.0, -2.0, 0.5])
    q = make_poly([0.0, 1.0])
    return np.sum(p(x) * q(x))


class Shape:
    def area(self):
        raise NotImplementedError

    def describe(self):
        return f"{type(self).__name__} with area {self.area():.2f}"


class Circle(Shape):
    def __init__(self, r):
        self.r = r

    def area(self):
        return math.pi * self.r ** 2


class Rect(Shape):
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h


def polymorphic_areas(x):
    shapes = [Circle(x), Rect(x, 2.0 * x), Circle(0.5)]
    return sum(s.area() for s in shapes)


class Polynomial:
    def __init__(self, coeffs):
        self.coeffs = coeffs

    def __call__(self, x):
        result = 0.0
        for c in reversed(self.coeffs):
            result = result * x + c
        return result

    def derivative(self):
        return Polynomial([i * c for i, c in enumerate(self.coeffs)][1:])

    def __add__(self, other):
        n = max(len(self.coeffs), len(other.coeffs))
        a = list(self.coeffs) + [0.0] * (n - len(self.coeffs))
        b = list(other.coeffs) + [0.0] * (n - len(other.coeffs))
        return Polynomial([u + v for u, v in zip(a, b)])


def polynomial_class(x):
    p = Polynomial([1.0, x, x ** 2])
    q = p + Polynomial([0.5, 0.5])
    return q(1.3) + q.derivative()(0.7)


class Vec2:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return Vec2(self.x + o.x, self.y + o.y)

    def __mul__(self, s):
        return Vec2(self.x * s, self.y * s)

    def norm(self):
        return math.hypot(self.x, self.y)


def vec2_ops(t):
    a = Vec2(t, 2.0 * t)
    b = Vec2(1.0, t ** 2)
    return (a + b * 3.0).norm()


class Stack:
    def __init__(self):
        self.items = []

    def push(self, v):
        self.items.append(v)

    def total(self):
        return sum(self.items)


def stack_collect(x):
    s = Stack()
    for k in range(3):
        s.push(x ** (k + 1))
    return s.total()


class RunningStats:
    def __init__(self):
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, x):
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    @property
    def variance(self):
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0


def welford_variance(x):
    rs = RunningStats()
    for v in x:
        rs.update(v)
    return rs.variance + rs.mean


def finally_cleanup(x):
    log = []
    try:
        y = np.exp(x)
        z = np.sum(y / np.sum(y) * x)
    finally:
        log.append("cleanup")
    return z


def nested_try(x):
    try:
        try:
            v = math.log(x - 2.0)
        except ValueError:
            v = math.log(2.0 - x + 1.0)
    except Exception:
        v = 0.0
    return v * x


def assertion_guard(x):
    try:
        if not x > 0:
            raise ValueError("need positive")
        out = math.sqrt(x)
    except ValueError:
        out = -x
    return out


def tuple_where_piecewise(x):
    lo, hi = -1.0, 1.0
    inner = np.where((x > lo) & (x < hi), x ** 2, 0.0)
    outer = np.where(x >= hi, 2 * x - 1, np.where(x <= lo, -2 * x - 1, 0.0))
    return np.sum(inner + outer)


def hessian_of_vector_energy(x):
    def forces(q):
        return -np.array([q[0] ** 3 - q[1], q[1] ** 3 - q[0]])

    H = pullback.hessian(forces)(x)
    return float(np.sum(H * H)) + float(np.sum(forces(x)))


# -- the refusals' fixes, written as their messages say -------------------------------------
class RK4IntegratorFixed(RK4Integrator):
    def integrate(self, y0, n):
        y, t = y0, 0.0
        for _ in range(n):
            y = self.step(t, y)
            t = t + self.dt
        return y


def lotka_volterra_fixed(y0, a=1.0, b=0.4, c=0.4, d=0.1):
    rhs = lambda t, y: np.array([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])
    return np.sum(RK4IntegratorFixed(rhs, 0.05).integrate(y0, 10))


def ode_params_fixed(p, y0=np.array([1.0, 0.0])):
    def oscillator(t, y, k=1.0, damp=0.0):
        return np.array([y[1], -k * y[0] - damp * y[1]])

    y, dt = y0, 0.1
    for _ in range(8):
        k1 = oscillator(0.0, y, p[0], p[1])
        k2 = oscillator(0.0, y + dt / 2 * k1, p[0], p[1])
        y = y + dt * k2
    return y[0]


class PendulumState:
    g = 9.81

    def __init__(self, length):
        self.length = length

    def rk2(self, theta, omega, dt):
        a1 = -self.g / self.length * math.sin(theta)
        th = theta + 0.5 * dt * omega
        om = omega + 0.5 * dt * a1
        return theta + dt * om, omega + dt * (-self.g / self.length * math.sin(th))


def pendulum_returns_state(theta0, length=1.2):
    p = PendulumState(length)
    th, om = theta0, 0.0
    for _ in range(10):
        th, om = p.rk2(th, om, 0.02)
    return 0.5 * length ** 2 * om ** 2 + p.g * length * (1 - math.cos(th))


class StackFixed:
    def __init__(self):
        self.items = []

    def push(self, v):
        return self.items + [v]


def stack_fixed(x):
    s = StackFixed()
    items = []
    for k in range(3):
        items = items + [x ** (k + 1)]
    return sum(items) + len(s.push(1.0))


def safe_log_where(x):
    return np.sum(np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), -30.0))


def xlogx_negative(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(p > 0, p * np.log(p), 0.0))


@dataclasses.dataclass
class Vector2:
    x: float
    y: float

    def __add__(self, other):
        return Vector2(self.x + other.x, self.y * other.y)


def dataclass_operator(t):
    v = Vector2(t, t) + Vector2(1.0, 3.0)
    return v.x + v.y


def dataclass_operator_both(t):
    v = Vector2(t, t) + Vector2(t, 2.0)
    return v.x + v.y


def polynomial_method_add(x):
    # the fix the refusal of `p + q` names: the operator method called by name
    p = Polynomial([1.0, x, x ** 2])
    q = p.__add__(Polynomial([0.5, 0.5]))
    return q(1.3) + q.derivative()(0.7)
