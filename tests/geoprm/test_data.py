"""Training-data construction: teacher critiques, Monte Carlo hard labels, agreement, balance, records."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from geoprm import Critique, StepCritique, format_critique, parse_critique
from geoprm.data import (
    DataError,
    MonteCarlo,
    PRMItem,
    SFTRecord,
    agrees,
    balance,
    build_prm_data,
    load_visualprm,
    mc_hard_labels,
    visualprm_items,
    write_records,
)
from geotts import Completion, GenerationRequest, LastNumberExtractor, numeric_key, split_steps
from geotts.testing import FunctionSampler

# A small world: every problem asks for a + b; a solution step containing "slip" is wrong, and any
# continuation of a prefix with a wrong step ends at a wrong answer, otherwise at the right one.


def _item(item_id: str, a: int, b: int, steps: list[str], source: str = "synthetic") -> PRMItem:
    solution = "\n".join(f"Step {i}: {s}" for i, s in enumerate(steps, start=1)) + f"\nAnswer: {a + b}"
    return PRMItem(
        id=item_id, question=f"Compute {a} + {b}.", solution=solution, answer=float(a + b), source=source
    )


def _completer(request: GenerationRequest) -> list[Completion]:
    a, b = map(int, re.findall(r"Compute (\d+) \+ (\d+)", request.messages[-1].content)[0])
    answer = a + b + (1 if "slip" in request.assistant_prefix else 0)
    return [Completion(text=f"Step 9: add.\nAnswer: {answer}", num_tokens=5) for _ in range(request.n)]


def _teacher_critique(steps: list[str], *, blind: bool) -> str:
    parts = []
    for index, step in enumerate(steps, start=1):
        wrong = "slip" in step and not blind
        parts.append(
            StepCritique(
                index=index,
                intent=f"Carry out step {index}.",
                image_analysis="No figure facts are used.",
                image_judgement="Correct",
                logic_analysis="The sum is off by one." if wrong else "The arithmetic holds.",
                logic_judgement="Incorrect" if wrong else "Correct",
                judgement="Incorrect" if wrong else "Correct",
            )
        )
        if wrong:
            break
    has_error = parts[-1].judgement == "Incorrect"
    return format_critique(
        Critique(steps=tuple(parts), correction="Add the numbers again." if has_error else None)
    )


def _teacher(request: GenerationRequest) -> list[Completion]:
    prompt = request.messages[-1].content
    steps = re.findall(r"^Step \d+: (.*)$", prompt.split("Solution steps:")[1], flags=re.MULTILINE)
    if "Compute 9 + 9." in prompt:
        return [Completion(text="I'd rather not review this.", num_tokens=6)]
    # the teacher misses the slip in the problem 7 + 7, so Monte Carlo disagrees with it there
    return [
        Completion(
            text="Here you go.\n" + _teacher_critique(steps, blind="Compute 7 + 7." in prompt), num_tokens=50
        )
    ]


ITEMS = [
    _item("e1", 1, 2, ["Write 1 + 2.", "It is 4, a slip.", "So 4."]),
    _item("e2", 2, 3, ["Write 2 + 3.", "It is 6, a slip."]),
    _item("e3", 3, 4, ["A slip: 3 + 4 = 8."]),
    _item("c1", 4, 5, ["Write 4 + 5.", "It is 9."]),
    _item("c2", 5, 6, ["Write 5 + 6.", "It is 11."]),
    _item("d1", 7, 7, ["Write 7 + 7.", "It is 15, a slip."]),
    _item("u1", 9, 9, ["Write 9 + 9.", "It is 18."]),
    PRMItem(id="n1", question="Compute 1 + 1.", solution="Answer: 2", answer=2.0),
]


def test_build_prm_data_filters_by_agreement_and_balances() -> None:
    teacher, completer = FunctionSampler(_teacher), FunctionSampler(_completer)
    result = build_prm_data(
        ITEMS,
        teacher=teacher,
        completer=completer,
        extractor=LastNumberExtractor(marker="Answer:"),
        rng=random.Random(0),
        monte_carlo=MonteCarlo(completions=2),
        key=numeric_key,
    )
    stats = result.stats
    assert stats.items == 8 and stats.judged == 6 and stats.agreed == 5
    assert stats.agreement == pytest.approx(5 / 6)
    assert stats.dropped == {
        "no_steps": 1,
        "teacher_unreadable": 1,
        "teacher_incomplete": 0,
        "disagree": 1,
        "balance": 1,
    }
    assert result.drops["n1"] == "no_steps" and result.drops["u1"] == "teacher_unreadable"
    assert result.drops["d1"] == "disagree"
    assert stats.with_error == stats.without_error == 2
    # only the steps the teacher judged are completed: e1 2, e2 2, e3 1, c1 2, c2 2, d1 2 steps, m = 2
    assert stats.completions == 22 == sum(r.n for call in completer.calls for r in call)
    assert len(teacher.calls) == 1 and len(teacher.calls[0]) == 7
    ids = [record.id for record in result.records]
    assert ids == [i.id for i in ITEMS if i.id in ids]  # item order is kept
    assert {"c1", "c2"} <= set(ids)
    for record in result.records:
        critique = parse_critique(record.completion)
        assert critique.has_error == record.has_error and critique.first_error == record.first_error
        item = next(i for i in ITEMS if i.id == record.id)
        assert item.question in record.prompt and split_steps(item.solution).steps[0] in record.prompt


def test_completer_sees_the_step_prefix_and_labels_by_hard_estimation() -> None:
    item = ITEMS[0]
    steps = split_steps(item.solution).steps
    completer = FunctionSampler(_completer)
    (labels,) = mc_hard_labels(
        [(item, steps)], completer, LastNumberExtractor(marker="Answer:"), settings=MonteCarlo(completions=3)
    )
    assert labels == (True, False, False)
    prefixes = [r.assistant_prefix for r in completer.calls[0]]
    assert prefixes == [
        "Step 1: Write 1 + 2.\n",
        "Step 1: Write 1 + 2.\nStep 2: It is 4, a slip.\n",
        prefixes[2],
    ]
    assert all(r.n == 3 for r in completer.calls[0])


def test_agreement_rule() -> None:
    wrong_second = parse_critique(_teacher_critique(["a", "a slip"], blind=False))
    assert agrees(wrong_second, [True, False])
    assert agrees(wrong_second, [True, False, True])  # steps after the first error are not judged
    assert not agrees(wrong_second, [True, True])
    assert not agrees(wrong_second, [False, False])
    all_right = parse_critique(_teacher_critique(["a", "b"], blind=False))
    assert agrees(all_right, [True, True])
    assert not agrees(all_right, [True, True, True])  # the critique skipped a step
    assert not agrees(all_right, [True])


def test_balance_keeps_equal_groups_reproducibly() -> None:
    kept = balance(["a", "b", "c", "d"], ["x", "y"], random.Random(3))
    assert len(kept) == 4 and {"x", "y"} <= kept
    assert kept == balance(["a", "b", "c", "d"], ["x", "y"], random.Random(3))
    assert balance(["a"], [], random.Random(0)) == set()


def test_records_round_trip_through_json_lines(tmp_path: Path) -> None:
    record = SFTRecord(
        id="p1/0",
        images=("img/p1.png",),
        prompt="P",
        completion="C",
        has_error=True,
        first_error=2,
        source="pgps",
    )
    path = write_records([record, record.model_copy(update={"id": "p1/1"})], tmp_path / "prm.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert SFTRecord.model_validate_json(lines[0]) == record


def test_duplicate_ids_and_broken_samplers_are_rejected() -> None:
    extractor = LastNumberExtractor(marker="Answer:")
    with pytest.raises(DataError, match="repeated: \\['e1'\\]"):
        build_prm_data(
            [ITEMS[0], ITEMS[0]], teacher=FunctionSampler(_teacher), completer=FunctionSampler(_completer),
            extractor=extractor, rng=random.Random(0),
        )  # fmt: skip
    with pytest.raises(DataError, match="teacher returned a wrong number"):
        build_prm_data(
            ITEMS[:1], teacher=FunctionSampler(lambda r: []), completer=FunctionSampler(_completer),
            extractor=extractor, rng=random.Random(0),
        )  # fmt: skip


VISUALPRM = Path(__file__).parent / "data" / "visualprm_sample.jsonl"


def _never(request: GenerationRequest) -> list[Completion]:
    raise AssertionError("the completer must not be called when the items carry Monte Carlo labels")


def _step_teacher(request: GenerationRequest) -> list[Completion]:
    """A teacher that flags the first step whose text contains a wrong product or sum."""
    prompt = request.messages[-1].content
    steps = re.findall(r"^Step \d+: (.*)$", prompt.split("Solution steps:")[1], flags=re.MULTILINE)
    marked = ["slip" if ("6 * 2" in s or "25 pi" in s) else s for s in steps]
    return [Completion(text=_teacher_critique(marked, blind=False), num_tokens=40)]


def test_visualprm_records_load_and_feed_the_pipeline_without_a_completer(tmp_path: Path) -> None:
    records = load_visualprm(VISUALPRM, image_root=tmp_path)
    assert [r.id for r in records] == ["visualprm_sample:1", "visualprm_sample:2", "visualprm_sample:3"]
    assert records[0].images == (str(tmp_path / "MAVIS-Geometry/0001.png"),)
    assert [s.hard_label for s in records[0].steps] == [True, False, False]
    assert [s.hard_label for s in records[2].steps] == [True, False]  # no counts: score > 0 decides
    items = visualprm_items(records)
    assert items[1].mc_labels == (True, True) and items[1].solution_steps[1].startswith("Angle C")
    result = build_prm_data(
        items,
        teacher=FunctionSampler(_step_teacher),
        completer=FunctionSampler(_never),
        extractor=LastNumberExtractor(marker="Answer:"),
        rng=random.Random(0),
        balanced=False,
    )
    assert result.stats.agreed == 3 and result.stats.completions == 0
    assert [(r.id, r.first_error) for r in result.records] == [
        ("visualprm_sample:1", 2),
        ("visualprm_sample:2", None),
        ("visualprm_sample:3", 2),
    ]
    assert all(r.source == "visualprm400k" for r in result.records)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "must be a JSON object"),
        (
            '{"image": "a.png", "answer": "1", "steps_with_score": [{"step": "x", "score": 0.5}]}',
            "field question",
        ),
        ('{"question": "q", "answer": "1", "steps_with_score": []}', "field steps"),
        (
            '{"question": "q", "answer": "1", "steps_with_score": [{"step": "x", "score": 2.0}]}',
            "field steps.0.score",
        ),
    ],
)
def test_bad_visualprm_lines_name_the_file_line_and_field(tmp_path: Path, line: str, needle: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        VISUALPRM.read_text(encoding="utf-8").splitlines()[0] + "\n" + line + "\n", encoding="utf-8"
    )
    with pytest.raises(DataError, match=f"bad.jsonl:2: .*{re.escape(needle)}"):
        load_visualprm(path)


def test_items_reject_labels_that_do_not_match_the_steps() -> None:
    with pytest.raises(ValueError, match="2 Monte Carlo labels for 1 steps"):
        PRMItem(id="x", question="q", solution="", answer="1", steps=("a",), mc_labels=(True, False))
