from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from geosynth import (
    PREDICATES,
    Clause,
    Construction,
    ProofStep,
    default_definitions,
    load_problems,
    parse_problem,
    proof_steps,
    solve_one,
)
from geosynth.calc import CalcSolution, CalcStep
from geosynth.engine import Collinear, Midpoint, Parallel, Parallelogram, RightTriangle
from geosynth.synth._text import (
    TextError,
    calc_conclusion,
    calc_solution_text,
    clause_sentence,
    fill,
    given_sentence,
    goal_sentence,
    paraphrase,
    point_label,
    problem_text,
    proof_text,
    relation_sentence,
    text_templates,
)
from geotts import Completion, GenerationRequest
from geotts.testing import FunctionSampler

DATA = Path(__file__).resolve().parents[1] / "data"
PLACEHOLDER = re.compile(r"\{[A-Za-z0-9_]+\}")
# predicates that only appear as side conditions of definitions, never as statements of a problem
SIDE_CONDITIONS = {"eqangle6", "eqratio6"}


def test_every_construction_has_two_sentences_and_two_conditions_using_only_its_arguments() -> None:
    templates = text_templates().constructions
    for name, definition in default_definitions().items():
        assert name in templates, f"no text for construction {name}"
        entry = templates[name]
        assert len(entry.sentences) >= 2 and len(entry.conditions) >= 2
        for template in (*entry.sentences, *entry.conditions):
            used = set(PLACEHOLDER.findall(template))
            assert {u[1:-1] for u in used} <= set(definition.args), f"{name}: {template}"


def test_every_relation_and_goal_kind_has_two_templates() -> None:
    templates = text_templates()
    for name in set(PREDICATES) - SIDE_CONDITIONS:
        assert len(templates.relations.get(name, ())) >= 2, f"relation {name}"
    for kind in ("prove", "length", "angle", "area", "perimeter", "var"):
        assert len(templates.goals[kind]) >= 2
    for kind in ("length", "angle", "area", "perimeter"):
        assert len(templates.givens[kind]) >= 2


@pytest.mark.parametrize("name", sorted(default_definitions()))
def test_each_construction_sentence_names_every_point_and_number(name: str) -> None:
    definition = default_definitions()[name]
    actual = [f"p{i}" for i in range(len(definition.args))]
    params = {a: str(30 + i) for i, a in enumerate(definition.params)}
    args = tuple(params.get(a, actual[i]) for i, a in enumerate(definition.args))
    call = Construction(name=name, args=args)
    outputs = tuple(actual[i] for i, a in enumerate(definition.args) if a in definition.outputs)
    clause = Clause(points=outputs, constructions=(call,))
    for seed in range(6):  # several seeds reach every sentence template
        text = clause_sentence(clause, random.Random(seed))
        assert not PLACEHOLDER.search(text) and "{" not in text
        for i, arg in enumerate(definition.args):
            expected = params[arg] if arg in params else point_label(actual[i])
            assert expected in text, f"{name}: {arg} -> {expected} missing from {text!r}"


def test_problem_text_names_the_right_points_and_asks_the_goal() -> None:
    problem = parse_problem("a b c = triangle a b c; h = foot h a b c; m = midpoint m a b")
    text = problem_text(problem, goal="perp a h b c", rng=random.Random(1))
    assert "ABC" in text or ("A" in text and "B" in text and "C" in text)
    assert re.search(r"\bH\b", text) and re.search(r"\bM\b", text)
    assert "AB" in text or "BA" in text  # the midpoint's segment
    assert "AH" in text and "BC" in text  # the goal's lines
    assert not PLACEHOLDER.search(text)
    # the rng alone picks the wording: same seed, same text; several seeds, several texts
    assert text == problem_text(problem, goal="perp a h b c", rng=random.Random(1))
    assert len({problem_text(problem, goal="perp a h b c", rng=random.Random(s)) for s in range(12)}) > 3


def test_multi_construction_clauses_state_each_condition() -> None:
    problem = parse_problem("a b c d = quadrangle a b c d; e = on_line e a c, on_line e b d")
    for seed in range(4):
        text = clause_sentence(problem.clauses[1], random.Random(seed))
        assert re.search(r"\bE\b", text)
        assert re.search(r"A\w*,? (and )?C|AC", text) and re.search(r"B\w*,? (and )?D|BD", text), text
        assert " and " in text  # both conditions are stated


def test_calculation_goals_and_givens() -> None:
    rng = random.Random(0)
    problem = parse_problem("a b c = triangle a b c; d = midpoint d b c")
    text = problem_text(
        problem, goal="length a d", rng=rng, givens=("length a b = 5", "angle a b c = x + 10")
    )
    assert "AD" in text and "5" in text and "x + 10" in text
    assert goal_sentence("var x", rng).count("x") == 1
    assert "triangle ABC" in goal_sentence("area a b c", random.Random(0))
    assert "quadrilateral ABCD" in goal_sentence("area a b c d", random.Random(0))
    assert "∠ABC" in given_sentence("angle a b c = 40", random.Random(0)) or "angle ABC" in given_sentence(
        "angle a b c = 40", random.Random(0)
    )
    assert "AB" in given_sentence("cong a b c d", random.Random(0))


@pytest.mark.parametrize(
    ("goal", "message"),
    [
        ("", "empty goal"),
        ("length a", "length needs 2"),
        ("angle a b", "angle needs 3"),
        ("var", "takes one variable"),
        ("bogus a b", "unknown predicate"),
    ],
)
def test_bad_goals_are_named(goal: str, message: str) -> None:
    with pytest.raises(TextError, match=message):
        goal_sentence(goal, random.Random(0))


def test_fill_refuses_missing_fields() -> None:
    assert fill("{a} and {b}", {"a": "X", "b": "Y"}) == "X and Y"
    with pytest.raises(TextError, match=r"needs \{c\}"):
        fill("{c}", {"a": "X"})


def test_relations_and_shapes_read_with_their_points() -> None:
    assert relation_sentence(Parallel.of("a", "b", "c", "d")) == "AB ∥ CD"
    assert "M is the midpoint of" in relation_sentence(Midpoint.of("m", "a", "b"))
    assert relation_sentence(Collinear.of("a", "b", "c")) == "A, B and C are collinear"
    assert relation_sentence(Parallelogram.of("a", "b", "c", "d")).endswith("is a parallelogram")
    assert "right angle at A" in relation_sentence(RightTriangle.of("a", "b", "c"))


def test_proof_text_numbers_steps_and_justifies_them() -> None:
    problem = load_problems(DATA / "jgex_sample.txt")[2]
    result, deduction = solve_one(problem, time_limit=30)
    assert result.solved
    steps = proof_steps(problem, deduction)
    text = proof_text(steps)
    lines = text.splitlines()
    assert len(lines) == len(steps) + 1
    for step, line in zip(steps, lines, strict=False):
        assert line.startswith(f"Step {step.number}: ")
        if step.premises:
            assert f"from steps {', '.join(map(str, step.premises))}" in line
    assert lines[-1].startswith("Therefore ")
    assert not PLACEHOLDER.search(text)
    with pytest.raises(TextError):
        proof_text([])


def test_unknown_rules_fall_back_to_their_name() -> None:
    step = ProofStep(number=1, fact=Parallel.of("a", "b", "c", "d"), rule="r99", premises=())
    assert "(r99)" in proof_text([step])


def test_calc_solution_text_ends_with_the_boxed_answer() -> None:
    solution = CalcSolution(
        answer=5.0,
        steps=(
            CalcStep(number=1, rule="given", statement="AB = 3", quantities=("AB",), value=3.0),
            CalcStep(number=2, rule="given", statement="BC = 4", quantities=("BC",), value=4.0),
            CalcStep(
                number=3, rule="pythagoras", statement="AC^2 = AB^2 + BC^2", quantities=("AB", "AC", "BC")
            ),
            CalcStep(number=4, rule="goal", statement="AC = 5", quantities=(), value=5.0, premises=(1, 2, 3)),
        ),
    )
    text = calc_solution_text(solution)
    lines = text.splitlines()
    assert lines[0] == "Step 1: AB = 3 (given)."
    assert "from steps 1, 2, 3" in lines[3]
    assert lines[-1] == "The answer is \\boxed{5}."
    assert calc_solution_text(solution.model_copy(update={"answer": 5.0004}), kind="length").endswith(
        r"\boxed{5}."
    )
    assert "(the law of cosines" in calc_solution_text(
        solution.model_copy(
            update={"steps": (solution.steps[0].model_copy(update={"rule": "law of cosines"}),)}
        )
    )
    with pytest.raises(TextError):
        calc_solution_text(CalcSolution(answer=None))


def _echo(text: str) -> FunctionSampler:
    def fn(request: GenerationRequest) -> list[Completion]:
        return [Completion(text=text, num_tokens=len(text.split()))]

    return FunctionSampler(fn)


def test_paraphrase_keeps_a_faithful_rewording_and_rejects_a_lossy_one() -> None:
    original = "Let ABC be a triangle with AB = 5. Find the length of BC."
    faithful = "Triangle ABC has side AB equal to 5. What is BC?"
    sampler = _echo(faithful)
    assert paraphrase(original, sampler) == faithful
    prompt = sampler.calls[0][0].messages[-1].content
    assert original in prompt
    assert paraphrase(original, _echo("Triangle ABC has AB = 7. Find BC.")) == original  # number changed
    assert paraphrase(original, _echo("Find the third side.")) == original  # points lost


def test_calculation_conclusions_box_the_answer_at_display_precision() -> None:
    assert (
        calc_conclusion("length b d", 14.142135, "length")
        == r"Hence BD = 14.14, and the answer is \boxed{14.14}."
    )
    assert calc_conclusion("angle a b c", 40.0, "angle") == r"Hence ∠ABC = 40°, and the answer is \boxed{40}."
    assert calc_conclusion("var x", 105.0, "angle").startswith("Hence x = 105,")
    assert "the area of triangle ABC" in calc_conclusion("area a b c", 6.0, "area")
    step = ProofStep(number=1, fact=Parallel.of("a", "b", "c", "d"), rule="given", premises=())
    assert proof_text([step], conclusion="Done.").splitlines()[-1] == "Done."
    with pytest.raises(TextError, match="not a calculation goal"):
        calc_conclusion("para a b c d", 1.0, "length")


@pytest.mark.parametrize(
    ("directed", "measure"), [("-40", "40"), ("320", "40"), ("200", "160"), ("75", "75")]
)
def test_directed_angle_parameters_read_as_the_measure_in_the_figure(directed: str, measure: str) -> None:
    problem = parse_problem(f"a b = segment a b; c = s_angle a b c {directed}")
    for seed in range(4):  # both wordings
        text = clause_sentence(problem.clauses[1], random.Random(seed))
        assert f" {measure}°" in text and "-" not in text, text
