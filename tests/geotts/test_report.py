"""Reports render from the recorded pools committed in tests/geotts/data."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

import geotts
from geotts.report import RecordedPool, evaluate, is_correct, load_pools, write_report

DATA = Path(__file__).parent / "data"


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_recorded_pools_load() -> None:
    pools = load_pools(DATA / "pools.jsonl")
    assert len(pools) == 60
    assert all(len(p.traces) == 4 and all(len(a) == 10 for a in p.traces.values()) for p in pools)
    assert all(p.unified is not None and len(p.unified) == 40 for p in pools)


def test_evaluation_numbers_agree_with_the_functional_api() -> None:
    pools = load_pools(DATA / "pools.jsonl")
    ev = evaluate(pools, depths=[1, 5, 10])
    cg10 = [geotts.cg_mte(p.traces, depth=10) for p in pools]
    point = next(c for c in ev.curves if c.strategy == "cg_mte" and c.budget == 40)
    assert point.asn == pytest.approx(sum(d.samples for d in cg10) / 60)
    assert point.accuracy == pytest.approx(
        sum(is_correct(d.answer, p.gold) for d, p in zip(cg10, pools, strict=True)) / 60
    )
    assert sum(ev.termination.values()) + ev.fallbacks == 60
    assert {c.strategy for c in ev.baselines} == {"cg_mte", "sc_beam", "adaptive_rank", "adaptive_pattern"}
    assert all(c.asn == 4 * c.budget // 4 for c in ev.curves if c.strategy in {"mte", "sc_beam"})
    # CG-MTE never spends more than standard MTE at the same budget.
    for c in ev.curves:
        if c.strategy == "cg_mte":
            assert c.asn <= next(m.asn for m in ev.curves if m.strategy == "mte" and m.budget == c.budget)
    assert all(abs(sum(s.values()) - 1) < 1e-9 for s in ev.trace_shares.values())


def test_error_coupling_counts_same_wrong_answers() -> None:
    pools = [
        RecordedPool(
            id="a",
            gold=1.0,
            traces={"program": (2.0,), "pal": (2.0,), "cot_program": (2.0,), "cot_pal": (2.0,)},
        ),
        RecordedPool(
            id="b",
            gold=1.0,
            traces={"program": (1.0,), "pal": (3.0,), "cot_program": (3.0,), "cot_pal": (None,)},
        ),
    ]
    c = evaluate(pools).coupling
    # Pairs with both wrong: a has 6 (all same), b has 3 (pal/cot_program same; pairs with None never same).
    assert c.pairwise_same_wrong == pytest.approx(7 / 9)
    assert (c.at_least_3_same_wrong, c.all_same_wrong) == (0.5, 0.5)


def test_report_writes_tables_and_png_figures(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    files = write_report(evaluate(load_pools(DATA / "pools.jsonl")), tmp_path / "report")
    names = {f.name for f in files}
    assert names >= {
        "report.md",
        "summary.json",
        "accuracy_vs_samples.png",
        "termination_depth.png",
        "accuracy_by_depth.png",
        "unique_answers.png",
        "trace_shares.png",
    }
    for f in files:
        if f.suffix == ".png":
            w, h = _png_size(f)
            assert w > 300 and h > 200 and f.stat().st_size > 5000
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Pairwise same wrong".lower() in md.lower() and "| CG-MTE | 40 |" in md
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["problems"] == 60


def test_a_bad_pool_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "pools.jsonl"
    bad.write_text('{"id": "x", "traces": {"pal": [1, "seven"]}}\n')
    with pytest.raises(geotts.StrategyConfigError, match=r"pools.jsonl:1: invalid pool \(traces.pal.1"):
        load_pools(bad)


def test_the_committed_pools_are_what_the_generator_script_produces() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_pools", DATA / "make_pools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = "".join(json.dumps(r) + "\n" for r in module.make())
    assert (DATA / "pools.jsonl").read_text(encoding="utf-8") == expected
