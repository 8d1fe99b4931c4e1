"""The program grammar for instantiated programs (``Sum 105 y 180 Get y``), checked against geodsl's reader.

Instantiated programs name the problem's numbers by their values and write constants as numbers;
they are what multi-trace synthesis stores as the program trace and what models trained on those
traces write. ``data/instantiated_programs.jsonl`` holds 30 program traces of a CPU-trained
pipeline's MTS PA records, each with its problem's N list: 18 chosen so that together they use
every operator, value shape (decimals, ``2\\sqrt{3}``, ``3x+42``, a number that is a letter, a
repeated number) and constant that occur in the 5,108 traces of that run, and 12 drawn at random.
The check over the whole file is the command in docs/geotts.md. Needs geodsl (and torch with
transformers for the decoding test).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from geotts import BeamParams, ChatMessage, GenerationRequest, SamplingParams
from geotts.backends.transformers import ProgramGrammar, TransformersSampler
from geotts.testing import tiny_qwen_vl

geodsl = pytest.importorskip("geodsl")
ops = pytest.importorskip("geodsl.ops")
data = pytest.importorskip("geodsl.data")
traces = pytest.importorskip("geodsl.traces")

GRAMMAR = ProgramGrammar.from_data(ops.program_grammar("values"))
INDEXED = ProgramGrammar.from_data(ops.program_grammar())
FIXTURE = Path(__file__).parent / "data" / "instantiated_programs.jsonl"


def fixture_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_constants_are_spelled_as_instantiation_writes_them() -> None:
    written = [
        geodsl.instantiate(f"Equal V0 {c} Get V0", []).text.split()[2] for c in ops.VOCABULARY_CONSTANTS
    ]
    assert GRAMMAR.operands == "values"
    assert GRAMMAR.constants == tuple(written)
    assert "180" in GRAMMAR.constants and "0.5" in GRAMMAR.constants
    assert INDEXED.operands == "indexed" and INDEXED.constants == ops.VOCABULARY_CONSTANTS


def test_every_fixture_trace_is_grammatical_and_reads_back_to_its_answer() -> None:
    records = fixture_records()
    assert len(records) == 30
    for r in records:
        program = traces.reasoning_part(r["target"])
        assert GRAMMAR.accepts(program, r["numbers"]), (r["id"], program, r["numbers"])
        assert not INDEXED.accepts(program, r["numbers"]), program
        answer = traces.candidate_answer(r["target"], "program", numbers=r["numbers"])
        assert answer == pytest.approx(float(r["answer"]), abs=1e-3), r["id"]


def test_every_instantiated_gold_program_of_the_bundled_samples_is_grammatical() -> None:
    rejected = [
        text
        for name in data.SAMPLES
        for r in data.load_sample(name)
        for program, numbers in ((r.expression, r.numbers), (r.dedup_expression, r.dedup_numbers))
        if not GRAMMAR.accepts(text := geodsl.instantiate(" ".join(program.split()), numbers).text, numbers)
    ]
    assert rejected == []


@pytest.mark.parametrize(
    ("program", "ok"),
    [
        ("Sum 105 y 180 Get y", True),
        ("Sum 105 y 180 Get 105", True),
        ("Sum 105 V0 0.5 Get V0", True),
        ("Sum N0 N1 C180 Get N1", False),  # the indexed form
        ("Sum 105 y C180 Get y", False),  # an indexed constant
        ("Sum 106 y 180 Get y", False),  # no number of this problem
        ("Sum 10 y 180 Get y", False),  # a prefix of a number is not the number
        ("Sum 105 y 180 Get 180", False),  # a constant is no answer
        ("Sum 105 y 7 Get y", False),  # 7 is neither a number nor a vocabulary constant
        ("Sum 105 y 180", False),  # no Get step
        ("Gougu 105 y Get y", False),  # Gougu takes three operands
        ("Sum 105 x 180 Get x", False),  # x is no letter of the numbers
    ],
)
def test_values_grammar_takes_the_problems_values_only(program: str, ok: bool) -> None:
    assert GRAMMAR.accepts(program, ("105", "y")) is ok


def test_number_operands_of_each_mode() -> None:
    numbers = ("3x+5", "4\\sqrt{3}", "3x+5", "y", "Sum", "V1", "", "a b")
    assert GRAMMAR.number_operands(numbers) == ("3x+5", "4\\sqrt{3}", "y")
    assert INDEXED.number_operands(numbers) == tuple(f"N{i}" for i in range(8))


def test_every_offered_spelling_of_the_shipped_numbers_reads_back_as_that_operand() -> None:
    lists = [r.numbers for name in data.SAMPLES for r in data.load_sample(name)]
    lists += [tuple(r["numbers"]) for r in fixture_records()]
    spellings = {v for numbers in lists for v in GRAMMAR.number_operands(numbers)}
    assert len(spellings) > 100
    misread: list[str] = []
    for v in sorted(spellings):
        text = f"Equal {v} V0 Get V0"
        parsed = geodsl.parse_instantiated(text)
        operand = parsed.program.steps[0].operands[0]
        read = parsed.numbers[operand.index] if operand.kind == "N" else operand.token
        if traces.extract_program(text) != text or read != v:
            misread.append(v)
    assert misread == []


def operand_errors(program: str, numbers: tuple[str, ...]) -> list[str]:
    """Operands of ``program`` that are no operator, V, letter of the numbers, number or constant."""
    letters = {c for v in numbers for c in re.sub(r"\\[A-Za-z]+", "", v) if c.isalpha() and c.islower()}
    allowed = {*ops.OPERATORS, *numbers, *letters, *GRAMMAR.constants}
    return [t for t in program.split(" ") if t not in allowed and not re.fullmatch(r"V\d", t)]


def test_constrained_decoding_writes_programs_geodsl_reads(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    torch.set_num_threads(1)
    sampler = TransformersSampler.from_pretrained(
        tiny_qwen_vl(tmp_path / "causal", kind="causal_lm", seed=2),
        program_grammar=GRAMMAR.model_copy(update={"max_steps": 3}),
    )
    numbers = ("3\\sqrt{2}", "12.5", "3x+5", "y", "30")

    def request(params: SamplingParams | BeamParams, n: int) -> GenerationRequest:
        return GenerationRequest(
            messages=(ChatMessage(role="user", content="Find y."),),
            trace_type="program",
            n=n,
            params=params,
            assistant_prefix="Solution:\n",
            numbers=numbers,
        )

    outs = sampler.generate(
        [
            request(SamplingParams(temperature=0.0, max_tokens=150), 1),
            request(SamplingParams(temperature=1.0, max_tokens=150, seed=0), 8),
            request(BeamParams(max_tokens=150), 3),
        ]
    )
    programs = [c.text for comps in outs for c in comps]
    assert len(programs) == 12
    for program in programs:
        text = "Solution:\n" + program
        trace = traces.reasoning_part(text)
        assert GRAMMAR.accepts(program, numbers), program
        assert operand_errors(program.lstrip(" \n"), numbers) == [], program
        assert traces.detect_format(trace) == "program", program
        assert traces.extract_program(trace) == program.lstrip(" \n")
        try:  # a random program may have no solution; it must never fail to parse or bind
            answer: float | None = traces.trace_answer(trace, "program", numbers=numbers)
        except geodsl.errors.ExecutionError:
            answer = None
        assert traces.candidate_answer(text, "program", numbers=numbers) == answer
    used = {t for p in programs for t in p.split(" ")}
    assert used & set(numbers), programs  # the problem's values are written, not only constants
