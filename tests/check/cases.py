"""Functions with one unsupported construct each, for the golden tests of the check.

The golden strings in test_golden.py name lines of this file: add new cases at the end.
None of these functions is ever called.
"""

# ruff: noqa
import numpy as np

from . import callee_cases

GLOBAL_STATE = 0.0


def pb101_element(x, i):
    x[i] = 2.0 * x[i]
    return np.sum(x)


def pb101_slice_in_tuple(x, v):
    a, x[1:3] = 1.0, v
    return np.sum(x) * a


def pb102_augmented_element(x, i):
    x[i] += 1.0
    return np.sum(x)


def pb103_sort(x):
    x.sort()
    return x[0]


def pb104_out(a, b):
    np.multiply(a, b, out=a)
    return np.sum(a)


def pb104_ufunc_at(g, idx, v):
    np.add.at(g, idx, v)
    return np.sum(g)


def pb104_copyto(dst, src):
    np.copyto(dst, src)
    return np.sum(dst)


def pb105_parameter(x):
    x += 1.0
    return np.sum(x)


def pb105_alias(x):
    y = x * 2.0
    z = y
    y *= 3.0
    return np.sum(y) + np.sum(z)


def pb106_insert(x, out):
    x = x * 2.0
    out.insert(0, x)
    return out


def pb106_append_read_back(x, log):
    log.append(x * 2.0)
    return log[-1]


def pb106_del_item(d):
    del d["a"]
    return d


def pb107_attribute(x, state):
    state.value = x * 2.0
    return state.scaled(x)  # a method may read state.value back: refused


def pb108_del_name(x):
    y = x * 2.0
    del y
    return x


def pb109_bare_annotation(x):
    y: float
    return x


def pb202_with_in_try(x):
    try:
        with memoryview(x) as _m:
            y = np.log(x)
    except FloatingPointError:
        y = x
    return y


def pb202_with(x):
    with memoryview(x) as log:
        y = np.log(x)
    return y


def pb301_foreign(x):
    return sum(sorted(x))


def pb302_undefined(x):
    return np.summ(x) + undefined_helper(x)


def pb401_global(x):
    global GLOBAL_STATE
    GLOBAL_STATE = x
    return x


def pb402_yield(x):
    yield x * 2.0


def pb403_async(x):
    async def fetch():
        return await x

    return fetch


def pb404_lambda(x):
    fs, x = {"f": lambda v: x * v}, 2.0 * x  # the lambda reads the new x
    return fs["f"](x)


def pb405_nested_def(x):
    def inner(v):
        return x * v

    helpers, x = {"inner": inner}, 2.0 * x  # inner reads the new x
    return helpers["inner"](x)


def pb406_class(x):
    class Box:
        pass

    return x


def pb407_eval(x):
    return eval("x * 2")


def pb408_import(x):
    if x > 0:
        import math
    return math.exp(x)


def pb409_match(x, kind):
    match kind:
        case ("scale", k) | (k, "scale"):
            return k * x
    return x


def unpacks_star_middle(x):
    first, *middle, last = x  # noqa: F841


def unpacks_star_loop_target(rows):
    for first, *rest in rows: return first  # noqa: E701


def unpacks_star_target(x):
    first, *rest = x
    return first


def walrus_now_works(x):
    if (n := len(x)) > 3:
        return x[0] * n
    return x[0]


def calls_callee(x):
    return callee_cases.mutates(x) + 1.0


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2.0, n - 1) + ping(x, n)


def ping(x, n):
    if n <= 0:
        return x
    return pong(x, n - 1)


def pong(x, n):
    x[0] = 1.0
    return ping(x, n - 1)


def several(x, i):
    x[i] = 0.0
    try:
        y = x * 2.0
    finally:
        pass
    out = x.tolist()
    out.insert(0, y)
    return sorted(out)


def supported(w, x, y, /, n=3, *, reg=0.1):
    """Everything in the supported subset."""
    p = np.tanh(x @ w)
    r = p - y
    total = 0.0
    for i in range(len(r)):
        total += r[i] ** 2
        if total > 1e6:
            break
    else:
        pass
    k = 0
    while k < n:
        k += 1
    a, (b, c) = 1.0, (2.0, 3.0)
    acc = ()
    for v in r:
        acc = acc + (v,)
    st = np.stack(acc)
    assert st.shape[0] == r.shape[0], f"bad {st.shape}"
    if reg < 0:
        raise ValueError(f"negative reg {reg!r}")
    print("loss", total)
    m: float = 0.5
    m *= 2.0
    z = x.T @ r + x.sum(axis=0).mean()
    d = {"a": a, "b": b}
    s = -z
    s += c
    return np.mean(r**2) + reg * np.sum(w * w) + total + d["a"] + st.sum() + s.sum() * m


def calls_with_rule(x):
    return callee_cases.has_rule(x)


def calls_sourceless(x):
    return callee_cases.SOURCELESS(x)


def lambda_star_args_now_work(x):
    weigh = lambda first, *rest: first * len(rest)  # noqa: E731
    return weigh(x, x, x)
