"""What stays refused among changes of lists and dicts (PB106): an argument's container,
a global, a closure variable, a local another name or container holds (or a loop iterates)
while it changes, an augmented slice store, a store into a row that may be seen from
another place — before anything runs, at the user's line, with the copy as the fix; an
augmented store into an item that ``op=`` changes in place, when it runs; and the
suggested fixes pass."""

import numpy as np
import pytest
from list_mutation_refusal_cases import (
    REFUSED,
    aliased,
    aliased_after_changes,
    changed_after_the_loop,
    dict_parameter_fixed,
    nested_row_held,
    nested_store,
    nested_store_fixed,
    of_global,
    of_parameter,
    of_parameter_fixed,
    slice_store,
)

from pullback import grad
from pullback.check import check
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, 0.7, -0.4, 1.1, 0.6])


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_refused_before_anything_runs(f):
    found = check(f)
    assert [d.code for d in found] == ["PB106"], [d.header() for d in found]
    assert "(see docs/limitations.md#PB106)" in found[0].fix
    with pytest.raises(UnsupportedSyntaxError):
        grad(f)(X, [1.0]) if f.__code__.co_argcount == 2 else grad(f)(X)


def _message(f):
    (d,) = check(f)
    lines = d.format().splitlines()
    head = lines[0].replace(d.filename, d.filename.rsplit("/", 1)[-1])
    return "\n".join([head] + lines[3:])


def test_golden_parameter():
    assert _message(of_parameter) == (
        "  list_mutation_refusal_cases.py:9:5: PB106 container mutation: 'l.insert(0, x[0])' "
        "changes 'l' in place\n"
        "    'l' comes from a parameter, so it is the caller's list, and a differentiated "
        "function may change only lists and dicts it built itself.\n"
        "    Fix: copy it first: write `l = list(l)` before the first change "
        "(see docs/limitations.md#PB106)."
    )


def test_golden_global():
    assert _message(of_global) == (
        "  list_mutation_refusal_cases.py:14:5: PB106 container mutation: "
        "'SHARED.insert(0, x[0])' changes 'SHARED' in place\n"
        "    'SHARED' is a global: the change would outlive the call, and a differentiated "
        "function may change only lists and dicts it built itself.\n"
        "    Fix: work on a copy: write `SHARED = list(SHARED)` before the first change and "
        "return it (see docs/limitations.md#PB106)."
    )


def test_golden_alias():
    assert _message(aliased) == (
        "  list_mutation_refusal_cases.py:31:5: PB106 container mutation: "
        "'l.insert(0, x[1])' changes 'l' in place\n"
        "    'l' is also used on line 30 in a way that lets another name, a container or a "
        "call hold the same object (or a loop iterate over it) while it still changes, and "
        "pullback does not follow that sharing.\n"
        "    Fix: copy it where it is shared (`l` -> `list(l)`), or make that use come after "
        "the last change (see docs/limitations.md#PB106)."
    )


def test_golden_nested():
    assert _message(nested_store) == (
        "  list_mutation_refusal_cases.py:57:5: PB106 container mutation: "
        "'rows[0][1] = ...' changes a list inside 'rows'\n"
        "    The rows of 'rows' may be one object seen from several places: "
        "`[[x[0], x[1]]] * 2` on line 56 puts in a row that is not a new list (as "
        "`[[0.0] * n] * m` repeats one row), which pullback does not follow.\n"
        "    Fix: make every row a new list (`[[0.0] * n for _ in range(m)]`, `list(row)`), "
        "or copy the row, change the copy and store it back: `row = list(rows[0])`, "
        "`row[1] = ...`, `rows[0] = row` (see docs/limitations.md#PB106)."
    )


def test_golden_nested_with_a_row_held_elsewhere():
    assert _message(nested_row_held) == (
        "  list_mutation_refusal_cases.py:115:5: PB106 container mutation: "
        "'rows[0][1] = ...' changes a list inside 'rows'\n"
        "    `rows[0]` on line 114 may hold a row of 'rows' (or 'rows' itself) while its rows "
        "still change, and the change would show through it, which pullback does not follow.\n"
        "    Fix: copy it there (`list(rows[0])`), or make that use come after the last change "
        "(see docs/limitations.md#PB106)."
    )


def test_an_augmented_store_into_an_array_item_is_refused_when_it_runs():
    from list_mutation_refusal_cases import augmented_array_item

    from pullback.errors import UnsupportedCallError

    with pytest.raises(UnsupportedCallError, match="item that is a ndarray") as info:
        grad(augmented_array_item)(X)
    assert "`l[i] = l[i] + v`" in str(info.value)
    assert "list_mutation_refusal_cases.py:126" in str(info.value)


def test_golden_augmented_slice_store():
    assert _message(slice_store) == (
        "  list_mutation_refusal_cases.py:51:5: PB106 container mutation: 'l[0:2] += ...' "
        "changes 'l' in place\n"
        "    An augmented assignment to a slice of a list is not modelled (slice stores and "
        "deletes are).\n"
        "    Fix: write it out as a slice store: `l[0:2] = l[0:2] + ...` "
        "(see docs/limitations.md#PB106)."
    )


def test_the_suggested_slice_store_passes():
    def f(x):
        l = [x[0], x[1], x[2]]
        l[0:2] = l[0:2] + [x[2]]
        return l[0] * l[2] + l[3]

    assert check(f) == []
    np.testing.assert_allclose(grad(f)(X), [X[2], 0, X[0] + 1.0, 0, 0])


def test_the_suggested_fixes_pass_and_leave_the_caller_alone():
    caller = [2.0, 3.0]
    assert check(of_parameter_fixed) == []
    np.testing.assert_allclose(grad(of_parameter_fixed)(X, caller), [1.0, 0, 0, 0, 0])
    assert caller == [2.0, 3.0]
    np.testing.assert_allclose(grad(nested_store_fixed)(X), [0, 0, X[4], 0, X[2]])
    np.testing.assert_allclose(grad(aliased_after_changes)(X), [X[1], X[0], 0, 0, 0])
    d = {"b": 3.0}
    np.testing.assert_allclose(grad(dict_parameter_fixed)(X, d), [3.0, 0, 0, 0, 0])
    assert d == {"b": 3.0}


def test_a_value_that_is_not_the_list_the_check_assumed_is_refused_when_it_runs():
    from list_mutation_refusal_cases import array_plus_list

    from pullback.errors import UnsupportedCallError

    with pytest.raises(UnsupportedCallError, match="a change of a list ran on a ndarray"):
        grad(array_plus_list)(X)


def test_plus_equals_with_what_is_not_a_display_is_refused():
    from list_mutation_refusal_cases import plus_equals_array

    assert [d.code for d in check(plus_equals_array)] == ["PB105"]


def test_a_change_after_the_loop_reaches_the_dict_handed_on():
    # each of the two changes is reported (the one in the loop and the one after it)
    found = check(changed_after_the_loop)
    assert [d.code for d in found] == ["PB106", "PB106"], [d.header() for d in found]
    with pytest.raises(UnsupportedSyntaxError):
        grad(changed_after_the_loop)(X)


def appended_under_an_alias(x):
    hist = []
    alias = hist
    for v in x:
        alias.append(v * v)
    return sum(hist)


def appended_then_read_under_an_alias(x):
    out = []
    res = out
    for v in x:
        out.append(np.sin(v))
    return sum(res)


def appended_through_a_chain_of_names(x):
    a = []
    b = a
    c = b
    c.append(x[0] ** 2)
    return a[0] + x[1]


def appended_under_an_alias_then_stacked(x):
    hist = []
    alias = hist
    alias.append(x[0] * 3)
    return np.sum(np.array(hist)) + x[1]


class _Tracker:
    def __init__(self):
        self.hist = []


def appended_to_an_attribute_under_a_name(x):
    t = _Tracker()
    h = t.hist
    for v in x:
        h.append(v * v)
    return sum(t.hist)


def appended_to_an_entry_under_a_name(x):
    d = {"h": []}
    h = d["h"]
    for v in x:
        h.append(v * v)
    return sum(d["h"])


def appended_to_a_row_under_a_name(x):
    rows = [[], []]
    r = rows[0]
    r.append(x[0] ** 2)
    return rows[0][0] + x[1]


def appended_under_a_walrus_name(x):
    hist = []
    if (alias := hist) is not None:
        alias.append(x[0] ** 2)
    return sum(hist)


def appended_to_each_group_of_a_loop(x):
    groups = [[], []]
    for g in groups:
        g.append(x[0] ** 2)
    return sum(groups[0]) + sum(groups[1])


def _twice():
    h = []
    return h, h


def appended_to_one_of_two_unpacked_names(x):
    a, b = _twice()
    a.append(x[0] ** 2)
    return sum(b)


@pytest.mark.parametrize("f", [appended_under_an_alias, appended_then_read_under_an_alias,
                               appended_through_a_chain_of_names,
                               appended_under_an_alias_then_stacked,
                               appended_to_an_attribute_under_a_name,
                               appended_to_an_entry_under_a_name, appended_to_a_row_under_a_name,
                               appended_under_a_walrus_name, appended_to_each_group_of_a_loop,
                               appended_to_one_of_two_unpacked_names],
                         ids=lambda f: f.__name__)
def test_an_append_under_another_name_of_the_list_is_refused(f):
    # the list read back under the other name got no gradient from the append (zeros)
    with pytest.raises(UnsupportedSyntaxError, match="PB106"):
        grad(f)(X)


def appended_under_one_name(x):
    hist = []
    for v in x:
        hist.append(v * v)
    alias = hist
    return sum(alias)


def test_a_second_name_bound_after_the_appends_is_differentiated():
    np.testing.assert_allclose(grad(appended_under_one_name)(X), 2 * X)
    np.testing.assert_allclose(grad(appended_under_one_name)(X.astype(np.float32)),
                               2 * X.astype(np.float32), rtol=1e-6)
