"""Every code block of README.md and docs/*.md runs, so the documentation cannot drift.

The blocks of one file run in order, in one namespace, as if they were one module: a later
block may use what an earlier one defined. The module's text is written to a file first
(``README.py`` for README.md, in a temporary folder that is also the current directory), and
each block is compiled at its own lines of that file, so pullback can read the source of the
functions the blocks define, and messages name the document's own line numbers.

What a block is, is said by its fence and by an HTML comment on the line before it:

* ```` ```python ```` — runs and must not raise;
* ``<!-- raises NAME -->`` before a ``python`` block — it must raise ``pullback.NAME``;
* ``<!-- output -->`` before a ``text`` block — the exact output of the block before it:
  what it printed, or the message of the exception it raised (trailing spaces ignored);
* ``<!-- not run: REASON -->`` before a ``python`` block — shown only (e.g. needs a file that
  the page describes but does not create); the reason is required;
* other fences (``bash``, ``console``, ``text``, ``toml``, ``yaml``) are not Python and do not
  run. Their commands are tested elsewhere (tests/test_cli.py, .ci/run).

docs/rules.md is generated (tests/rules/test_listing.py) and docs/limitations.md's blocks
are checked by tests/check/test_limitations_rewrites.py; they are left to those tests.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import pullback

ROOT = Path(__file__).resolve().parents[1]
TESTED_ELSEWHERE = {"rules.md", "limitations.md"}
DOCUMENTS = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").glob("*.md") if p.name not in TESTED_ELSEWHERE
)
NOT_PYTHON = {"bash", "console", "text", "toml", "yaml", "pycon", ""}

FENCE = re.compile(
    r"(?:^<!--\s*(?P<marker>[^>]*?)\s*-->\n)?^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```\s*$",
    re.M | re.S,
)


@dataclass
class Block:
    lang: str
    marker: str
    body: str
    line: int  # 1-based line of the block's first code line in the document


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start("body")) + 1
        found.append(Block(m["lang"], m["marker"] or "", m["body"], line))
    return found


def _run_one(block: Block, filename: str, namespace: dict):
    """Run ``block`` at its own lines of ``filename``; (printed text, exception or None)."""
    code = compile("\n" * (block.line - 1) + block.body, filename, "exec")
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(code, namespace)
        except Exception as exc:  # noqa: BLE001 - compared with the marker below
            error = exc
    return out.getvalue(), error


def run_document(path: Path, tmp_path: Path) -> int:
    """Run every block of ``path`` as described in the module docstring; the number run."""
    found = blocks(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    # The file pullback and tracebacks read: the document with everything but the code
    # blocks blanked, so every line number is the document's own.
    keep = set()
    for block in found:
        if block.lang == "python" and not block.marker.startswith("not run"):
            keep.update(range(block.line, block.line + block.body.count("\n")))
    source = "\n".join(line if k + 1 in keep else "" for k, line in enumerate(lines))
    # Named after the page and read relative to tmp_path, so messages that name the file
    # (`README.py:41:5: PB101 ...`) are the same on every machine.
    filename = path.stem.replace("-", "_") + ".py"
    (tmp_path / filename).write_text(source + "\n", encoding="utf-8")
    module = types.ModuleType("doc_" + Path(filename).stem)
    module.__file__ = filename
    sys.modules[module.__name__] = module  # inspect and dataclasses look modules up by name
    namespace = module.__dict__
    ran = 0
    last = None  # (printed, error, block) of the last python block
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in found:
            where = f"{path.name}:{block.line}"
            if block.lang == "python":
                if block.marker.startswith("not run"):
                    assert block.marker.partition(":")[2].strip(), f"{where}: give a reason"
                    continue
                printed, error = _run_one(block, filename, namespace)
                expected = None
                if block.marker.startswith("raises"):
                    expected = getattr(pullback, block.marker.split()[1])
                if expected is None and error is not None:
                    raise AssertionError(f"{where}: the block raised") from error
                if expected is not None and not isinstance(error, expected):
                    raise AssertionError(f"{where}: expected {expected.__name__}, got {error!r}")
                assert not block.marker or block.marker.startswith("raises"), where
                last = (printed, error, block)
                ran += 1
            elif block.marker == "output":
                assert block.lang == "text", f"{where}: an output block is a text fence"
                assert last is not None, f"{where}: output with no python block before it"
                printed, error, source_block = last
                shown = str(error) + "\n" if error is not None else printed
                assert _tidy(shown) == _tidy(block.body), (
                    f"{where}: the output of the block at line {source_block.line} differs:\n"
                    f"{shown}"
                )
                last = None  # one output per block
            else:
                assert block.lang in NOT_PYTHON, f"{where}: unknown fence {block.lang!r}"
                assert not block.marker, f"{where}: marker {block.marker!r} on a {block.lang}"
    finally:
        os.chdir(cwd)
        sys.modules.pop(module.__name__, None)
    return ran


def _tidy(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_code_blocks_run_and_show_their_output(path, tmp_path):
    ran = run_document(path, tmp_path)
    runnable = [b for b in blocks(path) if b.lang == "python" and "not run" not in b.marker]
    assert ran == len(runnable)


def test_the_pages_with_code_are_all_found():
    names = {p.name for p in DOCUMENTS}
    assert {"README.md", "api.md", "getting-started.md", "custom-rules.md"} <= names
    assert sum(1 for p in DOCUMENTS for b in blocks(p) if b.lang == "python") >= 40


def test_the_extractor_checks_outputs_and_errors(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text(
        "```python\nprint('hello')\n```\n\n<!-- output -->\n```text\nhello\n```\n\n"
        "<!-- raises ArgumentError -->\n```python\n"
        "pullback.grad(lambda x: x, wrt=5)(1.0)\n```\n"
    )
    sys.modules.setdefault("pullback", pullback)
    with pytest.raises(AssertionError, match="expected ArgumentError"):  # needs the import
        run_document(doc, tmp_path)
    doc.write_text(doc.read_text().replace("print('hello')", "import pullback\nprint('hi')"))
    with pytest.raises(AssertionError, match="differs"):
        run_document(doc, tmp_path)
    doc.write_text(doc.read_text().replace("print('hi')", "print('hello')"))
    assert run_document(doc, tmp_path) == 2
