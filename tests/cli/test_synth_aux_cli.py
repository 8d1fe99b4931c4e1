"""`aux-data` and `aux-search` mounted on a Typer app the way `geo synth` mounts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from geo_cli.synth_aux import app as aux_app
from geo_cli.synth_aux import register_aux_commands

runner = CliRunner()
app = typer.Typer()
synth = typer.Typer()
register_aux_commands(synth)
app.add_typer(synth, name="synth")

# JGEX-AG-231 L058-9: the engine needs the foot of the perpendicular from d to line a e.
BASE = "a b = segment a b; c = on_bline c a b; d = on_tline d b a b; e = intersection_lt e c d a a b ? cong e c c d"
HELPER = "f = foot f d a e"
# JGEX-AG-231 L053-1: the foot of the perpendicular from g to line e f, the third standard construction
# enumerated, lets the engine prove the goal.
FEET = "b c d = triangle b c d; e = foot e b c d; a = free a; f = foot f a c d; g = midpoint g b a ? cong f g g e"


def test_search_with_enumeration_finds_a_helper() -> None:
    search = ["synth", "aux-search", FEET, "--backend", "enumerate"]
    args = [*search, "--branching", "3", "--beam", "3", "--depth", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.strip())
    assert row["solved"] and len(row["constructions"]) == 1
    assert row["constructions"] == ["h = foot h g e f"]
    assert row["nodes_checked"] == 4 and row["depth"] == 1 and row["proposals"] == 3
    assert row["constructions"][0] in row["problem"]


def test_search_reads_a_file_and_reports_each_problem(tmp_path: Path) -> None:
    easy = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
    (tmp_path / "p.txt").write_text(f"easy\n{easy}\nhard\n{BASE}\n")
    args = ["synth", "aux-search", "--file", str(tmp_path / "p.txt"), "--backend", "enumerate"]
    result = runner.invoke(app, [*args, "--branching", "2", "--beam", "2", "--depth", "1"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["name"] for r in rows] == ["easy", "hard"]
    assert rows[0]["solved"] and rows[0]["constructions"] == [] and rows[0]["nodes_checked"] == 1
    assert rows[1]["proposals"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a b c = triangle a b c", "--backend", "enumerate"], "no goal"),
        ([BASE, "--backend", "transformers"], "needs --model"),
        ([BASE, "--backend", "openai", "--model", "m"], "needs --url"),
        ([BASE, "--backend", "magic", "--model", "m"], "unknown backend"),
        (["a b c = triangle a b c; d = spiral d a b ? coll a b d", "--backend", "enumerate"], "spiral"),
        (["--backend", "enumerate"], "either a PROBLEM line or --file"),
    ],
)
def test_bad_input_is_a_one_line_user_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["synth", "aux-search", *args])
    assert result.exit_code == 1
    assert message in result.output


def test_aux_data_splits_a_file_and_writes_chat_records(tmp_path: Path) -> None:
    full = BASE.replace(" ?", f"; {HELPER} ?")
    (tmp_path / "p.txt").write_text(f"needs-f\n{full}\n")
    out, records = tmp_path / "aux.jsonl", tmp_path / "chat.jsonl"
    args = [
        "synth",
        "aux-data",
        "--from-file",
        str(tmp_path / "p.txt"),
        "--out",
        str(out),
        "--records",
        str(records),
        "--strict",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    example = json.loads(out.read_text())
    assert example["auxiliary"] == [HELPER] and example["name"] == "needs-f" and not example["engine_alone"]
    record = json.loads(records.read_text())
    assert record["id"] == "needs-f:aux1" and record["messages"][-1]["content"][0]["text"] == HELPER
    assert "1 examples" in result.stdout and "1 chat records" in result.stdout


def test_aux_data_rejects_a_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(
        aux_app, ["aux-data", "--from-file", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert result.output == f"error: problem file {tmp_path / 'nope.txt'} does not exist\n"


def test_aux_data_mines_random_sequences_with_workers(tmp_path: Path) -> None:
    out = tmp_path / "mined.jsonl"
    # seed 2 yields at its seventh sequence (seed 5 yielded at its first until the engine's mirrored
    # side-angle-side rule proved that goal without the auxiliary point)
    args = ["aux-data", "--n", "1", "--seed", "2", "--max-sequences", "7", "--jobs", "2", "--out", str(out)]
    result = runner.invoke(aux_app, args)
    assert result.exit_code == 0, result.output
    (example,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert example["name"] == "aux-2-6" and example["auxiliary"]
    assert "1 examples" in result.stdout and not (tmp_path / "mined.jsonl.partial").exists()
