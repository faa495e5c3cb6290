"""Property reads of objects whose class is known before running, as calls of the getter.

``self.kinetic`` in a method of ``Particle``, or ``p.kinetic`` after ``p = Particle(...)``,
where ``Particle.kinetic`` is a ``property`` whose getter is a Python function, is what
Python runs: ``Particle.kinetic.fget(self)``. Written as that call (the getter bound to a
fresh name in the function's namespace), it is differentiated as any user function, with
the object carrying the gradient, in every mode; a field read could only refuse it.

Only where the class is certain: ``self`` of a method (``receiver_classes.method_class``)
when no subclass of that class defines the name again, a local bound once by a call of
the class, or the call itself (``Particle(m, v).kinetic``). Any other property read stays
an attribute read (refused where a gradient flows through it, PB501). What a rewrite
bakes in is guarded (``fs.property_guards``, guards.current_property): a subclass defined
later that overrides the property, or another property given to the class, makes the
adjoint be built again.
"""

from __future__ import annotations

import re
import types

import gast

from ..guards import current_property
from ..resolve import bindings_fixed, local_names, receiver_class


def _property(cls, name: str):
    if not isinstance(cls, type):
        return None
    raw = current_property(cls, name)
    if not isinstance(raw, property) or not isinstance(raw.fget, types.FunctionType):
        return None
    return raw


def _made_class(fs, call, locals_):
    """The class ``call`` makes, ``C(...)`` with ``C`` a global or closure name bound to a
    class (its binding is guarded as every resolved name), or None."""
    func = call.func
    if not isinstance(func, gast.Name) or func.id in locals_:
        return None
    found, value = fs.lookup(func.id)
    return value if found and isinstance(value, type) else None


def read_properties_as_calls(fs, nodes=None, local=None) -> bool:
    """Rewrite ``obj.name`` (a property of a known class) in ``fs.tree`` as a call of its
    getter; returns whether anything changed (``nodes``: the tree's nodes when the caller
    walked it, ``local``: their ``local_names`` then, read only)."""
    tree = fs.tree
    if nodes is None:
        nodes, local = list(gast.walk(tree)), None
    params = tree.args.posonlyargs + tree.args.args
    locals_ = local
    classes = {}  # receiver name -> its class known before running (or None)
    found = {}
    with bindings_fixed(fs):  # (this walk only reads the tree)
        for node in nodes:
            if not (
                isinstance(node, gast.Attribute)
                and isinstance(node.ctx, gast.Load)
                and not node.attr.startswith("__")
            ):
                continue
            if isinstance(node.value, gast.Call):  # Particle(m, v).kinetic
                if locals_ is None:
                    locals_ = local_names(tree, nodes)
                cls = _made_class(fs, node.value, locals_)
                prop = _property(cls, node.attr) if cls is not None else None
                if prop is not None:
                    found[id(node)] = prop.fget
                    fs.property_guards[(cls, node.attr)] = prop
                continue
            if not isinstance(node.value, gast.Name):
                continue
            receiver = node.value.id
            if receiver not in classes:
                if locals_ is None:
                    locals_ = local_names(tree, nodes)
                known = bool(params) and params[0].id == receiver or receiver in locals_
                classes[receiver] = receiver_class(fs, node.value, locals_) if known else None
            cls = classes[receiver]
            prop = _property(cls, node.attr) if cls is not None else None
            if prop is not None:
                found[id(node)] = prop.fget
                # what the adjoint bakes in: guarded (a subclass defined later may
                # override the property, or the class may be given another one)
                fs.property_guards[(cls, node.attr)] = prop
    if not found:
        return False
    names = {}

    class Rewrite(gast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            fget = found.get(id(node))
            if fget is None:
                return node
            if id(fget) not in names:
                # (a lambda getter's qualname holds `<locals>.<lambda>`: no identifier)
                name = re.sub(r"\W", "_", f"{fget.__qualname__}_getter")
                while name in locals_ or name in fs.namespace:
                    name += "_"
                fs.namespace[name] = fget
                names[id(fget)] = name
            func = gast.Name(names[id(fget)], gast.Load(), None, None)
            if isinstance(node.value, gast.Call):
                receiver = node.value  # the object made there, once
            else:
                receiver = gast.Name(node.value.id, gast.Load(), None, None)
            call = gast.Call(func=func, args=[receiver], keywords=[])
            for n in (func, receiver, call):
                gast.copy_location(n, node)
            return call

    Rewrite().visit(fs.tree)
    return True
