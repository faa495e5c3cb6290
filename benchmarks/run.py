"""Run the pullback benchmark suite: ``python benchmarks/run.py [--quick] [--only NAME]
[--json out.json]``. See benchmarks/README.md for what each column means."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path


def _pin_threads(argv):
    """Fix the thread count of every BLAS/OpenMP/XLA pool before NumPy, JAX or PyTorch load.

    Multi-threaded BLAS on a small or shared machine turns a 100 us matmul into 30 ms
    whenever another process holds a core, which makes ratios meaningless; one thread
    (the default) measures the AD overhead reproducibly. ``--threads N`` changes it.
    """
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=1)
    threads = max(1, pre.parse_known_args(argv)[0].threads)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        extra = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = f"{flags} {extra}".strip()
    os.environ["PULLBACK_BENCH_THREADS"] = str(threads)
    return threads


THREADS = _pin_threads(sys.argv[1:])

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # allow `python -m` or importing from elsewhere
    sys.path.insert(0, str(HERE))

from harness import (  # noqa: E402
    call_once,
    directional_fd_error,
    first_calls,
    measure,
    measure_together,
    median,
    relative_error,
)
from peers import detect_peers  # noqa: E402
from workloads import WORKLOADS  # noqa: E402
from workloads import first_call as first_call_workload  # noqa: E402

try:
    import pullback
    from pullback import grad
except ImportError:  # running from a checkout that is not installed
    sys.path.insert(0, str(HERE.parent / "src"))
    import pullback
    from pullback import grad

GRAD_RTOL = 1e-8  # pullback / peers vs the hand-written gradient
FD_RTOL = 1e-5  # hand-written gradient vs central finite differences
FIRST_CALL_TARGET_S = 0.030
FIRST_CALL_NAME = "first_call"
TARGETS_NAME = "targets"  # the issue-13 targets of targets.py (overhead, memory, Hessians...)


@dataclass(frozen=True)
class Config:
    quick: bool
    slow: bool  # also run the JAX cases that take tens of seconds
    target_s: float  # each timed loop runs at least this long
    repeats: int
    budget_s: float  # stop repeating (after 3 loops) once one measurement took this long
    fresh_copies: int  # fresh function objects for the first-call time

    @classmethod
    def make(cls, quick, slow=False):
        # Many short loops rather than a few long ones: on a shared machine the minimum
        # of 60 loops of 2 ms is a loop no other process interrupted far more often than
        # that of 5 loops of 0.1 s (every time of the run is measured this one way).
        if quick:
            return cls(True, slow, target_s=0.002, repeats=10, budget_s=0.1, fresh_copies=3)
        return cls(False, slow, target_s=0.002, repeats=60, budget_s=1.0, fresh_copies=7)


def _error_text(exc):
    return f"{type(exc).__name__}: {exc}"


def _loud(message):
    bar = "!" * 78
    print(f"\n{bar}\n{message}\n{bar}\n", file=sys.stderr, flush=True)


def _log(message):
    print(message, file=sys.stderr, flush=True)


# -- one workload -------------------------------------------------------------------------


def run_workload(wl, cfg, peers, missing):
    args = wl.make_args()
    res = {
        "name": wl.name,
        "title": wl.title,
        "target": wl.target,
        "status": "ok",
        "error": None,
        "peers": {},
    }
    _log(f"[{wl.name}] {wl.title}")

    # 1. the hand-written gradient must match finite differences (else the suite is wrong)
    hand = wl.hand(*args)
    res["hand_fd_rel_err"] = fd_err = directional_fd_error(wl.fn, args, wl.wrt, hand)
    if not fd_err <= FD_RTOL:
        res["status"] = "HAND-WRONG"
        res["error"] = f"hand-written gradient disagrees with finite differences: {fd_err:.2e}"
        _loud(f"BENCHMARK BUG in workload {wl.name}: {res['error']}; workload aborted.")
        return res

    # 2. pullback's gradient must match the hand-written one
    try:
        g = grad(wl.fn, wrt=wl.wrt)
        got, res["pullback_first_call_canonical_s"] = call_once(g, args)
        res["pullback_rel_err"] = err = relative_error(got, hand)
        if not err <= GRAD_RTOL:
            raise AssertionError(
                f"gradient disagrees with the hand-written one: relative error {err:.3e} "
                f"> {GRAD_RTOL:g}"
            )
    except Exception as exc:
        res["status"] = "FAILED"
        res["error"] = _error_text(exc)
        res["traceback"] = traceback.format_exc()
        res["detail"] = traceback.format_exc(limit=-2)
        _loud(
            f"pullback FAILED on workload {wl.name} ({wl.title}):\n{res['traceback']}"
            "pullback is not timed on this workload."
        )

    # 3. timings
    def timed(fn, a):
        return measure(fn, a, target=cfg.target_s, repeats=cfg.repeats, budget=cfg.budget_s)

    # The primal, the hand-written gradient and pullback's take turns (measure_together):
    # their ratios come from the same span of time on a shared machine.
    together = {"primal": (wl.fn, args), "hand": (wl.hand, args)}
    if res["status"] == "ok":
        together["pullback"] = (g, args)
    timings = measure_together(
        together, target=cfg.target_s, repeats=cfg.repeats, budget=cfg.budget_s
    )
    for name, timing in timings.items():
        res[name] = timing.as_dict()
    if res["status"] == "ok":
        samples = first_calls(lambda f: grad(f, wrt=wl.wrt), wl.fn, args, cfg.fresh_copies)
        res["pullback_first_call_s"] = samples

    # 4. peers
    for name, reason in missing.items():
        res["peers"][name] = {"status": reason}
    for peer in peers:
        res["peers"].update(run_peer(peer, wl, args, hand, cfg, timed))
    return res


def run_peer(peer, wl, args, hand, cfg, timed):
    out = {}
    if wl.peer is None:  # no version for the peers (objects of the user's classes): "–"
        return out
    skip = {}
    if peer.name == "jax":
        if wl.jax_takes_minutes:
            skip = {label: "skipped (takes minutes)" for label in peer.labels}
        elif cfg.quick and (wl.slow_jax or wl.slow_jax_eager):
            skip = {label: "skipped (--quick)" for label in peer.labels}
        else:
            if wl.slow_jax_eager and not cfg.slow:
                skip["jax eager"] = "skipped (see --slow)"
            if wl.slow_jax_jit and not cfg.slow:
                skip["jax jit"] = "skipped (see --slow)"
    if len(skip) == len(peer.labels):
        return {label: {"status": reason} for label, reason in skip.items()}
    try:
        variants = peer.variants(wl, args)
    except Exception as exc:
        return {label: {"status": "FAILED", "error": _error_text(exc)} for label in peer.labels}
    for v in variants:
        if v.label in skip:
            out[v.label] = {"status": skip[v.label]}
            continue
        entry = out[v.label] = {"status": "ok"}
        try:
            got, entry["first_call_s"] = call_once(v.grad, v.args)
            entry["rel_err"] = err = relative_error(v.leaves(got), hand)
            if not err <= GRAD_RTOL:
                entry["status"] = "WRONG"
                entry["error"] = f"relative error {err:.3e} vs the hand-written gradient"
                continue
            entry.update(timed(v.grad, v.args).as_dict())
        except Exception as exc:
            entry["status"] = "FAILED"
            entry["error"] = _error_text(exc)
    return out


def run_first_call_target(cfg):
    """The ~20-line function: first-call time (the target) and a finite-difference check."""
    fn, args = first_call_workload.robust_fit, first_call_workload.make_args()
    res = {"name": FIRST_CALL_NAME, "lines": first_call_workload.SOURCE_LINES, "status": "ok"}
    _log(f"[{FIRST_CALL_NAME}] {first_call_workload.SOURCE_LINES}-line function, first call")
    try:
        samples = first_calls(grad, fn, args, max(cfg.fresh_copies, 5))
        g = grad(fn)
        got = g(*args)
        res["fd_rel_err"] = fd_err = directional_fd_error(fn, args, 0, got)
        if not fd_err <= FD_RTOL:
            raise AssertionError(f"gradient disagrees with finite differences: {fd_err:.2e}")
        res["pullback_first_call_s"] = samples
        timing = {"target": cfg.target_s, "repeats": cfg.repeats, "budget": cfg.budget_s}
        res["pullback"] = measure(g, args, **timing).as_dict()
        res["primal"] = measure(fn, args, **timing).as_dict()
    except Exception as exc:
        res["status"] = "FAILED"
        res["error"] = _error_text(exc)
        res["traceback"] = traceback.format_exc()
        res["detail"] = traceback.format_exc(limit=-2)
        _loud(f"pullback FAILED on the first-call function robust_fit:\n{res['traceback']}")
    return res


# -- report -------------------------------------------------------------------------------


def fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_ratio(x):
    if x is None:
        return "-"
    return f"{x:.2f}x" if x < 100 else f"{x:.0f}x"


def table(headers, rows):
    """A Markdown table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells):
        parts = [f"{cells[0]!s:<{widths[0]}}"]
        parts += [f"{c!s:>{w}}" for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "-" * (widths[0] + 2) + "".join(f"|{'-' * (w + 1)}:" for w in widths[1:]) + "|"
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def _best(entry):
    return entry["best_s"] if entry else None


def _verdict(value, target):
    if target is None or value is None:
        return "-"
    return "PASS" if value <= target else "MISS"


def _short(text, n=60):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def report(meta, results, first, peer_labels, targets=None):
    print(f"\npullback benchmarks ({'quick' if meta['quick'] else 'full'} run)")
    print(
        f"pullback {meta['pullback']} @ {meta['commit']}, Python {meta['python']}, "
        f"NumPy {meta['numpy']}, {meta['machine']}, {meta['cpus']} CPUs"
    )
    print(
        f"threads per library: {meta['threads']} (--threads); "
        f"load average at start: {meta['load_at_start']}"
    )
    for name, desc in meta["peers"].items():
        print(f"  peer {name}: {desc}")
    print(
        "Times: minimum over repeats of timeit loops; ratios are to the NumPy primal; "
        "'hand' is a NumPy gradient written by hand."
    )
    failures = []

    rows = []
    for r in results:
        primal = _best(r.get("primal"))
        hand = _best(r.get("hand"))
        pb = _best(r.get("pullback"))
        ratio = pb / primal if pb and primal else None
        target = f"<= {r['target']:g}x" if r["target"] is not None else "-"
        if r["status"] != "ok":
            cell = f"{r['status']}: {_short(r['error'], 40)}"
            rows.append(
                [
                    r["name"],
                    fmt_time(primal),
                    fmt_ratio(hand and hand / primal),
                    cell,
                    "-",
                    "-",
                    target,
                    r["status"],
                ]
            )
            who = "benchmark bug" if r["status"] == "HAND-WRONG" else "pullback"
            failures.append((r["name"], who, r.get("detail") or r["error"]))
            continue
        rows.append(
            [
                r["name"],
                fmt_time(primal),
                fmt_ratio(hand / primal),
                fmt_ratio(ratio),
                fmt_time(pb),
                fmt_ratio(pb / hand),
                target,
                _verdict(ratio, r["target"]),
            ]
        )
    print("\nGradient cost (warm) relative to the primal")
    print(
        table(
            [
                "workload",
                "primal",
                "hand",
                "pullback",
                "pullback time",
                "pullback/hand",
                "target",
                "result",
            ],
            rows,
        )
    )

    rows = []
    for r in results:
        primal = _best(r.get("primal"))
        pb = _best(r.get("pullback"))
        row = [r["name"], fmt_ratio(pb / primal) if pb else r["status"]]
        for label in peer_labels:
            entry = r["peers"].get(label) or r["peers"].get(label.split()[0]) or {}
            status = entry.get("status", "-")
            if status == "ok":
                row.append(fmt_ratio(entry["best_s"] / primal))
            else:
                row.append(status)
                if status in ("FAILED", "WRONG"):
                    failures.append((r["name"], label, entry.get("error", "")))
        rows.append(row)
    print("\nGradient time / primal time, all tools (warm; jit excludes compile)")
    print(table(["workload", "pullback", *peer_labels], rows))

    rows = []
    for r in results:
        samples = r.get("pullback_first_call_s")
        jit = r["peers"].get("jax jit", {})
        jit_first = jit.get("first_call_s") if jit.get("status") == "ok" else None
        rows.append(
            [
                r["name"],
                fmt_time(median(samples)),
                fmt_time(_best(r.get("pullback"))),
                fmt_time(jit_first) if jit_first else jit.get("status", "-"),
                "-",
                "-",
            ]
        )
    if first is not None:
        samples = first.get("pullback_first_call_s")
        med = median(samples)
        label = f"{FIRST_CALL_NAME} ({first['lines']}-line fn)"
        if first["status"] != "ok":
            failures.append((FIRST_CALL_NAME, "pullback", first.get("detail") or first["error"]))
            rows.append(
                [
                    label,
                    f"FAILED: {_short(first['error'], 40)}",
                    "-",
                    "-",
                    f"< {FIRST_CALL_TARGET_S * 1e3:g} ms",
                    "FAILED",
                ]
            )
        else:
            rows.append(
                [
                    label,
                    fmt_time(med),
                    fmt_time(_best(first["pullback"])),
                    "-",
                    f"< {FIRST_CALL_TARGET_S * 1e3:g} ms",
                    "PASS" if med < FIRST_CALL_TARGET_S else "MISS",
                ]
            )
    print(
        "\nFirst call: transform + compile + one gradient run (pullback: median over fresh "
        "function objects; jax jit: trace + XLA compile + run, once)"
    )
    print(
        table(
            [
                "workload",
                "pullback 1st call",
                "pullback warm",
                "jax jit 1st call",
                "target",
                "result",
            ],
            rows,
        )
    )

    if targets is not None:
        from targets import render

        print("\nIssue 13 targets (garbage collector on, ratios from this run)")
        print(render(targets, table))

    if failures:
        print("\nFAILURES")
        for name, who, text in failures:
            print(f"- {name} [{who}]:")
            for line in str(text).rstrip().splitlines():
                print(f"    {line}")
    print(f"\ntotal wall time {meta['wall_s']:.1f} s")


def _commit():
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or "?"
    except Exception:
        return "?"


def select(only):
    names = [wl.name for wl in WORKLOADS] + [FIRST_CALL_NAME, TARGETS_NAME]
    if not only:
        return list(WORKLOADS), True, True
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    unknown = [w for w in wanted if not any(n == w or n.startswith(w) for n in names)]
    if unknown:
        raise SystemExit(
            f"--only: unknown workload {', '.join(unknown)}; known: {', '.join(names)}"
        )
    chosen = [wl for wl in WORKLOADS if any(wl.name.startswith(w) for w in wanted)]
    return (
        chosen,
        any(FIRST_CALL_NAME.startswith(w) for w in wanted),
        any(TARGETS_NAME.startswith(w) for w in wanted),
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: short loops, fewer repeats, skip slow JAX cases",
    )
    parser.add_argument(
        "--only", metavar="NAME", help="comma-separated workload names or prefixes (see --list)"
    )
    parser.add_argument(
        "--slow",
        action="store_true",
        help="also run eager jax.grad on mse_loop_1000 (its first call takes 30-100 s)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for BLAS, OpenMP, XLA and PyTorch (default 1: reproducible ratios)",
    )
    opts = parser.parse_args(argv)
    if opts.list:
        for wl in WORKLOADS:
            print(f"{wl.name:18} {wl.title}")
        print(f"{TARGETS_NAME:18} the issue-13 targets of targets.py")
        print(
            f"{FIRST_CALL_NAME:18} first-call time of a "
            f"{first_call_workload.SOURCE_LINES}-line function"
        )
        return 0
    chosen, with_first, with_targets = select(opts.only)
    cfg = Config.make(opts.quick, opts.slow)
    start = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None

    peers, missing = detect_peers()
    peer_desc = {p.name: f"{p.version}" + (f" ({p.note})" if p.note else "") for p in peers}
    peer_desc.update(missing)
    peer_labels = [label for p in peers for label in p.labels] + sorted(missing)

    results = []
    for wl in chosen:
        t0 = time.perf_counter()
        results.append(run_workload(wl, cfg, peers, missing))
        results[-1]["wall_s"] = time.perf_counter() - t0
        _log(f"    done in {results[-1]['wall_s']:.1f} s")
    first = run_first_call_target(cfg) if with_first else None
    targets = None
    if with_targets:
        from targets import run_targets  # imports pullback: after the fallback above

        targets = run_targets(cfg, log=_log)

    meta = {
        "quick": cfg.quick,
        "pullback": getattr(pullback, "__version__", "?"),
        "commit": _commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "threads": THREADS,
        "load_at_start": "?" if load is None else f"{load:.2f}",
        "peers": peer_desc,
        "config": cfg.__dict__,
        "wall_s": time.perf_counter() - start,
    }
    sys.stderr.flush()
    report(meta, results, first, peer_labels, targets)
    if opts.json:
        with open(opts.json, "w") as fh:
            rows = [r.__dict__ for r in targets or []]
            json.dump(
                {"meta": meta, "workloads": results, "first_call": first, "targets": rows},
                fh,
                indent=2,
            )
        print(f"results written to {opts.json}")
    failed = [r for r in results if r["status"] != "ok"]
    if first is not None and first["status"] != "ok":
        failed.append(first)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
