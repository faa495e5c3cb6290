"""Functions that change local lists and dicts (issue 11), shared by
tests/test_list_mutation*.py. Each takes a 1-D array of at least 5 floats."""

import numpy as np


def set_and_read(x):
    l = [x[0], x[1], x[2]]
    l[0] = x[2] * 2.0
    l[-1] = l[0] * x[1]
    return l[0] * l[1] + l[2]


def augmented_items(x):
    l = [x[0], x[1], x[2]]
    l[1] += x[3] * l[0]
    l[0] *= x[1]
    l[-1] -= l[1]
    return l[0] * l[1] * l[2]


def deletes(x):
    l = [x[0], x[1], x[2], x[3]]
    del l[1]
    del l[-1]
    return l[0] * 3.0 + l[1] * l[0]


def inserts(x):
    l = [x[0]]
    l.insert(0, x[1] * 3.0)
    l.insert(-1, x[2] * x[0])
    l.insert(100, x[3])
    l.insert(-100, x[4])
    return l[0] * l[1] + l[2] * l[3] - l[4] * l[0] * 0.5


def pops(x):
    l = [x[0], x[1], x[2], x[3]]
    v = l.pop()
    w = l.pop(0)
    return v * w + sum(l) * l.pop(-1)


def extends(x):
    l = [x[0]]
    l.extend([x[1], x[2] * 2.0])
    l.extend((x[3], x[4]))
    l += [x[1] * x[0]]
    l.extend(v * v for v in [x[2], x[3]])
    return np.sum(np.array(l) ** 2)


def dict_ops(x):
    d = {}
    d["a"] = x[0]
    d["b"] = x[1] * 2.0
    d["a"] += x[2]
    d.update({"c": x[3]})
    d.update(b=x[4] * d["b"])
    v = d.pop("a")
    w = d.pop("z", x[0])
    e = d.setdefault("e", x[1])
    d.setdefault("b", 0.0)
    del d["c"]
    return v * w + d["b"] * e + len(d)


def reorder(x):
    l = [x[2], x[0], x[1], x[3]]
    l.reverse()
    a = l[0] * 2.0 + l[1]
    l.sort()
    b = l[0] * 3.0 + l[-1]
    l.sort(key=lambda v: -v)
    c = l[0] * l[1]
    l.remove(x[0])
    l.clear()
    l.append(x[4])
    return a + b * c + l[0]


def in_loops_and_branches(x):
    l = []
    for i in range(5):
        l.append(x[i] * x[i])
        if i % 2 == 1:
            l[0] = l[0] + x[i] * l[-1]
        else:
            l.insert(0, l.pop() * 0.5)
    return np.sum(np.stack(l) * np.arange(1.0, len(l) + 1.0))


def work_list(x):
    work = [x[i] for i in range(5)]
    total = 0.0
    while work:
        v = work.pop()
        if len(work) > 2:
            work[0] = work[0] + v * 0.5
        total = total + v * v
    return total


def array_elements(x):
    rows = [x[:2], x[2:4]]
    rows[0] = rows[0] * x[4]
    rows.insert(1, x[1:3] + 1.0)
    last = rows.pop()
    return np.sum(np.stack(rows) ** 2) + np.sum(last * rows[0])


def _grow(items, v):
    items = list(items)  # the helper's own list
    items.append(v * v)
    items[0] = items[0] * v
    return items


def through_helper(x):
    l = [x[0], x[1]]
    l.insert(1, x[3])
    # a helper that changes its own copy; its result is not provably new, so the
    # function copies it to change it again
    m = list(_grow(l, x[2]))
    m[1] = m[1] * l[0]
    return sum(m) * m[0] + sum(l)


def copies(x):
    a = [x[0], x[1]]
    b = a.copy()
    b.append(x[2])
    c = a[:]
    c.insert(0, x[3])
    e = list(b)
    e[0] = x[4]
    return sum(a) * sum(b) + sum(c) * e[0] + e[1]


def read_after_write(x):
    l = [x[0], x[1], x[2]]
    before = l[0] * l[1]
    l[0] = before * x[3]
    after = l[0] + l[2]
    l[2] = after * l[0]
    return before + after * l[2]


def sort_reversed(x):
    l = [x[0], x[2], x[1]]
    l.sort(reverse=True)
    return l[0] * 2.0 + l[1]


def update_with_dict_and_keywords(x):
    d = {"a": x[0]}
    d.update({"a": x[1] * 2.0}, b=x[2])
    return d["a"] * d["b"]


def pops_inside_expressions(x):
    l = [x[0], x[1]]
    return l.pop() * 2.0 + l[0] * l.pop(0)


def changes_in_branches(x):
    l = [x[0], x[1]]
    for i in range(3):
        if x[i] > 0.5:
            l.append(x[i] * l[0])
        else:
            l[-1] = l.pop() * x[i]
    return np.sum(np.array(l) ** 2)


def dict_in_a_loop(x):
    d = {}
    for i in range(3):
        d[i] = x[i] * 2.0
        if i > 0:
            d[i] += d[i - 1]
    del d[0]
    return d[1] * d[2]


def repeated(x):
    l = [x[0], x[1], x[2]]
    l *= 2
    l[3] = l[3] * x[3]
    return sum(l)


def comprehension_shadows_the_dict(x):
    # the comprehension's `v` (an array) is not the dict `v` the loop writes into (an
    # optimizer's moments: a PB101 array mutation before, found by probe4)
    params = {"a": x[:2], "b": x[2:]}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.ones_like(p) for k, p in params.items()}
    for k in params:
        m[k] = 0.9 * m[k] + params[k]
        v[k] = 0.5 * v[k] + params[k] ** 2
    return sum(np.sum(m[k] * v[k]) for k in params)


def new_dict_each_step(x):
    # each pass makes its dict, fills it, then hands it on: what `params` holds is never
    # changed again (PB106 before, found by probe4 in an unrolled optimizer)
    params = {"a": x[:2], "b": x[2:]}
    for t in range(2):
        new = {}
        for k in params:
            new[k] = params[k] * (1.5 + t) + np.sin(params[k])
        params = new
    return np.sum(params["a"] ** 2) + np.sum(params["b"])


CASES = [
    set_and_read,
    augmented_items,
    deletes,
    inserts,
    pops,
    extends,
    dict_ops,
    reorder,
    in_loops_and_branches,
    work_list,
    array_elements,
    through_helper,
    copies,
    read_after_write,
    sort_reversed,
    update_with_dict_and_keywords,
    pops_inside_expressions,
    changes_in_branches,
    dict_in_a_loop,
    repeated,
    comprehension_shadows_the_dict,
    new_dict_each_step,
]
