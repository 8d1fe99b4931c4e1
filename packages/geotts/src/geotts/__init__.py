"""geotts: test-time scaling for any solver.

Aggregate ranked answers with self-consistency, standard multi-trace ensembles (MTE) or
consensus-guided MTE (CG-MTE), which stops as soon as the pooled answers have a unique mode; drive
real generation backends incrementally (``geotts.backends``); refine best-of-N with a step scorer.

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
from geotts._protocols import AnswerExtractor, Sampler, StepJudgement, StepScorer, StepScoreRequest
from geotts._refined import BestOfNDecision, RefinedBestOfN, RefinedBestOfNConfig, split_steps
from geotts._vote import AnswerKey, numeric_key
from geotts.errors import BackendError, GeoTTSError, MissingExtraError, StrategyConfigError

__all__ = (
    # functional API over recorded answers
    "DEFAULT_ORDER",
    "TRACE_INSTRUCTIONS",
    # protocols
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
    "StepJudgement",
    "StepScoreRequest",
    "StepScorer",
    "Strategy",
    "StrategyConfigError",
    "adaptive_beam_sc",
    "cg_mte",
    "mte",
    "numeric_key",
    "run_strategy",
    "self_consistency",
    "split_steps",
    "strategy_from_spec",
)
__version__ = "0.1.0"
