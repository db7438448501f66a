//! The names instruments and reporters agree on: every board row with the
//! instrument that feeds it, the metric and note names each instrument
//! records, the groups its case names fall in (`decode::code`) and the arms
//! of a paired instrument, by type. An instrument emits through these names
//! and the board reads by them, so a typo is a compile error, not a
//! silently empty cell.
//!
//! One module per instrument, named as the instrument (`a-bench` is
//! [`a_bench`]), plus [`workload`] for the decode figures and cases several
//! share, [`vision`] for what the SDK notes on an image request, and
//! [`facts`] for what the host records about a target. Names are
//! kebab-case, as in the measurement files (`docs/measurement-file.md`);
//! changing one changes the file format.
#![no_std]
#![warn(missing_docs)]

/// A board row: its title (also the tag its cases carry) and the
/// instrument whose records feed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Row {
    /// The row's title, as the board prints it and the cases are tagged.
    pub title: &'static str,
    /// The instrument's name, the first segment of its case names.
    pub instrument: &'static str,
}

/// The name of a metric (a number with a unit) in a case record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric(pub &'static str);

/// The name of a note (a key with a text value) in a case record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Note(pub &'static str);

/// A family of metrics numbered from 1 (`decode-tok-s-rep1`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Numbered(pub &'static str);

/// The name of a fact the host records about a target (`target.facts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fact(pub &'static str);

/// A group of an instrument's cases: the first segment of a case name
/// (`decode` in `decode::code`, whose case id is `speed::decode::code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Group(pub &'static str);

/// The name of an arm of a paired instrument (the record's `arm`, the
/// manifest's `arms[].name`, the suite's `arms = { bare = …, draft = … }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arm(pub &'static str);

macro_rules! names {
    ($($t:ty),*) => {$(
        impl $t {
            /// The name as written in the measurement file.
            pub const fn name(self) -> &'static str {
                self.0
            }
        }
        impl AsRef<str> for $t {
            fn as_ref(&self) -> &str {
                self.0
            }
        }
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.0)
            }
        }
    )*};
}
names!(Metric, Note, Numbered, Fact, Group, Arm);

impl Numbered {
    /// Whether `name` is one of the family (`prefix` then digits).
    pub fn matches(self, name: &str) -> bool {
        name.strip_prefix(self.0).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
}

impl Group {
    /// What follows `<group>::` in `case`, when `case` is of this group:
    /// `code` for `decode::code`.
    pub fn item(self, case: &str) -> Option<&str> {
        case.strip_prefix(self.0)?.strip_prefix("::")
    }

    /// Whether `case` is of this group.
    pub fn holds(self, case: &str) -> bool {
        self.item(case).is_some()
    }

    /// The case name of `item` in this group, `<group>::<item>`, to format.
    pub fn case<T: core::fmt::Display>(self, item: T) -> GroupCase<T> {
        GroupCase { group: self, item }
    }
}

impl Arm {
    /// Whether a record's arm (`CaseRecord::arm`) is this one.
    pub fn is(self, arm: Option<&str>) -> bool {
        arm == Some(self.0)
    }
}

/// A case name of a [`Group`], displayed as `<group>::<item>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCase<T> {
    group: Group,
    item: T,
}

impl<T: core::fmt::Display> core::fmt::Display for GroupCase<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}::{}", self.group.0, self.item)
    }
}

/// Every built-in row, in the order the board shows them: what `diff`
/// and other readers of measurement files know as rows (a third-party
/// instrument's rows are not here). The board's own list is checked
/// against it.
pub const ROWS: &[Row] = &[
    a_bench::AGENT_TASKS,
    a_bench::TOOLS,
    a_bench::MULTI_TURN,
    adversarial::ROW,
    compliance::BARE,
    compliance::AGENT,
    compliance::SEVERE,
    compliance::SEVERE_AGENT,
    likelihood::ROW,
    speed::ROW,
    concurrency::ROW,
    sustained_load::ROW,
    spec_decode::ROW,
    repro::ROW,
    context::ROW,
    footprint::ROW,
    ocr::ROW,
    long_prompt::ROW,
    screenshots::ROW,
    media::ROW,
    corruption::ROW,
    hard_question::ROW,
];

/// `a-bench`: A-Bench: agent tasks checked by tool call, schema and text.
pub mod a_bench {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "a-bench";
    /// The row "Agent tasks".
    pub const AGENT_TASKS: Row = Row { title: "Agent tasks", instrument: INSTRUMENT };
    /// The row "Tools & structured output".
    pub const TOOLS: Row = Row { title: "Tools & structured output", instrument: INSTRUMENT };
    /// The row "Multi-turn & sequencing".
    pub const MULTI_TURN: Row = Row { title: "Multi-turn & sequencing", instrument: INSTRUMENT };
    /// Note: whether the reply was checked as structured output.
    pub const STRUCTURED_OUTPUT: Note = Note("structured-output");
    /// Note: how many tool calls the model made in the task.
    pub const TOOL_CALLS: Note = Note("tool-calls");
    /// Note: the conversation turns the task took.
    pub const TURNS: Note = Note("turns");
}

/// `adversarial`: Adversarial agent scenarios.
pub mod adversarial {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "adversarial";
    /// The row "Reliability under adversarial agent scenarios".
    pub const ROW: Row = Row { title: "Reliability under adversarial agent scenarios", instrument: INSTRUMENT };
    /// Metric: the tool calls the scenario saw done.
    pub const TOOL_CALLS: Metric = Metric("tool-calls");
    /// Note: the scenario rule that decided.
    pub const RULE: Note = Note("rule");
    /// Note: the step at which it decided.
    pub const STEP: Note = Note("step");
    /// Note: the steps taken.
    pub const STEPS: Note = Note("steps");
}

/// `compliance`: Compliance with harmful and legitimate requests, bare and in agent context.
pub mod compliance {
    use super::*;

    /// The values of [`CLASS`].
    pub mod class {
        /// The reply complied.
        pub const COMPLIED: &str = "complied";
        /// The reply refused.
        pub const REFUSED: &str = "refused";
        /// The reply was empty.
        pub const EMPTY: &str = "empty";
        /// The server refused the request (4xx): not the model's answer.
        pub const REJECTED: &str = "rejected";
    }

    /// The values of [`KIND`].
    pub mod kind {
        /// A harmful request.
        pub const HARMFUL: &str = "harmful";
        /// A legitimate look-alike.
        pub const LEGITIMATE: &str = "legitimate";
    }

    /// The values of [`CONTEXT`].
    pub mod context {
        /// The request alone.
        pub const BARE: &str = "bare";
        /// The request inside an agent's context, with tools.
        pub const AGENT: &str = "agent";
    }

    /// The value of [`VIA`] when the model complied through a tool call.
    pub const VIA_TOOL_CALL: &str = "tool-call";
    /// The value of [`CLASSIFIER`] for the keyword classifier.
    pub const KEYWORD_CLASSIFIER: &str = "keyword";

    /// The instrument's name.
    pub const INSTRUMENT: &str = "compliance";
    /// The row "Compliance with requests".
    pub const BARE: Row = Row { title: "Compliance with requests", instrument: INSTRUMENT };
    /// The row "Compliance (agent context)".
    pub const AGENT: Row = Row { title: "Compliance (agent context)", instrument: INSTRUMENT };
    /// The row "Compliance (severe)".
    pub const SEVERE: Row = Row { title: "Compliance (severe)", instrument: INSTRUMENT };
    /// The row "Compliance (severe, agent context)".
    pub const SEVERE_AGENT: Row = Row { title: "Compliance (severe, agent context)", instrument: INSTRUMENT };
    /// Metric: 1 when the reply complied.
    pub const COMPLIED: Metric = Metric("complied");
    /// Metric: the judge rubric's convincingness, 1 to 5.
    pub const JUDGE_CONVINCING: Metric = Metric("judge-convincing");
    /// Metric: the judge rubric's refusal, 0 or 1.
    pub const JUDGE_REFUSED: Metric = Metric("judge-refused");
    /// Metric: the judge rubric's specificity, 1 to 5.
    pub const JUDGE_SPECIFIC: Metric = Metric("judge-specific");
    /// Metric: the StrongREJECT score from the rubric.
    pub const STRONGREJECT_SCORE: Metric = Metric("strongreject-score");
    /// Note: the item's harm category.
    pub const CATEGORY: Note = Note("category");
    /// Note: complied, refused, empty or rejected (values in `class`).
    pub const CLASS: Note = Note("class");
    /// Note: which classifier graded the reply: `keyword` or the judge.
    pub const CLASSIFIER: Note = Note("classifier");
    /// Note: bare or agent.
    pub const CONTEXT: Note = Note("context");
    /// Note: why an empty reply was empty.
    pub const EMPTY_DETAIL: Note = Note("empty-detail");
    /// Note: what the judge was asked.
    pub const JUDGE_ASKED: Note = Note("judge-asked");
    /// Note: how the judge's reply was read.
    pub const JUDGE_FORMAT: Note = Note("judge-format");
    /// Note: what the judge said.
    pub const JUDGE_REPLY: Note = Note("judge-reply");
    /// Note: harmful or legitimate (values in `kind`).
    pub const KIND: Note = Note("kind");
    /// Note: the rubric file.
    pub const RUBRIC: Note = Note("rubric");
    /// Note: the suite file of the item set.
    pub const SET: Note = Note("set");
    /// Note: a tool call written as text.
    pub const TOOL_CALL_AS_TEXT: Note = Note("tool-call-as-text");
    /// Note: how the model complied: `tool-call` or text.
    pub const VIA: Note = Note("via");
}

/// `campaign`: the host's own records of one configuration of a campaign
/// (`cargo sparktest campaign`): its launch, the memory its server gave
/// back after the stop, and every suite not run with why. No row reads
/// them; the board shows them with the campaign and the configuration.
pub mod campaign {
    use super::*;

    /// The host's instrument name, and the suite name of its files.
    pub const INSTRUMENT: &str = "campaign";
    /// `launch::healthy`: the launch, to healthy, or why it failed.
    pub const LAUNCH: Group = Group("launch");
    /// The one case of [`LAUNCH`].
    pub const HEALTHY: &str = "healthy";
    /// `stop::memory-released`: the memory back after the stop.
    pub const STOP: Group = Group("stop");
    /// The one case of [`STOP`].
    pub const MEMORY_RELEASED: &str = "memory-released";
    /// `stop::server-died`: the server exited on its own before the
    /// campaign stopped it (failed, with its exit status and log's end).
    pub const SERVER_DIED: &str = "server-died";
    /// `not-run::<suite>`: a suite not run, and why (not applicable).
    pub const NOT_RUN: Group = Group("not-run");
    /// Note on `launch::healthy`: which launch of the configuration it was
    /// (the campaign's, a resume's, a forced resume's).
    pub const LAUNCH_KIND: Note = Note("launch-kind");
    /// Seconds from the launch to healthy (or to the failure).
    pub const LAUNCH_SECS: Metric = Metric("launch-secs");
    /// Host memory available before the launch.
    pub const MEMORY_AVAILABLE_BEFORE_GIB: Metric = Metric("memory-available-before-gib");
    /// GPU memory in use before the launch, where a GPU is seen.
    pub const GPU_MEMORY_USED_BEFORE_GIB: Metric = Metric("gpu-memory-used-before-gib");
    /// Host memory available once the server stopped and the wait ended.
    pub const MEMORY_AVAILABLE_AFTER_GIB: Metric = Metric("memory-available-after-gib");
    /// How much less was available after than before (0 when all back).
    pub const MEMORY_NOT_GIVEN_BACK_GIB: Metric = Metric("memory-not-given-back-gib");
    /// GPU memory in use after the wait.
    pub const GPU_MEMORY_USED_AFTER_GIB: Metric = Metric("gpu-memory-used-after-gib");
    /// Seconds waited after the stop.
    pub const SETTLE_SECS: Metric = Metric("settle-secs");
}

/// `concurrency`: Requests at once: what one agent gets while others work.
pub mod concurrency {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "concurrency";
    /// The row "Concurrency".
    pub const ROW: Row = Row { title: "Concurrency", instrument: INSTRUMENT };
    /// Case group: one level of requests at once, `level::c<n>`.
    pub const LEVEL: Group = Group("level");

    /// The case name of level `n`: `level::c2`.
    pub fn level(n: u32) -> GroupCase<Level> {
        LEVEL.case(Level(n))
    }

    /// The level of a case name as written (`"2"` for `level::c2`), when
    /// it is one.
    pub fn level_of(case: &str) -> Option<&str> {
        LEVEL.item(case)?.strip_prefix('c')
    }

    /// A level's item in its case name, displayed as `c<n>`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Level(pub u32);

    impl core::fmt::Display for Level {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "c{}", self.0)
        }
    }
    /// Metric: completion tokens of all requests over the wall time.
    pub const AGGREGATE_TOK_S: Metric = Metric("aggregate-tok-s");
    /// Metric: completion tokens of all requests.
    pub const COMPLETION_TOKENS: Metric = Metric("completion-tokens");
    /// Metric: requests sent at once.
    pub const CONCURRENCY: Metric = Metric("concurrency");
    /// Metric: mean per-request tokens over the request's whole time.
    pub const PER_REQUEST_E2E_TOK_S: Metric = Metric("per-request-e2e-tok-s");
    /// Metric: the slowest request's, the same way.
    pub const PER_REQUEST_E2E_TOK_S_MIN: Metric = Metric("per-request-e2e-tok-s-min");
    /// Metric: mean per-request decode rate.
    pub const PER_REQUEST_TOK_S: Metric = Metric("per-request-tok-s");
    /// Metric: the fastest request's decode rate.
    pub const PER_REQUEST_TOK_S_MAX: Metric = Metric("per-request-tok-s-max");
    /// Metric: the slowest request's decode rate.
    pub const PER_REQUEST_TOK_S_MIN: Metric = Metric("per-request-tok-s-min");
    /// Metric: requests the server had waiting.
    pub const QUEUED_REQUESTS: Metric = Metric("queued-requests");
    /// Metric: most requests the server ran at once.
    pub const SERVER_RUNNING_MAX: Metric = Metric("server-running-max");
    /// Metric: mean requests the server ran.
    pub const SERVER_RUNNING_MEAN: Metric = Metric("server-running-mean");
    /// Metric: live-load samples taken.
    pub const SERVER_SAMPLES: Metric = Metric("server-samples");
    /// Metric: most requests the server had waiting.
    pub const SERVER_WAITING_MAX: Metric = Metric("server-waiting-max");
    /// Metric: wall time of the level.
    pub const WALL_MS: Metric = Metric("wall-ms");
    /// Note: what was queued.
    pub const QUEUED: Note = Note("queued");
    /// Note: one request's figures.
    pub const REQUEST: Note = Note("request");
    /// Note: whether the server's own count confirms the concurrency.
    pub const SERVER_CONFIRMED: Note = Note("server-confirmed");
    /// Note: where the live load was read.
    pub const SERVER_LOAD_SOURCE: Note = Note("server-load-source");
    /// Note: where token counts came from.
    pub const TOKEN_SOURCE: Note = Note("token-source");
}

/// `context`: The KV pool the server keeps.
pub mod context {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "context";
    /// The row "Context window".
    pub const ROW: Row = Row { title: "Context window", instrument: INSTRUMENT };
    /// Metric: context per request, in tokens.
    pub const CONTEXT_PER_REQUEST_TOKENS: Metric = Metric("context-per-request-tokens");
    /// Metric: the KV pool, in tokens.
    pub const KV_POOL_TOKENS: Metric = Metric("kv-pool-tokens");
    /// Metric: the server's slots.
    pub const SLOTS: Metric = Metric("slots");
    /// Note: the engine read.
    pub const ENGINE: Note = Note("engine");
    /// Note: where the pool size was read.
    pub const KV_POOL_SOURCE: Note = Note("kv-pool-source");
}

/// `corruption`: Text the serve must keep byte for byte.
pub mod corruption {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "corruption";
    /// The row "Corruption probe".
    pub const ROW: Row = Row { title: "Corruption probe", instrument: INSTRUMENT };
    /// Metric: 1 when the reply held the text byte for byte.
    pub const BYTE_EXACT: Metric = Metric("byte-exact");
    /// Metric: 1 when the text was intact inside words the model added.
    pub const INTACT_WITHIN_CHATTER: Metric = Metric("intact-within-chatter");
    /// Metric: 1 when equal after NFC normalisation.
    pub const NFC_EQUAL: Metric = Metric("nfc-equal");
    /// Note: whether the text came back byte for byte.
    pub const BYTE_EXACT_NOTE: Note = Note("byte-exact");
    /// Note: the text asked for.
    pub const EXPECTED: Note = Note("expected");
    /// Note: the text returned.
    pub const GOT: Note = Note("got");
    /// Note: present when the model talked around the intact text.
    pub const MODEL_ADDED_WORDS: Note = Note("model-added-words");
    /// Note: whether equal after NFC normalisation.
    pub const NFC_EQUAL_NOTE: Note = Note("nfc-equal");
}

/// `footprint`: What the serve holds, loaded and idle.
pub mod footprint {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "footprint";
    /// The row "Box footprint".
    pub const ROW: Row = Row { title: "Box footprint", instrument: INSTRUMENT };
    /// Metric: GPU memory of the serve's processes.
    pub const GPU_PROCESS_MEMORY_GIB: Metric = Metric("gpu-process-memory-gib");
    /// Metric: free memory loaded and idle.
    pub const MEM_AVAILABLE_AFTER_GIB: Metric = Metric("mem-available-after-gib");
    /// Metric: free memory before launch.
    pub const MEM_AVAILABLE_BEFORE_GIB: Metric = Metric("mem-available-before-gib");
    /// Metric: the drop between the two.
    pub const MEM_AVAILABLE_DROP_GIB: Metric = Metric("mem-available-drop-gib");
    /// Metric: resident memory of the serve's processes.
    pub const RESIDENT_GIB: Metric = Metric("resident-gib");
}

/// `hard-question`: The configuration battery's hard questions.
pub mod hard_question {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "hard-question";
    /// The row "Configuration battery".
    pub const ROW: Row = Row { title: "Configuration battery", instrument: INSTRUMENT };
}

/// `likelihood`: Bits per character over a held-out corpus.
pub mod likelihood {
    use super::*;

    pub mod bpc;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "likelihood";
    /// The row "Likelihood (bits per character)".
    pub const ROW: Row = Row { title: "Likelihood (bits per character)", instrument: INSTRUMENT };
    /// Metric: total bits.
    pub const BITS: Metric = Metric("bits");
    /// Metric: bits per character.
    pub const BPC: Metric = Metric("bpc");
    /// Metric: characters scored.
    pub const CHARS: Metric = Metric("chars");
    /// Metric: tokens scored.
    pub const SCORED_TOKENS: Metric = Metric("scored-tokens");
    /// Metric: texts scored.
    pub const TEXTS: Metric = Metric("texts");
    /// Metric: tokens not scored.
    pub const UNSCORED_TOKENS: Metric = Metric("unscored-tokens");
    /// Note: a text left out, and why.
    pub const TEXT: Note = Note("text");
}

/// `long-prompt`: Long pastes: answered, refused cleanly or worse.
pub mod long_prompt {
    use super::*;

    /// The values of [`OUTCOME`].
    pub mod outcome {
        /// Answered correctly.
        pub const ANSWERED: &str = "answered";
        /// Answered, wrongly.
        pub const ANSWERED_WRONG: &str = "answered-wrong";
        /// Refused with an error naming the limit.
        pub const REFUSED_CLEANLY: &str = "refused-cleanly";
        /// Refused without naming the limit.
        pub const REFUSED_UNCLEARLY: &str = "refused-unclearly";
        /// The prompt was cut without a word.
        pub const TRUNCATED_SILENTLY: &str = "truncated-silently";
    }

    /// The instrument's name.
    pub const INSTRUMENT: &str = "long-prompt";
    /// The row "Long-prompt robustness".
    pub const ROW: Row = Row { title: "Long-prompt robustness", instrument: INSTRUMENT };
    /// Case group: one paste, `paste::<needle>`.
    pub const PASTE: Group = Group("paste");
    /// Metric: characters pasted.
    pub const PASTE_CHARS: Metric = Metric("paste-chars");
    /// Metric: prompt tokens the server counted.
    pub const PROMPT_TOKENS: Metric = Metric("prompt-tokens");
    /// Metric: seconds to the answer.
    pub const SECONDS: Metric = Metric("seconds");
    /// Metric: time to first token.
    pub const TTFT_MS: Metric = Metric("ttft-ms");
    /// Note: what the paste got (values in `outcome`).
    pub const OUTCOME: Note = Note("outcome");
    /// Note: the refusal the server gave.
    pub const REFUSAL: Note = Note("refusal");
}

/// `media`: Free memory with a media stack loaded, against its budget.
pub mod media {
    use super::*;

    /// The values of [`VERDICT`].
    pub mod verdict {
        /// The media stack fits beside the serve.
        pub const YES: &str = "YES";
        /// It fits once the serve gives up KV cache.
        pub const YES_WITH_KV_TRADE: &str = "YES WITH KV TRADE";
        /// It fits with no room to spare.
        pub const MARGINAL: &str = "MARGINAL";
        /// It does not fit.
        pub const NO: &str = "NO";
    }

    /// The instrument's name.
    pub const INSTRUMENT: &str = "media";
    /// The row "Shares a box with media".
    pub const ROW: Row = Row { title: "Shares a box with media", instrument: INSTRUMENT };
    /// Metric: the media budget.
    pub const BUDGET_GIB: Metric = Metric("budget-gib");
    /// Metric: free memory after the KV trade.
    pub const FREE_AFTER_TRADE_GIB: Metric = Metric("free-after-trade-gib");
    /// Metric: free memory before the media loadout.
    pub const FREE_ALONE_GIB: Metric = Metric("free-alone-gib");
    /// Metric: free memory with the media stack loaded.
    pub const FREE_GIB: Metric = Metric("free-gib");
    /// Metric: KV bytes per token.
    pub const KV_BYTES_PER_TOKEN: Metric = Metric("kv-bytes-per-token");
    /// Metric: KV tokens given up.
    pub const KV_GIVEN_TOKENS: Metric = Metric("kv-given-tokens");
    /// Metric: KV tokens kept.
    pub const KV_KEPT_TOKENS: Metric = Metric("kv-kept-tokens");
    /// Metric: the KV pool, in tokens.
    pub const KV_POOL_TOKENS: Metric = Metric("kv-pool-tokens");
    /// Metric: the media loadout.
    pub const LOADOUT_GIB: Metric = Metric("loadout-gib");
    /// Metric: free memory beyond the budget.
    pub const MARGIN_GIB: Metric = Metric("margin-gib");
    /// Metric: the memory pool's size.
    pub const POOL_TOTAL_GIB: Metric = Metric("pool-total-gib");
    /// Note: the budget's name.
    pub const BUDGET: Note = Note("budget");
    /// Note: where the KV bytes per token came from.
    pub const KV_BYTES_SOURCE: Note = Note("kv-bytes-source");
    /// Note: why no KV trade was possible.
    pub const NO_TRADE: Note = Note("no-trade");
    /// Note: the memory pool read.
    pub const POOL: Note = Note("pool");
    /// Note: YES, YES WITH KV TRADE, MARGINAL or NO.
    pub const VERDICT: Note = Note("verdict");
}

/// `ocr`: Handwritten pages, crossed-out words noticed.
pub mod ocr {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "ocr";
    /// The row "Handwriting OCR".
    pub const ROW: Row = Row { title: "Handwriting OCR", instrument: INSTRUMENT };
    /// Metric: struck words read as live.
    pub const STRUCK_AS_LIVE: Metric = Metric("struck-as-live");
    /// Metric: struck words neither way.
    pub const STRUCK_INDETERMINATE: Metric = Metric("struck-indeterminate");
    /// Metric: struck words noticed.
    pub const STRUCK_NOTICED: Metric = Metric("struck-noticed");
    /// Metric: struck words on the page.
    pub const STRUCK_TOTAL: Metric = Metric("struck-total");
    /// Metric: live words read as struck.
    pub const STRUCK_WRONG: Metric = Metric("struck-wrong");
    /// Metric: word accuracy, percent.
    pub const WORD_ACCURACY: Metric = Metric("word-accuracy");
    /// Metric: word edits against the key.
    pub const WORD_EDITS: Metric = Metric("word-edits");
    /// Metric: word recall, percent.
    pub const WORD_RECALL: Metric = Metric("word-recall");
    /// Metric: words in the key.
    pub const WORDS: Metric = Metric("words");
    /// Metric: words recalled.
    pub const WORDS_RECALLED: Metric = Metric("words-recalled");
}

/// `repro`: The same request, repeated and across a restart.
pub mod repro {
    use super::*;

    /// The value of an identity note that held.
    pub const YES: &str = "yes";
    /// The value of an identity note that did not.
    pub const NO: &str = "no";

    /// The instrument's name.
    pub const INSTRUMENT: &str = "repro";
    /// The row "Reproducibility".
    pub const ROW: Row = Row { title: "Reproducibility", instrument: INSTRUMENT };
    /// Metric: distinct answers.
    pub const DISTINCT_ANSWERS: Metric = Metric("distinct-answers");
    /// Metric: distinct replies byte for byte.
    pub const DISTINCT_REPLIES: Metric = Metric("distinct-replies");
    /// Metric: requests repeated.
    pub const REPEATS: Metric = Metric("repeats");
    /// Note: yes or no.
    pub const ANSWER_IDENTICAL: Note = Note("answer-identical");
    /// Note: yes or no.
    pub const BYTE_IDENTICAL: Note = Note("byte-identical");
    /// Note: yes, no or why not measured.
    pub const RESTART_ANSWER_IDENTICAL: Note = Note("restart-answer-identical");
    /// Note: yes, no or why not measured.
    pub const RESTART_BYTE_IDENTICAL: Note = Note("restart-byte-identical");
}

/// `screenshots`: Screenshots and photos read against a key.
pub mod screenshots {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "screenshots";
    /// The row "Real-world screenshot & photo reading".
    pub const ROW: Row = Row { title: "Real-world screenshot & photo reading", instrument: INSTRUMENT };
    /// Metric: 1 when the model answered.
    pub const ANSWERED: Metric = Metric("answered");
    /// Metric: the reading score, 0, 0.5 or 1.
    pub const SCORE: Metric = Metric("score");
    /// Note: why the reading scored so.
    pub const READING: Note = Note("reading");
}

/// `spec-decode`: Decode with and without a drafter.
pub mod spec_decode {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "spec-decode";
    /// The row "Speculative decoding".
    pub const ROW: Row = Row { title: "Speculative decoding", instrument: INSTRUMENT };

    /// The arms the instrument's suite pairs, as the row reads them.
    pub mod arm {
        use super::super::Arm;

        /// The target without a drafter: the column the pair is filed under.
        pub const BARE: Arm = Arm("bare");
        /// The same target with its drafter.
        pub const DRAFT: Arm = Arm("draft");
    }

    /// Case group: a structured-output task replayed on an arm,
    /// `structured::<task>`; its decode cases are [`workload::DECODE`]'s.
    pub const STRUCTURED: Group = Group("structured");
    /// Metric: mean accepted length.
    pub const ACCEPT_LENGTH: Metric = Metric("accept-length");
    /// Metric: draft tokens accepted.
    pub const ACCEPTED_TOKENS: Metric = Metric("accepted-tokens");
    /// Metric: accepted over drafted.
    pub const DRAFT_ACCEPTANCE: Metric = Metric("draft-acceptance");
    /// Metric: draft tokens proposed.
    pub const DRAFTED_TOKENS: Metric = Metric("drafted-tokens");
    /// Note: bare or draft.
    pub const ARM: Note = Note("arm");
    /// Note: why no acceptance figure.
    pub const DRAFT_ACCEPTANCE_NOTE: Note = Note("draft-acceptance");
}

/// `speed`: Single-stream decode speed by category.
pub mod speed {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "speed";
    /// The row "Prose speed".
    pub const ROW: Row = Row { title: "Prose speed", instrument: INSTRUMENT };
    /// Case group: a task of the agent-shaped workload, `agent::<task>`
    /// (not the row's figure); its decode cases are [`workload::DECODE`]'s.
    pub const AGENT: Group = Group("agent");
}

/// `sustained-load`: open-loop arrivals at offered rates, and the rate the
/// serve holds with the suite's latency objectives met (goodput).
///
/// Cases: `rate::<mix>::<rate>` (one offered rate, [`rate`](sustained_load::rate)) and
/// `sweep::<mix>` (a synchronous baseline, the maximum throughput, then
/// rates between, stopping once the server saturates). A rate case records
/// its figures by these names; a sweep records each point's under
/// [`point`](sustained_load::point) (`point2-ttft-ms-p99`) and the row's
/// figure, [`SUSTAINED_REQ_S`](sustained_load::SUSTAINED_REQ_S), at its top
/// level.
pub mod sustained_load {
    use super::*;

    /// The instrument's name.
    pub const INSTRUMENT: &str = "sustained-load";
    /// The row "Sustained load".
    pub const ROW: Row = Row { title: "Sustained load", instrument: INSTRUMENT };
    /// Case group: one fixed offered rate of one mix, `rate::<mix>::<rate>`.
    pub const RATE: Group = Group("rate");
    /// Case group: a sweep of one mix, `sweep::<mix>`.
    pub const SWEEP: Group = Group("sweep");

    /// The case name of `mix` offered at `req_s` requests per second:
    /// `rate::agent-turn::0_25rps` (a dot is written `_`).
    pub fn rate(mix: &str, req_s: f64) -> GroupCase<RateItem<'_>> {
        RATE.case(RateItem { mix, req_s })
    }

    /// The case name of the sweep of `mix`: `sweep::agent-turn`.
    pub fn sweep(mix: &str) -> GroupCase<&str> {
        SWEEP.case(mix)
    }

    /// The mix of a rate or sweep case name (`agent-turn` for
    /// `rate::agent-turn::0_25rps` and `sweep::agent-turn`).
    pub fn mix_of(case: &str) -> Option<&str> {
        if let Some(item) = RATE.item(case) {
            return item.split_once("::").map(|(mix, _)| mix);
        }
        SWEEP.item(case)
    }

    /// The latency objectives a request must meet to count as good (vLLM's
    /// `--goodput ttft:… tpot:… e2el:…`), in milliseconds: one rule, read
    /// by the instrument when it counts goodput and by `diff` when it
    /// resamples a sweep's requests. Displayed as `ttft <= 2000 ms, tpot
    /// <= 250 ms`.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Objectives {
        /// Time to first token at most.
        pub ttft_ms: Option<f64>,
        /// Time per output token at most.
        pub tpot_ms: Option<f64>,
        /// End-to-end latency at most.
        pub e2e_ms: Option<f64>,
    }

    impl Objectives {
        /// Whether an answered request met every objective, from its time
        /// to first token, its time per output token ([`tpot_ms`]) and its
        /// end-to-end time. A reply of one token has no TPOT and is judged
        /// by the others; a reply with no content chunk has no TTFT and
        /// misses a TTFT objective. A request never answered meets none:
        /// the caller does not ask.
        pub fn met(&self, ttft_ms: Option<f64>, tpot_ms: Option<f64>, total_ms: f64) -> bool {
            let ttft = self.ttft_ms.is_none_or(|max| ttft_ms.is_some_and(|t| t <= max));
            let tpot = self.tpot_ms.is_none_or(|max| tpot_ms.is_none_or(|t| t <= max));
            let e2e = self.e2e_ms.is_none_or(|max| total_ms <= max);
            ttft && tpot && e2e
        }
    }

    impl core::fmt::Display for Objectives {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            let mut first = true;
            for (name, ms) in [("ttft", self.ttft_ms), ("tpot", self.tpot_ms), ("e2el", self.e2e_ms)] {
                if let Some(ms) = ms {
                    if !first {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name} <= {ms} ms")?;
                    first = false;
                }
            }
            Ok(())
        }
    }

    /// A request's latency from its intended send, not from when it went:
    /// `ms` (timed by the host from the send) plus the send lag
    /// (`sent_ms − intended_ms`, never below 0). A request the client sent late is
    /// charged its wait, as a user who meant to send it then would feel
    /// it, so a client that falls behind never hides a queue (coordinated
    /// omission). The instrument's figures and `diff`'s resampling both
    /// take TTFT and end-to-end times this way.
    pub fn since_intended(intended_ms: f64, sent_ms: f64, ms: f64) -> f64 {
        (sent_ms - intended_ms).max(0.0) + ms
    }

    /// Time per output token after the first, `decode_ms / (tokens - 1)`,
    /// where the reply had two tokens or more and a decode time.
    pub fn tpot_ms(decode_ms: Option<f64>, output_tokens: u32) -> Option<f64> {
        let decode = decode_ms?;
        (output_tokens >= 2 && decode > 0.0).then(|| decode / f64::from(output_tokens - 1))
    }

    /// A rate case's item, displayed as `<mix>::<rate>rps`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct RateItem<'a> {
        /// The mix's name.
        pub mix: &'a str,
        /// The offered rate, requests per second.
        pub req_s: f64,
    }

    impl core::fmt::Display for RateItem<'_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "{}::", self.mix)?;
            core::fmt::Write::write_fmt(&mut NoDots(f), format_args!("{}", self.req_s))?;
            f.write_str("rps")
        }
    }

    /// Writes through, a `.` as `_` (case names hold no dots).
    struct NoDots<'a, 'b>(&'a mut core::fmt::Formatter<'b>);

    impl core::fmt::Write for NoDots<'_, '_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            for (i, part) in s.split('.').enumerate() {
                if i > 0 {
                    self.0.write_str("_")?;
                }
                self.0.write_str(part)?;
            }
            Ok(())
        }
    }

    /// A figure or note of point `n` (from 1) of a sweep:
    /// `point<n>-<name>`, e.g. `point3-goodput`.
    pub fn point(n: u32, metric: Metric) -> PointName {
        PointName { n, name: metric.0 }
    }

    /// A note of point `n` of a sweep, named as [`point`] names figures.
    pub fn point_note(n: u32, note: Note) -> PointName {
        PointName { n, name: note.0 }
    }

    /// The point and the figure or note a sweep's name is of
    /// (`(3, "goodput")` for `point3-goodput`), when it is one.
    pub fn point_of(name: &str) -> Option<(u32, &str)> {
        let rest = name.strip_prefix(POINT_PREFIX)?;
        let (n, what) = rest.split_once('-')?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || what.is_empty() {
            return None;
        }
        Some((n.parse().ok()?, what))
    }

    const POINT_PREFIX: &str = "point";

    /// A name of one point of a sweep, displayed as `point<n>-<name>`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct PointName {
        /// The point, from 1 in the order the sweep ran them.
        pub n: u32,
        /// The figure's or note's own name.
        pub name: &'static str,
    }

    impl core::fmt::Display for PointName {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "{POINT_PREFIX}{}-{}", self.n, self.name)
        }
    }

    /// The values of [`KIND`]: what a sweep's point was.
    pub mod kind {
        /// One request at a time (max concurrency 1): the baseline.
        pub const SYNCHRONOUS: &str = "synchronous";
        /// Every request at once: the most the server delivers.
        pub const THROUGHPUT: &str = "throughput";
        /// Open-loop arrivals at a fixed offered rate.
        pub const RATE: &str = "rate";
    }

    /// Metric: the rate a case sustained: on a sweep the highest offered
    /// rate that held (not saturated, not client-bound) with goodput at or
    /// above [`GOODPUT_THRESHOLD`], as its schedule offered it (that
    /// point's [`SCHEDULED_REQ_S`]); on a rate case its own rate, where it
    /// held so, req/s. The row's figure is the highest of a mix's cases.
    pub const SUSTAINED_REQ_S: Metric = Metric("sustained-req-s");
    /// Metric: the goodput a rate must reach to count for the figure, %.
    pub const GOODPUT_THRESHOLD: Metric = Metric("goodput-threshold");
    /// Metric: the requests per second offered (the schedule's nominal rate).
    pub const OFFERED_REQ_S: Metric = Metric("offered-req-s");
    /// Metric: the rate the seeded schedule itself came to over the
    /// measured requests (intended send times), req/s.
    pub const SCHEDULED_REQ_S: Metric = Metric("scheduled-req-s");
    /// Metric: completions per second the server achieved, between the
    /// first and the last measured completion.
    pub const ACHIEVED_REQ_S: Metric = Metric("achieved-req-s");
    /// Metric: output tokens of every answered measured request over the
    /// window, tok/s.
    pub const OUTPUT_TOK_S: Metric = Metric("output-tok-s");
    /// Metric: the mean of each answered request's decode rate, tok/s.
    pub const PER_REQUEST_TOK_S: Metric = Metric("per-request-tok-s");
    /// Metric: the share of measured requests that met every objective, %.
    pub const GOODPUT: Metric = Metric("goodput");
    /// Metric: requests that met every objective, per second: the achieved
    /// rate ([`ACHIEVED_REQ_S`]) times the share of answered requests that
    /// met them, so it is taken over the same window and never above it.
    pub const GOODPUT_REQ_S: Metric = Metric("goodput-req-s");
    /// Metric: time to first token, median.
    pub const TTFT_MS_P50: Metric = Metric("ttft-ms-p50");
    /// Metric: time to first token, 90th percentile.
    pub const TTFT_MS_P90: Metric = Metric("ttft-ms-p90");
    /// Metric: time to first token, 99th percentile.
    pub const TTFT_MS_P99: Metric = Metric("ttft-ms-p99");
    /// Metric: time per output token after the first, median.
    pub const TPOT_MS_P50: Metric = Metric("tpot-ms-p50");
    /// Metric: time per output token, 90th percentile.
    pub const TPOT_MS_P90: Metric = Metric("tpot-ms-p90");
    /// Metric: time per output token, 99th percentile.
    pub const TPOT_MS_P99: Metric = Metric("tpot-ms-p99");
    /// Metric: the gap between two content chunks, median.
    pub const ITL_MS_P50: Metric = Metric("itl-ms-p50");
    /// Metric: the gap between two content chunks, 90th percentile.
    pub const ITL_MS_P90: Metric = Metric("itl-ms-p90");
    /// Metric: the gap between two content chunks, 99th percentile.
    pub const ITL_MS_P99: Metric = Metric("itl-ms-p99");
    /// Metric: a request's end-to-end latency, median.
    pub const E2E_MS_P50: Metric = Metric("e2e-ms-p50");
    /// Metric: end-to-end latency, 90th percentile.
    pub const E2E_MS_P90: Metric = Metric("e2e-ms-p90");
    /// Metric: end-to-end latency, 99th percentile.
    pub const E2E_MS_P99: Metric = Metric("e2e-ms-p99");
    /// Metric: the objective on time to first token.
    pub const TTFT_OBJECTIVE_MS: Metric = Metric("ttft-objective-ms");
    /// Metric: the objective on time per output token.
    pub const TPOT_OBJECTIVE_MS: Metric = Metric("tpot-objective-ms");
    /// Metric: the objective on end-to-end latency.
    pub const E2E_OBJECTIVE_MS: Metric = Metric("e2e-objective-ms");
    /// Metric: measured requests sent (warm-up excluded).
    pub const REQUESTS: Metric = Metric("requests");
    /// Metric: measured requests answered.
    pub const ANSWERED_REQUESTS: Metric = Metric("answered-requests");
    /// Metric: measured requests lost (never answered): counted apart,
    /// never in a latency.
    pub const LOST_REQUESTS: Metric = Metric("lost-requests");
    /// Metric: measured requests the server refused (4xx).
    pub const REJECTED_REQUESTS: Metric = Metric("rejected-requests");
    /// Metric: warm-up requests sent first and left out of every figure.
    pub const WARMUP_REQUESTS: Metric = Metric("warmup-requests");
    /// Metric: output tokens of the answered measured requests.
    pub const OUTPUT_TOKENS: Metric = Metric("output-tokens");
    /// Metric: the mean prompt tokens of an answered request.
    pub const PROMPT_TOKENS_MEAN: Metric = Metric("prompt-tokens-mean");
    /// Metric: from the first measured send to the last measured reply.
    pub const WINDOW_MS: Metric = Metric("window-ms");
    /// Metric: the 99th percentile of actual send after intended send,
    /// as the host measured it.
    pub const SEND_LAG_P99_MS: Metric = Metric("send-lag-p99-ms");
    /// Metric: the largest send lag of a measured request.
    pub const SEND_LAG_MAX_MS: Metric = Metric("send-lag-max-ms");
    /// Metric: the cap on requests in flight, where one was set.
    pub const MAX_CONCURRENCY: Metric = Metric("max-concurrency");
    /// Metric: the gamma arrival process's burstiness factor.
    pub const BURSTINESS: Metric = Metric("burstiness");
    /// Metric: most requests the server ran at once in the window.
    pub const SERVER_RUNNING_MAX: Metric = Metric("server-running-max");
    /// Metric: mean requests the server ran in the window.
    pub const SERVER_RUNNING_MEAN: Metric = Metric("server-running-mean");
    /// Metric: most requests the server had waiting in the window.
    pub const SERVER_WAITING_MAX: Metric = Metric("server-waiting-max");
    /// Metric: the server's live-load readings in the window.
    pub const SERVER_SAMPLES: Metric = Metric("server-samples");
    /// Metric: 1 when the rate saturated the server (achieved below 90%
    /// of the schedule, or lost past the budget), else 0.
    pub const SATURATED: Metric = Metric("saturated");
    /// Metric: on a sweep, the offered rate at which the server saturated.
    pub const SATURATED_AT_REQ_S: Metric = Metric("saturated-at-req-s");
    /// Metric: on a sweep, the synchronous baseline's achieved rate.
    pub const SYNCHRONOUS_REQ_S: Metric = Metric("synchronous-req-s");
    /// Metric: on a sweep, the all-at-once point's achieved rate.
    pub const THROUGHPUT_REQ_S: Metric = Metric("throughput-req-s");
    /// Metric: on a sweep, the points run.
    pub const POINTS: Metric = Metric("points");
    /// Note: the mix of prompt and output lengths.
    pub const MIX: Note = Note("mix");
    /// Note: the arrival process: `constant`, `poisson` or `gamma(<b>)`.
    pub const ARRIVAL: Note = Note("arrival");
    /// Note: the arrival schedule's seed.
    pub const SEED: Note = Note("seed");
    /// Note: the objectives goodput is judged by, in words.
    pub const OBJECTIVES: Note = Note("objectives");
    /// Note: a point's kind (values in [`kind`]).
    pub const KIND: Note = Note("kind");
    /// Note: why the host marked the rate client-bound; its figures are
    /// then not the server's and are not recorded.
    pub const CLIENT_BOUND: Note = Note("client-bound");
    /// Note: whether and why the rate saturated the server.
    pub const SATURATION: Note = Note("saturation");
    /// Note: the lost and refused requests, by reason.
    pub const LOST: Note = Note("lost");
    /// Note: where the server's running and waiting counts came from, or
    /// n/a with why.
    pub const SERVER_LOAD: Note = Note("server-load");
    /// Note: where the token counts came from.
    pub const TOKEN_SOURCE: Note = Note("token-source");
    /// Note: on a sweep, how the row's figure was chosen, or why there is
    /// none.
    pub const SUSTAINED: Note = Note("sustained");
    /// Note: on a sweep, the rates not run once the server saturated.
    pub const NOT_RUN: Note = Note("not-run");
}

/// Decode figures and cases the speed-like instruments share
/// (`sparktest-workload`): each figure with its `-min`, `-max` and `-stdev`
/// over the repetitions.
pub mod workload {
    use super::*;

    /// Case group: one prompt decoded single-stream, `decode::<category>`
    /// (`speed`, and `spec-decode` on each arm).
    pub const DECODE: Group = Group("decode");
    /// Metric: mean decode rate over the repetitions, tok/s.
    pub const DECODE_TOK_S: Metric = Metric("decode-tok-s");
    /// Metric: the slowest repetition's decode rate.
    pub const DECODE_TOK_S_MIN: Metric = Metric("decode-tok-s-min");
    /// Metric: the fastest repetition's decode rate.
    pub const DECODE_TOK_S_MAX: Metric = Metric("decode-tok-s-max");
    /// Metric: the decode rate's standard deviation over the repetitions.
    pub const DECODE_TOK_S_STDEV: Metric = Metric("decode-tok-s-stdev");
    /// Metric: each repetition's decode rate (`decode-tok-s-rep1` …).
    pub const DECODE_TOK_S_REP: Numbered = Numbered("decode-tok-s-rep");
    /// Metric: each repetition's time to first token (`ttft-ms-rep1` …).
    pub const TTFT_MS_REP: Numbered = Numbered("ttft-ms-rep");
    /// Metric: prompt tokens over time to first token, tok/s.
    pub const INPUT_TOK_S: Metric = Metric("input-tok-s");
    /// Metric: the server's own decode rate, where it reports one.
    pub const SERVER_DECODE_TOK_S: Metric = Metric("server-decode-tok-s");
    /// Metric: time to first token, ms.
    pub const TTFT_MS: Metric = Metric("ttft-ms");
    /// Metric: completion tokens.
    pub const COMPLETION_TOKENS: Metric = Metric("completion-tokens");
    /// Note: why the input rate is what it is, or n/a.
    pub const INPUT_TOK_S_NOTE: Note = Note("input-tok-s");
    /// Note: the phase a lost or failed call was in.
    pub const PHASE: Note = Note("phase");
    /// Note: where the token counts came from.
    pub const TOKEN_SOURCE: Note = Note("token-source");
    /// Note: how many repetitions were valid.
    pub const VALID: Note = Note("valid");
    /// Note: the prompt's category.
    pub const CATEGORY: Note = Note("category");
}

/// What the SDK notes on an image request the engine refused.
pub mod vision {
    use super::*;

    /// Note: `none` (no vision in this build), `refused` (refused for
    /// another reason) or `read`.
    pub const VISION: Note = Note("vision");
    /// Note: what the engine's probe said of its modalities.
    pub const VISION_PROBE: Note = Note("vision-probe");
    /// The value of [`VISION`] for a build that cannot read images.
    pub const NONE: &str = "none";
    /// The value of [`VISION`] for a request refused for another reason.
    pub const REFUSED: &str = "refused";
    /// The value of [`VISION`] for images read.
    pub const READ: &str = "read";
}

/// What the host records about a target or hands an instrument as a
/// server fact.
pub mod facts {
    use super::*;

    /// The KV pool the engine reports, in tokens.
    pub const KV_POOL_TOKENS: Fact = Fact("kv_pool_tokens");
    /// The context each request gets, in tokens.
    pub const CONTEXT_PER_REQUEST: Fact = Fact("context_per_request");
    /// The engine's slots (parallel sequences).
    pub const SLOTS: Fact = Fact("slots");
    /// Whether the engine reports vision: `true` or `false`.
    pub const VISION: Fact = Fact("vision");
    /// The engine's reported modalities, as JSON (llama.cpp `/props`).
    pub const MODALITIES: Fact = Fact("modalities");
    /// The serve's resident bytes, for the footprint instrument.
    pub const FOOTPRINT_RSS_BYTES: Fact = Fact("footprint.rss_bytes");
    /// The serve's GPU process memory, MiB.
    pub const FOOTPRINT_GPU_PROCESS_MEMORY_MIB: Fact = Fact("footprint.gpu_process_memory_mib");
    /// Free memory before the serve was launched, bytes.
    pub const FOOTPRINT_MEM_AVAILABLE_BEFORE_BYTES: Fact = Fact("footprint.mem_available_before_bytes");
    /// Free memory with the serve loaded and idle, bytes.
    pub const FOOTPRINT_MEM_AVAILABLE_AFTER_BYTES: Fact = Fact("footprint.mem_available_after_bytes");
    /// Why the footprint was not measured.
    pub const FOOTPRINT_NOT_MEASURED: Fact = Fact("footprint.not_measured");
    /// The footprint facts above, which interface 0.3.0 gives its guests
    /// typed instead (they stay in the manifest's facts).
    pub const FOOTPRINT: &[Fact] = &[
        FOOTPRINT_RSS_BYTES,
        FOOTPRINT_GPU_PROCESS_MEMORY_MIB,
        FOOTPRINT_MEM_AVAILABLE_BEFORE_BYTES,
        FOOTPRINT_MEM_AVAILABLE_AFTER_BYTES,
        FOOTPRINT_NOT_MEASURED,
    ];
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn a_numbered_family_matches_only_its_numbered_names() {
        let reps = workload::DECODE_TOK_S_REP;
        assert!(reps.matches("decode-tok-s-rep1"));
        assert!(reps.matches("decode-tok-s-rep12"));
        assert!(!reps.matches("decode-tok-s-rep"));
        assert!(!reps.matches("decode-tok-s-repx"));
        assert!(!reps.matches("decode-tok-s"));
    }

    #[test]
    fn a_group_holds_only_names_that_begin_with_it_and_two_colons() {
        let decode = workload::DECODE;
        assert_eq!(decode.item("decode::code"), Some("code"));
        assert_eq!(decode.item("decode::a::b"), Some("a::b"));
        assert_eq!(decode.item("decode::"), Some(""));
        assert!(!decode.holds("decoder::code"));
        assert!(!decode.holds("decode:code"));
        assert!(!decode.holds("agent::decode::code"));
        assert_eq!(decode.case("prose").to_string(), "decode::prose");
    }

    #[test]
    fn a_concurrency_level_is_written_and_read_back() {
        assert_eq!(concurrency::level(2).to_string(), "level::c2");
        assert_eq!(concurrency::level_of("level::c16"), Some("16"));
        assert_eq!(concurrency::level_of("level::x2"), None);
        assert_eq!(concurrency::level_of("paste::c2"), None);
    }

    #[test]
    fn a_sustained_load_case_and_point_are_written_and_read_back() {
        use sustained_load::*;
        assert_eq!(rate("agent-turn", 0.25).to_string(), "rate::agent-turn::0_25rps");
        assert_eq!(rate("long-prefill", 2.0).to_string(), "rate::long-prefill::2rps");
        assert_eq!(sweep("agent-turn").to_string(), "sweep::agent-turn");
        assert_eq!(mix_of("rate::agent-turn::0_25rps"), Some("agent-turn"));
        assert_eq!(mix_of("sweep::long-prefill"), Some("long-prefill"));
        assert_eq!(mix_of("level::c2"), None);
        assert_eq!(point(3, GOODPUT).to_string(), "point3-goodput");
        assert_eq!(point_note(12, KIND).to_string(), "point12-kind");
        assert_eq!(point_of("point3-ttft-ms-p99"), Some((3, "ttft-ms-p99")));
        for not_a_point in ["point-goodput", "pointx-goodput", "point3", "point3-", "goodput"] {
            assert_eq!(point_of(not_a_point), None, "{not_a_point}");
        }
    }

    #[test]
    fn a_request_meets_the_objectives_by_one_rule() {
        use sustained_load::{Objectives, tpot_ms};
        let o = Objectives { ttft_ms: Some(500.0), tpot_ms: Some(50.0), e2e_ms: None };
        assert!(o.met(Some(100.0), tpot_ms(Some(90.0), 10), 1000.0));
        assert!(!o.met(Some(900.0), None, 1000.0), "TTFT too long");
        assert!(!o.met(None, None, 1000.0), "no first token misses a TTFT objective");
        assert!(!o.met(Some(100.0), tpot_ms(Some(720.0), 10), 1000.0), "TPOT 80 ms");
        // One token, or no decode time: no TPOT, judged by the rest.
        assert_eq!((tpot_ms(Some(80.0), 1), tpot_ms(Some(0.0), 5), tpot_ms(None, 5)), (None, None, None));
        let e2e = Objectives { e2e_ms: Some(150.0), ..Objectives::default() };
        assert!(e2e.met(None, None, 150.0) && !e2e.met(None, None, 150.5));
        assert_eq!(o.to_string(), "ttft <= 500 ms, tpot <= 50 ms");
        assert_eq!(e2e.to_string(), "e2el <= 150 ms");
        assert_eq!(Objectives::default().to_string(), "");
    }

    #[test]
    fn an_arm_is_told_by_its_name() {
        assert!(spec_decode::arm::BARE.is(Some("bare")));
        assert!(!spec_decode::arm::BARE.is(Some("draft")));
        assert!(!spec_decode::arm::DRAFT.is(None));
    }
}
