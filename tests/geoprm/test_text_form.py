"""The critique's text form: printer/parser round trip, strict errors, lenient salvage."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from geoprm import (
    Critique,
    CritiqueParseError,
    Judgement,
    ParsedCritique,
    StepCritique,
    format_critique,
    parse_critique,
)

# Fragments that look like parts of the text form, mixed into field texts so that the round trip is
# tested on the texts most likely to confuse the parser.
_TRICKY = st.sampled_from(
    [
        "Step goal",
        "Figure verdict: Correct",
        ":",
        "[",
        "]",
        "Step 3",
        "[Step 2]",
        "Correct",
        "Incorrect",
        "**",
        "## ",
        "\n",
        "\n\n",
        "  ",
        "\t",
        "End",
        "[End]",
        "Correction of step 1",
        "Answer: 5",
        "1. ",
        "Note: ",
        "\u00e9\u2220ABC = 30\u00b0",
    ]
)
_PLAIN = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r") | st.just("\n"),
    max_size=30,
)


def _valid_field(text: str) -> bool:
    try:
        StepCritique(
            index=1,
            intent=text,
            image_analysis="x",
            image_judgement="Correct",
            logic_analysis="x",
            logic_judgement="Correct",
            judgement="Correct",
        )
    except ValidationError:
        return False
    return True


field_texts = (
    st.lists(_PLAIN | _TRICKY, min_size=1, max_size=5).map("".join).map(str.strip).filter(_valid_field)
)


@st.composite
def step_critiques(draw: st.DrawFn, index: int, final: Judgement) -> StepCritique:
    if final == "Correct":
        image, logic = "Correct", "Correct"
    else:
        pairs: list[tuple[Judgement, Judgement]] = [
            ("Incorrect", "Correct"),
            ("Correct", "Incorrect"),
            ("Incorrect", "Incorrect"),
        ]
        image, logic = draw(st.sampled_from(pairs))
    return StepCritique(
        index=index,
        intent=draw(field_texts),
        image_analysis=draw(field_texts),
        image_judgement=image,
        logic_analysis=draw(field_texts),
        logic_judgement=logic,
        judgement=final,
    )


@st.composite
def critiques(draw: st.DrawFn) -> Critique:
    count = draw(st.integers(min_value=1, max_value=5))
    has_error = draw(st.booleans())
    steps = [
        draw(step_critiques(i, "Incorrect" if has_error and i == count else "Correct"))
        for i in range(1, count + 1)
    ]
    return Critique(steps=tuple(steps), correction=draw(field_texts) if has_error else None)


@settings(max_examples=150, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(critiques(), st.booleans())
def test_every_valid_critique_round_trips_through_the_text_form(
    critique: Critique, verdict_first: bool
) -> None:
    text = format_critique(critique, verdict_first=verdict_first)
    assert parse_critique(text) == critique
    lenient = parse_critique(text, strict=False)
    assert lenient.ok and lenient.critique == critique


@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(critiques(), st.booleans())
def test_verdict_spans_point_at_the_written_verdicts(critique: Critique, verdict_first: bool) -> None:
    text = format_critique(critique, verdict_first=verdict_first)
    parsed = parse_critique(text, strict=False)
    spans = [step.judgement_span for step in parsed.steps]
    assert all(span is not None for span in spans)
    assert [text[s[0] : s[1]] for s in spans if s is not None] == list(critique.judgements)
    # every verdict word of a block, in text order: the final one first when it is written first
    for step, got in zip(critique.steps, parsed.steps, strict=True):
        words = [text[a:b] for a, b in got.verdict_spans]
        aspects = [step.image_judgement, step.logic_judgement]
        assert words == ([step.judgement, *aspects] if verdict_first else [*aspects, step.judgement])
        assert got.judgement_span in got.verdict_spans


def test_verdict_first_puts_the_step_verdict_under_the_header() -> None:
    step = StepCritique(index=1, intent="Add the sides.", image_analysis="AB = 6 is marked.",
                        image_judgement="Incorrect", logic_analysis="The sum is right.", logic_judgement="Correct",
                        judgement="Incorrect")  # fmt: skip
    critique = Critique(steps=(step,), correction="AB + BC = 14")
    lines = format_critique(critique, verdict_first=True).splitlines()
    assert lines[:3] == ["[Step 1]", "Step verdict: Incorrect", "Step goal: Add the sides."]
    assert format_critique(critique).splitlines()[6] == "Step verdict: Incorrect"  # GM-PRM's order: last


@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(critiques(), st.data())
def test_any_cut_of_a_critique_is_salvaged_without_raising(critique: Critique, data: st.DataObject) -> None:
    text = format_critique(critique)
    cut = data.draw(st.integers(min_value=0, max_value=text.rindex("[End]")))
    parsed = parse_critique(text[:cut], strict=False)
    assert not parsed.complete
    assert any(problem.kind == "truncated" for problem in parsed.problems)
    # every verdict written in full before the cut is recovered, with its span inside the kept text
    for step, original in zip(parsed.steps, critique.steps, strict=False):
        if step.judgement_span is not None and step.judgement_span[1] < cut:
            assert step.judgement == original.judgement
    with pytest.raises(CritiqueParseError):
        parse_critique(text[:cut])


def _example() -> Critique:
    return Critique(
        steps=(
            StepCritique(
                index=1,
                intent="Read the length of AB from the figure.",
                image_analysis="The figure marks AB = 6.",
                image_judgement="Correct",
                logic_analysis="Nothing is derived yet.",
                logic_judgement="Correct",
                judgement="Correct",
            ),
            StepCritique(
                index=2,
                intent="Compute the area of the square ABCD.",
                image_analysis="ABCD is drawn as a square with side AB.",
                image_judgement="Correct",
                logic_analysis="The area is 6 * 6 = 36, not 12.",
                logic_judgement="Incorrect",
                judgement="Incorrect",
            ),
        ),
        correction="The area of ABCD is AB^2 = 6^2 = 36.",
    )


def test_printed_form_is_the_documented_layout() -> None:
    text = format_critique(_example())
    assert text.splitlines()[:8] == [
        "[Step 1]",
        "Step goal: Read the length of AB from the figure.",
        "Figure check: The figure marks AB = 6.",
        "Figure verdict: Correct",
        "Logic check: Nothing is derived yet.",
        "Logic verdict: Correct",
        "Step verdict: Correct",
        "",
    ]
    assert text.endswith("[Correction of step 2]\nThe area of ABCD is AB^2 = 6^2 = 36.\n\n[End]\n")


@pytest.mark.parametrize(
    ("old", "new", "line", "needle"),
    [
        ("[Step 1]", "Here is my review.\n[Step 1]", 1, "before the first step"),
        ("Figure verdict: Correct", "Figure verdict: correct", 4, "not exactly Correct"),
        ("Logic check: Nothing", "**Logic check:** Nothing", 5, "not written as"),
        ("[Step 2]", "### Step 2 ###", 9, "step header"),
        ("[End]\n", "", None, "no [End] marker"),
        ("[End]\n", "[End]\nHope this helps!\n", 21, "after the end marker"),
        ("Step verdict: Incorrect", "Step verdict: Correct", 15, "contradicts"),
        ("[Step 2]", "[Step 3]", 9, "step numbered 3 at position 2"),
        ("[Correction of step 2]", "[Correction of step 1]", 17, "names step 1"),
        ("Figure check: The figure marks AB = 6.\n", "", 1, "has no 'Figure check'"),
    ],
)
def test_strict_parser_names_the_line_of_the_first_problem(
    old: str, new: str, line: int | None, needle: str
) -> None:
    text = format_critique(_example())
    assert old in text
    with pytest.raises(CritiqueParseError) as caught:
        parse_critique(text.replace(old, new, 1))
    assert caught.value.line == line
    assert needle in str(caught.value)
    if line is not None:
        assert str(caught.value).startswith(f"line {line}: ")


def test_lenient_parser_recovers_a_chatty_markdown_critique() -> None:
    text = (
        "Sure, let me check each step.\n\n"
        "### Step 1 ###\n"
        "**Step intent analysis:** reads AB.\n"
        "**Image alignment analysis:** AB = 6 in the figure.\n"
        "**Judgement of image alignment:** [Correct]\n"
        "**Reasoning logic analysis:** fine.\n"
        "**Judgement of reasoning logic:** correct\n"
        "**Final judgement of the current step:** Correct.\n\n"
        "### Step 2 ###\n"
        "Step intent analysis: area.\n"
        "Image alignment analysis: square.\n"
        "Judgement of image alignment: Correct\n"
        "Reasoning logic analysis: 6*6 is 36.\n"
        "Judgement of reasoning logic: INCORRECT\n"
        "Final judgement of the current step: Incorrect - the product is wrong\n\n"
        "Corrected step of the first incorrect step in solution:\n"
        "Step 2: The area is 36.\n"
    )
    parsed = parse_critique(text, strict=False)
    assert isinstance(parsed, ParsedCritique)
    assert parsed.judgements == ("Correct", "Incorrect")
    assert parsed.correction == "Step 2: The area is 36."
    assert parsed.critique is not None and parsed.critique.first_error == 2
    kinds = {problem.kind for problem in parsed.problems}
    assert kinds == {"chatter", "form", "judgement", "truncated"}
    spans = [step.judgement_span for step in parsed.steps]
    assert [text[s[0] : s[1]] for s in spans if s is not None] == ["Correct", "Incorrect"]


def test_missing_final_verdict_is_inferred_but_flagged() -> None:
    text = format_critique(_example()).replace("Step verdict: Incorrect\n", "")
    parsed = parse_critique(text, strict=False)
    assert parsed.judgements == ("Correct", "Incorrect")
    step = parsed.steps[1]
    assert step.judgement_inferred and step.judgement_span is None
    assert parsed.critique is None
    assert any("inferred as Incorrect" in problem.message for problem in parsed.problems)


def test_label_repeated_without_header_starts_a_new_step() -> None:
    text = format_critique(_example()).replace("[Step 2]\n", "")
    parsed = parse_critique(text, strict=False)
    assert [step.index for step in parsed.steps] == [1, 2]
    assert parsed.judgements == ("Correct", "Incorrect")
    assert any(problem.kind == "missing" and problem.line == 9 for problem in parsed.problems)


def test_empty_and_chatter_only_texts_give_no_steps() -> None:
    for text in ("", "I cannot review this solution.\n"):
        parsed = parse_critique(text, strict=False)
        assert parsed.steps == () and parsed.critique is None
        assert "empty" in {problem.kind for problem in parsed.problems}
        with pytest.raises(CritiqueParseError):
            parse_critique(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Correct", "Correct"),
        ("incorrect.", "Incorrect"),
        ("**Not correct**", "Incorrect"),
        ("Incorrect, although the figure is read correctly", "Incorrect"),
        ("Correct/Incorrect", None),
        ("<Correct or Incorrect>", None),
        ("Partly", None),
    ],
)
def test_lenient_verdict_values(value: str, expected: str | None) -> None:
    text = format_critique(_example()).replace("Step verdict: Correct", f"Step verdict: {value}", 1)
    assert parse_critique(text, strict=False).steps[0].judgement == expected


_DAMAGES: dict[str, Callable[[str], str]] = {
    "bold_labels": lambda line: re.sub(r"^([A-Z][a-z]+ [a-z]+):", r"**\1:**", line),
    "lower_verdicts": lambda line: re.sub(r"verdict: (In)?[Cc]orrect$", lambda m: m[0].lower(), line),
    "hash_headers": lambda line: re.sub(r"^\[Step (\d+)\]$", r"### Step \1 ###", line),
    "bullets": lambda line: re.sub(r"^([A-Z][a-z]+ (goal|check|verdict)):", r"- \1:", line),
    "explained_verdicts": lambda line: re.sub(
        r"^(Step verdict: (In)?[Cc]orrect)$", r"\1, as argued above.", line
    ),
}


@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(critiques(), st.sets(st.sampled_from(sorted(_DAMAGES))), st.booleans(), st.booleans())
def test_lenient_parser_recovers_judgements_from_generated_damage(
    critique: Critique, damages: set[str], chatter: bool, drop_end: bool
) -> None:
    lines = format_critique(critique).splitlines()
    for name in sorted(damages):
        lines = [_DAMAGES[name](line) for line in lines]
    text = "\n".join(lines) + "\n"
    if drop_end:
        text = text.replace("[End]\n", "")
    if chatter:
        text = "Let me review the solution.\n\n" + text + "\nThat is all.\n"
    parsed = parse_critique(text, strict=False)
    assert parsed.judgements == critique.judgements
    assert (parsed.correction is not None) == critique.has_error
    assert parsed.ok == (not damages and not drop_end and not chatter)
