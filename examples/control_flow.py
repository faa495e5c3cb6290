"""Python control flow: a scalar ODE by explicit Euler, a branchy loop, recursion.

Needs: pip install pullback   (no extra)
"""

import math

from pullback import grad


def euler(k, y0, steps=500):
    y = y0
    h = 1.0 / steps
    for _ in range(steps):
        y = y + h * (-k * y + math.sin(y))
    return y


def piecewise(x):
    s = 0.0
    while x > 0.1:  # ends: x shrinks on both branches
        if x > 1.0:
            x = math.sqrt(x) / 2.0
        else:
            x = x * x
        s = s + x
    return s


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def main():
    dk, dy0 = grad(euler, wrt=(0, 1))(0.5, 1.0)
    print(f"d y(1) / d k = {dk:.6f}, d y(1) / d y0 = {dy0:.6f}")
    print("d piecewise / dx at 5.0:", grad(piecewise)(5.0))
    print("d x**7 / dx at 1.1 by recursion:", grad(power)(1.1, 7), "exact:", 7 * 1.1**6)


if __name__ == "__main__":
    main()
