"""The measured comparison table in README.md and docs/comparison.md is the one that
``benchmarks/readme_table.py`` writes from the saved run, so it cannot be edited by hand
into something no run measured. Nothing here runs a benchmark."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "readme_table", ROOT / "benchmarks/readme_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


table = _load_script()
SAVED = json.loads(table.SAVED.read_text(encoding="utf-8"))


def _block(path):
    text = path.read_text(encoding="utf-8")
    start, end = table.generated_block(text, path.name)
    return text[start:end]


@pytest.mark.parametrize("path", table.DOCUMENTS, ids=lambda p: p.name)
def test_the_document_holds_the_table_of_the_saved_run(path):
    block = _block(path)
    assert block == table.render(SAVED), (
        f"{path.name}'s benchmark table is not what the saved run gives: run "
        "`python benchmarks/readme_table.py --saved` (or without --saved to measure again)"
    )


@pytest.mark.parametrize("path", table.DOCUMENTS, ids=lambda p: p.name)
def test_the_table_has_the_columns_and_a_row_per_workload(path):
    lines = _block(path).splitlines()
    header, rule, *rest = lines[1:]
    rows = [line for line in rest if line.startswith("| ")]
    assert header == "| " + " | ".join(table.COLUMNS) + " |"
    assert rule.count("|") == len(table.COLUMNS) + 1
    measured = [w["name"] for w in SAVED["workloads"]] + [SAVED["first_call"]["name"]]
    assert len(rows) == len(measured)
    assert set(measured) <= set(table.ORDER), "a measured workload has no title in TITLES"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == len(table.COLUMNS), row
        assert cells[1].endswith("x"), f"pullback's ratio is missing: {row}"
        assert cells[-1].endswith(" ms") or cells[-1].endswith(" s"), row


def test_the_saved_run_is_a_full_run_with_every_peer_and_no_failure():
    meta = SAVED["meta"]
    assert meta["quick"] is False and meta["config"]["slow"] is True
    assert set(meta["peers"]) == {"autograd", "jax", "torch"}
    assert all("not installed" not in desc for desc in meta["peers"].values())
    assert all(w["status"] == "ok" for w in SAVED["workloads"])
    assert SAVED["first_call"]["status"] == "ok"


def test_rewrite_replaces_only_the_block_and_asks_for_missing_markers():
    text = f"before\n{table.BEGIN}\nold table\n{table.END}\nafter\n"
    assert table.rewrite(text, "NEW") == "before\nNEW\nafter\n"
    with pytest.raises(ValueError, match="exactly one generated table"):
        table.rewrite("no markers here\n", "NEW", "README.md")
    with pytest.raises(ValueError, match="exactly one generated table"):
        table.rewrite(text + text, "NEW", "README.md")


def test_cells_of_a_missing_or_failed_peer_say_so():
    primal = {"best_s": 1e-3}
    record = {
        "name": "mse_loop_30",
        "status": "ok",
        "primal": primal,
        "pullback": {"best_s": 3e-3},
        "pullback_first_call_s": [0.02, 0.04, 0.03],
        "peers": {
            "autograd": {"status": "not installed"},
            "jax eager": {"status": "skipped (see --slow)"},
            "jax jit": {"status": "ok", "best_s": 5e-5, "first_call_s": 2.5},
            "torch": {"status": "WRONG"},
        },
    }
    assert table.cells(record) == [
        "MSE as a Python loop, 30 elements",
        "3.0x",
        "not installed",
        "skipped",
        "0.05x",
        "2.5 s",
        "WRONG",
        "30 ms",
    ]
    failed = {"name": "sum3", "status": "FAILED", "peers": {}}
    assert table.cells(failed)[1:3] == ["FAILED", "–"]


@pytest.mark.parametrize("path", table.TARGETS_DOCUMENTS, ids=lambda p: p.name)
def test_the_document_holds_the_targets_of_the_saved_run(path):
    text = path.read_text(encoding="utf-8")
    start, end = table.generated_block(text, path.name, table.TARGETS_BEGIN, table.TARGETS_END)
    assert text[start:end] == table.render_targets(SAVED), (
        f"{path.name}'s targets table is not what the saved run gives: run "
        "`python benchmarks/readme_table.py --saved`"
    )
