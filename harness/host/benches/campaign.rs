//! The campaign's own overhead per step (issue 29): a campaign of 8
//! configurations × 2 suites against a fast loopback server, run through
//! `sparktest_harness::campaign` as `cargo sparktest campaign` runs it, and
//! the time spent outside any case and any launch, per step, read from the
//! campaign's own journal and measurement files. Figures, nothing
//! asserted. Run with `cargo bench -p sparktest-harness --bench campaign
//! --profile dev` (a release host takes a long build; the instruments are
//! always the `plugin` build).

use sparktest_test_support::fake_server;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use fake_server::{FakeServer, Framing, Script, openai};
use sparktest_harness::{CampaignArgs, campaign};
use sparktest_record::reader::{self, File};

const CONFIGURATIONS: usize = 8;
const RUNS: usize = 3;

/// A server that answers the probe and every chat at once: streamed when
/// asked, whole otherwise.
fn server(rt: &tokio::runtime::Runtime) -> FakeServer {
    let streamed = {
        let mut body = format!("data: {}\n\n", openai::role());
        for i in 0..8 {
            body.push_str(&format!("data: {}\n\n", openai::content(&format!("w{i} "))));
        }
        body.push_str(&format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            openai::finish("stop"),
            openai::usage(9, 8)
        ));
        Script::sse().framing(Framing::Length(body.len())).bytes(body)
    };
    let whole = Script::json(
        200,
        r#"{"id":"x","object":"chat.completion","model":"fake-model","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}"#,
    );
    rt.block_on(FakeServer::respond(Arc::new(move |req: &str, _| {
        let path = req.split_whitespace().nth(1).unwrap_or("");
        if path.starts_with("/v1/models") {
            return Script::json(200, r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#);
        }
        if path.starts_with("/v1/chat") {
            return if req.contains("\"stream\":true") { streamed.clone() } else { whole.clone() };
        }
        Script::json(404, r#"{"error":"not found"}"#)
    })))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = server(&rt);
    let suites = ["campaign-gate", "campaign-probe"]
        .map(|s| repo.join("cargo-sparktest/tests/suites").join(s).display().to_string());
    let mut per_step = Vec::new();
    let mut per_config = Vec::new();
    for run in 0..=RUNS {
        let dir = tempfile::tempdir().unwrap();
        let mut config = String::from("[run]\nmeasurements-dir = \"measurements\"\nsnapshots-dir = \"snapshots\"\n");
        let mut file = format!(
            "[campaign]\nname = \"bench\"\nsuites = [\"{}\", \"{}\"]\non-gate-fail = \"continue\"\nsettle-secs = 0\n",
            suites[0], suites[1]
        );
        for i in 0..CONFIGURATIONS {
            config.push_str(&format!("[target.fake{i}]\nmodel = \"fake-model\"\nbase-url = \"{}\"\n", server.url()));
            file.push_str(&format!("[[configuration]]\ntarget = \"fake{i}\"\n"));
        }
        std::fs::write(dir.path().join("sparktest.toml"), config).unwrap();
        std::fs::write(dir.path().join("campaign.toml"), file).unwrap();
        let started = Instant::now();
        let code = campaign(CampaignArgs {
            file: "campaign.toml".into(),
            resume: None,
            force: false,
            plan: false,
            partition: None,
            id: Some("bench".into()),
            measurements_dir: None,
            configuration: None,
            slurm: false,
            dry_run: false,
            cwd: dir.path().to_path_buf(),
        })
        .unwrap_or_else(|e| panic!("the campaign failed: {e}"));
        let wall = started.elapsed().as_secs_f64();
        // Inside cases: each suite run's summary seconds; inside launches:
        // each configuration's launch seconds (a probe here: nothing to start).
        let mut cases = 0.0;
        let mut launches = 0.0;
        let mut steps = 0usize;
        for path in reader::list(&dir.path().join("measurements")).unwrap() {
            let file = File::<reader::Unread>::read(&path).unwrap().run;
            if file.manifest.suite.name == sparktest_contract::campaign::INSTRUMENT {
                launches += file
                    .cases
                    .iter()
                    .flat_map(|c| c.metrics.iter())
                    .filter(|m| m.name == sparktest_contract::campaign::LAUNCH_SECS.name())
                    .map(|m| m.value)
                    .sum::<f64>();
            } else {
                cases += file.summary.map_or(0.0, |s| s.seconds);
                steps += 1;
            }
        }
        let overhead = wall - cases - launches;
        if run > 0 {
            per_step.push(overhead / steps as f64);
            per_config.push(overhead / CONFIGURATIONS as f64);
        }
        println!(
            "run {run}{}: exit {code}, {wall:.2} s wall, {cases:.2} s in cases, {launches:.2} s reaching the targets, \
             {steps} suite steps: overhead {:.0} ms per suite step",
            if run == 0 { " (warm-up: components built and cached)" } else { "" },
            overhead / steps as f64 * 1000.0
        );
    }
    println!(
        "campaign overhead (outside any case and launch), median of {RUNS}: {:.0} ms per suite step, {:.0} ms per \
         configuration ({CONFIGURATIONS} configurations x 2 suites)",
        median(per_step) * 1000.0,
        median(per_config) * 1000.0
    );
}
