"""Stores into the rows of a local list of lists (``rows[i][j] (op)= v``), used by
tests/test_list_mutation_nested.py: the rows allowed (new lists only the list holds) and
the ones refused (a row seen from two places)."""

import numpy as np


def grid_fill(x):
    rows = [[0.0] * 3 for _ in range(2)]
    for i in range(2):
        for j in range(3):
            rows[i][j] = x[i + j] * (i + 1.0)
    rows[1][-1] += x[0] * x[4]
    rows[0][1] *= x[3]
    return np.sum(np.array(rows) ** 2)


def appended_rows(x):
    rows = []
    for i in range(3):
        rows.append([x[i], x[i + 1]])
    rows[2][0] = rows[0][1] * x[4]
    rows.insert(0, [x[4], x[3]])
    rows[0][1] -= rows[3][0]
    return np.sum(np.array(rows) * np.arange(8.0).reshape(4, 2))


def display_of_rows(x):
    rows = [[x[0], x[1]], list(x[2:4]), [x[4]] + [x[0]]]
    rows[1][0] = rows[2][1] * x[1]
    rows[-1][-1] += rows[1][0]
    del rows[0]
    rows.reverse()
    rows[0][0] = x[2] * 3.0
    total = 0.0
    for r in rows:  # after the last change: may hold the rows
        total = total + r[0] * r[1]
    return total


def rows_rebound(x):
    rows = [[x[k], x[k] * 2.0] for k in range(3)]
    rows[1] = [x[3], x[4]]  # a new row
    rows[1][1] = rows[1][0] * rows[0][1]
    v = rows.pop(0)
    rows[0][0] = v[1] * x[2]
    return rows[0][0] * rows[0][1] + rows[1][1]


def array_items(x):
    rows = [[x[0:2], x[1:3]], [x[2:4], x[3:5]]]
    rows[0][1] = rows[1][0] * x[4]
    rows[1][1] = rows[1][1] - rows[0][0]
    return np.sum(np.array(rows) ** 2)


CASES = [grid_fill, appended_rows, display_of_rows, rows_rebound, array_items]


# -- refused: a row may be seen from another place ---------------------------------------
def iterated_before(x):
    rows = [[x[0]], [x[1]]]
    firsts = [r for r in rows]
    rows[0][0] = x[2]
    return firsts[0][0]


def copied_before(x):
    rows = [[x[0]], [x[1]]]
    other = list(rows)
    rows[0][0] = x[2]
    return other[0][0]


def sliced_before(x):
    rows = [[x[0]], [x[1]]]
    head = rows[:1]
    rows[0][0] = x[2]
    return head[0][0]


def slot_copied(x):
    rows = [[x[0]], [x[1]]]
    rows[1] = rows[0]
    rows[0][0] = x[2]
    return rows[1][0]


def extended_from_a_name(x):
    more = [[x[1]]]
    rows = [[x[0]]]
    rows.extend(more)
    rows[1][0] = x[2]
    return more[0][0]


def read_in_the_loop(x):
    rows = [[x[0]], [x[1]]]
    keep = []
    for i in range(2):
        keep.append(rows[i])
        rows[i][0] = x[i + 2]
    return keep[0][0]


REFUSED = [
    iterated_before,
    copied_before,
    sliced_before,
    slot_copied,
    extended_from_a_name,
    read_in_the_loop,
]
