# ruff: noqa: B905, UP033, UP045 - written the way typed public code is written
"""Probe s34: modern Python idioms around numerical code, as typed projects write them.
(PYTEST_DONT_REWRITE: the asserts are part of the probed code.)

``@dataclass(frozen=True)`` configs and parameter bundles with ``@property`` computed fields
and ``@classmethod`` constructors, ``Enum`` choices compared by ``is`` and by ``match``,
``typing``/``numpy.typing`` annotations everywhere (keyword-only arguments, ``Optional``,
``Final`` constants), classes with ``__slots__``, ``functools.lru_cache`` on helpers taking
ints (quadrature nodes, binomial weights), ``contextlib.contextmanager`` timers and
``np.errstate`` blocks around a computation, generators (``yield``) consumed by ``sum``,
``itertools.product``/``accumulate``/``pairwise``, ``sorted(..., key=)`` and ``max(...,
key=)``, a walrus in a ``while`` test, f-string logging of differentiated values,
``warnings.warn`` on a branch, ``assert`` on shapes, ``try``/``except`` around a Cholesky,
``typing.NamedTuple`` results. Each differentiated with respect to its first argument
against central differences (probe_harness.py).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import logging
import math
import operator
import statistics
import time
import typing
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, astuple, dataclass, field, replace
from typing import Final, NamedTuple, Optional

import numpy as np
import numpy.typing as npt
from probe_harness import probe_tests, refusal_test

logger = logging.getLogger("probe.s34")

FloatArray = npt.NDArray[np.float64]
DEFAULT_TOL: Final[float] = 1e-10

# -- dataclasses, properties, classmethods -----------------------------------------------------


@dataclass(frozen=True)
class SolverConfig:
    step_size: float = 0.1
    n_steps: int = 6
    momentum: float = 0.5


@dataclass(frozen=True)
class Household:
    beta: float
    gamma: float
    r: float = 0.03
    income: tuple[float, ...] = (1.0, 1.1, 1.2)

    @property
    def discount_factors(self) -> FloatArray:
        return self.beta ** np.arange(len(self.income))

    @property
    def eis(self) -> float:
        return 1.0 / self.gamma

    @classmethod
    def from_array(cls, theta: FloatArray) -> Household:
        return cls(beta=theta[0], gamma=theta[1])

    def utility(self, c: FloatArray) -> FloatArray:
        return c ** (1 - self.gamma) / (1 - self.gamma)


def household_lifetime_utility(theta: FloatArray, c: FloatArray) -> float:
    hh = Household.from_array(theta)
    return float(np.sum(hh.discount_factors * hh.utility(c))) + hh.eis


def heavy_ball(x0: FloatArray, A: FloatArray, cfg: SolverConfig = SolverConfig()) -> float:
    x, v = x0, np.zeros_like(x0)
    for _ in range(cfg.n_steps):
        g = A @ x - 1.0
        v = cfg.momentum * v - cfg.step_size * g
        x = x + v
    return float(0.5 * x @ A @ x - x.sum())


@dataclass
class Portfolio:
    weights: FloatArray
    cov: FloatArray
    risk_aversion: float = 3.0
    history: list[float] = field(default_factory=list)

    @property
    def variance(self) -> float:
        return self.weights @ self.cov @ self.weights

    def objective(self, mu: FloatArray) -> float:
        value = self.weights @ mu - 0.5 * self.risk_aversion * self.variance
        return value


def portfolio_objective(w: FloatArray, cov: FloatArray, mu: FloatArray) -> float:
    base = Portfolio(weights=np.ones_like(w) / w.size, cov=cov)
    tilted = replace(base, weights=w / np.sum(w))
    return tilted.objective(mu)


# -- enums and match ---------------------------------------------------------------------------


class Utility(enum.Enum):
    LOG = "log"
    CRRA = "crra"
    CARA = "cara"


class Kernel(enum.IntEnum):
    GAUSSIAN = 1
    EPANECHNIKOV = 2


def utility_of(kind: Utility, c: FloatArray, param: float) -> FloatArray:
    if kind is Utility.LOG:
        return np.log(c)
    elif kind is Utility.CRRA:
        return (c ** (1 - param) - 1) / (1 - param)
    return -np.exp(-param * c) / param


def expected_utilities(c: FloatArray, probs: FloatArray) -> float:
    return sum(probs @ utility_of(kind, c, 2.0) for kind in Utility)


def loss_by_match(residual: FloatArray, kind: str = "huber", delta: float = 0.5) -> float:
    match kind:
        case "l2":
            values = residual ** 2
        case "huber":
            a = np.abs(residual)
            values = np.where(a <= delta, 0.5 * residual ** 2, delta * (a - 0.5 * delta))
        case "logcosh" | "smooth":
            values = np.log(np.cosh(residual))
        case _:
            raise ValueError(f"unknown loss {kind!r}")
    return float(np.mean(values))


def kde_by_kernel(h: float, data: FloatArray, x: FloatArray,
                  kernel: Kernel = Kernel.EPANECHNIKOV) -> float:
    u = (x[:, None] - data[None, :]) / h
    match kernel:
        case Kernel.GAUSSIAN:
            k = np.exp(-0.5 * u ** 2) / math.sqrt(2 * math.pi)
        case Kernel.EPANECHNIKOV:
            k = np.where(np.abs(u) < 1, 0.75 * (1 - u ** 2), 0.0)
    dens = k.mean(axis=1) / h
    return float(np.sum(np.log(dens + 1e-3)))


def payoff_by_match(spot: FloatArray, option: tuple[str, float]) -> float:
    match option:
        case ("call", strike):
            pay = np.maximum(spot - strike, 0.0)
        case ("put", strike):
            pay = np.maximum(strike - spot, 0.0)
        case _:
            pay = spot
    return float(np.sum(pay ** 2))


# -- slots, lru_cache, context managers --------------------------------------------------------


class Particle:
    __slots__ = ("position", "velocity", "mass")

    def __init__(self, position: FloatArray, velocity: FloatArray, mass: float = 1.0) -> None:
        self.position = position
        self.velocity = velocity
        self.mass = mass

    def kinetic(self) -> float:
        return 0.5 * self.mass * self.velocity @ self.velocity


def slotted_energy(v0: FloatArray, k: float = 2.0, dt: float = 0.1) -> float:
    p = Particle(np.array([1.0, 0.0]), v0)
    for _ in range(5):
        p.velocity = p.velocity - dt * k * p.position
        p.position = p.position + dt * p.velocity
    return p.kinetic() + 0.5 * k * p.position @ p.position


@functools.lru_cache(maxsize=None)
def gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = np.polynomial.hermite.hermgauss(n)
    return nodes * math.sqrt(2.0), weights / math.sqrt(math.pi)


@functools.lru_cache
def binomial_weights(n: int) -> tuple[float, ...]:
    return tuple(math.comb(n, k) / 2 ** n for k in range(n + 1))


def expected_crra(params: FloatArray, n_nodes: int = 7) -> float:
    mu, sigma = params
    z, w = gauss_hermite(n_nodes)
    c = np.exp(mu + sigma * z)
    return float(w @ (c ** (1 - 2.0) / (1 - 2.0)))


def binomial_smooth(x: FloatArray) -> float:
    weights = binomial_weights(4)
    smoothed = sum(wk * x[k:len(x) - 4 + k] for k, wk in enumerate(weights))
    return float(np.sum(smoothed ** 2))


@contextlib.contextmanager
def timer(label: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        logger.debug("%s took %.3fs", label, time.perf_counter() - start)


def timed_value_iteration(beta: float, rewards: FloatArray, P: FloatArray) -> float:
    v = np.zeros_like(rewards)
    with timer("vfi"):
        for _ in range(20):
            v = rewards + beta * P @ v
    return float(v.sum())


def errstate_log_returns(prices: FloatArray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(prices[1:] / prices[:-1])
    return float(np.sum(r ** 2))


# -- generators, itertools, sorted/max with keys -----------------------------------------------


def discounted(cash_flows: Sequence[float], rate: float) -> Iterator[float]:
    for t, cf in enumerate(cash_flows, start=1):
        yield cf / (1 + rate) ** t


def pv_by_generator(rate: float, cash_flows: Sequence[float]) -> float:
    return sum(discounted(cash_flows, rate))


def grid_product_energy(x: FloatArray, n: int = 3) -> float:
    total = 0.0
    for i, j in itertools.product(range(n), repeat=2):
        total += x[i] * x[j] / (1.0 + abs(i - j))
    return total


def accumulate_wealth(returns: FloatArray, w0: float = 1.0) -> float:
    path = list(itertools.accumulate(1 + returns, lambda a, b: a * b, initial=w0))
    return float(np.log(path[-1]) - 0.5 * np.var(path))


def pairwise_trapezoid(y: FloatArray, x: FloatArray) -> float:
    area = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(zip(x, y)):
        area += 0.5 * (x1 - x0) * (y0 + y1)
    return area


def best_option_value(prices: FloatArray, costs: Sequence[float] = (0.2, 0.5, 0.1)) -> float:
    options = [(name, p - c) for name, p, c in zip("abc", prices, costs)]
    best_name, best_value = max(options, key=lambda item: item[1])
    ranked = sorted(options, key=lambda item: item[1], reverse=True)
    return best_value ** 2 + ranked[-1][1]


def top_k_mean(x: FloatArray, k: int = 3) -> float:
    ordered = sorted(x, key=abs, reverse=True)
    return sum(ordered[:k]) / k


# -- walrus, logging, warnings, asserts, try/except, NamedTuple ---------------------------------


def fixed_point_walrus(beta: float, r: FloatArray, P: FloatArray,
                       tol: float = DEFAULT_TOL) -> float:
    v = np.zeros_like(r)
    it = 0
    while (err := np.max(np.abs((v_new := r + beta * P @ v) - v))) > tol and it < 500:
        v = v_new
        it += 1
    logger.info(f"converged after {it} iterations, error {err:.2e}, v[0]={v_new[0]:.4f}")
    return float(v_new @ r)


def warned_log_likelihood(sigma: float, x: FloatArray) -> float:
    if sigma < 0.1:
        warnings.warn(f"small sigma {sigma:.3g}", RuntimeWarning, stacklevel=2)
    n = x.shape[0]
    assert x.ndim == 1, f"expected a vector, got shape {x.shape}"
    return -n * np.log(sigma) - np.sum(x ** 2) / (2 * sigma ** 2)


def asserted_quadratic(x: FloatArray, A: FloatArray, b: Optional[FloatArray] = None) -> float:
    assert A.shape == (x.size, x.size), "A must be square"
    assert np.all(np.isfinite(x))
    if b is None:
        b = np.zeros_like(x)
    return float(0.5 * x @ A @ x - b @ x)


def safe_cholesky_logdet(s: FloatArray, X: FloatArray) -> float:
    K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / s[0] ** 2) + s[1] * np.eye(X.size)
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 1e-6 * np.eye(X.size))
    return 2 * np.sum(np.log(np.diag(L)))


class FitResult(NamedTuple):
    loss: float
    slope: float
    intercept: float


def fit_line(y: FloatArray, x: FloatArray) -> FitResult:
    xm, ym = x.mean(), y.mean()
    slope = np.sum((x - xm) * (y - ym)) / np.sum((x - xm) ** 2)
    intercept = ym - slope * xm
    loss = np.mean((y - slope * x - intercept) ** 2)
    return FitResult(loss=loss, slope=slope, intercept=intercept)


def named_tuple_result(y: FloatArray, x: FloatArray) -> float:
    res = fit_line(y, x)
    logger.debug(f"{res.slope=:.3f} {res.intercept=:.3f}")
    return res.loss + res.slope ** 2 + res._asdict()["intercept"]


def annotated_keyword_only(x: FloatArray, *, scale: float = 2.0,
                           offset: Optional[float] = None) -> float:
    shift: float = 0.0 if offset is None else offset
    z: FloatArray = scale * x + shift
    return float(np.sum(np.tanh(z)))


def call_keyword_only(x: FloatArray) -> float:
    return annotated_keyword_only(x, scale=0.5) + annotated_keyword_only(x, offset=0.3)


# -- more: endless iterators zipped, float enums, dataclass helpers, operator keys -------------


def pv_by_count(rate: float, cash_flows: Sequence[float]) -> float:
    return sum(cf / (1 + rate) ** t for t, cf in zip(itertools.count(1), cash_flows))


def alternating_series(x: FloatArray) -> float:
    return sum(sign * v ** 2 for v, sign in zip(x, itertools.cycle((1.0, -1.0))))


def compounded(returns: FloatArray) -> float:
    wealth = 0.0
    for w in itertools.accumulate(1 + returns, operator.mul):
        wealth = wealth + w
    return wealth


class Rate(float, enum.Enum):
    LOW = 0.02
    HIGH = 0.05


def annuity_by_enum(c: float, rate: Rate = Rate.HIGH) -> float:
    return sum(c / (1 + rate) ** t for t in range(1, 4)) * (1 + Rate.LOW)


@dataclass(frozen=True)
class Bundle:
    x: float
    y: float


@dataclass(slots=True)
class SlotParams:
    a: float
    b: float


def dataclass_helpers(theta: FloatArray) -> float:
    b = Bundle(theta[0], theta[1])
    x, y = astuple(b)
    p = SlotParams(theta[0], theta[1])
    return x * y + asdict(b)["x"] ** 2 + p.a * p.b ** 2


def cheapest_by_itemgetter(x: FloatArray) -> float:
    pairs = [(k, v ** 2 + 0.1 * k) for k, v in enumerate(x)]
    k, best = min(pairs, key=operator.itemgetter(1))
    return best * x[k]


def fsum_fmean_start(x: FloatArray) -> float:
    return math.fsum(v ** 2 for v in x) + statistics.fmean(x) ** 2 + sum((v for v in x),
                                                                       start=1.0)


@functools.lru_cache(maxsize=None)
def discount_factor(beta: float, t: int) -> float:
    return beta ** t


def cached_float_helper(beta: float) -> float:
    return sum(discount_factor(beta, t) * (t + 1.0) for t in range(5))


def pairwise_dispersion(x: FloatArray) -> float:
    return sum((a - b) ** 2 for a, b in itertools.combinations(x, 2))


# Refused, each naming the line and a fix (see the report of probe10):


@dataclass
class DerivedParams:
    beta: float
    gamma: float
    R: float = field(init=False)

    def __post_init__(self) -> None:
        self.R = 1.0 / self.beta


def post_init_value(theta: FloatArray) -> float:
    p = DerivedParams(theta[0], theta[1])
    return p.R ** p.gamma


class Growth:
    def __init__(self, alpha: float, A: float = 1.2) -> None:
        self.alpha = alpha
        self.A = A

    @functools.cached_property
    def k_star(self) -> float:
        return (self.alpha * self.A / 0.2) ** (1 / (1 - self.alpha))


def cached_property_value(alpha: float) -> float:
    g = Growth(alpha)
    return g.A * g.k_star ** g.alpha


def typing_cast_value(x: float) -> float:
    y = typing.cast(float, x * 2.0)
    return y ** 2


def catch_warnings_log(x: FloatArray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.log(x)
    return float(np.sum(y ** 2))


# -- data --------------------------------------------------------------------------------------

_r = np.random.default_rng(341)
A3 = np.array([[2.0, 0.3, 0.0], [0.3, 1.5, 0.2], [0.0, 0.2, 1.0]])
P3 = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
R3 = np.array([1.0, 0.5, -0.2])
X6 = np.linspace(-1.0, 1.0, 6)

PROBES = {
    "household_lifetime_utility": (household_lifetime_utility,
                                   (np.array([0.95, 2.0]), np.array([0.9, 1.0, 1.2])), True),
    "heavy_ball": (heavy_ball, (np.array([0.3, -0.2, 0.5]), A3), True),
    "portfolio_objective": (portfolio_objective, (np.array([0.5, 0.3, 0.2]), A3 / 10,
                                                  np.array([0.05, 0.07, 0.03])), True),
    "expected_utilities": (expected_utilities, (np.array([0.8, 1.1, 1.5]),
                                                np.array([0.3, 0.4, 0.3])), True),
    "loss_by_match": (loss_by_match, (np.array([0.2, -1.3, 0.7, 0.05]),), True),
    "kde_by_kernel": (kde_by_kernel, (0.8, _r.standard_normal(8), np.linspace(-1, 1, 5)),
                      True),
    "payoff_by_match": (payoff_by_match, (np.array([0.8, 1.2, 1.5]), ("call", 1.0)), True),
    "expected_crra": (expected_crra, (np.array([0.05, 0.2]),), True),
    "binomial_smooth": (binomial_smooth, (np.sin(np.linspace(0, 3, 9)),), True),
    "errstate_log_returns": (errstate_log_returns, (np.array([1.0, 1.1, 1.05, 1.2]),), True),
    "pv_by_generator": (pv_by_generator, (0.04, [5.0, 5.0, 105.0]), True),
    "grid_product_energy": (grid_product_energy, (np.array([0.5, -0.3, 0.8]),), True),
    "pairwise_trapezoid": (pairwise_trapezoid, (np.sin(X6), X6), True),
    "best_option_value": (best_option_value, (np.array([1.0, 1.6, 0.7]),), True),
    "top_k_mean": (top_k_mean, (np.array([0.5, -2.0, 1.2, 0.1, -0.7]),), True),
    "fixed_point_walrus": (fixed_point_walrus, (0.9, R3, P3), True),
    "warned_log_likelihood": (warned_log_likelihood, (0.8, X6), True),
    "asserted_quadratic": (asserted_quadratic, (np.array([0.3, -0.2, 0.5]), A3), True),
    "safe_cholesky_logdet": (safe_cholesky_logdet, (np.array([0.7, 0.1]), X6), True),
    "named_tuple_result": (named_tuple_result, (2 * X6 + 0.1 * _r.standard_normal(6), X6),
                           True),
    "call_keyword_only": (call_keyword_only, (np.array([0.2, -0.4, 0.9]),), True),
    "pv_by_count": (pv_by_count, (0.04, [5.0, 5.0, 105.0]), True),
    "alternating_series": (alternating_series, (np.array([0.5, 1.2, 0.8, 1.7]),), True),
    "compounded": (compounded, (np.array([0.02, -0.01, 0.03, 0.01]),), True),
    "annuity_by_enum": (annuity_by_enum, (3.0,), True),
    "dataclass_helpers": (dataclass_helpers, (np.array([0.95, 2.0]),), True),
    "cheapest_by_itemgetter": (cheapest_by_itemgetter, (np.array([0.5, 1.2, -0.3, 1.7]),),
                               True),
    "fsum_fmean_start": (fsum_fmean_start, (np.array([0.5, 1.2, 0.8]),), True),
    "cached_float_helper": (cached_float_helper, (0.9,), True),
    "pairwise_dispersion": (pairwise_dispersion, (np.array([0.5, 1.2, 0.8, 1.7]),), True),
    "typing_cast_value": (typing_cast_value, (0.7,), True),
    "accumulate_wealth": (accumulate_wealth, (np.array([0.02, -0.01, 0.03, 0.01]),), True),
    # general context managers run once around the body (with_blocks.py; PB202 before)
    "timed_value_iteration": (timed_value_iteration, (0.9, R3, P3), True),
    # __slots__: a plain class whose fields live in slots (plain_classes.py; PB301 before)
    "slotted_energy": (slotted_energy, (np.array([0.2, 0.7]),), True),
    # a functools.cached_property of an object only read (property_reads.py; PB501 before)
    "cached_property_value": (cached_property_value, (0.33,), True),
    "catch_warnings_log": (catch_warnings_log, (np.array([0.5, 1.5]),), True),
}

test_probe, test_float32 = probe_tests(PROBES, quick=6)

REFUSED = {
    "post_init_value": (post_init_value, (np.array([0.95, 2.0]),),
                        ("PB301", "__post_init__", "in a method or a property")),
}

test_refused = refusal_test(REFUSED)
