"""Golden tests of the passes: the normalized and SSA forms, and that they compute what the
original function computes."""

import textwrap

import numpy as np
import pytest

from pullback.transform.normalize import core_source


def clipped_sum(x, limit):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s += v * v
        if s > limit:
            break
    return s if s < 2 * limit else limit


NORMALIZED = """\
def clipped_sum(x, limit):
    _ret = None
    _returned = False
    s = 0.0
    _seq2 = as_sequence(x)
    _n3 = len(_seq2)
    for _k1 in range(_n3):
        v = _seq2[_k1]
        _go5 = True
        _t4 = v < 0
        if _t4:
            _go5 = False
            continue
        if _go5:
            _t6 = v * v
            s = s + _t6
            _go8 = True
            _t7 = s > limit
            if _t7:
                _go8 = False
                break
            if _go8:
                pass
    _t9 = 2 * limit
    _t10 = s < _t9
    if _t10:
        _v11 = s
    else:
        _v11 = limit
    _ret = _v11
    _returned = True
    return _ret"""

SSA = """\
def clipped_sum(x, limit):
    s = 0.0
    _seq2 = as_sequence(x)
    _n3 = len(_seq2)
    s_1 = s
    for _k1 in range(_n3):
        v = _seq2[_k1]
        _go5 = True
        _t4 = v < 0
        if _t4:
            _go5 = False
            pass
            continue
        if _go5:
            _t6 = v * v
            s_2 = s_1 + _t6
            _go8 = True
            _t7 = s_2 > limit
            if _t7:
                _go8 = False
                pass
                s_1 = s_2
                break
            if _go8:
                pass
                s_1 = s_2
        else:
            pass
    _t9 = 2 * limit
    _t10 = s_1 < _t9
    if _t10:
        _v11 = s_1
        _v11_2 = _v11
    else:
        _v11_1 = limit
        _v11_2 = _v11_1
    _ret_1 = _v11_2
    return _ret_1"""


def test_normalized_form_golden():
    assert core_source(clipped_sum).strip() == NORMALIZED


def test_ssa_form_golden():
    assert core_source(clipped_sum, ssa=True).strip() == SSA


def run(source, *args):
    from pullback.runtime import as_sequence

    namespace = {"as_sequence": as_sequence, "np": np}
    exec(textwrap.dedent(source), namespace)
    return namespace["clipped_sum"](*args)


@pytest.mark.parametrize("x,limit", [([1.0, -2.0, 0.5], 10.0), ([3.0, 1.0, 2.0], 4.0), ([], 1.0)])
def test_passes_preserve_the_value(x, limit):
    want = clipped_sum(np.array(x), limit)
    assert run(core_source(clipped_sum), np.array(x), limit) == want
    assert run(core_source(clipped_sum, ssa=True), np.array(x), limit) == want
