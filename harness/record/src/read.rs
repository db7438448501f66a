//! Reading a measurement file: strictly (every line or an error naming
//! it), line by line, or as far as it is whole (a file cut by a crash).

use crate::{FORMAT_VERSION, Line};

/// Why a measurement file could not be read.
#[derive(Debug)]
pub struct ReadError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

/// Parse a whole measurement file. The first line must be a manifest of a
/// format version this crate knows.
pub fn parse(text: &str) -> Result<Vec<Line>, ReadError> {
    parse_with(text)
}

/// [`parse`], keeping of each endpoint call only what `C` reads: a reader
/// that needs less of the calls (the board reads their count and first
/// status) skips the rest unread instead of building it.
pub fn parse_with<C: serde::de::DeserializeOwned>(text: &str) -> Result<Vec<Line<C>>, ReadError> {
    let mut lines = Vec::new();
    parse_each(text, |line| {
        lines.push(line);
        Ok(())
    })?;
    Ok(lines)
}

/// [`parse_with`], handing each line to `each` as it is read instead of
/// collecting them (a reader that keeps its own structure moves nothing
/// twice). An error from `each` is the file's error at that line.
pub fn parse_each<C: serde::de::DeserializeOwned>(
    text: &str,
    mut each: impl FnMut(Line<C>) -> Result<(), String>,
) -> Result<(), ReadError> {
    let mut seen = false;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line: Line<C> =
            serde_json::from_str(raw).map_err(|err| ReadError { line: i + 1, message: err.to_string() })?;
        if !seen {
            first_line(&line, i + 1)?;
            seen = true;
        }
        each(line).map_err(|message| ReadError { line: i + 1, message })?;
    }
    if !seen {
        return Err(ReadError { line: 1, message: "empty measurement file".into() });
    }
    Ok(())
}

/// A file's first line must be a manifest of a major version this crate
/// reads.
fn first_line<C>(line: &Line<C>, at: usize) -> Result<(), ReadError> {
    match line {
        Line::Manifest(m) if major(&m.format_version) == major(FORMAT_VERSION) => Ok(()),
        Line::Manifest(m) => Err(ReadError {
            line: at,
            message: format!("format version {} is not readable by this version ({FORMAT_VERSION})", m.format_version),
        }),
        _ => Err(ReadError { line: at, message: "the first line is not a manifest".into() }),
    }
}

/// A measurement file read as far as it is whole: the lines before the
/// first damaged one, and where the damage is.
#[derive(Debug)]
pub struct Partial {
    /// Every line up to the damage.
    pub lines: Vec<Line>,
    /// The damaged line, if any: a file cut by a crash or a full disk ends
    /// in half a line.
    pub damage: Option<ReadError>,
    /// How many bytes of the text are whole lines: `&text[..whole_bytes]`
    /// is what a strict reader can take.
    pub whole_bytes: usize,
}

/// Read a measurement file that may be damaged: every record up to its
/// last whole line is kept, and the first line that does not parse is
/// reported instead of failing the whole file. A file whose manifest is
/// missing, damaged or of another major version is still an error. Each
/// line is parsed once.
pub fn parse_partial(text: &str) -> Result<Partial, ReadError> {
    let mut lines = Vec::new();
    let mut whole_bytes = 0;
    let mut damage = None;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let parsed = if !raw.ends_with('\n') {
            Err("the line is cut short (no newline at its end: the run crashed or the disk filled)".to_string())
        } else if raw.trim().is_empty() {
            Ok(None)
        } else {
            serde_json::from_str::<Line>(raw).map(Some).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(line) => {
                if let Some(line) = line {
                    if lines.is_empty() {
                        first_line(&line, i + 1)?;
                    }
                    lines.push(line);
                }
                whole_bytes += raw.len();
            }
            Err(message) => {
                damage = Some(ReadError { line: i + 1, message });
                break;
            }
        }
    }
    if lines.is_empty() {
        return Err(damage.unwrap_or(ReadError { line: 1, message: "empty measurement file".into() }));
    }
    Ok(Partial { lines, damage, whole_bytes })
}

fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

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

    fn manifest(version: &str) -> Line {
        Line::Manifest(Manifest {
            format_version: version.into(),
            run_id: "r".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            harness: HarnessInfo { version: "0.1.0".into(), git_revision: None },
            suite: SuiteInfo { name: "s".into(), version: "1".into(), sha256: "00".into(), files: vec![] },
            target: TargetInfo {
                name: "t".into(),
                base_url: "http://127.0.0.1:1".into(),
                model_id: "m".into(),
                engine: "llama.cpp".into(),
                build: None,
                model_path: None,
                model_sha256: None,
                launch_command: None,
                facts: vec![],
                host: None,
                tool_choice: None,
                label: None,
                note: None,
                description: None,
            },
            client_host: HostInfo {
                hostname: None,
                cpu_model: None,
                cores: 2,
                memory_bytes: 1,
                memory_available_bytes: 1,
                os: None,
                kernel: None,
                accelerators: vec![],
            },
            route: "direct".into(),
            instruments: vec![],
            arms: vec![],
            client_ceiling: None,
            judge: None,
            partition: None,
            resumes: None,
            suite_cases: Default::default(),
            repeat: None,
        })
    }

    #[test]
    fn a_1_0_file_without_the_1_1_fields_still_loads() {
        let v10 = r#"{"type":"manifest","data":{"format_version":"1.0","run_id":"r","started_at":"t","harness":{"version":"0.1.0","git_revision":null},"suite":{"name":"s","version":"1","sha256":"00","files":[]},"target":{"name":"t","base_url":"u","model_id":"m","engine":"llama.cpp","build":null,"model_path":null,"model_sha256":null,"launch_command":null,"facts":[]},"client_host":{"hostname":null,"cpu_model":null,"cores":2,"memory_bytes":1,"memory_available_bytes":1,"os":null,"kernel":null},"route":"direct","instruments":[]}}
{"type":"case","data":{"id":"a::b","instrument":"a","case":"b","tags":[],"outcome":"pass","reason":null,"metrics":[],"notes":[],"started_at":"t","seconds":1.0,"endpoint_seconds":0.5,"calls":[{"kind":"chat","result":"ok","status":200,"total_ms":1.0,"ttft_ms":null,"decode_ms":null,"prompt_tokens":1,"completion_tokens":1,"token_source":"server-usage"}],"prompt_tokens":1,"completion_tokens":1,"transcript_sha256":"00","snapshots":[]}}
{"type":"summary","data":{"finished_at":"t","seconds":1.0,"passed":1,"failed":0,"lost":0,"not_applicable":0}}
"#;
        let lines = parse(v10).unwrap();
        assert_eq!(lines.len(), 3);
        let Line::Case(c) = &lines[1] else { panic!() };
        assert_eq!((c.arm.as_deref(), c.calls[0].server_load.as_ref()), (None, None));
    }

    #[test]
    fn reads_its_own_version_and_refuses_another_major() {
        let ok = serde_json::to_string(&manifest("1.3")).unwrap();
        assert_eq!(parse(&ok).unwrap().len(), 1);
        let future = serde_json::to_string(&manifest("2.0")).unwrap();
        let err = parse(&future).unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("format version 2.0"), "{err}");
    }

    #[test]
    fn the_first_line_must_be_a_manifest() {
        let err = parse(r#"{"type":"summary","data":{"finished_at":"x","seconds":0,"passed":0,"failed":0,"lost":0,"not_applicable":0}}"#)
            .unwrap_err();
        assert!(err.message.contains("not a manifest"), "{err}");
    }

    #[test]
    fn a_cut_file_keeps_every_whole_line_and_names_the_cut() {
        let m = serde_json::to_string(&manifest("1.2")).unwrap();
        let whole = format!("{m}\n");
        let cut = format!("{m}\n{{\"type\":\"case\",\"data\":{{\"id\":\"a");
        let p = parse_partial(&cut).unwrap();
        assert_eq!(p.lines.len(), 1);
        let damage = p.damage.unwrap();
        assert_eq!(damage.line, 2);
        assert!(damage.message.contains("cut short"), "{damage}");
        assert!(parse_partial(&whole).unwrap().damage.is_none());
        // A damaged line in the middle ends what is read there too.
        let mid = format!("{m}\nnot json\n{m}\n");
        let p = parse_partial(&mid).unwrap();
        assert_eq!((p.lines.len(), p.damage.unwrap().line), (1, 2));
        // Without a manifest there is nothing to keep.
        assert!(parse_partial("{\"type\":\"sum").is_err());
    }

    #[test]
    fn garbage_names_its_line() {
        let err = parse("\n{not json").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
