"""PGPS program traces as the critic judges them: one operator application per line.

A policy trained on program traces writes its whole program on one line, after a ``Solution:`` header
(``Solution:`` then ``Sum 105 y 180 Get y`` on the next line). :func:`geotts.split_steps`, the one splitter of geo, would return
that line as a single step, while the exact step labels of a synthetic problem judge one operator
application at a time. :class:`ProgramLayout` defines the layout once: the header stays as written and
every operator starts a new ``Step k:`` line::

    Solution:
    Step 1: Sum 105 y 180
    Step 2: Get y

so ``split_steps`` gives one step per operator (the header becomes the preamble, which is not judged)
and ``geotts.refined_prefix`` writes a correction as the next ``Step k:`` line. The policy never sees
this layout: :class:`ProgramLayoutSampler` maps a refined prefix back to the one-line form before the
policy continues it and renders what it writes, and :meth:`ProgramLayout.extractor` reads answers from
the one-line form, so a sampler, an answer extractor and a critic compose into geotts's refined
best-of-N unchanged.

geoprm does not depend on the program language: the operator names come from the caller
(``ProgramLayout(geodsl.ops.OPERATORS)``).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence

from geotts import AnswerExtractor, Completion, GenerationRequest, Problem, Sampler, format_steps

__all__ = ("ProgramLayout", "ProgramLayoutSampler")

_LABEL_RE = re.compile(r"^\s*step\s*\d+\s*:\s*", re.IGNORECASE)


class ProgramLayout:
    """Program traces rendered one operator application per ``Step k:`` line, and back."""

    def __init__(self, operators: Iterable[str], *, header: str = "Solution:") -> None:
        """The layout for a program language.

        Args:
            operators: the operator names of the language (a token equal to one starts a step).
            header: the line the policy writes before its program.

        Raises:
            ValueError: no operator names, or a name that is not one whitespace-free token.
        """
        names = frozenset(operators)
        if not names or any(not name or name != name.strip() or len(name.split()) != 1 for name in names):
            raise ValueError("operators must be non-empty names without whitespace")
        self.operators = names
        self.header = header

    def _parts(self, text: str) -> tuple[str, str]:
        """(the header line as written, or ""; the text after it)."""
        first, _, rest = text.lstrip("\n").partition("\n")
        if first.strip() == self.header:
            return first.strip(), rest
        return "", text

    def split(self, program: str) -> tuple[str, ...]:
        """The steps of a program written on one line (or on several: every whitespace separates tokens).

        A step starts at every operator token and runs to the next one; tokens before the first
        operator form a step of their own, so a malformed start is a step that can be judged wrong.
        """
        steps: list[list[str]] = []
        for token in program.split():
            if token in self.operators or not steps:
                steps.append([token])
            else:
                steps[-1].append(token)
        return tuple(" ".join(step) for step in steps)

    def steps(self, text: str) -> tuple[str, ...]:
        """The steps of a policy's program trace (after its header), as the critic judges them."""
        return self.split(self._parts(text)[1])

    def render(self, text: str) -> str:
        """The policy's text in the critic's layout: the header line, then one ``Step k:`` line per step.

        Text without program tokens is returned as it is.
        """
        head, rest = self._parts(text)
        steps = self.split(rest)
        if not steps:
            return text
        body = format_steps(steps)
        return f"{head}\n{body}" if head else body

    def one_line(self, text: str) -> str:
        """Text in the critic's layout (or a prefix of it) back in the policy's form.

        The header line, then every token of the steps on one line, ``Step k:`` labels removed; a
        prefix that holds only the header keeps its line break, so the policy starts its program.
        """
        head, rest = self._parts(text)
        tokens = [token for line in rest.splitlines() for token in _LABEL_RE.sub("", line).split()]
        if not tokens:
            return f"{head}\n" if head else ""
        program = " ".join(tokens)
        return f"{head}\n{program}" if head else program

    def extractor(self, inner: AnswerExtractor) -> AnswerExtractor:
        """An answer extractor that reads a rendered candidate through ``inner`` in the one-line form."""
        layout = self

        def extract(completion: Completion, trace_type: str | None, problem: Problem) -> Hashable | None:
            return inner(
                completion.model_copy(update={"text": layout.one_line(completion.text)}), trace_type, problem
            )

        return extract


class ProgramLayoutSampler:
    """A geotts ``Sampler`` that shows a program policy its own one-line form and returns the critic's layout.

    A request's ``assistant_prefix`` (a refined prefix in the critic's layout) goes to the policy in
    the one-line form; each candidate comes back as the rendered whole minus the request's prefix, so
    ``prefix + candidate`` is the rendered solution, as ``geotts.RefinedBestOfN`` reads it. When the
    policy's continuation does not start a new step (it extends the prefix's last token, or the
    correction held two operators), the rendered whole does not start with the prefix; the candidate is
    then the policy's text as written, which still reads back to the same program tokens.
    """

    def __init__(self, sampler: Sampler, layout: ProgramLayout) -> None:
        """Wrap ``sampler`` (the policy) for ``layout``."""
        self.sampler = sampler
        self.layout = layout

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Generate through the wrapped sampler; candidates in the critic's layout."""
        inner = [
            r.model_copy(update={"assistant_prefix": self.layout.one_line(r.assistant_prefix)})
            if r.assistant_prefix
            else r
            for r in requests
        ]
        outputs = self.sampler.generate(inner)
        return [
            [self._back(request.assistant_prefix, sent.assistant_prefix, c) for c in comps]
            for request, sent, comps in zip(requests, inner, outputs, strict=True)
        ]

    def _back(self, prefix: str, sent: str, completion: Completion) -> Completion:
        whole = self.layout.render(sent + completion.text)
        if whole.startswith(prefix):
            text = whole[len(prefix) :]
        elif prefix.endswith("\n") and whole == prefix[:-1]:
            text = ""
        else:
            text = completion.text
        return completion.model_copy(update={"text": text})
