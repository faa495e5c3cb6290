"""What reading the world live costs per gradient call (target: guards add <= 1 us).

Every call of ``grad(f)`` checks that what its cached adjoint was built from is unchanged
(the function's code and defaults, and each module, function or class it resolved).
This measures, in one run:

* the guard alone, for functions that bake in 0, 3 and 12 names;
* ``grad(f)(x)`` as users call it against the same adjoint's sweeps called directly (the
  fixed cost of the wrapper, of which the guard is part).

Run: ``python benchmarks/guards.py``. Prints PASS/MISS against the 1 us target.
"""

from __future__ import annotations

import math
import timeit

import numpy as np

from pullback import grad

SCALE = 2.0  # data: read live, never guarded


def square(x):
    return x * x


def three_names(x):
    return math.sin(x) * SCALE + np.tanh(x) + abs(x)


def helper_a(x):
    return x * x


def helper_b(x):
    return x + 1.0


def twelve_names(x):
    a = math.sin(x) + math.cos(x) + math.exp(x * 0.1) + math.tanh(x)
    b = np.sin(x) + np.cos(x) + abs(x) + float(x) + max(x, 0.0) + min(x, 1.0)
    return a + b + helper_a(x) + helper_b(x) + SCALE * math.sqrt(x * x + 1.0)


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=7)) / number


def main() -> int:
    x = 0.7
    ok = True
    print(f"{'function':14s} {'names':>5s} {'guard':>9s} {'grad(f)(x)':>11s} {'sweeps':>9s}")
    for f in (square, three_names, twelve_names):
        g = grad(f)
        g(x)
        adj = g._adjoint_for((x,), {})
        guard_s = best(adj.guard, 200_000)

        def sweeps(adj=adj):
            y, back = adj.forward(x)
            return back(1.0)

        call_s = best(lambda g=g: g(x), 20_000)
        sweeps_s = best(sweeps, 20_000)
        names = len(adj.guard.names)
        print(
            f"{f.__name__:14s} {names:5d} {guard_s * 1e9:7.0f}ns {call_s * 1e6:9.2f}us "
            f"{sweeps_s * 1e6:7.2f}us"
        )
        ok &= guard_s <= 1e-6
    print(f"guards <= 1 us per call: {'PASS' if ok else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
