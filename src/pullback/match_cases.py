"""``match`` statements lowered to the ``if``/``elif`` chain they stand for.

Choosing a case is a question about the subject's structure and values, which carries no
gradient; what a case binds is a read of the subject (an item, an attribute, the subject
itself), which the pipeline differentiates like any other read. So, right after parsing,
each ``match`` becomes::

    _pb_subject_1 = <subject>                       # evaluated once, as Python does
    if <case 1's tests on _pb_subject_1> and <guard, bound names read in place>:
        <name> = <its read of _pb_subject_1>        # the case's bindings
        <case 1's body>
    elif ...:
        ...
    else:                                           # an irrefutable last case (``case _:``)
        ...

The tests are Python's own (PEP 634): a value pattern ``==``, ``None``/``True``/``False``
``is``, a sequence pattern :func:`match_sequence` (a ``collections.abc.Sequence`` other than
``str``/``bytes``/``bytearray``) with its length, a mapping pattern :func:`match_mapping`
with ``key in``, a class pattern ``isinstance`` with ``hasattr`` for each keyword, an
or-pattern ``or`` of its alternatives. A guard reads the names its case binds as the reads
themselves (the bindings run only once the case is chosen).

What this does not lower stays a ``match`` statement, which the check refuses (PB409) with
the reason stored on the node (``pb_refusal``): positional sub-patterns of a class other than
the builtins that match themselves (``float(x)``), ``**rest`` in a mapping pattern, and
alternatives of an or-pattern that bind names.

>>> import gast
>>> tree = gast.parse('''
... def f(x, kind):
...     match kind:
...         case "double":
...             y = 2 * x
...         case ("scale", k) if k > 0:
...             y = k * x
...         case _:
...             y = x
...     return y
... ''').body[0]
>>> lower_matches(tree, lambda name: (False, None)) and None
>>> print(gast.unparse(tree))  # doctest: +NORMALIZE_WHITESPACE
def f(x, kind):
    _pb_subject_1 = kind
    if _pb_subject_1 == 'double':
        y = 2 * x
    elif match_sequence(_pb_subject_1) and len(_pb_subject_1) == 2 and \
(_pb_subject_1[0] == 'scale') and (_pb_subject_1[1] > 0):
        k = _pb_subject_1[1]
        y = k * x
    else:
        y = x
    return y
"""

from __future__ import annotations

import builtins
import collections.abc
import copy

import gast

from .tree_walk import walk

#: the names generated tests call (put in the function's namespace by :func:`lower_matches`)
SEQUENCE = "match_sequence"
MAPPING = "match_mapping"
SUBJECT = "_pb_subject_"

# The builtin classes whose single positional sub-pattern matches the subject itself.
_SELF_MATCHING = frozenset(
    {bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple}
)


def match_sequence(subject) -> bool:
    """Whether a sequence pattern may match ``subject`` (PEP 634: a ``Sequence``, not a
    string)."""
    return isinstance(subject, collections.abc.Sequence) and not isinstance(
        subject, (str, bytes, bytearray)
    )


def match_mapping(subject) -> bool:
    """Whether a mapping pattern may match ``subject``."""
    return isinstance(subject, collections.abc.Mapping)


class _Refused(Exception):
    """A pattern this lowering does not write: ``(why, fix)``."""


def lower_matches(tree, lookup) -> dict:
    """Replace the ``match`` statements of ``tree`` in place; ``lookup(name)`` resolves a
    free name as the function would (``(found, value)``). Returns the helpers the lowered
    code calls (name -> function), empty when there was nothing to lower."""
    lowering = _Lowering(lookup)
    lowering.visit(tree)
    return {SEQUENCE: match_sequence, MAPPING: match_mapping} if lowering.count else {}


class _Lowering(gast.NodeTransformer):
    def __init__(self, lookup):
        self.lookup = lookup
        self.count = 0

    def visit_Match(self, node):
        self.generic_visit(node)  # nested matches first
        try:
            cases = [self._case(case) for case in node.cases]
        except _Refused as exc:
            node.pb_refusal = exc.args[0]
            return node
        self.count += 1
        subject = gast.Name(f"{SUBJECT}{self.count}", gast.Store(), None, None)
        assign = gast.Assign(targets=[subject], value=node.subject, type_comment=None)
        chain = None
        for test, bindings, body, case in reversed(cases):
            body = [self._bind(name, read, case) for name, read in bindings] + body
            if test is None and chain is None:
                chain = body  # an irrefutable last case: the else
                continue
            test = gast.Constant(True, None) if test is None else test
            branch = gast.If(test=test, body=body, orelse=chain or [])
            chain = [_located(branch, case.pattern)]
        out = [_located(assign, node)] + (chain or [])
        for stmt in out:
            gast.fix_missing_locations(stmt)
        return out

    def _bind(self, name, read, case):
        target = gast.Name(name, gast.Store(), None, None)
        return _located(gast.Assign(targets=[target], value=read, type_comment=None), case.pattern)

    def _case(self, case):
        subject = gast.Name(f"{SUBJECT}{self.count + 1}", gast.Load(), None, None)
        tests, bindings = self._pattern(case.pattern, subject)
        if case.guard is not None:
            tests.append(_substitute(case.guard, dict(bindings)))
        test = None
        if tests:
            test = tests[0] if len(tests) == 1 else gast.BoolOp(gast.And(), tests)
        return test, bindings, case.body, case

    # -- patterns: (tests, bindings) on the read ``at`` ------------------------------------

    def _pattern(self, p, at):
        if isinstance(p, gast.MatchValue):
            return [_compare(at, gast.Eq(), p.value)], []
        if isinstance(p, gast.MatchSingleton):
            return [_compare(at, gast.Is(), gast.Constant(p.value, None))], []
        if isinstance(p, gast.MatchAs):
            tests, bindings = ([], []) if p.pattern is None else self._pattern(p.pattern, at)
            if p.name is not None:
                bindings = bindings + [(p.name, _copy(at))]
            return tests, bindings
        if isinstance(p, gast.MatchOr):
            return self._or(p, at)
        if isinstance(p, gast.MatchSequence):
            return self._sequence(p, at)
        if isinstance(p, gast.MatchMapping):
            return self._mapping(p, at)
        if isinstance(p, gast.MatchClass):
            return self._class(p, at)
        raise _Refused(_refusal(f"a {type(p).__name__} pattern"))

    def _or(self, p, at):
        alternatives, reads = [], set()
        for alt in p.patterns:
            tests, bindings = self._pattern(alt, at)
            reads.add(tuple(sorted((name, gast.dump(read)) for name, read in bindings)))
            alternatives.append(_conjunction(tests))
        if len(reads) > 1:  # `float(c) | int(c)` binds one read; `(k, 0) | (0, k)` two
            raise _Refused(
                (
                    "an or-pattern whose alternatives bind names to different reads",
                    "write one `case` for each alternative",
                )
            )
        return [gast.BoolOp(gast.Or(), alternatives)], bindings

    def _sequence(self, p, at):
        stars = [k for k, sub in enumerate(p.patterns) if isinstance(sub, gast.MatchStar)]
        n = len(p.patterns)
        length = gast.Call(_name("len"), [_copy(at)], [])
        if stars:
            size = _compare(length, gast.GtE(), gast.Constant(n - 1, None))
        else:
            size = _compare(length, gast.Eq(), gast.Constant(n, None))
        tests = [gast.Call(_name(SEQUENCE), [_copy(at)], []), size]
        bindings = []
        star = stars[0] if stars else n
        for k, sub in enumerate(p.patterns):
            if k == star:
                if sub.name is not None:
                    after = n - 1 - star
                    upper = None if after == 0 else gast.Constant(-after, None)
                    part = gast.Slice(gast.Constant(star, None), upper, None)
                    read = gast.Subscript(_copy(at), part, gast.Load())
                    bindings.append((sub.name, gast.Call(_name("list"), [read], [])))
                continue
            index = k if k < star else k - n
            item = gast.Subscript(_copy(at), gast.Constant(index, None), gast.Load())
            sub_tests, sub_bindings = self._pattern(sub, item)
            tests += sub_tests
            bindings += sub_bindings
        return tests, bindings

    def _mapping(self, p, at):
        if p.rest is not None:
            raise _Refused(
                (
                    "a mapping pattern with `**rest`",
                    "match the keys you need and read the others from the subject",
                )
            )
        tests = [gast.Call(_name(MAPPING), [_copy(at)], [])]
        bindings = []
        for key, sub in zip(p.keys, p.patterns, strict=True):
            tests.append(_compare(_copy(key), gast.In(), _copy(at)))
            item = gast.Subscript(_copy(at), _copy(key), gast.Load())
            sub_tests, sub_bindings = self._pattern(sub, item)
            tests += sub_tests
            bindings += sub_bindings
        return tests, bindings

    def _class(self, p, at):
        tests = [gast.Call(_name("isinstance"), [_copy(at), _copy(p.cls)], [])]
        bindings = []
        if p.patterns:
            if len(p.patterns) != 1 or not self._self_matching(p.cls):
                raise _Refused(
                    (
                        "positional sub-patterns of a class pattern (read through the "
                        "class's __match_args__)",
                        "name the attributes, e.g. `case Point(x=px, y=py):`",
                    )
                )
            sub_tests, sub_bindings = self._pattern(p.patterns[0], at)
            tests += sub_tests
            bindings += sub_bindings
        for attr, sub in zip(p.kwd_attrs, p.kwd_patterns, strict=True):
            tests.append(gast.Call(_name("hasattr"), [_copy(at), gast.Constant(attr, None)], []))
            item = gast.Attribute(_copy(at), attr, gast.Load())
            sub_tests, sub_bindings = self._pattern(sub, item)
            tests += sub_tests
            bindings += sub_bindings
        return tests, bindings

    def _self_matching(self, cls) -> bool:
        if not isinstance(cls, gast.Name):
            return False
        found, value = self.lookup(cls.id)
        if not found:
            value = getattr(builtins, cls.id, None)
        return isinstance(value, type) and value in _SELF_MATCHING


def _refusal(what):
    return (
        what,
        "write the cases as an if/elif chain, e.g. `if kind == 'a': ... elif kind == 'b': ...`",
    )


def _name(name):
    return gast.Name(name, gast.Load(), None, None)


def _copy(node):
    return copy.deepcopy(node)


def _compare(left, op, right):
    return gast.Compare(_copy(left), [op], [_copy(right)])


def _conjunction(tests):
    if not tests:
        return gast.Constant(True, None)
    return tests[0] if len(tests) == 1 else gast.BoolOp(gast.And(), tests)


def _substitute(guard, reads):
    """``guard`` with each name a case binds replaced by its read of the subject."""

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in reads:
                return gast.copy_location(_copy(reads[node.id]), node)
            return node

    return Replace().visit(_copy(guard))


def _located(node, where):
    gast.copy_location(node, where)
    for child in walk(node):
        if getattr(child, "lineno", None) is None and hasattr(child, "_attributes"):
            if "lineno" in child._attributes:
                gast.copy_location(child, where)
    return node


__all__ = ["MAPPING", "SEQUENCE", "lower_matches", "match_mapping", "match_sequence"]
