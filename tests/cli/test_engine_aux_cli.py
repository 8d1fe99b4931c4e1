"""`geo engine solve --aux SECONDS`: auxiliary search on the problems plain deduction does not prove."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from geo_cli.engine import app as engine_app

runner = CliRunner()
app = typer.Typer()
app.add_typer(engine_app, name="engine")

# JGEX-AG-231 L058-9: plain deduction fails; the foot of the perpendicular from d to line a e proves it.
L058_9 = "a b = segment a b; c = on_bline c a b; d = on_tline d b a b; e = intersection_lt e c d a a b ? cong e c c d"
MIDLINE = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
FALSE_GOAL = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? perp d e a b"


def test_aux_adds_the_construction_a_failure_needs_and_the_proof_replays(tmp_path: Path) -> None:
    problems = tmp_path / "p.txt"
    problems.write_text(f"L058-9\n{L058_9}\nmidline\n{MIDLINE}\nnever\n{FALSE_GOAL}\n", encoding="utf-8")
    proofs = tmp_path / "proofs.jsonl"
    args = ["engine", "solve", str(problems), "--aux", "30", "--timeout", "20", "--proofs", str(proofs)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["name"] for r in rows] == ["L058-9", "midline", "never"]
    # the best feet are checked together; the proof keeps the one it uses
    assert rows[0]["solved"] and len(rows[0]["aux"]) == 1 and " = foot " in rows[0]["aux"][0]
    assert rows[1]["solved"] and rows[1]["aux"] == []
    assert not rows[2]["solved"] and rows[2]["aux"] == [] and "does not hold" in rows[2]["error"]
    written = [json.loads(line) for line in proofs.read_text(encoding="utf-8").splitlines()]
    assert [p["name"] for p in written] == ["L058-9", "midline"]
    assert rows[0]["aux"][0] in written[0]["problem"] and len(written[0]["steps"]) == rows[0]["steps"]
    check = runner.invoke(app, ["engine", "check", str(proofs)])
    assert check.exit_code == 0, check.output
    assert check.stdout.splitlines()[0].startswith("L058-9: ok")


def test_without_aux_the_line_has_no_aux_field_and_the_failure_stays(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text(f"L058-9\n{L058_9}\n", encoding="utf-8")
    result = runner.invoke(app, ["engine", "solve", str(tmp_path / "p.txt"), "--timeout", "20"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert not row["solved"] and "aux" not in row


def test_aux_on_calculation_records_or_without_seconds_is_a_one_line_error(tmp_path: Path) -> None:
    record = {
        "name": "r",
        "points": ["A", "B"],
        "conditions": ["Equals(LengthOf(Line(A, B)), 3)"],
        "goal": "LengthOf(Line(A, B))",
    }
    (tmp_path / "calc.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["engine", "solve", str(tmp_path / "calc.jsonl"), "--aux", "5"])
    assert result.exit_code == 1
    assert result.stdout == ""
    message = " ".join(result.output.split())
    assert "--aux" in message and "calc.jsonl holds calculation records" in message
    assert len(result.output.strip().splitlines()) == 1
    (tmp_path / "p.txt").write_text(f"midline\n{MIDLINE}\n", encoding="utf-8")
    assert runner.invoke(app, ["engine", "solve", str(tmp_path / "p.txt"), "--aux", "0"]).exit_code == 2
