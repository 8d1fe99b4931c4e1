"""A real OpenAI-compatible server for the tests: ``transformers serve`` on 127.0.0.1 with two tiny local models.

The models are built offline (random weights): a text-only Qwen2 causal LM (geotts's tiny builder) and a
LLaVA-style vision model (CLIP vision tower + Qwen2 decoder, the same tokenizer plus ``<image>``), whose
processor needs no torchvision, which the CPU stack lacks and the Qwen-VL processors of
``transformers serve`` require. One server, started once per test session on a free port with
``HF_HUB_OFFLINE=1``, loads either model on demand (the request's ``model`` is the folder) and is
stopped at the end. Without the serving extra (``pip install "transformers[serving]"``) every test
here skips with that reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: What ``transformers serve`` imports (its ``serving`` extra) plus the HTTP client of geotts.
SERVE_MODULES = ("torch", "transformers", "fastapi", "uvicorn", "openai", "httpx", "PIL")
START_DEADLINE_S = 240.0  # importing torch + transformers on a loaded 2-core machine can be slow


def serve_skip_reason() -> str | None:
    """Why ``transformers serve`` cannot run here, or None when it can."""
    missing = [m for m in SERVE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"transformers serve needs {', '.join(missing)}: "
            'pip install "transformers[serving]" httpx pillow (CI installs it)'
        )
    return None


@dataclass(frozen=True)
class Served:
    """The running server and what it serves."""

    base_url: str
    """The API root, ``http://127.0.0.1:<port>/v1``."""
    text_model: str
    """Folder of the text-only causal LM (the name to send as ``model``)."""
    vision_model: str
    """Folder of the LLaVA-style vision model."""
    log: Path
    """The server's stdout and stderr."""


_LLAVA_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _sampling_by_default(folder: Path) -> None:
    """Make ``generation_config.json`` sample (as released chat models do): the server samples only then."""
    path = folder / "generation_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["do_sample"] = True
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def _tiny_llava(text_model: Path, out: Path) -> Path:
    """A tiny random LLaVA (CLIP 28 px / 14 px patches -> 4 image tokens, Qwen2 decoder) with its processor."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(text_model)
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]}, replace_extra_special_tokens=False)
    text = json.loads((text_model / "config.json").read_text(encoding="utf-8"))
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            image_size=28, patch_size=14, projection_dim=32,
        ),
        text_config=transformers.Qwen2Config(
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=-(-len(tok) // 64) * 64, eos_token_id=text["eos_token_id"],
            pad_token_id=text["pad_token_id"], bos_token_id=text.get("bos_token_id"), tie_word_embeddings=False,
        ),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
        image_seq_length=4,
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.LlavaForConditionalGeneration(config)
    model.generation_config.eos_token_id = text["eos_token_id"]
    model.generation_config.pad_token_id = text["pad_token_id"]
    model.save_pretrained(out)
    images = transformers.LlavaImageProcessorPil(
        size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}
    )
    transformers.LlavaProcessor(
        image_processor=images, tokenizer=tok, patch_size=14, vision_feature_select_strategy="default",
        num_additional_image_tokens=1, chat_template=_LLAVA_TEMPLATE,
    ).save_pretrained(out)  # fmt: skip
    _sampling_by_default(out)
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _tail(log: Path, lines: int = 15) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``transformers serve`` on a free 127.0.0.1 port, answering for a tiny text model and a tiny vision model."""
    reason = serve_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    from geotts.testing import tiny_qwen_vl

    root = tmp_path_factory.mktemp("served")
    port, log = _free_port(), root / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable, "-c", "import sys; from transformers.cli.transformers import main; sys.exit(main())",
        "serve", "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--dtype", "float32",
    ]  # fmt: skip
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=root)
    try:
        # The server loads models on the first request naming them, so they are built while it starts.
        text_model = tiny_qwen_vl(root / "text", kind="causal_lm", seed=0)
        _sampling_by_default(text_model)
        vision_model = _tiny_llava(text_model, root / "vision")
        deadline = time.monotonic() + START_DEADLINE_S
        while not _answers(f"http://127.0.0.1:{port}/v1/models"):
            if process.poll() is not None:
                pytest.fail(f"transformers serve exited with status {process.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"transformers serve did not answer within {START_DEADLINE_S:.0f} s:\n{_tail(log)}"
                )
            time.sleep(0.5)
        yield Served(f"http://127.0.0.1:{port}/v1", str(text_model), str(vision_model), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
