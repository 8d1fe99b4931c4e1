"""Natural-language problem statements and step-by-step solutions, from templates (package data).

``templates/constructions.yaml`` holds, per construction, whole sentences (a clause with one
construction) and condition fragments (a clause combining several); ``relations.yaml`` holds statements
per relation; ``goals.yaml`` the questions, given values and connectives; ``reasons.yaml`` the
justification of each engine rule. Every placeholder is ``{name}``: a definition argument, a relation's
``p0``, ``p1``... or a goal field. Filling a template with a name it lacks is an error, so no text ever
leaves with an unfilled placeholder. Randomness (which template) comes only from the ``random.Random``
passed in. :func:`paraphrase` optionally rewords a text with a language model behind a geotts sampler.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict

from geosynth.engine import (
    Clause,
    Construction,
    ConstructionDef,
    DirectedAngleConstant,
    Problem,
    ProofStep,
    RatioConstant,
    Relation,
    Shape,
    build_relation,
    default_definitions,
    relation_text,
)
from geosynth.errors import RelationError
from geosynth.synth._choices import boxed
from geosynth.synth.errors import SynthError

if TYPE_CHECKING:
    from geosynth.calc import CalcSolution
    from geotts import Sampler

__all__ = (
    "TextError",
    "TextTemplates",
    "calc_conclusion",
    "calc_solution_text",
    "paraphrase",
    "point_label",
    "problem_text",
    "proof_text",
    "relation_sentence",
    "text_templates",
)

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")
_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class TextError(SynthError, ValueError):
    """A text cannot be made: unknown construction, relation or goal, or a template naming a missing field."""


class ConstructionTemplates(BaseModel):
    """The wordings of one construction."""

    model_config = _FROZEN
    sentences: tuple[str, ...]
    """Whole sentences introducing the clause's new points."""
    conditions: tuple[str, ...]
    """Fragments ("X lies on line AB") for clauses that combine several constructions."""


class TextTemplates(BaseModel):
    """Every template the text functions use."""

    model_config = _FROZEN
    constructions: dict[str, ConstructionTemplates]
    """Per construction name."""
    relations: dict[str, tuple[str, ...]]
    """Per predicate name (or composite shape class name)."""
    goals: dict[str, tuple[str, ...]]
    """Questions per goal kind: prove, length, angle, area, perimeter, var."""
    givens: dict[str, tuple[str, ...]]
    """Given values per quantity kind: length, angle, area, perimeter."""
    given_intro: tuple[str, ...]
    """Sentences introducing the given facts (``{facts}``)."""
    clause_intro: tuple[str, ...]
    """Sentences for a clause of several constructions (``{points}``, ``{conditions}``)."""
    reasons: dict[str, tuple[str, ...]]
    """Justifications per rule name."""


def _load(name: str) -> Any:
    text = resources.files("geosynth.synth").joinpath(f"templates/{name}").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@cache
def text_templates() -> TextTemplates:
    """The bundled templates, validated.

    Raises:
        pydantic.ValidationError: A template file is malformed.
    """
    goals = _load("goals.yaml")
    data = {
        "constructions": _load("constructions.yaml"),
        "relations": _load("relations.yaml"),
        "goals": goals["goals"],
        "givens": goals["givens"],
        "given_intro": goals["given_intro"],
        "clause_intro": goals["clause_intro"],
        "reasons": _load("reasons.yaml"),
    }
    return TextTemplates.model_validate(data, strict=False)


def point_label(name: str) -> str:
    """How a point is named in texts and on diagrams: its name with the first letter capitalised."""
    return name[:1].upper() + name[1:]


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace every ``{name}`` of a template.

    Raises:
        TextError: The template names a field ``values`` lacks.
    """

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise TextError(
                f"template {template!r} needs {{{key}}}, which is not available ({sorted(values)})"
            )
        return values[key]

    return _PLACEHOLDER.sub(one, template)


def _pick(options: Sequence[str], rng: random.Random | None) -> str:
    return options[0] if rng is None else options[rng.randrange(len(options))]


def _listing(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _number(value: Fraction | float | str) -> str:
    number = Fraction(value) if not isinstance(value, Fraction) else value
    if number.denominator == 1:
        return str(number.numerator)
    return (
        f"{number.numerator}/{number.denominator}" if abs(number.denominator) < 1000 else f"{float(number):g}"
    )


def _relation_values(relation: Relation) -> tuple[str, dict[str, str]]:
    labels = [point_label(p) for p in relation.points]
    values = {f"p{i}": label for i, label in enumerate(labels)}
    values.update(points=_listing(labels), rest=_listing(labels[1:]) if len(labels) > 1 else labels[0])
    if isinstance(relation, Shape):
        return type(relation).__name__, values
    if isinstance(relation, RatioConstant):
        values["value"] = _number(relation.value)
    elif isinstance(relation, DirectedAngleConstant):
        values["degrees"] = _number(relation.degrees)
    return relation_text(relation).split()[0], values


def relation_sentence(relation: Relation, rng: random.Random | None = None) -> str:
    """A relation in words (``AB ∥ CD``, ``A, B and C are collinear``).

    Args:
        relation: Any relation or composite shape.
        rng: Chooses among the relation's templates; the first template when ``None``.

    Raises:
        TextError: No template for the relation.
    """
    key, values = _relation_values(relation)
    options = text_templates().relations.get(key)
    if not options:
        raise TextError(f"no template for relation {key!r}")
    return fill(_pick(options, rng), values)


DIRECTED_ANGLE_PARAMS: dict[str, frozenset[str]] = {"s_angle": frozenset({"y"})}
"""Construction parameters that are directed angles in degrees. A sentence states the angle's measure
(in (0, 180]): ``s_angle a b x -40`` reads "∠ABX = 40°", as the figure shows it."""


def _angle_measure(degrees: str) -> Fraction:
    turn = Fraction(degrees) % 360
    return 360 - turn if turn > 180 else turn


def _binding(call: Construction, definition: ConstructionDef) -> dict[str, str]:
    values: dict[str, str] = {}
    angles = DIRECTED_ANGLE_PARAMS.get(call.name, frozenset())
    for arg, actual in zip(definition.args, call.args, strict=True):
        if arg in angles:
            values[arg] = _number(_angle_measure(actual))
        else:
            values[arg] = _number(actual) if arg in definition.params else point_label(actual)
    return values


def _fact_conditions(call: Construction, definition: ConstructionDef, rng: random.Random) -> str:
    """A construction the templates lack, in words from its definition's facts."""
    binding = dict(zip(definition.args, call.args, strict=True))
    parts: list[str] = []
    for group in definition.facts:
        for fact in group.facts:
            relation = build_relation(fact.name, tuple(binding.get(a, a) for a in fact.args))
            parts.append(relation_sentence(relation, rng))
    if not parts:
        raise TextError(f"construction {call.text()!r} has no template and no facts to describe it")
    return _listing(parts)


def _condition(call: Construction, definitions: Mapping[str, ConstructionDef], rng: random.Random) -> str:
    definition = definitions.get(call.name)
    if definition is None:
        raise TextError(f"unknown construction {call.name!r} in {call.text()!r}")
    entry = text_templates().constructions.get(call.name)
    if entry is None:
        return _fact_conditions(call, definition, rng)
    return fill(_pick(entry.conditions, rng), _binding(call, definition))


def clause_sentence(
    clause: Clause, rng: random.Random, definitions: Mapping[str, ConstructionDef] | None = None
) -> str:
    """One clause of a problem as a sentence.

    Raises:
        TextError: A construction without a definition, or a template that does not fit it.
    """
    defs = default_definitions() if definitions is None else definitions
    templates = text_templates()
    call = clause.constructions[0]
    entry = templates.constructions.get(call.name)
    if len(clause.constructions) == 1 and entry is not None and call.name in defs:
        return fill(_pick(entry.sentences, rng), _binding(call, defs[call.name]))
    conditions = [_condition(c, defs, rng) for c in clause.constructions]
    values = {"points": _listing([point_label(p) for p in clause.points]), "conditions": _listing(conditions)}
    return fill(_pick(templates.clause_intro, rng), values)


def _polygon(points: Sequence[str]) -> str:
    name = "".join(point_label(p) for p in points)
    kind = {3: "triangle", 4: "quadrilateral"}.get(len(points), "polygon")
    return f"{kind} {name}"


_QUANTITY_POINTS: dict[str, tuple[int, int | None]] = {
    "length": (2, 2),
    "angle": (3, 3),
    "area": (3, None),
    "perimeter": (3, None),
}
"""Goal and given kinds over points: least and most number of points (``None``: no limit)."""


def _quantity_values(kind: str, points: Sequence[str], source: str) -> dict[str, str]:
    least, most = _QUANTITY_POINTS[kind]
    if len(points) < least or (most is not None and len(points) > most):
        raise TextError(f"{kind} needs {least}{'' if most == least else ' or more'} points, got {source!r}")
    labels = "".join(point_label(p) for p in points)
    return {"segment": labels, "angle": labels, "polygon": _polygon(points)}


def _given_value(value: str) -> str:
    text = value.strip()
    try:
        return _number(text)
    except (ValueError, ZeroDivisionError):
        return f"({text})" if re.search(r"[\s+\-*/]", text) else text


def given_sentence(given: str, rng: random.Random) -> str:
    """A given fact in words: ``length a b = 5``, ``angle a b c = x + 10`` or a predicate (``cong a b c d``).

    Raises:
        TextError: The given is not in one of these forms.
    """
    left, sep, right = given.partition("=")
    tokens = left.split()
    if sep and tokens and tokens[0] in text_templates().givens:
        values = _quantity_values(tokens[0], tokens[1:], given)
        values["value"] = _given_value(right) if tokens[0] == "angle" else right.strip()
        return fill(_pick(text_templates().givens[tokens[0]], rng), values)
    try:
        relation = build_relation(tokens[0], tuple(tokens[1:])) if tokens and not sep else None
    except RelationError as err:
        raise TextError(f"given {given!r}: {err}") from None
    if relation is None:
        raise TextError(f"given {given!r} is neither 'KIND points = value' nor a predicate statement")
    return relation_sentence(relation, rng)


def goal_sentence(goal: str, rng: random.Random) -> str:
    """The question: ``prove`` a predicate statement, or find ``length``/``angle``/``area``/``perimeter``/``var``.

    Raises:
        TextError: The goal is empty or malformed.
    """
    tokens = goal.split()
    if not tokens:
        raise TextError("empty goal")
    kind, args = tokens[0], tokens[1:]
    goals = text_templates().goals
    if kind == "var":
        if len(args) != 1:
            raise TextError(f"goal {goal!r}: 'var' takes one variable name")
        return fill(_pick(goals["var"], rng), {"var": args[0]})
    if kind in _QUANTITY_POINTS:
        return fill(_pick(goals[kind], rng), _quantity_values(kind, args, goal))
    try:
        relation = build_relation(kind, tuple(args))
    except RelationError as err:
        raise TextError(f"goal {goal!r}: {err}") from None
    return fill(_pick(goals["prove"], rng), {"statement": relation_sentence(relation, rng)})


def _capitalise(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def problem_text(
    problem: Problem,
    *,
    goal: str,
    rng: random.Random,
    givens: Sequence[str] = (),
    definitions: Mapping[str, ConstructionDef] | None = None,
) -> str:
    """The problem statement: one sentence per clause, the given values, then the question.

    Args:
        problem: The construction clauses (its own goal is not used; ``goal`` is).
        goal: ``para d e b c`` (a predicate statement to prove), ``length a b``, ``angle a b c``,
            ``area a b c ...``, ``perimeter a b c ...`` or ``var x``.
        rng: Chooses the templates.
        givens: Given values and facts (``length a b = 5``, ``angle a b c = x + 10``, ``cong a b c d``).
        definitions: Construction definitions; the bundled ones when ``None``.

    Raises:
        TextError: A construction, relation or goal without a fitting template.
    """
    parts = [clause_sentence(c, rng, definitions) for c in problem.clauses]
    if givens:
        facts = _listing([given_sentence(g, rng) for g in givens])
        parts.append(_capitalise(fill(_pick(text_templates().given_intro, rng), {"facts": facts})))
    parts.append(goal_sentence(goal, rng))
    return " ".join(_capitalise(p) for p in parts)


def reason_phrase(rule: str, rng: random.Random | None = None) -> str:
    """The justification of an engine or solver rule (the rule's name when no template has it)."""
    options = text_templates().reasons.get(rule)
    return rule if not options else _pick(options, rng)


def proof_text(
    steps: Sequence[ProofStep], *, rng: random.Random | None = None, conclusion: str | None = None
) -> str:
    """A proof as numbered sentences with their justifications, ending with the conclusion.

    Args:
        steps: The proof (post-order, the goal last), as :func:`geosynth.proof_steps` gives it.
        rng: Chooses among the wordings; the first wording of each when ``None``.
        conclusion: The last line (for a calculation, :func:`calc_conclusion`); by default "Therefore"
            and the last step's statement.

    Raises:
        TextError: A step's relation has no template.
    """
    if not steps:
        raise TextError("a proof needs at least one step")
    lines: list[str] = []
    for step in steps:
        reason = reason_phrase(step.rule, rng)
        source = f"{reason}; from steps {', '.join(map(str, step.premises))}" if step.premises else reason
        lines.append(f"Step {step.number}: {relation_sentence(step.fact, rng)} ({source}).")
    lines.append(conclusion or f"Therefore {relation_sentence(steps[-1].fact, rng)}, as required.")
    return "\n".join(lines)


def calc_conclusion(goal: str, answer: float, kind: str) -> str:
    """The closing line of a calculation: the goal quantity, its value and the boxed answer.

    Args:
        goal: ``length a b``, ``angle a b c``, ``area a b c ...``, ``perimeter a b c ...`` or ``var x``.
        answer: The value (degrees for angles).
        kind: The answer kind of :func:`geosynth.synth._choices.boxed`.

    Raises:
        TextError: A malformed goal.
    """
    tokens = goal.split()
    if not tokens:
        raise TextError("empty goal")
    quantity_kind, args = tokens[0], tokens[1:]
    if quantity_kind == "var" and len(args) == 1:
        quantity = args[0]
    elif quantity_kind in _QUANTITY_POINTS:
        values = _quantity_values(quantity_kind, args, goal)
        quantity = {
            "length": values["segment"],
            "angle": f"∠{values['angle']}",
            "area": f"the area of {values['polygon']}",
            "perimeter": f"the perimeter of {values['polygon']}",
        }[quantity_kind]
    else:
        raise TextError(f"goal {goal!r} is not a calculation goal")
    shown = boxed(answer, kind)
    unit = "°" if quantity_kind == "angle" else ""
    return f"Hence {quantity} = {shown[7:-1]}{unit}, and the answer is {shown}."


def _value_text(value: float) -> str:
    return f"{value:.6g}" if abs(value - round(value)) > 1e-9 else str(round(value))


def calc_solution_text(
    solution: CalcSolution, *, rng: random.Random | None = None, kind: str | None = None
) -> str:
    """A calculation solution as numbered sentences, ending with the boxed answer.

    Args:
        solution: The calc solver's traced solution (post-order, the goal's value last).
        rng: Chooses among the wordings of each rule; the first when ``None``.
        kind: The answer kind (``angle``, ``length``...): the box shows the kind's display precision
            (:func:`geosynth.synth._choices.boxed`); six significant digits when ``None``.

    Raises:
        TextError: The solution has no steps or no answer.
    """
    if not solution.steps or solution.answer is None:
        raise TextError("a calculation solution needs steps and an answer")
    lines: list[str] = []
    for step in solution.steps:
        reason = reason_phrase(step.rule, rng)
        source = f"{reason}; from steps {', '.join(map(str, step.premises))}" if step.premises else reason
        found = ""
        if step.value is not None and len(step.quantities) == 1 and step.quantities[0] not in step.statement:
            found = f", so {step.quantities[0]} = {_value_text(step.value)}"
        lines.append(f"Step {step.number}: {step.statement}{found} ({source}).")
    answer = (
        boxed(solution.answer, kind) if kind is not None else f"\\boxed{{{_value_text(solution.answer)}}}"
    )
    lines.append(f"The answer is {answer}.")
    return "\n".join(lines)


_PARAPHRASE_PROMPT = (
    "Rewrite the following geometry problem in different words. Keep every point name, number and "
    "condition exactly; add nothing and drop nothing. Reply with the rewritten problem only.\n\n{text}"
)


def paraphrase(text: str, sampler: Sampler, *, temperature: float = 0.7, max_tokens: int = 512) -> str:
    """Reword a problem text with a language model; the original when the rewording loses a point or number.

    Every point letter and every number of the original must appear in the rewording, otherwise the
    rewording is rejected and the original returned.

    Args:
        text: The problem statement.
        sampler: A geotts sampler (any backend; ``geotts.testing.FunctionSampler`` in tests).
        temperature: Sampling temperature.
        max_tokens: Token limit of the rewording.

    Raises:
        TextError: The sampler returned no candidate.
    """
    from geotts import ChatMessage, GenerationRequest, SamplingParams

    request = GenerationRequest(
        messages=(ChatMessage(role="user", content=fill(_PARAPHRASE_PROMPT, {"text": text})),),
        params=SamplingParams(temperature=temperature, max_tokens=max_tokens),
    )
    batches = sampler.generate([request])
    if not batches or not batches[0]:
        raise TextError("the paraphrase sampler returned no candidate")
    candidate = batches[0][0].text.strip()
    return candidate if candidate and _essentials(text) <= _essentials(candidate) else text


_ARTICLE = re.compile(r"(?:^|(?<=[.!?]\s))A(?=\s+[a-z])")


def _essentials(text: str) -> set[str]:
    """Point letters (capitals not starting an ordinary word, the article excluded) and numbers of a text."""
    plain = _ARTICLE.sub("", text)
    return set(re.findall(r"[A-Z](?![a-z])", plain)) | set(re.findall(r"\d+(?:\.\d+)?", plain))
