"""Configuration of an MTS run and of the LLM that writes the CoT traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import Field, ValidationError, model_validator

from geosynth.mts._models import MTSModel
from geosynth.mts._pa import DiagramSetting
from geosynth.mts._template_teacher import TEMPLATE_TEACHER_MODEL
from geosynth.mts.errors import MTSConfigError
from geotts.backends.vllm import VLLMEngineOptions

__all__ = ("LLMConfig", "MTSConfig", "load_llm_config")


class LLMConfig(MTSModel):
    """Which LLM rewrites traces, and how it is called.

    The cache key of every call is (rendered prompt, ``model``, decoding parameters): changing the
    server address or the concurrency keeps the cache; changing the model or the temperature does not.
    """

    backend: Literal["openai", "transformers", "vllm", "template"] = "openai"
    """``openai``: any OpenAI-compatible HTTP server (vLLM's server, a hosted API); ``transformers`` /
    ``vllm``: a local model loaded in this process (``model`` is a folder or hub id); ``template``:
    no model, geosynth's deterministic template teacher (:class:`geosynth.mts.TemplateTeacher`)."""
    model: str
    """Model name sent to the server, or the local model folder (``template``: set to the template
    teacher's own name, :data:`geosynth.mts.TEMPLATE_TEACHER_MODEL`; leave it out)."""
    base_url: str | None = None
    """Server root with the API prefix (``http://127.0.0.1:8000/v1``); required for ``openai``."""
    api_key_env: str | None = None
    """Name of the environment variable holding the bearer token (the key itself never goes in a config file)."""
    temperature: Annotated[float, Field(ge=0.0)] = 0.0
    """Sampling temperature (0: greedy, which makes reruns reproducible even without the cache)."""
    top_p: Annotated[float, Field(gt=0.0, le=1.0)] = 1.0
    """Nucleus sampling mass."""
    max_tokens: Annotated[int, Field(ge=16)] = 2048
    """Most tokens per reply."""
    seed: int | None = 0
    """Seed sent with every call (servers that honour it make sampled replies repeatable)."""
    timeout: Annotated[float, Field(gt=0)] = 120.0
    """Seconds allowed per HTTP call."""
    max_retries: Annotated[int, Field(ge=0)] = 4
    """Retries of a failing HTTP call (timeouts, 429, 5xx) with exponential backoff."""
    max_concurrency: Annotated[int, Field(ge=1)] = 8
    """Most HTTP calls in flight at once."""
    requests_per_minute: Annotated[float, Field(gt=0)] | None = None
    """Client-side rate limit on calls that miss the cache (None: no limit beyond the concurrency)."""
    batch_size: Annotated[int, Field(ge=1)] = 64
    """Requests handed to the sampler at once."""
    cache: Path | None = None
    """SQLite cache file (default: ``llm_cache.sqlite`` in the output folder)."""
    device: str = "cpu"
    """Torch device of a ``transformers`` model."""
    vision: bool = False
    """The teacher reads images: each prompt of a problem whose diagram is found in ``images_dir``
    carries the diagram (PNG/JPEG bytes) before its text. False: text only (the question and the
    diagram clauses, which every prompt carries either way)."""
    vllm: VLLMEngineOptions | None = None
    """Engine settings of the ``vllm`` backend (``dtype``, ``max_model_len``, ``gpu_memory_utilization``)."""

    @model_validator(mode="before")
    @classmethod
    def _template_named(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = cast(dict[str, Any], data)
        if fields.get("backend") != "template":
            return data
        if fields.get("model", TEMPLATE_TEACHER_MODEL) != TEMPLATE_TEACHER_MODEL:
            raise ValueError(
                f"backend 'template' is geosynth's template teacher ({TEMPLATE_TEACHER_MODEL}); leave model out"
            )
        return {**fields, "model": TEMPLATE_TEACHER_MODEL}

    @model_validator(mode="after")
    def _server_named(self) -> LLMConfig:
        if self.backend == "openai" and not self.base_url:
            raise ValueError("backend 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)")
        if self.backend == "template" and self.vision:
            raise ValueError("backend 'template' reads no images: vision must be false")
        if self.vllm is not None and self.backend != "vllm":
            raise ValueError(f"vllm engine settings apply to backend 'vllm' only, not {self.backend!r}")
        return self


class MTSConfig(MTSModel):
    """How an MTS run proceeds. Fields that change results are part of every stage's resume key."""

    jobs: Annotated[int, Field(ge=1)] = 2
    """Sandbox worker processes (scripts verified in parallel)."""
    shard_size: Annotated[int, Field(ge=1)] = 100
    """Problems per shard: the unit of work that is written atomically and skipped on resume."""
    rel_tol: Annotated[float, Field(gt=0, lt=1)] = 1e-3
    """Relative tolerance of the answer check against the stored answer."""
    script_timeout: Annotated[float, Field(gt=0, le=600)] = 30.0
    """Wall-clock seconds one script may run in the sandbox."""
    max_cot_pal_passes: Annotated[int, Field(ge=1, le=10)] = 3
    """CoT-PAL attempts in all: the first rewrite plus repairs fed with the error and the reference PAL."""
    llm: LLMConfig | None = None
    """The LLM for the CoT traces; None skips CoT-PAL and CoT-Program (and says so)."""
    images_dir: Path | None = None
    """Folder holding the diagrams named by the records; they are copied next to the PA records."""
    split: str | None = None
    """Split name for the statistics (default: ``train``/``test``/``val`` when the file name says so)."""
    mixtures: bool = True
    """Write the ablation mixtures (single-trace, MTS-All, leave-one-out, size-matched control)."""
    mixture_seed: int = 0
    """Seed of the resampling that matches token budgets in the leave-one-out mixtures."""
    use_ray: bool = False
    """Verify scripts on Ray actors and send the LLM requests (``openai`` backend) from Ray tasks (needs ``ray``)."""
    setting: DiagramSetting = "image"
    """How the PA records give the diagram: ``image`` (image in the prompt, clauses in the target) or
    ``clauses`` (clauses in the prompt, for text-only models; no images are copied)."""

    def resume_fields(self) -> dict[str, Any]:
        """The fields that change stage results (the rest only change speed or presentation)."""
        return {
            "rel_tol": self.rel_tol,
            "script_timeout": self.script_timeout,
            "shard_size": self.shard_size,
            "max_cot_pal_passes": self.max_cot_pal_passes,
            "setting": self.setting,
        }


def load_llm_config(path: Path) -> LLMConfig:
    """Read an :class:`LLMConfig` from a JSON or YAML file.

    Raises:
        MTSConfigError: the file is unreadable, not a mapping, or has bad fields.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MTSConfigError(f"cannot read LLM config {str(path)!r}: {exc.strerror or exc}") from exc
    data: Any
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as exc:
            raise MTSConfigError(
                f"{path}: reading YAML needs pyyaml (pip install pyyaml), or use JSON"
            ) from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise MTSConfigError(f"{path}: invalid YAML: {exc}") from exc
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MTSConfigError(f"{path}: invalid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise MTSConfigError(f"{path}: expected a mapping of LLM settings, got {type(data).__name__}")
    try:
        config = LLMConfig.model_validate(data, strict=False)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise MTSConfigError(f"{path}: {problems}") from None
    return config
