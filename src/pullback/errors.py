"""The exceptions a user of pullback can meet, rooted at :class:`PullbackError`.

Every error names what went wrong, where (``file:line:col`` in the user's file when a
place is known) and how to fix it.

Hierarchy::

    PullbackError
    ├── UnsupportedSyntaxError      (also a SyntaxError) constructs outside the subset
    ├── SourceUnavailableError      a function with no Python source and no rule
    ├── ArgumentError               (also a ValueError/TypeError) bad wrt, bad argument
    │   ├── NotDifferentiableError  asking for the gradient of an int/bool argument
    │   └── ShapeMismatchError      a tangent, cotangent or `out=` of the wrong shape
    ├── NonScalarOutputError        grad of a function whose value is not a scalar
    ├── MissingRuleError            a call found at run time with no source and no rule
    ├── NotIterableError            (also a TypeError) a for loop over a non-iterable value
    ├── HigherOrderError            a second derivative through a step not supported yet
    ├── UnsupportedCallError        (also a NotImplementedError) a rule's unsupported call form
    ├── RuleError                   a rule's pullback returned something inconsistent
    └── AdjointRuntimeError         an error raised while the generated adjoint ran
"""

from __future__ import annotations

import functools
import os
import sys
import types


class PullbackError(Exception):
    """Base class of every error raised by pullback."""


class Diagnostic:
    """One unsupported construct found in a user's function.

    ``line`` is 1-based and ``col`` 0-based, both in the user's file; ``end_col`` ends the
    caret run on the same line. Immutable, compared and hashed by its fields;
    :meth:`replace` makes a changed copy. (What ``@dataclass(frozen=True)`` gave it, as a
    plain class: importing ``dataclasses`` and creating the class cost about 1.5 ms of
    every cold start.)
    """

    FIELDS = ("code", "message", "filename", "line", "col", "end_col", "source_line", "why",
              "fix")  # fmt: skip
    __slots__ = FIELDS

    def __init__(self, code: str, message: str, filename: str, line: int, col: int,
                 end_col: int, source_line: str, why: str, fix: str):  # fmt: skip
        values = (code, message, filename, line, col, end_col, source_line, why, fix)
        for name, value in zip(Diagnostic.FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a Diagnostic (immutable)")

    __delattr__ = __setattr__

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in Diagnostic.FIELDS)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in Diagnostic.FIELDS)
        return f"Diagnostic({inner})"

    def __reduce__(self):
        return Diagnostic, self._values()

    def replace(self, **changes) -> Diagnostic:
        """A copy with some fields changed (``d.replace(filename="example.py")``)."""
        fields = dict(zip(Diagnostic.FIELDS, self._values(), strict=True))
        return Diagnostic(**{**fields, **changes})

    def header(self) -> str:
        """The one-line, linter-style form: ``path:line:col: CODE message``."""
        return f"{self.filename}:{self.line}:{self.col + 1}: {self.code} {self.message}"

    def format(self) -> str:
        """The full form shown in an error: header, source line, caret, why and fix."""
        text = self.source_line.rstrip("\n")
        stripped = text.lstrip()
        lead = len(text) - len(stripped)
        width = max(1, min(self.end_col, len(text)) - self.col)
        caret_col = max(0, self.col - lead)
        lines = [
            "  " + self.header(),
            "        " + stripped,
            "        " + " " * caret_col + "^" * width,
        ]
        if self.why:
            lines.append("    " + self.why)
        if self.fix:
            lines.append("    Fix: " + self.fix)
        return "\n".join(lines)


class UnsupportedSyntaxError(PullbackError, SyntaxError):
    """A function uses constructs that pullback cannot differentiate.

    ``diagnostics`` lists every finding, in source order. The SyntaxError fields
    (``filename``, ``lineno``, ``offset``, ``text``) point at the first one.
    """

    def __init__(self, function_name: str, diagnostics: list[Diagnostic]):
        self.function_name = function_name
        self.diagnostics = list(diagnostics)
        n = len(self.diagnostics)
        noun = "construct" if n == 1 else "constructs"
        head = f"cannot differentiate '{function_name}' — {n} unsupported {noun}"
        body = "\n\n".join(d.format() for d in self.diagnostics)
        self._text = f"{head}\n\n{body}"
        first = self.diagnostics[0] if self.diagnostics else None
        SyntaxError.__init__(self, head)
        self.msg = head
        if first is not None:
            self.filename = first.filename
            self.lineno = first.line
            self.offset = first.col + 1
            self.text = first.source_line
            self.end_lineno = first.line
            self.end_offset = first.end_col + 1

    def __str__(self) -> str:
        return self._text


class SourceUnavailableError(PullbackError):
    """pullback needs a function's Python source, or a rule for it, and has neither."""


class ArgumentError(PullbackError, ValueError, TypeError):
    """A call of a pullback API function was given arguments it cannot use."""


class NotDifferentiableError(ArgumentError):
    """The gradient was asked for an argument that is not a floating-point value."""


class ShapeMismatchError(ArgumentError):
    """A tangent, cotangent or preallocated output does not match the expected shape/dtype."""


class NonScalarOutputError(PullbackError, ValueError):
    """``grad`` was used on a function whose value is not a scalar."""


class MissingRuleError(PullbackError, TypeError):
    """A call reached at run time has neither Python source nor a differentiation rule."""


class NotIterableError(PullbackError, TypeError):
    """A differentiated for loop met a value it cannot iterate over."""


class SuppressedExceptionError(PullbackError):
    """A context manager around differentiated code swallowed an exception of its body, so
    the body stopped midway (``contextlib.suppress``, an ``__exit__`` returning true)."""


class HigherOrderError(PullbackError):
    """A derivative of a derivative needs a step pullback cannot differentiate twice yet."""


class UnsupportedCallError(PullbackError, NotImplementedError):
    """A function has a rule, but not for this form of call (an option, a kind of argument
    or a size the rule does not differentiate); the message says which and what to do."""


class RuleError(PullbackError):
    """A rule returned something inconsistent with the rule convention."""


class AdjointRuntimeError(PullbackError):
    """An exception raised while a generated adjoint ran, with the user's line it came from."""


def location_text(filename: str, line: int, col: int | None = None) -> str:
    """``file:line:col`` (col shown 1-based) or ``file:line`` when no column is known."""
    if col is None:
        return f"{filename}:{line}"
    return f"{filename}:{line}:{col + 1}"


def describe(obj) -> str:
    """A deterministic name for any object in a message: its qualified name, or its type
    (``mymodule.Model object``) — never a ``repr`` with a memory address."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(name, str):
        # a lambda pullback lifted to a def of its own (transform/closures.py) is a lambda
        return "<lambda>" if name.rpartition(".")[2].startswith("_pb_lambda_") else name
    cls = type(obj)
    module = cls.__module__
    prefix = "" if module in (None, "builtins") else f"{module}."
    return f"{prefix}{cls.__qualname__} object"


# -- what a user's traceback shows -------------------------------------------------------
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def in_pullback_file(filename: str) -> bool:
    """Whether ``filename`` is one of pullback's own modules, or code it generated (named
    ``<pullback ...>``): a line there is pullback's step, not the user's."""
    return filename.startswith("<pullback") or os.path.abspath(filename).startswith(_PACKAGE_DIR)


def generated_line_place(line_map, fs, lineno: int):
    """``(filename, line, text)`` of the user's line that line ``lineno`` of generated code
    (with its ``line_map`` and source ``fs``) was written for, or None. Generated code
    differentiated again (a Hessian) maps to the first adjoint's lines: its own map is
    followed to the user's file."""
    found = generated_line_source(line_map, fs, lineno)
    if found is None:
        return None
    fs, user_line = found
    return fs.filename, user_line, fs.file_line(user_line).strip()


def generated_line_source(line_map, fs, lineno: int):
    """``(source, line)``: the user's source and line that :func:`generated_line_place`
    names, or None."""
    k = lineno - 1
    user_line = line_map[k] if 0 <= k < len(line_map) else None
    for _ in range(8):
        if user_line is None:
            return None
        outer = getattr(getattr(fs, "fn", None), "__globals__", {})
        if "__pullback_line_map__" not in outer:
            break
        line_map, fs = outer["__pullback_line_map__"], outer["__pullback_source__"]
        k = user_line - 1
        user_line = line_map[k] if 0 <= k < len(line_map) else None
    if user_line is None:
        return None
    return fs, user_line


def running_sweep_lines(limit: int = 64) -> tuple:
    """The lines generated code on the call stack is running, innermost first, as
    ``(line_map, source, lineno)``, up to the first one written for a file that is not
    pullback's own (a user's function; a rule's pullback differentiated again is
    pullback's): cheap enough to take where a value made while a sweep runs may raise
    later, elsewhere (:class:`pullback.refused.Refused`); :func:`users_line_of` reads the
    user's line from them when it is needed."""
    out = []
    frame = sys._getframe(1)
    while frame is not None and limit > 0:
        g = frame.f_globals
        line_map = g.get("__pullback_line_map__")
        if line_map is not None:
            fs = g["__pullback_source__"]
            out.append((line_map, fs, frame.f_lineno))
            name = getattr(fs, "filename", "")
            if not (name.startswith("<pullback") or name.startswith(_PACKAGE_DIR)):
                break
        frame = frame.f_back
        limit -= 1
    return tuple(out)


def users_line_of(lines):
    """``(filename, line, text)`` of the first of :func:`running_sweep_lines`' ``lines``
    that is the user's, or None."""
    for line_map, fs, lineno in lines:
        where = generated_line_place(line_map, fs, lineno)
        if where is not None and not in_pullback_file(where[0]):
            return where
    return None


def users_line_parts(lines):
    """``(where, "file:line: ", "\\n        text")`` of the first of :func:`running_sweep_lines`'
    ``lines`` that is the user's, to put in a message (``(None, "", "")`` if none is): a
    value made while a sweep ran that raises later names where it came from."""
    where = users_line_of(lines)
    if where is None:
        return None, "", ""
    filename, line, text = where
    return where, f"{filename}:{line}: ", f"\n        {text}"


def _internal(frame) -> bool:
    """A frame of pullback's own machinery: its modules, or code it generated."""
    return in_pullback_file(frame.f_code.co_filename) or "__pullback_line_map__" in frame.f_globals


def _user_frames(tb):
    """The traceback ``tb`` without pullback's own frames (a new chain; None if none is
    left)."""
    kept = []
    while tb is not None:
        if not _internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def for_user(exc: BaseException) -> BaseException:
    """``exc`` with pullback's own frames cut from its traceback and from those of the
    exceptions it was raised from: the message already says what, where in the user's file
    and the fix, and twenty frames of the transform would bury it. The user's frames (a
    helper of theirs that raised) stay. ``PULLBACK_TRACEBACK=full`` in the environment keeps
    every frame, for reports of pullback's own bugs.

    >>> import traceback
    >>> def build():
    ...     raise ArgumentError("bad wrt")
    >>> try:
    ...     build()
    ... except PullbackError as e:
    ...     " > ".join(t.name for t in traceback.extract_tb(for_user(e).__traceback__))
    '<module> > build'
    """
    if os.environ.get("PULLBACK_TRACEBACK", "").lower() == "full":
        return exc
    seen = set()
    e = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = _user_frames(e.__traceback__)
        e = e.__cause__ if e.__cause__ is not None else e.__context__
    return exc


def user_facing(fn):
    """Decorate a public entry point: a :class:`PullbackError` leaves it with the traceback
    :func:`for_user` gives (the hot ``grad(f)(x)`` path does the same inline). The bare
    ``raise`` adds no frame of its own on Python 3.11+, which re-raises the exception with
    the traceback it carries; Python 3.10 re-raises the traceback it caught, whole."""

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PullbackError as exc:
            for_user(exc)
            raise

    return entry


class RaisesWhereUsed:
    """Base of a value that stands for a derivative pullback cannot give (an object's
    cotangent or tangent it cannot follow): any use of it (arithmetic, a conversion, an
    item, a NumPy function) raises its :meth:`error`, a pullback error naming the user's
    line and the fix, never a number taken as zero. Unused, it costs nothing.

    >>> class Stub(RaisesWhereUsed):
    ...     def error(self):
    ...         return NotDifferentiableError("stub")
    >>> try:
    ...     Stub() + 1.0
    ... except NotDifferentiableError as e:
    ...     print(e)
    stub
    """

    __slots__ = ()
    __array_priority__ = 1000  # (ndarray + it reaches its __radd__, which raises)

    def error(self) -> PullbackError:
        raise NotImplementedError

    def _raise(self, *_args, **_kwargs):
        raise self.error()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __neg__ = __pos__ = __matmul__ = __rmatmul__ = _raise
    __getitem__ = __contains__ = __iter__ = __len__ = get = _raise
    __array__ = __float__ = __complex__ = __int__ = __index__ = __bool__ = _raise
    __array_ufunc__ = __array_function__ = _raise
