"""The passes both sweeps start from: source → check → normalize → SSA → activity → kinds.

>>> # prepared = prepare(f, ("x",), registry, kinds_key)
>>> # prepared.norm.tree is f in the core language, SSA-renamed; prepared.activity says
>>> # which names carry derivatives; prepared.kinds which are provably scalars or arrays.
"""

from __future__ import annotations

import contextlib
import gc
import inspect

from ..check import LiveEnvironment, raise_if_unsupported
from ..errors import Diagnostic
from ..resolve import parameter_names
from ..source import load_source
from .analyze import Activity, analyze
from .kinds import ONE_SHAPE, infer, kind_of
from .normalize import Normalized, normalize
from .ssa import to_ssa


class Prepared:
    """What the shared passes made of a function (a plain class, not a dataclass:
    dataclasses cost about half a millisecond each at import, paid by every cold start)."""

    def __init__(self, fs, params, wrt, norm: Normalized, loops, activity: Activity, kinds,
                 renames):  # fmt: skip
        self.fs = fs
        self.params = params
        self.wrt = wrt
        self.norm = norm
        self.loops = loops
        self.activity = activity
        self.kinds = kinds
        self.renames = renames  # the user's parameter names -> the names the code uses

    def diagnostic(self, node, code, message, why, fix) -> Diagnostic:
        """A diagnostic at ``node`` of the user's function (for facts found while
        transforming, after the check)."""
        filename, line, col = self.fs.location(node)
        return Diagnostic(
            code,
            message,
            filename,
            line,
            col,
            self.fs.end_col(node),
            self.fs.file_line(line),
            why,
            fix,
        )


@contextlib.contextmanager
def collector_paused():
    """The cyclic garbage collector paused while a function is transformed (and restored
    after, as it was). The passes allocate many small objects that all stay alive until
    the transform ends, so each collection finds nothing to free; but every full one walks
    the whole heap (NumPy, SciPy and the user's data): a fifth of a long function's first
    call. Both builders (the reverse sweep's and forward mode's) run inside it; a transform
    inside one (a callee's adjoint) leaves the state to the outermost."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def prepare(fn, wrt, registry, kinds_key=None, check=True) -> Prepared:
    """Run the shared passes on ``fn`` differentiated in ``wrt`` (None: every parameter)."""
    fs = load_source(fn)
    # Generated code differentiated again names renamed parameters its own way.
    inherited = getattr(fs.fn, "__pullback_renames__", None) or {}
    if wrt is not None and inherited:
        wrt = tuple(inherited.get(p, p) for p in wrt)
    environment = LiveEnvironment()  # what the check learns about callees, normalize reuses
    if check:  # one parse: the check only reads fs; `n += 1` is judged by n's kind
        call_kinds = param_kinds(fn, kinds_key) if kinds_key is not None else {}
        raise_if_unsupported(
            fn, registry, wrt, fs=fs, environment=environment, param_kinds=call_kinds
        )
    params = parameter_names(fs.tree)
    wrt = tuple(params) if wrt is None else tuple(p for p in wrt if p in params)
    norm = normalize(fs, registry, environment)
    renames = norm.renames
    if renames:  # a parameter named like a generated helper: the code uses another name
        params = [renames.get(p, p) for p in params]
        wrt = tuple(renames.get(p, p) for p in wrt)
    renames = {**inherited, **renames}
    # On the SSA form a statement never overwrites its own operands.
    loops = to_ssa(norm.tree, norm.params, norm.flags)
    activity = analyze(norm.tree, list(wrt), registry)
    kinds = {renames.get(k, k): v for k, v in param_kinds(fn, kinds_key).items()}
    if ONE_SHAPE in kinds:
        kinds[ONE_SHAPE] = frozenset((renames.get(n, n), a) for n, a in kinds[ONE_SHAPE])
    kinds = infer(norm.tree, kinds, registry)
    return Prepared(fs, params, wrt, norm, loops, activity, kinds, renames)


def accepting_user_keywords(generated, renames: dict):
    """``generated`` (whose parameters were renamed by ``renames``) callable with the
    user's own keyword names; ``generated`` itself when no parameter was renamed."""
    if not renames:
        return generated

    def with_user_keywords(*args, **kwargs):
        return generated(*args, **{renames.get(k, k): v for k, v in kwargs.items()})

    with_user_keywords.__name__ = generated.__name__
    with_user_keywords.__wrapped_generated__ = generated
    return with_user_keywords


_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def param_kinds(fn, kinds_key) -> dict:
    """Map the kinds of a call's arguments to parameter names (defaults included)."""
    if kinds_key is None:
        return {}
    positional, keywords = kinds_key
    one_shape = ()
    if keywords and keywords[0][0] == ONE_SHAPE:  # (not a keyword: see kinds.ONE_SHAPE)
        one_shape, keywords = keywords[0][1], keywords[1:]
    sig = inspect.signature(fn, follow_wrapped=False)  # fn is what is transformed
    try:
        bound = sig.bind(*positional, **dict(keywords))
    except TypeError:
        return {}
    out = dict(bound.arguments)
    if one_shape:
        names = list(sig.parameters)
        out[ONE_SHAPE] = frozenset(
            (names[k], axes)
            for k, axes in one_shape
            if k < len(names) and sig.parameters[names[k]].kind in _POSITIONAL
        )
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            out.pop(name, None)  # a tuple or dict of kinds: the generic path
            continue
        if name not in out and p.default is not p.empty:
            out[name] = kind_of(p.default)
    return out
