"""Changes of lists and dicts that pullback refuses (PB106), for
tests/test_list_mutation_refusals.py: the line numbers are part of the golden messages."""

SHARED = []
TABLE = {}


def of_parameter(x, l):
    l.insert(0, x[0])
    return l[0]


def of_global(x):
    SHARED.insert(0, x[0])
    return SHARED[0]


def make_closure():
    c = [1.0]

    def of_closure(x):
        c.insert(0, x[0])
        return c[0]

    return of_closure


def aliased(x):
    l = [x[0]]
    m = l
    l.insert(0, x[1])
    return m[0]


def stored_in_another(x):
    l = [x[0]]
    box = [l]
    l[0] = x[1]
    return box[0][0]


def iterated_while_changed(x):
    l = [x[0], x[1]]
    for v in l:
        l[0] = v * 2.0
    return l[0]


def slice_store(x):
    l = [x[0], x[1], x[2]]
    l[0:2] += [x[2]]  # an augmented slice store: still refused
    return l[0]


def nested_store(x):
    rows = [[x[0], x[1]]] * 2  # one row, twice
    rows[0][1] = x[4]
    return rows[1][1]


def _keep(l):
    return l


def passed_then_changed(x):
    l = [x[0]]
    y = _keep(l)
    l[0] = x[1]
    return y[0] + l[0]


def dict_parameter(x, d):
    d["a"] = x[0]
    return d["a"]


def global_dict(x):
    TABLE.update(a=x[0])
    return TABLE["a"]


def not_provably_new(x):
    l = x.tolist()
    l.pop()
    return l[0]


def copied_too_late(x, l):
    l.append(x[0] * 0.0)
    l.pop()
    l = list(l)
    return l[0]


REFUSED = [
    of_parameter,
    of_global,
    make_closure(),
    aliased,
    stored_in_another,
    iterated_while_changed,
    slice_store,
    nested_store,
    passed_then_changed,
    dict_parameter,
    global_dict,
    not_provably_new,
    copied_too_late,
]


def nested_row_held(x):
    rows = [[x[0], x[1]], [x[2], x[3]]]
    r = rows[0]
    rows[0][1] = x[4]
    return r[1]


REFUSED.append(nested_row_held)


def augmented_array_item(x):
    # Python's += changes the array a holds too: refused when it runs
    l = [x[0:2] * 1.0, x[2:4] * 1.0]
    a = l[0]
    l[0] += x[4]
    return (a * a).sum()


# -- the fixes the messages suggest, which pass -----------------------------------------------
def of_parameter_fixed(x, l):
    l = list(l)
    l.insert(0, x[0])
    return l[0]


def nested_store_fixed(x):
    rows = [[x[0], x[1]], [x[2], x[3]]]
    row = list(rows[0])
    row[1] = x[4]
    rows[0] = row
    return rows[0][1] * rows[1][0]


def aliased_after_changes(x):
    l = [x[0]]
    l.insert(0, x[1])
    m = l  # after the last change: nothing changes under m
    return m[0] * l[1]


def dict_parameter_fixed(x, d):
    d = dict(d)
    d["a"] = x[0]
    return d["a"] * d["b"]


def array_plus_list(x):
    l = x[:2] + [1.0]  # an array (NumPy adds elementwise), not a list
    l[0] = x[2]
    return l[0] * l[1]


def plus_equals_array(x):
    l = [x[0]]
    l += x[1:3]  # on a list, extends; `l = l + x[1:3]` would add elementwise
    return l[0]


# A dict made anew at the top of each pass and handed on after its last change (an
# optimizer step's `new = {}; new[k] = ...; params = new`) is accepted
# (list_mutation_cases.new_dict_each_step); these stay refused: the dict made once,
# before the loop, so the next pass changes what `kept` holds; the hand-over before the
# change; and a change after the loop, which reaches the last dict handed on.
def made_once_before_the_loop(x):
    new = {}
    kept = {"a": x[0]}
    for _ in range(2):
        new["a"] = kept["a"] * 2.0
        kept = new
    return kept["a"]


def handed_on_before_the_change(x):
    kept = {"a": x[0]}
    for i in range(2):
        new = {}
        kept = new
        new["a"] = x[1] * i
    return kept["a"]


def changed_after_the_loop(x):
    kept = {"a": x[0]}
    for _ in range(2):
        new = {}
        new["a"] = kept["a"] * 2.0
        kept = new
    new["a"] = x[1]
    return kept["a"]


REFUSED.extend([made_once_before_the_loop, handed_on_before_the_change])
