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

// One module per instrument, named as the instrument, each in its own
// file (`a-bench` is `a_bench.rs`), as `sparktest-rows` has one per
// built-in row.
pub mod a_bench;
pub mod adversarial;
pub mod compliance;
pub mod concurrency;
pub mod context;
pub mod corruption;
pub mod footprint;
pub mod hard_question;
pub mod likelihood;
pub mod long_prompt;
pub mod media;
pub mod ocr;
pub mod repro;
pub mod screenshots;
pub mod spec_decode;
pub mod speed;
pub mod sustained_load;

// What several share, and the host's own records.
pub mod campaign;
pub mod facts;
pub mod vision;
pub mod workload;

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
