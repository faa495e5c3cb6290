"""pullback.source reads each file once (cached by name, modification time and size, with
weak entries) instead of through inspect.getmodule: the lines it finds are inspect's, and
an edited file is read again."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os

import numpy as np
import pytest

from pullback import grad
from pullback.errors import SourceUnavailableError
from pullback.source import load_source, source_lines
from pullback.source_cache import FILES

# gc.collect() and gc.get_objects() here scan only this file's objects (see conftest).
pytestmark = pytest.mark.usefixtures("own_heap")


def decorated_helper(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@decorated_helper
def decorated(x):
    return x * 3.0


def plain(x):
    y = x * x
    return y + 1.0


class Holder:
    def method(self, x):
        return np.sin(x)


LAMBDA = lambda x: x * 2.0  # noqa: E731


def outer():
    def nested(x):
        return x**3

    return nested


@pytest.mark.parametrize(
    "fn",
    [plain, decorated.__wrapped__, decorated, Holder.method, LAMBDA, outer()],
    ids=["plain", "decorated", "wrapper", "method", "lambda", "nested"],
)
def test_source_lines_are_inspects(fn):
    lines, start, text = source_lines(fn.__code__)
    want_lines, want_start = inspect.getsourcelines(fn.__code__)
    assert (lines, start) == (want_lines, want_start)
    assert text is not None and text.lines[start - 1] == lines[0]


def test_functions_of_one_file_share_its_text():
    a, b = load_source(plain), load_source(Holder.method)
    assert a.file_text is b.file_text
    key = next(k for k, v in FILES.items() if v is a.file_text)
    assert key[0] == plain.__code__.co_filename


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_edited_file_is_read_again(tmp_path):
    path = tmp_path / "pb_edited.py"
    path.write_text("def f(x):\n    return x * 2.0\n")
    first = _load(path, "pb_edited")
    assert grad(first.f)(1.0) == 2.0
    path.write_text("def f(x):\n    return x * x * 5.0 + 1.0\n")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a later mtime
    second = _load(path, "pb_edited")
    assert grad(second.f)(1.0) == 10.0
    assert "x * x * 5.0" in "".join(load_source(second.f).lines)


def test_the_cache_holds_a_file_only_while_a_function_read_from_it_lives(tmp_path):
    import gc

    path = tmp_path / "pb_weak.py"
    path.write_text("def f(x):\n    return x * 2.0\n")
    module = _load(path, "pb_weak")
    fs = load_source(module.f)
    assert any(k[0] == str(path) for k in FILES.keys())
    del fs
    gc.collect()
    assert not any(k[0] == str(path) for k in FILES.keys())


def test_coding_line_and_non_ascii(tmp_path):
    path = tmp_path / "pb_latin.py"
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\ndef f(x):\n    return x * 4.0\n"
    path.write_bytes(text.encode("latin-1"))
    module = _load(path, "pb_latin")
    assert grad(module.f)(1.0) == 4.0
    assert load_source(module.f).lines == ["def f(x):\n", "    return x * 4.0\n"]


def test_sources_inspect_finds_by_other_means(tmp_path):
    # exec'd code with a linecache entry (as doctest and notebooks provide) still goes
    # through inspect
    import linecache

    name = "<pb-cell-1>"
    text = "def f(x):\n    return x * 6.0\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        ns: dict = {}
        exec(compile(text, name, "exec"), ns)
        lines, start, file_text = source_lines(ns["f"].__code__)
        assert file_text is None and start == 1 and lines[1] == "    return x * 6.0\n"
    finally:
        del linecache.cache[name]


# load_source keeps what it read on the function (the tree before any pass rewrote it) and
# hands out a copy while the code, the file's text and the names are the same.


def _tree_text(fs):
    import gast

    return gast.dump(fs.tree, include_attributes=True)


@pytest.mark.parametrize(
    "fn", [plain, Holder.method, LAMBDA, outer()], ids=["plain", "method", "lambda", "nested"]
)
def test_each_read_is_a_tree_of_its_own_as_first_read(fn):
    first = load_source(fn)
    pristine = _tree_text(first)
    first.tree.body.clear()  # a pass rewriting its tree
    first.tree.name = "rewritten"
    again = load_source(fn)
    assert _tree_text(again) == pristine
    assert again.tree is not first.tree and again.lines == first.lines
    assert again.file_text is first.file_text


@pytest.mark.parametrize("text_cached", [True, False], ids=["text_cached", "text_released"])
def test_a_file_edited_under_a_live_function_is_refused_not_read_from_before(tmp_path, text_cached):
    import gc

    from pullback.errors import SourceUnavailableError

    path = tmp_path / f"pb_edited_live_{text_cached}.py"
    path.write_text("def f(x):\n    return x * 2.0\n")
    module = _load(path, f"pb_edited_live_{text_cached}")
    fs = load_source(module.f)  # the file's text stays cached while fs lives
    if text_cached:
        assert grad(module.f)(1.0) == 2.0  # (its adjoint holds a FunctionSource)
    else:
        del fs
        gc.collect()
        assert not any(k[0] == str(path) for k in FILES.keys())
        assert "x * 2.0" in "".join(load_source(module.f).lines)  # read again, unchanged
    path.write_text("def f(x):\n    return x * x * 5.0 + 1.0\n")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(SourceUnavailableError, match="no longer matches"):
        load_source(module.f)


def test_new_code_or_a_new_name_is_read_again(tmp_path):
    path = tmp_path / "pb_swapped.py"
    path.write_text(
        "def f(x):\n    return x * 2.0\n\n\ndef g(x):\n    return x * x * 3.0\n\n\n"
        "class Box:\n    def m(self, x):\n        return self.__w * x\n"
    )
    module = _load(path, "pb_swapped")
    held = load_source(module.f)  # keeps the file's text cached
    assert grad(module.f)(2.0) == 2.0
    module.f.__code__ = module.g.__code__  # the function now runs g's code
    assert "x * x * 3.0" in "".join(load_source(module.f).lines)
    assert grad(module.f)(2.0) == 12.0
    method = module.Box.m
    assert "_Box__w" in _tree_text(load_source(method))
    method.__qualname__ = "Other.m"  # private names are spelled by the class
    assert "_Other__w" in _tree_text(load_source(method))
    assert held.file_text is not None


_DOCTEST = """
>>> import inspect
>>> from pullback import grad
>>> from pullback.source import load_source, source_lines
>>> def f(x):
...     y = x * x
...     return y * 3.0
>>> lines, start, text = source_lines(f.__code__)
>>> (lines, start) == tuple(inspect.getsourcelines(f.__code__)), text
(True, None)
>>> load_source(f).filename == f.__code__.co_filename
True
>>> float(grad(f)(2.0)), float(grad(lambda x: x * f(x))(1.0))
(12.0, 9.0)
"""


def test_a_function_defined_in_a_doctest_is_read_as_inspect_reads_it():
    import doctest

    test = doctest.DocTestParser().get_doctest(_DOCTEST, {}, "pb_doctest_source", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False) == (0, 8)


def test_a_fact_kept_with_the_source_is_computed_again_where_the_source_is_read_again(tmp_path):
    from pullback.source_cache import kept_with_source

    path = tmp_path / "pb_kept.py"
    path.write_text("def f(x):\n    return x * 2.0\n\n\ndef g(x):\n    return x + 1.0\n")
    module = _load(path, "pb_kept")
    computed = []

    def body_text(fn):
        computed.append(fn.__code__)
        return "".join(load_source(fn).lines)

    assert "x * 2.0" in kept_with_source(module.f, "body", body_text)
    assert "x * 2.0" in kept_with_source(module.f, "body", body_text)
    assert len(computed) == 1  # kept
    module.f.__code__ = module.g.__code__
    assert "x + 1.0" in kept_with_source(module.f, "body", body_text)
    assert len(computed) == 2
    path.write_text("def f(x):\n    return x * 2.0\n\n\ndef g(x):\n    return x + 7.0\n")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(SourceUnavailableError, match="no longer matches"):
        kept_with_source(module.f, "body", body_text)  # the edited file is read again
    assert len(computed) == 3
    assert kept_with_source(plain, "nothing", lambda fn: None) is None  # a value of None
