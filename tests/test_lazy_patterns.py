"""LazyPattern reads as the compiled pattern it stands for, and compiles nothing before its
first use: ``import pullback`` leaves the patterns of passes it has not run uncompiled."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from pullback.lazy_patterns import LazyPattern

TEXTS = ["a1 = b_2, c = 3", "x == y", "  def f(x):", "", "lambda: 0", "é = 1"]
PATTERNS = [
    (r"[A-Za-z_][A-Za-z0-9_]*", 0),
    (r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*,?\s*=(?!=)", 0),
    (r"^\s*(async\s+)?def\s", re.MULTILINE),
    (r"\b(?:lambda|def)\b", 0),
]


@pytest.mark.parametrize(("text", "flags"), PATTERNS)
def test_reads_as_the_compiled_pattern(text, flags):
    lazy, compiled = LazyPattern(text, flags), re.compile(text, flags)
    for s in TEXTS:
        for method in ("match", "search", "fullmatch"):
            got, want = getattr(lazy, method)(s), getattr(compiled, method)(s)
            assert (got and got.group(0)) == (want and want.group(0))
        assert lazy.findall(s) == compiled.findall(s)
        assert lazy.sub("_", s) == compiled.sub("_", s)
        assert [m.span() for m in lazy.finditer(s)] == [m.span() for m in compiled.finditer(s)]
    assert lazy.pattern == text and lazy.flags == compiled.flags


def test_compiled_on_first_use_and_kept_on_the_instance():
    lazy = LazyPattern(r"\d+")
    assert set(vars(lazy)) == {"_text", "_flags"}
    assert lazy.findall("a1b22") == ["1", "22"]
    assert vars(lazy)["findall"].__self__ is re.compile(r"\d+")  # re's cache: one pattern
    assert lazy.match("7").group(0) == "7"
    with pytest.raises(AttributeError):
        lazy.__no_such_dunder__  # noqa: B018 - probes (copy, pickle) see no attribute


def test_a_bad_pattern_raises_where_it_is_used():
    lazy = LazyPattern("(")
    with pytest.raises(re.error):
        lazy.match("x")


def test_import_compiles_no_pattern_of_a_pass_it_did_not_run():
    code = (
        "import numpy\n"
        "import pullback\n"
        "from pullback.transform import release, peephole, object_stores\n"
        "pats = (release._TARGETS, release._NESTED, peephole._SCALED, "
        "object_stores._METHOD_CALL)\n"
        "print([sorted(vars(p)) for p in pats] == [['_flags', '_text']] * 4)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"]
