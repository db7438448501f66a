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
}
