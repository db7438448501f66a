//! One measurement file read as far as it is whole, and the files of a
//! folder.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::Run;
use crate::read::first_line;
use crate::{CallRecord, Line, ReadError};

/// One measurement file read as far as it is whole.
#[derive(Debug)]
pub struct File<C = CallRecord> {
    /// Its run.
    pub run: Run<C>,
    /// The first line that could not be read, if any: a file cut by a
    /// crash or a full disk ends in half a line; a second manifest ends the
    /// file too. The lines before it were read.
    pub damage: Option<ReadError>,
    /// How many bytes of the text are whole lines before the damage:
    /// `&text[..whole_bytes]` is what a strict reader can take.
    pub whole_bytes: usize,
}

impl<C: DeserializeOwned> File<C> {
    /// Parse a file's text, each line once. A file whose manifest is
    /// missing, damaged or of another major version is an error; damage
    /// after it is kept in [`File::damage`].
    pub fn parse(text: &str) -> Result<File<C>, ReadError> {
        let mut run: Option<Run<C>> = None;
        let mut whole_bytes = 0;
        let mut damage = None;
        for (i, raw) in text.split_inclusive('\n').enumerate() {
            let at = i + 1;
            let line = if !raw.ends_with('\n') {
                Err("the line is cut short (no newline at its end: the run crashed or the disk filled)".to_string())
            } else if raw.trim().is_empty() {
                Ok(None)
            } else {
                serde_json::from_str::<Line<C>>(raw).map(Some).map_err(|e| e.to_string())
            };
            let kept = match (line, &mut run) {
                (Ok(None), _) => Ok(()),
                (Ok(Some(line)), None) => {
                    first_line(&line, at)?;
                    if let Line::Manifest(m) = line {
                        run = Some(Run::new(m));
                    }
                    Ok(())
                }
                (Ok(Some(Line::Manifest(_))), Some(_)) => Err("a second manifest".to_string()),
                (Ok(Some(Line::Case(c))), Some(r)) => {
                    r.cases.push(c);
                    Ok(())
                }
                (Ok(Some(Line::Summary(s))), Some(r)) => {
                    r.summary = Some(s);
                    Ok(())
                }
                (Err(message), _) => Err(message),
            };
            match kept {
                Ok(()) => whole_bytes += raw.len(),
                Err(message) => {
                    damage = Some(ReadError { line: at, message });
                    break;
                }
            }
        }
        match run {
            Some(run) => Ok(File { run, damage, whole_bytes }),
            None => Err(damage.unwrap_or(ReadError { line: 1, message: "empty measurement file".into() })),
        }
    }

    /// Read and parse a file. Valid UTF-8 (every file the harness writes)
    /// is taken as it is; anything else is read with replacement
    /// characters.
    pub fn read(path: &Path) -> Result<File<C>, FileError> {
        let (file, _) = Self::read_text(path)?;
        Ok(file)
    }

    /// The file's manifest alone, read no further than its first line that
    /// is not blank: what a selection reads of every file. A file with no
    /// readable manifest is an error, as for [`File::read`].
    pub fn read_manifest(path: &Path) -> Result<File<C>, FileError> {
        let head = read_head(path, MAX_HEAD_BYTES).map_err(|e| FileError::io(path, e))?;
        let text = String::from_utf8(head).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Self::parse(&text).map_err(|e| FileError::format(path, e))
    }

    /// [`File::read`], handing back the text too (what the board's host
    /// passes on to its reporter).
    pub fn read_text(path: &Path) -> Result<(File<C>, String), FileError> {
        let bytes = read_bytes(path, MAX_FILE_BYTES).map_err(|e| FileError::io(path, e))?;
        let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let file = Self::parse(&text).map_err(|e| FileError::format(path, e))?;
        Ok((file, text))
    }
}

/// The largest measurement file read, 1 GiB: a folder others can write to
/// may hold anything under a `.jsonl` name, and a file is read whole.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// A regular file's bytes, at most `max` of them. Anything else under the
/// name (a named pipe, whose read would wait for a writer forever; a
/// device such as `/dev/zero`, which never ends; a folder) is refused
/// before it is opened, and checked again once open; a longer file is
/// refused, read no further than `max`.
fn read_bytes(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, size) = open_regular(path)?;
    let too_long = || std::io::Error::other(format!("larger than the limit of {max} bytes: left unread"));
    if size > max {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_long());
    }
    Ok(bytes)
}

/// A regular file, open, and its size; anything else is refused before it
/// is opened and checked again once open ([`read_bytes`]).
fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let (file, meta) = open_in_folder(path)?;
    Ok((file, meta.len()))
}

/// A file of a folder others may write (measurements, transcripts), open,
/// and what it is once open: only a regular file, never through a link.
/// A link is refused whatever it points to (another run, a token file
/// outside the folder); a named pipe, whose read would wait for a writer
/// forever, a device such as `/dev/zero`, which never ends, and a folder
/// are refused before they are opened (on Unix the open itself neither
/// follows a link nor waits on a pipe), and checked again once open, so a
/// file swapped for a link between the two is refused too. The one opener
/// of what a shared folder holds: the board, `diff`, `show`, the index and
/// the compile cache read through it.
pub fn open_in_folder(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let refuse = |m: &std::fs::Metadata| {
        if m.file_type().is_symlink() {
            Err(std::io::Error::other("a link: not followed, left unread"))
        } else if !m.is_file() {
            Err(std::io::Error::other("not a regular file (a named pipe, a device or a folder): left unread"))
        } else {
            Ok(())
        }
    };
    refuse(&std::fs::symlink_metadata(path)?)?;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        open.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = open.open(path).map_err(|e| {
        // The name became a link after it was looked at.
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::other("a link: not followed, left unread");
        }
        e
    })?;
    let meta = file.metadata()?;
    refuse(&meta)?;
    Ok((file, meta))
}

/// The most read of a file for its manifest alone, 16 MiB: a longer first
/// line reads as cut short.
const MAX_HEAD_BYTES: u64 = 16 << 20;

/// A regular file's bytes up to and including its first line that is not
/// blank, at most `max`.
fn read_head(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Read};
    let (file, _) = open_regular(path)?;
    let mut lines = std::io::BufReader::new(file.take(max));
    let mut out = Vec::new();
    loop {
        let start = out.len();
        if lines.read_until(b'\n', &mut out)? == 0 || !out[start..].iter().all(u8::is_ascii_whitespace) {
            return Ok(out);
        }
    }
}

/// Why a file could not be read at all.
#[derive(Debug)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong.
    pub kind: FileErrorKind,
}

/// What was wrong with a file.
#[derive(Debug)]
pub enum FileErrorKind {
    /// It could not be read.
    Io(std::io::Error),
    /// It is not a measurement file this reader knows: no manifest, a
    /// damaged one, or another major version.
    Format(ReadError),
}

impl FileError {
    pub(super) fn io(path: &Path, e: std::io::Error) -> FileError {
        FileError { path: path.to_path_buf(), kind: FileErrorKind::Io(e) }
    }

    pub(super) fn format(path: &Path, e: ReadError) -> FileError {
        FileError { path: path.to_path_buf(), kind: FileErrorKind::Format(e) }
    }

    /// Whether the file is of a major format version this reader refuses
    /// (as opposed to one with no readable manifest).
    pub fn is_other_version(&self) -> bool {
        matches!(&self.kind, FileErrorKind::Format(e) if e.message.contains("format version"))
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            FileErrorKind::Io(e) => write!(f, "failed to read {}: {e}", self.path.display()),
            FileErrorKind::Format(e) => write!(f, "{}: {e}", self.path.display()),
        }
    }
}

impl std::error::Error for FileError {}

/// The measurement files (`*.jsonl`) of a folder, sorted by name. A link
/// or anything else that is not a regular file is listed too, and refused
/// when read ([`open_in_folder`]), so that a warning names it.
pub fn list(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::manifest;
    use super::*;

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.jsonl");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_bytes(&file, 5).unwrap(), b"12345");
        let err = read_bytes(&file, 4).unwrap_err();
        assert!(err.to_string().contains("larger than the limit of 4 bytes"), "{err}");
        // A folder, and a device that never ends, are refused unread.
        let folder = dir.path().join("b.jsonl");
        std::fs::create_dir(&folder).unwrap();
        assert!(read_bytes(&folder, 5).unwrap_err().to_string().contains("not a regular file"));
        assert!(read_bytes(Path::new("/dev/zero"), 5).unwrap_err().to_string().contains("not a regular file"));
        // The head: up to the first line that is not blank.
        std::fs::write(&file, "\n \n{\"a\":1}\nrest\n").unwrap();
        assert_eq!(read_head(&file, 100).unwrap(), b"\n \n{\"a\":1}\n");
        assert_eq!(read_head(&file, 6).unwrap(), b"\n \n{\"a");
        // A link, to a regular file outside the folder or to one inside it,
        // is refused unread, as is a link to a link.
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), "secret").unwrap();
        for (name, to) in [("l.jsonl", outside.path()), ("m.jsonl", file.as_path()), ("n.jsonl", Path::new("l.jsonl"))]
        {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(to, &link).unwrap();
            let err = read_bytes(&link, 100).unwrap_err().to_string();
            assert!(err.contains("a link: not followed"), "{name}: {err}");
            assert!(read_head(&link, 100).unwrap_err().to_string().contains("a link"), "{name}");
        }
        // A named pipe: refused without waiting for a writer.
        let fifo = dir.path().join("c.jsonl");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            assert!(read_bytes(&fifo, 5).unwrap_err().to_string().contains("not a regular file"));
        }
    }
    use crate::Summary;

    fn parse(text: &str) -> Result<File, ReadError> {
        File::parse(text)
    }

    #[test]
    fn line_is_tagged_type_and_data() {
        let line: Line = Line::Summary(Summary {
            finished_at: "2026-01-01T00:00:00Z".into(),
            seconds: 1.5,
            passed: 1,
            failed: 2,
            lost: 3,
            not_applicable: 0,
            instruments: vec![],
            gate: None,
            stopped: None,
            interrupted: None,
            interrupted_cases: 0,
        });
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(json["type"], "summary");
        assert_eq!(json["data"]["lost"], 3);
    }

    #[test]
    fn a_1_0_file_without_the_1_1_fields_still_loads() {
        let v10 = r#"{"type":"manifest","data":{"format_version":"1.0","run_id":"r","started_at":"t","harness":{"version":"0.1.0","git_revision":null},"suite":{"name":"s","version":"1","sha256":"00","files":[]},"target":{"name":"t","base_url":"u","model_id":"m","engine":"llama.cpp","build":null,"model_path":null,"model_sha256":null,"launch_command":null,"facts":[]},"client_host":{"hostname":null,"cpu_model":null,"cores":2,"memory_bytes":1,"memory_available_bytes":1,"os":null,"kernel":null},"route":"direct","instruments":[]}}
{"type":"case","data":{"id":"a::b","instrument":"a","case":"b","tags":[],"outcome":"pass","reason":null,"metrics":[],"notes":[],"started_at":"t","seconds":1.0,"endpoint_seconds":0.5,"calls":[{"kind":"chat","result":"ok","status":200,"total_ms":1.0,"ttft_ms":null,"decode_ms":null,"prompt_tokens":1,"completion_tokens":1,"token_source":"server-usage"}],"prompt_tokens":1,"completion_tokens":1,"transcript_sha256":"00","snapshots":[]}}
{"type":"summary","data":{"finished_at":"t","seconds":1.0,"passed":1,"failed":0,"lost":0,"not_applicable":0}}
"#;
        let file = parse(v10).unwrap();
        assert!(file.damage.is_none() && file.run.summary.is_some());
        let c = &file.run.cases[0];
        assert_eq!((c.arm.as_deref(), c.calls[0].server_load.as_ref()), (None, None));
    }

    #[test]
    fn a_row_declaration_of_a_later_format_is_left_out_not_the_manifest() {
        let mut line = serde_json::to_value(manifest("1.8")).unwrap();
        line["data"]["rows"] = serde_json::json!([
            {"title": "Mine", "instrument": "capitals", "figure": "pass-share", "new-field": 1},
            {"title": "Later", "instrument": "capitals", "figure": "trimmed-mean", "metric": "ms"}
        ]);
        let file = parse(&(line.to_string() + "\n")).unwrap();
        let titles: Vec<&str> = file.run.manifest.rows.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(titles, ["Mine"]);
    }

    #[test]
    fn reads_its_own_version_and_refuses_another_major() {
        let ok = serde_json::to_string(&manifest("1.3")).unwrap() + "\n";
        assert_eq!(parse(&ok).unwrap().run.manifest.format_version, "1.3");
        let future = serde_json::to_string(&manifest("2.0")).unwrap() + "\n";
        let err = parse(&future).unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("format version 2.0"), "{err}");
    }

    #[test]
    fn the_first_line_must_be_a_manifest() {
        let err = parse("{\"type\":\"summary\",\"data\":{\"finished_at\":\"x\",\"seconds\":0,\"passed\":0,\"failed\":0,\"lost\":0,\"not_applicable\":0}}\n")
            .unwrap_err();
        assert!(err.message.contains("not a manifest"), "{err}");
    }

    #[test]
    fn a_cut_file_keeps_every_whole_line_and_names_the_cut() {
        let m = serde_json::to_string(&manifest("1.2")).unwrap();
        let whole = format!("{m}\n");
        let cut = format!("{m}\n{{\"type\":\"case\",\"data\":{{\"id\":\"a");
        let p = parse(&cut).unwrap();
        assert_eq!((p.run.cases.len(), p.whole_bytes), (0, whole.len()));
        let damage = p.damage.unwrap();
        assert_eq!(damage.line, 2);
        assert!(damage.message.contains("cut short"), "{damage}");
        assert!(parse(&whole).unwrap().damage.is_none());
        // A damaged line in the middle ends what is read there too, and so
        // does a second manifest.
        let mid = format!("{m}\nnot json\n{m}\n");
        assert_eq!(parse(&mid).unwrap().damage.unwrap().line, 2);
        let twice = format!("{m}\n{m}\n");
        let d = parse(&twice).unwrap().damage.unwrap();
        assert_eq!((d.line, d.message.as_str()), (2, "a second manifest"));
        // Without a manifest there is nothing to keep.
        assert!(parse("{\"type\":\"sum").is_err());
    }

    #[test]
    fn garbage_names_its_line() {
        let err = parse("\n{not json").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
