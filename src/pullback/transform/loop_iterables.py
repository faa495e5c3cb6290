"""For loops over any nesting of ``zip``/``enumerate``/``reversed``, and unpacking.

A mixin of :class:`~pullback.transform.normalize.Normalizer`. A loop becomes a loop over
an index ``k``; what the loop iterates is read as a *shape* of element: ``zip(a, b)``
yields the pair ``(a[k], b[k])``, ``enumerate(s, start)`` the pair ``(k + start, s[k])``,
``reversed(s)`` the item ``s[n - 1 - k]``, and anything else ``seq[k]`` of the iterable read
once as a sequence (``as_sequence``). The loop target is bound against that shape
directly, so ``for i, (p, q) in enumerate(zip(xs, ys))`` reads ``xs[k]`` and ``ys[k]``
with no tuple built in between, and the gradient flows through those reads.

``itertools`` iterators whose items are found by position: ``combinations(xs, 2)`` and
its kin from a table of positions, ``chain(a, b)`` as the tuple ``(*a, *b)``,
``chain.from_iterable(xss)`` (and ``chain(*xss)``) as ``xss[i][j]``. ``accumulate(xs)``
is no read: its running value is a variable of the loop, updated by statements that run
at the start of each step (``Element.before``), so it is supported only where the loop
steps through it in order (not under ``reversed`` or a table).

Where a shape is not known (``a, b = f(x)``, ``for a, b in pairs``) the value is
unpacked as Python unpacks it (:func:`pullback.unpacking.unpack_items`): iterated once,
its length checked, dicts to their keys; a starred name takes a list of the middle items.

>>> import numpy as np
>>> from pullback import grad
>>> def f(xs, ys):
...     s = 0.0
...     for i, (p, q) in enumerate(zip(xs, ys)):
...         s = s + i * p * q
...     return s
>>> dx, dy = grad(f, wrt=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
>>> dx.tolist(), dy.tolist()
([0.0, 4.0], [0.0, 2.0])
>>> code = grad(f).source_for(np.ones(2), np.ones(2)).splitlines()
>>> any("zip(" in line for line in code if not line.lstrip().startswith("#"))
False
"""

from __future__ import annotations

import builtins
import copy
import itertools

import gast
import numpy as np

from .. import unpacking
from ..iteration import is_from_iterable
from ..resolve import Callee, resolve_call
from ..runtime import as_sequence
from ..tree_walk import walk
from . import nodes as N
from .star_calls import has_star

_LIST = builtins.list


class Element:
    """The ``k``-th item of an iteration: a value expression, or a tuple of elements;
    ``before``: statements that run first at each step (an ``accumulate``'s next value)."""

    def __init__(self, value=None, parts=None, before=()):
        self.value = value
        self.parts = parts
        self.before = list(before)

    def statements(self) -> list:
        """The statements that run before the item is read, its parts' included."""
        out = list(self.before)
        for p in self.parts or ():
            out.extend(p.statements())
        return out

    def expression(self):
        """The item as one expression (a tuple display for a tuple of elements)."""
        if self.parts is None:
            return self.value
        return N.tuple_([p.expression() for p in self.parts])


class LoopIterables:
    """A mixin of the Normalizer: loop headers and unpacking."""

    def loop_header(self, s):
        """``(statements before, loop variable, body prefix, range call)`` of a for loop."""
        pre: list = []
        target, it = s.target, s.iter
        if self._iterated_function(it) is builtins.range and isinstance(target, gast.Name):
            if not it.keywords:
                args = []
                for a in it.args:
                    st, atom = self.expr(a)
                    pre.extend(st)
                    args.append(atom)
                return pre, target.id, [], N.call("range", args)
        index = self.fresh("k")
        length, element = self.iteration(it, pre, s)
        n = self.fresh("n")
        pre.append(N.assign(n, length, s))
        prefix = self.bind(target, element(N.load(index)), s)
        return pre, index, prefix, N.call("range", [N.load(n)])

    def _iterated_function(self, it):
        if not isinstance(it, gast.Call) or has_star(it):
            return None  # zip(*pairs): iterate over what the star-call returns
        callee = resolve_call(self.fs, it, self.locals)
        return callee.obj if callee is not None and callee.kind == "object" else None

    def _chain_of_starred(self, it):
        """``xss`` when ``it`` is ``itertools.chain(*xss)`` (one starred argument), else None."""
        if (
            not isinstance(it, gast.Call)
            or len(it.args) != 1
            or it.keywords
            or not isinstance(it.args[0], gast.Starred)
        ):
            return None
        callee = resolve_call(self.fs, it, self.locals)
        if callee is None or callee.kind != "object" or callee.obj is not itertools.chain:
            return None
        return it.args[0].value

    def iteration(self, it, pre, where, in_order=True, zipped=None):
        """``(length expression, element)``: ``element(k)`` is the :class:`Element` the
        iteration of ``it`` yields at index node ``k`` (a fresh node per use).
        ``in_order``: ``k`` is the loop's own index, stepping 0, 1, ... once each (not
        under ``reversed`` or a table), which an ``accumulate`` needs. ``zipped``: the
        list of a ``zip``'s deferred reads when ``it`` is one of its arguments (directly
        or under ``enumerate``): see :meth:`_zip_iteration`."""
        fn = self._iterated_function(it)
        spread = self._chain_of_starred(it)
        if spread is not None:  # chain(*xss): chain.from_iterable(xss)
            return self._flat_iteration(spread, pre, where)
        if fn is builtins.zip and it.args and all(k.arg == "strict" for k in it.keywords):
            return self._zip_iteration(it, pre, where, in_order)
        if fn is builtins.enumerate and 1 <= len(it.args) + len(it.keywords) <= 2 and it.args:
            start = None
            if len(it.args) > 1 or it.keywords:
                node = it.args[1] if len(it.args) > 1 else it.keywords[0].value
                st, start = self.expr(node)
                pre.extend(st)
            length, inner = self.iteration(it.args[0], pre, where, in_order, zipped)

            def counted(k):
                count = _copy(k)
                if start is not None:
                    count = gast.BinOp(left=count, op=gast.Add(), right=_copy(start))
                return Element(parts=[Element(value=count), inner(_copy(k))])

            return length, counted
        if fn is builtins.reversed and len(it.args) == 1 and not it.keywords:
            length, inner = self.iteration(it.args[0], pre, where, False)
            n = self.fresh("n")
            pre.append(N.assign(n, length, where))
            last = self.fresh("last")
            pre.append(N.assign(last, gast.BinOp(N.load(n), gast.Sub(), N.const(1)), where))
            return N.load(n), lambda k: inner(
                gast.BinOp(left=N.load(last), op=gast.Sub(), right=_copy(k))
            )
        if fn is np.ndenumerate and len(it.args) == 1 and not it.keywords:
            return self._nd_iteration(it.args[0], pre, where)
        table = _index_table_form(fn, it)
        if table is not None:
            return self._table_iteration(table, pre, where)
        if fn is itertools.chain and it.args and not it.keywords:
            # chain(a, b): the items of the tuple (*a, *b), whose cotangent the rules of
            # tuple() and + split back (as a starred display's)
            return self.iteration(N.located(_packed_tuple(it.args), it), pre, where, in_order)
        if is_from_iterable(fn) and len(it.args) == 1 and not it.keywords:
            return self._flat_iteration(it.args[0], pre, where)
        form = _accumulate_form(fn, it) if in_order else None
        if form is not None and not _rebound(self.fs.tree, form[0], where):
            return self._accumulate_iteration(it.args[0], *form, pre, where)
        if zipped is not None:  # read once zip's limit is known (_zip_iteration)
            st, atom = self.expr(it)
            pre.extend(st)
            seq = self.fresh("seq")
            if isinstance(atom, gast.Name):
                raw = atom.id
            else:
                raw = self.fresh()
                pre.append(N.assign(raw, atom, where))
            zipped.append((raw, seq))
        else:
            seq = self.sequence(it, pre, where)
        return (
            N.call("len", [N.load(seq)]),
            lambda k: Element(value=N.subscript(N.load(seq), k)),
        )

    def _zip_iteration(self, it, pre, where, in_order):
        """``zip(a, b, ...)``: the tuple of its arguments' elements at ``k``, as many as the
        shortest has. Every argument is evaluated first, in order, as Python does; an
        argument that is no known shape (a name, a call, ``count(1)``, a user's generator)
        is read only then, and an iterator among them only as far as the sequences go
        (``unpacking.zip_limit``/``zip_bounded``): read whole, a generator that never ends
        (``zip(naturals(), xs)``) would never return. Without any sequence to bound them
        they are read whole, and a zip of only endless iterators is endless in Python too
        (``as_sequence`` refuses itertools' own)."""
        zipped: list = []
        parts, sized = [], []
        for a in it.args:
            before = len(zipped)
            parts.append(self.iteration(a, pre, where, in_order, zipped))
            sized.append(len(zipped) == before)  # its length needs no deferred read
        lengths: list = [None] * len(parts)

        def name_length(j):
            name = self.fresh("n")
            pre.append(N.assign(name, parts[j][0], where))
            lengths[j] = N.load(name)

        for j in range(len(parts)):
            if sized[j]:
                name_length(j)
        if zipped:
            limit = self.fresh("n")
            known = [_copy(n) for n in lengths if n is not None]
            raws = [N.load(raw) for raw, _ in zipped]
            call = self.bound_call(unpacking.zip_limit, known + raws, where)
            pre.append(N.assign(limit, call, where))
            for raw, seq in zipped:
                cut = self.bound_call(unpacking.zip_bounded, [N.load(raw), N.load(limit)], where)
                bounded = self.fresh()
                pre.append(N.assign(bounded, cut, where))
                read = N.call("as_sequence", [N.load(bounded)])
                read.pb_callee = Callee("internal", as_sequence, name="as_sequence")
                self.namespace["as_sequence"] = as_sequence
                pre.append(N.assign(seq, read, where))
        for j in range(len(parts)):
            if not sized[j]:
                name_length(j)
        keywords = []
        for k in it.keywords:  # strict=True: unequal lengths raise, as zip raises
            st, flag = self.expr(k.value)
            pre.extend(st)
            keywords.append(gast.keyword(arg="strict", value=flag))
        length = lengths[0]
        if len(lengths) > 1 or keywords:
            length = self.bound_call(
                unpacking.zip_length, lengths, where, keywords, name="_pb_zip_length"
            )
        return length, lambda k: Element(parts=[el(_copy(k)) for _, el in parts])

    def _table_iteration(self, table, pre, where):
        """``itertools.combinations(xs, 2)`` and its kin (see :func:`_index_table_form`):
        the tuple ``(xs[i], xs[j])`` for the ``k``-th ``(i, j)`` of the positions
        :func:`~pullback.unpacking.index_table` lists, each item read from its iterable
        as that iterable's own iteration reads it."""
        kind, r, iterables, sources = table
        parts = [self.iteration(a, pre, where, False) for a in iterables]
        lengths = []
        for length, _ in parts:
            name = self.fresh("n")
            pre.append(N.assign(name, length, where))
            lengths.append(N.load(name))
        positions = self.fresh("positions")
        args = [N.const(kind), N.const(r), *lengths]
        made = self.bound_call(unpacking.index_table, args, where, name="_pb_index_table")
        pre.append(N.assign(positions, made, where))

        def at(k):
            row = N.subscript(N.load(positions), _copy(k))
            return Element(
                parts=[
                    parts[source][1](N.subscript(copy.deepcopy(row), N.const(j)))
                    for j, source in enumerate(sources)
                ]
            )

        return N.call("len", [N.load(positions)]), at

    def _flat_iteration(self, arg, pre, where):
        """``itertools.chain.from_iterable(xss)``: ``xss[i][j]`` for the ``k``-th ``(i, j)``
        of :func:`~pullback.unpacking.flat_positions` (the lengths of ``xss``'s items)."""
        seq = self.sequence(arg, pre, where)
        positions = self.fresh("positions")
        made = self.bound_call(
            unpacking.flat_positions, [N.load(seq)], where, name="_pb_flat_positions"
        )
        pre.append(N.assign(positions, made, where))

        def at(k):
            row = N.subscript(N.load(positions), _copy(k))
            outer = N.subscript(N.load(seq), N.subscript(row, N.const(0)))
            return Element(value=N.subscript(outer, N.subscript(copy.deepcopy(row), N.const(1))))

        return N.call("len", [N.load(positions)]), at

    def _accumulate_iteration(self, arg, func, initial, pre, where):
        """``itertools.accumulate(xs[, func][, initial=v])`` in a loop that steps through
        it in order: the running value is a variable of the loop, updated at the start of
        each step as Python's iterator updates it when asked for the next item
        (``acc = xs[0]`` at the first step, then ``acc = acc + xs[k]``, or ``func(acc,
        xs[k])``), so it is differentiated as any value a loop carries."""
        seq = self.sequence(arg, pre, where)
        acc = self.fresh("acc")
        if initial is not None:
            st, start = self.expr(initial)
            pre.extend(st)
            pre.append(N.assign(acc, start, where))
        else:
            pre.append(N.assign(acc, N.const(None), where))
        length = N.call("len", [N.load(seq)])
        if initial is not None:
            length = gast.BinOp(left=length, op=gast.Add(), right=N.const(1))

        def at(k):
            offset = 1 if initial is not None else 0
            item_index = _copy(k)
            if offset:
                item_index = gast.BinOp(left=item_index, op=gast.Sub(), right=N.const(1))
            item = N.subscript(N.load(seq), item_index)
            step = N.located(N.assign(acc, _combined(func, N.load(acc), item), where), where)
            first = gast.Compare(left=_copy(k), ops=[gast.Eq()], comparators=[N.const(0)])
            if initial is None:
                start = N.assign(acc, N.subscript(N.load(seq), _copy(k)), where)
                update = N.if_(first, [start], [step], where=where)
            else:
                update = N.if_(N.not_(first), [step], where=where)
            return Element(value=N.load(acc), before=self.stmt(update)[0])

        return length, at

    def _nd_iteration(self, arg, pre, where):
        """``np.ndenumerate(a)``: the pair ``(index, a[index])`` of the array's ``k``-th
        element in C order, its index from :func:`~pullback.unpacking.nd_index`."""
        st, atom = self.expr(arg)
        pre.extend(st)
        arr, shape = self.fresh("arr"), self.fresh("shape")
        pre.append(
            N.assign(arr, self.bound_call(np.asarray, [atom], where, name="_pb_asarray"), where)
        )
        pre.append(
            N.assign(
                shape, self.bound_call(np.shape, [N.load(arr)], where, name="_pb_shape"), where
            )
        )
        size = self.bound_call(np.size, [N.load(arr)], where, name="_pb_size")

        def at(k):
            index = self.bound_call(
                unpacking.nd_index, [_copy(k), N.load(shape)], where, name="_pb_nd_index"
            )
            read = N.subscript(N.load(arr), copy.deepcopy(index))
            return Element(parts=[Element(value=index), Element(value=read)])

        return size, at

    def bind(self, target, element, where) -> list:
        """Normalized statements binding ``target`` to ``element`` (after the statements
        that run before its items are read)."""
        return element.statements() + self._bind(target, element, where)

    def _bind(self, target, element, where) -> list:
        if element.parts is not None and _plain_tuple(target, len(element.parts)):
            out = []
            for elt, part in zip(target.elts, element.parts, strict=True):
                out.extend(self._bind(elt, part, where))
            return out
        stmts, value = self.expr(N.located(element.expression(), where), keep_call=True)
        if isinstance(target, gast.Name):
            stmts.append(N.assign(target.id, value, where))
            return stmts
        if not N.is_atom(value):
            tmp = self.fresh()
            stmts.append(N.assign(tmp, value, where))
            value = N.load(tmp)
        return stmts + self.unpack(target, value, where)

    def sequence(self, node, pre, where) -> str:
        """Evaluate an iterable once, as something with len() and [k]."""
        st, atom = self.expr(node)
        pre.extend(st)
        name = self.fresh("seq")
        self.namespace["as_sequence"] = as_sequence
        c = N.call("as_sequence", [atom])
        c.pb_callee = Callee("internal", as_sequence, name="as_sequence")
        pre.append(N.assign(name, c, where))
        return name

    # -- unpacking ----------------------------------------------------------------------
    def unpack(self, target, value, where) -> list:
        """Normalized statements for ``target = value`` (``value`` an atom)."""
        if isinstance(target, gast.Name):
            return [N.assign(target.id, value, where)]
        if not isinstance(target, (gast.Tuple, gast.List)):  # obj.W, d[k] = ...: one store
            store = N.located(gast.Assign([target], value, None), where)
            return self.stmt(store)[0]
        elts = target.elts
        stars = [k for k, e in enumerate(elts) if isinstance(e, gast.Starred)]
        count = len(elts) - len(stars)
        items = self.fresh("items")
        args = [value, N.const(count)] + ([N.const(True)] if stars else [])
        out = [
            N.assign(
                items,
                self.bound_call(unpacking.unpack_items, args, where, name="_pb_unpack_items"),
                where,
            )
        ]
        if not stars:
            reads = [(e, N.subscript(N.load(items), N.const(k))) for k, e in enumerate(elts)]
        else:
            star = stars[0]
            after = len(elts) - star - 1
            reads = [(elts[k], N.subscript(N.load(items), N.const(k))) for k in range(star)]
            n = self.fresh("n")
            out.append(N.assign(n, N.call("len", [N.load(items)]), where))
            upper = self.fresh("hi")
            out.append(N.assign(upper, gast.BinOp(N.load(n), gast.Sub(), N.const(after)), where))
            middle = self.fresh("mid")
            window = gast.Slice(lower=N.const(star), upper=N.load(upper), step=None)
            out.append(N.assign(middle, N.subscript(N.load(items), window), where))
            rest = self.bound_call(_LIST, [N.load(middle)], where, name="_pb_list")
            reads.append((elts[star].value, rest))
            for j in range(after):
                position = self.fresh("at")
                offset = N.const(after - j)
                out.append(N.assign(position, gast.BinOp(N.load(n), gast.Sub(), offset), where))
                reads.append((elts[star + 1 + j], N.subscript(N.load(items), N.load(position))))
        for elt, read in reads:
            if isinstance(elt, gast.Name):
                out.append(N.assign(elt.id, read, where))
            else:
                tmp = self.fresh()
                out.append(N.assign(tmp, read, where))
                out.extend(self.unpack(elt, N.load(tmp), where))
        return out

    def tuple_assign(self, s):
        """``a, b = b, a + b``: a display of the target's length is evaluated whole, then
        bound element by element (no unpacking call needed), or None."""
        if len(s.targets) != 1 or not isinstance(s.value, (gast.Tuple, gast.List)):
            return None
        target = s.targets[0]
        if any(isinstance(e, gast.Starred) for e in s.value.elts):
            return None
        if not _plain_tuple(target, len(s.value.elts)):
            return None
        stmts: list = []
        atoms = [self.atom(e, stmts) for e in s.value.elts]
        # u, un = un, u: Python reads every value before it binds a name, so a value read
        # from a name that an earlier target binds is copied first (else `u = un; un = u`)
        rebound: set = set()
        for k, elt in enumerate(target.elts):
            atom = atoms[k]
            if isinstance(atom, gast.Name) and atom.id in rebound:
                tmp = self.fresh()
                stmts.append(N.assign(tmp, atom, s))
                atoms[k] = N.load(tmp)
            rebound |= {
                n.id
                for n in walk(elt)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
        self.tuple_store_guards(s, stmts)  # p[0], p[-1] = p[-2], p[1] (mutation.py)
        for elt, atom in zip(target.elts, atoms, strict=True):
            stmts.extend(self.unpack(elt, atom, s))
        return stmts


_TABLES = {
    itertools.combinations: "combinations",
    itertools.combinations_with_replacement: "combinations_with_replacement",
    itertools.permutations: "permutations",
    itertools.product: "product",
}
if hasattr(itertools, "pairwise"):  # Python 3.10
    _TABLES[itertools.pairwise] = "pairwise"


def _constant_int(node):
    if isinstance(node, gast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def _index_table_form(fn, it):
    """``(kind, r, iterables, sources)`` for a call of an ``itertools`` function whose
    tuples have a size written in the call (``combinations(xs, 2)``, ``permutations(xs,
    3)``, ``product(a, b)``, ``product(xs, repeat=2)``, ``pairwise(xs)``): ``sources[j]``
    is the iterable item ``j`` of each tuple comes from. None for anything else (it is
    read once as a sequence, as any iterable)."""
    kind = _TABLES.get(fn) if fn is not None else None
    if kind is None:
        return None
    keywords = {k.arg: k.value for k in it.keywords}
    if None in keywords:
        return None
    if kind == "product":
        if set(keywords) - {"repeat"} or not it.args:
            return None
        repeat = _constant_int(keywords["repeat"]) if "repeat" in keywords else 1
        if repeat is None:
            return None
        m = len(it.args)
        return kind, repeat, list(it.args), [j % m for j in range(m * repeat)]
    if kind == "pairwise":
        if len(it.args) != 1 or keywords:
            return None
        return kind, 2, list(it.args), [0, 0]
    if len(it.args) == 2 and not keywords:
        r = _constant_int(it.args[1])
    elif len(it.args) == 1 and set(keywords) == {"r"}:
        r = _constant_int(keywords["r"])
    else:
        return None  # permutations(xs): its size is the length, known only when it runs
    if r is None:
        return None
    return kind, r, [it.args[0]], [0] * r


def _packed_tuple(args):
    """``tuple(a) + tuple(b) + ...`` for the arguments of ``chain(a, b, ...)``."""
    out = None
    for a in args:
        piece = N.call(N.load("tuple"), [a])
        out = piece if out is None else gast.BinOp(left=out, op=gast.Add(), right=piece)
    return out


def _accumulate_form(fn, it):
    """``(func, initial)`` for ``itertools.accumulate(xs[, func][, initial=v])`` whose
    ``func`` is a name, an attribute read or a lambda written there (read again at each
    step, as a reference it is the same function): ``func`` ``gast.Add`` for the default
    (``acc + item``) or the node to call; ``initial`` a node or None.
    None for any other form (it stays a call, refused where a gradient flows through it)."""
    if fn is not itertools.accumulate or not 1 <= len(it.args) <= 2:
        return None
    keywords = {k.arg: k.value for k in it.keywords}
    if set(keywords) - {"func", "initial"} or ("func" in keywords and len(it.args) == 2):
        return None
    func = it.args[1] if len(it.args) == 2 else keywords.get("func")
    initial = keywords.get("initial")
    if isinstance(initial, gast.Constant) and initial.value is None:
        initial = None  # (initial=None: no initial value, as itertools reads it)
    if func is None or (isinstance(func, gast.Constant) and func.value is None):
        return gast.Add, initial
    if isinstance(func, gast.Lambda) or _reference(func):
        return func, initial
    return None


def _rebound(tree, func, loop) -> bool:
    """Whether the function ``func`` names (a name or an attribute read) may be another
    function at a later step than at the call: its name (or the attribute's text) is
    bound more than once in the function, or inside the loop. (A lambda is one function.)"""
    if not isinstance(func, (gast.Name, gast.Attribute)):
        return False
    text = gast.unparse(func).strip()
    inside = {id(n) for n in walk(loop)}
    bindings = [
        n
        for n in walk(tree)
        if (
            isinstance(n, (gast.Name, gast.Attribute))
            and isinstance(n.ctx, (gast.Store, gast.Del))
            and gast.unparse(n).strip() == text
        )
        or (isinstance(n, (gast.FunctionDef, gast.ClassDef)) and n.name == text and n is not tree)
    ]
    return len(bindings) > 1 or any(id(n) in inside for n in bindings)


def _reference(node) -> bool:
    return isinstance(node, gast.Name) or (
        isinstance(node, gast.Attribute) and _reference(node.value)
    )


def _combined(func, acc, item):
    """``acc + item`` (an operator) or ``func(acc, item)``."""
    if isinstance(func, type):
        return gast.BinOp(left=acc, op=func(), right=item)
    return N.call(_copy(func), [acc, item])


def _plain_tuple(target, length) -> bool:
    """A tuple/list target of ``length`` names or nested targets, without a starred one."""
    return (
        isinstance(target, (gast.Tuple, gast.List))
        and len(target.elts) == length
        and not any(isinstance(e, gast.Starred) for e in target.elts)
    )


def _copy(node):
    """A fresh copy of an index expression (a tree node may appear once in the result)."""
    return copy.deepcopy(node)


__all__ = ["Element", "LoopIterables"]
