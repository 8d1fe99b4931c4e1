"""Bad input on the whole ``geo`` surface: one ``error:`` line naming the input and the problem.

Every case runs the real CLI on small files written in ``tmp_path`` and checks the exact message and
the exit code: non-UTF-8 files, folders given for files, empty files and files of blank lines, records
of the wrong kind, integer ids, ``geo pipeline check`` on a config whose inputs are missing, problems
that fail inside ``geo synth aux-data --from-file``, and errors printed at a narrow terminal width.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from geo_cli.main import app
from geodsl.data import load_pgps

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
POOLS = ROOT / "tests" / "geotts" / "data" / "pools.jsonl"

NOT_UTF8 = b"\xff\xfe not text\n"
GOOD = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
COINCIDE = "a b = segment a b; c = midpoint c a b; d = midpoint d a b ? cong a d b d"


def _invoke(args: list[str], stdin: bytes | None = None) -> Result:
    return runner.invoke(app, args, input=stdin)


def _error(result: Result) -> str:
    """The one error line of a failed command (without ``error: ``); fails unless it is exactly one."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return lines[0].removeprefix("error: ")


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


# --- one table for the file arguments of every command -------------------------------------------------

#: (command line with {} for the input file, how messages name it). Every command that reads a file.
FILE_COMMANDS: list[tuple[str, str]] = [
    ("engine solve {}", "problem file"),
    ("engine check {}", "proofs file"),
    ("synth render {} --out {out}", "records file"),
    ("synth aux-search --file {} --backend enumerate", "problem file"),
    ("synth aux-data --from-file {} --out {out}", "problem file"),
    ("tts run {}", "config file"),
    ("tts report {} --out {out}", "pools file"),
    ("tts cg-mte {}", "pools file"),
    ("tts mte {}", "pools file"),
    ("tts sc {} --k 2", "pools file"),
    ("dsl check {}", "dataset file"),
    ("synth mts {} --out {out}", "dataset file"),
    ("dsl exec {}", "input file"),
    ("dsl pal {}", "input file"),
    ("dsl run {} --jobs 1", "input file"),
    ("prm critique {} --model nowhere", "input file"),
    ("prm score {}", "input file"),
    ("prm build-data {}", "config file"),
    ("prm eval {} --out {out}", "runs file"),
    ("train sft --config {}", "config file"),
    ("pipeline run {} --workdir {out}", "config file"),
    ("pipeline status {}", "config file"),
    ("pipeline check {}", "config file"),
]
IDS = [cmd.split(" {}")[0] for cmd, _ in FILE_COMMANDS]
#: The commands that read their file as a whole (JSON Lines batches report bad bytes line by line).
WHOLE_FILE = [(c, w) for c, w in FILE_COMMANDS if not c.startswith(("tts cg-mte", "tts mte", "tts sc", "dsl ", "prm critique", "prm score", "prm eval"))]  # fmt: skip


def _args(command: str, path: Path, tmp_path: Path) -> list[str]:
    return command.replace("{out}", str(tmp_path / "out")).replace("{}", str(path)).split()


@pytest.mark.parametrize(("command", "what"), WHOLE_FILE, ids=[c.split(" {}")[0] for c, _ in WHOLE_FILE])
def test_a_file_that_is_not_utf8_is_named_with_the_line_and_byte(
    tmp_path: Path, command: str, what: str
) -> None:
    path = _write(tmp_path / "in.yaml", b"first line\n" + NOT_UTF8)
    result = _invoke(_args(command, path, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == f"{what} {path} is not UTF-8 text (invalid start byte at line 2, byte 11)"


#: ``geo engine solve`` also reads folders (formal Geometry3K) and ``geo synth render`` dataset folders.
FILE_ONLY = [(c, w) for c, w in FILE_COMMANDS if not c.startswith(("engine solve", "synth render"))]


@pytest.mark.parametrize(("command", "what"), FILE_ONLY, ids=[c.split(" {}")[0] for c, _ in FILE_ONLY])
def test_a_directory_given_for_a_file_is_called_a_directory(tmp_path: Path, command: str, what: str) -> None:
    folder = tmp_path / "data.yaml"
    folder.mkdir()
    result = _invoke(_args(command, folder, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == f"{what} {folder} is a directory, not a file"


@pytest.mark.parametrize(("command", "what"), FILE_COMMANDS, ids=IDS)
def test_an_empty_file_is_an_error_not_a_silent_success(tmp_path: Path, command: str, what: str) -> None:
    path = _write(tmp_path / "empty.yaml", b"")
    result = _invoke(_args(command, path, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == f"{what} {path} is empty"
    assert result.stdout == ""


@pytest.mark.parametrize(("command", "what"), FILE_COMMANDS, ids=IDS)
def test_a_missing_file_is_said_not_to_exist(tmp_path: Path, command: str, what: str) -> None:
    path = tmp_path / "nope.yaml"
    result = _invoke(_args(command, path, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == f"{what} {path} does not exist"


def test_empty_standard_input_is_an_error() -> None:
    result = _invoke(["dsl", "exec", "-"], stdin=b"")
    assert result.exit_code == 1 and _error(result) == "standard input is empty"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("engine solve {}", "problem file {} holds no problems (only blank lines)"),
        ("engine check {}", "proofs file {} holds no proofs (only blank lines)"),
        ("synth aux-search --file {} --backend enumerate", "problem file {} holds no problems (only blank lines)"),
        ("synth aux-data --from-file {} --out {out}", "problem file {} holds no problems (only blank lines)"),
    ],
    ids=["engine-solve", "engine-check", "aux-search", "aux-data"],
)  # fmt: skip
def test_a_file_of_blank_lines_holds_nothing_to_do(tmp_path: Path, command: str, message: str) -> None:
    path = _write(tmp_path / "blank.txt", "\n  \n\n")
    result = _invoke(_args(command, path, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == message.format(path)


def test_a_batch_with_no_readable_line_answers_each_line_and_fails(tmp_path: Path) -> None:
    path = _write(tmp_path / "in.jsonl", NOT_UTF8 + b"\n")
    result = _invoke(["dsl", "exec", str(path)])
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["error"] for row in rows] == [
        "line 1 is not UTF-8 (invalid start byte at byte 0)",
        "line 2 is empty",
    ]
    assert result.exit_code == 1
    assert _error(result) == f"input file {path} holds no JSON object (on any of its 2 lines)"


def test_a_batch_with_some_good_lines_still_succeeds(tmp_path: Path) -> None:
    good = json.dumps({"id": "ok", "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]})
    path = _write(tmp_path / "in.jsonl", NOT_UTF8 + good.encode() + b"\n")
    result = _invoke(["dsl", "exec", str(path)])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["answer"] for line in result.stdout.splitlines()] == [None, 5.0]


# --- the commands whose inputs are folders --------------------------------------------------------------


def test_engine_solve_on_a_folder_without_calculation_records(tmp_path: Path) -> None:
    _write(tmp_path / "problems" / "notes.txt", "not a record\n")
    result = _invoke(["engine", "solve", str(tmp_path / "problems")])
    assert result.exit_code == 1
    assert _error(result) == (
        f"problem folder {tmp_path / 'problems'} holds no calculation records "
        "(*.json files with goal and conditions)"
    )


@pytest.mark.parametrize(
    ("command", "what"),
    [("synth stats {}", "dataset folder"), ("synth mts-stats {}", "MTS output folder"),
     ("train export {} --out {out}", "export source")],
    ids=["synth-stats", "mts-stats", "train-export"],
)  # fmt: skip
def test_a_file_given_for_a_folder_is_called_a_file(tmp_path: Path, command: str, what: str) -> None:
    path = _write(tmp_path / "file.json", "{}\n")
    result = _invoke(_args(command, path, tmp_path))
    assert result.exit_code == 1, result.output
    assert _error(result) == f"{what} {path} is a file, not a folder"
    missing = _invoke(_args(command, tmp_path / "nope", tmp_path))
    assert missing.exit_code == 1 and _error(missing) == f"{what} {tmp_path / 'nope'} does not exist"


# --- records of the wrong kind ------------------------------------------------------------------------


def test_render_on_records_of_another_kind_names_the_line_and_the_field(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    pool = POOLS.read_text(encoding="utf-8").splitlines()[0]
    path = _write(tmp_path / "pools.jsonl", f"\n{pool}\n")
    result = _invoke(["synth", "render", str(path), "--out", str(tmp_path / "img")])
    assert result.exit_code == 1
    assert re.fullmatch(
        re.escape(f"records file {path} line 2 is not a synthesized record (from `geo synth generate`): ")
        + r"task: Field required \(and \d+ more\)",
        _error(result),
    )
    assert not (tmp_path / "img").exists()


def test_render_on_a_dataset_folder_with_a_foreign_shard_gives_one_line(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    _write(tmp_path / "ds" / "data" / "shard-00000.jsonl", POOLS.read_text(encoding="utf-8").splitlines()[0])
    result = _invoke(["synth", "render", str(tmp_path / "ds"), "--out", str(tmp_path / "img")])
    assert result.exit_code == 1
    assert re.fullmatch(
        r"DatasetError: shard-00000\.jsonl line 1: not a synthesized record: task: Field required \(and \d+ more\)",
        _error(result),
    )


def test_a_validation_dump_inside_a_package_error_becomes_its_first_problem(tmp_path: Path) -> None:
    config = _write(tmp_path / "run.yaml", "learning_rate: 0.1\n")
    result = _invoke(["train", "sft", "--config", str(config)])
    assert result.exit_code == 1
    assert re.fullmatch(
        re.escape(f"ConfigError: config {config} is invalid: ") + r"\w+: Field required \(and \d+ more\)",
        _error(result),
    )


# --- integer ids --------------------------------------------------------------------------------------


def test_integer_ids_are_read_as_their_text_by_tts_report(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    lines = POOLS.read_text(encoding="utf-8").splitlines()[:3]
    pools = [{**json.loads(line), "id": number} for number, line in enumerate(lines, start=1)]
    path = _write(tmp_path / "pools.jsonl", "".join(json.dumps(p) + "\n" for p in pools))
    result = _invoke(["tts", "report", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text(encoding="utf-8"))
    assert summary["problems"] == 3


def test_a_boolean_is_not_an_id(tmp_path: Path) -> None:
    path = _write(tmp_path / "pools.jsonl", json.dumps({"id": True, "traces": {"pal": [1.0]}}) + "\n")
    result = _invoke(["tts", "report", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert (
        _error(result) == f"StrategyConfigError: {path}:1: invalid pool (id: Input should be a valid string)"
    )


def test_integer_ids_are_read_as_their_text_by_prm_eval(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")

    def candidate(answer: float, verdict: str) -> dict[str, object]:
        return {
            "answer": answer,
            "step_scores": [0.9 if verdict == "all_correct" else 0.1],
            "verdict": verdict,
        }

    run = {
        "id": 7,
        "answer": 5.0,
        "sampled": [candidate(5.0, "all_correct"), candidate(3.0, "has_incorrect")],
    }
    path = _write(tmp_path / "runs.jsonl", json.dumps(run) + "\n")
    result = _invoke(["prm", "eval", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "written": [str(tmp_path / "r" / "report.md"), str(tmp_path / "r" / "accuracy_vs_n.png")],
        "problems": 1,
        "bad_lines": 0,
    }


def test_integer_ids_of_a_pgps_list_are_read_as_their_text(tmp_path: Path) -> None:
    sample = json.loads(files("geodsl").joinpath("samples", "pgps9k_test_sample.json").read_text("utf-8"))
    records = [{**record, "id": number} for number, record in enumerate(list(sample.values())[:3], start=1)]
    path = _write(tmp_path / "list.json", json.dumps(records))
    result = _invoke(["dsl", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert [r.id for r in load_pgps(path)] == ["1", "2", "3"]


def test_integer_ids_pass_through_geo_dsl_unchanged() -> None:
    line = json.dumps({"id": 1, "program": "Gougu N0 N1 V0 Get V0", "numbers": ["3", "4"]}) + "\n"
    result = _invoke(["dsl", "exec", "-"], stdin=line.encode())
    assert result.exit_code == 0 and json.loads(result.stdout) == {"id": 1, "answer": 5.0, "error": None}


# --- geo pipeline check -------------------------------------------------------------------------------


def test_pipeline_check_does_not_call_data_ready_when_its_inputs_are_missing() -> None:
    result = _invoke(["pipeline", "check", "paper-pa-sft-qwen3vl8b"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "  data: ready" not in lines
    data = next(line for line in lines if line.startswith("  data: "))
    assert data == (
        "  data: not available (inputs missing here: data/PGPS9K/PGPS9K_train.json, data/PGPS9K/Diagram, "
        "data/PGPS9K/PGPS9K_test.json)"
    )
    assert "  mts: blocked (needs data)" in lines
    assert lines[-1] == "not runnable here as is"


def test_pipeline_check_exits_0_when_the_run_can_start_here() -> None:
    result = _invoke(["pipeline", "check", "cpu"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "runnable here"


# --- geo synth aux-data --from-file -------------------------------------------------------------------


def test_aux_data_reports_every_problem_it_cannot_use_and_goes_on(tmp_path: Path) -> None:
    problems = {
        "good": GOOD,
        "coincide": COINCIDE,
        "malformed": "a b c = triangle a b c; d midpoint d a b ? para d e b c",
        "no-goal": "a b c = triangle a b c",
    }
    path = _write(tmp_path / "p.txt", "".join(f"{name}\n{line}\n" for name, line in problems.items()))
    out = tmp_path / "aux.jsonl"
    result = _invoke(["synth", "aux-data", "--from-file", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"error: problem file {path}: problem 'coincide': ConstructionFailed: no valid diagram after 100 "
        "attempts at clause 'd = midpoint d a b': d coincides with an existing point",
        f"error: problem file {path}: problem 'malformed': ProblemSyntaxError: expected "
        "'points = constructions' in clause 'd midpoint d a b'",
        f"error: problem file {path}: problem 'no-goal': it has no goal (add '? predicate points')",
    ]
    assert result.stdout == f"0 examples -> {out} (of 4 problems: 0 not proved in 5s, 3 failed)\n"
    assert out.read_text(encoding="utf-8") == ""


def test_aux_data_fails_when_no_problem_could_be_used(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.txt", f"coincide\n{COINCIDE}\n")
    result = _invoke(["synth", "aux-data", "--from-file", str(path), "--out", str(tmp_path / "aux.jsonl")])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"error: problem file {path}: none of its 1 problems could be used (see above)"
    )


# --- one line whatever the terminal width ---------------------------------------------------------------


def _geo(args: list[str], columns: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    return subprocess.run(
        [str(Path(sys.executable).with_name("geo")), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_errors_print_on_one_line_at_a_narrow_terminal(tmp_path: Path) -> None:
    deep = tmp_path / "a-rather-long-folder-name" / "and-another-one-inside-it"
    path = _write(deep / "problems-with-bad-bytes.txt", NOT_UTF8)
    done = _geo(["engine", "solve", str(path)], columns=40)
    assert done.returncode == 1
    assert (
        done.stderr
        == f"error: problem file {path} is not UTF-8 text (invalid start byte at line 1, byte 0)\n"
    )
    usage = _geo(["synth", "render", str(path)], columns=40)
    assert usage.returncode == 2
    assert usage.stderr == "error: Missing option '--out' / '-o'. (see 'geo synth render --help')\n"


# --- no assert guards a production path -----------------------------------------------------------------


def _asserts(source: Path) -> list[str]:
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    return [
        f"{source.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Assert)
    ]


def test_no_assert_statement_in_the_shipped_code() -> None:
    sources = sorted((*ROOT.glob("packages/*/src/**/*.py"), *ROOT.glob("apps/*/src/**/*.py")))
    assert len(sources) > 50
    found = [where for source in sources for where in _asserts(source)]
    assert found == [], "assert is stripped by python -O: use a real check or a typing-only construct"
