"""Slice stores and slice deletes on local lists (used by test_list_mutation_slices.py):
length-changing stores, extended slices, negative and omitted bounds, stores from tuples,
arrays and comprehensions, in loops, read after write, array elements."""

import numpy as np


def grow_and_shrink(x):
    l = [x[0], x[1], x[2], x[3]]
    l[1:3] = [x[4] * 2.0, x[0] * x[1], x[2]]  # three items for two places
    l[-2:] = [l[-1] * x[3]]  # two for one
    l[5:9] = [x[1]]  # past the end: appended
    l[3:1] = [x[0] * 0.5]  # an empty slice: inserted at 3
    return np.sum(np.array(l) * np.arange(1.0, len(l) + 1.0))


def extended(x):
    l = [x[0], x[1], x[2], x[3], x[4]]
    l[::2] = (x[1], x[2] * 3.0, x[3])
    l[-1::-2] = [v * x[0] for v in l[::2]]
    l[4:0:-3] = [x[2] * x[2], l[0]]
    return np.sum(np.array(l) * np.arange(1.0, 6.0))


def deletes(x):
    l = [x[k % 5] * (k + 1.0) for k in range(9)]
    del l[1:3]
    del l[::-3]
    del l[5:100]
    del l[2:2]
    return np.sum(np.array(l) ** 2)


def whole_list(x):
    l = [x[0], x[1]]
    l[:] = [v * x[2] for v in l] + [x[3]]
    del l[:1]
    l[:] = x[2:5]  # an array's items
    return np.sum(np.array(l) * l[0])


def in_a_loop(x):
    l = [x[0]]
    for i in range(1, 5):
        l[len(l) :] = [x[i] * l[-1], x[i]]
        del l[:1]
        l[0:1] = [l[0] * 0.5]
    return np.sum(np.array(l) * np.arange(1.0, len(l) + 1.0))


def array_items(x):
    l = [x[0:2], x[1:3], x[2:4]]
    l[1:] = [x[3:5] * x[0]]
    l[:0] = [x[0:2] * 2.0, x[1:3]]
    del l[::2]
    return np.sum(np.stack(l) ** 2)


CASES = [grow_and_shrink, extended, deletes, whole_list, in_a_loop, array_items]
