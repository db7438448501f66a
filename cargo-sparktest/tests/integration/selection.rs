//! What a board covers (issue 48): `board --campaign`, `--since` and
//! `--until` select what they say, bring a selected run's resume along,
//! say the selection on the page, and refuse a time they cannot read or a
//! selection of nothing.

use std::path::Path;

use serde_json::Value;
use sparktest_record::{CampaignRef, Outcome};

use crate::board::{case, manifest, standings, write};
use crate::support::*;

fn run(dir: &Path, file: &str, target: &str, started: &str, campaign: Option<&str>) -> String {
    let mut m = manifest(target, "m", "llama.cpp", started);
    m.campaign = campaign.map(|id| CampaignRef {
        id: id.into(),
        configuration: target.into(),
        configurations: vec![target.into()],
        partition: None,
    });
    let id = m.run_id.clone();
    write(dir, file, m, vec![case("footprint", "idle::memory", Outcome::Pass, &[("resident-gib", 2.0)], None)], true);
    id
}

fn columns(s: &Value) -> Vec<String> {
    s["board"]["columns"].as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_board_covers_the_campaign_or_window_it_is_asked_for_and_says_so() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    run(&dir, "1-alpha.jsonl", "alpha", "2026-03-01T23:00:00Z", Some("nightly-0301"));
    run(&dir, "2-beta.jsonl", "beta", "2026-03-02T01:00:00Z", Some("nightly-0301"));
    run(&dir, "3-gamma.jsonl", "gamma", "2026-03-02T23:00:00Z", Some("nightly-0302"));
    // gamma's run, cut off and resumed the next day: brought along by it.
    let delta = run(&dir, "4-delta.jsonl", "delta", "2026-03-04T12:00:00Z", None);
    let mut resume = manifest("delta", "m", "llama.cpp", "2026-03-05T01:00:00Z");
    resume.resumes = Some(delta);
    write(
        &dir,
        "5-delta-resume.jsonl",
        resume,
        vec![case("context", "kv::pool", Outcome::Pass, &[("kv-pool-tokens", 4096.0)], None)],
        true,
    );
    let measurements = dir.display().to_string();
    let board = |out: &str, flags: &[&str]| {
        let mut args = vec!["board", "--measurements", &measurements, "--out", out];
        args.extend_from_slice(flags);
        p.run(&args)
    };

    let all = board("all", &[]);
    assert!(all.status.success(), "{}", text(&all));
    assert_eq!(columns(&standings(&p.path().join("all"))), ["alpha", "beta", "delta", "gamma"]);
    assert!(!std::fs::read_to_string(p.path().join("all/board.md")).unwrap().contains("This board covers"));

    let night = board("night", &["--campaign", "nightly-0301"]);
    assert!(night.status.success(), "{}", text(&night));
    assert_eq!(columns(&standings(&p.path().join("night"))), ["alpha", "beta"]);
    assert!(
        text(&night).contains("the board covers campaign nightly-0301: 2 files selected, 3 left out"),
        "{}",
        text(&night)
    );
    let said = "This board covers campaign nightly-0301: 2 measurement files; 3 more in the folder are left out";
    assert!(std::fs::read_to_string(p.path().join("night/board.md")).unwrap().contains(said));
    assert!(std::fs::read_to_string(p.path().join("night/board.html")).unwrap().contains(said));

    // A date runs to the end of its day; a time is to the second.
    let window = board("window", &["--since", "2026-03-02", "--until", "2026-03-02"]);
    assert!(window.status.success(), "{}", text(&window));
    assert_eq!(columns(&standings(&p.path().join("window"))), ["beta", "gamma"]);
    let to_second = board("second", &["--until", "2026-03-02T01:00:00Z"]);
    assert_eq!(columns(&standings(&p.path().join("second"))), ["alpha", "beta"], "{}", text(&to_second));
    // delta's resume started on the 5th: it comes with delta's run, and
    // the run is read whole (its context case too).
    let fourth = board("fourth", &["--since", "2026-03-04", "--until", "2026-03-04"]);
    assert!(fourth.status.success(), "{}", text(&fourth));
    let s = standings(&p.path().join("fourth"));
    assert_eq!(columns(&s), ["delta"]);
    assert_eq!(crate::board::cell(&s, "Context window", "delta · m")["kind"], "measured");

    // The latest nights: a campaign is one night, a run of no campaign is
    // of its start date. The latest is the 5th's (delta's resume, which
    // brings delta); then the 4th's (delta), then campaign nightly-0302.
    let last = board("last", &["--nights", "1"]);
    assert!(last.status.success(), "{}", text(&last));
    assert_eq!(columns(&standings(&p.path().join("last"))), ["delta"]);
    assert!(text(&last).contains("the board covers the latest night: 2 files selected, 3 left out"), "{}", text(&last));
    let three = board("three", &["--nights", "3"]);
    assert_eq!(columns(&standings(&p.path().join("three"))), ["delta", "gamma"], "{}", text(&three));
    let zero = board("zero", &["--nights", "0"]);
    assert_eq!(zero.status.code(), Some(3), "{}", text(&zero));

    let none = board("none", &["--since", "2026-04-01"]);
    assert_eq!(none.status.code(), Some(3), "{}", text(&none));
    assert!(
        text(&none).contains("is of the selection (since 2026-04-01): 5 readable files, none selected"),
        "{}",
        text(&none)
    );
    assert!(!p.path().join("none").exists(), "nothing written");
    let bad = board("bad", &["--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(3), "{}", text(&bad));
    assert!(text(&bad).contains("--since \"yesterday\": give a UTC date"), "{}", text(&bad));

    // A selection looks at every manifest first and reads whole only what
    // it picks; a file with no readable manifest is still said, and
    // counts as neither selected nor left out.
    std::fs::write(dir.join("6-junk.jsonl"), "not a manifest\n").unwrap();
    let night = board("night-junk", &["--campaign", "nightly-0301"]);
    assert!(night.status.success(), "{}", text(&night));
    assert!(text(&night).contains("6-junk.jsonl: line 1: "), "{}", text(&night));
    assert!(text(&night).contains("2 files selected, 3 left out"), "{}", text(&night));
    assert_eq!(columns(&standings(&p.path().join("night-junk"))), ["alpha", "beta"]);
}

/// A folder whose records the reporter cannot hold is refused, saying what
/// it was handed and what to do, with nothing written; a selection of it
/// builds.
#[test]
fn a_folder_past_the_reporter_s_memory_is_refused_saying_what_to_do() {
    let p = Project::new("");
    // A small limit for the reporter: one run's board fits in it, sixty
    // runs' padded records do not.
    let config = std::fs::read_to_string(p.path().join("sparktest.toml")).unwrap();
    let config = config.replace("memory-per-instance-mib = 64", "memory-per-instance-mib = 16");
    std::fs::write(p.path().join("sparktest.toml"), config).unwrap();
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let padding = "x".repeat(400_000);
    for i in 0..60 {
        let m = manifest(&format!("t{i:02}"), "m", "llama.cpp", &format!("2026-03-01T00:{i:02}:00Z"));
        let c = case("footprint", "idle::memory", Outcome::Fail, &[("resident-gib", 2.0)], Some(&padding));
        write(&dir, &format!("{i:02}.jsonl"), m, vec![c], true);
    }
    let measurements = dir.display().to_string();
    // More bytes than the reporter's whole memory: refused before any file
    // is read whole.
    let all = p.run(&["board", "--measurements", &measurements, "--out", "all"]);
    assert_eq!(all.status.code(), Some(5), "{}", text(&all));
    let said = text(&all);
    assert!(said.contains("the 60 runs to read hold 24."), "{said}");
    assert!(said.contains("more than the reporter's memory limit of 16 MiB can take; no file was read whole and nothing was written. Build the board of fewer runs (`--nights N`"), "{said}");
    assert!(!p.path().join("all").exists(), "nothing written");
    // Fewer bytes than that, but more than the reporter can parse: it runs
    // out, and that is said the same way.
    let most = p.run(&["board", "--measurements", &measurements, "--out", "most", "--since", "2026-03-01T00:25:00Z"]);
    assert_eq!(most.status.code(), Some(5), "{}", text(&most));
    let said = text(&most);
    assert!(said.contains("exceeded its memory limit of 16 MiB"), "{said}");
    assert!(said.contains("it was handed 35 measurement files (14."), "{said}");
    assert!(said.contains("Nothing was written. Build the board of fewer runs (`--nights N`"), "{said}");
    assert!(!p.path().join("most").exists(), "nothing written");
    let last = p.run(&["board", "--measurements", &measurements, "--out", "last", "--since", "2026-03-01T00:59:00Z"]);
    assert!(last.status.success(), "{}", text(&last));
    assert_eq!(columns(&standings(&p.path().join("last"))), ["t59"]);
}

/// The run log is grouped by night (a campaign, or the UTC date of a run
/// of no campaign), the latest night first and open, older nights folded;
/// past 200 runs, board.md lists only the latest night's runs.
#[test]
fn the_run_log_is_folded_by_night_the_latest_first() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..100 {
        run(&dir, &format!("a{i:03}.jsonl"), "alpha", &format!("2026-03-01T01:{:02}:{:02}Z", i / 60, i % 60), None);
        run(&dir, &format!("b{i:03}.jsonl"), "beta", &format!("2026-03-02T01:{:02}:{:02}Z", i / 60, i % 60), None);
    }
    run(&dir, "c.jsonl", "gamma", "2026-03-02T23:00:00Z", Some("nightly-0302"));
    let measurements = dir.display().to_string();
    let out = p.run(&["board", "--measurements", &measurements, "--out", "b"]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(p.path().join("b/board.html")).unwrap();
    let nights: Vec<&str> = html.match_indices("<details class=\"night\"").map(|(at, _)| &html[at..at + 80]).collect();
    assert_eq!(nights.len(), 3, "{nights:?}");
    assert!(nights[0].contains(" open><summary><b>campaign nightly-0302</b>: 1 run,"), "{}", nights[0]);
    assert!(nights[1].starts_with("<details class=\"night\"><summary><b>2026-03-02</b>: 100 runs,"), "{}", nights[1]);
    assert!(nights[2].contains("<b>2026-03-01</b>"), "{}", nights[2]);
    // Folded, not dropped: every run of the night is still in the page.
    let first = &html[html.find("<b>2026-03-01</b>").unwrap()..];
    let first = &first[..first.find("</details>").unwrap()];
    assert_eq!(first.matches("<tr><td data-sort=\"2026\">2026-03-01T01:").count(), 100, "{first}");
    let md = std::fs::read_to_string(p.path().join("b/board.md")).unwrap();
    assert!(md.contains("### campaign nightly-0302: 1 run, 0 with a failed case, 0 with a lost case, 0 unfinished"));
    assert!(md.contains("### 2026-03-02: 100 runs, 0 with a failed case, 0 with a lost case, 0 unfinished\n\nFolded: its runs are listed in `board.html`."), "{md}");
    assert!(!md.contains("| 2026-03-01T01:"), "201 runs: the older nights are folded in board.md");
    // A short log is written whole.
    let night = p.run(&["board", "--measurements", &measurements, "--out", "n", "--nights", "2"]);
    assert!(night.status.success(), "{}", text(&night));
    let md = std::fs::read_to_string(p.path().join("n/board.md")).unwrap();
    let listed: Vec<&str> = md.lines().filter(|l| l.contains("| 2026-03-02T01:")).collect();
    assert_eq!(listed.len(), 100, "101 runs are listed whole: {:?}", &listed[..3.min(listed.len())]);
}

/// A shared folder may hold anything under a `.jsonl` name: a named pipe
/// (whose read would wait for a writer forever), a folder, a link to a
/// device that never ends (a link is never followed). Each is left out and said as damaged; the board
/// is built from the rest, with or without a selection.
#[test]
fn what_is_no_regular_file_is_left_out_and_said_never_waited_on() {
    let p = Project::new("");
    let dir = p.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    run(&dir, "1-alpha.jsonl", "alpha", "2026-03-01T23:00:00Z", None);
    assert!(std::process::Command::new("mkfifo").arg(dir.join("2-pipe.jsonl")).status().unwrap().success());
    std::fs::create_dir(dir.join("3-folder.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("4-zero.jsonl")).unwrap();
    let measurements = dir.display().to_string();
    for (out, flags) in [("all", &[][..]), ("since", &["--since", "2026-03-01"][..])] {
        let mut args = vec!["board", "--measurements", &measurements, "--out", out];
        args.extend_from_slice(flags);
        let board = p.run(&args);
        let said = text(&board);
        assert!(board.status.success(), "{said}");
        for name in ["2-pipe.jsonl", "3-folder.jsonl"] {
            assert!(said.contains(&format!("{name}: line 1: cannot be read: not a regular file")), "{name}: {said}");
        }
        // A link is not followed, whatever it points to.
        assert!(said.contains("4-zero.jsonl: line 1: cannot be read: a link: not followed"), "{said}");
        assert_eq!(columns(&standings(&p.path().join(out))), ["alpha"]);
        let md = std::fs::read_to_string(p.path().join(out).join("board.md")).unwrap();
        assert!(md.contains("| 2-pipe.jsonl | 1 | cannot be read: not a regular file"), "{md}");
    }
}
