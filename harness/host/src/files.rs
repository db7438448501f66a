//! Files the rooms share: a file written whole or not at all, the sha256
//! of bytes, the user's cache, and folders and files only this user may
//! write. The ground floor: it imports nothing of the crate's.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// Hex sha256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The user's cache: `~/.cache/sparktest`, the folder the reference
/// targets' scripts provision into (`reference/`, `vllm-0.32.0/`), else a
/// `sparktest-cache` folder in the system's temporary folder. (The scripts'
/// `SPARKTEST_CACHE` names the reference target's own folder, not this.)
pub fn user_cache() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".cache/sparktest"))
        .unwrap_or_else(|| std::env::temp_dir().join("sparktest-cache"))
}

/// The host's name, as `gethostname` gives it.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its length; the result is cut at
    // its first NUL.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    if ok && end > 0 { String::from_utf8_lossy(&buf[..end]).into_owned() } else { "unknown-host".into() }
}

/// Write `bytes` as `path` whole or not at all: a new file in the same
/// folder, synced, renamed over `path` (atomic on a local file system and
/// on NFS), the folder synced after.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with_mode(path, bytes, 0o666)
}

/// [`replace`] for a private folder: the new file is made mode 0600.
pub fn replace_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with_mode(path, bytes, 0o600)
}

/// [`replace`], the new file made with `mode` (less the umask).
fn replace_with_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.{}.{}.tmp",
        path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        host_name(),
        std::process::id(),
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// `dir`, created mode 0700 when missing, checked to be this user's alone
/// (a real folder, owned by this user, written by no one else, in a parent
/// no one else can rename entries of, holding only real folders and
/// regular files of this user's that no one else may write); the reason
/// where it is not. Nothing is changed to make it so.
pub fn private_folder(dir: &Path) -> Result<(), String> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("failed to create {}: {e}", parent.display()))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("failed to create {}: {e}", dir.display())),
    }
    private(dir)?;
    if let Some(parent) = dir.parent() {
        // Whoever can rename entries of the parent can put a folder of
        // their own in this one's place.
        guarded(parent)?;
    }
    // Whatever the folder holds must be this user's too: a file another
    // user planted while the folder was open to them is not.
    held_alone(dir, 1)
}

/// Whether `dir` is a real folder owned by this user that no one else may
/// write. A looser one is refused, never tightened: changing a mode does
/// not make what another user put there this user's.
pub fn private(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("failed to read {}: {e}", dir.display()))?;
    if !meta.file_type().is_dir() {
        return Err(format!("{} is not a folder (a symlink or a file)", dir.display()));
    }
    owned_alone(dir, &meta)
}

/// Whether `meta` (of `path`) is this user's and no one else may write it.
fn owned_alone(path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!("{} belongs to user {}, not to this user ({me})", path.display(), meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("{} may be written by other users (mode {:04o})", path.display(), meta.mode() & 0o7777));
    }
    Ok(())
}

/// Whether everything `dir` holds, two levels down, is a real folder or a
/// regular file of this user's that no one else may write; the first that
/// is not, named, where one is not (a link, a FIFO, another user's file).
fn held_alone(dir: &Path, depth: u32) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("failed to list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("failed to list {}: {e}", dir.display()))?;
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("failed to read {}: {e}", path.display()))?;
        let kind = meta.file_type();
        if kind.is_dir() && depth > 0 {
            owned_alone(&path, &meta)?;
            held_alone(&path, depth - 1)?;
        } else if kind.is_file() {
            owned_alone(&path, &meta)?;
        } else {
            return Err(format!(
                "{} is not a regular file (a link, a FIFO, a device or a folder too deep)",
                path.display()
            ));
        }
    }
    Ok(())
}

/// `path` in a private folder, opened without following a link, only when
/// it is a regular file of this user's that no one else may write.
/// The shared folders' opener ([`sparktest_record::reader::open_in_folder`])
/// and, on top, the owner and the mode.
pub fn open_private_file(path: &Path) -> Option<std::fs::File> {
    let (file, meta) = sparktest_record::reader::open_in_folder(path).ok()?;
    owned_alone(path, &meta).is_ok().then_some(file)
}

/// The bytes of `path` (see [`open_private_file`]).
pub fn read_private(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    open_private_file(path)?.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether no one but this user (and root) can rename `dir`'s entries: it is
/// this user's or root's, and others may not write it.
fn guarded(dir: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("failed to read {}: {e}", dir.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!("{} belongs to user {}, not to this user ({me})", dir.display(), meta.uid()));
    }
    if meta.mode() & 0o002 != 0 {
        return Err(format!("{} may be written by every user", dir.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        std::fs::write(&p, "old").unwrap();
        replace(&p, b"new text").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new text");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }
}
