"""Versioned prompt templates (package data) and their rendering with the real problem.

Templates live in ``geosynth/mts/prompts/<name>.v<k>.txt`` and use ``{{field}}`` placeholders, so
the braces of LaTeX and Python in the texts they are filled with need no escaping. Rendering fails
loudly on a missing or unknown field. The name, version and text hash of each template are part of
the resume key of the stage that uses it, so editing a prompt recomputes that stage and nothing else.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import geodsl
from geosynth.mts.errors import MTSConfigError

__all__ = (
    "PROMPT_VERSIONS",
    "PromptName",
    "PromptTemplate",
    "format_clauses",
    "format_operators",
    "template",
)

PromptName = Literal["cot_pal", "cot_pal_repair", "cot_program"]
"""The three LLM prompts: CoT-PAL rewriting, CoT-PAL repair, CoT-Program rewriting."""

PROMPT_VERSIONS: Mapping[PromptName, int] = {"cot_pal": 2, "cot_pal_repair": 2, "cot_program": 1}
"""The template version each prompt uses."""

_FIELD = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True, kw_only=True)
class PromptTemplate:
    """One prompt template: its text and the fields it needs."""

    name: PromptName
    version: int
    text: str

    @property
    def fields(self) -> frozenset[str]:
        """The placeholder names of the template."""
        return frozenset(_FIELD.findall(self.text))

    @property
    def fingerprint(self) -> str:
        """``name.v<k>:<hash of the text>``: what a resume key records about this prompt."""
        return f"{self.name}.v{self.version}:{hashlib.sha256(self.text.encode()).hexdigest()[:16]}"

    def render(self, values: Mapping[str, str]) -> str:
        """Fill the placeholders.

        Raises:
            MTSConfigError: a placeholder without a value, or a value for no placeholder.
        """
        missing = self.fields - values.keys()
        extra = values.keys() - self.fields
        if missing or extra:
            raise MTSConfigError(
                f"prompt {self.name}.v{self.version}: missing fields {sorted(missing)}, "
                f"unknown fields {sorted(extra)}"
            )
        return _FIELD.sub(lambda m: values[m.group(1)], self.text)


@cache
def template(name: PromptName) -> PromptTemplate:
    """The current template of a prompt, read from the package data."""
    version = PROMPT_VERSIONS[name]
    text = resources.files("geosynth.mts").joinpath("prompts", f"{name}.v{version}.txt").read_text("utf-8")
    return PromptTemplate(name=name, version=version, text=text.rstrip("\n") + "\n")


def format_clauses(stru: Sequence[str], sem: Sequence[str]) -> str:
    """The diagram clauses as prompt lines (structural ones first), or a note that there are none."""
    lines = [f"- {c}" for c in (*stru, *sem)]
    return "\n".join(lines) if lines else "(none)"


def format_operators(ops: Sequence[str]) -> str:
    """One line per distinct operator of ``ops`` (first-use order): name, operands, meaning, equation."""
    lines: list[str] = []
    for name in dict.fromkeys(ops):
        spec = geodsl.OPERATORS[name]
        roles = ", ".join(spec.roles)
        equation = f" Equation: {spec.equation}." if spec.residual is not None else ""
        lines.append(f"- `{name}` ({spec.arity_text()} operands: {roles}): {spec.meaning}{equation}")
    return "\n".join(lines)
