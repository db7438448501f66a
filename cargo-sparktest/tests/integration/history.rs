//! The board's index and a history larger than the reporter is handed
//! whole (issue 48): a file changed since it was indexed is read again, a
//! file removed leaves the board, a damaged index is rebuilt, and a board
//! built from the runs its cells read is the board built from every run.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sparktest_record::{Outcome, Repeat};

use crate::board::{case, manifest, standings, write};
use crate::support::*;

fn footprint(gib: f64) -> sparktest_record::CaseRecord {
    case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", gib)], None)
}

fn kv(tokens: f64) -> sparktest_record::CaseRecord {
    case("context", "kv::pool", Outcome::Pass, &[("kv-pool-tokens", tokens)], None)
}

fn columns(s: &Value) -> Vec<String> {
    s["board"]["columns"].as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap().to_string()).collect()
}

/// This user's index of a folder: the one whose second line names it.
fn index_of(dir: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let folder = serde_json::json!({ "folder": dir.canonicalize().unwrap() }).to_string();
    std::fs::read_dir(home.join(".cache/sparktest/board-index"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().nth(1) == Some(folder.as_str())))
        .unwrap_or_else(|| panic!("no index of {}", dir.display()))
}

#[test]
fn the_index_reads_again_what_changed_drops_what_went_and_is_rebuilt_when_damaged() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, target) in [("1.jsonl", "alpha"), ("2.jsonl", "beta"), ("3.jsonl", "gamma")] {
        write(&dir, file, manifest(target, "m", "llama.cpp", "2026-03-01T00:00:00Z"), vec![footprint(2.0)], true);
    }
    let measurements = dir.display().to_string();
    let board = |out: &str| {
        let o = p.run(&["board", "--measurements", &measurements, "--out", out]);
        assert!(o.status.success(), "{}", text(&o));
        (text(&o), standings(&p.path().join(out)))
    };
    let (said, first) = board("a");
    assert!(said.contains("board index: 0 files as indexed, 3 read, 0 gone"), "{said}");
    // Nothing changed: nothing read for the index, and nothing said of it.
    let (said, again) = board("b");
    assert!(!said.contains("board index:"), "{said}");
    assert_eq!(first, again);

    // A file rewritten with another figure: read again, and the board
    // shows the new figure, not the indexed one.
    write(&dir, "2.jsonl", manifest("beta", "m", "llama.cpp", "2026-03-01T00:00:00Z"), vec![footprint(7.5)], true);
    let (said, changed) = board("c");
    assert!(said.contains("board index: 2 files as indexed, 1 read, 0 gone"), "{said}");
    assert_ne!(first, changed);
    assert!(serde_json::to_string(&changed).unwrap().contains("7.5"), "the new figure is on the board");

    // A file removed: dropped from the index and gone from the board.
    std::fs::remove_file(dir.join("3.jsonl")).unwrap();
    let (said, removed) = board("d");
    assert!(said.contains("board index: 2 files as indexed, 0 read, 1 gone"), "{said}");
    assert_eq!(columns(&removed), ["alpha", "beta"]);

    // A damaged index: said, rebuilt from the files, never trusted in part.
    let index = index_of(&dir);
    let lines: Vec<String> = std::fs::read_to_string(&index).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "a head, the folder, an entry per file: {lines:?}");
    let damaged = format!("{}\n{}\n{}\n{{\"file\":\"1.jsonl\",\"entry\":", lines[0], lines[1], lines[2]);
    std::fs::write(&index, damaged).unwrap();
    let (said, rebuilt) = board("e");
    assert!(said.contains("is damaged (line 4: "), "{said}");
    assert!(said.contains("it is rebuilt from the measurements"), "{said}");
    assert!(said.contains("board index: 0 files as indexed, 2 read, 0 gone"), "{said}");
    assert_eq!(rebuilt, removed);
    // Deleting it costs only time.
    std::fs::remove_file(&index).unwrap();
    let (said, fresh) = board("f");
    assert!(said.contains("board index: 0 files as indexed, 2 read, 0 gone"), "{said}");
    assert_eq!(fresh, removed);
}

/// Runs over three nights whose cells read older runs: a later run of one
/// case alone, a later run the server died in, repeats, a cut run and its
/// resume, and padded runs that make the history larger than a quarter of
/// the reporter's memory.
fn history(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let at = |day: u32, minute: u32| format!("2026-03-0{day}T00:{minute:02}:00Z");
    let m = |target: &str, day: u32, minute: u32| manifest(target, "m", "llama.cpp", &at(day, minute));
    write(dir, "alpha-1.jsonl", m("alpha", 1, 0), vec![footprint(2.0), kv(4096.0)], true);
    write(dir, "alpha-2.jsonl", m("alpha", 2, 0), vec![kv(8192.0)], true);
    let lost = |c: sparktest_record::CaseRecord| sparktest_record::CaseRecord {
        outcome: Outcome::Lost,
        reason: Some("connection refused".into()),
        metrics: vec![],
        ..c
    };
    write(dir, "alpha-3.jsonl", m("alpha", 3, 0), vec![lost(footprint(0.0)), lost(kv(0.0))], true);
    for i in 1..=3 {
        let mut r = m("beta", 1, i);
        r.repeat = Some(Repeat { index: i, total: 3, group: "repeat-beta".into() });
        write(dir, &format!("beta-{i}.jsonl"), r, vec![footprint(1.0 + f64::from(i) / 10.0)], true);
    }
    let cut = m("gamma", 1, 5);
    let cut_id = cut.run_id.clone();
    write(dir, "gamma-1.jsonl", cut, vec![footprint(3.0)], false);
    let mut resume = m("gamma", 2, 5);
    resume.resumes = Some(cut_id);
    write(dir, "gamma-2.jsonl", resume, vec![kv(2048.0)], true);
    let padding = "x".repeat(400_000);
    for i in 0..12 {
        let c = case("footprint", "idle::memory", Outcome::Fail, &[("resident-gib", 5.0)], Some(&padding));
        // Measured on another box: history, not the column's box now.
        let mut pad = m("delta", 1, 10 + i);
        pad.client_host.hostname = Some("the-old-box".into());
        pad.client_host.cores = 2;
        write(dir, &format!("delta-pad{i:02}.jsonl"), pad, vec![c], true);
    }
    write(dir, "delta-3.jsonl", m("delta", 3, 10), vec![footprint(4.0)], true);
    // A night of many runs that never finished: more than a folded night
    // names one by one.
    for i in 0..52 {
        let cut = manifest("epsilon", "m", "llama.cpp", &format!("2026-03-01T01:{i:02}:00Z"));
        write(dir, &format!("epsilon-{i:02}.jsonl"), cut, vec![footprint(1.5)], false);
    }
    write(dir, "epsilon-3.jsonl", m("epsilon", 3, 30), vec![footprint(1.5)], true);
}

#[test]
fn a_history_past_what_the_reporter_is_handed_whole_makes_the_same_board_from_the_runs_its_cells_read() {
    let p = Project::new("");
    let dir = p.path().join("m");
    history(&dir);
    let measurements = dir.display().to_string();
    let board = |out: &str| {
        let o = p.run(&["board", "--measurements", &measurements, "--out", out]);
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    // 64 MiB: the 5 MB of runs are handed whole.
    let said = board("whole");
    assert!(!said.contains("older nights as counts"), "{said}");
    // 16 MiB: past a quarter of it, the reporter is handed what its cells
    // read (here every run of the latest night too); the two older nights
    // are counts.
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    let config = config.replace("memory-per-instance-mib = 64", "memory-per-instance-mib = 16");
    std::fs::write(p.path().join("sparktest.toml"), config).unwrap();
    let said = board("counted");
    assert!(
        said.contains("the 74 runs hold 4.9 MB, more than the reporter is handed whole: it is handed the 10 files its cells read, 0 more runs of the latest night as their run-log lines, and 2 older nights as counts"),
        "{said}"
    );
    assert!(!said.contains("board index:"), "the second build reads nothing for the index: {said}");
    let (whole, counted) = (standings(&p.path().join("whole")), standings(&p.path().join("counted")));
    assert_eq!(whole, counted, "the same standings.json");
    // The old box gave no cell a record: neither board names it.
    assert!(!serde_json::to_string(&whole).unwrap().contains("the-old-box"));
    assert!(
        std::fs::read_to_string(p.path().join("whole/board.md")).unwrap().contains("the-old-box"),
        "its runs are in the log"
    );
    // And the cells read what they should: alpha's footprint from its
    // first night (its later runs measured only the KV pool, or died).
    let json = serde_json::to_string(&counted).unwrap();
    assert!(json.contains("2026-03-01T00:00:00Z-alpha#footprint::idle::memory"), "{json}");
    // The run log: the latest night's runs listed, each older night one
    // line with its runs that failed as runs or resumed one.
    let md = std::fs::read_to_string(p.path().join("counted/board.md")).unwrap();
    assert!(md.contains("### 2026-03-03: 3 runs, 0 with a failed case, 1 with a lost case, 0 unfinished\n\n|"), "{md}");
    // (Markdown escapes a parenthesis.)
    let night2 = "### 2026-03-02: 2 runs, 0 with a failed case, 0 with a lost case, 0 unfinished\n\n\
                  - 2026-03-02T00:05:00Z-gamma \\(gamma-2.jsonl\\): resumes 2026-03-01T00:05:00Z-gamma\n";
    assert!(md.contains(night2), "{md}");
    let night1 = "### 2026-03-01: 69 runs, 12 with a failed case, 0 with a lost case, 53 unfinished\n\n\
                  - 2026-03-01T00:05:00Z-gamma \\(gamma-1.jsonl\\): never finished \\(no summary line: it crashed or was killed\\)\n";
    assert!(md.contains(night1), "{md}");
    let html = std::fs::read_to_string(p.path().join("counted/board.html")).unwrap();
    assert!(html.contains("<b>2026-03-01</b>: 69 runs,"), "folded nights in the page too");
    // 53 runs of that night never finished: 50 named, then how to see all.
    let night1 = &md[md.find("### 2026-03-01").unwrap()..];
    let night1 = &night1[..night1[4..].find("\n#").map_or(night1.len(), |at| at + 4)];
    let named: Vec<&str> = night1.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(named.len(), 51, "{night1}");
    assert!(
        named[50].starts_with(
            "- and 3 more runs that failed as runs or resumed one: a board of that night alone lists them all"
        ),
        "{}",
        named[50]
    );
    assert!(html.len() < std::fs::read_to_string(p.path().join("whole/board.html")).unwrap().len());
}

/// Seven nights of the 31-configuration board (10,416 files, 242 MB)
/// opened at 1,440 px in Chromium: the page loads, every column is there,
/// the run log is folded by night with only the latest open, and the page
/// does not scroll sideways. Written to `target/board-year-1440x900.png`.
#[test]
#[ignore = "about a minute: 10,416 files through the board and a browser; run with --ignored"]
fn seven_nights_of_thirty_one_columns_open_folded_by_night_in_a_real_browser() {
    let p = Project::new("");
    // The built-in limits (the test projects cap memory at 64 MiB).
    std::fs::write(p.path().join("sparktest.toml"), "[run]\nmeasurements-dir = \"measurements\"\n").unwrap();
    let first = p.path().join("first");
    crate::board_files::write(&first, &repo().join("suites"), 31);
    let night = crate::nights::Night::read(&first);
    let m = p.path().join("m");
    for k in 0..7 {
        night.write(&m, k);
    }
    assert_eq!(std::fs::read_dir(&m).unwrap().count(), 7 * crate::board_files::COLUMNS * 3 * 16);
    let measurements = m.display().to_string();
    let out = p.run(&["board", "--measurements", &measurements, "--out", "out"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("and 7 older nights as counts"), "{}", text(&out));
    let html = p.path().join("out/board.html");
    eprintln!("board.html: {:.1} MB", std::fs::metadata(&html).unwrap().len() as f64 / 1e6);
    let b = crate::webdriver::Browser::start_at(1440, 900);
    b.open(&format!("file://{}", html.display()));
    assert_eq!(crate::board::order(&b).len(), crate::board_files::COLUMNS);
    let page = b.eval(
        "var n=Array.prototype.slice.call(document.querySelectorAll('details.night'));\
         return {nights: n.length, open: n.filter(function(d){return d.open;}).length,\
           first: n.length ? n[0].querySelector('summary').textContent : '',\
           rows: n.length ? n[0].querySelectorAll('tbody tr').length : 0,\
           wide: document.documentElement.scrollWidth, window: window.innerWidth};",
    );
    eprintln!("{page}");
    // The latest night's runs listed and open; seven older nights, folded.
    assert_eq!(page["nights"], 8, "{page}");
    assert_eq!(page["open"], 1, "{page}");
    assert!(page["rows"].as_u64() >= Some(300), "{page}");
    assert!(page["wide"].as_u64() <= page["window"].as_u64(), "the page scrolls sideways: {page}");
    let png = b.screenshot();
    assert_eq!(&png[1..4], b"PNG");
    std::fs::write(target_dir().join("board-year-1440x900.png"), png).unwrap();
}

/// `show` and `diff` find a run through the index: a file renamed, or
/// copied in under another name, is found by the run id it holds.
#[test]
fn show_and_diff_find_a_run_by_its_id_whatever_its_file_is_called() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let a = manifest("alpha", "m", "llama.cpp", "2026-03-01T00:00:00Z");
    let b = manifest("alpha", "m", "llama.cpp", "2026-03-02T00:00:00Z");
    let (a_id, b_id) = (a.run_id.clone(), b.run_id.clone());
    write(&dir, "copied-in-from-the-cluster.jsonl", a, vec![footprint(2.0)], true);
    write(&dir, "renamed.jsonl", b, vec![footprint(2.5)], true);
    let measurements = dir.display().to_string();
    let shown = p.run(&["show", &format!("{a_id}#footprint::idle::memory"), "--measurements", &measurements]);
    assert!(shown.status.success(), "{}", text(&shown));
    assert!(text(&shown).contains("resident-gib = 2 "), "{}", text(&shown));
    let missing = p.run(&["show", "no-such-run#footprint::idle::memory", "--measurements", &measurements]);
    assert_eq!(missing.status.code(), Some(3), "{}", text(&missing));
    assert!(text(&missing).contains("holds run no-such-run"), "{}", text(&missing));
    // A file named for run A that holds another run (planted, or copied
    // over it): its name is no claim on A; the file that holds A is shown.
    let mut planted = manifest("planted", "m", "llama.cpp", "2026-03-03T00:00:00Z");
    planted.run_id = "planted-run".into();
    write(&dir, &format!("{a_id}.jsonl"), planted, vec![footprint(99.0)], true);
    let shown = p.run(&["show", &format!("{a_id}#footprint::idle::memory"), "--measurements", &measurements]);
    assert!(shown.status.success(), "{}", text(&shown));
    assert!(text(&shown).contains("resident-gib = 2 "), "the run's own record: {}", text(&shown));
    let shown = p.run(&["show", "planted-run#footprint::idle::memory", "--measurements", &measurements]);
    assert!(text(&shown).contains("resident-gib = 99 "), "found by the id it holds: {}", text(&shown));
    // Named for a run no file holds: refused, naming the file and the run
    // it holds.
    let mut stray = manifest("stray", "m", "llama.cpp", "2026-03-04T00:00:00Z");
    stray.run_id = "stray-run".into();
    write(&dir, "ghost.jsonl", stray, vec![footprint(1.0)], true);
    let ghost = p.run(&["show", "ghost#footprint::idle::memory", "--measurements", &measurements]);
    assert_eq!(ghost.status.code(), Some(3), "{}", text(&ghost));
    assert!(text(&ghost).contains("ghost.jsonl holds run \"stray-run\", not ghost"), "{}", text(&ghost));
    let diff = p.run(&["diff", &a_id, &b_id, "--measurements", &measurements]);
    assert!(diff.status.success(), "{}", text(&diff));
    let said = text(&diff);
    assert!(said.contains(&format!("diff A: {a_id} (")) && said.contains(&format!("B: {b_id} (")), "{said}");
}

#[test]
fn a_board_index_folder_others_may_write_or_holding_another_user_s_file_is_left_alone_and_every_file_read() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, target) in [("1.jsonl", "alpha"), ("2.jsonl", "beta")] {
        write(&dir, file, manifest(target, "m", "llama.cpp", "2026-03-01T00:00:00Z"), vec![footprint(2.0)], true);
    }
    // A home of this test's own: its index folder is planted, not the
    // user's.
    let home = tempfile::tempdir().unwrap();
    let index_dir = home.path().join(".cache/sparktest/board-index");
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::set_permissions(&index_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let measurements = dir.display().to_string();
    let board = |out: &str| {
        let o = p
            .command(&["board", "--measurements", &measurements, "--out", out])
            .env("HOME", home.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        (text(&o), standings(&p.path().join(out)))
    };
    let (said, open) = board("a");
    assert!(said.contains("the board index is not kept ("), "{said}");
    assert!(said.contains("may be written by other users (mode 0777)"), "{said}");
    assert_eq!(std::fs::metadata(&index_dir).unwrap().mode() & 0o777, 0o777, "left as it was");
    assert_eq!(std::fs::read_dir(&index_dir).unwrap().count(), 0, "nothing written there");
    // This user's own folder: the index is kept.
    std::fs::set_permissions(&index_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (said, kept) = board("b");
    assert!(!said.contains("is not kept"), "{said}");
    assert_eq!(kept, open);
    let index = std::fs::read_dir(&index_dir).unwrap().next().unwrap().unwrap().path();
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the planted file: giving it to another user needs root (CI runs as root)");
        return;
    }
    // The same index, now another user's (planted while the folder was
    // open): not read, the folder refused, every file read.
    std::os::unix::fs::chown(&index, Some(65534), Some(65534)).unwrap();
    let (said, planted) = board("c");
    assert!(said.contains("belongs to user 65534"), "{said}");
    assert!(said.contains(&index.display().to_string()), "the file is named: {said}");
    assert!(said.contains("board index: 0 files as indexed, 2 read"), "{said}");
    assert_eq!(planted, open);
    assert_eq!(std::fs::metadata(&index).unwrap().uid(), 65534, "left as it was");
}

/// All the files under `dir`, their text.
fn texts_under(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.push_str(&texts_under(&path));
        } else {
            out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

#[test]
fn a_linked_measurement_file_or_transcript_is_named_and_never_read_or_published() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(dir.join("transcripts")).unwrap();
    let sha = |c: char| std::iter::repeat_n(c, 64).collect::<String>();
    let with_transcript = |sha: String| {
        let mut c = footprint(2.0);
        c.transcript_sha256 = sha;
        c
    };
    write(
        &dir,
        "1.jsonl",
        manifest("alpha", "m", "llama.cpp", "2026-03-01T00:00:00Z"),
        vec![with_transcript(sha('a'))],
        true,
    );
    std::fs::write(dir.join(format!("transcripts/{}.json", sha('a'))), r#"{"calls":[]}"#).unwrap();
    // Outside the folder: another run, and a transcript-shaped secret.
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "other.jsonl",
        manifest("secret-target", "secret-model", "llama.cpp", "2026-03-01T00:00:00Z"),
        vec![with_transcript(sha('b'))],
        true,
    );
    std::fs::write(outside.path().join("token.json"), r#"{"token":"TOPSECRET-b5e1"}"#).unwrap();
    // Planted in the folder: a measurement file and a transcript that are
    // links to them, and a transcript named by a record that links out.
    std::os::unix::fs::symlink(outside.path().join("other.jsonl"), dir.join("2.jsonl")).unwrap();
    write(
        &dir,
        "3.jsonl",
        manifest("beta", "m", "llama.cpp", "2026-03-01T00:00:00Z"),
        vec![with_transcript(sha('c'))],
        true,
    );
    let linked = dir.join(format!("transcripts/{}.json", sha('c')));
    std::os::unix::fs::symlink(outside.path().join("token.json"), &linked).unwrap();

    let measurements = dir.display().to_string();
    let o = p.run(&["board", "--measurements", &measurements, "--out", "b"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("2.jsonl: line 1: cannot be read: a link: not followed"), "the link is named: {said}");
    assert!(said.contains(&linked.display().to_string()), "the linked transcript is named: {said}");
    assert!(!said.contains("secret-target") && !said.contains("secret-model"), "nothing of it printed: {said}");
    let out = p.path().join("b");
    assert_eq!(columns(&standings(&out)), ["alpha", "beta"]);
    let published = texts_under(&out);
    assert!(!published.contains("secret-target") && !published.contains("secret-model"), "not on the board");
    assert!(!published.contains("TOPSECRET"), "the linked transcript is not copied");
    assert!(out.join(format!("transcripts/{}.json", sha('a'))).is_file(), "a regular transcript is copied");
    assert!(!out.join(format!("transcripts/{}.json", sha('c'))).exists());
}

#[test]
fn a_run_dated_after_now_is_named_and_never_makes_a_night_the_latest() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "today.jsonl", manifest("alpha", "m", "llama.cpp", "2026-03-01T00:00:00Z"), vec![footprint(2.0)], true);
    write(&dir, "ahead.jsonl", manifest("beta", "m", "llama.cpp", "2099-01-01T00:00:00Z"), vec![footprint(1.0)], true);
    let measurements = dir.display().to_string();
    let o = p.run(&["board", "--measurements", &measurements, "--nights", "1", "--out", "b"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("ahead.jsonl: run 2099-01-01T00:00:00Z-beta says it started at 2099-01-01T00:00:00Z, after now"),
        "{said}"
    );
    assert_eq!(columns(&standings(&p.path().join("b"))), ["alpha"], "the latest night that has come");
}
