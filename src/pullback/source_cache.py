"""What pullback keeps of the sources it read: each file's text once per (name, mtime,
size), and on each function what :func:`pullback.source.load_source` read for it, the
facts computed from that read and the verdict that its text compiles to its code.

Nothing here outlives what it describes: a file's text is cached while a FunctionSource
read from it lives (weak values; linecache never grows, design.md), and a function's read,
facts and verdict live in its ``__dict__`` and die with it. Each is trusted only while what
it was read from is unchanged: the code object that runs, the function's names, the file
as read at one (mtime, size). An edited file or a recompiled function is read again.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "model.py")
>>> with open(path, "w") as f:
...     _ = f.write("def f(x):\\n    return x * x\\n")
>>> text = cached_file(path)
>>> text.lines, text is cached_file(path)  # read once while it is held
(['def f(x):\\n', '    return x * x\\n'], True)
>>> ns = {}
>>> exec(compile("def f(x):\\n    return x * x\\n", path, "exec"), ns)
>>> f = ns["f"]
>>> keep_read(f, text, ("what load_source read",))
>>> read_before(f) == (text, ("what load_source read",))
True
>>> kept_with_source(f, "calls", lambda fn: ["computed once"]) is kept_with_source(
...     f, "calls", lambda fn: ["again"])
True
>>> with open(path, "a") as out:
...     _ = out.write("# edited\\n")
>>> read_before(f) is None  # the file changed: read again
True
"""

from __future__ import annotations

import os
import tokenize
import weakref


class FileText:
    """The lines of one source file as read at one (mtime, size)."""

    __slots__ = ("lines", "key", "__weakref__")

    def __init__(self, lines, key):
        self.lines = lines
        self.key = key  # (filename, mtime_ns, size) when read


# (filename, mtime_ns, size) -> FileText. Weak values: a file stays cached while a
# FunctionSource read from it lives, and never grows linecache (design.md). (Tests swap
# nothing here: an entry is only ever the file's text at its key.)
FILES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def cached_file(filename: str):
    """The cached lines of a real ``.py`` file, or None (then inspect finds the source:
    ``<stdin>``, doctest and notebook cells, zip imports)."""
    if not filename.endswith(".py"):
        return None
    try:
        st = os.stat(filename)
    except (OSError, ValueError):
        return None
    key = (filename, st.st_mtime_ns, st.st_size)
    text = FILES.get(key)
    if text is None:
        try:
            with tokenize.open(filename) as f:  # honours a PEP 263 coding line
                text = FileText(f.readlines(), key)
        except (OSError, SyntaxError, UnicodeDecodeError):
            return None
        FILES[key] = text
    return text


# The key on a function of what load_source read for it, with the tree before any pass
# rewrote it (each load_source hands out a copy: the passes rewrite the tree they are
# given). A function is loaded several times per gradient (the check, the transform, the
# passes that read a callee), each time a parse and a conversion before. The entry lives
# and dies with the function, like the verdict of :func:`keep_checked`; it holds the key
# of the file's text, not the text (cached only while a FunctionSource read from it
# lives, design.md): the text is trusted the same where the file's (name, mtime, size) is,
# as the cache of texts trusts it.
_READ = "__pullback_source_read__"
_CHECKED = "__pullback_source_checked__"


def keep_read(fn, text: FileText, read: tuple) -> None:
    """Keep on ``fn`` what load_source read for it from the file ``text`` (``read``: a
    tuple of its own, handed back by :func:`read_before` while it holds)."""
    fn.__dict__[_READ] = (fn.__code__, text.key, fn.__name__, fn.__qualname__, read)


def read_before(fn):
    """``(file_text, read)`` where ``fn`` was read before from its file as it is now, else
    None. What the read depends on is checked: the code that runs (another code object is
    read again), the file's text as read at one (mtime, size) (an edited file is another
    text: read again, and refused if it no longer matches the code) and the names that
    spell the tree (a lambda's ``def``, the private names a class mangles). The text is
    read again where no FunctionSource of the file lives (a read, no parse)."""
    checked = _checked_read(fn)
    if checked is None:
        return None
    text, (*_, read) = checked
    return text, read


def _checked_read(fn):
    """``(file_text, entry)``: the read kept on ``fn`` where it is still what load_source
    would read, else None."""
    entry = fn.__dict__.get(_READ)
    if entry is None:
        return None
    code, file_key, name, qualname, _ = entry
    if code is not fn.__code__ or name != fn.__name__ or qualname != fn.__qualname__:
        return None
    text = cached_file(code.co_filename)  # the cached text, or the file read again
    if text is None or text.key != file_key:
        return None
    return text, entry


def kept_with_source(fn, name: str, compute):
    """``compute(fn)``, a fact read from ``fn``'s source by load_source, kept on ``fn``
    with what load_source read: computed again wherever load_source would read ``fn``
    again (other code, an edited file, another name), else the kept value. Not kept where
    ``fn`` has no kept read (no file, or its read failed): computed each time."""
    slot = "__pullback_kept_" + name
    checked = _checked_read(fn)
    kept = fn.__dict__.get(slot)
    if checked is not None and kept is not None and kept[0] is checked[1]:
        return kept[1]
    value = compute(fn)
    entry = fn.__dict__.get(_READ)
    if entry is not None and _checked_read(fn) is not None:
        fn.__dict__[slot] = (entry, value)
    return value


def checked_before(fn, key) -> bool:
    """Whether ``fn``'s source was found to compile to its code for ``key`` (its code, the
    text, where it starts): the verdict of :func:`keep_checked`, once per (code, text)."""
    return fn.__dict__.get(_CHECKED) == key


def keep_checked(fn, key) -> None:
    """Keep on ``fn`` that its source compiles to its code for ``key``: it lives and dies
    with the function, and holds for that code and text only."""
    fn.__dict__[_CHECKED] = key
