"""The MTS pipeline without an LLM: program and PAL traces, drops, resume, repeatability, PA records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from geosynth.mts import (
    MIXTURE_NAMES,
    PERCEPTION_HEADER,
    REASONING_HEADER,
    MTSConfig,
    MTSInputError,
    compute_stats,
    run_mts,
)

GOOD = ["prob_13", "prob_27", "prob_159", "prob_494", "prob_738", "prob_1742"]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _digest(out: Path) -> dict[str, str]:
    """Hashes of every data file (timings.json holds wall-clock figures and is excluded by design)."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "timings.json"
    }


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mts") / "out"
    dataset = Path(__file__).parent / "data" / "mini_pgps.json"
    run = run_mts(dataset, out, MTSConfig(jobs=2, shard_size=3))
    assert run.cot_skipped
    return out


def test_every_good_program_gets_program_and_verified_pal_traces(finished: Path) -> None:
    programs = {r["problem_id"]: r for r in _rows(finished / "traces" / "program.jsonl")}
    pals = {r["problem_id"]: r for r in _rows(finished / "traces" / "pal.jsonl")}
    assert list(pals) == GOOD
    assert set(programs) == {*GOOD, "syn_contradiction", "syn_mismatch"}
    assert programs["prob_27"]["text"].startswith("Gsin ")
    assert "N0" not in programs["prob_27"]["text"]  # instantiated: values in place of N tokens
    assert pals["prob_13"]["answer"] == pytest.approx(25.0)
    assert " = Eq(" in pals["prob_13"]["text"] and pals["prob_13"]["text"].rstrip().endswith(':.3f}")')
    assert (finished / "traces" / "cot_pal.jsonl").read_text() == ""


def test_every_drop_is_recorded_with_a_reason_and_an_explanation(finished: Path) -> None:
    drops = {d["problem_id"]: d for d in _rows(finished / "drops.jsonl")}
    assert {k: d["reason"] for k, d in drops.items()} == {
        "syn_missing_field": "malformed_record",
        "syn_bad_answer": "malformed_record",
        "syn_bad_expression": "bad_program",
        "syn_unknown_operator": "bad_program",
        "syn_contradiction": "pal_translation",
        "syn_mismatch": "pal_mismatch",
    }
    assert "expression" in drops["syn_missing_field"]["detail"]
    assert "about twelve" in drops["syn_bad_answer"]["detail"]
    assert "N9" in drops["syn_bad_expression"]["detail"] or "index" in drops["syn_bad_expression"]["detail"]
    assert "Pythagoras" in drops["syn_unknown_operator"]["detail"]
    assert "geometrically contradictory" in drops["syn_contradiction"]["detail"]
    assert "NonRealError" in drops["syn_contradiction"]["detail"]
    assert "11.18" in drops["syn_mismatch"]["detail"] and "12" in drops["syn_mismatch"]["detail"]
    assert drops["syn_contradiction"]["lost"] == ["pal", "cot_pal"]


def test_statistics_count_the_outputs(finished: Path) -> None:
    stats = compute_stats(finished)
    assert stats == compute_stats(finished)
    assert (stats.records, stats.problems) == (12, 8)
    assert stats.traces == {"program": 8, "pal": 6, "cot_program": 0, "cot_pal": 0}
    assert (stats.mts, stats.mts_all, stats.pal_verified, stats.pal_failed) == (6, 14, 6, 2)
    assert stats.llm is None and stats.split == "unspecified"
    saved = json.loads((finished / "stats.json").read_text())
    assert saved == stats.model_dump(mode="json")
    manifest = json.loads((finished / "manifest.json").read_text())
    assert manifest["cot_traces"].startswith("skipped")


def test_pa_records_state_the_clauses_before_the_trace(finished: Path) -> None:
    records = {r["problem_id"]: r for r in _rows(finished / "pa" / "pal.jsonl")}
    rec = records["prob_13"]
    assert rec["images"] == ["images/img_3909.png"]
    user, assistant = rec["messages"]
    assert [p["type"] for p in user["content"]] == ["image", "text"]
    assert user["content"][1]["text"].startswith("In \\triangle QRS")
    target = assistant["content"][0]["text"]
    p0, p1 = rec["perception_span"]
    r0, r1 = rec["reasoning_span"]
    assert (p0, p1) == (0, r0) and r1 == len(target)
    perception, reasoning = target[p0:p1], target[r0:r1]
    assert perception.startswith(PERCEPTION_HEADER) and "BT = 30" in perception and "line Q U R" in perception
    assert reasoning.startswith(REASONING_HEADER) and "eq1 = Eq(" in reasoning
    programs = {r["problem_id"]: r for r in _rows(finished / "pa" / "program.jsonl")}
    assert programs["prob_13"]["messages"][0]["content"][1]["text"] != user["content"][1]["text"]


def test_mixtures_match_sizes_and_token_budgets(finished: Path) -> None:
    summary = json.loads((finished / "mixtures" / "summary.json").read_text())
    assert set(summary) == set(MIXTURE_NAMES)
    assert summary["mts_all"]["records"] == 14
    assert summary["program_size_matched"]["records"] == 14
    assert summary["single_pal"]["records"] == 6
    budget = summary["mts_all"]["tokens"]
    assert summary["wo_pal"]["tokens"] >= budget  # programs resampled up to the MTS-All budget
    assert summary["wo_pal"]["records"] > 8
    ids = [r["id"] for r in _rows(finished / "mixtures" / "program_size_matched.jsonl")]
    assert set(ids) == {f"{p}:program" for p in [*GOOD, "syn_contradiction", "syn_mismatch"]}


def test_runs_are_byte_for_byte_repeatable(finished: Path, tmp_path: Path, mini_dataset: Path) -> None:
    again = tmp_path / "again"
    run_mts(mini_dataset, again, MTSConfig(jobs=1, shard_size=3))
    assert _digest(again).keys() - {k for k in _digest(again) if k.startswith("work/")} == _digest(
        finished
    ).keys() - {k for k in _digest(finished) if k.startswith("work/")}
    assert _digest(again) == _digest(finished)


class _Interrupt(Exception):
    pass


def test_an_interrupted_run_resumes_without_redoing_work(tmp_path: Path, mini_dataset: Path) -> None:
    out = tmp_path / "out"
    seen: list[tuple[str, int]] = []

    def stop_after_second_verify(stage: str, index: int) -> None:
        seen.append((stage, index))
        if stage == "verify" and index == 1:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        run_mts(mini_dataset, out, MTSConfig(shard_size=3), after_shard=stop_after_second_verify)
    assert not (out / "manifest.json").exists()  # nothing half-published
    assert not list(out.rglob("*.tmp"))
    recomputed: list[tuple[str, int]] = []
    run = run_mts(
        mini_dataset, out, MTSConfig(shard_size=3), after_shard=lambda s, i: recomputed.append((s, i))
    )
    assert ("verify", 0) not in recomputed and ("verify", 1) not in recomputed
    assert ("verify", 2) in recomputed
    assert run.reused["verify"] == 2 and run.computed["verify"] == 1
    again = run_mts(mini_dataset, out, MTSConfig(shard_size=3))
    assert sum(again.computed.values()) == 0
    assert again.stats == run.stats


def test_changing_a_result_relevant_setting_recomputes_only_what_depends_on_it(
    tmp_path: Path, mini_dataset: Path
) -> None:
    out = tmp_path / "out"
    run_mts(mini_dataset, out, MTSConfig(shard_size=6, mixtures=False))
    run = run_mts(mini_dataset, out, MTSConfig(shard_size=6, mixtures=False, rel_tol=1e-2))
    assert run.reused["prepare"] == 2 and run.computed["verify"] == 2
    assert len(list((out / "work" / "verify").glob("*.jsonl"))) == 2  # stale shards pruned


def test_images_are_copied_next_to_the_records(tmp_path: Path, mini_dataset: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    images = tmp_path / "images"
    images.mkdir()
    image.new("RGB", (8, 8), "white").save(images / "img_3909.png")
    run = run_mts(mini_dataset, tmp_path / "out", MTSConfig(images_dir=images, mixtures=False))
    assert (tmp_path / "out" / "pa" / "images" / "img_3909.png").read_bytes() == (
        images / "img_3909.png"
    ).read_bytes()
    assert run.images_missing == 7  # the other diagrams are not in the folder, and the run says so
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["images"]["copied"] == 1 and "img_423.png" in manifest["images"]["missing"]


def test_pa_records_load_with_hugging_face_datasets(finished: Path) -> None:
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset("json", data_files=str(finished / "mixtures" / "mts_all.jsonl"), split="train")
    assert len(ds) == 14
    row = ds[0]
    assert row["messages"][0]["content"][0] == {"type": "image", "text": None}
    assert row["perception_span"][1] == row["reasoning_span"][0]


def test_jsonl_input_and_unreadable_files(tmp_path: Path, mini_dataset: Path) -> None:
    records = json.loads(mini_dataset.read_text())
    lines = tmp_path / "mini.jsonl"
    lines.write_text(
        "".join(json.dumps({"id": k, **v}) + "\n" for k, v in list(records.items())[:2]) + "{oops\n"
    )
    run = run_mts(lines, tmp_path / "out", MTSConfig(mixtures=False))
    assert run.stats.traces["pal"] == 2 and run.stats.drops == {"malformed_record": 1}
    with pytest.raises(MTSInputError, match="cannot read dataset"):
        run_mts(tmp_path / "absent.json", tmp_path / "o2")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    with pytest.raises(MTSInputError, match="invalid JSON"):
        run_mts(bad, tmp_path / "o3")
