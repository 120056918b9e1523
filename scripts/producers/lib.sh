# Shared by the producer set-up scripts (sourced, not run). A producer lives in $STATE/producers/<name>: a venv
# built from the checked-in requirements file NAME.txt (the pinned producer packages) with NAME.lock as constraints
# (`pip freeze` of the venv as first built, so every machine gets the same dependency versions), plus whatever else
# it needs. Idempotent: a venv whose stamp matches its requirements file is left alone.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE=${HEADWATER_STATE_DIR:-$ROOT/.state}
REQS=$ROOT/scripts/producers

# venv NAME CHECK: builds $STATE/producers/NAME/venv from $REQS/NAME.txt unless its stamp says it is current and
# CHECK (a python -c snippet) runs. Progress goes to stderr; the caller prints the producer's home on stdout.
venv() {
  local name=$1 check=$2 home=$STATE/producers/$1
  local venv=$home/venv req=$REQS/$1.txt lock=$REQS/$1.lock
  local want
  want=$(cat "$req" "$lock" | sha256sum | cut -d' ' -f1)
  if [[ -f $venv/.stamp && $(cat "$venv/.stamp") == "$want" ]] && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
    return 0
  fi
  echo "producers: installing $name into $venv (first run only)" >&2
  rm -rf "$venv"
  mkdir -p "$home"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" -c "$lock" >&2
  "$venv/bin/python" -c "$check" >&2
  echo "$want" >"$venv/.stamp"
}
