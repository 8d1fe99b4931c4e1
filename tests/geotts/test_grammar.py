"""Decoding constrained to a program grammar, on a tiny random Qwen2 causal LM built offline.

A random model writes noise; with the grammar every candidate must still be a program that only
names the problem's numbers. The checker here is independent of the automaton it tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from geotts import (
    BeamParams,
    CGMTEConfig,
    ChatMessage,
    Completion,
    ConsensusEnsemble,
    GenerationRequest,
    Problem,
    SamplingParams,
    StrategyConfigError,
)
from geotts.backends._grammar import TokenGrammar, problem_letters
from geotts.backends.transformers import ProgramGrammar, TransformersSampler
from geotts.testing import FunctionSampler, tiny_qwen_vl

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)

#: A slice of the PGPS operators with their operand counts (geodsl's registry has all 34).
OPERATORS: dict[str, tuple[int, int | None]] = {
    "Gougu": (3, 3),
    "Sum": (3, None),
    "Proportion": (4, 5),
    "Equal": (2, 2),
    "Circle_R_Area": (2, 3),
    "Get": (1, 1),
}
GRAMMAR = ProgramGrammar(operators=OPERATORS, constants=("C2", "C0.5", "C180"), max_steps=3)
NUMBERS = ("12", "5", "3x+1")
PREFIX = "Diagram relations:\nAB = 12\nSolution:\n"


def program_errors(text: str, numbers: Sequence[str]) -> list[str]:
    """What is wrong with ``text`` as a program over ``numbers`` (empty when nothing is)."""
    body = text.lstrip(" \n")
    if not body or "  " in body or body != body.rstrip():
        return [f"spacing of {text!r}"]
    steps: list[tuple[str, list[str]]] = []
    for tok in body.split(" "):
        if tok in OPERATORS:
            steps.append((tok, []))
        elif not steps:
            return [f"{tok!r} before the first operator"]
        else:
            steps[-1][1].append(tok)
    errors: list[str] = []
    introduced = [0]
    for i, (op, args) in enumerate(steps):
        low, high = OPERATORS[op]
        if len(args) < low or (high is not None and len(args) > high):
            errors.append(f"{op} with {len(args)} operands")
        if (op == "Get") != (i == len(steps) - 1):
            errors.append(f"Get is not exactly the last step: {body!r}")
        errors.extend(e for a in args if (e := operand_error(op, a, numbers, introduced)))
    return errors


def operand_error(op: str, a: str, numbers: Sequence[str], introduced: list[int]) -> str | None:
    """What is wrong with operand ``a`` of ``op`` (``introduced[0]``: V unknowns so far, updated)."""
    if m := re.fullmatch(r"N(\d+)", a):
        return f"{a} but the problem has {len(numbers)} numbers" if int(m.group(1)) >= len(numbers) else None
    if m := re.fullmatch(r"V(\d+)", a):
        j = int(m.group(1))
        bad = j > introduced[0] or (op == "Get" and j == introduced[0])
        introduced[0] = max(introduced[0], j + 1)
        return f"{a} used before it was introduced" if bad else None
    if re.fullmatch(r"[a-z]", a):
        return None if a in problem_letters(numbers) else f"letter {a} not in the numbers"
    return None if a in GRAMMAR.constants and op != "Get" else f"bad operand {a!r} of {op}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "causal", kind="causal_lm")


@pytest.fixture(scope="module")
def constrained(folder: Path) -> TransformersSampler:
    return TransformersSampler.from_pretrained(folder, program_grammar=GRAMMAR)


@pytest.fixture(scope="module")
def free(constrained: TransformersSampler) -> TransformersSampler:
    return TransformersSampler(constrained.model, constrained.tokenizer)


def request(
    params: SamplingParams | BeamParams,
    n: int = 1,
    *,
    prefix: str = PREFIX,
    numbers: tuple[str, ...] | None = NUMBERS,
    trace: str = "program",
) -> GenerationRequest:
    return GenerationRequest(
        messages=(ChatMessage(role="user", content="Find x. Give a symbolic solution program."),),
        trace_type=trace,
        n=n,
        params=params,
        assistant_prefix=prefix,
        numbers=numbers,
    )


GREEDY = SamplingParams(temperature=0.0, max_tokens=120)
SAMPLED = SamplingParams(temperature=1.0, max_tokens=120, seed=3)


def test_constrained_greedy_sampled_and_beam_candidates_are_programs(
    constrained: TransformersSampler,
) -> None:
    reqs = [request(GREEDY), request(SAMPLED, 6), request(BeamParams(max_tokens=120), 3)]
    outs = constrained.generate(reqs)
    texts = [c.text for comps in outs for c in comps]
    assert len(texts) == 10
    for comps in outs:
        for c in comps:
            assert program_errors(c.text, NUMBERS) == [], c.text
            assert c.finish_reason == "stop"
    assert any(re.search(r"\bN\d", t) for t in texts), texts  # the numbers are used, within range


def test_unconstrained_random_output_is_mostly_no_program(free: TransformersSampler) -> None:
    outs = free.generate([request(SAMPLED, 6)])[0]
    bad = [c.text for c in outs if program_errors(c.text, NUMBERS)]
    assert len(bad) >= 5


@pytest.mark.parametrize("numbers", [(), ("7",), tuple(str(i) for i in range(12))])
def test_only_the_problems_numbers_are_named(
    constrained: TransformersSampler, numbers: tuple[str, ...]
) -> None:
    outs = constrained.generate(
        [request(SamplingParams(temperature=1.0, max_tokens=120, seed=5), 8, numbers=numbers)]
    )
    for c in outs[0]:
        assert program_errors(c.text, numbers) == [], c.text
        assert c.finish_reason == "stop"


def test_without_a_header_the_whole_answer_is_the_program(folder: Path) -> None:
    s = TransformersSampler.from_pretrained(
        folder, program_grammar=GRAMMAR.model_copy(update={"header": None})
    )
    outs = s.generate([request(SAMPLED, 4, prefix="")])[0]
    for c in outs:
        assert program_errors(c.text, NUMBERS) == [], c.text


def test_a_mixed_batch_constrains_only_program_requests(
    folder: Path, constrained: TransformersSampler
) -> None:
    s = TransformersSampler(constrained.model, constrained.tokenizer, batch_size=2, program_grammar=GRAMMAR)
    prog, pal = s.generate([request(SAMPLED, 2), request(SAMPLED, 2, trace="pal", numbers=None)])
    assert all(program_errors(c.text, NUMBERS) == [] for c in prog)
    assert all(program_errors(c.text, NUMBERS) for c in pal)


def test_a_token_that_finishes_the_header_and_goes_on_with_no_program_is_banned_before_it(
    constrained: TransformersSampler,
) -> None:
    tok = constrained.tokenizer
    ids = {tok.decode([i]): i for i in range(len(tok))}
    assert " relations" in ids and " rela" in ids  # pieces of the tiny tokenizer's corpus
    g = TokenGrammar(GRAMMAR.model_copy(update={"header": "rela"}), tok, sorted(constrained._eos))
    auto, state = g.automaton(request(GREEDY, prefix="line A B\n"), 0)
    is_free, banned = g.allowed(auto, state)
    assert is_free
    assert ids[" relations"] in banned  # "rela" then "tions": not an operator
    assert ids[" rela"] not in banned and ids[" re"] not in banned


def test_after_the_terminator_only_the_end_of_sequence_may_follow(constrained: TransformersSampler) -> None:
    g = constrained.grammar
    assert g is not None
    auto, state = g.automaton(request(GREEDY, prefix=PREFIX + "Gougu N0 N1 V0 Get V0"), 0)
    assert g.allowed(auto, state) == (False, sorted(constrained._eos))
    auto, state = g.automaton(request(GREEDY, prefix=PREFIX + "Gougu N0 N1 V0 Get"), 0)
    allowed = {constrained.tokenizer.decode([i]) for i in g.allowed(auto, state)[1]}
    assert " V" in allowed and " x" in allowed and " N" in allowed
    assert " C" not in allowed and " Sum" not in allowed and "<|im_end|>" not in allowed


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("Gougu N0 N1 N3 Get V0", "N3 of three numbers"),
        ("Gougu N0 N1 V1 Get V1", "V1 before V0"),
        ("Gougu  N0 N1 V0 Get V0", "two spaces"),
        ("Gougu N0 N1 Get N0", "Gougu takes three operands"),
        ("Gougu N0 N1 V0 N2 Get V0", "Gougu takes three operands"),
        ("Get V0", "V0 never introduced"),
        ("Get C2", "a constant is no answer"),
        ("Gougu N0 N1 y Get x", "y is no letter of the numbers"),
        ("Sum N0 N1 V0 Get V0 Get V0", "a step after the terminator"),
        ("Gcos N0 N1 V0 Get V0", "an operator the grammar lacks"),
        ("Sum N0 N1 V0 Sum V0 N1 V1 Sum V1 N0 V2 Sum V2 N1 V3 Get V3", "more than max_steps steps"),
    ],
)
def test_ungrammatical_prefixes_are_refused(constrained: TransformersSampler, program: str, why: str) -> None:
    g = constrained.grammar
    assert g is not None
    with pytest.raises(StrategyConfigError, match="is not the start of a program"):
        g.automaton(request(GREEDY, prefix=PREFIX + program), 0)


@pytest.mark.parametrize(
    "program", ["Gougu N0 N1 V0 Get V0", "Proportion N0 V0 N1 N2 C2 Get V0", "Get x", "Equal x N1 Get N2"]
)
def test_grammatical_programs_are_accepted(constrained: TransformersSampler, program: str) -> None:
    g = constrained.grammar
    assert g is not None
    auto, state = g.automaton(request(GREEDY, prefix=PREFIX + program), 0)
    assert auto.accepting(state)


def test_a_program_request_without_numbers_is_refused_in_one_line(constrained: TransformersSampler) -> None:
    with pytest.raises(StrategyConfigError, match=r"request 0 \(trace 'program'\) has no numbers") as info:
        constrained.generate([request(GREEDY, numbers=None)])
    assert "\n" not in str(info.value)


def test_grammar_data_is_validated() -> None:
    data = {"operators": {"Gougu": [3, 3], "Get": [1, 1]}, "constants": ["C2"]}
    assert ProgramGrammar.from_data(data, max_steps=2).operators["Gougu"] == (3, 3)
    with pytest.raises(StrategyConfigError, match="terminator 'Get' is not an operator"):
        ProgramGrammar.from_data({"operators": {"Gougu": [3, 3]}})
    with pytest.raises(StrategyConfigError, match=r"operand counts 3\.\.2"):
        ProgramGrammar.from_data({"operators": {"Gougu": [3, 2], "Get": [1, 1]}})
    with pytest.raises(StrategyConfigError, match="'N0' cannot be an operator name"):
        ProgramGrammar.from_data({"operators": {"N0": [1, 1], "Get": [1, 1]}})
    with pytest.raises(StrategyConfigError, match="invalid program grammar: operators"):
        ProgramGrammar.from_data({"operators": "Gougu"})


def test_problem_letters_skip_latex_commands() -> None:
    assert problem_letters(["3x+5", "\\frac{y}{2}", "12", "4\\sqrt{3}"]) == ("x", "y")


def test_strategies_carry_the_problems_numbers_to_the_sampler() -> None:
    sampler = FunctionSampler(lambda r: [Completion(text="1", num_tokens=1)] * r.n)
    problems = [
        Problem(id="a", question="q", metadata={"numbers": ["3", "4"]}),
        Problem(id="b", question="q"),
    ]

    def extractor(completion: Completion, trace_type: str | None, problem: Problem) -> float:
        return 1.0

    ConsensusEnsemble(CGMTEConfig(depth=1, order=("program", "pal"))).run(sampler, problems, extractor)
    seen = {(r.trace_type, r.numbers) for call in sampler.calls for r in call}
    assert seen == {("program", ("3", "4")), ("pal", ("3", "4")), ("program", None), ("pal", None)}
    with pytest.raises(
        StrategyConfigError, match="problem 'c': metadata 'numbers' must be a list of strings"
    ):
        _ = Problem(id="c", question="q", metadata={"numbers": [3]}).numbers


def test_accepts_checks_a_whole_program() -> None:
    assert GRAMMAR.accepts("Gougu N0 N1 V0 Get V0", NUMBERS)
    assert GRAMMAR.accepts("Equal x N1 Get x", NUMBERS)
    assert not GRAMMAR.accepts("Gougu N0 N1 V0", NUMBERS)  # no Get step
    assert not GRAMMAR.accepts("Gougu N0 N2 V0 Get V0", ("12", "5"))  # N2 of two numbers
    assert not GRAMMAR.accepts("Equal x N1 Get x", ("12", "5"))  # no letter in the numbers
