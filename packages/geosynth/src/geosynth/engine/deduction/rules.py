"""Deduction rules as data: ``rules.txt`` lines (``premise, premise => conclusion``) as frozen :class:`Rule`.

Variables are the rule's point names; each premise and conclusion is a predicate statement. Rule
predicates include a few that only rules use: ``eqratio3`` (ratios along two transversals) and
``sameside`` (AlphaGeometry's six-point betweenness-sign agreement).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from geosynth.engine.language.definitions import Statement
from geosynth.engine.language.predicates import PREDICATES
from geosynth.errors import DefinitionError

RULE_ONLY_PREDICATES = frozenset({"eqratio3", "sameside"})
"""Predicates allowed in rules besides those of :data:`geosynth.engine.language.predicates.PREDICATES`."""


class Rule(BaseModel):
    """``premises => conclusions`` over point variables."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    name: str
    """A stable identifier (``r01`` for the first line of ``rules.txt``)."""
    premises: tuple[Statement, ...]
    """What must hold (all of it)."""
    conclusions: tuple[Statement, ...]
    """What then holds."""

    @property
    def variables(self) -> tuple[str, ...]:
        """The rule's point variables, in first-use order."""
        seen: dict[str, None] = {}
        for statement in self.premises + self.conclusions:
            seen.update((a, None) for a in statement.args)
        return tuple(seen)

    def text(self) -> str:
        """The rule as a ``rules.txt`` line."""
        return (
            f"{', '.join(s.text() for s in self.premises)} => {', '.join(s.text() for s in self.conclusions)}"
        )


def _statements(text: str, source: str) -> tuple[Statement, ...]:
    out: list[Statement] = []
    for part in text.split(","):
        tokens = part.split()
        if not tokens:
            raise DefinitionError("empty statement", source=source)
        if tokens[0] not in PREDICATES and tokens[0] not in RULE_ONLY_PREDICATES:
            raise DefinitionError(f"unknown predicate {tokens[0]!r}", source=source)
        out.append(Statement(name=tokens[0], args=tuple(tokens[1:])))
    return tuple(out)


def parse_rule(line: str, name: str) -> Rule:
    """Parse one rule line.

    Raises:
        DefinitionError: No ``=>``, an empty statement, or an unknown predicate.
    """
    if "=>" not in line:
        raise DefinitionError("rule lacks '=>'", source=line)
    left, right = line.split("=>", 1)
    return Rule(name=name, premises=_statements(left, line), conclusions=_statements(right, line))


def parse_rules(text: str) -> tuple[Rule, ...]:
    """Parse a ``rules.txt`` (one rule a line; blank lines skipped; rules named ``r01``, ``r02``...)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return tuple(parse_rule(line, f"r{i:02d}") for i, line in enumerate(lines, start=1))


def parse_named_rules(text: str) -> tuple[Rule, ...]:
    """Parse rules written ``NAME: premise, ... => conclusion, ...``, one a line (``#`` lines are comments).

    Raises:
        DefinitionError: A line without a name, a name used twice, or a rule :func:`parse_rule` refuses.
    """
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, colon, body = line.partition(":")
        if not colon or not name.strip() or " " in name.strip():
            raise DefinitionError("expected 'NAME: premises => conclusions'", source=line)
        if any(rule.name == name.strip() for rule in rules):
            raise DefinitionError(f"rule name {name.strip()!r} used twice", source=line)
        rules.append(parse_rule(body.strip(), name.strip()))
    return tuple(rules)


def load_rules(path: Path | None = None) -> tuple[Rule, ...]:
    """Load rules from a file, or the bundled ``rules.txt`` when ``path`` is ``None``."""
    if path is None:
        return _bundled()
    return parse_rules(path.read_text(encoding="utf-8"))


@cache
def engine_rules() -> tuple[Rule, ...]:
    """The rules the engine adds to AlphaGeometry's (``rules/engine_rules.txt``, named ``e01``...)."""
    return parse_named_rules(_bundled_text("engine_rules.txt"))


def default_rules() -> tuple[Rule, ...]:
    """The rules deduction runs when given none: ``rules.txt``, then :func:`engine_rules`."""
    return load_rules() + engine_rules()


def _bundled_text(name: str) -> str:
    return resources.files("geosynth.engine").joinpath("rules", name).read_text(encoding="utf-8")


@cache
def _bundled() -> tuple[Rule, ...]:
    return parse_rules(_bundled_text("rules.txt"))
