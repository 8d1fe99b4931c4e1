"""`geo dsl` batch commands: one output line per input line, bad records get a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geo_cli.main import app

runner = CliRunner()


def _run(args: list[str], stdin: bytes) -> list[dict[str, object]]:
    result = runner.invoke(app, args, input=stdin)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_exec_answers_in_input_order() -> None:
    stdin = _jsonl(
        {"id": "a", "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]},
        {"id": "b", "program": "Multiple V0 C2 N2 Get V0", "numbers": ["30", "40", "50"]},
        {"id": "c", "program": "Equal N0 N1 Get x", "numbers": ["6x-7", "x+10"], "extra": "ignored"},
    )
    out = _run(["dsl", "exec", "-"], stdin)
    assert [o["id"] for o in out] == ["a", "b", "c"]
    assert [o["error"] for o in out] == [None, None, None]
    assert [round(o["answer"], 3) for o in out] == [5.0, 25.0, 3.4]  # type: ignore[arg-type]


BAD = [
    pytest.param({"id": 1, "program": "Foo N0 Get N0", "numbers": ["1"]}, "Foo", id="unknown-operator"),
    pytest.param({"id": 2, "program": "Equal N0 Get N0", "numbers": ["1"]}, "Equal", id="wrong-arity"),
    pytest.param({"id": 3, "program": "Get V3", "numbers": []}, "V3", id="undefined-V"),
    pytest.param({"id": 4, "program": "Equal N0 V0 Get V0", "numbers": []}, "N0", id="N-out-of-range"),
    pytest.param(
        {"id": 5, "program": "Equal N0 V0 Get V0", "numbers": ["\\frac{3"]}, "frac", id="malformed-latex"
    ),
    pytest.param({"id": 6, "program": "", "numbers": []}, "empty", id="empty-program"),
    pytest.param({"id": 7, "program": 42, "numbers": []}, "program", id="program-not-string"),
    pytest.param({"id": 8, "program": "Get N0", "numbers": {"a": 1}}, "numbers", id="numbers-not-list"),
]


@pytest.mark.parametrize(("record", "needle"), BAD)
def test_exec_bad_record_gets_one_line_error_and_batch_continues(
    record: dict[str, object], needle: str
) -> None:
    good = {"id": "ok", "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]}
    out = _run(["dsl", "exec", "-"], _jsonl(good, record, good))
    assert len(out) == 3
    assert out[0]["answer"] == pytest.approx(5.0) and out[2]["answer"] == pytest.approx(5.0)
    err = out[1]["error"]
    assert isinstance(err, str) and "\n" not in err
    assert needle.lower() in err.lower(), err
    assert out[1]["answer"] is None


def test_exec_survives_non_utf8_and_huge_lines(tmp_path: Path) -> None:
    good = _jsonl({"id": "ok", "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]})
    huge = b'{"id": "big", "program": "' + b"Get N0 " * (10 * 1024 * 1024 // 7) + b'"}\n'
    data = good + b'{"id": "\xff\xfe"}\n' + huge + b"not json\n" + b"[1, 2]\n" + good
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    out = _run(["dsl", "exec", str(path)], b"")
    assert len(out) == 6
    assert out[0]["answer"] == pytest.approx(5.0) and out[5]["answer"] == pytest.approx(5.0)
    assert "UTF-8" in str(out[1]["error"])
    assert "limit" in str(out[2]["error"])
    assert "not JSON" in str(out[3]["error"])
    assert "not an object" in str(out[4]["error"])


def test_missing_input_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["dsl", "exec", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1
    assert "does not exist" in result.output


def test_pal_scripts_run_in_the_sandbox_to_the_executor_answer() -> None:
    records = [
        {"id": "a", "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]},
        {"id": "b", "program": "Gsin N0 N2 N3 Get y", "numbers": ["24", "x", "y", "30"]},
    ]
    scripts = _run(["dsl", "pal", "-"], _jsonl(*records))
    assert all(s["error"] is None for s in scripts)
    ran = _run(
        ["dsl", "run", "-", "--jobs", "1"], _jsonl(*({"id": s["id"], "script": s["script"]} for s in scripts))
    )
    assert [r["id"] for r in ran] == ["a", "b"]
    assert [r["answer"] for r in ran] == [pytest.approx(5.0), pytest.approx(48.0)]


def test_run_reports_bad_records_without_stopping() -> None:
    stdin = _jsonl({"id": 1, "script": "print(2+2)"}, {"id": 2, "script": None}, {"id": 3, "script": "1/0"})
    out = _run(["dsl", "run", "-", "--jobs", "1"], stdin + b"\xff\n")
    assert len(out) == 4
    assert out[0]["answer"] == pytest.approx(4.0)
    assert "script" in str(out[1]["error"])
    assert "ZeroDivisionError" in str(out[2]["error"])
    assert "UTF-8" in str(out[3]["error"])
