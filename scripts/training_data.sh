#!/usr/bin/env bash
# The generated training set for learned pass ordering (build/datasets/training, about 800
# modules from 32 families with real XLA's reference; not committed). Makes the three generator
# venvs from the pinned requirements when they are missing (build/venvs/{lib,tf,torch}; about 9 GB,
# most of it torch's CUDA libraries), then runs datasets/corpus/generate.py --training.
#
#   scripts/training_data.sh [--jobs N] [--out DIR] [--only NAME...]
#
# HLOGYM_LIB_PYTHON, HLOGYM_TF_PYTHON and HLOGYM_TORCH_PYTHON name existing venvs' pythons instead.
set -euo pipefail
cd "$(dirname "$0")/.."
venv() {  # venv NAME REQUIREMENTS... -> prints its python, made on first use
  local dir="build/venvs/$1"
  shift
  if [[ ! -x "$dir/bin/python" ]]; then
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install -q --disable-pip-version-check "${@/#/-r}" >&2
  fi
  echo "$PWD/$dir/bin/python"
}
lib=${HLOGYM_LIB_PYTHON:-$(venv lib requirements.txt datasets/corpus/requirements-libraries.txt)}
export HLOGYM_TF_PYTHON=${HLOGYM_TF_PYTHON:-$(venv tf requirements.txt datasets/corpus/requirements-tensorflow.txt)}
export HLOGYM_TORCH_PYTHON=${HLOGYM_TORCH_PYTHON:-$(venv torch datasets/corpus/requirements-torch.txt)}
exec "$lib" datasets/corpus/generate.py --training "$@"
