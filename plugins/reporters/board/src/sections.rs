//! The board's other sections, as plain tables: the efficiency readout,
//! tokens per second by tested combination, every run (failures kept),
//! pinned configurations, hardware snapshots, methodology, and the data the
//! plots draw.

use std::collections::BTreeMap;

use sparktest_record::{HostInfo, Outcome};

use sparktest_sdk::contract::{a_bench, concurrency, facts, spec_decode, speed, workload};

use crate::figure::thousands;
use crate::run::{CaseRecord, Run, base_key, config_line, fact, latest_per_column, metric, note};

/// A table: headings and rows of text cells.
pub struct Table {
    pub headings: Vec<&'static str>,
    /// Per column: sort numerically (true) or as text.
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

/// Correct / given, mean seconds per task, output tokens per correct answer,
/// tasks lost: from each column's latest A-Bench run's summary.
pub fn efficiency(runs: &[Run]) -> Table {
    let latest = latest_per_column(runs, |r| {
        r.summary.as_ref().is_some_and(|s| s.instruments.iter().any(|i| i.name == a_bench::INSTRUMENT))
    });
    let rows = latest
        .iter()
        .filter_map(|(key, r)| {
            let i = r.summary.as_ref()?.instruments.iter().find(|i| i.name == a_bench::INSTRUMENT)?;
            Some(vec![
                key.clone(),
                format!("{}/{}", i.correct, i.given),
                format!("{:.1}", i.mean_seconds),
                i.output_tokens_per_correct.map_or("n/a (nothing correct)".into(), |n| format!("{n:.0}")),
                i.lost.to_string(),
                r.manifest.run_id.clone(),
            ])
        })
        .collect();
    Table {
        headings: vec![
            "Model",
            "Correct / given",
            "Mean seconds per task",
            "Output tokens per correct answer",
            "Tasks lost",
            "Run",
        ],
        numeric: vec![false, true, true, true, true, false],
        rows,
    }
}

/// The board's columns the efficiency readout leaves out, each with why:
/// no A-Bench run at all, or A-Bench runs without the summary the readout
/// is read from (cut off before the end).
pub fn efficiency_left_out(board: &crate::model::Board, runs: &[Run]) -> Vec<(String, &'static str)> {
    let covered = latest_per_column(runs, |r| {
        r.summary.as_ref().is_some_and(|s| s.instruments.iter().any(|i| i.name == a_bench::INSTRUMENT))
    });
    board
        .columns
        .iter()
        .filter(|c| !covered.contains_key(&c.key))
        .map(|c| {
            let bench: Vec<&Run> = runs
                .iter()
                .filter(|r| r.column == c.key && r.cases.iter().any(|k| k.instrument == a_bench::INSTRUMENT))
                .collect();
            let why = if bench.is_empty() {
                "no A-Bench run"
            } else if bench.iter().any(|r| r.summary.is_none()) {
                "its A-Bench run was cut off before its summary"
            } else {
                "its A-Bench records carry no efficiency summary (an older record format)"
            };
            (c.key.clone(), why)
        })
        .collect()
}

fn machine(h: &HostInfo, launched: bool, base_url: &str) -> String {
    if launched {
        format!(
            "{} ({}, {} cores)",
            h.hostname.as_deref().unwrap_or("?"),
            h.cpu_model.as_deref().unwrap_or("?"),
            h.cores
        )
    } else {
        format!("remote: {base_url}")
    }
}

/// One row per measured workload: decode (single stream) and aggregate
/// (many streams) in separate columns, never mixed.
pub fn tokens_per_second(runs: &[Run]) -> Table {
    let mut rows = Vec::new();
    for r in runs {
        let m = &r.manifest;
        let target_of = |c: &CaseRecord| match &c.arm {
            Some(arm) => m.arms.iter().find(|a| &a.name == arm).map_or(&m.target, |a| &a.target),
            None => &m.target,
        };
        for c in &r.cases {
            let t = target_of(c);
            let kv = fact(t, facts::KV_POOL_TOKENS).unwrap_or_default().to_string();
            let (workload, decode, aggregate, checks) = match (c.instrument.as_str(), c.outcome) {
                (speed::INSTRUMENT, Outcome::Pass) if workload::DECODE.holds(&c.case) => (
                    format!("single stream, {}", workload::DECODE.item(&c.case).unwrap_or(&c.case)),
                    metric(c, workload::DECODE_TOK_S),
                    None,
                    format!("{} repetitions", c.calls.len().saturating_sub(1)),
                ),
                (speed::INSTRUMENT, outcome) if speed::AGENT.holds(&c.case) => (
                    format!("agent workload, {}", speed::AGENT.item(&c.case).unwrap_or(&c.case)),
                    metric(c, workload::DECODE_TOK_S),
                    None,
                    if outcome == Outcome::Pass {
                        format!("valid {}", note(c, workload::VALID).unwrap_or(""))
                    } else {
                        format!("{outcome:?}: {}", c.reason.as_deref().unwrap_or(""))
                    },
                ),
                (spec_decode::INSTRUMENT, Outcome::Pass) if workload::DECODE.holds(&c.case) => (
                    format!(
                        "single stream, {} ({} arm)",
                        workload::DECODE.item(&c.case).unwrap_or(&c.case),
                        c.arm.as_deref().unwrap_or("?")
                    ),
                    metric(c, workload::DECODE_TOK_S),
                    None,
                    metric(c, spec_decode::DRAFT_ACCEPTANCE).map_or_else(
                        || note(c, spec_decode::DRAFT_ACCEPTANCE_NOTE).unwrap_or("no draft counters").to_string(),
                        |a| format!("{:.0}% draft acceptance", a * 100.0),
                    ),
                ),
                (concurrency::INSTRUMENT, Outcome::Pass) => (
                    concurrency::level_of(&c.case)
                        .map_or_else(|| c.case.clone(), |n| format!("{n} concurrent requests")),
                    metric(c, concurrency::PER_REQUEST_TOK_S),
                    metric(c, concurrency::AGGREGATE_TOK_S),
                    note(c, concurrency::QUEUED).map_or_else(
                        || {
                            format!(
                                "server ran {}",
                                metric(c, concurrency::SERVER_RUNNING_MAX).map_or("?".into(), |n| format!("{n:.0}"))
                            )
                        },
                        str::to_string,
                    ),
                ),
                _ => continue,
            };
            let input = metric(c, workload::INPUT_TOK_S);
            // p50 / p99 of the case's calls, as vllm bench serve and GuideLLM report them.
            let pct = |p: Option<&sparktest_record::Percentiles>| {
                p.map_or("—".to_string(), |p| format!("{:.1} / {:.1}", p.p50, p.p99))
            };
            let lat = c.latency.as_ref();
            rows.push(vec![
                machine(&r.manifest.client_host, t.launch_command.is_some(), &t.base_url),
                format!("{} / {} {}", t.model_id, t.engine, t.build.as_deref().unwrap_or("")),
                m.route.clone(),
                workload,
                decode.map_or("—".into(), |v| format!("{v:.2}")),
                aggregate.map_or("—".into(), |v| format!("{v:.2}")),
                input.map_or("—".into(), |v| format!("{v:.0}")),
                kv.parse::<f64>().map_or_else(|_| "—".to_string(), thousands),
                pct(lat.and_then(|l| l.ttft_ms.as_ref())),
                pct(lat.and_then(|l| l.itl_ms.as_ref())),
                pct(lat.and_then(|l| l.e2e_ms.as_ref())),
                checks,
                r.record_id(c).to_string(),
            ]);
        }
    }
    Table {
        headings: vec![
            "Machine",
            "Model / runtime",
            "Route",
            "Workload",
            "Decode tok/s (per stream)",
            "Aggregate tok/s (all streams)",
            "Input tok/s",
            "Context tokens (KV pool)",
            "TTFT p50 / p99 ms",
            "Inter-token p50 / p99 ms",
            "Request p50 / p99 ms",
            "Checks",
            "Record",
        ],
        numeric: vec![false, false, false, false, true, true, true, true, true, true, true, false, false],
        rows,
    }
}

/// One night of the run log: a campaign, or the UTC date runs of no
/// campaign started on.
pub struct Night {
    /// `campaign nightly-1206` or `2026-12-06`.
    pub label: String,
    /// Its runs and how many had a failed or lost case, or did not finish.
    pub words: String,
    /// Its runs, oldest first; none for a night handed as counts.
    pub table: Table,
    /// For a night handed as counts: the runs that failed as runs or were
    /// resumed, `run id (file): what`.
    pub notable: Vec<String>,
}

/// Every run, failures included, by night, the latest night first: each
/// night's runs oldest first, each file its own row (the parts of a
/// partition and the resumes of a run too, each saying what it was read
/// with); a later pass never replaces an earlier failure. A night is
/// placed in time by its first run.
///
/// Nights the host handed as counts (`folded`) are one line each, and a
/// run the reporter holds of such a night (one a cell reads) is counted
/// there, not listed.
pub fn run_log(board: &crate::model::Board, runs: &crate::run::Runs, folded: &[crate::FoldedNight]) -> Vec<Night> {
    let fed = crate::boxes::rows_by_run(&board.rows, runs.log());
    let mut nights: Vec<(String, Vec<&sparktest_record::reader::Logged>)> = Vec::new();
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    let counted: std::collections::BTreeSet<&str> = folded.iter().map(|n| n.label.as_str()).collect();
    for r in runs.log().iter().filter(|r| !counted.contains(r.night().as_str())) {
        let key = r.night();
        match at.get(&key) {
            Some(i) => nights[*i].1.push(r),
            None => {
                at.insert(key.clone(), nights.len());
                nights.push((key, vec![r]));
            }
        }
    }
    // The log is in start order: a night's first run places it.
    nights.reverse();
    nights
        .into_iter()
        .map(|(label, log)| {
            let with = |f: &dyn Fn(&sparktest_record::reader::Logged) -> bool| log.iter().filter(|r| f(r)).count();
            let failed = with(&|r| r.count(Outcome::Fail) > 0);
            let lost = with(&|r| r.count(Outcome::Lost) > 0);
            let unfinished = with(&|r| r.summary.as_ref().is_none_or(|s| s.interrupted.is_some()));
            let words = night_words(log.len(), failed, lost, unfinished);
            Night { label, words, table: run_rows(&fed, &log), notable: Vec::new() }
        })
        .chain(folded.iter().map(|n| Night {
            label: n.label.clone(),
            words: night_words(n.runs, n.failed_case, n.lost_case, n.unfinished),
            table: run_rows(&fed, &[]),
            notable: n.notable.clone(),
        }))
        .collect()
}

/// A night's line: its runs, and how many had a failed or lost case or
/// did not finish.
fn night_words(runs: usize, failed: usize, lost: usize, unfinished: usize) -> String {
    format!(
        "{runs} run{}, {failed} with a failed case, {lost} with a lost case, {unfinished} unfinished",
        if runs == 1 { "" } else { "s" }
    )
}

/// The run log's rows of some runs.
fn run_rows(fed: &BTreeMap<String, Vec<String>>, log: &[&sparktest_record::reader::Logged]) -> Table {
    let rows = log
        .iter()
        .map(|r| {
            let mut outcome = format!(
                "{} passed, {} failed, {} lost, {} n/a",
                r.count(Outcome::Pass),
                r.count(Outcome::Fail),
                r.count(Outcome::Lost),
                r.count(Outcome::NotApplicable)
            );
            let interrupted = r.count(Outcome::Interrupted);
            if interrupted > 0 {
                outcome.push_str(&format!(", {interrupted} interrupted"));
            }
            if let Some(signal) = r.summary.as_ref().and_then(|s| s.interrupted.as_ref()) {
                outcome.push_str(&format!(" - INTERRUPTED by {signal}: unfinished, `--resume` runs the rest"));
            } else if let Some(why) = r.summary.as_ref().and_then(|s| s.stopped.as_ref()) {
                outcome.push_str(&format!(" - STOPPED EARLY: {why}"));
            }
            match r.summary.as_ref().map(|s| &s.gate) {
                None => outcome.push_str(" - INCOMPLETE: no summary line (the run crashed or was killed)"),
                Some(Some(g)) => outcome.push_str(if g.passed { " - gate PASSED" } else { " - gate FAILED" }),
                Some(None) => {}
            }
            vec![
                r.started_at.clone(),
                r.suite.clone(),
                r.target.clone(),
                outcome,
                r.failures.join("; "),
                match fed.get(&r.run_id) {
                    Some(rows) => format!("{}; rows: {}", crate::boxes::words(r), rows.join(", ")),
                    None => format!("{}; no row on the board", crate::boxes::words(r)),
                },
                std::iter::once(r.run_id.clone())
                    .chain(r.job.iter().map(|j| format!("in {j}")))
                    .chain(r.read_as.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    Table {
        headings: vec![
            "Started",
            "Suite",
            "Model / route",
            "Outcome",
            "Evidence / boundary (first failures)",
            "Box (the rows it gave)",
            "Run",
        ],
        numeric: vec![false; 7],
        rows,
    }
}

/// The campaigns the files belong to (`cargo sparktest campaign`): one row
/// per configuration, its launch (seconds to healthy, or why it failed),
/// the memory its server gave back, the suites not run and why, from the
/// configuration's own record (the host's `campaign` instrument); and, per
/// campaign, the configurations no file holds (no box ran them). None when
/// no file is a campaign's.
///
/// A campaign of a night handed as counts (`folded`) is left out: the
/// reporter holds only the runs of it that cells read, not the campaign.
pub fn campaigns(runs: &crate::run::Runs, folded: &[crate::FoldedNight]) -> Option<(Table, Vec<String>)> {
    use sparktest_sdk::contract::campaign as names;
    let mut rows = Vec::new();
    // Campaign id → its configurations, and those a file holds.
    let mut planned: BTreeMap<&str, (&[String], std::collections::BTreeSet<&str>)> = BTreeMap::new();
    let counted: std::collections::BTreeSet<&str> = folded.iter().map(|n| n.label.as_str()).collect();
    for r in runs.iter() {
        let Some(c) = &r.manifest.campaign else { continue };
        if counted.contains(format!("campaign {}", c.id).as_str()) {
            continue;
        }
        let entry = planned.entry(c.id.as_str()).or_insert((&c.configurations, Default::default()));
        entry.1.insert(c.configuration.as_str());
        if !r.is_campaign_record() {
            continue;
        }
        let case = |g: sparktest_sdk::contract::Group| r.cases.iter().find(|k| g.holds(&k.case));
        let launch = match case(names::LAUNCH) {
            Some(k) if k.outcome == Outcome::Pass => {
                metric(k, names::LAUNCH_SECS).map_or("launched".into(), |s| format!("healthy in {s:.1} s"))
            }
            Some(k) => format!("FAILED: {}", k.reason.as_deref().unwrap_or("")),
            None => String::new(),
        };
        // Which launch it was: a configuration launched again by a resume
        // has a row per launch, in the order they ran.
        let launch = match case(names::LAUNCH).and_then(|k| note(k, names::LAUNCH_KIND)) {
            Some(kind) => format!("{kind}: {launch}"),
            None => launch,
        };
        let died = r.cases.iter().find(|k| names::STOP.item(&k.case) == Some(names::SERVER_DIED));
        let stop = r.cases.iter().find(|k| names::STOP.item(&k.case) == Some(names::MEMORY_RELEASED));
        let memory = match stop {
            None if case(names::LAUNCH).is_none() => "not launched".into(),
            None if r.summary.is_none() => {
                "KILLED: no stop recorded (the campaign was killed in this configuration, or still runs)".into()
            }
            Some(k) => {
                let after =
                    metric(k, names::MEMORY_AVAILABLE_AFTER_GIB).map_or(String::new(), |g| format!("{g:.1} GiB"));
                let kept = metric(k, names::MEMORY_NOT_GIVEN_BACK_GIB).unwrap_or(0.0);
                let waited = metric(k, names::SETTLE_SECS).unwrap_or(0.0);
                if k.outcome == Outcome::Pass {
                    format!("given back in {waited:.1} s ({after} available)")
                } else {
                    format!("NOT given back: {kept:.2} GiB short after {waited:.0} s")
                }
            }
            None => "not launched".into(),
        };
        let memory = match died {
            Some(k) => format!(
                "SERVER DIED: {}; {memory}",
                k.reason.as_deref().and_then(|w| w.lines().next()).unwrap_or("it exited on its own")
            ),
            None => memory,
        };
        let not_run: Vec<String> = r
            .cases
            .iter()
            .filter_map(|k| {
                let suite = names::NOT_RUN.item(&k.case)?;
                Some(format!("{suite}: {}", k.reason.as_deref().unwrap_or("")))
            })
            .collect();
        let column = match case(names::LAUNCH) {
            Some(k) if k.outcome == Outcome::Pass => r.column.clone(),
            Some(_) => "none: it never came up".into(),
            // A record of what was left unrun (a Slurm task cancelled, one
            // that never started): no launch of its own.
            None => "none: no launch in this record".into(),
        };
        let interrupted = r.summary.as_ref().and_then(|s| s.interrupted.as_ref());
        let suites = match (not_run.is_empty(), interrupted) {
            (_, Some(signal)) if not_run.is_empty() => format!("interrupted by {signal}: the rest left for a resume"),
            (true, _) => "every suite ran".into(),
            (false, _) => not_run.join("; "),
        };
        rows.push(vec![
            c.id.clone(),
            c.configuration.clone(),
            column,
            launch,
            memory,
            suites,
            r.manifest.run_id.clone(),
        ]);
    }
    if planned.is_empty() {
        return None;
    }
    let missing = planned
        .iter()
        .filter_map(|(id, (all, seen))| {
            let absent: Vec<&str> = all.iter().map(String::as_str).filter(|c| !seen.contains(c)).collect();
            (!absent.is_empty()).then(|| {
                format!("campaign {id}: no file holds {} of its configurations: {}", absent.len(), absent.join(", "))
            })
        })
        .collect();
    Some((
        Table {
            headings: vec![
                "Campaign",
                "Configuration",
                "Column",
                "Launch",
                "Memory after the stop",
                "Suites not run",
                "Record",
            ],
            numeric: vec![false; 7],
            rows,
        },
        missing,
    ))
}

/// Each serving configuration once, as the manifests pinned it.
pub fn pinned_configs(runs: &[Run]) -> Table {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.is_campaign_record()) {
        let m = &r.manifest;
        for (arm, t) in std::iter::once((None, &m.target)).chain(m.arms.iter().map(|a| (Some(&a.name), &a.target))) {
            let line = config_line(t);
            // One row per column: a labelled run of the same serve is its own.
            seen.entry(format!("{}\u{0}{line}", base_key(t))).or_insert_with(|| {
                vec![
                    match arm {
                        Some(a) => format!("{} (arm {a})", t.name),
                        None => t.name.clone(),
                    },
                    match &t.description {
                        Some(d) => format!("{line} — {d}"),
                        None => line,
                    },
                    t.model_path.clone().unwrap_or_default(),
                    t.model_sha256.clone().unwrap_or_else(|| {
                        if t.launch_command.is_some() { "not read at launch" } else { "not read (remote server)" }
                            .into()
                    }),
                    t.launch_command.as_ref().map_or("not launched by the harness".into(), |c| c.join(" ")),
                    t.facts
                        .iter()
                        .filter(|(k, _)| !k.starts_with("pin."))
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]
            });
        }
    }
    Table {
        headings: vec!["Target", "Configuration", "Model file", "Model sha256", "Launch command", "Probed facts"],
        numeric: vec![false; 6],
        rows: seen.into_values().collect(),
    }
}

/// Each column's own machines, each as captured at the column's latest run
/// on it: the client, and the server's host where the harness launched it;
/// GPUs with their driver and memory. A column measured on two boxes shows
/// both.
pub fn hardware(runs: &[Run]) -> Table {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    // Every file of a merged run (its parts ran on other boxes, perhaps),
    // each with its own hosts and start.
    let files = runs
        .iter()
        .filter(|r| !r.is_campaign_record())
        .flat_map(|r| std::iter::once(&r.manifest).chain(&r.others).map(move |m| (r, m)));
    for (r, m) in files {
        let hosts =
            std::iter::once(("client", &m.client_host)).chain(m.target.host.as_ref().map(|h| ("server (launched)", h)));
        for (role, h) in hosts {
            // Runs come in start order: a later run's snapshot of the same
            // machine replaces an earlier one of the same column.
            let key = format!("{}\u{0}{role}{:?}{:?}{}", r.column, h.hostname, h.cpu_model, h.cores);
            seen.insert(key, {
                let gpus: Vec<String> = h
                    .accelerators
                    .iter()
                    .map(|a| {
                        let mem = match (a.memory_total_mib, a.memory_used_mib) {
                            (Some(t), Some(u)) => {
                                format!("{:.1} GiB, {:.1} GiB used", t as f64 / 1024.0, u as f64 / 1024.0)
                            }
                            (Some(t), None) => format!("{:.1} GiB", t as f64 / 1024.0),
                            _ => "shares the host memory (unified)".into(),
                        };
                        format!("{} (driver {}; {mem})", a.name, a.driver.as_deref().unwrap_or("?"))
                    })
                    .collect();
                vec![
                    r.column.clone(),
                    role.to_string(),
                    h.hostname.clone().unwrap_or_default(),
                    h.cpu_model.clone().unwrap_or_default(),
                    h.cores.to_string(),
                    if gpus.is_empty() { "none found (no nvidia-smi)".into() } else { gpus.join("; ") },
                    format!("{:.1} GiB", gib(h.memory_bytes)),
                    format!("{:.1} GiB at {}", gib(h.memory_available_bytes), m.started_at),
                    format!("{} {}", h.os.as_deref().unwrap_or(""), h.kernel.as_deref().unwrap_or("")),
                ]
            });
        }
    }
    Table {
        headings: vec![
            "Column",
            "Role",
            "Host",
            "CPU",
            "Cores",
            "Accelerators",
            "Memory",
            "Available (captured)",
            "OS / kernel",
        ],
        numeric: vec![false; 9],
        rows: seen.into_values().collect(),
    }
}

/// The damaged measurement files the host reported.
pub fn damage(list: &[crate::Damage]) -> Table {
    Table {
        headings: vec!["File", "Line", "What was wrong", "Used"],
        numeric: vec![false, true, false, false],
        rows: list
            .iter()
            .map(|d| {
                vec![
                    d.file.clone(),
                    d.line.to_string(),
                    d.message.clone(),
                    if d.kept {
                        "every record before that line".into()
                    } else {
                        "nothing: no readable manifest".into()
                    },
                ]
            })
            .collect(),
    }
}

/// The whole files the host read once: an identical copy of another file,
/// or another file of the same run.
pub fn read_once(list: &[crate::ReadOnce]) -> Table {
    Table {
        headings: vec!["File", "Run", "Read from", "Used"],
        numeric: vec![false; 4],
        rows: list
            .iter()
            .map(|r| {
                let used = if r.identical {
                    format!("read once: an identical copy of {} (the same bytes)", r.first)
                } else {
                    format!("not used: another file of the same run, not the same bytes as {}", r.first)
                };
                vec![r.file.clone(), r.run_id.clone(), r.first.clone(), used]
            })
            .collect(),
    }
}

/// Each instrument's own description, newest version first seen.
pub fn methodology(runs: &[Run]) -> Vec<(String, String, String)> {
    let mut seen: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    for r in runs {
        for i in &r.manifest.instruments {
            seen.insert(
                i.name.clone(),
                (format!("{} ({} {})", i.row, i.name, i.version), i.description.clone(), i.name.clone()),
            );
        }
    }
    // A row its suite declares with a methodology of its own says it too
    // (the latest declaration of its title).
    let mut declared: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    for d in runs.iter().flat_map(|r| &r.manifest.rows).filter(|d| sparktest_rows::check(d).is_ok()) {
        let title = format!("{} (row declared by {})", d.title, d.declared_by);
        declared.insert(d.title.clone(), (title, d.methodology.clone(), d.instrument.clone()));
    }
    seen.into_values().chain(declared.into_values().filter(|(_, m, _)| !m.is_empty())).collect()
}

/// Plot data: (label, value) bars of each column's prose decode speed.
pub fn decode_bars(board: &crate::model::Board) -> Vec<(String, f64)> {
    board
        .rows
        .iter()
        .find(|r| r.title == sparktest_sdk::contract::speed::ROW.title)
        .map(|row| {
            row.cells
                .iter()
                .filter_map(|(k, c)| match c {
                    crate::model::Cell::Measured { value, .. } => Some((k.clone(), *value)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One plotted line: a column's name and its (concurrency, per-request
/// tok/s, aggregate tok/s) points.
pub type Series = (String, Vec<(f64, f64, f64)>);

/// Plot data: per column, from its latest concurrency run.
pub fn concurrency_lines(runs: &[Run]) -> Vec<Series> {
    latest_per_column(runs, |r| r.cases.iter().any(|c| c.instrument == concurrency::INSTRUMENT))
        .into_iter()
        .map(|(k, r)| {
            let mut pts: Vec<(f64, f64, f64)> = r
                .cases_of(concurrency::INSTRUMENT)
                .filter(|c| c.outcome == Outcome::Pass)
                .filter_map(|c| {
                    Some((
                        metric(c, concurrency::CONCURRENCY)?,
                        metric(c, concurrency::PER_REQUEST_TOK_S)?,
                        metric(c, concurrency::AGGREGATE_TOK_S)?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (k, pts)
        })
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// One sustained-load line: a column, its (offered req/s, p99 TTFT ms,
/// goodput %) points at every rate the row's mix was offered (its sweep's
/// rates and its fixed-rate cases), and why it has fewer than two points
/// where it has.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadLine {
    /// The column's key.
    pub column: String,
    /// Its points, by offered rate.
    pub points: Vec<(f64, Option<f64>, Option<f64>)>,
    /// Why the line is a point or nothing, in words.
    pub short: Option<String>,
}

/// Plot data: per column with a sustained-load run, p99 TTFT and goodput
/// against the offered rate on the row's mix (the one-at-a-time and
/// all-at-once points have no offered rate; a client-bound load is not
/// the server's and is left out).
pub fn load_lines(board: &crate::model::Board, runs: &crate::run::Runs) -> Vec<LoadLine> {
    use sparktest_sdk::contract::sustained_load as names;
    board
        .columns
        .iter()
        .filter_map(|c| {
            let (_, mix, cases) = crate::rows::sustained_load::latest_mix(runs, &c.key)?;
            let all: Vec<crate::rows::sustained_load::Point> =
                cases.iter().flat_map(|case| crate::rows::sustained_load::points(case)).collect();
            let mut pts: Vec<(f64, Option<f64>, Option<f64>)> = all
                .iter()
                .filter(|p| !p.client_bound)
                .filter_map(|p| Some((p.offered?, p.ttft_p99_ms, p.goodput)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let short = (pts.len() < 2).then(|| {
                let bound = all.iter().filter(|p| p.client_bound && p.offered.is_some()).count();
                let stopped: Vec<&str> = cases
                    .iter()
                    .filter(|x| names::SWEEP.holds(&x.case))
                    .filter_map(|x| note(x, names::SATURATION))
                    .collect();
                let lost: Vec<String> = cases
                    .iter()
                    .filter(|x| !matches!(x.outcome, Outcome::Pass | Outcome::Fail))
                    .map(|x| format!("{} {}", x.case, x.reason.as_deref().unwrap_or("not measured")))
                    .collect();
                let mut why = vec![format!(
                    "{} offered rate{} on {mix}",
                    if pts.is_empty() { "no".to_string() } else { "one".to_string() },
                    if pts.is_empty() { "s" } else { "" }
                )];
                if bound > 0 {
                    why.push(format!("{bound} client-bound, not the server's"));
                }
                why.extend(stopped.iter().map(|s| format!("the sweep: {s}")));
                why.extend(lost);
                why.join("; ")
            });
            (!pts.is_empty() || short.is_some()).then(|| LoadLine { column: c.key.clone(), points: pts, short })
        })
        .collect()
}
