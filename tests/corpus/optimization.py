"""Optimization test functions in the style of benchmark suites: a class per function,
``fun`` a method that counts its evaluations on ``self`` and reads constants from it."""

from __future__ import annotations

import math

import numpy as np


class Benchmark:
    def __init__(self, dimensions=4):
        self.N = dimensions
        self.nfev = 0
        self.fglob = 0.0
        self.custom_bounds = None

    def success(self, x, tol=1e-5):
        val = self.fun(np.asarray(x))
        return abs(val - self.fglob) < tol


class Ackley(Benchmark):
    def __init__(self, dimensions=4):
        Benchmark.__init__(self, dimensions)
        self.a, self.b, self.c = 20.0, 0.2, 2.0 * np.pi

    def fun(self, x, *args):
        self.nfev += 1
        u = np.sum(x**2)
        v = np.sum(np.cos(self.c * x))
        n = float(self.N)
        return -self.a * np.exp(-self.b * np.sqrt(u / n)) - np.exp(v / n) + self.a + np.exp(1.0)


class Rastrigin(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return 10.0 * self.N + np.sum(x**2 - 10.0 * np.cos(2.0 * np.pi * x))


class Rosenbrock(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


class RosenbrockLoop(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        total = 0.0
        for i in range(len(x) - 1):
            total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return total


class Sphere(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum(x**2)


class Griewank(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        i = np.arange(1.0, np.size(x) + 1.0)
        return np.sum(x**2 / 4000) - np.prod(np.cos(x / np.sqrt(i))) + 1


class Levy(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        w = 1.0 + (x - 1.0) / 4.0
        term1 = np.sin(np.pi * w[0]) ** 2
        term3 = (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2)
        wi = w[:-1]
        s = np.sum((wi - 1) ** 2 * (1 + 10 * np.sin(np.pi * wi + 1) ** 2))
        return term1 + s + term3


class StyblinskiTang(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return 0.5 * np.sum(x**4 - 16 * x**2 + 5 * x)


class Zakharov(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        u = np.sum(x**2)
        v = np.sum(np.arange(1, self.N + 1) * x)
        return u + (0.5 * v) ** 2 + (0.5 * v) ** 4


class Michalewicz(Benchmark):
    def __init__(self, dimensions=4):
        super().__init__(dimensions)
        self.m = 10.0

    def fun(self, x, *args):
        self.nfev += 1
        i = np.arange(1, self.N + 1)
        return -np.sum(np.sin(x) * np.sin(i * x**2 / np.pi) ** (2 * self.m))


class Schwefel26(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return 418.982887 * self.N - np.sum(x * np.sin(np.sqrt(np.abs(x))))


class DixonPrice(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        i = np.arange(2, self.N + 1)
        s = i * (2.0 * x[1:] ** 2.0 - x[:-1]) ** 2.0
        return np.sum(s) + (x[0] - 1.0) ** 2.0


class Trid(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum((x - 1.0) ** 2.0) - np.sum(x[1:] * x[:-1])


class SumSquares(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        i = np.arange(1, self.N + 1)
        return np.sum(i * x**2)


class Booth(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return (x[0] + 2 * x[1] - 7) ** 2 + (2 * x[0] + x[1] - 5) ** 2


class Beale(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return (
            (1.5 - x[0] + x[0] * x[1]) ** 2
            + (2.25 - x[0] + x[0] * x[1] ** 2) ** 2
            + (2.625 - x[0] + x[0] * x[1] ** 3) ** 2
        )


class Himmelblau(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


class ThreeHumpCamel(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return 2.0 * x[0] ** 2.0 - 1.05 * x[0] ** 4.0 + x[0] ** 6 / 6.0 + x[0] * x[1] + x[1] ** 2.0


class Easom(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        a = (x[0] - math.pi) ** 2 + (x[1] - math.pi) ** 2
        return -math.cos(x[0]) * math.cos(x[1]) * math.exp(-a)


class Bohachevsky1(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return (
            x[0] ** 2
            + 2 * x[1] ** 2
            - 0.3 * np.cos(3 * np.pi * x[0])
            - 0.4 * np.cos(4 * np.pi * x[1])
            + 0.7
        )


class Alpine02(Benchmark):
    @staticmethod
    def raw(x):
        return -np.prod(np.sqrt(x) * np.sin(x))

    def fun(self, x, *args):
        self.nfev += 1
        return self.raw(x)


class Salomon(Benchmark):
    @classmethod
    def radius(cls, x):
        return math.sqrt(float(np.sum(x**2)))

    def fun(self, x, *args):
        self.nfev += 1
        u = np.sqrt(np.sum(x**2))
        return 1 - np.cos(2 * np.pi * u) + 0.1 * u


# (class, point, dimensions): points away from kinks and domain edges.
CASES = [
    (Ackley, [0.3, -0.2, 0.5, 0.1], 4),
    (Rastrigin, [0.3, -0.2, 0.5, 0.1], 4),
    (Rosenbrock, [0.3, -0.2, 0.5, 0.1], 4),
    (RosenbrockLoop, [0.3, -0.2, 0.5, 0.1], 4),
    (Sphere, [0.3, -0.2, 0.5, 0.1], 4),
    (Griewank, [0.3, -0.2, 0.5, 0.1], 4),
    (Levy, [0.3, -0.2, 0.5, 0.1], 4),
    (StyblinskiTang, [0.3, -0.2, 0.5, 0.1], 4),
    (Zakharov, [0.3, -0.2, 0.5, 0.1], 4),
    (Michalewicz, [0.9, 1.2, 1.5, 2.0], 4),
    (Schwefel26, [30.0, -20.0, 50.0, 10.0], 4),
    (DixonPrice, [0.3, -0.2, 0.5, 0.1], 4),
    (Trid, [0.3, -0.2, 0.5, 0.1], 4),
    (SumSquares, [0.3, -0.2, 0.5, 0.1], 4),
    (Booth, [0.3, -0.2], 2),
    (Beale, [0.3, -0.2], 2),
    (Himmelblau, [0.3, -0.2], 2),
    (ThreeHumpCamel, [0.3, -0.2], 2),
    (Easom, [2.9, 3.3], 2),
    (Bohachevsky1, [0.3, -0.2], 2),
    (Alpine02, [1.3, 2.2, 0.5, 0.8], 4),
    (Salomon, [0.3, -0.2, 0.5, 0.1], 4),
]
