"""Generation backends, each behind an extra and imported lazily.

* :mod:`geotts.backends.transformers`: ``transformers`` generate on CPU or GPU (``geotts[transformers]``);
* :mod:`geotts.backends.openai`: any OpenAI-compatible chat-completions server (``geotts[openai]``);
* :mod:`geotts.backends.vllm`: the vLLM offline engine (``geotts[vllm]``).
"""
