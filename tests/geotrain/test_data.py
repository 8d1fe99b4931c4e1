"""Records: PA records (MTS pipeline shape) and geoprm SFT records read into examples; mixtures; budgets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geotrain import DataError, DataSource, PARecord, load_examples
from geotrain._data import budget, mix


def _jsonl(tmp_path: Path, rows: list[object], name: str = "r.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pa_record_becomes_an_example_with_spans_and_resolved_images(
    tmp_path: Path, make_record: Callable[..., dict[str, Any]]
) -> None:
    path = _jsonl(tmp_path, [make_record(0)])
    (ex,) = load_examples([DataSource(path=str(path))], seed=0)
    assert ex.images == (str(tmp_path / "images" / "d0.png"),)
    perception = ex.target[: ex.target.index("Solution:")]
    assert perception.startswith("Diagram relations:") and ex.perception_span == (0, len(perception))
    assert ex.target[slice(*ex.reasoning_span)].startswith("Solution:")  # type: ignore[misc]
    assert [m.role for m in ex.messages] == ["user"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"perception_span": [0, 999]}, "inside the target"),
        ({"reasoning_span": [0, 5]}, "ordered"),
        ({"images": []}, "1 image placeholders but 0"),
        ({"extra_field": 1}, "extra_field"),
        ({"messages": []}, "assistant target"),
    ],
)
def test_malformed_pa_records_name_file_line_and_problem(
    tmp_path: Path, patch: dict[str, object], message: str, make_record: Callable[..., dict[str, Any]]
) -> None:
    path = _jsonl(tmp_path, [make_record(0), {**make_record(1), **patch}])
    with pytest.raises(DataError, match=rf"(?s)r\.jsonl:2: .*{message}"):
        load_examples([DataSource(path=str(path))], seed=0)


def test_prm_records_from_geoprm(tmp_path: Path) -> None:
    from geoprm.data import SFTRecord, write_records

    rec = SFTRecord(id="q1/0", images=("img/q1.png",), prompt="Judge the steps.", completion="### Step 1 ###\nok",
                    has_error=False, first_error=None, source="geosynth")  # fmt: skip
    path = write_records([rec], tmp_path / "prm.jsonl")
    (ex,) = load_examples([DataSource(path=str(path), kind="prm")], seed=0)
    assert ex.target == "### Step 1 ###\nok" and ex.images == (str(tmp_path / "img" / "q1.png"),)
    assert [p.type for p in ex.messages[0].content] == ["image", "text"]
    assert ex.perception_span is None and ex.reasoning_span is None


def test_mixture_weights_repeat_and_subsample(
    tmp_path: Path, make_record: Callable[..., dict[str, Any]]
) -> None:
    a = _jsonl(tmp_path, [make_record(i) for i in range(4)], "a.jsonl")
    b = _jsonl(tmp_path, [make_record(i + 10) for i in range(6)], "b.jsonl")
    mixed = load_examples([DataSource(path=str(a), weight=2.0), DataSource(path=str(b), weight=0.5)], seed=1)
    ids = [e.id for e in mixed]
    assert sorted(ids[:8]) == sorted([f"p{i}:program" for i in range(4)] * 2)
    assert len(ids) == 11 and len(set(ids[8:])) == 3 and all(i.startswith("p1") for i in ids[8:])
    again = load_examples([DataSource(path=str(a), weight=2.0), DataSource(path=str(b), weight=0.5)], seed=1)
    assert [e.id for e in again] == ids
    with pytest.raises(DataError, match="empty"):
        load_examples([DataSource(path=str(a), weight=0.01)], seed=0)
    assert mix([], seed=0) == []


def test_token_budget_keeps_whole_examples_within_the_budget(
    tmp_path: Path, make_record: Callable[..., dict[str, Any]]
) -> None:
    path = _jsonl(tmp_path, [make_record(i) for i in range(10)])
    examples = load_examples([DataSource(path=str(path))], seed=0)
    kept = budget(examples, len, limit=3 * len(examples[0].target) + 5, seed=0)
    assert 2 <= len(kept) <= 3 and sum(len(e.target) for e in kept) <= 3 * len(examples[0].target) + 5
    assert len(budget(examples, len, limit=1, seed=0)) == 1  # never empty


def test_missing_and_empty_sources(tmp_path: Path, write_pa: Callable[[int], Path]) -> None:
    with pytest.raises(DataError, match="does not exist"):
        load_examples([DataSource(path=str(tmp_path / "none.jsonl"))], seed=0)
    with pytest.raises(DataError, match="no records"):
        load_examples([DataSource(path=str(_jsonl(tmp_path, [])))], seed=0)
    assert PARecord.model_validate_json(write_pa(1).read_text().splitlines()[0]).trace_type == "program"


def test_chat_records_with_and_without_images(tmp_path: Path) -> None:
    user = {"role": "user", "content": [{"type": "image", "text": None}, {"type": "text", "text": "Solve."}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "The answer is \\boxed{6}."}]}
    ok = {"id": "s1", "images": ["d.png"], "messages": [user, answer]}
    path = _jsonl(tmp_path, [ok, {"id": "t1", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "triangle A B C"}]}, answer]}])  # fmt: skip
    first, second = load_examples([DataSource(path=str(path), kind="chat")], seed=0)
    assert first.target == "The answer is \\boxed{6}." and first.images == (str(tmp_path / "d.png"),)
    assert second.images == () and first.perception_span is None
    bad = _jsonl(tmp_path, [{**ok, "images": []}], "bad.jsonl")
    with pytest.raises(
        DataError, match=r"(?s)bad\.jsonl:1: not a valid chat record.*1 image placeholders but 0"
    ):
        load_examples([DataSource(path=str(bad), kind="chat")], seed=0)
