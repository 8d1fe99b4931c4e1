"""The PGPS grammar from geodsl's registry drives geotts's constrained decoding (needs geodsl and the transformers extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from geotts import ChatMessage, GenerationRequest, SamplingParams
from geotts.backends.transformers import ProgramGrammar, TransformersSampler
from geotts.testing import tiny_qwen_vl

geodsl = pytest.importorskip("geodsl")
ops = pytest.importorskip("geodsl.ops")
data = pytest.importorskip("geodsl.data")

GRAMMAR = ProgramGrammar.from_data(ops.program_grammar())


def test_the_grammar_data_is_the_registry() -> None:
    assert GRAMMAR.operators == {n: (s.min_arity, s.max_arity) for n, s in ops.OPERATORS.items()}
    assert GRAMMAR.constants == ops.VOCABULARY_CONSTANTS
    assert GRAMMAR.terminator == "Get"


def test_every_bundled_pgps_program_is_grammatical_in_both_numberings() -> None:
    records = data.load_sample()
    assert len(records) == 120
    rejected = [
        program
        for r in records
        for program, numbers in ((r.expression, r.numbers), (r.dedup_expression, r.dedup_numbers))
        if not GRAMMAR.accepts(" ".join(program.split()), numbers)
    ]
    assert rejected == []


def test_constrained_candidates_parse_with_geodsl(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    grammar = GRAMMAR.model_copy(update={"max_steps": 3})
    sampler = TransformersSampler.from_pretrained(
        tiny_qwen_vl(tmp_path / "causal", kind="causal_lm", seed=2), program_grammar=grammar
    )
    numbers = ("24", "x", "y", "30")
    req = GenerationRequest(
        messages=(ChatMessage(role="user", content="Find y."),),
        trace_type="program",
        n=6,
        params=SamplingParams(temperature=1.0, max_tokens=150, seed=0),
        assistant_prefix="Solution:\n",
        numbers=numbers,
    )
    for c in sampler.generate([req])[0]:
        program = geodsl.parse_program(c.text)
        assert program.steps[-1].op == "Get"
        for step in program.steps:
            for operand in step.operands:
                if operand.kind == "N":
                    assert int(operand.token[1:]) < len(numbers)
                if operand.kind == "letter":
                    assert operand.token in ("x", "y")
