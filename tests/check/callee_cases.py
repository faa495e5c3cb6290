"""Callees of the functions in cases.py, in a file of their own (never called)."""

# ruff: noqa
import numpy as np


def mutates(x):
    x[0] = 0.0
    return np.sum(x)


def has_rule(x):
    with memoryview(x) as _m:
        pass
    return x


_namespace = {}
exec("def sourceless(x):\n    return x\n", _namespace)
SOURCELESS = _namespace["sourceless"]
