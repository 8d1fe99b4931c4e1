"""Tests of geodsl.data: the PGPS tokeniser/tagger, the N lists, loading and checking."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geodsl
from geodsl import _pgps_text
from geodsl.data import (
    CheckReport,
    NumberList,
    PGPSRecord,
    check_dataset,
    dedup_program,
    load_pgps,
    number_list,
)
from geodsl.errors import DataError, ExecutionError

DATA = Path(__file__).parent / "data"
EXAMPLES_PATH = DATA / "pgps_examples_96.json"
EXCERPTS = (DATA / "pgps_geometry3k_test_excerpt.json", DATA / "pgps_pgps9k_test_excerpt.json")
EXAMPLES: list[dict[str, Any]] = json.loads(EXAMPLES_PATH.read_text(encoding="utf-8"))
REPO_ROOT = Path(__file__).resolve().parents[2]


def _n_values(expression: str, values: Sequence[str]) -> list[str]:
    return [values[int(t[1:])] for t in expression.split() if t[0] == "N" and t[1:].isdigit()]


# --------------------------------------------------------------------------- the 96 reference vectors


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
def test_reference_number_lists(example: dict[str, Any]) -> None:
    nl = number_list(example["text"], example["parsing_stru_seqs"], example["parsing_sem_seqs"])
    # The reference loader's var_values is the de-duplicated list (prob_1040 shows it: raw N6/N7).
    assert list(nl.dedup_numbers) == example["var_values"]
    assert list(nl.letters) == example["arg_values"]
    assert dedup_program(example["expression"], nl) == example["dedup_expression"]
    # Raw program on the raw list reads exactly the same values as the dedup pair.
    assert _n_values(example["expression"], nl.numbers) == _n_values(
        example["dedup_expression"], nl.dedup_numbers
    )
    # Every letter operand of the program is a pointer target (an [ARG] of the text).
    program_letters = {t for t in example["expression"].split() if len(t) == 1 and t.islower()}
    assert program_letters <= set(nl.letters)


def test_worked_mapping_prob_27() -> None:
    nl = number_list(
        "Find y.",
        ["line A B", "line C B", "line C A"],
        ["CB \\perp CA on C", "AC = 24", "BC = x", "AB = y", "m \\angle CBA = 30"],
    )
    assert nl.numbers == ("24", "x", "y", "30")
    assert nl.text_count == 0
    assert nl.letters == ("y",)


def test_worked_mapping_prob_92_text_numbers() -> None:
    text = "In \\triangle MIV, Z is the centroid, MZ = 6, YI = 18, and NZ = 12. What is the measure of ZV?"
    nl = number_list(text, ["line I R V", "line M Y V"], [])
    assert nl.numbers == ("6", "18", "12")
    assert nl.text_count == 3
    assert nl.letters == ()


def test_raw_and_dedup_numbering_prob_1040() -> None:
    nl = number_list(
        "Use parallelogram JKLM to find m \\angle MJK if JK = 2b+3 and JM = 3a.",
        ["line M L", "line J M"],
        ["MJ = 3a", "JK = 2b+3", "LK = 21", "ML = 45", "m \\angle RLM = 30", "m \\angle KLR = 70"],
    )
    assert nl.numbers == ("2b+3", "3a", "3a", "2b+3", "21", "45", "30", "70")
    assert nl.dedup_numbers == ("2b+3", "3a", "21", "45", "30", "70")
    assert nl.dedup_index == (0, 1, 1, 0, 2, 3, 4, 5)
    assert dedup_program("Sum N6 N7 V0 Equal V0 V1 Get V1", nl) == "Sum N4 N5 V0 Equal V0 V1 Get V1"
    # A dropped semantic value maps onto its text twin.
    assert dedup_program("Equal N2 N3 Get N3", nl) == "Equal N1 N0 Get N0"


def test_dedup_keeps_out_of_range_indices_out_of_range() -> None:
    nl = number_list("If AB = 5, find x.", [], ["AB = 5", "BC = x"])
    assert nl.numbers == ("5", "5", "x") and nl.dedup_numbers == ("5", "x")
    assert dedup_program("Equal N2 N3 Get x", nl) == "Equal N1 N2 Get x"
    assert dedup_program("Gsin  N0\tN2 V0 Get V0", nl) == "Gsin N0 N1 V0 Get V0"


def test_duplicates_between_semantic_clauses_are_kept() -> None:
    nl = number_list("Find x.", [], ["AB = 30", "m \\angle ABC = 30", "AC = x"])
    assert nl.numbers == nl.dedup_numbers == ("30", "30", "x")


# --------------------------------------------------------------------------- tokeniser and tagger


@pytest.mark.parametrize(
    ("sentence", "tokens"),
    [
        ("Find m \\angle ABC.", ["find", "m", "\\angle", "A", "B", "C", "."]),
        ("\\Phi C0 = 6", ["\\phi", "C0", "=", "6"]),
        ("A'B'C' \\sim ABC?", ["A'", "B'", "C'", "\\sim", "A", "B", "C", "?"]),
        ("If x = 3, Find x .", ["if", "x", "=", "3", ",", "find", "x", "."]),
        ("5., AB", ["5.", ",", "A", "B"]),
        ("  line m lieson A B ", ["line", "m", "lieson", "A", "B"]),
        ("", []),
    ],
    ids=["points", "lowercase-command", "primes", "lone-period", "one-char-split", "strip", "empty"],
)
def test_tokenizer(sentence: str, tokens: list[str]) -> None:
    assert _pgps_text.tokenize(sentence) == tokens


def test_tokenizer_rejects_double_space_with_position() -> None:
    with pytest.raises(DataError, match=r"double space at column 4 in 'Find  x\.'"):
        _pgps_text.tokenize("Find  x.")


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("If AB = 5, find x.", (6, 9)),
        ("AB = 5. What is x if y = 2?", (5, 8)),
        ("Solve for x", (0, 3)),
        ("AB = 5", (0, 4)),
    ],
)
def test_question_span(text: str, span: tuple[int, int]) -> None:
    assert _pgps_text.prob_span(_pgps_text.tokenize(text)) == span


@pytest.mark.parametrize(
    ("text", "sem", "numbers", "letters"),
    [
        ("If a = 10\\sqrt{3}, find y.", ["BC = a", "AE = y"], ("10\\sqrt{3}", "a", "y"), ("a", "y")),
        (
            "a = 8, b = 15, and c = 17, find \\tan B.",
            ["CB = a", "CA = b", "BA = c"],
            ("8", "15", "17", "a", "b", "c"),
            ("a", "b", "c"),
        ),
        ("Find x if m \\angle 1 = 3x+5 and m \\angle 2 = 4x.", [], ("3x+5", "4x"), ("x",)),
        # "r" names a quantity but occurs in no value, so it is no pointer target.
        ("Line m is tangent to a circle with radius r = 4. Find a.", ["AB = a"], ("4", "a"), ("a",)),
        ("Find the area of the figure in cm^{2} if AB = 2.", [], ("2",), ()),
        ("In the figure, p, q, and r are lines, p = 5. Find q.", [], ("5",), ()),
        ("Find x, given AB = x+1, BC = x.", [], ("x+1", "x"), ("x",)),
    ],
    ids=["article-a-after-if", "named-letters", "angle-ids", "line-name", "units", "letter-list", "repeat"],
)
def test_tagging_rules(text: str, sem: list[str], numbers: tuple[str, ...], letters: tuple[str, ...]) -> None:
    nl = number_list(text, [], sem)
    assert nl.numbers == numbers
    assert nl.letters == letters


def test_condition_letters_come_before_question_letters() -> None:
    # "y" sits in the question span, "x" in the condition after it.
    nl = number_list("Find y if x = 2y and x+y = 9.", [], [])
    assert nl.numbers == ("2y", "x+y", "9")
    assert nl.letters == ("x", "y")


def test_number_list_errors_name_the_field() -> None:
    with pytest.raises(DataError, match="semantic clause 1: double space"):
        number_list("Find x.", [], ["AB = 3", "BC  = x"])
    with pytest.raises(DataError, match="text: empty"):
        number_list("   ", [], [])


# --------------------------------------------------------------------------- loading


def test_load_published_excerpts() -> None:
    for path in EXCERPTS:
        raw: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        records = load_pgps(path)
        assert [r.id for r in records] == list(raw)
        for record in records:
            source = raw[record.id]
            assert record.text == source["text"] and record.expression == source["expression"]
            assert list(record.choices) == source["choices"] and record.type == source["type"]
            assert record.diagram == source["diagram"] and record.page == source["page"]
            assert record.out_of_range_n() == []


def test_excerpt_records_match_reference_vectors() -> None:
    vectors = {e["id"]: e for e in EXAMPLES}
    shared = [r for r in load_pgps(EXCERPTS[1]) if r.id in vectors]
    assert len(shared) >= 3
    for record in shared:
        assert list(record.dedup_numbers) == vectors[record.id]["var_values"]


def test_load_examples_ignores_extra_keys_and_allows_missing_optional_fields() -> None:
    records = load_pgps(EXAMPLES_PATH)
    assert len(records) == 96
    first = records[0]
    assert (first.id, first.diagram, first.book, first.page) == ("prob_13", None, None, None)
    assert first.type == "Midsegment of Triangle " and first.knowledge_type == "Midsegment of Triangle"
    assert first.answer == "25.000" and first.answer_value == 25.0


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _example_record(**changes: Any) -> dict[str, Any]:
    record = {k: v for k, v in EXAMPLES[1].items() if k not in {"id", "var_values", "arg_values"}}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not None}


def test_load_list_and_json_lines(tmp_path: Path) -> None:
    records = [{**_example_record(), "id": "a"}, {**_example_record(), "id": "b"}]
    as_list = load_pgps(_write(tmp_path, "r.json", json.dumps(records)))
    as_lines = load_pgps(_write(tmp_path, "r.jsonl", "\n".join(json.dumps(r) for r in records) + "\n\n"))
    concatenated = load_pgps(_write(tmp_path, "r2.json", "\n".join(json.dumps(r) for r in records)))
    assert [r.id for r in as_list] == [r.id for r in as_lines] == [r.id for r in concatenated] == ["a", "b"]
    assert as_list[0].numbers == ("24", "x", "y", "30")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"prob_1": _example_record(text=None)}, r"record prob_1: missing field\(s\) 'text'"),
        (
            {"prob_1": _example_record(choices=[1.0, 2.0, 3.0])},
            r"record prob_1: field 'choices': expected 4 choices",
        ),
        ({"prob_1": _example_record(choices=[1.0, 2.0, True, 4.0])}, r"choice 2 is True"),
        ({"prob_1": _example_record(answer=48.0)}, r"field 'answer': expected a string, got float"),
        ({"prob_1": _example_record(answer="forty")}, r"field 'answer': 'forty' is not a number"),
        (
            {"prob_1": _example_record(parsing_sem_seqs=["AC = 24", 5])},
            r"'parsing_sem_seqs': item 1 is a int",
        ),
        ({"prob_1": _example_record(expression=" ")}, r"field 'expression': the program is empty"),
        ({"prob_1": _example_record(text="Find  y.")}, r"record prob_1: text: double space at column 4"),
        ({"prob_1": _example_record(id="prob_2")}, r"record prob_1: its 'id' field 'prob_2' differs"),
        ({"prob_1": ["not", "a", "record"]}, r"record prob_1: expected an object, got list"),
        ([_example_record(id=None)], r"record #0: no 'id' field"),
        ([_example_record(id="p"), _example_record(id="p")], r"record p: duplicate id"),
        ("just text", r"expected an object of records or a list of records, got str"),
    ],
    ids=[
        "missing",
        "3-choices",
        "bool-choice",
        "numeric-answer",
        "bad-answer",
        "clause-type",
        "empty-program",
        "double-space",
        "id-mismatch",
        "not-object",
        "no-id",
        "dup-id",
        "scalar",
    ],
)
def test_malformed_records_name_file_and_record(tmp_path: Path, content: object, message: str) -> None:
    path = _write(tmp_path, "bad.json", json.dumps(content))
    with pytest.raises(DataError, match=message) as info:
        load_pgps(path)
    assert str(info.value).startswith(str(path))


def test_whitespace_normalisation_is_opt_in(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "ws.json",
        json.dumps({"p": _example_record(text="Find   y. ", parsing_sem_seqs=["AC  = 24", "AB = y"])}),
    )
    with pytest.raises(DataError, match="double space"):
        load_pgps(path)
    (record,) = load_pgps(path, normalize_whitespace=True)
    assert record.text == "Find y." and record.sem_clauses == ("AC = 24", "AB = y")
    assert record.numbers == ("24", "y") and record.letters == ("y",)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"prob_1": {"text": "caf\xe9"}}', r"not UTF-8 text \(byte 0xe9 at offset 24\)"),
        (b'{"prob_1": ', r"invalid JSON \(Expecting value, line 1, column 12\)"),
        (b'{"id": "a"}\n{"id": ', r"line 2: invalid JSON"),
        (b'{"prob_1": {}, "prob_1": {}}', r"duplicate key 'prob_1' in a JSON object"),
    ],
    ids=["latin-1", "truncated", "bad-line", "duplicate-key"],
)
def test_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(DataError, match=message):
        load_pgps(_write(tmp_path, "bad.json", content))


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read the file"):
        load_pgps(tmp_path / "absent.json")


# --------------------------------------------------------------------------- the record model


def test_record_round_trips_and_rejects_inconsistent_derived_fields() -> None:
    record = load_pgps(EXAMPLES_PATH)[1]
    assert PGPSRecord.model_validate_json(record.model_dump_json()) == record
    with pytest.raises(ValueError, match="numbers"):
        PGPSRecord.model_validate({**record.model_dump(), "numbers": ("24",)})
    with pytest.raises(ValueError, match="extra"):
        PGPSRecord.model_validate({**record.model_dump(), "var_values": ()})


def test_build_rejects_bad_choices() -> None:
    with pytest.raises(DataError, match="expected 4 choices"):
        PGPSRecord.build(
            id="p",
            text="Find y.",
            stru_clauses=[],
            sem_clauses=["AB = y"],
            expression="Get y",
            answer="1.000",
            type="Angle",
            choices=[1.0],
        )


def test_number_list_model_checks_its_index_map() -> None:
    with pytest.raises(ValueError, match="dedup_index"):
        NumberList(numbers=("5", "5"), text_count=1, letters=(), dedup_numbers=("5",), dedup_index=(0, 1))


# --------------------------------------------------------------------------- dataset check


def test_check_dataset_classifies_outcomes() -> None:
    records = load_pgps(EXAMPLES_PATH)[:4]
    outcomes: dict[str, Any] = {
        records[0].id: records[0].answer_value + 1e-3,
        records[1].id: records[1].answer_value + 1.0,
        records[2].id: ExecutionError("no Get"),
        records[3].id: ZeroDivisionError("bug"),
    }

    def solver(program: str, numbers: Sequence[str]) -> float:
        outcome = outcomes[
            next(r.id for r in records if r.expression == program and r.numbers == tuple(numbers))
        ]
        if isinstance(outcome, Exception):
            raise outcome
        return float(outcome)

    report = check_dataset(records, solver=solver)
    assert (report.total, report.agree, report.disagree, report.error, report.crash) == (4, 1, 1, 1, 1)
    assert [m.id for m in report.misses] == [r.id for r in records[1:]]
    assert report.misses[0].got == pytest.approx(records[1].answer_value + 1.0)
    assert report.misses[1].error == "ExecutionError: no Get" and report.misses[1].got is None
    assert report.agreement == 0.25
    assert isinstance(report, CheckReport)


def test_check_dataset_default_solver_uses_geodsl_execute(monkeypatch: pytest.MonkeyPatch) -> None:
    records = load_pgps(EXAMPLES_PATH)[:3]
    calls: list[tuple[str, tuple[str, ...]]] = []

    class _Result:
        def __init__(self, answer: float) -> None:
            self.answer = answer

    def fake_execute(program: str, numbers: Sequence[str]) -> _Result:
        calls.append((program, tuple(numbers)))
        return _Result(records[0].answer_value)

    monkeypatch.setattr(geodsl, "execute", fake_execute, raising=False)
    report = check_dataset(records)
    assert calls == [(r.expression, r.numbers) for r in records]
    assert report.agree >= 1 and report.total == 3


def test_check_dataset_without_executor_is_a_data_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(geodsl, "execute", raising=False)
    with pytest.raises(DataError, match=r"needs geodsl\.execute"):
        check_dataset(load_pgps(EXAMPLES_PATH)[:1])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["find", "x", "a", "m", "=", "and", "line", "3x+1", "AB", ",", ".", "\\angle", "1", "if"]
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(["AB = x", "m \\angle A = 30", "AB \\perp CD", "x = y", "AB ="]), max_size=4),
)
def test_number_list_never_crashes_on_single_spaced_input(words: list[str], clauses: list[str]) -> None:
    nl = number_list(" ".join(words), [], clauses)
    assert len(nl.numbers) >= len(nl.dedup_numbers)
    assert all(nl.dedup_numbers[j] == nl.numbers[i] for i, j in enumerate(nl.dedup_index))
    assert all(len(letter) == 1 and letter.islower() for letter in nl.letters)


def _has_executor() -> bool:
    return hasattr(geodsl, "execute")


@pytest.mark.skipif(not _has_executor(), reason="geodsl.execute is not available yet")
def test_examples_execute_with_raw_numbering() -> None:
    report = check_dataset(load_pgps(EXAMPLES_PATH))
    assert report.misses == ()


# --------------------------------------------------------------------------- full splits (slow)


def _shared_root() -> Path:
    return Path(os.environ.get("GEO_SHARED", REPO_ROOT.parent / "shared"))


@pytest.mark.slow
@pytest.mark.parametrize("split", ["geometry3k_test.json", "pgps9k_test.json"])
def test_full_split_loads_with_n_indices_in_range(split: str) -> None:
    path = _shared_root() / "data" / "pgps" / split
    if not path.exists():
        pytest.skip(f"{path} not present (set GEO_SHARED)")
    records = load_pgps(path)
    assert len(records) == {"geometry3k_test.json": 589, "pgps9k_test.json": 1000}[split]
    assert [r.id for r in records if r.out_of_range_n()] == []
    letters_missing = [
        r.id
        for r in records
        if {t for t in r.expression.split() if len(t) == 1 and t.islower()} - set(r.letters)
    ]
    assert letters_missing == []
    if _has_executor():  # the agreement floor: >= 99.5% of stored answers reproduced
        report = check_dataset(records)
        assert report.agreement >= 0.995, [m.model_dump() for m in report.misses]
