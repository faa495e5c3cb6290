"""MkDocs hooks (``hooks:`` in mkdocs.yml): what the site computes while it is built.

* ``<!-- pullback:codes -->`` in a page becomes the table of every diagnostic code, rendered
  from :data:`pullback.check.codes.CODES` — the same titles and reasons the checker prints —
  so the documentation and the messages cannot disagree.
* The figures of the worked model are made by running ``examples/fit_ode.py --figures``
  into a temporary folder and added to the site as ``figures/*.png``; they are build
  outputs and never committed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODES_MARKER = "<!-- pullback:codes -->"
FIGURES = ("ode_fit.png", "ode_loss.png")
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


def on_page_markdown(markdown, page, config, files):
    if CODES_MARKER in markdown:
        markdown = markdown.replace(CODES_MARKER, codes_table())
    return markdown
