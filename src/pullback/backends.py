"""Array backends: NumPy (the default), Dask, and array-API namespaces.

This is the one module that knows about array libraries other than NumPy. The rest of
pullback asks it three things:

* what a value is (:func:`backend_of`, :func:`is_foreign_array`, :func:`is_float_array`),
  without importing Dask or any array-API library that the user has not imported;
* how to do the few things NumPy functions cannot do on every backend (:func:`ones_like`,
  :func:`shape_of`, :func:`as_array`);
* how to keep the sweeps lazy: :func:`compute_guard` lets a Dask graph be computed
  only where the user's own code asks for a concrete value (``if x.sum() > 0``, as the
  primal does), and refuses, *before* computing, a rule or a pullback helper that would
  pull an array into memory (an ``np.asarray``, a SciPy function, a NumPy function Dask
  does not implement).

NumPy arrays never reach this module on the hot paths: callers test
``type(x) is np.ndarray`` (or ``float``) first.

>>> backend_of(np.zeros(2)), backend_of(1.0), backend_of([1.0])
('numpy', 'numpy', None)
"""

from __future__ import annotations

import contextlib
import os
import sys

import numpy as np

from .errors import UnsupportedCallError

NUMPY = "numpy"
DASK = "dask"
ARRAY_API = "array-api"

_FLOAT_KINDS = "fc"


class BackendError(UnsupportedCallError):
    """A rule cannot run on the arrays' backend (it would compute a Dask array, or it
    only knows NumPy arrays). Raised before anything is computed."""


def _dask_array_type():
    # Only a Dask array can exist if dask.array was imported: never import it ourselves.
    module = sys.modules.get("dask.array")
    return getattr(module, "Array", None) if module is not None else None


def is_dask(x) -> bool:
    """True for a ``dask.array.Array``."""
    t = _dask_array_type()
    return t is not None and isinstance(x, t)


def is_array_api(x) -> bool:
    """True for an array of an array-API library other than NumPy and Dask
    (``array_api_strict``, CuPy, PyTorch through ``array_api_compat``, ...)."""
    if isinstance(x, (np.ndarray, np.generic)) or is_dask(x):
        return False
    return hasattr(type(x), "__array_namespace__")


def is_foreign_array(x) -> bool:
    """True for an array that is not NumPy's (a Dask or array-API array)."""
    return is_dask(x) or is_array_api(x)


def backend_of(x):
    """``'numpy'``, ``'dask'``, ``'array-api'``, or ``None`` for a value that is no array
    or number (a container, an object)."""
    t = type(x)
    if t is np.ndarray or t is float or t is int or isinstance(x, (np.ndarray, np.generic)):
        return NUMPY
    if t is bool or t is complex:
        return NUMPY
    if is_dask(x):
        return DASK
    if is_array_api(x):
        return ARRAY_API
    return None


def namespace(x):
    """The array-API namespace of ``x`` (``array_api_compat`` gives NumPy's, Dask's and
    CuPy's; arrays that carry ``__array_namespace__`` give their own)."""
    try:
        import array_api_compat
    except ImportError:
        array_api_compat = None
    if array_api_compat is not None:
        return array_api_compat.array_namespace(x)
    if hasattr(x, "__array_namespace__"):
        return x.__array_namespace__()
    return np


def is_float_array(x) -> bool:
    """True for a Dask or array-API array of floating (or complex) dtype."""
    if is_dask(x):
        return x.dtype.kind in _FLOAT_KINDS
    if is_array_api(x):
        xp = namespace(x)
        return bool(xp.isdtype(x.dtype, ("real floating", "complex floating")))
    return False


def is_real_array_api(x) -> bool:
    """True for an array-API array (not NumPy's or Dask's) of a real dtype."""
    if not is_array_api(x):
        return False
    return bool(namespace(x).isdtype(x.dtype, ("real floating", "integral", "bool")))


def conj(x):
    """The complex conjugate of ``x`` on its own backend: a Python number stays a Python
    number, an array-API array is conjugated by its namespace (a real one is itself)."""
    t = type(x)
    if t is float or t is int or t is bool:
        return x
    if t is complex:
        return x.conjugate()
    if is_array_api(x):
        xp = namespace(x)
        return xp.conj(x) if xp.isdtype(x.dtype, "complex floating") else x
    return np.conj(x)


def pow_exponent_cotangent(g, base, result):
    """``g * a**b * log(a)`` (0 where ``a <= 0``) for ``a ** b`` with an array-API array
    among ``base`` and ``result``, computed in that array's namespace (its operators take
    no NumPy array)."""
    like = base if is_array_api(base) else result
    xp = namespace(like)
    if not is_array_api(base):
        base = xp.asarray(base, dtype=like.dtype)
    if xp.isdtype(base.dtype, "complex floating") or xp.isdtype(result.dtype, "complex floating"):
        return g * xp.conj(result * xp.log(base))
    positive = base > 0
    log = xp.log(xp.where(positive, base, xp.ones_like(base)))
    return g * xp.where(positive, result * log, xp.zeros_like(result))


def shape_of(x) -> tuple:
    """The shape of ``x`` without converting it (``np.shape`` would compute some arrays)."""
    shape = getattr(x, "shape", None)
    if shape is not None and not callable(shape):
        return tuple(shape)
    return np.shape(x)


def ones_like(x, dtype=None):
    """Ones of ``x``'s shape on ``x``'s backend, chunked like ``x`` for Dask."""
    if is_array_api(x):
        return namespace(x).ones_like(x, dtype=dtype)
    return np.ones_like(x, dtype=dtype)  # NumPy dispatches to Dask itself


def zeros_like(x):
    """Zeros of ``x``'s shape and dtype on ``x``'s backend (chunked like ``x``)."""
    if is_array_api(x):
        return namespace(x).zeros_like(x)
    return np.zeros_like(x)


def is_complex(x) -> bool:
    """True for a complex scalar or array of any backend."""
    if is_array_api(x):
        return bool(namespace(x).isdtype(x.dtype, "complex floating"))
    return np.iscomplexobj(x)


def unbroadcast_foreign(g, x, sum_to):
    """``tangents.unbroadcast`` for a Dask or array-API primal ``x``: ``g`` summed down to
    ``x``'s shape (``sum_to`` does it for Dask, whose arrays take NumPy's functions),
    real when ``x`` is real, in ``x``'s dtype."""
    if is_complex(g) and not is_complex(x):
        g = g.real
    shape = shape_of(x)
    if is_array_api(x):
        return _unbroadcast_array_api(g, x, shape)
    if shape_of(g) == shape:
        return g.astype(x.dtype) if getattr(g, "dtype", None) != x.dtype else g
    return sum_to(g, shape, x.dtype)


def _unbroadcast_array_api(g, x, shape):
    xp = namespace(x)
    if not is_array_api(g):
        g = xp.asarray(g, dtype=x.dtype)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = xp.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if tuple(g.shape) != tuple(shape):
        g = xp.broadcast_to(g, shape)
    return xp.astype(g, x.dtype) if g.dtype != x.dtype else g


def like_argument(g, like):
    """The cotangent ``g`` (already of ``like``'s shape) as an array of ``like``'s backend:
    a Dask array with ``like``'s chunks, an array of ``like``'s namespace."""
    if is_dask(like):
        import dask.array as da

        if not is_dask(g):
            # a gradient that does not depend on the data (a constant) is still lazy
            g = da.from_array(np.broadcast_to(np.asarray(g, dtype=like.dtype), like.shape))
        if g.dtype != like.dtype:
            g = g.astype(like.dtype)
        if g.chunks != like.chunks:
            g = g.rechunk(like.chunks)
        return g
    if is_array_api(like) and not is_array_api(g):
        return namespace(like).asarray(g, dtype=like.dtype)
    return g


def _basic_index(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis for i in parts)


def read_cotangent(x, index, g):
    """The cotangent of the Dask or array-API array ``x`` from the cotangent ``g`` of
    ``x[index]``: zeros like ``x`` (chunked like it) with ``g`` written at ``index``.
    Basic indices (integers, slices, ``None``, ``...``) select each element at most once,
    so writing is adding; integer-array indices may repeat elements, and neither Dask
    (lazily) nor the array API has a scatter-add."""
    backend = DASK if is_dask(x) else ARRAY_API
    if not _basic_index(index) and backend == DASK:
        added = _dask_scatter_add(x, index, g)
        if added is not None:
            return added
    if not _basic_index(index):
        step = _called_step(sys._getframe(1))
        within = f" (in the rule step {_step_name(step)})" if step is not None else ""
        raise BackendError(
            f"cannot differentiate x[{index!r}]{within} on a {backend} array: the gradient of an "
            "integer-array or boolean index needs a scatter-add, which this backend does "
            "not do lazily. Nothing was computed.\n"
            "Fix: index with integers and slices, or use a mask with where "
            "(`np.where(mask, x, 0.0)`) instead of x[mask]."
        )
    if backend == DASK:
        import dask.array as da

        out = da.zeros(x.shape, dtype=_cotangent_dtype(x), chunks=x.chunks)
        index, g = _without_new_axes(x.shape, index, g)
    else:
        xp = namespace(x)
        out = xp.zeros(x.shape, dtype=x.dtype)
        if not is_array_api(g):
            g = xp.asarray(g, dtype=x.dtype)
    out[index] = g
    return out


def _without_new_axes(shape, index, g):
    """``(index, g)`` with the ``None`` entries of a basic ``index`` dropped and ``g``
    reshaped to match: Dask's item assignment ignores new axes (NumPy's does not), and
    dropping them only removes axes of length one."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(p is None for p in parts):
        return index, g
    kept = tuple(p for p in parts if p is not None)
    probe = np.broadcast_to(np.empty((), dtype=np.int8), shape)  # shapes only, no data
    read, target = probe[index].shape, probe[kept].shape
    if tuple(np.shape(g)) != read:
        g = np.broadcast_to(g, read)
    return kept, np.reshape(g, target)


def read_at(g, index):
    """``g[index]`` as NumPy reads it, also for a Dask ``g`` and an index of several
    broadcast integer arrays (Dask's getitem takes one: a pointwise ``vindex`` read)."""
    try:
        return g[index]
    except NotImplementedError:
        parts = index if isinstance(index, tuple) else (index,)
        if not is_dask(g) or not all(isinstance(p, (np.ndarray, list)) for p in parts):
            raise
        return g.vindex[index]


def _dask_scatter_add(x, index, g):
    """Zeros like the Dask array ``x`` with ``g`` *added* at ``x[index]`` for an
    integer-array or boolean ``index`` of concrete (NumPy) parts, as a lazy graph; ``None``
    where that cannot be built (an index that is itself a Dask array, chunks of unknown
    size): the caller refuses by name.

    Dask's item assignment writes (a repeated position keeps one value), so the sum is a
    ``bincount`` of the flat position of each element read, weighted by ``g``: the same
    segment sum the rule of ``np.take`` uses on Dask. Each task holds a vector of
    ``x.size``: meant for the parameter-sized arrays a model indexes, not a cluster-sized
    ``x``."""
    import dask.array as da

    parts = index if isinstance(index, tuple) else (index,)
    if any(is_dask(p) for p in parts):
        return None
    dtype = _cotangent_dtype(x)
    if x.size == 0:
        return da.zeros(x.shape, dtype=dtype, chunks=x.chunks)
    # the flat position of each element of x, chunked like x (NumPy's C order)
    positions = da.zeros(x.shape, dtype=np.intp, chunks=x.chunks)
    stride = 1
    for d in reversed(range(x.ndim)):
        axis = da.from_array(np.arange(x.shape[d], dtype=np.intp), chunks=(x.chunks[d],))
        view = (1,) * d + (x.shape[d],) + (1,) * (x.ndim - d - 1)
        positions = positions + axis.reshape(view) * stride
        stride *= x.shape[d]
    try:
        read = read_at(positions, index)
    except NotImplementedError:
        return None
    if any(np.isnan(n) for c in read.chunks for n in c):
        return None
    keys = read.ravel()
    weights = g if is_dask(g) else da.from_array(np.asarray(g))
    if weights.shape != read.shape:
        weights = da.broadcast_to(weights, read.shape)
    weights = weights.ravel().rechunk(keys.chunks)
    if np.iscomplexobj(weights) or dtype.kind == "c":
        re = da.bincount(keys, weights=da.real(weights), minlength=x.size)
        im = da.bincount(keys, weights=da.imag(weights), minlength=x.size)
        flat = re + 1j * im
    else:
        flat = da.bincount(keys, weights=weights, minlength=x.size)
    return flat.astype(dtype).reshape(x.shape).rechunk(x.chunks)


def _cotangent_dtype(x):
    return x.dtype if x.dtype.kind in _FLOAT_KINDS else np.dtype(np.float64)


def keys_like(keys, values):
    """The NumPy integer array ``keys`` (one per element of ``values``) as a Dask array
    chunked like ``ravel(values)`` when ``values`` is a Dask array, so that
    ``np.bincount(keys, weights=ravel(values))`` stays lazy; else ``keys`` itself."""
    if type(values) is np.ndarray or not is_dask(values):
        return keys
    import dask.array as da

    return da.from_array(keys, chunks=values.ravel().chunks)


def lazy_cotangent(g, like):
    """The lazy cotangent ``g`` (a Dask array) of a NumPy argument or float ``like``:
    summed to ``like``'s shape, in its floating dtype, still a Dask array."""
    if isinstance(like, (float, int)):
        return np.sum(g) if len(shape_of(g)) else g
    dtype = np.result_type(like)
    if dtype.kind in _FLOAT_KINDS and g.dtype != dtype:
        g = g.astype(dtype)
    return g


def as_array(x):
    """``np.asarray(x)`` for NumPy values and lists; Dask and array-API arrays unchanged
    (``np.asarray`` would compute a Dask array or copy a device array to the host)."""
    t = type(x)
    if t is np.ndarray:
        return x
    if t is float or t is int or t is list or t is tuple or isinstance(x, np.generic):
        return np.asarray(x)
    if is_foreign_array(x):
        return x
    return np.asarray(x)


def find_backend(args, kwargs=None):
    """The first non-NumPy backend among the leaves of ``args`` and ``kwargs`` (tuples,
    lists and dicts are searched), or ``None`` when every array is NumPy's.

    Cheap for the usual arguments: a float or an ndarray is passed over at once.
    """
    for a in args:
        t = type(a)
        if t is np.ndarray or t is float or t is int:
            continue
        found = _find_in(a)
        if found is not None:
            return found
    if kwargs:
        return find_backend(tuple(kwargs.values()))
    return None


def _find_in(value):
    if isinstance(value, (tuple, list)):
        return find_backend(value)
    if isinstance(value, dict):
        return find_backend(tuple(value.values()))
    backend = backend_of(value)
    return backend if backend in (DASK, ARRAY_API) else None


def holds_dask(value) -> bool:
    """Whether ``value`` is a Dask array or a tuple, list or dict holding one (at any
    depth). ``False`` at once where Dask was never imported."""
    if _dask_array_type() is None:
        return False
    return _first_dask((value,)) is not None


def _first_dask(values):
    for v in values:
        if is_dask(v):
            return v
        if isinstance(v, (tuple, list)):
            found = _first_dask(v)
        elif isinstance(v, dict):
            found = _first_dask(tuple(v.values()))
        else:
            continue
        if found is not None:
            return found
    return None


# -- keeping Dask graphs lazy -------------------------------------------------------------


_SCALAR_CONVERSIONS = frozenset({"__float__", "__int__", "__bool__", "__complex__", "__index__"})


_USER, _CONVERSION = "user", "conversion"


def _requester():
    """Who asked Dask to compute: ``(_CONVERSION, name)`` for ``float(x)``, ``int(x)``,
    ``bool(x)`` of a Dask value ``x`` named ``name`` (a one-element value, e.g. a branch
    condition) that the user's code or a rule's primal asks for,
    ``(_USER, None)`` for the user's function as the generated code runs it (allowed: the
    primal computes there too), or ``(frame, frame)`` for pullback's own code (a rule, a
    pullback, a cotangent helper), which is refused.

    A conversion is the primal's only where no pullback asks for it: one that a pullback
    (called by a reverse sweep, or transformed for a higher derivative) asks for, e.g.
    ``if np.all(x != 0):`` choosing a formula, computes what the primal never does, so it
    is refused like any other computation of pullback's own code."""
    frame = sys._getframe(2)
    conversion = step = None
    while frame is not None:
        g = frame.f_globals
        if "__pullback_line_map__" in g:
            if _own_generated(g):  # a pullback of pullback's, transformed: its own code
                return frame, frame
            if conversion is None:
                return _USER, None  # generated code (the user's own lines) asked first
            if step is not None and frame.f_code.co_name.endswith(_BACKWARD):
                return step, step  # a pullback the reverse sweep called converts
            return _CONVERSION, conversion[0]
        module = g.get("__name__", "")
        if frame.f_code.co_name in _SCALAR_CONVERSIONS and module.startswith("dask."):
            if conversion is None:
                conversion = (getattr(frame.f_locals.get("self"), "name", None),)
        elif module.startswith("pullback.") and module != __name__:
            if conversion is None:
                return frame, frame
            step = frame  # the outermost step of pullback's own code so far
        frame = frame.f_back
    return (_CONVERSION, conversion[0]) if conversion is not None else (_USER, None)


# The generated function of a reverse sweep (transform/codegen.py names it so).
_BACKWARD = "__backward"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _own_generated(g) -> bool:
    """Whether generated code was made from pullback's own source (a rule's pullback
    function transformed for a higher derivative), not from the user's."""
    fs = g.get("__pullback_source__")
    filename = getattr(fs, "filename", "") or ""
    return filename.startswith(_PACKAGE_DIR)


def _user_line(frame):
    """``(file:line, text)`` of the user's line that the generated code around ``frame``
    was running, or ``None``."""
    while frame is not None:
        g = frame.f_globals
        line_map = g.get("__pullback_line_map__")
        if line_map is not None:
            k = frame.f_lineno - 1
            user = line_map[k] if 0 <= k < len(line_map) else None
            fs = g.get("__pullback_source__")
            if user is None or fs is None:
                return None
            return f"{fs.filename}:{user}", fs.file_line(user).strip()
        frame = frame.f_back
    return None


def _step_name(frame) -> str:
    code = frame.f_code
    return f"{frame.f_globals.get('__name__', '?')}.{getattr(code, 'co_qualname', code.co_name)}"


def _called_step(frame):
    """The outermost frame of pullback's own code around ``frame`` (below the generated
    code that called it): the rule's pullback whose helper ``frame`` is, or ``None``."""
    step = None
    while frame is not None:
        g = frame.f_globals
        if "__pullback_line_map__" in g and not _own_generated(g):
            return step
        module = g.get("__name__", "")
        if module.startswith("pullback.") or _own_generated(g):
            step = frame
        frame = frame.f_back
    return step


def _where(frame) -> str:
    """``frame``'s step, and the rule's pullback that called it where that is another."""
    outer = _called_step(frame)
    inner = _step_name(frame)
    if outer is None or outer is frame:
        return inner
    return f"{inner} (called by {_step_name(outer)})"


def _refusal(frame, backend) -> BackendError:
    line = _user_line(frame)
    place, text = (f"{line[0]}: ", f"\n        {line[1]}") if line else ("", "")
    return BackendError(
        f"{place}the rule step {_where(frame)} cannot run on {backend} arrays lazily: it "
        f"would compute the {backend} array (pull it into memory) inside the gradient. "
        f"Nothing was computed.{text}\n"
        "Fix: compute that value yourself where it is small (`x.compute()`), write the step "
        "with NumPy functions Dask implements, or register a rule for it that stays lazy "
        "(docs/backends.md)."
    )


def compute_guard(args, kwargs=None, concrete=None):
    """A context manager for running a sweep on these arguments: for Dask arrays, any
    computation pullback's own code would start is refused before it runs; the user's
    code computes as it would in the primal. A no-op context for NumPy arguments.

    It gives a dict of the one-element values computed so far (``concrete``, or a new
    one): a branch condition the forward sweep computed is not computed again when the
    reverse sweep reads it; pass the dict to the guard of a later reverse sweep (a vjp's
    pullback) to share it.
    """
    sample = _first_dask(list(args) + list((kwargs or {}).values()))
    if sample is None:
        return contextlib.nullcontext(concrete)
    return _dask_guard(sample, {} if concrete is None else concrete)


@contextlib.contextmanager
def _dask_guard(sample, concrete):
    import dask
    import dask.base

    current = dask.config.get("scheduler", None)
    if getattr(current, "__pullback_guard__", False):
        yield current.concrete  # already inside a guarded sweep (a nested gradient)
        return
    real = dask.base.get_scheduler(collections=[sample])

    def guarded_scheduler(dsk, keys, **kwargs):
        who, detail = _requester()
        if who is _USER or detail is None:
            return real(dsk, keys, **kwargs)
        if who is not _CONVERSION:
            raise _refusal(detail, DASK)
        # Dask names an array by its graph: the same name is the same value.
        if detail not in concrete:
            concrete[detail] = real(dsk, keys, **kwargs)
        return concrete[detail]

    guarded_scheduler.__pullback_guard__ = True
    guarded_scheduler.concrete = concrete
    with dask.config.set(scheduler=guarded_scheduler):
        yield concrete
