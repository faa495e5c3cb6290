"""A list or dict read from an object before a method keeps a differentiated value in it
(``vals = logger.vals; logger.log(v); sum(vals)``): the read, made before the store, saw
nothing kept; the later use through the plain name gave a zero gradient. Each use of such
a name is checked again (transform/escape_sites.py, escapes.read_again)."""

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, jvp
from pullback.errors import UnsupportedCallError

X = np.array([0.5, -1.5, 2.0])


class Logger:
    def __init__(self):
        self.vals = []
        self.named = {}

    def log(self, v):
        self.vals.append(v)

    def put(self, key, v):
        self.named[key] = v

    def note(self, v):
        self.other = [v]  # a new list: what was read before is untouched


def held_list(x):
    logger = Logger()
    vals = logger.vals
    logger.log(x[0] ** 2)
    return sum(vals)


def held_dict(x):
    logger = Logger()
    named = logger.named
    logger.put("a", x[1] * 3.0)
    return sum(named.values())


def held_in_a_loop(x):
    logger = Logger()
    vals = logger.vals
    total = 0.0
    for v in x:
        logger.log(v * v)
        total = total + len(vals) * v
    return total + sum(vals)


@pytest.mark.parametrize("f", [held_list, held_dict, held_in_a_loop])
def test_a_container_read_before_the_store_is_refused_at_its_use(f):
    with pytest.raises(UnsupportedCallError) as info:
        grad(f)(X)
    message = str(info.value)
    assert "reads back a value that carries a gradient" in message
    assert "test_outside_reads_again.py:" in message


def test_forward_mode_refuses_it_too():
    with pytest.raises(UnsupportedCallError, match="reads back a value that carries a gradient"):
        jvp(held_list, (X,), (np.ones(3),))


def constants_logged(x):
    logger = Logger()
    vals = logger.vals
    logger.log(2.0)  # a constant: nothing differentiated is kept
    return sum(vals) * x[0] + x[1] ** 2


def another_list_stored(x):
    logger = Logger()
    vals = logger.vals
    logger.note(x[0] ** 2)  # stored in a new list, not in `vals`
    return len(vals) + np.sum(x**2)


@pytest.mark.parametrize("f", [constants_logged, another_list_stored])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_what_keeps_nothing_in_the_container_read_is_differentiated(f, dtype):
    check_grad(f, X.astype(dtype))
