"""`geo engine solve`, `prove` and `check` on a Typer app that mounts the engine sub-app."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from geo_cli.engine import app as engine_app

runner = CliRunner()
app = typer.Typer()
app.add_typer(engine_app, name="engine")
DATA = Path(__file__).resolve().parents[1] / "geosynth" / "data"

MIDLINES = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c; f = midpoint f b c ? eqangle d e d f c b c a"
FALSE_GOAL = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? perp d e a b"


def test_solve_writes_one_json_line_per_problem_in_input_order(tmp_path: Path) -> None:
    jgex = (DATA / "jgex_sample.txt").read_text().splitlines()
    text = "\n".join(["midlines", MIDLINES, "never", FALSE_GOAL, *jgex[:4]]) + "\n"
    (tmp_path / "problems.txt").write_text(text)
    result = runner.invoke(
        app, ["engine", "solve", str(tmp_path / "problems.txt"), "--jobs", "2", "--timeout", "30"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["name"] for r in rows] == ["midlines", "never", jgex[0], jgex[2]]
    assert rows[0]["solved"] and rows[0]["answer"] is None and rows[0]["steps"] > 3
    assert set(rows[0]) == {"name", "solved", "answer", "seconds", "steps"}
    # The false goal never holds on a diagram: reported, and the batch goes on.
    assert not rows[1]["solved"] and "does not hold" in rows[1]["error"]
    assert rows[2]["solved"] and rows[3]["solved"]


def test_a_problem_past_the_time_limit_is_reported_as_timed_out(tmp_path: Path) -> None:
    imo = (DATA / "imo_sample.txt").read_text().splitlines()[2:4]  # IMO 2000 P6: slow, unsolved
    (tmp_path / "slow.txt").write_text("\n".join([*imo, "midlines", MIDLINES]) + "\n")
    result = runner.invoke(app, ["engine", "solve", str(tmp_path / "slow.txt"), "--timeout", "0.5"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[0]["timed_out"] and not rows[0]["solved"]
    assert rows[1]["name"] == "midlines"


def test_prove_raw_prints_numbered_steps_from_givens_to_goal() -> None:
    result = runner.invoke(app, ["engine", "prove", MIDLINES, "--raw"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1. ") and "[given]" in lines[0]
    assert lines[-1].startswith(f"{len(lines)}. eqangle")
    assert "r07 from" in result.stdout


def test_prove_prints_a_textbook_proof_by_default_and_json_on_request() -> None:
    text = runner.invoke(app, ["engine", "prove", MIDLINES])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].startswith("1. Given: ")
    assert "the midline of a triangle is parallel to its base" in text.stdout and "∥" in text.stdout
    raw = runner.invoke(app, ["engine", "prove", MIDLINES, "--raw"]).stdout.splitlines()
    assert len(lines) < len(raw)  # merged and folded
    book = json.loads(runner.invoke(app, ["engine", "prove", MIDLINES, "--json"]).stdout)
    assert [s["sentence"] for s in book["steps"]] == lines
    assert book["steps"][-1]["facts"][-1].startswith("eqangle")
    data = json.loads(runner.invoke(app, ["engine", "prove", MIDLINES, "--json", "--raw"]).stdout)
    assert len(data["steps"]) == len(raw) and data["steps"][0]["rule"] == "given"


def _proofs_file(tmp_path: Path) -> Path:
    (tmp_path / "problems.txt").write_text("\n".join(["midlines", MIDLINES, "never", FALSE_GOAL]) + "\n")
    out = tmp_path / "proofs.jsonl"
    result = runner.invoke(
        app, ["engine", "solve", str(tmp_path / "problems.txt"), "--proofs", str(out), "--timeout", "30"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert set(rows[0]) == {"name", "solved", "answer", "seconds", "steps"}  # stdout unchanged
    return out


def test_solve_writes_proofs_that_check_replays(tmp_path: Path) -> None:
    out = _proofs_file(tmp_path)
    proofs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["name"] for p in proofs] == ["midlines"]  # one per solved problem
    assert "? eqangle" in proofs[0]["problem"]
    checked = runner.invoke(app, ["engine", "check", str(out)])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.strip() == f"midlines: ok ({len(proofs[0]['steps'])} steps)"


def test_check_names_the_failing_step_of_a_tampered_proof(tmp_path: Path) -> None:
    out = _proofs_file(tmp_path)
    proof = json.loads(out.read_text())
    good = json.dumps(proof)
    step = next(s for s in reversed(proof["steps"]) if s["rule"] == "r07")
    step["premises"] = step["premises"][:1]
    (tmp_path / "two.jsonl").write_text(good + "\n" + json.dumps(proof | {"name": "tampered"}) + "\n")
    checked = runner.invoke(app, ["engine", "check", str(tmp_path / "two.jsonl")])
    assert checked.exit_code == 1
    lines = checked.stdout.splitlines()
    assert lines[0].startswith("midlines: ok")
    assert lines[1].startswith(f"tampered: failed at step {step['number']}: rule r07 does not give it")


def test_check_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["engine", "check", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "none.jsonl" in missing.output
    (tmp_path / "bad.jsonl").write_text('{"name": "x", "problem": "a b c = triangle a b c ? coll a b c"}\n')
    bad = runner.invoke(app, ["engine", "check", str(tmp_path / "bad.jsonl")])
    assert bad.exit_code == 1 and "bad.jsonl:1: not a proof (steps" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    (tmp_path / "junk.jsonl").write_text("not json\n")
    junk = runner.invoke(app, ["engine", "check", str(tmp_path / "junk.jsonl")])
    assert junk.exit_code == 1 and "junk.jsonl:1: not a proof" in junk.output


def test_prove_reports_bad_input_in_one_line_naming_the_clause() -> None:
    bad = runner.invoke(app, ["engine", "prove", "a b c = triangle a b c; d = foo d a b ? para a b c d"])
    assert bad.exit_code == 1
    assert "unknown construction 'foo'" in bad.output and "d = foo d a b" in bad.output
    unproved = runner.invoke(app, ["engine", "prove", FALSE_GOAL])
    assert unproved.exit_code != 0 and "does not hold" in unproved.output


def test_solve_names_a_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["engine", "solve", str(tmp_path / "nope.txt")])
    assert result.exit_code == 1 and "nope.txt" in result.output


G3K = Path(__file__).resolve().parents[1] / "geosynth" / "data" / "g3k"


def test_solve_answers_geometry3k_records_and_reports_a_malformed_one_in_its_place(tmp_path: Path) -> None:
    records = [json.loads((G3K / f"{rid}.json").read_text(encoding="utf-8")) for rid in (2401, 2402)]
    broken = {**records[0], "id": 9999, "goal": {"qty": "length", "points": ["A"]}}
    source = tmp_path / "mixed.jsonl"
    lines = [json.dumps(records[0]), json.dumps(broken), "{not json", json.dumps(records[1])]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["engine", "solve", str(source), "--timeout", "60"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["name"] for row in rows] == ["2401", "9999", "mixed.jsonl:3", "2402"]
    assert rows[0]["solved"] and abs(rows[0]["answer"] - 60.0) < 0.6
    assert rows[3]["solved"] and abs(rows[3]["answer"] - 5.0) < 0.1
    assert "record 9999" in rows[1]["error"] and "goal" in rows[1]["error"]
    assert "invalid JSON" in rows[2]["error"]


def test_solve_reads_newclid_files_and_their_proofs_replay(tmp_path: Path) -> None:
    text = (
        "trapezoid\na b c = triangle a b c; x = iso_trapezoid2 x a b c ? cyclic a b c x\n"
        "para\na b c = triangle a b c; x = parallelogram x a b c; m = midpoint m a b | n = midpoint n x c "
        "? para m n b c\n"
        "broken\na b c = triangle a b c; x = parallelogram x a b ? para a b c x\n"
    )
    (tmp_path / "newclid.txt").write_text(text)
    proofs = tmp_path / "proofs.jsonl"
    result = runner.invoke(
        app,
        ["engine", "solve", str(tmp_path / "newclid.txt"), "--dialect", "newclid", "--proofs", str(proofs)],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["name"], r["solved"]) for r in rows] == [
        ("trapezoid", True),
        ("para", True),
        ("broken", False),
    ]
    assert "parallelogram takes 4 points, got 3" in rows[2]["error"]
    checked = runner.invoke(app, ["engine", "check", str(proofs)])
    assert checked.exit_code == 0, checked.output
    # read as AlphaGeometry's, the Newclid parallelogram names a point nothing created
    plain = runner.invoke(app, ["engine", "solve", str(tmp_path / "newclid.txt")])
    assert "undefined points x" in json.loads(plain.stdout.splitlines()[1])["error"]
    bad = runner.invoke(app, ["engine", "solve", str(tmp_path / "newclid.txt"), "--dialect", "geogebra"])
    assert bad.exit_code != 0 and "--dialect 'geogebra'" in bad.output and "Traceback" not in bad.output
