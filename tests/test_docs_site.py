"""The documentation site's build steps (docs/hooks.py) and its table of contents."""

import importlib.util
import re
from pathlib import Path

import pytest

from pullback.check.codes import CODES

ROOT = Path(__file__).resolve().parents[1]


def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_codes_table_is_rendered_from_the_checkers_codes():
    hooks = load_hooks()
    page = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert hooks.CODES_MARKER in page
    rendered = hooks.on_page_markdown(page, None, None, None)
    assert hooks.CODES_MARKER not in rendered
    for code, (title, why) in CODES.items():
        assert f"| [{code}](limitations.md#{code}) | {title} | {why} |" in rendered


def test_every_code_has_its_rewrite_section_in_limitations():
    text = (ROOT / "docs" / "limitations.md").read_text(encoding="utf-8")
    for code in CODES:
        assert f'<a id="{code}"></a>' in text, code


def test_the_navigation_names_every_page_and_only_existing_ones():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert listed == pages


def test_the_worked_model_figures_are_made_by_the_example(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("scipy")
    made = load_hooks().make_figures(tmp_path)
    assert [p.name for p in made] == ["ode_fit.png", "ode_loss.png"]
    for path in made:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_limitations_page_gives_each_heading_its_code_and_every_fence_a_language():
    """SuperFences takes ```` ```python before ```` for no fence at all (the rest of the
    page became one paragraph), and MkDocs cannot see raw ``<a id>`` anchors: the hook
    rewrites both, so every ``limitations.md#PB101`` link is checked by --strict."""
    hooks = load_hooks()
    page = (ROOT / "docs" / "limitations.md").read_text(encoding="utf-8")
    rendered = hooks.on_page_markdown(page, None, None, None)
    fences = re.findall(r"^```(.*)$", rendered, re.M)
    assert set(fences) <= {
        "",
        "python",
        "text",
        "console",
        "bash",
        *(f'python title="{title}"' for title in hooks.TITLES.values()),
    }
    assert fences.count('python title="refused"') == page.count("```python before") > 0
    for code in CODES:
        if f'<a id="{code}"></a>' in page:  # PB203 is reserved: it has no section
            assert re.search(rf"^## {code} .* \{{ #{code} \}}$", rendered, re.M), code
            assert f'<a id="{code}"></a>' not in rendered  # one element per id
