"""The benchmark workloads, one small module each (pullback needs their source)."""

from . import (
    euler_ode,
    helper_calls,
    mlp,
    mse_loop,
    readme_matmul,
    records,
    rosenbrock_loop,
    sum3,
)

WORKLOADS = [
    *readme_matmul.WORKLOADS,
    *mse_loop.WORKLOADS,
    *sum3.WORKLOADS,
    *mlp.WORKLOADS,
    *rosenbrock_loop.WORKLOADS,
    *euler_ode.WORKLOADS,
    *records.WORKLOADS,
    *helper_calls.WORKLOADS,
]
