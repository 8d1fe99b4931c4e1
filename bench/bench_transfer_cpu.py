"""Where transfer fails: greedy accuracy by problem feature, synthetic held-out split beside the real ones.

Reads one finished evaluate stage (``runs/<name>/evaluate``: its ``results.json`` and each split's
``candidates.jsonl``) and the PGPS files the splits came from, and prints for every feature of the
problem statement (numbered angles, algebraic values, equality chains, ...) the share of each split's
problems that have it and the greedy accuracy of one trace type with and without it. Put the
in-distribution split first (the held-out split of a model trained on synthetic problems): the columns
show where the real splits' problems differ from it and how much each feature costs. A second table
gives each split's accuracy and the share of greedy answers that did not execute.

Usage:
    uv run python bench/bench_transfer_cpu.py --run runs/bench-mixtures/mts_all_2400/run \
        --split heldout=runs/cpu-train/data/heldout.json \
        --split pgps9k_test=../shared/data/pgps/pgps9k_test.json \
        --split geometry3k_test=../shared/data/pgps/geometry3k_test.json \
        [--train runs/cpu-train/data/train.json] [--trace program]

``--train`` adds one feature: the question, with values, point names and variables blanked, is one
that some training problem asks. ``--run`` is a pipeline work folder whose evaluate stage covered the named splits (for example one of
``bench/bench_mixtures_cpu.py``'s). Nothing is generated: the figures are those of that run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Record = Mapping[str, Any]
_OPERAND = re.compile(r"^(N|V|C)\d|^Get$")


def _sem(r: Record) -> list[str]:
    return [str(s) for s in r.get("parsing_sem_seqs", [])]


def _algebraic(r: Record) -> bool:
    for clause in _sem(r):
        if "=" in clause:
            value = clause.rsplit("=", 1)[1].replace("\\sqrt", "").replace("\\frac", "")
            if re.search(r"[a-z]", value) and re.search(r"\d", value):
                return True
    return False


def _operators(r: Record) -> int:
    return sum(1 for t in str(r.get("expression", "")).split() if t[:1].isupper() and not _OPERAND.match(t))


def question_form(text: str) -> str:
    """The question with its values, point names and variables blanked: ``Find the value of v.``"""
    text = re.sub(r"\d+(\.\d+)?", "#", text)
    text = re.sub(r"\b[A-Z]+\b", "P", text)
    return re.sub(r"\b[a-z]\b", "v", text).strip()


FEATURES: tuple[tuple[str, Callable[[Record], bool]], ...] = (
    (
        "numbered angle (m \\angle 1)",
        lambda r: bool(re.search(r"\\angle \d", " ".join(_sem(r)) + str(r["text"]))),
    ),
    ("algebraic value (AB = 3x+5)", _algebraic),
    ("equality chain (a = b = c)", lambda r: any(s.count("=") > 1 for s in _sem(r))),
    ("arc measure (\\widehat)", lambda r: "\\widehat" in " ".join(_sem(r)) + str(r["text"])),
    ("a value in the question text", lambda r: bool(re.search(r"\d", str(r["text"])))),
    ("more than 4 semantic clauses", lambda r: len(_sem(r)) > 4),
    ("more than 6 structure clauses", lambda r: len(r.get("parsing_stru_seqs", [])) > 6),
    ("one-operator reference program", lambda r: _operators(r) == 1),
    ("3+ operators in the reference", lambda r: _operators(r) >= 3),
)


def _records(path: Path) -> dict[str, Record]:
    data = json.loads(path.read_text())
    if isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    return {str(i): v for i, v in enumerate(data)}


def _correct(value: float | None, gold: float) -> bool:
    return value is not None and abs(value - gold) <= max(1e-2, 1e-3 * abs(gold))


def _split_rows(
    run: Path, name: str, records: Mapping[str, Record], trace: str
) -> list[tuple[Record, bool, bool]]:
    results = json.loads((run / "evaluate" / "results.json").read_text())
    splits = results.get("splits", {})
    if name not in splits:
        sys.exit(
            f"--split {name}: the evaluate stage in {run} has no such split (it has {', '.join(splits)})"
        )
    path = run / "evaluate" / splits[name]["folder"] / "candidates.jsonl"
    rows: list[tuple[Record, bool, bool]] = []
    for line in path.read_text().splitlines():
        cand = json.loads(line)
        rec = records.get(str(cand["id"]))
        if rec is None:
            sys.exit(f"--split {name}: problem {cand['id']!r} of {path} is not in the split file")
        greedy = cand.get("greedy", {})
        if trace not in greedy:
            sys.exit(f"--trace {trace}: not evaluated in {path} (it has {', '.join(greedy)})")
        value = greedy[trace]
        rows.append((rec, _correct(value, float(cand["gold"])), value is None))
    return rows


def _pct(hits: int, n: int) -> str:
    return f"{100 * hits / n:5.1f}" if n else "    -"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    ap.add_argument(
        "--run", type=Path, required=True, help="pipeline work folder with a finished evaluate stage"
    )
    ap.add_argument(
        "--split", action="append", required=True, help="NAME=PGPS_FILE, in-distribution split first"
    )
    ap.add_argument("--trace", default="program", help="trace type whose greedy answers are scored")
    ap.add_argument(
        "--train", type=Path, help="the training corpus (PGPS file): adds 'question form seen in training'"
    )
    args = ap.parse_args()
    features = list(FEATURES)
    if args.train is not None:
        if not args.train.is_file():
            sys.exit(f"--train {args.train}: no such file")
        seen = {question_form(str(r["text"])) for r in _records(args.train).values()}
        features.append(("question form seen in training", lambda r: question_form(str(r["text"])) in seen))
    if not (args.run / "evaluate" / "results.json").is_file():
        sys.exit(f"--run {args.run}: no evaluate/results.json (run the evaluate stage first)")
    table: dict[str, list[tuple[Record, bool, bool]]] = {}
    for value in args.split:
        name, sep, file = value.partition("=")
        if not sep or not Path(file).is_file():
            sys.exit(f"--split {value!r}: expected NAME=PGPS_FILE with an existing file")
        table[name] = _split_rows(args.run, name, _records(Path(file)), args.trace)
    names = list(table)
    print(
        f"# greedy {args.trace} accuracy (%); per split: share of its problems with the feature, accuracy with it,"
    )
    print("# accuracy without it")
    print(f"{'feature':32s}" + "".join(f" | {n[:20]:>20}" for n in names))
    print(f"{'':32s}" + " | share  with   w/o" * len(names))
    for label, has in features:
        cells: list[str] = []
        for n in names:
            rows = table[n]
            yes = [ok for rec, ok, _ in rows if has(rec)]
            no = [ok for rec, ok, _ in rows if not has(rec)]
            cells.append(
                f" | {_pct(len(yes), len(rows))} {_pct(sum(yes), len(yes))} {_pct(sum(no), len(no))}"
            )
        print(f"{label:32.32s}{''.join(cells)}")
    print()
    print("# all problems: accuracy and greedy answers that did not execute (%)")
    for n in names:
        rows = table[n]
        print(f"{n:16s} problems {len(rows):5d}  accuracy {_pct(sum(r[1] for r in rows), len(rows))}"
              f"  no answer {_pct(sum(r[2] for r in rows), len(rows))}")  # fmt: skip


if __name__ == "__main__":
    main()
