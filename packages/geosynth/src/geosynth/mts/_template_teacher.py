r"""The template teacher: CoT-Program and CoT-PAL replies composed from templates, without a language model.

:class:`TemplateTeacher` is a geotts :class:`~geotts.Sampler`. It answers the three MTS prompts
(``cot_pal``, ``cot_pal_repair``, ``cot_program``) by reading the prompt back into its fields (the
inverse of :meth:`~geosynth.mts.PromptTemplate.render`) and writing the reply the prompt asks for:

* CoT-Program: one numbered step per program step, titled by the operator, explained with its
  geometric fact (:mod:`geosynth.mts._template_phrases`, reworded from the meanings in
  :data:`geodsl.OPERATORS`), its operands matched to the operator's roles and named by the diagram
  clause that holds their value (``AC = 24 is the opposite side``), the operator's equation with the
  values in place, the diagram clause that supports it (a right angle, a circle, parallel lines:
  chosen by the point names it shares with the step), and the unknowns the step fixes with the
  values geodsl's executor finds; then ``**Op:**`` with the step and the final program line.
* CoT-PAL: the PAL script unchanged, with a comment before each equation (the fact, the given
  quantities that enter it, the unknown its solve finds or that it waits for the next equation)
  and one before the final print (what the question asks).

The replies go through exactly the checks an LLM's replies go through (token check of the program;
key lines kept, rationale present, sandbox run against the stored answer). Phrasing varies: every
choice is drawn from a :class:`random.Random` seeded with (seed, candidate index, prompt), so a
reply depends only on those, never on batch order, the cache or the global ``random`` state.

The teacher is not a language model. It sees neither the diagram image nor anything the program
does not say: each rationale restates the program's step in words, so it adds no perception or
reasoning beyond the program (docs/differences.md).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import geodsl
from geodsl.ops import OpSpec
from geosynth.mts import _template_phrases as phrases
from geosynth.mts._prompts import PROMPT_VERSIONS, PromptName, template
from geotts import Completion, GenerationRequest, SamplingParams
from geotts.errors import BackendError

__all__ = ("TEMPLATE_TEACHER_MODEL", "TEMPLATE_TEACHER_VERSION", "TemplateTeacher")

TEMPLATE_TEACHER_VERSION = 1
"""Version of the composing code (bump it when a change alters replies; the phrase tables are hashed)."""


def _tables_fingerprint() -> str:
    tables = {
        name: getattr(phrases, name) for name in phrases.__all__
    }  # every table: a phrase edit changes the name below
    text = json.dumps(
        {k: dict(v) if isinstance(v, Mapping) else v for k, v in tables.items()}, sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()[:8]


TEMPLATE_TEACHER_MODEL = f"geosynth-template-teacher-v{TEMPLATE_TEACHER_VERSION}-{_tables_fingerprint()}"
"""The model name of the template teacher: part of the LLM cache key and of the CoT stages' resume keys."""

_Kind = Literal["angle", "length", "other"]
_FIELD = re.compile(r"\{\{(\w+)\}\}")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_SYMBOL = re.compile(r"(?<![A-Za-z0-9_])(V\d+|[a-z])(?![A-Za-z0-9_])")
_POINTS = re.compile(r"(?<![a-z\\])[A-Z](?![a-z])")
_STEP_COMMENT = re.compile(r"^# step (\d+): (\w+)")
_EQUATION = re.compile(r"^eq\d+ = Eq\(")
_SYMBOLS_LINE = re.compile(r"^[\w, ]+ = symbols\(\"(?P<names>[^\"]+)\"\)")
_DEGREES = re.compile(r"\s*\*\s*pi\s*/\s*180")
_CODE_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?")
_SQRT = re.compile(r"^(\d*)\\sqrt\{(\d+)\}$")
_ASKING = re.compile(r"\b(find|what|determine|calculate|compute|solve|how|express|give)\b", re.I)
_PLAIN_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_SEGMENT = re.compile(r"(?:[A-Z]'*){2,}")
"""A segment's name in a clause: ``AB``, ``QB'``."""
_NO_BREAK = "\x00"
_FORM_CONSTANTS = frozenset({"1", "2", "4", "90", "180", "360"})
"""Numbers PAL equations write themselves (``2 * ...``, ``/ 360``); never read as a given quantity."""

#: Operators whose fact rests on a diagram relation, and the kinds of clause that can supply it.
_GROUNDS: Mapping[str, tuple[str, ...]] = {
    "Gougu": ("perp",),
    "Gsin": ("perp",),
    "Gcos": ("perp",),
    "Gtan": ("perp",),
    "Geo_Mean": ("perp", "circle"),
    "Chord2_Ang": ("circle",),
    "TanSec_Ang": ("circle",),
    "Circle_R_Circum": ("circle",),
    "Circle_D_Circum": ("circle",),
    "Circle_R_Area": ("circle",),
    "Circle_D_Area": ("circle",),
    "ArcSeg_Area": ("circle",),
    "Proportion": ("parallel",),
    "Median": ("parallel",),
}


# --- reading a prompt back ------------------------------------------------------------------------


def _inverse(name: PromptName) -> re.Pattern[str]:
    """A pattern matching exactly the renderings of a prompt template, one group per field."""
    text = template(name).text
    parts = _FIELD.split(text)  # literal, field, literal, field, ..., literal
    pattern = "".join(re.escape(part) if k % 2 == 0 else f"(?P<{part}>.*?)" for k, part in enumerate(parts))
    return re.compile(f"^{pattern}$", re.S)


_PROMPTS: tuple[tuple[PromptName, re.Pattern[str]], ...] = tuple(
    (name, _inverse(name)) for name in PROMPT_VERSIONS
)


def read_prompt(text: str) -> tuple[PromptName, dict[str, str]] | None:
    """Which MTS prompt ``text`` is a rendering of, and its field values; None for any other text."""
    for name, pattern in _PROMPTS:
        found = pattern.match(text)
        if found is not None:
            return name, found.groupdict()
    return None


# --- the diagram clauses --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Quantity:
    clause: str
    r"""The clause as written (``AC = 24``, ``m \angle CBA = 30``, ``XY = XZ = 8``)."""
    kind: _Kind


def _is_name(side: str) -> bool:
    r"""A clause side that names a quantity (``AB``, ``m \angle ABC``) rather than giving its value."""
    return side.startswith("m ") or _SEGMENT.fullmatch(side) is not None


def _norm(value: str) -> str:
    return "".join(value.split())


class _Diagram:
    """The clauses of a problem, indexed by the values they state."""

    def __init__(self, clauses: Sequence[str]) -> None:
        self.structural = tuple(c for c in clauses if c.startswith(("line ", "\\odot ")))
        self.semantic = tuple(c for c in clauses if c not in self.structural)
        self._by_value: dict[str, list[_Quantity]] = {}
        for clause in self.semantic:
            if "\\perp" in clause or "\\parallel" in clause:
                continue
            sides = [s.strip() for s in clause.split(" = ")]
            names = [s for s in sides if _is_name(s)]
            if len(sides) < 2 or not names:
                continue
            kind: _Kind = (
                "angle"
                if any(n.startswith("m ") for n in names)
                else ("length" if all(_SEGMENT.fullmatch(n) for n in names) else "other")
            )
            for side in sides:
                if not _is_name(side):
                    entries = self._by_value.setdefault(_norm(side), [])
                    if all(q.clause != clause for q in entries):
                        entries.append(_Quantity(clause, kind))

    def quantity(self, value: str, want: _Kind | None = None) -> _Quantity | None:
        """The one clause stating ``value`` (of the wanted kind when several do), or None."""
        hits = self._by_value.get(_norm(value), [])
        if want is not None and len(hits) > 1:
            hits = [q for q in hits if q.kind == want] or hits
        return hits[0] if len(hits) == 1 else None

    def values(self) -> list[str]:
        """Every value some clause states (normalised: no spaces)."""
        return list(self._by_value)

    def support(self, kinds: Sequence[str], points: set[str]) -> tuple[str, str] | None:
        """A clause of one of ``kinds`` (``perp``, ``circle``, ``parallel``) that fits the step, and its kind.

        The only clause of its kind in the diagram, or else the one sharing the most point names
        (at least two) with ``points``, the points of the quantities in the step.
        """
        for kind in kinds:
            if kind == "circle":
                pool = [c for c in self.structural if c.startswith("\\odot ")]
            else:
                pool = [c for c in self.semantic if f"\\{kind}" in c]
            if len(pool) == 1:
                return pool[0], kind
            scored = sorted(((len(set(_POINTS.findall(c)) & points), c) for c in pool), reverse=True)
            if scored and scored[0][0] >= 2 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
                return scored[0][1], kind
        return None


def _clause_lines(field: str) -> list[str]:
    """The clauses of a prompt's clause section (``- clause`` lines, or ``(none)``)."""
    return [line[2:].strip() for line in field.splitlines() if line.startswith("- ")]


def _asked(question: str) -> str:
    """The sentence of the question that asks for something, without its final punctuation."""
    sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", question.strip()) if s.strip()]
    if not sentences:
        return "the value asked for"
    asking = [s for s in sentences if _ASKING.search(s)]
    text = (asking or sentences)[-1].rstrip(".?!").strip()
    return text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + " ..."


def _symbols(token: str) -> list[str]:
    """The unknowns (letters, ``V`` names) an operand mentions: ``3x+5`` -> ``x``."""
    return _SYMBOL.findall(_LATEX_COMMAND.sub(" ", token))


def _number(value: float) -> str:
    """A solved value as text: ``48``, ``28.69``, ``0.0312``."""
    if abs(value - round(value)) <= 1e-6 * max(1.0, abs(value)):
        return str(round(value))
    return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.3g}"


def _exact(value: float) -> bool:
    return abs(value - round(value)) <= 1e-6 * max(1.0, abs(value))


def _solved(name: str, value: float) -> str:
    """``y = 48``, or ``V0 ≈ 28.69`` for a value that is rounded."""
    return f"{name} {'=' if _exact(value) else '≈'} {_number(value)}"


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _pick(rng: random.Random, options: Sequence[str]) -> str:
    return options[rng.randrange(len(options))]


def _lookup(
    table: Mapping[str, tuple[str, ...]], op: str, arity: int, context: str | None
) -> tuple[str, ...]:
    for key in (f"{op}@{context}" if context else None, f"{op}/{arity}", op):
        if key is not None and key in table:
            return table[key]
    return (geodsl.OPERATORS[op].meaning.rstrip("."),)


# --- CoT-Program ----------------------------------------------------------------------------------


def _steps(program: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for token in program.split():
        if token in geodsl.OPERATORS:
            steps.append((token, []))
        elif steps:
            steps[-1][1].append(token)
        else:
            raise BackendError(f"the program {program!r} does not start with an operator")
    return steps


def _role(spec: OpSpec, position: int, arity: int) -> tuple[str, _Kind | None]:
    """The role of an operand in prose (``hypotenuse``, ``central angle``) and the kind of quantity it is.

    A role written ``X or Y`` in the registry is X in one form of the operator and Y in the other:
    a circle formula's second operand is a central angle with three operands and the
    circumference (or area) with two; a ratio's third is the ratio with three and the exponent
    with four.
    """
    role = spec.role_of(position, arity)
    if " or " in role:
        first, second = role.split(" or ", 1)
        full = arity == len(spec.roles)
        role = first if full != (spec.name == "Ratio") else second
    role = role.replace(" (degrees)", "")
    if "angle" in role or "arc" in role:
        return role, "angle"
    if any(word in role for word in ("number", "exponent", "ratio")):
        return role, None
    return role, "length"


def _equation(spec: OpSpec, args: Sequence[str]) -> str | None:
    """The operator's equation with the operand values in place (None if its form does not fit)."""

    def value(token: str) -> str:
        return f"({token})" if re.search(r"[-+*/ ]", token.lstrip("-")) else token

    if spec.variadic:
        joiner = " + " if spec.name == "Sum" else " * "
        return f"{joiner.join(value(a) for a in args[:-1])} = {value(args[-1])}"
    for form in spec.equation.split("  or  "):
        letters = set(re.findall(r"\b([a-e])\b", form))
        if letters and max(ord(x) - ord("a") for x in letters) + 1 == len(args):
            return re.sub(r"\b([a-e])\b", lambda m: value(args[ord(m.group(1)) - ord("a")]), form)
    return None


def _context(op: str, args: Sequence[str], kinds: Sequence[_Kind | None]) -> str | None:
    if op == "Sum" and args and args[-1] in ("90", "180", "360"):
        return args[-1]
    if op == "Equal":
        known = [k for k in kinds if k is not None]
        if known and all(k == "angle" for k in known):
            return "angle"
        if known and all(k == "length" for k in known):
            return "length"
    return None


def _split_chains(
    described: list[tuple[tuple[str, _Kind | None], str]], args: Sequence[str]
) -> list[tuple[tuple[str, _Kind | None], str]]:
    """Name each use of a chained clause by its own side: ``XY = XZ = 8`` twice reads ``XY = 8``, ``XZ = 8``."""
    uses: dict[str, int] = {}
    for (text, _), _ in described:
        uses[text] = uses.get(text, 0) + 1
    seen: dict[str, int] = {}
    out: list[tuple[tuple[str, _Kind | None], str]] = []
    for ((text, kind), role), token in zip(described, args, strict=True):
        names = [side.strip() for side in text.split(" = ") if _is_name(side.strip())]
        if uses[text] > 1 and len(names) >= uses[text]:
            k = seen.get(text, 0)
            seen[text] = k + 1
            text = f"{names[k]} = {token}"
        out.append(((text, kind), role))
    return out


@dataclass
class _ProgramWriter:
    question: str
    diagram: _Diagram
    rng: random.Random
    target: str | None
    seen: set[str]

    def describe(self, token: str, want: _Kind | None) -> tuple[str, _Kind | None]:
        """How an operand reads in prose, and the kind of its clause."""
        found = self.diagram.quantity(token, want)
        first = token not in self.seen
        self.seen.update([token, *_symbols(token)])
        if found is not None:
            return found.clause, found.kind
        if token == self.target and first and re.fullmatch(r"V\d+", token):
            return f"{token} (the quantity asked for)", None
        return token, None

    def roles(self, spec: OpSpec, args: Sequence[str]) -> tuple[str, list[_Kind | None], set[str]]:
        """The sentence matching operands to roles, the operands' clause kinds and point names."""
        roles = [_role(spec, i, len(args)) for i in range(len(args))]
        described = [(self.describe(a, kind), role) for a, (role, kind) in zip(args, roles, strict=True)]
        described = _split_chains(described, args)
        groups: list[tuple[list[str], str]] = []
        for (text, _), role in described:
            if groups and groups[-1][1] == role:
                groups[-1][0].append(text)
            else:
                groups.append(([text], role))
        points = {p for (text, _), _ in described if " = " in text for p in _POINTS.findall(text)}
        kinds: list[_Kind | None] = [kind for (_, kind), _ in described]
        if spec.name == "Equal" and len(described) == 2:
            (left, _), (right, _) = (d for d, _ in described)
            frame = _pick(self.rng, phrases.EQUAL_FRAMES)
            return frame.format(a=left, b=right), kinds, points
        frame = _pick(self.rng, phrases.ROLE_FRAMES)
        items: list[str] = []
        for k, (texts, role) in enumerate(groups):
            plural = len(texts) > 1
            noun = f"{role}s" if plural else role
            if "{as_list}" in frame:
                items.append(f"{_join(texts)} as the {noun}")
            elif k == 0:
                items.append(f"{_join(texts)} {'are' if plural else 'is'} the {noun}")
            else:
                items.append(f"{_join(texts)} the {noun}")
        sentence = frame.format(is_list=_join(items), as_list=_join(items))
        return sentence, kinds, points

    def step(
        self, index: int, op: str, args: list[str], trace: geodsl.StepTrace | None, answer: float | None
    ) -> str:
        spec = geodsl.OPERATORS[op]
        if op == "Get":
            title = _pick(self.rng, phrases.TITLES["Get"])
            quantity, _ = self.describe(args[0], None)
            asked = _asked(self.question)
            if answer is None:
                body = f'The question asks "{asked}"; the answer is {quantity}.'
            else:
                body = _pick(self.rng, phrases.ANSWER_FRAMES).format(
                    asked=asked,
                    quantity=quantity,
                    value=_number(answer) if _exact(answer) else f"about {_number(answer)}",
                )
            return f"{index}. **{title}.** {body}\n   **Op:** `{' '.join([op, *args])}`"
        new = [s for a in args for s in _symbols(a) if s not in self.seen]
        role_sentence, kinds, points = self.roles(spec, args)
        context = _context(op, args, kinds)
        fact = _pick(self.rng, _lookup(phrases.FACTS, op, len(args), context))
        fact_sentence = _pick(self.rng, phrases.FACT_FRAMES).format(fact=fact, Fact=_cap(fact))
        equation = _equation(spec, args)
        if equation is not None:
            joiner = _pick(self.rng, (", so {eq}.", ", which gives {eq}.", "; that is, {eq}."))
            role_sentence = role_sentence.rstrip(".") + joiner.format(eq=equation)
        sentences = [fact_sentence, role_sentence]
        if self.rng.random() < 0.5:
            sentences.reverse()
        support = self.diagram.support(_GROUNDS.get(op, ()), points)
        if support is not None:
            clause, kind = support
            ground = _pick(self.rng, phrases.GROUND_FRAMES[kind]).format(clause=clause)
            sentences.insert(self.rng.randrange(len(sentences) + 1), ground)
        sentences.append(self._result(index, trace, new))
        title = _pick(self.rng, _lookup(phrases.TITLES, op, len(args), context))
        fixed = [s.name for s in trace.solved] if trace is not None else new
        frames = phrases.TITLE_FRAMES if len(fixed) == 1 else phrases.TITLE_FRAMES[:1]
        heading = _pick(self.rng, frames).format(title=title, target=fixed[0] if fixed else "")
        body = " ".join(s for s in sentences if s)
        return f"{index}. **{heading}.** {body}\n   **Op:** `{' '.join([op, *args])}`"

    def _result(self, index: int, trace: geodsl.StepTrace | None, new: list[str]) -> str:
        if trace is None:  # the executor failed on this program: say what the step is for, no values
            return _pick(self.rng, phrases.RESULT_FRAMES).format(targets=_join(new)) if new else ""
        if trace.solved:
            solved = _join([_solved(s.name, s.value) for s in trace.solved])
            joint = any(len(s.steps) > 1 for s in trace.solved)
            return _pick(self.rng, phrases.JOINT_FRAMES if joint else phrases.SOLVE_FRAMES).format(
                solved=solved
            )
        waiting = [u for u in trace.open_unknowns if u in new] or list(trace.open_unknowns)
        if waiting:
            return _pick(self.rng, phrases.OPEN_FRAMES).format(unknowns=_join(waiting))
        return ""


def _cot_program(question: str, clauses: Sequence[str], program: str, rng: random.Random) -> str:
    steps = _steps(program)
    try:
        execution: geodsl.Execution | None = geodsl.execute_instantiated(program)
    except geodsl.GeoDSLError:
        execution = None
    gets = [args[0] for op, args in steps if op == "Get" and args]
    writer = _ProgramWriter(question, _Diagram(clauses), rng, gets[-1] if gets else None, set())
    lines: list[str] = []
    intro = _pick(rng, phrases.INTRO_LINES)
    if intro:
        lines.append(intro)
    for k, (op, args) in enumerate(steps):
        trace = execution.steps[k] if execution is not None and k < len(execution.steps) else None
        answer = None if trace is None else trace.value
        lines.append(writer.step(k + 1, op, args, trace, answer))
    lines.append(f"Final program: {program}")
    return "\n".join(lines) + "\n"


# --- CoT-PAL --------------------------------------------------------------------------------------


def _code_tokens(code: str) -> set[str]:
    return set(_CODE_TOKEN.findall(_DEGREES.sub(" ", code)))


def _code_form(value: str) -> str | None:
    """A clause value as a PAL script writes it (``24``, ``x``, ``3*sqrt(2)``), or None if not simple."""
    if _PLAIN_NUMBER.match(value) or re.fullmatch(r"[a-z]|V\d+", value):
        return value
    root = _SQRT.match(value)
    if root is not None:
        return f"{root.group(1)}*sqrt({root.group(2)})" if root.group(1) else f"sqrt({root.group(2)})"
    return None


@dataclass
class _PalWriter:
    diagram: _Diagram
    rng: random.Random

    def knowns(self, equation: str, symbols: set[str]) -> tuple[list[_Quantity], set[str]]:
        """The given quantities whose values the equation uses, and their point names."""
        tokens = _code_tokens(equation)
        compact = _norm(_DEGREES.sub(" ", equation))
        found: list[_Quantity] = []
        for value in self.diagram.values():
            code = _code_form(value)
            if code is None or code in _FORM_CONSTANTS or code in symbols:
                continue
            present = (
                code in tokens if "sqrt" not in code else re.search(rf"(?<![\w*]){re.escape(code)}", compact)
            )
            quantity = self.diagram.quantity(value)
            if present and quantity is not None and quantity not in found:
                found.append(quantity)
        return found, {p for q in found for p in _POINTS.findall(q.clause)}

    def unknown(self, name: str) -> str:
        found = self.diagram.quantity(name)
        return f"{name} ({_keep(found.clause)})" if found is not None else name

    def rationale(
        self, op: str, equation: str, symbols: set[str], targets: list[str], pending: list[str]
    ) -> list[str]:
        knowns, points = self.knowns(equation, symbols)
        kinds = {q.kind for q in knowns}
        context: str | None = None
        total = re.search(r",\s*(90|180|360)\)\s*$", equation)
        if op == "Sum" and total is not None:
            context = total.group(1)
        elif op == "Equal" and len(kinds) == 1 and kinds <= {"angle", "length"}:
            context = next(iter(kinds))
        arity = _pal_arity(op, equation)
        fact = _pick(self.rng, _lookup(phrases.FACTS, op, arity, context))
        title = _pick(self.rng, _lookup(phrases.TITLES, op, arity, context))
        opener = _pick(
            self.rng,
            (f"{title}: {fact}.", f"{_cap(fact)}.", f"Recall that {fact}.", f"{title}. {_cap(fact)}."),
        )
        sentences = [opener]
        extra: list[str] = []
        support = self.diagram.support(_GROUNDS.get(op, ()), points)
        if support is not None:
            clause, kind = support
            extra.append(_pick(self.rng, phrases.GROUND_FRAMES[kind]).format(clause=_keep(clause)))
        if knowns:
            extra.append(
                _pick(self.rng, phrases.KNOWN_FRAMES).format(knowns=_join([_keep(q.clause) for q in knowns]))
            )
        self.rng.shuffle(extra)
        sentences.extend(extra)
        if targets:
            sentences.append(
                _pick(self.rng, phrases.RESULT_FRAMES).format(
                    targets=_join([self.unknown(t) for t in targets])
                )
            )
        elif pending:
            sentences.append(
                _pick(self.rng, phrases.PENDING_FRAMES).format(
                    unknowns=_join([self.unknown(t) for t in pending])
                )
            )
        return _comment(" ".join(sentences))


def _pal_arity(op: str, equation: str) -> int:
    """The operand count of a PAL equation's step where it changes the fact (0: not told apart).

    CoT-PAL prompts carry the script, not the program: the forms with an extra operand show
    themselves (an arc or sector has ``/ 360``, a powered ratio has ``**``).
    """
    if op.startswith("Circle_"):
        return 3 if "/ 360" in equation else 2
    if op == "Proportion":
        return 5 if "**" in equation else 4
    if op == "Ratio":
        return 4 if "**" in equation else 3
    return 0


def _keep(text: str) -> str:
    """``text`` with its spaces protected: a comment line never breaks inside a clause."""
    return text.replace(" ", _NO_BREAK)


def _comment(text: str) -> list[str]:
    """A rationale as ``# `` comment lines of at most about 96 characters."""
    wrapped = textwrap.wrap(text, width=94, break_long_words=False, break_on_hyphens=False)
    return [f"# {line.replace(_NO_BREAK, ' ')}" for line in wrapped]


def _solve_targets(lines: Sequence[str]) -> list[str]:
    """The unknowns the solve lines after an equation assign (``x = solve(...)``, ``x, y = solution[x], ...``)."""
    names: list[str] = []
    for line in lines:
        if " = " not in line or line.startswith("solution"):
            continue
        lhs = line.split(" = ", 1)[0]
        names.extend(n.strip() for n in lhs.split(",") if n.strip() and n.strip() not in names)
    return names


def _cot_pal(question: str, clauses: Sequence[str], pal: str, rng: random.Random) -> str:
    writer = _PalWriter(_Diagram(clauses), rng)
    lines = pal.splitlines()
    symbols: set[str] = set()
    for line in lines:
        declared = _SYMBOLS_LINE.match(line)
        if declared is not None:
            symbols.update(declared.group("names").split())
    solved: set[str] = set()
    out: list[str] = []
    for i, line in enumerate(lines):
        step = _STEP_COMMENT.match(line)
        if step is not None and step.group(2) in geodsl.OPERATORS:
            eq_at = next((j for j in range(i + 1, len(lines)) if _EQUATION.match(lines[j])), None)
            if eq_at is not None:
                after: list[str] = []
                for follow in lines[eq_at + 1 :]:
                    if not follow.strip() or follow.startswith("#"):
                        break
                    after.append(follow)
                equation = lines[eq_at]
                mentioned = {t for t in _code_tokens(equation.split("=", 1)[1]) if t in symbols}
                targets = _solve_targets(after)
                pending = sorted(mentioned - solved) if not targets else []
                out.extend(writer.rationale(step.group(2), equation, symbols, targets, pending))
                solved.update(targets)
        elif line.startswith("print("):
            out.extend(_comment(_pick(rng, phrases.PRINT_FRAMES).format(asked=_asked(question))))
        out.append(line)
    return "```python\n" + "\n".join(out).strip("\n") + "\n```\n"


# --- the sampler ----------------------------------------------------------------------------------


def _rng(seed: int, index: int, prompt: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{index}\x00{prompt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class TemplateTeacher:
    """A geotts sampler that writes CoT-Program and CoT-PAL replies from templates (no model).

    Args:
        seed: the phrasing seed used when a request carries none (``SamplingParams.seed`` wins).

    Raises (from :meth:`generate`):
        BackendError: a prompt that is not one of the MTS prompts (the teacher answers nothing else).
    """

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def reply(self, prompt: str, *, seed: int | None = None, index: int = 0) -> str:
        """The reply to one rendered MTS prompt.

        Args:
            prompt: a rendering of the ``cot_pal``, ``cot_pal_repair`` or ``cot_program`` template.
            seed: the phrasing seed (default: the teacher's).
            index: the candidate's position among the request's ``n`` (another phrasing per index).

        Raises:
            BackendError: ``prompt`` is not an MTS prompt.
        """
        read = read_prompt(prompt)
        if read is None:
            head = " ".join(prompt.split()[:12])
            raise BackendError(
                "the template teacher answers only the MTS prompts (cot_pal, cot_pal_repair, "
                f"cot_program); got {head!r}"
            )
        name, fields = read
        rng = _rng(self.seed if seed is None else seed, index, prompt)
        if name == "cot_program":
            return _cot_program(fields["question"], _clause_lines(fields["clauses"]), fields["program"], rng)
        clauses = _clause_lines(fields.get("clauses", ""))  # the repair prompt carries none
        return _cot_pal(fields["question"], clauses, fields["pal"], rng)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """``request.n`` replies per request (images, if any, are not looked at)."""
        out: list[list[Completion]] = []
        for request in requests:
            prompt = request.prompt if request.prompt is not None else request.messages[-1].content
            params = request.params
            seed = params.seed if isinstance(params, SamplingParams) and params.seed is not None else None
            out.append(
                [
                    Completion(text=self.reply(prompt, seed=seed, index=i), num_tokens=None)
                    for i in range(request.n)
                ]
            )
        return out
