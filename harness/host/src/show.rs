//! `cargo sparktest show RUN#CASE`: one case's record and transcript, as
//! kept beside the measurement file.

use std::path::PathBuf;

use serde_json::Value;
use sparktest_record::foreign::{one_line, shown, starting_a_line};
use sparktest_record::{CallRecord, CaseRecord};

use crate::config::Config;
use crate::error::Error;
use crate::sinks::transcripts::TranscriptStore;
use crate::transcript::Transcript;

/// Everything `cargo sparktest show` needs.
#[derive(Debug)]
pub struct ShowArgs {
    /// `RUN_ID#CASE_ID`, as the board names records.
    pub record: String,
    /// Folder of measurement files (default: the project's).
    pub measurements_dir: Option<PathBuf>,
    /// Print the transcript as JSON instead of text.
    pub json: bool,
    /// Where the command was started.
    pub cwd: PathBuf,
}

/// Print one case. Returns the process exit code.
pub fn show(args: ShowArgs) -> Result<i32, Error> {
    let config = Config::discover(&args.cwd)?;
    let dir = config.measurements_dir(args.measurements_dir.as_deref());
    let (run, case) = args.record.split_once('#').ok_or_else(|| {
        Error::setup(format!("{:?}: expected RUN_ID#CASE_ID (as the board lists records)", args.record))
    })?;
    if run.contains(['/', '\\']) || run.starts_with('.') {
        return Err(Error::setup(format!("{run:?} is not a run id")));
    }
    let file = file_of_run(&dir, run)?;
    let read = sparktest_record::reader::File::<CallRecord>::read(&file).map_err(|e| Error::setup(e.to_string()))?;
    let record = read
        .run
        .cases
        .into_iter()
        .rfind(|c| c.id == case)
        .ok_or_else(|| Error::setup(format!("{}: no record of case {case}", file.display())))?;
    // The address comes from a file: only a sha256 becomes a path.
    // Read as every file of the folder is: a link is not followed.
    let transcript: Option<Transcript> = TranscriptStore::path(&dir, &record.transcript_sha256)
        .and_then(|path| sparktest_record::reader::open_in_folder(&path).ok())
        .and_then(|(file, _)| {
            let limited = std::io::Read::take(file, sparktest_record::reader::MAX_FILE_BYTES);
            serde_json::from_reader(std::io::BufReader::new(limited)).ok()
        });
    if args.json {
        let out = serde_json::json!({"record": record, "transcript": transcript});
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(0);
    }
    print_record(&record);
    match transcript {
        Some(t) => print_transcript(&t),
        None if record.calls.is_empty() => println!("(the case made no call)"),
        None => println!(
            "(no transcript {} in {}: runs before format 1.2 kept none)",
            one_line(&record.transcript_sha256),
            dir.join("transcripts").display()
        ),
    }
    Ok(0)
}

/// The file that holds a run: `<run id>.jsonl`, as the harness names it,
/// when the run id it holds is that run's (a file's name is no claim on a
/// run), else the file the board's index says holds it (a file renamed,
/// copied in under another name, or a `RUN.jsonl` holding another run
/// passed over).
fn file_of_run(dir: &std::path::Path, run: &str) -> Result<PathBuf, Error> {
    let named = dir.join(format!("{run}.jsonl"));
    let mut holds = None;
    if named.is_file() {
        let head = sparktest_record::reader::File::<sparktest_record::reader::Unread>::read_manifest(&named)
            .map_err(|e| Error::setup(e.to_string()))?;
        if head.run.manifest.run_id == run {
            return Ok(named);
        }
        holds = Some(head.run.manifest.run_id);
    }
    let runs = if dir.is_dir() { crate::measurements::runs_in(dir)? } else { Vec::new() };
    runs.into_iter().find(|(_, f)| f.run_id == run).map(|(path, _)| path).ok_or_else(|| {
        Error::setup(match holds {
            Some(other) => format!(
                "{} holds run {other:?}, not {run}, and no other measurement file in {} holds {run}",
                named.display(),
                dir.display()
            ),
            None => {
                format!("no measurement file in {} holds run {run} (looked for {})", dir.display(), named.display())
            }
        })
    })
}

fn print_record(r: &CaseRecord) {
    println!("{}  {}", starting_a_line(&r.id), r.outcome.as_str());
    if let Some(reason) = &r.reason {
        println!("  reason: {}", shown(reason));
    }
    for m in &r.metrics {
        println!("  {} = {} {}", one_line(&m.name), m.value, one_line(&m.unit));
    }
    for (k, v) in &r.notes {
        println!("  {}: {}", one_line(k), shown(v));
    }
    println!();
}

/// A message's content as text: images by size, not bytes.
fn content(v: &Value) -> String {
    match v {
        Value::Array(parts) => parts
            .iter()
            .map(|p| match (p.get("Text"), p.get("ImageUrl")) {
                (Some(t), _) => t.as_str().unwrap_or("").to_string(),
                (_, Some(u)) => {
                    format!("[image, {} bytes as a URL]", u.as_str().map_or(0, str::len))
                }
                _ => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.as_str().map_or_else(|| other.to_string(), str::to_string),
    }
}

fn print_transcript(t: &Transcript) {
    for (i, x) in t.exchanges.iter().enumerate() {
        let ms = x.timing.as_ref().and_then(|t| t.get("total_ms")).and_then(Value::as_f64);
        println!("── {} #{} {}", one_line(&x.kind), i + 1, ms.map(|m| format!("({m:.0} ms)")).unwrap_or_default());
        for m in x.request.get("messages").and_then(Value::as_array).into_iter().flatten() {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("?").to_lowercase();
            println!("[{}] {}", one_line(&role), shown(&content(m.get("content").unwrap_or(&Value::Null))));
            for c in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                println!(
                    "  → {}({})",
                    one_line(c["name"].as_str().unwrap_or("")),
                    shown(c["arguments"].as_str().unwrap_or(""))
                );
            }
        }
        if let Some(p) = x.request.get("prompt").and_then(Value::as_str) {
            println!("[prompt] {}", shown(p));
        }
        if let Some(r) = &x.reply {
            if let Some(reasoning) = r.get("reasoning").and_then(Value::as_str) {
                println!("[reasoning] {}", shown(reasoning));
            }
            println!("[reply] {}", shown(r.get("text").and_then(Value::as_str).unwrap_or("")));
            for c in r.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                println!(
                    "  → {}({})",
                    one_line(c["name"].as_str().unwrap_or("")),
                    shown(c["arguments"].as_str().unwrap_or(""))
                );
            }
            if let Some(f) = r.get("finish_reason").and_then(Value::as_str) {
                println!("  (finish: {})", one_line(f));
            }
        }
        if let Some(e) = &x.error {
            println!("[error] {}", shown(e));
        }
        println!();
    }
}
