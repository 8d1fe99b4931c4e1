"""The lenient parser against a committed corpus of deliberately damaged critiques."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geoprm import CritiqueParseError, parse_critique, score_critique

DAMAGED = Path(__file__).parent / "data" / "damaged"
EXPECTED: dict[str, dict[str, Any]] = json.loads((DAMAGED / "expected.json").read_text(encoding="utf-8"))


def test_corpus_and_expectations_match() -> None:
    assert sorted(path.name for path in DAMAGED.glob("*.txt")) == sorted(EXPECTED)
    assert len(EXPECTED) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lenient_parser_recovers_the_judgements(name: str) -> None:
    expected = EXPECTED[name]
    text = (DAMAGED / name).read_bytes().decode("utf-8")
    parsed = parse_critique(text, strict=False)
    assert list(parsed.judgements) == expected["judgements"]
    assert (parsed.correction is not None) == expected["correction"]
    assert (parsed.critique is not None) == expected["valid"]
    assert sorted({problem.kind for problem in parsed.problems}) == expected["kinds"]
    if parsed.critique is not None:
        assert parsed.critique.judgements == tuple(expected["judgements"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_strict_parser_rejects_every_damaged_text(name: str) -> None:
    text = (DAMAGED / name).read_bytes().decode("utf-8")
    with pytest.raises(CritiqueParseError):
        parse_critique(text)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scoring_a_damaged_critique_never_raises(name: str) -> None:
    text = (DAMAGED / name).read_bytes().decode("utf-8")
    scores = score_critique(text, [])
    assert len(scores.steps) == len(EXPECTED[name]["judgements"])
    assert all(step.score is None and step.reason for step in scores.steps)
