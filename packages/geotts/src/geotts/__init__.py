"""geotts: test-time scaling for any solver.

Aggregate ranked answers with self-consistency, standard multi-trace ensembles (MTE) or
consensus-guided MTE (CG-MTE), which stops as soon as the pooled answers have a unique mode; drive
real generation backends incrementally (``geotts.backends``); refine best-of-N with a step scorer
(the one step splitter and selection rule geoprm's reward model is trained and evaluated with).

One-liner::

    import geotts
    d = geotts.cg_mte({"program": [3.0, 4.0], "pal": [3.0, None], "cot_program": [5.0, 3.0], "cot_pal": [2.0, 3.0]})
    d.answer, d.depth, d.samples   # (3.0, 1, 4)
"""

from geotts._aggregate import DEFAULT_ORDER, adaptive_beam_sc, cg_mte, mte, self_consistency
from geotts._extract import LastNumberExtractor
from geotts._live import (
    TRACE_INSTRUCTIONS,
    CGMTEConfig,
    ConsensusEnsemble,
    MTEConfig,
    MultiTraceEnsemble,
    SelfConsistency,
    SelfConsistencyConfig,
    Strategy,
    run_strategy,
    strategy_from_spec,
)
from geotts._models import (
    BeamParams,
    ChatMessage,
    Completion,
    Decision,
    GenerationRequest,
    Problem,
    SamplingParams,
)
from geotts._protocols import (
    UNSCORED,
    Aggregation,
    AnswerExtractor,
    Sampler,
    StepJudgement,
    StepScorer,
    StepScoreRequest,
)
from geotts._refined import (
    BestOfNDecision,
    RefinedBestOfN,
    RefinedBestOfNConfig,
    judge_solutions,
    refined_prefix,
    select_solution,
)
from geotts._steps import SplitSolution, SplitStyle, format_steps, split_steps, strip_step_label
from geotts._vote import AnswerKey, numeric_key
from geotts.errors import BackendError, GeoTTSError, MissingExtraError, StrategyConfigError

__all__ = (
    # functional API over recorded answers
    "DEFAULT_ORDER",
    "TRACE_INSTRUCTIONS",
    "UNSCORED",
    # protocols
    "Aggregation",
    "AnswerExtractor",
    "AnswerKey",
    # errors
    "BackendError",
    # data
    "BeamParams",
    "BestOfNDecision",
    # live strategies
    "CGMTEConfig",
    "ChatMessage",
    "Completion",
    "ConsensusEnsemble",
    "Decision",
    "GenerationRequest",
    "GeoTTSError",
    "LastNumberExtractor",
    "MTEConfig",
    "MissingExtraError",
    "MultiTraceEnsemble",
    "Problem",
    "RefinedBestOfN",
    "RefinedBestOfNConfig",
    "Sampler",
    "SamplingParams",
    "SelfConsistency",
    "SelfConsistencyConfig",
    "SplitSolution",
    "SplitStyle",
    "StepJudgement",
    "StepScoreRequest",
    "StepScorer",
    "Strategy",
    "StrategyConfigError",
    "adaptive_beam_sc",
    "cg_mte",
    "format_steps",
    "judge_solutions",
    "mte",
    "numeric_key",
    "refined_prefix",
    "run_strategy",
    "select_solution",
    "self_consistency",
    "split_steps",
    "strategy_from_spec",
    "strip_step_label",
)
__version__ = "0.1.0"
