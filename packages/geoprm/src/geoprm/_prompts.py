"""Prompts: versioned text templates shipped as package data, rendered with the real problem text.

Templates live in ``geoprm/prompts/<name>.<version>.txt`` and use ``string.Template`` placeholders
(``$question``...), so braces and dollar signs in a problem's text are inserted verbatim. A template
is checked on load: it must use exactly the placeholders its kind declares.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Literal, TypeAlias

from geoprm._printer import format_skeleton
from geoprm.errors import PromptError
from geotts import format_steps

PromptName: TypeAlias = Literal["policy_free_form", "policy_multiple_choice", "teacher_critique", "critic"]
"""The prompt templates geoprm ships."""

PROMPT_VERSION = "v1"
"""The template version used when none is asked for."""

PLACEHOLDERS: Mapping[PromptName, frozenset[str]] = {
    "policy_free_form": frozenset({"question"}),
    "policy_multiple_choice": frozenset({"question", "choices"}),
    "teacher_critique": frozenset({"question", "steps", "format"}),
    "critic": frozenset({"question", "steps"}),
}

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@cache
def load_template(name: PromptName, version: str = PROMPT_VERSION) -> string.Template:
    """Load and check one prompt template.

    Args:
        name: the template's name.
        version: the template's version, e.g. ``"v1"``.

    Returns:
        The template.

    Raises:
        PromptError: the template does not exist or its placeholders differ from the declared ones.
    """
    if name not in PLACEHOLDERS:
        raise PromptError(f"unknown prompt {name!r}; known prompts: {', '.join(sorted(PLACEHOLDERS))}")
    resource = resources.files("geoprm").joinpath("prompts", f"{name}.{version}.txt")
    if not resource.is_file():
        raise PromptError(
            f"prompt {name!r} has no version {version!r} (no file prompts/{name}.{version}.txt)"
        )
    template = string.Template(resource.read_text(encoding="utf-8"))
    found = frozenset(template.get_identifiers())
    if not template.is_valid() or found != PLACEHOLDERS[name]:
        raise PromptError(
            f"prompt {name}.{version} uses placeholders {sorted(found)}, expected {sorted(PLACEHOLDERS[name])}"
        )
    return template


def _required(value: str, what: str) -> str:
    if not value.strip():
        raise PromptError(f"{what} is empty")
    return value.strip()


def policy_prompt(
    question: str, *, choices: Sequence[str] | None = None, version: str = PROMPT_VERSION
) -> str:
    """The prompt asking a policy for a numbered step-by-step solution and a final ``Answer:`` line.

    Args:
        question: the problem's text (the figure is passed to the model separately).
        choices: the options of a multiple-choice problem, in order; they are lettered A, B, C...
            None for a free-form problem.
        version: the template version.

    Returns:
        The rendered prompt.

    Raises:
        PromptError: the question or an option is empty, or there are no or more than 26 options.
    """
    question = _required(question, "question")
    if choices is None:
        return load_template("policy_free_form", version).substitute(question=question)
    if isinstance(choices, str):
        raise PromptError("choices must be a sequence of option texts, not one string")
    if not 1 <= len(choices) <= len(_LETTERS):
        raise PromptError(f"a multiple-choice problem needs 1 to {len(_LETTERS)} options, got {len(choices)}")
    lines = [
        f"{_LETTERS[i]}. {_required(choice, f'option {_LETTERS[i]}')}" for i, choice in enumerate(choices)
    ]
    return load_template("policy_multiple_choice", version).substitute(
        question=question, choices="\n".join(lines)
    )


def _checked_steps(steps: Sequence[str]) -> Sequence[str]:
    if isinstance(steps, str):
        raise PromptError("steps must be a sequence of step texts, not one string")
    if not steps:
        raise PromptError("the solution has no steps to review")
    for number, step in enumerate(steps, start=1):
        _required(step, f"step {number}")
    return steps


def critique_prompt(question: str, steps: Sequence[str], *, version: str = PROMPT_VERSION) -> str:
    """The teacher prompt: it asks a model that has not learnt the text form for a critique in it.

    Data construction sends it to the teacher (:func:`geoprm.data.build_prm_data`); an untrained
    critic (``TransformersCritic(prompt="teacher")``) can be asked with it too. A trained reward model
    reads :func:`critic_prompt` instead.

    Args:
        question: the problem's text (with its options, for a multiple-choice problem).
        steps: the solution's steps, e.g. from :func:`geotts.split_steps`.
        version: the template version.

    Returns:
        The rendered prompt; the layout it asks for is generated from the same label table the
        parser uses, so the two cannot drift apart.

    Raises:
        PromptError: the question is empty, there are no steps, or a step is empty.
    """
    question = _required(question, "question")
    steps = _checked_steps(steps)
    return load_template("teacher_critique", version).substitute(
        question=question, steps=format_steps(steps), format=format_skeleton()
    )


def critic_prompt(question: str, steps: Sequence[str], *, version: str = PROMPT_VERSION) -> str:
    """The input of the trained reward model: the question and the steps, with one line of instruction.

    GM-PRM's critic reads the image, the question and the steps (section 3.1, equation 3); the layout
    of the critique is what it was trained to write, so its input does not describe it. Every SFT record
    of geoprm (:class:`geoprm.data.SFTRecord`) has this prompt, and
    :class:`~geoprm.backends.transformers.TransformersCritic` asks with it by default.

    Args:
        question: the problem's text (with its options, for a multiple-choice problem).
        steps: the solution's steps, e.g. from :func:`geotts.split_steps`.
        version: the template version.

    Returns:
        The rendered prompt (the steps as ``Step k:`` lines).

    Raises:
        PromptError: the question is empty, there are no steps, or a step is empty.
    """
    question = _required(question, "question")
    steps = _checked_steps(steps)
    return load_template("critic", version).substitute(question=question, steps=format_steps(steps))
