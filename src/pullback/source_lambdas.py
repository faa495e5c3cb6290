"""Finding a lambda's own source among the lines that hold it (step 1 of the pipeline,
beside :mod:`pullback.source`): ``inspect`` returns whole lines, which may hold several
lambdas, or only part of the statement a lambda sits in.

>>> tree, text, position = lambda_tree(lambda v: v * 2.0, "f = lambda v: v * 2.0\\n", "f.py", 1)
>>> tree.name, position
('_lambda', (1, 4))
"""

from __future__ import annotations

import io
import tokenize

import gast

from .errors import SourceUnavailableError
from .source_match import lambdas_matching_code
from .tree_walk import walk


def lambda_as_def(name: str, lam: gast.Lambda) -> gast.FunctionDef:
    """``def name(<lam's parameters>): return <lam's body>``, the def pullback reads a lambda
    as (the return at the body's place; the def's own place is the caller's to give)."""
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    return gast.FunctionDef(
        name=name,
        args=lam.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )


def _by_position(candidates, code, start: int, indent: int):
    """Keep the lambda whose body holds the code's first located instruction (columns are
    known from Python 3.11 on; before, :func:`lambdas_matching_code` compares code)."""
    if not hasattr(code, "co_positions"):
        return []
    positions = [
        (line, col)
        for line, _, col, _ in code.co_positions()
        if line is not None and col is not None and (line, col) != (code.co_firstlineno, 0)
    ]
    if not positions:
        return []
    first = min(positions)
    kept = []
    for node in candidates:
        body = node.body
        lo = (start + body.lineno - 1, body.col_offset + indent)
        hi = (start + (body.end_lineno or body.lineno) - 1, (body.end_col_offset or 0) + indent)
        if lo <= first <= hi:
            kept.append(node)
    return kept


def _lambda_segments(text: str):
    """``(module, padded text)`` for each ``lambda`` in ``text``: the lambda expression
    alone (up to the ``,`` or closing bracket that ends it), in parentheses, at the same
    line and column as in ``text``, so that positions and compiled code match it."""
    tokens = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            tokens.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # brackets opened in lines inspect did not return: the tokens so far
    lines = text.splitlines(keepends=True)
    out = []
    for k, tok in enumerate(tokens):
        if not (tok.type == tokenize.NAME and tok.string == "lambda") or tok.start[1] == 0:
            continue
        depth, end = 0, None
        for later in tokens[_after_parameters(tokens, k) :]:
            if later.type == tokenize.OP and later.string in "([{":
                depth += 1
            elif later.type == tokenize.OP and later.string in ")]}":
                if depth == 0:
                    end = later.start
                    break
                depth -= 1
            elif depth == 0 and (
                (later.type == tokenize.OP and later.string in (",", ";"))
                or later.type in (tokenize.NEWLINE, tokenize.ENDMARKER)
                or (later.type == tokenize.NAME and later.string in ("for", "async"))
            ):
                end = later.start
                break
        if end is None:
            continue
        (row, col), (erow, ecol) = tok.start, end
        if erow == row:
            body = lines[row - 1][col:ecol]
        else:
            body = lines[row - 1][col:] + "".join(lines[row : erow - 1]) + lines[erow - 1][:ecol]
        padded = "\n" * (row - 1) + "(" + " " * (col - 1) + body + "\n)"
        module = _parsed(padded)
        if module is not None:
            out.append((module, padded))
    return out


def _after_parameters(tokens, k: int) -> int:
    """The index of the token after the ``:`` that ends the parameters of the lambda at
    ``tokens[k]`` (its commas are no end of the lambda: ``(lambda m, p: f(p, m), x)``)."""
    depth = 0
    for index in range(k + 1, len(tokens)):
        tok = tokens[index]
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif depth == 0 and tok.type == tokenize.OP and tok.string == ":":
            return index + 1
    return k + 1


def _parsed(text: str):
    try:
        return gast.parse(text)
    except SyntaxError:
        return None


def _parsed_as_arguments(text: str):
    """``text`` parsed as the arguments of a call, positions as in ``text`` itself."""
    module = _parsed("_(" + text + "\n)")
    if module is None:
        return None
    for node in walk(module):  # "_(" moved the first line two columns right
        if getattr(node, "lineno", None) == 1:
            node.col_offset -= 2
        if getattr(node, "end_lineno", None) == 1:
            node.end_col_offset -= 2
    return module


def lambda_tree(fn, text: str, filename: str, start: int, indent: int = 0) -> gast.FunctionDef:
    """Find ``fn``'s lambda in the source lines that hold it; return it as a ``def``."""
    module = None
    candidate = text
    # The lines inspect returns may be part of a larger statement; trim until it parses,
    # as it is or as the arguments of a call (`f(lambda v: ..., x, rtol=1e-6` on a line of
    # a call that spans lines).
    wrapped = False
    for _ in range(len(text.splitlines()) + 1):
        module = _parsed(candidate)
        if module is None:
            module = _parsed_as_arguments(candidate)
            wrapped = module is not None
        if module is not None:
            break
        candidate = "\n".join(candidate.splitlines()[:-1])
        if not candidate.strip():
            break
    if module is None:
        # Try wrapping in parentheses: a lambda inside a call that spans lines.
        candidate = "(" + text.strip().rstrip(",") + ")"
        try:
            module = gast.parse(candidate)
        except SyntaxError:
            module = None
    code = fn.__code__
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    found = []
    if module is not None:
        for node in walk(module):
            if isinstance(node, gast.Lambda):
                names = [a.id for a in node.args.args + node.args.kwonlyargs]
                if names == params:
                    found.append(node)
    if not found:
        # A lambda inside a display or call whose other lines inspect did not return
        # (`("name", lambda v: ..., (x,))]` on the last line of a list): each lambda
        # parsed alone, at its place in the text.
        for module_, padded in _lambda_segments(text):
            for node in walk(module_):
                if isinstance(node, gast.Lambda):
                    names = [a.id for a in node.args.args + node.args.kwonlyargs]
                    if names == params and not any(node is f for f, _ in found):
                        found.append((node, padded))
        if found:
            if len(found) > 1 and hasattr(code, "co_positions"):
                kept = _by_position([f for f, _ in found], code, start, indent)
                found = [(f, t) for f, t in found if any(f is k for k in kept)] or found
            if len(found) == 1:
                (lam, candidate), wrapped = found[0], False
                found = [lam]
            else:
                found = [f for f, _ in found]
    if len(found) > 1:
        if hasattr(code, "co_positions"):
            found = _by_position(found, code, start, indent) or found
        else:  # Python 3.10: no columns; compile each candidate and compare the code
            found = lambdas_matching_code(fn, candidate, start, found)[:1] or found
    if len(found) != 1:
        why = "no lambda with these parameters" if not found else "several lambdas"
        raise SourceUnavailableError(
            f"cannot find the source of the lambda at {filename}:{start} ({why} on that line).\n"
            "Fix: define the function with `def`."
        )
    lam = found[0]
    tree = gast.copy_location(lambda_as_def("_lambda", lam), lam)
    if wrapped:  # the text that parses (and compiles to the code: _require_match)
        shift = 2 if lam.lineno == 1 else 0
        return tree, "_(" + candidate + "\n)", (lam.lineno, lam.col_offset + shift)
    return tree, candidate, (lam.lineno, lam.col_offset)
