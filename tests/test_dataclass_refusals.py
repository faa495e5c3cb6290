"""What the dataclass records (records_dataclasses.py) refuse, with the user's line and a
fix: a constructor that is no store of the fields (``__post_init__``, an ``__init__`` of
the class's own, keyword-only or ``init=False`` fields), a property read through a
differentiated instance; and ``pullback.check`` and the static ``pullback check`` report
what ``grad`` refuses, and nothing where it differentiates."""

from __future__ import annotations

import dataclasses

import pytest
from static_files import check_then_import
from test_dataclass_records import (
    _where,
    as_tuple_and_dict,
    built_inside,
    net_built_in_a_loop,
    replaced,
    replaced_inside,
)

import pullback
from pullback import grad
from pullback.errors import UnsupportedSyntaxError


@dataclasses.dataclass
class WithPost:
    w: float
    b: float = 0.0

    def __post_init__(self):
        self.b = 2.0 * self.w


@dataclasses.dataclass
class OwnInit:
    w: float

    def __init__(self, w):
        self.w = 2.0 * w


class Plain:
    def __init__(self, w, b):
        self.w = w
        self.b = b


@dataclasses.dataclass
class WithProperty:
    w: float

    @property
    def twice(self):
        return 2.0 * self.w


def post(a):
    return WithPost(a).b


def own(a):
    return OwnInit(a).w


def plain(a):
    return Plain(a, 2.0).w


def prop(p):
    return p.twice


@pytest.mark.parametrize(
    "fn, name, what, fix",
    [
        (
            post,
            "WithPost",
            "a dataclass with __post_init__ (code pullback does not run through the constructor)",
            "compute what __post_init__ computes in a method or a property instead (they are "
            "differentiated), or pass the computed values as fields",
        ),
        (
            own,
            "OwnInit",
            "a dataclass with its own __init__",
            "let @dataclass generate __init__ (compute derived values in a function or a "
            "method that reads the fields), or register a rule for the class",
        ),
    ],
)
def test_constructors_that_are_no_stores_are_refused_with_a_fix(fn, name, what, fix):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(1.5)
    message = str(info.value)
    assert f"{_where(fn, 1, 12)}: PB301 call of '{__name__}.{name}', {what}\n" in message
    assert f"Fix: {fix} (see docs/limitations.md#PB301)." in message


def test_a_property_of_a_differentiated_dataclass_runs_its_getter():
    """``p.twice`` of a dataclass argument: the property's getter, differentiated (it was
    refused, PB501: the module defines a class with that property, so the read is the
    getter's call when the value's class has it)."""
    got = grad(prop)(WithProperty(1.5))
    h = 1e-6
    want = (prop(WithProperty(1.5 + h)) - prop(WithProperty(1.5 - h))) / (2 * h)
    assert isinstance(got, WithProperty) and got.w == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize(
    "fn, codes",
    [
        (built_inside, []),
        (replaced, []),
        (replaced_inside, []),
        (as_tuple_and_dict, []),
        (net_built_in_a_loop, []),
        (post, ["PB301"]),
        (own, ["PB301"]),
        (plain, []),  # a plain class: grad follows its __init__ (plain_classes.py)
    ],
)
def test_pullback_check_reports_what_grad_refuses(fn, codes):
    found = pullback.check(fn)
    assert [d.code for d in found] == codes
    if codes:
        with pytest.raises(UnsupportedSyntaxError) as info:
            grad(fn)(1.5)
        assert found[0].fix in str(info.value)


STATIC_FILE = """
import dataclasses
import typing


@dataclasses.dataclass
class Params:
    w: float
    b: float = 1.0
    K: typing.ClassVar[float] = 3.0


@dataclasses.dataclass
class WithPost:
    w: float

    def __post_init__(self):
        self.w = 2.0 * self.w


@dataclasses.dataclass(kw_only=True)
class KeywordsOnly:
    w: float


@dataclasses.dataclass
class KeywordFirst:
    w: float = dataclasses.field(kw_only=True)
    b: float = 1.0


@dataclasses.dataclass
class InitFalse:
    w: float
    n: int = dataclasses.field(init=False, default=0)


class Plain:
    def __init__(self, w):
        self.w = w


class Base:
    pass


class Derived(Base):
    def __init__(self, w):
        self.w = w


def fine(a):
    p = dataclasses.replace(Params(a, 2.0 * a), b=a)
    return p.w * p.b


def post(a):
    return WithPost(a).w


def keywords_only(a):
    return KeywordsOnly(w=a).w


def init_false(a):
    return InitFalse(a).w


def keyword_first(a):
    return KeywordFirst(w=a).w


def plain(a):
    return Plain(a).w


def derived(a):
    return Derived(a).w


def settings_only(a):
    return Plain(3.0).w * a
"""


def test_the_static_check_reports_what_grad_refuses(tmp_path, capsys):
    _, found, module = check_then_import(tmp_path, capsys, "models", STATIC_FILE)
    assert found == [
        "PB301 call of 'models.InitFalse', a dataclass with a field that is no __init__ "
        "parameter (field(init=False))",
        "PB301 call of 'models.KeywordFirst', a dataclass with keyword-only fields (the "
        "constructor's rule takes the fields by position)",
        "PB301 call of 'models.KeywordsOnly', a dataclass with keyword-only fields (the "
        "constructor's rule takes the fields by position)",
        "PB301 call of 'models.WithPost', a dataclass with __post_init__ (code pullback does "
        "not run through the constructor)",
    ]  # Plain and Derived: grad follows their __init__ (plain_classes.py)
    for name in ("fine", "settings_only"):
        grad(getattr(module, name))(1.5)
    for name in ("plain", "derived"):  # the stored argument itself: d/da a = 1
        assert grad(getattr(module, name))(1.5) == 1.0
    for name in ("post", "keyword_first", "keywords_only", "init_false"):
        with pytest.raises(UnsupportedSyntaxError, match="PB301"):
            grad(getattr(module, name))(1.5)
