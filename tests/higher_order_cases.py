"""Functions differentiated twice and three times in test_higher_order.py."""

import math

from pullback import grad


def cubic(x):
    return x**3 - 2.0 * x


def trig(x):
    return math.sin(x) * math.exp(0.5 * x)


def looped(x):
    y = x
    for _ in range(5):
        y = y * 0.9 + math.tanh(y)
    return y


def branchy(x):
    if x > 1.0:
        return x * x * x
    return math.sin(x) / (1.0 + x * x)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def quadratic_form(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i] * (i + 1.0)
    return s + x[0] * x[1]


def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def inner_product(x, y):
    return x * y


def calls_grad_inside(x):
    g = grad(inner_product, wrt=1)  # d/dy (x y) = x, so the result is x * x
    return x * g(x, 2.0)
