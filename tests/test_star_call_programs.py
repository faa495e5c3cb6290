"""Generated star-calls: every mix of positional arguments, keyword arguments, ``*args``
and ``**kwargs`` in one call, checked against central differences and against the same
call written out (star_runtime.py, keyword_shims.py).

A program is ``f(x)`` with ``x`` four floats. It makes one call of a callee from
:data:`CALLEES` (a user's function with a keyword-only parameter and ``**extra``, a method
of a user's object, NumPy functions and array methods) with each argument it passes given
one way: written in place, in a ``*`` sequence (a tuple or list display, or a local tuple),
as a keyword, or in a ``**`` mapping (a dict display, a local dict, ``dict(...)``, or a
dict built by ``f`` and passed to the helper ``h`` that makes the call). The values are
expressions of ``x`` or constants (a constant in a mapping carries no gradient).

The gradient (float64 and float32), the forward-mode directional derivative and the
Hessian-vector product must match central differences, and the gradient must equal that of
the same call with every argument written out (``Model.m(model, ...)`` for a method: a
keyword of a method found at run time is refused when written, PB502)."""

import numpy as np
from fd import check_grad, check_hvp, check_jvp
from hypothesis import given, settings
from hypothesis import strategies as st
from programs import load_program

import pullback

HEADER = """import numpy as np


def u(a, b=0.5, c=1.5, *, s=2.0, **extra):
    return a * np.sin(b) + c * s * s + extra.get("t", 0.25) * a * c


class Model:
    def __init__(self, w):
        self.w = w

    def m(self, a, b=0.5, c=1.5, *, s=2.0):
        return self.w * a * np.cos(b) + c * s


"""

SCALARS = ["x[0]", "np.sin(x[1])", "x[2] * x[3]", "x[1] ** 2", "0.7"]
ARRAYS = ["np.sin(x[:3])", "x[1:] * 0.5", "np.cos(x[:3]) * x[3]"]
POSITIVE = ["np.cos(x[:3]) + 2.0", "x[1:] ** 2 + 1.0"]

# (name, kind, required, values): kind "pos" positional only, "pk" positional or keyword,
# "kw" keyword-only, "extra" an entry of **kwargs.
CALLEES = {
    "u": (
        "u",
        "u",
        [
            ("a", "pk", True, SCALARS),
            ("b", "pk", False, SCALARS),
            ("c", "pk", False, SCALARS),
            ("s", "kw", False, SCALARS),
            ("t", "extra", False, SCALARS),
        ],
    ),
    "method": (
        "model.m",
        "Model.m",
        [
            ("a", "pk", True, SCALARS),
            ("b", "pk", False, SCALARS),
            ("c", "pk", False, SCALARS),
            ("s", "kw", False, SCALARS),
        ],
    ),
    "hypot": ("np.hypot", "np.hypot", [("x1", "pos", True, SCALARS), ("x2", "pos", True, ARRAYS)]),
    "average": (
        "np.average",
        "np.average",
        [
            ("a", "pk", True, ARRAYS),
            ("axis", "pk", True, ["None", "0"]),
            ("weights", "pk", True, POSITIVE),
        ],
    ),
    "dot": ("v.dot", "np.dot", [("b", "pos", True, ARRAYS)]),
    "norm": (
        "np.linalg.norm",
        "np.linalg.norm",
        [("x", "pk", True, ARRAYS), ("ord", "pk", False, ["2", "None"])],
    ),
    "sum": ("v.sum", "np.sum", [("axis", "pk", True, ["0", "None"])]),
}

# Array methods: the receiver first when written out as a NumPy function.
RECEIVER = {"dot": "v", "sum": "v", "method": "model"}


@st.composite
def call(draw):
    """``(star form lines, written-out lines)``: the body of ``f`` for one callee."""
    name = draw(st.sampled_from(sorted(CALLEES)))
    expr, written, params = CALLEES[name]
    passed, open_ = [], True
    for pname, kind, required, values in params:
        if not (required or draw(st.booleans())):
            open_ = False
            continue
        value = draw(st.sampled_from(values))
        if kind == "pos":
            mode = draw(st.sampled_from(["pos", "star"]))
        elif kind == "pk" and open_:
            mode = draw(st.sampled_from(["pos", "star", "kw", "dstar"]))
        else:
            mode = draw(st.sampled_from(["kw", "dstar"]))
        open_ = open_ and mode in ("pos", "star")
        passed.append((pname, value, mode))
    if all(mode in ("pos", "kw") for _, _, mode in passed):  # a star-call: one at least
        pname, value, mode = passed[-1]
        passed[-1] = (pname, value, "star" if mode == "pos" else "dstar")
    setup = ["v = np.sin(x[1:] * 1.3)", "model = Model(x[3] * 0.5 + 1.0)"]
    pieces, lines, run = [], [], []

    def flush():
        if not run:
            return
        form = draw(st.sampled_from(["tuple", "list", "local"]))
        items = ", ".join(run) + ","
        if form == "local":
            lines.append(f"t{len(lines)} = ({items})")
            pieces.append(f"*t{len(lines) - 1}")
        else:
            pieces.append(f"*({items})" if form == "tuple" else f"*[{items}]")
        run.clear()

    for _, value, mode in passed:
        if mode == "star":
            run.append(value)
            continue
        flush()
        if mode == "pos":
            pieces.append(value)
    flush()
    groups = {}
    for pname, value, mode in passed:
        if mode == "kw":
            pieces.append(f"{pname}={value}")
        elif mode == "dstar":
            groups.setdefault(draw(st.integers(0, 1)), []).append((pname, value))
    handed = None
    for k, items in sorted(groups.items()):
        form = draw(st.sampled_from(["literal", "local", "dict", "passed"]))
        shown = "{" + ", ".join(f'"{p}": {v}' for p, v in items) + "}"
        if form == "passed" and handed is None:
            handed = shown
            pieces.append("**d")
        elif form in ("local", "passed"):
            lines.append(f"d{k} = {shown}")
            pieces.append(f"**d{k}")
        elif form == "dict":
            pieces.append("**dict(" + ", ".join(f"{p}={v}" for p, v in items) + ")")
        else:
            pieces.append("**" + shown)
    star = f"{expr}({', '.join(pieces)})"
    # written out: by position up to the first parameter left out, then by keyword
    kinds = {p: kind for p, kind, _, _ in params}
    named = [p for p, _, _ in passed]
    leading = next((k for k, (p, *_) in enumerate(params) if p not in named), len(params))
    out = [
        v if kinds[p] in ("pos", "pk") and named.index(p) < leading else f"{p}={v}"
        for p, v, _ in passed
    ]
    if name in RECEIVER:
        out.insert(0, RECEIVER[name])
    plain = f"{written}({', '.join(out)})"
    if handed is not None:  # the call made by a helper, the mapping passed to it
        helper = [
            "def h(x, d):",
            *("    " + s for s in setup + lines),
            f"    return np.sum({star})",
            "",
        ]
        star_body = [f"return h(x, {handed}) + x[0] * 0.25"]
    else:
        helper = []
        star_body = [*setup, *lines, f"return np.sum({star}) + x[0] * 0.25"]
    plain_body = [*setup, f"return np.sum({plain}) + x[0] * 0.25"]
    source = HEADER + "\n".join(helper) + "\ndef f(x):\n" + "".join(f"    {s}\n" for s in star_body)
    source += "\n\ndef g(x):\n" + "".join(f"    {s}\n" for s in plain_body)
    return source


# (away from 0: np.hypot and the norm have no derivative at the origin)
coordinate = st.floats(-1.0, 1.0).filter(lambda t: abs(t) > 0.05)
points = st.lists(coordinate, min_size=4, max_size=4).map(np.array)
DIRECTION = np.array([0.3, -0.7, 0.5, 0.2])


def _load(tmp_path_factory, source):
    folder = tmp_path_factory.mktemp("star_calls")
    return load_program(source, folder, "f"), load_program(source, folder, "g")


@settings(deadline=None)
@given(source=call(), x=points)
def test_star_calls_match_differences_and_the_written_call(tmp_path_factory, source, x):
    f, g = _load(tmp_path_factory, source)
    np.testing.assert_allclose(f(x), g(x), rtol=1e-12, err_msg=source)
    got = check_grad(f, x)
    np.testing.assert_allclose(got, pullback.grad(g)(x), rtol=1e-10, atol=1e-12, err_msg=source)
    check_grad(f, x.astype(np.float32))


@settings(deadline=None)
@given(source=call(), x=points)
def test_star_calls_forward_mode(tmp_path_factory, source, x):
    f, _ = _load(tmp_path_factory, source)
    check_jvp(f, (x,), (DIRECTION,))


# (a second derivative transforms a generated gradient: a third of the profile's examples)
@settings(deadline=None, max_examples=max(2, settings().max_examples // 3))
@given(source=call(), x=points)
def test_star_calls_second_order(tmp_path_factory, source, x):
    f, g = _load(tmp_path_factory, source)
    got = check_hvp(f, x, DIRECTION)
    np.testing.assert_allclose(got, pullback.hvp(g)(x, DIRECTION), rtol=1e-8, atol=1e-10)
