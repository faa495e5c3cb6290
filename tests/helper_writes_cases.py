"""Helpers that write into the arrays their callers pass (tests/test_helper_writes.py)."""

import numpy as np


def fill(out, x):
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * 2.0
    return out


def fill_none(out, x):
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * 2.0


def result_used(x):
    buf = np.zeros(x.shape[0])
    buf = fill(buf, x)
    return np.sum(buf ** 2)


def result_unused(x):
    buf = np.zeros(x.shape[0])
    fill(buf, x)
    return np.sum(buf ** 2) + buf[0] * x[1]


def returns_nothing(x):
    buf = np.ones(x.shape[0])
    s = np.sum(buf * x)  # read before the call
    fill_none(buf, x)
    return s * np.sum(buf * x)


def fresh_argument(x):
    out = fill(np.zeros(x.shape[0]), x)
    return np.sum(out * x)


def fresh_arithmetic_argument(x):
    out = fill(x * 0.0, x)
    out[0] = out[0] * x[1]  # a local array: written afterwards
    return np.sum(out ** 3)


def recurrence(out, x):
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = 0.5 * out[i - 1] + np.cos(x[i])
    return out


def reads_before_writing(x):
    buf = np.zeros(x.shape[0])
    buf = recurrence(buf, x)
    return np.sum(buf * buf * x)


def branchy(out, x, scale):
    for i in range(x.shape[0]):
        if x[i] > 0.4:
            out[i] += scale * x[i] ** 2
        else:
            out[i] -= np.exp(x[i])
    out[1:3] = out[1:3] * x[0]
    out[out > 1.0] = 1.0 + 0.1 * x[2]
    return out


def loops_and_branches(x):
    buf = x * 1.5
    buf = branchy(buf, x, 3.0)
    return np.sum(np.tanh(buf))


def inner_write(out, x):
    out[:] = out * x
    return out


def outer_write(out, x):
    out[0] = x[0] + 1.0
    inner_write(out, x)
    return out


def helpers_calling_helpers(x):
    buf = np.ones(x.shape[0])
    buf = outer_write(buf, x)
    return np.sum(buf ** 2)


def inplace_methods(out, x):
    out.fill(x[0])
    np.copyto(out, out * x)
    np.multiply(out, x, out=out)
    out += x
    return out


def in_place_calls(x):
    buf = np.empty(x.shape[0])
    inplace_methods(buf, x)
    return np.sum(buf ** 2)


def fancy(out, x, idx):
    out[idx] += x[: idx.shape[0]] ** 2
    return out


def fancy_index(x):
    buf = np.zeros(x.shape[0])
    fill(buf, x)
    buf = fancy(buf, x, np.array([0, 2, 2]))
    return np.sum(buf * x)


def two_calls_in_a_loop(x):
    buf = np.zeros(x.shape[0])
    total = 0.0
    for k in range(3):
        buf = recurrence(buf, x * (k + 1.0))
        total = total + np.sum(buf) * buf[k]
    return total


def write_after_call(x):
    buf = np.zeros(x.shape[0])
    fill(buf, x)
    buf[1] = buf[0] * buf[2]
    buf += x
    return np.sum(buf ** 2)


def recursive_fill(out, x, k):
    if k < 0:
        return out
    out[k] = np.sin(x[k]) + (out[k + 1] if k + 1 < x.shape[0] else 0.0)
    return recursive_fill(out, x, k - 1)


def recursion(x):
    buf = np.zeros(x.shape[0])
    buf = recursive_fill(buf, x, x.shape[0] - 1)
    return np.sum(buf * buf)


def two_owned(a, b, x):
    a[0] = x[0] * 2.0
    b[1] = x[1] * a[0]
    return np.sum(a) + np.sum(b)


def two_arrays(x):
    p = np.zeros(3)
    q = np.ones(3)
    s = two_owned(p, q, x)
    return s * np.sum(p * q) + np.sum(q ** 2)


def keyword_argument(x):
    buf = np.zeros(x.shape[0])
    fill_into(x=x, dest=buf)
    return np.sum(buf ** 2)


def matrix_rows(out, x):
    for i in range(out.shape[0]):
        out[i, :] = x * (i + 1.0)
    return out


def two_dimensional(x):
    m = matrix_rows(np.zeros((3, x.shape[0])), x)
    return np.sum(np.sin(m))


CASES = [
    result_used,
    result_unused,
    returns_nothing,
    fresh_argument,
    fresh_arithmetic_argument,
    reads_before_writing,
    loops_and_branches,
    helpers_calling_helpers,
    in_place_calls,
    fancy_index,
    two_calls_in_a_loop,
    write_after_call,
    recursion,
    two_arrays,
    keyword_argument,
    two_dimensional,
]


# -- refused --------------------------------------------------------------------------------
def passes_its_parameter(x):
    fill(x, x)
    return np.sum(x)


G = np.zeros(4)


def passes_a_global(x):
    fill(G, x)
    return np.sum(G * x)


def passes_a_view(x):
    buf = np.zeros(x.shape[0] + 2)
    fill(buf[1:4], x)
    return np.sum(buf)


def result_aliases(x):
    buf = np.zeros(x.shape[0])
    r = fill(buf, x)
    buf[0] = 5.0
    return np.sum(r * x)


def passes_a_shared_local(x):
    buf = np.zeros(x.shape[0])
    alias = buf
    fill(buf, x)
    return np.sum(alias * x)


def forwards_parameter(out, x):
    fill(out, x)
    return out


def passes_parameter_through_helper(x):
    return np.sum(forwards_parameter(x, x))


def call_inside_expression(x):
    buf = np.zeros(x.shape[0])
    return np.sum(fill(buf, x)) + buf[0]  # which buf[0]? refused: read it on a line of its own


def fill_into(dest, x):
    dest[:] = np.cos(x) * x


def append_rows(rows, x):
    for i in range(x.shape[0]):
        rows.append(x[i] ** 2)
    rows[0] = rows[0] * 3.0
    return rows


def list_helper(x):
    acc = [x[1]]
    acc = append_rows(acc, x)
    return sum(acc)


def store_keys(d, x):
    d["a"] = np.sum(x * 2.0)
    d["b"] = d["a"] * x[0]


def dict_helper(x):
    table = {"c": x[2]}
    store_keys(table, x)
    return table["a"] + table["b"] * table["c"]


# -- the fixes the refusals suggest -----------------------------------------------------------
def fixed_own_parameter(x):
    y = fill(x.copy(), x)
    return np.sum(y * x)


def fixed_view(x):
    buf = np.zeros(x.shape[0] + 2)
    part = buf[1:5].copy()
    fill(part, x)
    buf[1:5] = part
    return np.sum(buf * buf)


CASES += [fixed_own_parameter, fixed_view]


def passes_one_array_twice(x):
    p = np.zeros(3)
    two_owned(p, p, x)
    return np.sum(p)


def reads_and_writes(out, src):
    for i in range(1, src.shape[0]):
        out[i] = src[i - 1] * 2.0


def passes_array_as_source_too(x):
    buf = x * 1.0
    reads_and_writes(buf, buf)
    return np.sum(buf * x)


def passes_a_value_computed_from_it(x):
    buf = x * 1.0
    reads_and_writes(buf, buf * 3.0)
    return np.sum(buf * x)


class Filler:
    def write_into(self, out, x):
        out[0] = x[0] * 2.0
        return out


def method_helper(x):
    buf = np.zeros(2)
    buf = Filler().write_into(buf, x)
    return np.sum(buf)


CASES += [passes_a_value_computed_from_it]


def inside_expressions(x):
    buf = np.zeros(x.shape[0])
    s = np.sum(fill(buf, x)) * 2.0  # buf holds the writes afterwards
    t = np.sum(fill(np.zeros(x.shape[0]), x * 2.0) ** 2) if x[0] > 0 else 0.0
    return s + t + np.sum(buf * x)


def helper_in_an_expression(out, x):
    return np.sum(fill(out, x)) * 2.0


def chained_in_expression(x):
    buf = np.ones(x.shape[0])
    r = helper_in_an_expression(buf, x)
    return r * np.sum(buf ** 2)


CASES += [inside_expressions, chained_in_expression]


# -- lists and dicts ------------------------------------------------------------------------
def add_scaled(rows, v):
    rows.append(v * 2.0)


def extend_and_store(rows, x):
    rows.extend([x[0] * x[1], np.sin(x[2])])
    rows[0] = rows[0] + rows[-1]


def list_effects(x):
    acc = [x[0]]
    add_scaled(acc, x[1])
    extend_and_store(acc, x)
    acc.append(x[3] ** 2)
    total = 0.0
    for v in acc:
        total = total + v * v
    return total


def dict_effects(x):
    table = {"c": x[2]}
    store_keys(table, x)
    table["e"] = table["a"] * 0.5
    return table["a"] + table["b"] * table["c"] + table["e"]


def fresh_list_argument(x):
    rows = append_rows([x[1]], x)
    return sum(rows)


CASES += [list_helper, list_effects, dict_helper, dict_effects, fresh_list_argument]


def passes_its_list(rows, x):
    add_scaled(rows, x[0])
    return sum(rows)


def list_parameter(x):
    return passes_its_list([x[1]], x)


# -- a helper that keeps what it writes into: refused ------------------------------------------
KEPT = []


def keep_written(out, x):
    out[0] = x[0] * 2.0
    KEPT.append(out)
    return out


def kept_then_read(x):
    buf = np.zeros(2)
    buf = keep_written(buf, x)
    return np.sum(KEPT[-1] * x[:2])


class Holder:
    pass


HOLDER = Holder()


def keep_on_object(out, x):
    out[0] = x[0]
    HOLDER.last = out


def kept_on_object(x):
    buf = np.zeros(2)
    keep_on_object(buf, x)
    return np.sum(HOLDER.last * x[:2]) + np.sum(buf)


def fresh_arguments_in_tests_and_comprehensions(x):
    total = 0.0
    if np.sum(fill(np.zeros(x.shape[0]), x)) > 0.0:
        total = total + np.sum(fill(np.ones(x.shape[0]), x * x))
    parts = [np.sum(fill(np.zeros(x.shape[0]), x * k)) for k in (1.0, 2.0)]
    return total + parts[0] * parts[1]


CASES += [fresh_arguments_in_tests_and_comprehensions]


LOG = []


def logs_globally(x):
    add_scaled(LOG, x[0])  # a global log: runs as written, never read back here
    return np.sum(x ** 2)


CASES += [logs_globally]


def appends_to_its_list_parameter(x, rows):
    add_scaled(rows, x[1])
    return sum(rows) + x[0]


def adds_to_its_parameter(s, x):
    s += x[0] * 2.0
    return s


def passes_a_float_to_augmented_assignment(x):
    t = x[1] * 1.0
    t = adds_to_its_parameter(t, x)
    return t + adds_to_its_parameter(0.5, x)


def call_as_a_whole_test(x):
    total = 0.0
    while total < 1.0 and fill(np.zeros(x.shape[0]), x)[0] > -1.0:
        total = total + np.sum(fill(np.zeros(x.shape[0]), x * 0.5)) + 0.5
    if np.sum(fill(np.ones(2), x[:2])):
        total = total * x[3]
    return total


CASES += [call_as_a_whole_test]


def scalar_input(t):
    buf = np.zeros(3)
    fill(buf, np.array([t, 2.0 * t, t * t]))
    return np.sum(buf ** 3)


def nested_function_calls_the_helper(x):
    buf = np.zeros(x.shape[0])

    def run():
        fill(buf, x)

    run()
    return np.sum(buf ** 2)


CASES += [nested_function_calls_the_helper]


# -- out= on a user function: an ordinary argument, not NumPy's output array ------------


def scale(x, out=1.0):
    return x * out


def user_out_keyword(x):
    return np.sum(scale(x, out=3.0) ** 2)


def add_into(a, b, out=None):
    out[:] = a * b
    return out


def writes_through_out_keyword(x):
    buf = np.zeros(x.shape)
    add_into(x, x, out=buf)
    return np.sum(buf**2) + buf[1]


def out_keyword_passes_its_parameter(x, y):
    add_into(x, x, out=y)
    return np.sum(y**2)


CASES += [user_out_keyword, writes_through_out_keyword]
