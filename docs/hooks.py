"""MkDocs hooks (``hooks:`` in mkdocs.yml): what the site computes while it is built.

* ``<!-- pullback:codes -->`` in a page becomes the table of every diagnostic code, rendered
  from :data:`pullback.check.codes.CODES` — the same titles and reasons the checker prints —
  so the documentation and the messages cannot disagree.
* On the limitations page, each code's section heading gets its code as its id
  (``## PB101 — ... { #PB101 }``) in place of the raw ``<a id="PB101">`` that GitHub needs,
  so MkDocs knows the anchor and checks every ``limitations.md#PB101`` link.
* Fences ```` ```python before ```` and ```` ```python after ```` (the limitations page's
  refused code and its rewrite; tests/test_docs.py runs both) become titled Python blocks:
  SuperFences reads an info string of two words as no fence at all.
* The figures of the worked model are made by running ``examples/fit_ode.py --figures``
  into a temporary folder and added to the site as ``figures/*.png``; they are build
  outputs and never committed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODES_MARKER = "<!-- pullback:codes -->"
FIGURES = ("ode_fit.png", "ode_loss.png")
# `<a id="PB101"></a>` (other anchors may follow on its line), blank lines, `## PB101 — ...`
CODE_SECTION = re.compile(r'^<a id="(PB\d+)"></a>(.*)\n\s*\n(## \1 .*)$', re.MULTILINE)
_figure_dir = tempfile.TemporaryDirectory(prefix="pullback-docs-figures-")


def codes_table() -> str:
    """The Markdown table of every code: code (linked to its rewrite), title and reason."""
    from pullback.check.codes import CODES

    lines = ["| code | construct | why it is refused |", "| --- | --- | --- |"]
    for code, (title, why) in sorted(CODES.items()):
        lines.append(f"| [{code}](limitations.md#{code}) | {title} | {why} |")
    return "\n".join(lines)


def make_figures(folder: Path) -> list[Path]:
    """Run the worked model's example; the figure files it wrote."""
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "fit_ode.py"), "--figures", str(folder)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return [folder / name for name in FIGURES]


def on_files(files, config):
    from mkdocs.structure.files import File

    for path in make_figures(Path(_figure_dir.name)):
        files.append(File.generated(config, f"figures/{path.name}", abs_src_path=str(path)))
    return files


BEFORE_AFTER = re.compile(r"^```python (before|after)[ \t]*$", re.MULTILINE)
TITLES = {"before": "refused", "after": "the rewrite: passes the check"}


def titled_fences(markdown: str) -> str:
    """```` ```python before ```` -> ```` ```python title="refused" ````, and after alike."""
    return BEFORE_AFTER.sub(lambda m: f'```python title="{TITLES[m.group(1)]}"', markdown)


def code_headings(markdown: str) -> str:
    """Move each ``<a id="PBnnn">`` onto the heading below it, as an attr_list id."""
    return CODE_SECTION.sub(r"\2\n\n\3 { #\1 }", markdown)


def on_page_markdown(markdown, page, config, files):
    if CODES_MARKER in markdown:
        markdown = markdown.replace(CODES_MARKER, codes_table())
    return titled_fences(code_headings(markdown))
