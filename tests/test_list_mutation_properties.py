"""Random programs that change a local list and a local dict (item stores and augmented
stores, del, append/extend/+=/insert/pop/remove/reverse/sort, slice stores and slice
deletes (extended slices too), fill loops, stores into the rows of a list of lists, dict
stores/update/pop/setdefault, loops, reads after writes), checked against finite
differences in reverse mode, forward mode and second order. Programs whose list is only
stored into, or whose reads all come after its changes, run the changes in place
(pullback.containers_inplace); the others keep copies: both are drawn."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from programs import load_program

from pullback import jvp
from pullback.testing import check_grads

N = 5
const = st.sampled_from(["0.5", "1.5", "-0.75", "2.0"])


@st.composite
def program(draw):
    """A function f(x) and the length its list has at each step (tracked so that every
    index is in range, as a correct program's are)."""
    n = draw(st.integers(1, 3))
    lines = [f"l = [{', '.join(f'x[{k}]' for k in range(n))}]", "d = {'a': x[0]}", "s = 0.0"]
    keys = {"a"}
    for _ in range(draw(st.integers(1, 7))):
        k, c = draw(st.integers(0, N - 1)), draw(const)
        i = draw(st.integers(-n, n - 1)) if n else 0
        j = draw(st.integers(-n, n - 1)) if n else 0
        kinds = ["append", "extend", "plus", "insert", "loop", "dset", "dupdate", "dpop"]
        kinds += ["set", "aug", "del", "pop", "reverse", "sort", "remove"] if n else []
        kinds += ["slice", "xslice", "delslice", "fill", "rows"]
        kind = draw(st.sampled_from(kinds))
        key = draw(st.sampled_from(["a", "b", "c"]))
        if kind == "append":
            lines.append(f"l.append(x[{k}] * {c})")
            n += 1
        elif kind == "extend":
            lines.append(f"l.extend([x[{k}], x[{(k + 1) % N}] * {c}])")
            n += 2
        elif kind == "plus":
            lines.append(f"l += [x[{k}] * x[{k}]]")
            n += 1
        elif kind == "insert":
            at = draw(st.integers(-n - 2, n + 2))
            lines.append(f"l.insert({at}, x[{k}] * {c})")
            n += 1
        elif kind == "loop":
            reps = draw(st.integers(1, 3))
            lines += [f"for t in range({reps}):", f"    l.append(x[t] * {c})"]
            lines.append("    s = s + l[-1] * l[0]")
            n += reps
        elif kind == "set":
            lines.append(f"l[{i}] = l[{j}] * x[{k}]")
        elif kind == "aug":
            lines.append(f"l[{i}] {draw(st.sampled_from(['+=', '-=', '*=']))} x[{k}] * {c}")
        elif kind == "del":
            lines.append(f"del l[{i}]")
            n -= 1
        elif kind == "pop":
            lines.append(f"s = s + l.pop({i}) * {c}")
            n -= 1
        elif kind == "reverse":
            lines.append("l.reverse()")
        elif kind == "sort":
            lines.append("l.sort()" if draw(st.booleans()) else "l.sort(key=lambda v: -v)")
        elif kind == "remove":
            lines += [f"w = l[{i}]", "l.remove(w)", "s = s + w"]
            n -= 1
        elif kind == "slice":  # a slice store of any length
            a, b = draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1))
            m = draw(st.integers(0, 2))
            lines.append(f"l[{a}:{b}] = [{', '.join(f'x[{(k + q) % N}] * {c}' for q in range(m))}]")
            start, stop, _ = slice(a, b).indices(n)
            n += m - max(0, stop - start)
        elif kind == "xslice":  # an extended slice: as many items as places
            a, step = draw(st.integers(-n - 1, n + 1)), draw(st.sampled_from([-2, -1, 2, 3]))
            m = len(range(*slice(a, None, step).indices(n)))
            items = ", ".join(f"x[{(k + q) % N}] * l[{q % n}]" if n else "0.0" for q in range(m))
            lines.append(f"l[{a}::{step}] = [{items}]")
        elif kind == "delslice":
            a, b = draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1))
            step = draw(st.sampled_from([None, 2, -1]))
            lines.append(f"del l[{a}:{b}{'' if step is None else f':{step}'}]")
            n -= len(range(*slice(a, b, step).indices(n)))
        elif kind == "fill":  # a loop of item stores (in place when nothing reads between)
            for q in range(n):
                lines.append(f"l[{q}] = x[{(k + q) % N}] * {c}")
        elif kind == "rows":  # a list of new rows, stores into them, read back
            lines += [
                f"rows = [[x[{k}], x[(r + {k}) % {N}] * {c}] for r in range(2)]",
                f"rows[{draw(st.integers(-2, 1))}][{draw(st.integers(-2, 1))}] = x[{j % N}] * 2.0",
                f"rows[1][0] {draw(st.sampled_from(['+=', '*=']))} rows[0][1] * {c}",
                "s = s + rows[0][0] * rows[1][1] + rows[0][1] - rows[1][0]",
            ]
        elif kind == "dset":
            lines.append(f"d[{key!r}] = x[{k}] * {c}")
            keys.add(key)
        elif kind == "dupdate":
            lines.append(f"d.update({key}=x[{k}] + d.setdefault({key!r}, 0.5))")
            keys.add(key)
        elif kind == "dpop":
            lines.append(f"s = s + d.pop({key!r}, x[{k}]) * {c}")
            keys.discard(key)
    tail = "np.sum(np.array(l) * np.arange(1.0, len(l) + 1.0)) if l else 0.0"
    lines.append("t = sum([d[q] for q in ['a', 'b', 'c'] if q in d])")
    lines.append(f"return s + t * 0.5 + ({tail})")
    text = ["import numpy as np", "", "", "def f(x):"] + ["    " + line for line in lines]
    return "\n".join(text) + "\n"


# No two of c * X[k] and X[k] ** 2 (c a constant above) of different k are closer than 0.03,
# so that a sort never meets a tie between different inputs, where f has a kink and finite
# differences average the two orders (with 0.7, 1.2, 0.4, 0.9, 1.1: 1.5 * 1.2 == 2.0 * 0.9).
X = np.array([1.25, 0.9, 1.09, 0.97, 0.76])


@settings(max_examples=10)
@given(program())
def test_random_list_programs_match_finite_differences(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_grads(f, X.copy())
    check_grads(f, X.astype(np.float32))


@given(program())
def test_random_list_programs_forward_mode(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    v = np.random.default_rng(5).standard_normal(N)
    y, dy = jvp(f, (X,), (v,))
    h = 1e-6
    np.testing.assert_allclose(y, f(X), rtol=1e-12)
    np.testing.assert_allclose(dy, (f(X + h * v) - f(X - h * v)) / (2 * h), rtol=1e-5, atol=1e-7)


@given(program())
def test_random_list_programs_second_order(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_grads(f, X.copy(), order=2)
