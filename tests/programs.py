"""Generated programs as real modules: pullback reads a function's source, so a program a
property test generates is written to a file of its own and imported from there."""

import importlib.util
import itertools

_serial = itertools.count()


def load_program(source, folder, name="f"):
    """The function ``name`` of the module ``source``, written to a new file in ``folder``
    (each file named once per session, so no two programs share a path)."""
    path = folder / f"program_{next(_serial)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
