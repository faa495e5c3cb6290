"""scipy.linalg.block_diag with more blocks than its pullback function once took (8), to
first and second order, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")
from pullback.testing import check_rrule, check_rrule_second_order  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_ten_blocks(dtype):
    g = np.random.default_rng(0)
    # matrices, vectors (one row) and a scalar, of different sizes
    blocks = [g.normal(size=(k % 3 + 1, (k + 1) % 2 + 1)).astype(dtype) for k in range(8)]
    blocks += [g.normal(size=4).astype(dtype), dtype(0.7)]
    check_rrule(sl.block_diag, *blocks)
    check_rrule_second_order(sl.block_diag, *blocks)
