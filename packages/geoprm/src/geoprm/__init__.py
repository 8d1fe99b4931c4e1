"""geoprm: the generative multimodal process reward model.

The reward model reads a solution step by step and writes a critique: for each step its goal, a check
against the figure, a check of its logic (each with a Correct/Incorrect judgement) and a final
judgement, stopping at the first incorrect step and rewriting it. This package holds the critique
schema and its text form, the prompts, step splitting, the scores and decision rule of refined
best-of-N, and the bridge to geotts's StepScorer protocol. Model backends live in
``geoprm.backends.<name>`` and need extras (``geoprm.backends.transformers``: ``geoprm[transformers]``).
"""

from __future__ import annotations

from geoprm._adapter import to_step_judgement
from geoprm._labels import Judgement
from geoprm._parser import ParsedCritique, ParsedStep, ParseProblem, ProblemKind, parse_critique
from geoprm._printer import format_critique
from geoprm._prompts import PROMPT_VERSION, PromptName, critic_prompt, critique_prompt, policy_prompt
from geoprm._schema import Critique, StepCritique
from geoprm._scores import (
    CritiqueScores,
    JudgementTokens,
    StepScore,
    Verdict,
    VerdictLogprobs,
    score_critique,
    step_score,
)
from geoprm.errors import (
    CriticError,
    CritiqueParseError,
    GeoPRMError,
    MissingExtraError,
    PromptError,
    ScoringError,
)

__all__ = (
    "PROMPT_VERSION",
    "CriticError",
    "Critique",
    "CritiqueParseError",
    "CritiqueScores",
    "GeoPRMError",
    "Judgement",
    "JudgementTokens",
    "MissingExtraError",
    "ParseProblem",
    "ParsedCritique",
    "ParsedStep",
    "ProblemKind",
    "PromptError",
    "PromptName",
    "ScoringError",
    "StepCritique",
    "StepScore",
    "Verdict",
    "VerdictLogprobs",
    "critic_prompt",
    "critique_prompt",
    "format_critique",
    "parse_critique",
    "policy_prompt",
    "score_critique",
    "step_score",
    "to_step_judgement",
)
__version__ = "0.1.0"
