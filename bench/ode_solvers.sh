#!/usr/bin/env bash
# hlogym's xla-cpu-default against real XLA on ODE and SDE solves (diffrax: Euler, Heun, Tsit5 and
# Dopri5 with fixed and adaptive steps, an Euler SDE on a virtual Brownian tree, each forward and
# gradient): harvests examples/harvest/diffrax_solvers.py into build/datasets/ode_solvers with
# XLA's reference, then runs bench/default_vs_xla.py on it. Makes build/venvs/ode from the pinned
# requirements when it is missing (HLOGYM_ODE_PYTHON names another python instead).
#
#   bench/ode_solvers.sh [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/datasets/ode_solvers
if [[ "${1:-}" == "--out" ]]; then out=$2; fi
python=${HLOGYM_ODE_PYTHON:-}
if [[ -z "$python" ]]; then
  if [[ ! -x build/venvs/ode/bin/python ]]; then
    python3 -m venv build/venvs/ode
    build/venvs/ode/bin/pip install -q --disable-pip-version-check -r requirements.txt \
      -r datasets/corpus/requirements-ode.txt
  fi
  python=$PWD/build/venvs/ode/bin/python
fi
build/hlogym harvest --force --family ode_solvers --out "$out" -- "$python" \
  examples/harvest/diffrax_solvers.py
exec .venv/bin/python bench/default_vs_xla.py --datasets "$out"
