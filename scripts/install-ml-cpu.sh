#!/usr/bin/env bash
# Install the optional ML stack (torch CPU build, transformers, peft, trl, accelerate, pillow, datasets,
# matplotlib, httpx) into the workspace venv without pulling the multi-GB CUDA build of torch. Safe to rerun.
#
# torch comes from, in order: a CPU wheel on disk (/opt/wheels, as on our CI machines), else PyTorch's CPU
# index. The other packages are pinned to versions known to work together on CPU (docs/development.md).
set -euo pipefail
cd "$(dirname "$0")/.."
stack=("transformers==5.24.0" "tokenizers>=0.22" "peft==0.21.2" "trl==1.16.0" "accelerate==1.15.0"
       "pillow>=10" "datasets>=3" "matplotlib>=3.8" "httpx>=0.27" "ray>=2.9")
wheel=$(ls /opt/wheels/torch-2.13.0+cpu-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ]; then
  uv pip install --quiet "$wheel" "${stack[@]}"
elif uv pip install --quiet "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu; then
  uv pip install --quiet "${stack[@]}"
else
  echo "install-ml-cpu: no CPU build of torch available; installing the rest (torch tests will skip)" >&2
  uv pip install --quiet "matplotlib>=3.8" "httpx>=0.27"
  exit 0
fi
uv run --no-sync python -c "import torch, transformers; print('ML stack:', torch.__version__, transformers.__version__)"
