"""Step 7: render the forward and backward sweeps as Python source, compile them, and keep
the source visible (``linecache``) with a map from each generated line to the user's line.

>>> # adjoint = build_adjoint(f, ("x",), registry)   (see pullback.transform.build)
>>> # print(adjoint.source)
"""

from __future__ import annotations

import itertools
import linecache
import os
import re
import weakref

import numpy as np

from ..errors import PullbackError
from ..escapes import copies_done, fresh_copies, replayed_read, store_on_copy
from ..read_folds import fold_reads
from ..recompute_draws import refuse_unseeded
from ..sweep_cotangents import plus_fast, times_fast
from ..tangents import (
    NO_TANGENT,
    ZERO,
    add,
    densify,
    getitem_cotangent,
    unbroadcast,
)
from ..zero_safe import zero_safe_fixed, zero_safe_product
from .code import OWN_ERRORS, Line, once_texts, render, walk_text
from .replay import outside_effects, replay_forward, unseeded_generator
from .try_jumps import MARKERS
from .unit_products import unit_products
from .with_blocks import AMBIENT, ERRSTATE, PRINTOPTIONS

_serial = itertools.count(1)


class GeneratedCode:
    """What :func:`generate` compiled (a plain class: see ``analyze.Activity``)."""

    def __init__(self, source, filename, line_map, forward, backward, higher, fused=None):
        self.source = source
        self.filename = filename
        self.line_map = line_map  # generated line (1-based index - 1) -> user line or None
        self.forward = forward
        self.backward = backward
        self.higher = higher  # () -> (gradient function, vjp function), compiled on first use
        self.fused = fused  # () -> (fused sweeps, first reverse line) or None, on first use


def forget_with(fn, filename: str) -> None:
    """Drop the ``linecache`` entry of generated code once its function is collected, so
    generating many adjoints does not grow memory.

    Not from the collector's callback itself: that may run in the middle of
    ``linecache.checkcache()`` (pdb, doctest, traceback), which then fails with a
    ``KeyError`` for the entry that vanished under it. The callback only queues the name;
    the entry goes at the next :func:`remember_source`.
    """
    weakref.finalize(fn, _COLLECTED.append, filename)


#: Files of generated code whose functions were collected (see ``forget_with``).
_COLLECTED: list[str] = []


def remember_source(filename: str, source: str) -> None:
    """Make generated ``source`` visible to Python's tools under ``filename``, dropping
    the entries of collected generated code first."""
    while _COLLECTED:
        linecache.cache.pop(_COLLECTED.pop(), None)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _signature(tree) -> str:
    a = tree.args
    parts = [p.id for p in a.posonlyargs]
    if a.posonlyargs:
        parts.append("/")
    parts += [p.id for p in a.args]
    if a.vararg is not None:  # *args arrives as the tuple Python packs
        parts.append("*" + a.vararg.id)
    elif a.kwonlyargs:
        parts.append("*")
    parts += [p.id for p in a.kwonlyargs]
    if a.kwarg is not None:
        parts.append("**" + a.kwarg.id)
    return ", ".join(parts)


def runtime_namespace() -> dict:
    """Names every generated adjoint may use."""
    from types import MethodType

    from .. import runtime, unit_cotangents, with_contexts

    return {
        "ZERO": ZERO,
        "NO_TANGENT": NO_TANGENT,
        ERRSTATE: np.errstate,
        PRINTOPTIONS: np.printoptions,
        AMBIENT: with_contexts.ambient,
        OWN_ERRORS: (PullbackError,),
        **MARKERS,  # jumps out of a try with finally (try_jumps.py)
        "add": add,
        "unbroadcast": unbroadcast,
        "densify": densify,
        "getitem_cotangent": getitem_cotangent,
        "fold_reads": fold_reads,
        "tuple_item": runtime.tuple_item,
        "dict_item": runtime.dict_item,
        "sequence_cotangent": runtime.sequence_cotangent,
        "pow_exponent_cotangent": runtime.pow_exponent_cotangent,
        "pow_base_derivative": runtime.pow_base_derivative,
        "zero_safe_product": zero_safe_product,
        "zero_safe_fixed": zero_safe_fixed,
        "plus_cotangents": runtime.plus_cotangents,
        "times_cotangents": runtime.times_cotangents,
        "_pb_conjugate": runtime.conjugate,
        "_pb_plus_fast": plus_fast,
        "_pb_times_fast": times_fast,
        "matmul_lhs_cotangent": runtime.matmul_lhs_cotangent,
        "matmul_rhs_cotangent": runtime.matmul_rhs_cotangent,
        "as_sequence": runtime.as_sequence,
        "zero_cotangent": runtime.zero_cotangent,
        "_pb_vjp_zero": runtime.vjp_zero,
        "_pb_concrete": runtime.concrete_cotangent,
        "_pb_unit_times": unit_cotangents.unit_times,
        "_pb_times_unit": unit_cotangents.times_unit,
        "_pb_ndarray": unit_cotangents.ndarray,
        "_pb_float64": np.float64,
        "_pb_one64": np.float64(1.0),
        "_pb_scalar_seed": runtime.scalar_seed,
        # The pullback a forward sweep returns: its backward function bound to the saved
        # values as a method (not functools.partial). CPython 3.12 counts calls of a partial
        # (and of an object with __call__) against a fixed C recursion limit that
        # sys.setrecursionlimit does not raise; a bound method of a Python function is called
        # inline, so a recursive function's gradient reaches the depth its primal reaches.
        "_partial": MethodType,
    }


def generate(
    fs,
    tree,
    forward,
    backward,
    saved,
    ret_name,
    init_names,
    stacks,
    namespace,
    gradient_return,
    names=("_saved", "_dret"),
    vjp_return=None,
    releasable=None,
):
    """Render, compile and register the adjoint of ``fs`` (see module docstring)."""
    name = fs.name if not fs.is_lambda else "lambda"
    fwd_name = f"{name}__forward"
    bwd_name = f"{name}__backward"
    base = os.path.basename(fs.filename)

    def src_text(line):
        line = fs.first_line + line - 1
        return f"{base}:{line}: {fs.file_line(line).strip()}"

    saved_name, dret_name = names
    # A loop's tape is a list in the sweeps, a linked tuple (from None) where the code must
    # stay differentiable again (see reverse_flow.py).
    prologue = [Line(f"{s} = []", alt=f"{s} = None") for s in stacks]
    prologue += [Line(f"{n} = None") for n in init_names]
    signature = _signature(tree)
    params = set(re.findall(r"\w+", signature))
    ns = runtime_namespace()
    ns["replayed_read"] = replayed_read
    ns["store_on_copy"] = store_on_copy
    ns["fresh_copies"] = fresh_copies
    ns["copies_done"] = copies_done
    ns["refuse_unseeded"] = refuse_unseeded
    ns["_pb_origin"] = getattr(fs.fn, "__pullback_origin__", fs.fn)  # (replay.py)

    def place(src):
        return f"{fs.filename}:{fs.first_line + (src or 1) - 1}"

    ns.update(namespace)
    ns["__pullback_source__"] = fs

    def compile_unit(write, what, once=False):
        """Render functions with ``write(emit, render_here)``, compile them into ``ns``
        (``once``: with the texts of sweeps whose reverse part runs once, Line.once)."""
        out: list[str] = []
        line_map: list = []

        def emit(text, src=None):
            out.append(text)
            line_map.append(src)

        def render_here(block, last=None, use_alt=False):
            return render(block, 1, src_text, out, line_map, last, use_alt, once)

        write(emit, render_here)
        source = "\n".join(out) + "\n"
        # line_map holds lines of the parsed function; make them lines of the user's file.
        line_map = [None if k is None else fs.first_line + k - 1 for k in line_map]
        filename = f"<pullback {what} of {name} at {base}:{fs.first_line} #{next(_serial)}>"
        remember_source(filename, source)
        unit = dict(ns)
        unit["__pullback_line_map__"] = line_map
        exec(compile(source, filename, "exec"), unit)  # noqa: S102 - generated, checked code
        return source, filename, line_map, unit

    def sweeps(emit, render_here):
        emit(f"def {fwd_name}({signature}):", 1)
        last = render_here(prologue + forward)
        packed = ", ".join(saved) + ("," if len(saved) == 1 else "")
        emit(f"    return {ret_name}, _partial({bwd_name}, ({packed}))", last)
        emit("")
        emit("")
        emit(f"def {bwd_name}({saved_name}, {dret_name}):", 1)
        if saved:
            emit(f"    {packed} = {saved_name}")
        render_here(backward)

    def differentiable_again(emit, render_here):
        # The gradient as one function (forward, seed 1.0, reverse), in the supported
        # subset, so that pullback can differentiate it again (grad of grad, Hessians).
        emit(f"def {name}__gradient({signature}):", 1)
        last = render_here(prologue + forward, use_alt=True)
        # A Hessian or hvp of a function whose output is not a real scalar is refused here.
        emit(f"    {dret_name} = _pb_scalar_seed({ret_name}, {fs.name!r}, 'hessian')", last)
        render_here(backward[:-1] + [gradient_return], last, use_alt=True)
        # The cotangents for any output cotangent, as one function of (cotangent, *args):
        # what a caller's differentiable-again code uses for this function.
        emit("")
        emit("")
        emit(f"def {name}__vjp({dret_name}{', ' + signature if signature else ''}):", 1)
        # a recompute of a call that ran: no second write of the state it changed (replay.py)
        after = "\n".join(walk_text(backward[:-1] + [vjp_return]))
        outside = outside_effects(fs.fn.__globals__)
        replayed = replay_forward(prologue + forward, after, params, place, outside)
        unseeded = unseeded_generator(tree, fs.locate)
        if unseeded is not None:  # its recompute would draw other numbers: refused
            _, line, col = fs.location(unseeded)
            where = f"{fs.filename}:{line}:{col + 1}"
            text = f"refuse_unseeded({fs.name!r}, {where!r}, {fs.file_line(line)!r})"
            replayed = [Line(text, src=unseeded.lineno)] + replayed
        last = render_here(replayed, use_alt=True)
        render_here(backward[:-1] + [vjp_return], last, use_alt=True)

    def with_defaults(f):
        f.__defaults__ = fs.fn.__defaults__
        f.__kwdefaults__ = fs.user_kwdefaults()
        if fs.renames:  # differentiated again: the user's names map to these
            f.__pullback_renames__ = fs.renames
        # the user's function behind every level of derivative (its class: what `self` is,
        # pullback/receiver_classes.py)
        f.__pullback_origin__ = getattr(fs.fn, "__pullback_origin__", fs.fn)
        return f

    def higher():
        """Built only when a derivative of the derivative is asked for."""
        _, filename, _, unit = compile_unit(differentiable_again, "gradient")
        gradient = with_defaults(unit[f"{name}__gradient"])
        forget_with(gradient, filename)
        return gradient, with_defaults(unit[f"{name}__vjp"])

    # The seed of an array's sum (a float64) inline, the one seed grad's hot entry gives it
    # (transformed._seed_for): no call where the function costs little more than one.
    seed_line = (
        f"    {dret_name} = _pb_one64 if __pullback_value__.__class__ is _pb_float64"
        " else __pullback_seed__(__pullback_value__)"
    )

    def fused_sweeps(emit, render_here):
        # Both sweeps as one function of (seed function, *args) returning (value,
        # cotangents): no saved tuple, no partial, one call. What grad's hot entry runs.
        # Values are released after their last use (one frame holds them all).
        emit(f"def {name}__fused(__pullback_seed__{', ' + signature if signature else ''}):", 1)
        done = backward[-1].text  # "return (cotangents,)"
        body = [
            *prologue,
            *forward,
            Line(f"__pullback_value__ = {ret_name}"),
            Line(seed_line[4:]),
            *backward[:-1],
            Line("return __pullback_value__, " + done[7:]),
        ]
        if releasable is not None:
            # the texts this function runs (Line.once), products by the sum's broadcast 1
            # that may hand out their other factor, then values released after last use
            from .fused_folds import fold_fused  # (both imported by the first such sweep)
            from .release import release_dead

            body = unit_products(once_texts(body), dret_name, releasable)
            # single-use temporaries folded back, adjoint copies read through (before the
            # releases, which would count as mentions)
            params = {p.strip("*") for p in signature.split(", ") if p not in ("", "/", "*")}
            body = fold_fused(body, params | {"__pullback_seed__"})
            body = release_dead(body, releasable)
        render_here(body)

    def fused():
        """Built when grad's hot entry first runs, for functions of modest length (a long
        one's call overhead is small beside its sweeps, and compiling it twice is not)."""
        if source.count("\n") > FUSED_MAX_LINES or not backward[-1].text.startswith("return "):
            return None
        # Its reverse part runs once, so it pops the loops' tapes (Line.once): each
        # iteration's snapshot is freed as the reverse sweep reads it.
        fused_source, filename, _, unit = compile_unit(fused_sweeps, "fused sweeps", once=True)
        fn = with_defaults(unit[f"{name}__fused"])
        forget_with(fn, filename)
        # Lines from here on are the reverse sweep's: where an error is a pullback's.
        return fn, fused_source.splitlines().index(seed_line) + 1

    source, filename, line_map, unit = compile_unit(sweeps, "adjoint")
    fwd = with_defaults(unit[fwd_name])
    forget_with(fwd, filename)
    return GeneratedCode(source, filename, line_map, fwd, unit[bwd_name], higher, fused)


#: The longest sweeps (in generated lines) that grad's hot entry runs fused.
FUSED_MAX_LINES = 400
