//! `cargo sparktest`: measure an LLM serving setup with a suite of instrument
//! plugins. Thin by design: parse, dispatch, map errors to exit codes. The
//! work is in `sparktest-harness`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sparktest_harness::{BoardArgs, CampaignArgs, DiffArgs, DiffFormat, RunArgs, ShowArgs, TargetChoice};
use sparktest_record::exit_code;

#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo", version, styles = clap::builder::Styles::plain())]
enum Cargo {
    /// Measure an LLM serving setup: run a suite's instruments as test cases.
    Sparktest(SparktestArgs),
}

/// Exit codes: 0 every case passed or was not applicable; 101 a case failed
/// or was lost; 2 bad command line; 3 invalid configuration or suite (or
/// suite data not matching their pins); 4 target not launched, not reachable,
/// serving another model or refusing the credentials; 5 an instrument could
/// not be built or loaded; 6 a measurement file could not be written.
#[derive(Args)]
// help_template: the flattened libtest arguments bring libtest-mimic's own
// ("USAGE: [OPTIONS] [FILTER]"), which would hide the about and the usage.
#[command(about, long_about = None, after_help = EXIT_CODES, subcommand_negates_reqs = true, args_conflicts_with_subcommands = true, disable_version_flag = true,
    help_template = "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}")]
struct SparktestArgs {
    #[command(subcommand)]
    command: Option<Command>,

    /// Suite to run: a name (the project's `suites/<name>/`, else a
    /// built-in suite), or a path to a suite folder or `suite.toml`.
    #[arg(long, value_name = "NAME", required_unless_present_any = ["list_suites", "version"])]
    suite: Option<String>,

    /// List every suite a name finds, built in or the project's, with where
    /// each comes from, and exit.
    #[arg(long, conflicts_with = "suite")]
    list_suites: bool,

    /// Print the version (with --verbose: the interface versions it loads,
    /// the measurement format it writes, its built-in suites and
    /// components with their digests) and exit.
    #[arg(short = 'V', long)]
    version: bool,

    /// With --version: say everything.
    #[arg(long, requires = "version")]
    verbose: bool,

    /// Target named in `sparktest.toml` (or built in, like `local`).
    #[arg(long, value_name = "NAME", default_value = "local", conflicts_with = "endpoint")]
    target: String,

    /// Base URL of a running OpenAI-compatible server, instead of a named
    /// target (needs --model).
    #[arg(long, value_name = "URL", requires = "model")]
    endpoint: Option<String>,

    /// Model id the server at --endpoint must serve.
    #[arg(long, value_name = "ID", requires = "endpoint")]
    model: Option<String>,

    /// The column this run's figures stand in on the board, e.g.
    /// `--label "NVFP4 · MTP-3"`; replaces the target's `label`. Runs with
    /// different labels are different columns.
    #[arg(long, value_name = "TEXT")]
    label: Option<String>,

    /// Folder for the measurement file (default: `measurements/`).
    #[arg(long, value_name = "DIR")]
    measurements: Option<PathBuf>,

    /// Point a paired instrument's arm at another target, e.g.
    /// `--arm draft=my-draft-target` (repeatable).
    #[arg(long, value_name = "ARM=TARGET", value_parser = parse_arm)]
    arm: Vec<(String, String)>,

    /// The judge: a target that grades replies no regex can judge
    /// (compliance); overrides `[run] judge`.
    #[arg(long, value_name = "NAME")]
    judge: Option<String>,

    /// Also write a JUnit XML report here (lost cases are `<error>`,
    /// not-applicable ones `<skipped>`).
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,

    /// Run one part of the suite, as cargo-nextest splits test runs across
    /// machines: `count:K/N` (every Nth case) or `hash:K/N` (by case id).
    #[arg(long, value_name = "SCHEME:K/N")]
    partition: Option<String>,

    /// What the parts of one partitioned run share, so the board merges
    /// them (default: CI's run id, else the suite, target and revision).
    #[arg(long, value_name = "ID", requires = "partition")]
    run_group: Option<String>,

    /// Run only the cases of an earlier run that were lost or never
    /// recorded, into a new file linked to it.
    #[arg(long, value_name = "RUN_ID")]
    resume: Option<String>,

    /// Run the selected cases N times on the same launched server, each
    /// repeat its own measurement file; the board shows every repeat's
    /// figure in one cell ("runs: 21, 20, 20").
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100), conflicts_with_all = ["resume", "partition"])]
    repeat: u32,

    #[command(flatten)]
    libtest: libtest_mimic::Arguments,
}

#[derive(Subcommand)]
enum Command {
    /// Turn every measurement file in a folder into the board: board.html
    /// (self-contained), board.md and standings.json.
    Board(BoardCmd),
    /// Print one case's record and transcript: `show RUN_ID#CASE_ID`.
    Show(ShowCmd),
    /// Compare two runs row by row: the change, and whether it is beyond
    /// run-to-run variation (paired by item where the items match).
    Diff(DiffCmd),
    /// Measure every configuration of a campaign file unattended: each
    /// launched once, the gate first, then every suite; resumable, split
    /// across boxes with --partition or submitted to Slurm with --slurm.
    Campaign(CampaignCmd),
    /// Write a new instrument crate (and its suite) that builds against the
    /// published SDK: `new instrument NAME`.
    New(NewCmd),
    /// Write a commented `sparktest.toml` for your own targets here.
    Init,
    /// Write a suite's sha256 pins (its components' and data files') from
    /// the files as they are.
    Pin(PinCmd),
}

#[derive(Args)]
struct NewCmd {
    #[command(subcommand)]
    what: NewWhat,
}

#[derive(Subcommand)]
enum NewWhat {
    /// An instrument: a crate depending on `sparktest-sdk` by version, its
    /// folder also its suite (the component it builds, pinned).
    Instrument {
        /// Its name: lowercase letters, digits and '-', no Rust keyword
        /// (the crate's, the instrument's and its cases' first segment).
        name: String,
        /// The folder to write (default: ./NAME).
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
    },
}

#[derive(Args)]
struct PinCmd {
    /// The suite: a folder or its `suite.toml`.
    suite: PathBuf,
}

#[derive(Args)]
#[command(after_help = "Exit codes:
  0    every case of every step passed or was not applicable (--plan: planned)
  101  a case failed or was lost, a gate failed, a launch failed, a
       server died, or a server did not give its memory back
  3    the campaign file is invalid (its file, line and key are named), the
       journal of --resume cannot be read, or the file changed since (--force)
  6    the journal or a measurement file could not be written
  130, 143, 129  interrupted by SIGINT, SIGTERM or SIGHUP: --resume ID goes on")]
#[command(subcommand_negates_reqs = true, args_conflicts_with_subcommands = true)]
struct CampaignCmd {
    #[command(subcommand)]
    action: Option<CampaignAction>,
    /// The campaign file (TOML), or the name of a [campaign.NAME] table in
    /// the project's sparktest.toml.
    #[arg(required = true)]
    file: Option<String>,
    /// Print the configurations × suites with case counts and estimates
    /// from earlier runs; launch nothing.
    #[arg(long)]
    plan: bool,
    /// Go on with the campaign of this id from its journal: finished steps
    /// are skipped, a half-done suite finishes through --resume.
    #[arg(long, value_name = "ID", conflicts_with = "id")]
    resume: Option<String>,
    /// With --resume: go on although the campaign file changed since.
    #[arg(long, requires = "resume")]
    force: bool,
    /// This box's share of the configurations: `hash:K/N` or `count:K/N`.
    #[arg(long, value_name = "SCHEME:K/N")]
    partition: Option<String>,
    /// The campaign's id (give every box of a partitioned campaign the
    /// same one); by default the campaign's name and the start time.
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Folder for the measurement files and the journal (default:
    /// `measurements/`).
    #[arg(long, value_name = "DIR")]
    measurements: Option<PathBuf>,
    /// Run one configuration only, by its index from 0 (a Slurm array
    /// task's `$SLURM_ARRAY_TASK_ID`, a Kubernetes Indexed Job's
    /// `$JOB_COMPLETION_INDEX`) or its name; its journal is taken up where
    /// it stands, so a requeued task resumes. Needs --id.
    #[arg(long, value_name = "N|NAME", conflicts_with = "partition", requires = "id")]
    configuration: Option<String>,
    /// Submit the campaign to Slurm: an sbatch array, one task per
    /// configuration ([campaign.slurm] gives its resources), and a job that
    /// builds the board when it ends. The scripts stay beside the journals.
    /// Needs --id.
    #[arg(long, requires = "id", conflicts_with_all = ["configuration", "partition", "resume", "plan"])]
    slurm: bool,
    /// With --slurm: write the scripts, submit nothing.
    #[arg(long, requires = "slurm")]
    dry_run: bool,
}

#[derive(Subcommand)]
enum CampaignAction {
    /// Where every configuration of a campaign stands: done, running (on
    /// which node), failed or killed (and why), pending; from its journals
    /// and, for a Slurm campaign, from Slurm; and what is left.
    Status {
        /// The campaign id.
        id: String,
        /// Folder of the measurements and journals (default: `measurements/`).
        #[arg(long, value_name = "DIR")]
        measurements: Option<PathBuf>,
        /// Record each configuration that did not finish and that no
        /// process runs, with why, so the board names it (the board job does).
        #[arg(long)]
        record: bool,
        /// The Slurm array job to ask about (default: the one --slurm submitted).
        #[arg(long, value_name = "ID")]
        array_job: Option<String>,
    },
}

#[derive(Args)]
#[command(after_help = "Exit codes:
  0    compared (with --fail-on regression: no row worse beyond variation)
  101  --fail-on regression and a row changed beyond run-to-run variation
       for the worse (lost items never count), or the comparison is
       incomplete: items A answered that B lost or never recorded, or a B
       run stopped early, unless --allow-lost
  2    the command line could not be parsed
  3    a side names no run, group, file or folder, or a file is unreadable")]
struct DiffCmd {
    /// The baseline: a run id, a run group, a measurement file or a folder
    /// of them.
    a: String,
    /// The candidate, named the same ways.
    b: String,
    /// Folder run ids and groups are looked up in (default: the project's
    /// `measurements/`).
    #[arg(long, value_name = "DIR")]
    measurements: Option<PathBuf>,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Exit 101 when a row changed beyond run-to-run variation in the bad
    /// direction.
    #[arg(long, value_enum, value_name = "WHAT")]
    fail_on: Option<FailOn>,
    /// With --fail-on regression: do not fail on items the candidate lost
    /// or never recorded, or on a candidate run that stopped early (they
    /// are still counted and named).
    #[arg(long)]
    allow_lost: bool,
    /// Seed of the bootstrap (recorded in the output).
    #[arg(long, default_value_t = 21)]
    seed: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    /// A change beyond run-to-run variation for the worse.
    Regression,
}

#[derive(Args)]
struct ShowCmd {
    /// `RUN_ID#CASE_ID`, as the board names the records behind a cell.
    record: String,
    /// Folder of measurement files (default: the project's `measurements/`).
    #[arg(long, value_name = "DIR")]
    measurements: Option<PathBuf>,
    /// The record and transcript as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BoardCmd {
    /// Folder of measurement files (default: the project's `measurements/`).
    #[arg(long, value_name = "DIR")]
    measurements: Option<PathBuf>,
    /// Where the board files go (default: `board/`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// A reporter component (.wasm, `reporter` world) instead of the built-in board.
    #[arg(long, value_name = "WASM")]
    reporter: Option<PathBuf>,
    /// The reporter's config (TOML): title, per-row rule and tie margin.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Judged rows (TOML): a standing and a reason per cell, marked as judged.
    #[arg(long, value_name = "FILE")]
    judgements: Option<PathBuf>,
    /// Published references (TOML): figures read elsewhere, with their
    /// source and date, drawn apart from the measured columns, never scored.
    #[arg(long, value_name = "FILE")]
    references: Option<PathBuf>,
    /// Only the runs of this campaign (with the resumes, parts and repeats
    /// its cells read).
    #[arg(long, value_name = "ID")]
    campaign: Option<String>,
    /// Only runs started on or after this UTC date (2026-12-01) or RFC 3339
    /// UTC time.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only runs started on or before this UTC date (to its end) or RFC
    /// 3339 UTC time.
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only the runs of the latest N nights: a night is a campaign, or the
    /// UTC date a run of no campaign started on.
    #[arg(long, value_name = "N")]
    nights: Option<u32>,
}

fn parse_arm(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((arm, target)) if !arm.is_empty() && !target.is_empty() => Ok((arm.to_string(), target.to_string())),
        _ => Err(format!("expected ARM=TARGET, got {text:?}")),
    }
}

const EXIT_CODES: &str = "Exit codes:
  0    every case passed (or was not applicable)
  101  at least one case failed or was lost
  2    the command line could not be parsed
  3    invalid configuration or suite, or suite data not matching their pins
  4    target not launched, not reachable, serving another model,
       refusing the credentials, redirecting, or without the chat path
       (the run stops)
  5    an instrument could not be built, loaded or listed, or a reporter
       could not be loaded or run
  6    a measurement file could not be written
  130, 143, 129  interrupted by SIGINT, SIGTERM or SIGHUP: --resume finishes it";

fn main() -> ExitCode {
    // Invoked as `cargo sparktest …` cargo passes `sparktest` as the first
    // argument; invoked directly as `cargo-sparktest …` it does not.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_none_or(|a| a != "sparktest") {
        argv.insert(1, "sparktest".into());
    }
    let Cargo::Sparktest(args) = match Cargo::try_parse_from(argv) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { exit_code::USAGE as u8 } else { 0 });
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(err) => {
            eprintln!("error: failed to read the current folder: {err}");
            return ExitCode::from(exit_code::SETUP as u8);
        }
    };
    if args.version {
        print!("{}", sparktest_harness::version(args.verbose));
        return ExitCode::SUCCESS;
    }
    if args.list_suites {
        return list_suites(&cwd);
    }
    let result = dispatch(args, cwd);
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            // Redacted, and its foreign text (a server's body, a file's
            // name) made safe to print.
            eprintln!("error: {}", sparktest_harness::shown(&err.to_string()));
            ExitCode::from(err.kind.exit_code() as u8)
        }
    }
}

/// The command the arguments name, run: a subcommand, else a suite.
fn dispatch(args: SparktestArgs, cwd: PathBuf) -> Result<i32, sparktest_harness::Error> {
    match args.command {
        Some(Command::New(NewCmd { what: NewWhat::Instrument { name, path } })) => {
            let dir = cwd.join(path.unwrap_or_else(|| PathBuf::from(&name)));
            sparktest_harness::new_instrument(&dir, &name).map(|said| {
                eprintln!("sparktest: {said}");
                exit_code::OK
            })
        }
        Some(Command::Init) => sparktest_harness::init(&cwd).map(|path| {
            eprintln!("sparktest: wrote {}: name your targets there", path.display());
            exit_code::OK
        }),
        Some(Command::Pin(p)) => {
            let given = cwd.join(&p.suite);
            let file = if given.is_dir() { given.join("suite.toml") } else { given };
            sparktest_harness::pin(&file).map(|said| {
                if said.is_empty() {
                    eprintln!("sparktest: {}: every pin already matches its file", file.display());
                }
                for line in said {
                    eprintln!("sparktest: pinned {line}");
                }
                exit_code::OK
            })
        }
        Some(Command::Board(b)) => sparktest_harness::board(BoardArgs {
            measurements_dir: b.measurements,
            out: b.out,
            reporter: b.reporter,
            config: b.config,
            judgements: b.judgements,
            references: b.references,
            selection: sparktest_harness::Selection {
                campaign: b.campaign,
                since: b.since,
                until: b.until,
                nights: b.nights,
            },
            cwd,
        }),
        Some(Command::Diff(d)) => sparktest_harness::diff(DiffArgs {
            a: d.a,
            b: d.b,
            measurements_dir: d.measurements,
            format: match d.format {
                Format::Text => DiffFormat::Text,
                Format::Json => DiffFormat::Json,
            },
            fail_on_regression: matches!(d.fail_on, Some(FailOn::Regression)),
            allow_lost: d.allow_lost,
            seed: d.seed,
            cwd,
        }),
        Some(Command::Campaign(CampaignCmd {
            action: Some(CampaignAction::Status { id, measurements, record, array_job }),
            ..
        })) => sparktest_harness::campaign_status(sparktest_harness::StatusArgs {
            id,
            measurements_dir: measurements,
            record,
            array_job,
            cwd,
        }),
        Some(Command::Campaign(c)) => sparktest_harness::campaign(CampaignArgs {
            file: c.file.unwrap_or_default(),
            resume: c.resume,
            force: c.force,
            plan: c.plan,
            partition: c.partition,
            id: c.id,
            measurements_dir: c.measurements,
            configuration: c.configuration,
            slurm: c.slurm,
            dry_run: c.dry_run,
            cwd,
        }),
        Some(Command::Show(s)) => {
            sparktest_harness::show(ShowArgs { record: s.record, measurements_dir: s.measurements, json: s.json, cwd })
        }
        None => {
            let target = match (args.endpoint, args.model) {
                (Some(url), Some(model)) => TargetChoice::Endpoint { url, model },
                _ => TargetChoice::Named(args.target),
            };
            let suite = args.suite.unwrap_or_default();
            let run = RunArgs {
                suite,
                target,
                measurements_dir: args.measurements,
                libtest: args.libtest,
                cwd,
                arms: args.arm,
                judge: args.judge,
                junit: args.junit,
                partition: args.partition,
                run_group: args.run_group,
                resume: args.resume,
                label: args.label,
                repeat: args.repeat,
                campaign: None,
            };
            sparktest_harness::run(run)
        }
    }
}

/// `--list-suites`: every suite this project can name, and where it is.
fn list_suites(cwd: &std::path::Path) -> ExitCode {
    let root = match sparktest_harness::Config::discover(cwd) {
        Ok(config) => config.root,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(err.kind.exit_code() as u8);
        }
    };
    for k in sparktest_harness::known_suites(&root) {
        println!("{:<22} {}", k.name, k.origin);
    }
    ExitCode::SUCCESS
}

/// The command-line reference in the book (`docs/cli/`), generated from
/// the commands' own help, one page per subcommand: a flag added, renamed
/// or reworded without regenerating fails this test.
#[cfg(test)]
mod reference {
    use super::Cargo;
    use clap::CommandFactory;
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};

    const REFRESH: &str = "SPARKTEST_REFRESH_DOCS";

    fn docs() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
    }

    fn help(cmd: &mut clap::Command) -> String {
        let text = cmd.render_long_help().to_string();
        text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n").trim_end().to_string()
    }

    fn header(title: &str) -> String {
        format!(
            "<!-- Generated from the command's own help by `{REFRESH}=1 cargo test -p cargo-sparktest --bin \
             cargo-sparktest reference`: do not edit by hand. -->\n\n# {title}\n\n"
        )
    }

    /// One subcommand's page: its help, then each of its own subcommands'.
    fn page(cmd: &mut clap::Command, path: &str) -> String {
        let mut out = header(&format!("`{path}`"));
        let _ = writeln!(out, "```text\n{}\n```", help(cmd));
        let names: Vec<String> =
            cmd.get_subcommands().filter(|s| s.get_name() != "help").map(|s| s.get_name().to_string()).collect();
        for name in names {
            let Some(sub) = cmd.find_subcommand_mut(&name) else { continue };
            let _ = writeln!(out, "\n## `{path} {name}`\n\n```text\n{}\n```", help(sub));
        }
        out
    }

    /// Every page: `index.md` (the run itself, and the index), then one
    /// file per subcommand, by its name.
    pub(super) fn pages() -> Vec<(String, String)> {
        let mut root = Cargo::command();
        root.build();
        let sparktest = root.find_subcommand_mut("sparktest").expect("the sparktest subcommand");
        let subs: Vec<(String, String)> = sparktest
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .map(|s| (s.get_name().to_string(), s.get_about().map(|a| a.to_string()).unwrap_or_default()))
            .collect();
        let mut index = header("Command line");
        index.push_str(
            "`cargo sparktest` runs a suite; its subcommands work on what runs wrote. Each page is the \
             command's own `--help`.\n\n",
        );
        for (name, about) in &subs {
            let about = about.split(". ").next().unwrap_or_default().trim_end_matches('.');
            let _ = writeln!(index, "- [`cargo sparktest {name}`]({name}.md): {about}.");
        }
        let _ = writeln!(index, "\n## `cargo sparktest`\n\n```text\n{}\n```", help(sparktest));
        let mut pages = vec![("index.md".to_string(), index)];
        for (name, _) in &subs {
            let sub = sparktest.find_subcommand_mut(name).expect("listed above");
            pages.push((format!("{name}.md"), page(sub, &format!("cargo sparktest {name}"))));
        }
        pages
    }

    #[test]
    fn the_book_s_command_line_reference_is_current() {
        let dir = docs().join("cli");
        let refresh = std::env::var_os(REFRESH).is_some();
        if refresh {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let summary = std::fs::read_to_string(docs().join("SUMMARY.md")).expect("docs/SUMMARY.md");
        let mut stale = Vec::new();
        for (file, text) in pages() {
            let path = dir.join(&file);
            if refresh {
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(format!("docs/cli/{file}"));
            }
            assert!(summary.contains(&format!("(cli/{file})")), "docs/SUMMARY.md does not list cli/{file}");
        }
        assert!(
            stale.is_empty(),
            "the command-line reference differs from the commands' help: {}; regenerate it with \
             `{REFRESH}=1 cargo test -p cargo-sparktest --bin cargo-sparktest reference`",
            stale.join(", ")
        );
        // No page left over from a subcommand that is gone.
        let wanted: Vec<String> = pages().into_iter().map(|(f, _)| f).collect();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(wanted.contains(&name), "docs/cli/{name} is no subcommand's page: remove it");
        }
    }
}
