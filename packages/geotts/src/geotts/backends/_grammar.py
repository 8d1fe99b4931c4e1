"""Decoding constrained to a solution-program grammar (PGPS-style programs such as ``Gougu N0 N1 V0 Get V0``).

The grammar comes in as data (:class:`ProgramGrammar`; geodsl's ``geodsl.ops.program_grammar()``
provides it for the PGPS language), so geotts knows no operator itself. A request's own part, the
problem's numbers and the argument letters they name, comes from
:attr:`geotts.GenerationRequest.numbers`.

Programs name the problem's numbers in one of two ways (:attr:`ProgramGrammar.operands`):
``indexed`` by position, ``N0 .. N{k-1}`` (the PGPS expressions), or ``values`` by their spelling,
``Sum 105 y 180 Get y`` for the numbers ``["105", "y"]`` (the instantiated form, which multi-trace
synthesis writes as the program trace and the models trained on it emit; constants are spelled as
their values there too).

Text before the header line (``Solution:`` at the start of a line) is free; after it the text must
stay a prefix of a grammatical program: operators the grammar names, each with an operand count it
accepts, operands that name the problem's numbers only, ``V`` unknowns introduced in order
(``V0`` first, a new one numbered one past the last), constants of the grammar, argument letters that
occur in the problem's numbers, one space between tokens, and the terminator step (``Get x``) last,
after which only the end-of-sequence token may follow. :class:`ProgramLogitsProcessor` enforces
that token by token: a character automaton over the text decoded so far, walked over a trie of the
tokenizer's vocabulary, gives the tokens whose text keeps the program a valid prefix, and every other
logit is set to minus infinity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import Field, ValidationError, model_validator

from geotts._models import GenerationRequest, GeoTTSModel
from geotts.errors import StrategyConfigError

__all__ = ("ProgramGrammar", "ProgramLogitsProcessor", "TokenGrammar", "problem_letters")

_WHITESPACE = " \t\r\n"
_LEAD = 2
"""Most spaces or newlines allowed between the header and the first operator (``Solution:\\n`` has one)."""
_OPERAND = re.compile(r"[NV](0|[1-9][0-9]*)|[a-z]")
_UNKNOWN_LIKE = re.compile(r"[NV][0-9]+")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")


class ProgramGrammar(GeoTTSModel):
    """The shape of a solution program, as data: operators with their operand counts, operands, terminator."""

    operators: dict[str, tuple[int, int | None]]
    """Operator name -> (fewest, most operands); most is None for variadic operators (capped by ``max_operands``)."""
    terminator: str = "Get"
    """The operator of the last step; the program ends when its operands are complete."""
    operands: Literal["indexed", "values"] = "indexed"
    """How a program names the problem's numbers: ``indexed``, ``N<i>`` for the i-th number (``Gougu N0 N1
    V0 Get V0``); ``values``, the number as the problem writes it (``Gougu 3 4 V0 Get V0``; ``3x+5``,
    ``4\\sqrt{3}`` and ``y`` are one operand each), the instantiated form of program traces."""
    constants: tuple[str, ...] = ()
    """Constant operand tokens, as the programs spell them (``C2``, ``C0.5``, ... when ``indexed``; ``2``,
    ``0.5``, ... when ``values``); not allowed as the terminator's operand."""
    variables: Annotated[int, Field(ge=0)] = 7
    """How many intermediate unknowns ``V0 .. V{variables-1}`` a program may introduce (PGPS vocabulary: 7)."""
    letters: bool = True
    """Allow argument letters as operands: the lowercase letters that occur in the problem's numbers
    (``x`` when a number is ``3x+5``), as in ``Get x``."""
    max_steps: Annotated[int, Field(ge=1)] = 8
    """Most steps before the terminator step (PGPS test programs have at most 7)."""
    max_operands: Annotated[int, Field(ge=1)] = 8
    """Most operands of a variadic step (PGPS test programs have at most 8)."""
    header: str | None = "Solution:"
    """The line after which the program starts (text before it is free); None constrains the whole answer."""
    trace_types: tuple[str, ...] = ("program",)
    """Requests whose ``trace_type`` is one of these are constrained; others decode freely."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.operators:
            raise StrategyConfigError("ProgramGrammar.operators is empty")
        for name, (low, high) in self.operators.items():
            if not name or any(c in _WHITESPACE for c in name) or _OPERAND.fullmatch(name):
                raise StrategyConfigError(f"ProgramGrammar: {name!r} cannot be an operator name")
            if low < 0 or (high is not None and high < max(low, 1)):
                raise StrategyConfigError(
                    f"ProgramGrammar: operator {name!r} has operand counts {low}..{high}"
                )
        if self.terminator not in self.operators:
            raise StrategyConfigError(f"ProgramGrammar: terminator {self.terminator!r} is not an operator")
        bad = [
            c for c in self.constants if not c or any(ch in _WHITESPACE for ch in c) or c in self.operators
        ]
        if bad:
            raise StrategyConfigError(f"ProgramGrammar: invalid constant tokens {bad}")
        if self.header is not None and not self.header.strip():
            raise StrategyConfigError("ProgramGrammar.header must be None or non-blank text")
        return self

    def number_operands(self, numbers: Sequence[str]) -> tuple[str, ...]:
        """The operand tokens that name the problem's numbers, in order, each once.

        ``indexed``: ``N0 .. N{k-1}``. ``values``: the spellings themselves, except those no program
        text can hold as one operand (empty, with whitespace, an operator name, or spelled like an
        ``N``/``V`` token, which a reader takes for an index or an unknown).

        Args:
            numbers: The problem's N list.
        """
        if self.operands == "indexed":
            return tuple(f"N{i}" for i in range(len(numbers)))
        kept = (
            v
            for v in numbers
            if v
            and not any(c in _WHITESPACE for c in v)
            and v not in self.operators
            and not _UNKNOWN_LIKE.fullmatch(v)
        )
        return tuple(dict.fromkeys(kept))

    def accepts(self, program: str, numbers: Sequence[str]) -> bool:
        """Whether ``program`` (the text after the header, if any) is a complete program of this grammar.

        Args:
            program: The program text, e.g. ``"Gougu N0 N1 V0 Get V0"`` or, with ``operands="values"``,
                ``"Gougu 3 4 V0 Get V0"`` (tokens one space apart).
            numbers: The problem's N list (what the number operands may be; its values give the letters).
        """
        auto = _Automaton(self, self.number_operands(numbers), problem_letters(numbers))
        state = auto.advance(("lead", 0), program)
        return state is not None and auto.accepting(state)

    @classmethod
    def from_data(cls, data: Mapping[str, object], **overrides: object) -> ProgramGrammar:
        """Build a grammar from JSON-shaped data (lists for pairs), e.g. ``geodsl.ops.program_grammar()``.

        Args:
            data: ``operators`` (name -> [min, max or None]) and optionally any other field.
            overrides: Fields set on top of ``data`` (``max_steps=4``, ``header=None``, ...).

        Raises:
            StrategyConfigError: the data does not describe a grammar.
        """
        try:
            return cls.model_validate({**data, **overrides}, strict=False)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "grammar"
            raise StrategyConfigError(f"invalid program grammar: {where}: {first['msg']}") from exc


def problem_letters(numbers: Sequence[str]) -> tuple[str, ...]:
    r"""The argument letters of a problem: lowercase letters in its number values, LaTeX commands removed.

    ``["3x+5", "\frac{y}{2}", "12"]`` gives ``("x", "y")``: the unknowns a program may name directly.
    """
    found = {c for value in numbers for c in _LATEX_COMMAND.sub("", value) if "a" <= c <= "z"}
    return tuple(sorted(found))


# --- the automaton ---------------------------------------------------------------------------------
#
# Word level: a program is words separated by single spaces. The word state is
# (operator of the current step or None before the first, operands so far, steps so far, V unknowns
# introduced so far). Character level: ("free", line) before the header (the current line's text, or
# None once it cannot be the header), ("lead", n) after the header, ("prog", word state, partial word).

_Word = tuple[str | None, int, int, int]
_State = tuple[Any, ...]
_DONE: _State = ("done",)


class _Automaton:
    """The character automaton of one (grammar, number operands, letters) combination, with its caches."""

    def __init__(self, grammar: ProgramGrammar, numbers: tuple[str, ...], letters: tuple[str, ...]) -> None:
        self.g = grammar
        self.numbers = list(numbers)
        self.letters = list(letters) if grammar.letters else []
        self.start: _Word = (None, 0, 0, 0)
        self._words: dict[_Word, dict[str, _Word]] = {}
        self._prefixes: dict[_Word, frozenset[str]] = {}
        self._live: dict[_Word, bool] = {}
        self._step: dict[tuple[_State, str], _State | None] = {}
        self._next_chars: dict[_State, frozenset[str]] = {}
        self.allowed: dict[_State, Any] = {}
        """Cache for :class:`TokenGrammar`: char state -> allowed token ids."""

    # word level
    def _raw_words(self, w: _Word) -> dict[str, _Word]:
        op, n, steps, v = w
        g = self.g
        out: dict[str, _Word] = {}
        if op == g.terminator:
            high = g.operators[g.terminator][1]
            if n < min(high if high is not None else g.max_operands, g.max_operands):
                for tok in [*self.numbers, *(f"V{j}" for j in range(v)), *self.letters]:
                    out[tok] = (op, n + 1, steps, v)
            return out
        if op is None or n >= g.operators[op][0]:
            for name in g.operators:
                if name == g.terminator:
                    out[name] = (name, 0, steps, v)
                elif steps < g.max_steps:
                    out[name] = (name, 0, steps + 1, v)
        if op is not None:
            high = g.operators[op][1]
            if n < (g.max_operands if high is None else high):
                for tok in [*self.numbers, *g.constants, *self.letters]:
                    out[tok] = (op, n + 1, steps, v)
                for j in range(min(v + 1, g.variables)):
                    out[f"V{j}"] = (op, n + 1, steps, max(v, j + 1))
        return out

    def final(self, w: _Word) -> bool:
        """Whether the program may end after word state ``w`` (the terminator has its operands)."""
        return w[0] == self.g.terminator and w[1] >= self.g.operators[self.g.terminator][0]

    def live(self, w: _Word) -> bool:
        """Whether some program continues from ``w`` (word states only grow, so this terminates)."""
        if w not in self._live:
            self._live[w] = self.final(w) or any(self.live(nxt) for nxt in self._raw_words(w).values())
        return self._live[w]

    def words(self, w: _Word) -> dict[str, _Word]:
        """The next words allowed after ``w`` that do not lead to a dead end."""
        if w not in self._words:
            self._words[w] = {tok: nxt for tok, nxt in self._raw_words(w).items() if self.live(nxt)}
            self._prefixes[w] = frozenset(tok[:i] for tok in self._words[w] for i in range(1, len(tok) + 1))
        return self._words[w]

    # character level
    def initial(self) -> _State:
        """The state before any answer text."""
        return ("lead", 0) if self.g.header is None else ("free", "")

    def step(self, s: _State, c: str) -> _State | None:
        """The state after character ``c``, or None when ``c`` leaves the grammar (memoised)."""
        key = (s, c)
        if key not in self._step:
            self._step[key] = self._next(s, c)
        return self._step[key]

    def _next(self, s: _State, c: str) -> _State | None:
        kind = s[0]
        if kind == "free":
            line: str | None = s[1]
            if c == "\n":
                return ("free", "")
            if line is None:
                return s
            grown = (line + c).lstrip(" \t")
            header = self.g.header or ""
            if grown == header:
                return ("lead", 0)
            return ("free", grown if header.startswith(grown) else None)
        if kind == "lead":
            if c in " \n":
                return ("lead", s[1] + 1) if s[1] < _LEAD else None
            return self._next(("prog", self.start, ""), c)
        if kind != "prog":
            return None
        w, partial = s[1], s[2]
        words = self.words(w)
        if c == " ":
            nxt = words.get(partial) if partial else None
            return None if nxt is None or not self.words(nxt) else ("prog", nxt, "")
        grown = partial + c
        return ("prog", w, grown) if grown in self._prefixes[w] else None

    def next_chars(self, s: _State) -> frozenset[str]:
        """The characters that may follow in program state ``s`` (a superset of those :meth:`step` takes)."""
        if s not in self._next_chars:
            if s[0] == "lead":
                out = self.next_chars(("prog", self.start, "")) | (
                    frozenset(" \n") if s[1] < _LEAD else frozenset()
                )
            elif s[0] == "prog":
                w, partial = s[1], s[2]
                words = self.words(w)
                cut = len(partial)
                found = {tok[cut] for tok in words if len(tok) > cut and tok.startswith(partial)}
                out = frozenset(found | ({" "} if partial in words else set()))
            else:
                out = frozenset()
            self._next_chars[s] = out
        return self._next_chars[s]

    def advance(self, s: _State | None, text: str) -> _State | None:
        """The state after ``text``."""
        for c in text:
            if s is None:
                return None
            s = self.step(s, c)
        return s

    def accepting(self, s: _State) -> bool:
        """Whether the text so far is a complete program."""
        if s[0] != "prog":
            return False
        nxt = self.words(s[1]).get(s[2]) if s[2] else None
        return nxt is not None and self.final(nxt)


# --- the vocabulary side ---------------------------------------------------------------------------


class _Trie:
    __slots__ = ("ids", "kids")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.kids: dict[str, _Trie] = {}


class TokenGrammar:
    """A grammar bound to a tokenizer: token texts, a trie over them, and the automata of each problem shape.

    Built once per sampler. Each token's text is its decoding alone, which for byte-level BPE
    (Qwen, GPT-2 style) is exactly the text it adds; tokens that are not whole characters, special
    tokens and ids past the tokenizer's length never appear inside a program.
    """

    def __init__(self, grammar: ProgramGrammar, tokenizer: Any, eos: Sequence[int]) -> None:
        """Index the vocabulary.

        Args:
            grammar: The program grammar.
            tokenizer: A ``transformers`` tokenizer.
            eos: End-of-sequence token ids (the only tokens allowed once a program is complete).

        Raises:
            StrategyConfigError: without end-of-sequence ids (a finished program could never stop).
        """
        if not eos:
            raise StrategyConfigError("a program grammar needs the model's end-of-sequence token id")
        self.grammar = grammar
        self.eos = sorted(set(eos))
        size = len(tokenizer)
        special = set(getattr(tokenizer, "all_special_ids", []))
        special |= {
            i
            for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items()
            if getattr(t, "special", True)
        }
        texts: list[str] = tokenizer.batch_decode(
            [[i] for i in range(size)], skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        self.pieces: list[str | None] = [None if i in special else t for i, t in enumerate(texts)]
        chars: set[str] | None = None  # number values may hold any character (3\sqrt{3}, 3x+5)
        if grammar.operands == "indexed":
            chars = set(
                "".join(grammar.operators) + "".join(grammar.constants) + "NV0123456789" + _WHITESPACE
            )
            chars |= set("abcdefghijklmnopqrstuvwxyz")
        last = (grammar.header or " ")[-1]
        self.root = _Trie()
        self.header_ids: list[int] = []
        """Tokens that may complete the header (they contain its last character): checked even before it."""
        for i, piece in enumerate(self.pieces):
            if not piece:
                continue
            if grammar.header is not None and last in piece:
                self.header_ids.append(i)
            if chars is not None and not set(piece) <= chars:
                continue
            node = self.root
            for c in piece:
                node = node.kids.setdefault(c, _Trie())
            node.ids.append(i)
        self._automata: dict[tuple[tuple[str, ...], tuple[str, ...]], _Automaton] = {}

    def applies(self, request: GenerationRequest) -> bool:
        """Whether ``request`` is constrained (its trace type is one of the grammar's)."""
        return request.trace_type in self.grammar.trace_types

    def automaton(self, request: GenerationRequest, index: int) -> tuple[_Automaton, _State]:
        """The automaton of a constrained request and its state after the request's ``assistant_prefix``.

        Raises:
            StrategyConfigError: the request has no ``numbers``, or its assistant prefix already breaks the grammar.
        """
        if request.numbers is None:
            raise StrategyConfigError(
                f"request {index} (trace {request.trace_type!r}) has no numbers: the program grammar needs the "
                "problem's N list (GenerationRequest.numbers, filled from Problem.metadata['numbers'])"
            )
        key = (self.grammar.number_operands(request.numbers), problem_letters(request.numbers))
        if key not in self._automata:
            self._automata[key] = _Automaton(self.grammar, *key)
        auto = self._automata[key]
        state = auto.advance(auto.initial(), request.assistant_prefix)
        if state is None:
            raise StrategyConfigError(
                f"request {index}: assistant_prefix {request.assistant_prefix!r} is not the start of a program"
            )
        return auto, state

    def token_step(self, auto: _Automaton, s: _State | None, token: int) -> _State | None:
        """The state after generating ``token``."""
        if s is None or s == _DONE:
            return s
        piece = self.pieces[token] if token < len(self.pieces) else None
        if s[0] == "free":
            return s if piece is None else auto.advance(s, piece)
        if piece is None:
            return _DONE if token in self.eos and auto.accepting(s) else None
        return auto.advance(s, piece)

    def allowed(self, auto: _Automaton, s: _State | None) -> tuple[bool, list[int]]:
        """The tokens allowed in state ``s``: ``(True, banned)`` before the header, else ``(False, allowed)``."""
        if s is None or s == _DONE:
            return False, self.eos
        if s not in auto.allowed:
            if s[0] == "free":
                auto.allowed[s] = (
                    True,
                    [i for i in self.header_ids if auto.advance(s, self.pieces[i] or "") is None],
                )
            else:
                ids: list[int] = []
                self._walk(auto, s, self.root, ids)
                if auto.accepting(s):
                    ids.extend(self.eos)
                auto.allowed[s] = (False, sorted(set(ids)) or self.eos)
        return auto.allowed[s]

    def _walk(self, auto: _Automaton, s: _State, node: _Trie, out: list[int]) -> None:
        chars = auto.next_chars(s)
        for c in chars if len(chars) < len(node.kids) else node.kids:
            child = node.kids.get(c)
            if child is None:
                continue
            nxt = auto.step(s, c)
            if nxt is None:
                continue
            out.extend(child.ids)
            self._walk(auto, nxt, child, out)

    def processor(
        self, requests: Sequence[GenerationRequest], prompt_len: int, rows_per_request: int
    ) -> ProgramLogitsProcessor | None:
        """A logits processor for one ``generate`` call, or None when no request of it is constrained.

        Args:
            requests: The call's requests, in batch order.
            prompt_len: Width of the (left-padded) prompt; generated ids start there.
            rows_per_request: Rows of the batch per request (``num_return_sequences`` or ``num_beams``).
        """
        rows: list[tuple[_Automaton, _State] | None] = [
            self.automaton(r, i) if self.applies(r) else None for i, r in enumerate(requests)
        ]
        if all(r is None for r in rows):
            return None
        return ProgramLogitsProcessor(self, rows, prompt_len, rows_per_request)


class ProgramLogitsProcessor:
    """A ``transformers`` logits processor that keeps the constrained rows of a batch grammatical.

    Works for greedy decoding, sampling and beam search: each row's state is found from its
    generated ids (beam search reorders rows between steps), keyed by the generated prefix.
    """

    def __init__(
        self,
        grammar: TokenGrammar,
        rows: Sequence[tuple[_Automaton, _State] | None],
        prompt_len: int,
        rows_per_request: int,
    ) -> None:
        self.grammar = grammar
        self.rows = list(rows)
        self.prompt_len = prompt_len
        self.per = rows_per_request
        self._states: dict[tuple[int, tuple[int, ...]], _State | None] = {}

    def state(self, row: int, generated: Sequence[int]) -> _State | None:
        """The automaton state of constrained batch row ``row`` after ``generated`` (walked from the start)."""
        entry = self.rows[row // self.per]
        if entry is None:
            raise StrategyConfigError(f"batch row {row} decodes freely; it has no grammar state")
        auto, s = entry
        for token in generated:
            s = self.grammar.token_step(auto, s, token)
        return s

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Set the logits of every token that would break a constrained row's program to minus infinity."""
        torch: Any = __import__("torch")
        generated: list[list[int]] = input_ids[:, self.prompt_len :].tolist()
        previous, self._states = self._states, {}
        only_rows: list[int] = []
        only_ids: list[int] = []
        ban_rows: list[int] = []
        ban_ids: list[int] = []
        free_rows: list[int] = []
        for row, ids in enumerate(generated):
            entry = self.rows[row // self.per]
            if entry is None:
                free_rows.append(row)
                continue
            key = (row // self.per, tuple(ids))
            parent = (key[0], key[1][:-1])
            if key in self._states:
                s = self._states[key]
            elif key[1] and parent in previous:
                s = self.grammar.token_step(entry[0], previous[parent], key[1][-1])
            else:
                s = self.state(row, ids)
            self._states[key] = s
            is_free, ids_ = self.grammar.allowed(entry[0], s)
            if is_free:
                free_rows.append(row)
                ban_rows.extend([row] * len(ids_))
                ban_ids.extend(ids_)
            else:
                only_rows.extend([row] * len(ids_))
                only_ids.extend(ids_)
        if len(free_rows) == len(generated) and not ban_ids:
            return scores
        width = scores.shape[-1]
        keep = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)
        if free_rows:
            keep[torch.tensor(free_rows, device=scores.device)] = True
        if only_ids:
            cols = torch.tensor(only_ids, device=scores.device)
            keep[torch.tensor(only_rows, device=scores.device)[cols < width], cols[cols < width]] = True
        if ban_ids:
            cols = torch.tensor(ban_ids, device=scores.device)
            keep[torch.tensor(ban_rows, device=scores.device)[cols < width], cols[cols < width]] = False
        return scores.masked_fill(~keep, float("-inf"))
