"""A custom rule (ChainRules style): replace a Python loop's transformed body by one
vectorized pullback, check the rule with pullback.testing, and time both gradients.

Needs: pip install pullback   (no extra)
"""

import timeit

import numpy as np

import pullback
from pullback import grad


def mse(y, yhat):
    n = len(y)
    s = 0.0
    for i in range(n):
        d = y[i] - yhat[i]
        s = s + d * d
    return s / n


def loss(y, yhat):
    return mse(y, yhat) + 0.1 * np.sum(y * y)


def best_time(call, repeat=5):
    """The best per-call time of ``call`` over ``repeat`` timeit loops of >= 20 ms."""
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    number = max(1, number // 10)
    return min(timer.repeat(repeat=repeat, number=number)) / number


def main():
    rng = np.random.default_rng(0)
    y, yhat = rng.normal(size=1000), rng.normal(size=1000)
    transformed = grad(loss)(y, yhat)  # the loop is transformed

    registry = pullback.default_registry().copy()  # keep the example's rule to itself

    @registry.rrule(mse)
    def mse_rule(y, yhat):
        d = y - yhat
        n = len(y)

        def mse_pullback(ds):
            g = (2.0 / n) * ds * d
            return g, -g

        return np.mean(d * d), mse_pullback

    with_rule = grad(loss, registry=registry)(y, yhat)
    print("same gradient with the rule:", np.allclose(transformed, with_rule))
    for label, g in (
        ("primal (the loop)", lambda: loss(y, yhat)),
        ("gradient, loop transformed", lambda: grad(loss)(y, yhat)),
        ("gradient, with the rule", lambda: grad(loss, registry=registry)(y, yhat)),
    ):
        print(f"{label:28s} {best_time(g) * 1e6:9.1f} us   (n = {y.size})")
    try:
        from pullback.testing import check_rrule

        check_rrule(mse, y[:5], yhat[:5], registry=registry)
        print("check_rrule: the rule matches finite differences")
    except ImportError:  # pragma: no cover - testing tools ship with pullback
        pass


if __name__ == "__main__":
    main()
