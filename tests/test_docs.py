"""The code on docs/api.md runs: its python blocks, in order, as one module."""

import re
import runpy
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_api_reference_examples_run(tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.M | re.S)
    assert len(blocks) >= 10
    module = tmp_path / "api_examples.py"
    module.write_text("\n\n".join(blocks))  # pullback reads the functions' source
    runpy.run_path(str(module), run_name="api_examples")
