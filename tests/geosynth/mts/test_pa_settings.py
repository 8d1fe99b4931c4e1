"""PA records in both diagram settings: ``image`` (unchanged) and ``clauses`` (text-only models), and MTS runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import geotrain
from geosynth.mts import (
    CLAUSE_INSTRUCTIONS,
    DIAGRAM_SETTINGS,
    PA_INSTRUCTIONS,
    PERCEPTION_HEADER,
    REASONING_HEADER,
    TRACE_TYPES,
    DiagramSetting,
    LLMConfig,
    MTSConfig,
    SourceProblem,
    Trace,
    TraceType,
    load_dataset,
    pa_prompt,
    pa_record,
    run_mts,
)

MINI = Path(__file__).parent / "data" / "mini_pgps.json"
THREE = ("prob_13", "prob_27", "prob_159")
TEMPLATE = LLMConfig.model_validate({"backend": "template"})
TEXT = "In \\triangle QRS, T, U, and B are midpoints. What is the length of UB?"
CLAUSES = ("line Q U R", "line R B S", "line Q T S", "line U B", "line T B", "line U T", "BT = 30", "RS = 40",
           "SQ = 50")  # fmt: skip
BLOCK = "Diagram relations:\nline Q U R\nline R B S\nline Q T S\nline U B\nline T B\nline U T\nBT = 30\nRS = 40\nSQ = 50\n\n"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def prob_13() -> SourceProblem:
    (problem,) = [p for p in load_dataset(MINI).problems if p.id == "prob_13"]
    return problem


def _trace(trace_type: TraceType, text: str) -> Trace:
    return Trace.model_validate({"problem_id": "prob_13", "trace_type": trace_type, "text": text})


def test_the_image_setting_is_the_record_it_always_was(prob_13: SourceProblem) -> None:
    record = pa_record(prob_13, _trace("program", "Multiple V0 C2 30 Get V0\n"))
    target = BLOCK + "Solution:\nMultiple V0 C2 30 Get V0"
    assert record == {
        "id": "prob_13:program",
        "problem_id": "prob_13",
        "trace_type": "program",
        "images": ["images/img_3909.png"],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image", "text": None},
                    {
                        "type": "text",
                        "text": TEXT + "\nStart by writing down the relations you read in the diagram. "
                        "Then give a symbolic solution program that computes the answer.",
                    },
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": target}]},
        ],
        "perception_span": [0, len(BLOCK)],
        "reasoning_span": [len(BLOCK), len(target)],
        "answer": "25.000",
    }
    assert record == pa_record(prob_13, _trace("program", "Multiple V0 C2 30 Get V0\n"), "image")


@pytest.mark.parametrize("trace_type", TRACE_TYPES)
def test_the_clauses_setting_states_the_clauses_before_the_question(
    prob_13: SourceProblem, trace_type: TraceType
) -> None:
    trace = _trace(trace_type, "Sum 1 2\nGet V0\n\n")
    record = pa_record(prob_13, trace, "clauses")
    assert record["images"] == [] and record["id"] == f"prob_13:{trace_type}"
    user, assistant = record["messages"]
    assert [p["type"] for p in user["content"]] == ["text"]  # no image placeholder
    prompt = user["content"][0]["text"]
    assert prompt == f"{BLOCK}{TEXT}\n{CLAUSE_INSTRUCTIONS[trace_type]}"
    assert prompt.startswith(PERCEPTION_HEADER + "\nline Q U R\n") and prompt.endswith(
        CLAUSE_INSTRUCTIONS[trace_type]
    )
    assert "relations you read in the diagram" not in prompt  # the clauses are given, not asked for
    target = assistant["content"][0]["text"]
    assert target == "Solution:\nSum 1 2\nGet V0" and target.startswith(REASONING_HEADER + "\n")
    assert record["perception_span"] == [0, 0] and record["reasoning_span"] == [0, len(target)]
    parsed = geotrain.PARecord.model_validate_json(json.dumps(record))  # what geotrain reads from disk
    assert parsed.target == target and parsed.images == ()


@pytest.mark.parametrize("setting", DIAGRAM_SETTINGS)
def test_both_settings_give_records_geotrain_reads_with_spans_covering_the_target(
    prob_13: SourceProblem, setting: DiagramSetting
) -> None:
    record = pa_record(prob_13, _trace("pal", "x = 1\nprint(x)"), setting)
    parsed = geotrain.PARecord.model_validate_json(json.dumps(record))
    (p0, p1), (r0, r1) = parsed.perception_span, parsed.reasoning_span
    assert p0 == 0 and p1 == r0 and r1 == len(parsed.target)
    assert parsed.target[r0:].startswith(REASONING_HEADER)
    assert parsed.target[:p1] == ("" if setting == "clauses" else BLOCK)


def test_the_prompt_without_a_trace_type_is_the_bare_question() -> None:
    assert pa_prompt(TEXT, CLAUSES, None) == TEXT
    assert pa_prompt(TEXT, CLAUSES, None, "image") == TEXT
    assert pa_prompt(TEXT, CLAUSES, None, "clauses") == BLOCK + TEXT
    assert pa_prompt(TEXT, (), None, "clauses") == "Diagram relations:\n\n" + TEXT


def test_each_setting_has_its_own_instruction_per_trace_type() -> None:
    for trace_type in TRACE_TYPES:
        image = pa_prompt(TEXT, CLAUSES, trace_type)
        clauses = pa_prompt(TEXT, CLAUSES, trace_type, "clauses")
        assert image == f"{TEXT}\n{PA_INSTRUCTIONS[trace_type]}"
        assert clauses == f"{BLOCK}{TEXT}\n{CLAUSE_INSTRUCTIONS[trace_type]}"
    assert len(set(CLAUSE_INSTRUCTIONS.values())) == len(TRACE_TYPES)


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 3-problem PGPS file and a diagram folder holding prob_13's image."""
    image = pytest.importorskip("PIL.Image")
    folder = tmp_path_factory.mktemp("three")
    records = json.loads(MINI.read_text(encoding="utf-8"))
    path = folder / "three.json"
    path.write_text(json.dumps({k: records[k] for k in THREE}), encoding="utf-8")
    images = folder / "images"
    images.mkdir()
    image.new("RGB", (8, 8), "white").save(images / "img_3909.png")
    return path, images


def _run(three: tuple[Path, Path], out: Path, setting: DiagramSetting) -> None:
    path, images = three
    config = MTSConfig.model_validate(
        {"jobs": 1, "llm": TEMPLATE, "images_dir": images, "setting": setting}, strict=False
    )
    run = run_mts(path, out, config)
    assert not run.cot_skipped and run.stats.records == 3


def test_an_mts_run_in_the_clauses_setting_writes_clause_records_and_copies_no_image(
    three: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _run(three, out, "clauses")
    seen: set[str] = set()
    for trace_type in TRACE_TYPES:
        for record in _rows(out / "pa" / f"{trace_type}.jsonl"):
            seen.add(trace_type)
            assert record["problem_id"] in THREE and record["images"] == []
            user, assistant = record["messages"]
            prompt = user["content"][-1]["text"]
            assert [p["type"] for p in user["content"]] == ["text"]
            assert prompt.startswith(PERCEPTION_HEADER + "\n") and prompt.endswith(
                CLAUSE_INSTRUCTIONS[trace_type]
            )
            assert assistant["content"][0]["text"].startswith(REASONING_HEADER + "\n")
            assert record["perception_span"] == [0, 0]
            geotrain.PARecord.model_validate_json(json.dumps(record))
    assert seen == set(TRACE_TYPES)  # the template teacher wrote CoT traces too
    mixture = _rows(out / "mixtures" / "mts_all.jsonl")  # what the train stage reads
    assert mixture and all(r["images"] == [] for r in mixture)
    assert not (out / "pa" / "images").exists()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["images"] == {"copied": 0, "missing": []}
    assert manifest["config"]["setting"] == "clauses"


def test_the_same_files_in_the_image_setting_copy_the_diagram_and_perceive_the_clauses(
    three: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _run(three, out, "image")
    programs = {r["problem_id"]: r for r in _rows(out / "pa" / "program.jsonl")}
    assert programs["prob_13"]["images"] == ["images/img_3909.png"]
    assert (out / "pa" / "images" / "img_3909.png").is_file()
    assert programs["prob_13"]["perception_span"][1] > 0
    # Rerun in the same folder with the other setting: every record is rewritten in that setting.
    _run(three, out, "clauses")
    for trace_type in TRACE_TYPES:
        for record in _rows(out / "pa" / f"{trace_type}.jsonl"):
            assert record["images"] == [] and record["perception_span"] == [0, 0]
