//! Images and the box, on the reference target: a build without a vision
//! projector refuses images (recorded as no vision, never lost), and the
//! media verdict follows from the box's measured memory.

use sparktest_record::Outcome;

use crate::support::*;

#[test]
fn no_vision_in_this_build_and_the_media_verdict() {
    let p = Project::new("");
    for (s, filter) in [("ocr", "ocr::page::page-1"), ("screenshots", "screenshots::item::01-chat-phone-flat-viewing")]
    {
        let out = p.run(&["--suite", &suite(s), "--exact", filter]);
        assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    }
    let out = p.run(&["--suite", &suite("media")]);
    assert!(matches!(out.status.code(), Some(0) | Some(101)), "{}", text(&out));
    let runs = p.measurements();
    for run in &runs[..2] {
        let c = &run.cases[0];
        // The server's own answer, not a crash and not lost.
        assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
        assert!(c.reason.as_deref().unwrap().starts_with("no vision in this build: images rejected (HTTP"), "{c:?}");
        assert_eq!(note(c, "vision"), Some("none"));
        assert_eq!(note(c, "vision-probe"), Some("the engine reports no vision (modalities)"));
        assert_eq!(c.calls[0].result, "rejected");
        // The probe agrees: llama.cpp's /props modalities.
        assert!(
            run.manifest.target.facts.iter().any(|(k, v)| k == "vision" && v == "false"),
            "{:?}",
            run.manifest.target.facts
        );
    }

    // The media verdict: the box's free memory with the serve loaded and
    // idle against each budget, and the arithmetic of a KV trade.
    let media = &runs[2];
    assert_eq!(media.cases.len(), 2);
    let kv =
        media.manifest.target.facts.iter().find(|(k, _)| k == "kv_bytes_per_token").map(|(_, v)| v.clone()).unwrap();
    // SmolLM2-135M: 30 layers x 3 KV heads x (64 + 64) x 2 bytes.
    assert!(kv.starts_with("23040.0 "), "{kv}");
    for c in &media.cases {
        let (free, budget) = (metric(c, "free-gib").unwrap(), metric(c, "budget-gib").unwrap());
        // Free is with the media stack loaded: what the serve leaves, less
        // the stack's own 20.5 GiB (the suite's loadout_gib).
        let (alone, loadout) = (metric(c, "free-alone-gib").unwrap(), metric(c, "loadout-gib").unwrap());
        assert_eq!(loadout, 20.5);
        assert!((free - (alone - loadout)).abs() < 1e-9, "{c:?}");
        let verdict = note(c, "verdict").unwrap();
        let margin = metric(c, "margin-gib").unwrap();
        let expect = if free >= budget + margin {
            "YES"
        } else if free >= budget {
            "MARGINAL"
        } else {
            // Enough KV to give? 8,192 tokens of 23,040 bytes is 0.18 GiB.
            let pool = metric(c, "kv-pool-tokens").unwrap();
            let need = (budget + margin - free) * 1073741824.0 / 23040.0;
            if pool - need.ceil() >= 4096.0 { "YES WITH KV TRADE" } else { "NO" }
        };
        assert_eq!(verdict, expect, "{c:?}");
        assert_eq!(c.outcome == Outcome::Fail, verdict == "NO", "{c:?}");
        assert!(note(c, "pool").is_some_and(|p| p.starts_with("system memory")), "{c:?}");
    }

    // The board: 0 with the reason for both vision rows, the mark under the
    // model, the media verdict in its cell.
    let out = p.run(&["board"]);
    assert!(out.status.success(), "{}", text(&out));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("board/standings.json")).unwrap()).unwrap();
    let col = "local · SmolLM2-135M-Instruct-Q4_1";
    let row = |t: &str| {
        s["board"]["rows"].as_array().unwrap().iter().find(|r| r["title"] == t).unwrap()["cells"][col].clone()
    };
    for t in ["Handwriting OCR", "Real-world screenshot & photo reading"] {
        let cell = row(t);
        assert_eq!(cell["kind"], "incapable", "{t}: {cell}");
        assert!(
            cell["reason"].as_str().unwrap().starts_with("no vision in this build - images rejected (HTTP"),
            "{cell}"
        );
    }
    // The cell says the largest budget's verdict (48.8 GiB, whichever case
    // finished first); a NO names both figures
    // (on a 24 GiB box: ~22 GiB free alone, ~1.5 after the loadout).
    let cell = row("Shares a box with media")["raw"].as_str().unwrap().to_string();
    let c = media.cases.iter().find(|c| metric(c, "budget-gib") == Some(48.8)).unwrap();
    let verdict = note(c, "verdict").unwrap();
    assert!(cell.starts_with(&format!("{verdict} - ")), "{cell} vs {c:?}");
    if verdict == "NO" {
        let (alone, free) = (metric(c, "free-alone-gib").unwrap(), metric(c, "free-gib").unwrap());
        let figures = format!("NO - ~{alone:.1} GiB free alone, ~{free:.1} GiB after the media loadout vs 48.8 needed");
        assert!(cell.starts_with(&figures), "{cell}");
        // Why no trade: the pool of a 135M model's 8,192 tokens is far short.
        assert!(cell.contains(&format!("; {}", note(c, "no-trade").unwrap())), "{cell}");
    }
    let marks = s["board"]["columns"][0]["marks"].clone();
    assert_eq!(marks[0], "no vision in this build");
}
