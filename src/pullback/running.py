"""Running generated sweeps so that every error names the user's line, and recursion
reaches the depth the function itself reaches.

>>> deeper_recursion(len).previous is None
True
"""

from __future__ import annotations

import sys

from . import escapes
from .arguments import _name
from .call_sites import CallSite
from .errors import (
    AdjointRuntimeError,
    ArgumentError,
    HigherOrderError,
    PullbackError,
    generated_line_place,
    in_pullback_file,
    location_text,
)
from .refused import refuse_refused
from .transform.build import Adjoint


def _generated_frames(exc):
    """The traceback entries inside generated code, outermost first:
    ``(line_map, fs, lineno, func)`` each."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        g = tb.tb_frame.f_globals
        if "__pullback_line_map__" in g:
            out.append(
                (
                    g["__pullback_line_map__"],
                    g["__pullback_source__"],
                    tb.tb_lineno,
                    tb.tb_frame.f_code.co_name,
                )
            )
        tb = tb.tb_next
    return out


def _locate(exc, frame=None):
    """``(filename, line, text, function)`` of the source line that generated code was
    running when ``exc`` was raised (its innermost frame, or ``frame``), or None."""
    if frame is None:
        frames = _generated_frames(exc)
        if not frames:
            return None
        frame = frames[-1]
    line_map, fs, lineno, func = frame
    where = generated_line_place(line_map, fs, lineno)
    return None if where is None else (*where, func)


def _users_lines(exc) -> list:
    """:func:`_locate` of each generated frame whose line is the user's, not a line of
    pullback's own (a rule's transformable pullback run as code by a second derivative),
    outermost first."""
    found = (_locate(exc, frame) for frame in _generated_frames(exc))
    return [w for w in found if w is not None and not in_pullback_file(w[0])]


def _users_line(exc):
    """The innermost of :func:`_users_lines`; the innermost line where none is the user's."""
    users = _users_lines(exc)
    return users[-1] if users else _locate(exc)


def _rule_step_failed(exc, where) -> AdjointRuntimeError:
    """The error for an exception raised inside a rule's transformable pullback that a
    derivative of a derivative runs as code (``where``, a line of pullback's own): it is
    no error of the user's function, so it is not passed on as one. Names the user's
    line the step ran for, where one is found."""
    import traceback  # here: only a failed sweep needs it (a cost at every start)

    users = _users_lines(exc)
    at = f"{users[-1][0]}:{users[-1][1]}: " if users else ""
    quoted = f"        {users[-1][2]}\n" if users else ""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    filename, line, text, _ = where
    return AdjointRuntimeError(
        f"{at}a derivative of a derivative failed inside pullback's rule step\n{quoted}"
        f"    {filename}:{line}: {text}\n"
        f"    {detail}\n"
        "    The step does not support these inputs (their shapes, dtypes or array type); "
        "the first derivative may still work: use finite differences of the gradient for "
        "the second (pullback.testing.check_grads(order=2) shows how)."
    )


def _refused_inside(exc) -> HigherOrderError | None:
    """The error for a refusal whose constructs lie in pullback's own code (a rule's
    transformable pullback that a derivative of a derivative transforms like user code):
    named at the user's line the step ran for, the refused constructs after it as detail.
    None where ``exc`` names no construct of pullback's own, or no user's line is found."""
    diagnostics = getattr(exc, "diagnostics", None) or ()
    if not any(in_pullback_file(d.filename) for d in diagnostics):
        return None
    users = _users_lines(exc)
    if not users:
        return None
    filename, line, text, _ = users[-1]
    inside = "".join(
        f"    {d.filename}:{d.line}: {d.code} {d.message}\n        {d.source_line.strip()}\n"
        for d in diagnostics
    )
    return HigherOrderError(
        f"{filename}:{line}: cannot differentiate this line again: pullback's own step for "
        f"it (a rule's pullback, differentiated like your code) refuses\n        {text}\n"
        f"{inside}"
        "    It is no error of your function: the derivative of a derivative of this call "
        "form is not supported yet.\n"
        "    Fix: take the second derivative by finite differences of the gradient "
        "(pullback.testing.check_grads(order=2) shows how), or write the call so that the "
        "first derivative needs no such step (an argument that is the same in every loop "
        "iteration, a keyword given by position)."
    )


def _names_a_line(exc: PullbackError, filename, line) -> bool:
    """Whether ``exc`` already names the user's line ``filename:line``, or the line it came
    from (``users_place``: a refused cotangent raised where it was used)."""
    return f"{filename}:{line}" in str(exc) or getattr(exc, "users_place", None) is not None


def _relocated(exc: PullbackError, filename, line, text) -> PullbackError:
    r"""``exc`` with the user's place in front of its message, in the house order (what,
    ``file:line:col``, the source line, then the fix: :func:`_what_and_fix`), a new
    exception of the same class where its constructor takes a message; otherwise ``exc``
    itself with a note (an UnsupportedSyntaxError, whose diagnostics already name their
    lines). The column is that of the call site the error passed through for this line
    (:func:`_site_column`), where there is one.

    >>> from pullback.errors import UnsupportedCallError
    >>> exc = UnsupportedCallError("pullback: f(order=3) has no rule.\nFix: pass order=1")
    >>> print(_relocated(exc, "model.py", 7, "y = f(x, order=3)"))
    model.py:7: pullback: f(order=3) has no rule.
            y = f(x, order=3)
    Fix: pass order=1
    """
    what, fix = _what_and_fix(str(exc))
    place = location_text(filename, line, _site_column(exc, filename, line))
    try:
        return type(exc)(f"{place}: {what}\n        {text}" + (f"\nFix: {fix}" if fix else ""))
    except TypeError:
        add_note(exc, f"  while running {filename}:{line}: {text}")
        return exc


# How a rule's message gives its fix: on a line of its own, or after the reason.
_FIX_MARKS = ("\nFix: ", "; fix: ", "\nfix: ")


def _what_and_fix(message: str) -> tuple:
    """``(what, fix)`` of a run-time refusal's message (``fix`` None where it names none),
    so that the user's source line can stand between them.

    >>> _what_and_fix("pullback: g(p=2) has no rule; fix: pass p=1")
    ('pullback: g(p=2) has no rule', 'pass p=1')
    """
    found = [(message.find(mark), mark) for mark in _FIX_MARKS if mark in message]
    if not found:
        return message, None
    at, mark = min(found)
    return message[:at], message[at + len(mark) :]


def _site_column(exc, filename, line):
    """The 0-based column of the call at ``filename:line`` that ``exc`` was raised under,
    from the call site (dynamic_calls.CallSite) a frame of its traceback holds, or None:
    the line map of generated code knows lines, not columns."""
    tb, col = exc.__traceback__, None
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if type(value) is CallSite and value.filename == filename and value.line == line:
                col = value.col  # (the innermost: the call that raised)
        tb = tb.tb_next
    return col


def add_note(exc: BaseException, note: str) -> None:
    """PEP 678's ``exc.add_note(note)``; on Python 3.10, which has no ``add_note``, the same
    ``__notes__`` list (code can read it, and the ``exceptiongroup`` backport that pytest
    installs prints it), so that the user's line is not lost there."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", ()), note]


# A gradient takes about three Python frames per level of a user function's recursion where
# the function takes one: while one runs, the limit is raised so that any depth the primal
# reaches at Python's default limit (1000) is reached by its gradient too.
_GRADIENT_RECURSION_LIMIT = 4000


class deeper_recursion:
    """Raise the recursion limit to what generated code needs (never lower it), and turn an
    overflow into a pullback error that says why and how to go deeper. Also the scope of
    one evaluation that calls user code, whose values kept outside the differentiated
    variables are refused where read back (escapes.py)."""

    __slots__ = ("fn", "previous")

    def __init__(self, fn):
        self.fn = fn
        self.previous = None

    def __enter__(self):
        escapes.escape_scope().__enter__()  # one evaluation: its escaped values (escapes.py)
        current = sys.getrecursionlimit()
        if current < _GRADIENT_RECURSION_LIMIT:
            self.previous = current
            sys.setrecursionlimit(_GRADIENT_RECURSION_LIMIT)
        return self

    def __exit__(self, kind, exc, tb):
        escapes.escape_scope().__exit__(kind, exc, tb)
        if self.previous is not None:
            sys.setrecursionlimit(self.previous)
        if kind is RecursionError:
            limit = self.previous or sys.getrecursionlimit()
            raise AdjointRuntimeError(
                f"the gradient of '{_name(self.fn)}' recursed deeper than the recursion limit "
                f"allows: generated code takes about three frames per level of recursion "
                f"where the function takes one (the limit was raised to "
                f"{max(limit, _GRADIENT_RECURSION_LIMIT)} while it ran).\n"
                "Fix: raise it further with sys.setrecursionlimit(...) before differentiating, "
                "or write the recursion as a loop."
            ) from exc
        return False


def run_forward(adj: Adjoint, args, kwargs):
    try:
        with escapes.escape_scope():  # one evaluation (escapes.py)
            out = adj.forward(*args, **kwargs)
    except Exception as exc:
        forward_failed(adj, exc)
        raise
    # a gradient differentiated again, whose value needed a refused cotangent
    refuse_refused(out[0])
    return out


def forward_failed(adj: Adjoint, exc: Exception) -> None:
    """Called from an ``except`` clause around a forward sweep: raise the pullback error
    that names the user's line, or add a note naming it to ``exc`` and return (the caller
    re-raises ``exc`` itself, keeping its traceback)."""
    if isinstance(exc, RecursionError):
        return
    if isinstance(exc, PullbackError):
        inside = _refused_inside(exc)
        if inside is not None:
            raise inside from exc
        where = _users_line(exc)
        if where is not None and not _names_a_line(exc, where[0], where[1]):
            relocated = _relocated(exc, *where[:3])
            if relocated is not exc:
                raise relocated from None
        return
    if isinstance(exc, TypeError) and exc.__traceback__.tb_next is None:
        # The call itself did not bind: say it with the user's function's name.
        name = getattr(adj.fn, "__name__", "f")
        message = str(exc).replace(getattr(adj.forward, "__name__", "?"), name)
        raise ArgumentError(f"cannot call '{name}' with these arguments: {message}") from None
    where = _locate(exc)
    if where is not None and in_pullback_file(where[0]):
        if not _runs_users_call(exc):
            raise _rule_step_failed(exc, where) from exc
        where = _users_line(exc)  # the user's own error, raised by the call as written
    if where is not None:
        filename, line, text, _ = where
        add_note(exc, f"  raised by {filename}:{line}: {text}  (in pullback's forward sweep)")


def _runs_users_call(exc) -> bool:
    """Whether the innermost generated code ``exc`` passed through is a function of
    pullback's that stands in for the user's own expression (a special method called by
    name, explicit_dunders.py, marked ``__pullback_runs_users_call__``): what it raises is
    what the user's call raises when it runs as written, the user's error, not a failed
    step of pullback's."""
    frames = _generated_frames(exc)
    fn = getattr(frames[-1][1], "fn", None) if frames else None
    return bool(getattr(fn, "__globals__", {}).get("__pullback_runs_users_call__"))


def run_pullback(pullback, dy):
    try:
        return pullback(dy)
    except Exception as exc:
        pullback_failed(exc)
        raise


def pullback_failed(exc: Exception) -> None:
    """Called from an ``except`` clause around a reverse sweep: raise the pullback error
    that names the user's line, or return (the caller re-raises ``exc``)."""
    if isinstance(exc, RecursionError):
        return
    inside = _refused_inside(exc)
    if inside is not None:
        raise inside from exc
    where = _users_line(exc) if isinstance(exc, PullbackError) else _locate(exc)
    if where is None:
        return
    if not isinstance(exc, PullbackError) and in_pullback_file(where[0]):
        raise _rule_step_failed(exc, where) from exc
    filename, line, text, _ = where
    if isinstance(exc, PullbackError):
        if not _names_a_line(exc, filename, line):
            relocated = _relocated(exc, filename, line, text)
            if relocated is not exc:
                raise relocated from exc
        return
    import traceback  # here: only a failed reverse sweep needs it (a cost at every start)

    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    raise AdjointRuntimeError(
        f"{filename}:{line}: the reverse sweep failed while differentiating\n"
        f"        {text}\n"
        f"    {detail}\n"
        "    This usually means a rule got inputs it does not support (check shapes and "
        "dtypes there), or a custom rule's pullback raised."
    ) from exc


# -- the hot entry of a grad function ---------------------------------------------------


def _no_entry(args):
    """The hot entry before any call made one: never applies."""
    return None


def _in_reverse(exc, first_line: int) -> bool:
    """Whether ``exc``, raised by fused sweeps called from a hot entry, came from their
    reverse part (at or after ``first_line``)."""
    tb = exc.__traceback__.tb_next  # the fused sweeps' frame (the entry's is first)
    return tb is not None and tb.tb_lineno >= first_line


def _kind_test(k: int, kind) -> str:
    """The test that argument ``a{k}`` has the fast kind ``kind`` (see fast_kinds)."""
    if isinstance(kind, tuple):
        ndim, letter = kind
        array = f"_h_type(a{k}) is _h_ndarray"
        return f"({array} and a{k}.ndim == {ndim} and a{k}.dtype.kind == {letter!r})"
    return f"_h_type(a{k}) is _h_kind{k}"


def hot_entry(adj: Adjoint, key: tuple, positions, single: bool, registry, fixed, seed):
    """One generated function ``entry(args) -> (value, gradient) or None`` for positional
    arguments of the fast kinds ``key``: every check the general fast path makes, in one
    frame, then the sweeps.

    It applies (returns a result) only while the arguments have exactly these kinds, the
    registry in effect is ``registry`` at the version the adjoint was built under (when
    ``fixed`` is False, the registry ``use_registry`` or the built-in one gives), and the
    adjoint's guard holds, inlined (its test reads the very objects the guard reads); on
    None the caller takes the general path, which rebuilds what changed. Errors are
    explained as ``run_forward``/``run_pullback`` explain them.
    """
    from .arguments import _ndarray
    from .registry import _active, _builtin
    from .tangents import materialize

    guard = adj.guard
    env = dict(getattr(guard, "env", {}))
    test = getattr(guard, "test", None)
    if test is None:  # a guard made another way: call it
        env["_h_guard"] = guard
        test = "_h_guard()"
    env.update(
        _h_fwd=adj.forward,
        _h_adj=adj,
        _h_reg=registry,
        _h_ver=registry.version,
        _h_active=_active.get,
        _h_builtin=_builtin,
        _h_seed=seed,
        _h_mat=materialize,
        _h_ffail=forward_failed,
        _h_pfail=pullback_failed,
        _h_type=type,
        _h_float=float,
        _h_ndarray=_ndarray,
    )
    for k, kind in enumerate(key):
        if not isinstance(kind, tuple):
            env[f"_h_kind{k}"] = kind
    fused = adj.fused_sweeps()
    if fused is not None:
        env["_h_fused"], env["_h_reverse_from"] = fused
        env["_h_in_reverse"] = _in_reverse
    n = len(key)
    names = [f"a{k}" for k in range(n)]
    unpack = ", ".join(names) + ("," if n == 1 else "")
    kinds = " and ".join(_kind_test(k, kind) for k, kind in enumerate(key)) or "True"
    if fixed:
        which = ["    _r = _h_reg"]
    else:  # default_registry(), inlined
        which = [
            "    _r = _h_active()",
            "    if _r is None:",
            "        if not _h_builtin:",
            "            return None",
            "        _r = _h_builtin[0]",
        ]

    def cotangent(j: int, p: int) -> str:
        if key[p] is float:  # a float's cotangent is already a float (materialize's rule)
            return f"(_c[{j}] if _h_type(_c[{j}]) is _h_float else _h_mat(_c[{j}], a{p}))"
        if isinstance(key[p], tuple) and wrt[j] in concrete:
            return f"_c[{j}]"  # an array of its shape and dtype, writable (direct_reads.py)
        if isinstance(key[p], tuple):  # an array's: materialize's first case, without a call
            g = f"_g{j}"
            return (
                f"({g} if _h_type({g} := _c[{j}]) is _h_ndarray and {g}.shape == a{p}.shape"
                f" and {g}.dtype is a{p}.dtype and {g}.flags.writeable else _h_mat({g}, a{p}))"
            )
        return f"_h_mat(_c[{j}], a{p})"

    wrt, concrete = adj.wrt, getattr(adj, "concrete", ()) if fused is not None else ()
    grads = [cotangent(j, p) for j, p in enumerate(positions)]
    result = grads[0] if single else "(" + ", ".join(grads) + ("," if len(grads) == 1 else "") + ")"
    params = ", ".join(f"{k}={k}" for k in env)
    lines = [f"def _hot_entry(_args, {params}):"]
    if n:  # unpacking checks the count (a ValueError costs only when it differs)
        lines += [
            "    try:",
            f"        {unpack} = _args",
            "    except ValueError:",
            "        return None",
        ]
    else:
        lines += ["    if _args:", "        return None"]
    lines += [
        f"    if not ({kinds}):",
        "        return None",
        *which,
        "    if _r is not _h_reg or _r.version != _h_ver:",
        "        return None",
        "    try:",
        f"        if not ({test}):",
        "            return None",
        "    except Exception:  # an emptied cell, a deleted attribute: the general path",
        "        return None",
    ]
    if fused is None:
        lines += [
            "    try:",
            f"        _value, _pullback = _h_fwd({', '.join(names)})",
            "    except Exception as _exc:",
            "        _h_ffail(_h_adj, _exc)",
            "        raise",
            "    _seed = 1.0 if _h_type(_value) is _h_float else _h_seed(_value)",
            "    try:",
            "        _c = _pullback(_seed)",
            "    except Exception as _exc:",
            "        _h_pfail(_exc)",
            "        raise",
        ]
    else:
        lines += [
            "    try:",
            f"        _value, _c = _h_fused({', '.join(['_h_seed'] + names)})",
            "    except Exception as _exc:",
            "        if _h_in_reverse(_exc, _h_reverse_from):",
            "            _h_pfail(_exc)",
            "        else:",
            "            _h_ffail(_h_adj, _exc)",
            "        raise",
        ]
    lines.append(f"    return _value, {result}")
    source = "\n".join(lines) + "\n"
    namespace = dict(env)
    exec(compile(source, "<pullback hot entry>", "exec"), namespace)  # noqa: S102 - generated
    entry = namespace["_hot_entry"]
    entry.source = source
    return entry
