//! A declared row read field by field, the cases that feed it, and the
//! declarations of many runs settled into one list.

use sparktest_record::{CaseRecord, FigureKind, RowDeclaration, Standing};

/// The titles a declaration may not take: the built-in rows, and the
/// seed's judged row.
pub const BUILT_IN_TITLES: &[&str] = &{
    let rows = crate::coded::ROWS;
    let mut titles = [""; crate::coded::ROWS.len() + 1];
    let mut i = 0;
    while i < rows.len() {
        titles[i] = match &rows[i].title {
            std::borrow::Cow::Borrowed(t) => *t,
            std::borrow::Cow::Owned(_) => panic!("a built-in row's title is a literal"),
        };
        i += 1;
    }
    titles[i] = "Fine-tune path";
    titles
};

/// A title as people read it, for every comparison of titles: NFKC, case
/// folded, default-ignorable code points (zero-width spaces and joiners,
/// soft hyphens, variation selectors, bidirectional marks) removed, every
/// run of white space (a no-break space, an ideographic space) one space,
/// trimmed, and then the confusable skeleton of Unicode TR39 (a Cyrillic
/// `о` reads as a Latin `o`). Two titles with one key are one row to a
/// reader, and so to the board.
pub fn title_key(title: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let folded: String = title
        .nfkc()
        .filter(|c| !default_ignorable(*c))
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .nfkc()
        .filter(|c| !default_ignorable(*c))
        .collect();
    let spaced = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    unicode_security::confusable_detection::skeleton(&spaced).collect()
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt,
/// Unicode 16): drawn as nothing, so a title with one reads as one without.
fn default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// The built-in title a title reads as ([`title_key`]), if any.
fn built_in_like(title: &str) -> Option<&'static str> {
    static KEYS: std::sync::OnceLock<Vec<(String, &'static str)>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| BUILT_IN_TITLES.iter().map(|t| (title_key(t), *t)).collect());
    let key = title_key(title);
    keys.iter().find(|(k, _)| *k == key).map(|(_, t)| *t)
}

/// A field of a declaration that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field, as the suite file spells it.
    pub field: &'static str,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn refuse(field: &'static str, message: impl Into<String>) -> Result<(), FieldError> {
    Err(FieldError { field, message: message.into() })
}

fn plain(field: &'static str, text: &str) -> Result<(), FieldError> {
    if text.trim().is_empty() {
        return refuse(field, "must not be empty");
    }
    if text.trim() != text || text.chars().any(char::is_control) {
        return refuse(field, format!("{text:?} has leading or trailing space or a control character"));
    }
    Ok(())
}

/// Whether a declaration can be used: its first unusable field, else Ok.
/// What it reads must be named, its figure must be one it can compute,
/// and its title must not be a built-in row's.
pub fn check(d: &RowDeclaration) -> Result<(), FieldError> {
    plain("title", &d.title)?;
    if BUILT_IN_TITLES.contains(&d.title.as_str()) {
        return refuse("title", format!("{:?} is a built-in row's title; give the row its own", d.title));
    }
    if let Some(like) = built_in_like(&d.title) {
        return refuse(
            "title",
            format!(
                "{:?} reads as the built-in row {like:?} (titles are compared as people read them: case, width, \
                 spacing, invisible and look-alike characters aside); give the row its own",
                d.title
            ),
        );
    }
    plain("instrument", &d.instrument)?;
    match (&d.metric, d.figure.needs_metric()) {
        (None, true) => {
            return refuse("metric", format!("figure {:?} is computed from a metric: name it", String::from(d.figure)));
        }
        (Some(_), false) => return refuse("metric", "a pass-share figure counts items passed; it reads no metric"),
        (Some(m), true) => plain("metric", m)?,
        (None, false) => {}
    }
    if d.standing == Standing::Fraction && d.figure != FigureKind::PassShare {
        return refuse("standing", "fraction (10 × the share) is for a pass-share figure; use relative");
    }
    if !(0.0..1.0).contains(&d.tie_margin) {
        return refuse("tie_margin", format!("{} is not in [0, 1)", d.tie_margin));
    }
    for t in &d.tags {
        plain("tags", t)?;
    }
    for g in &d.groups {
        plain("groups", g)?;
    }
    if d.declared_by.chars().any(char::is_control) || d.methodology.chars().any(|c| c.is_control() && c != '\n') {
        return refuse("declared_by", "holds a control character");
    }
    Ok(())
}

/// Whether a case feeds a declared row: its instrument's, carrying one of
/// the row's tags (when it names some), of one of its groups (when it
/// names some).
pub fn feeds<C>(d: &RowDeclaration, c: &CaseRecord<C>) -> bool {
    c.instrument == d.instrument
        && (d.tags.is_empty() || c.tags.iter().any(|t| d.tags.contains(t)))
        && (d.groups.is_empty() || c.case.split_once("::").is_some_and(|(g, _)| d.groups.iter().any(|x| x == g)))
}

/// Whether `d` is declared by the suite named `ran` (the suite its file
/// ran): the only declarations a file may carry.
pub fn declared_by(d: &RowDeclaration, ran: &str) -> bool {
    suite_of(&d.declared_by) == ran
}

/// The suite name of `name@version`.
fn suite_of(declared_by: &str) -> &str {
    declared_by.rsplit_once('@').map_or(declared_by, |(name, _)| name)
}

/// The rows kept of many runs' declarations, and a warning for each
/// declaration left out ([`settle`]).
#[derive(Debug, Default, PartialEq)]
pub struct Settled {
    /// The rows, in first-seen order.
    pub rows: Vec<RowDeclaration>,
    /// Each declaration left out, in words naming where it was read.
    pub left_out: Vec<String>,
}

/// One declaration as a file gives it: the declaration, the suite the file
/// itself ran (its manifest's `suite.name`), and where it was read (for
/// messages).
pub type Declared<'a> = (&'a RowDeclaration, &'a str, String);

/// The declarations of many runs, in the runs' start order, as one list in
/// first-seen order. A file's claims are checked against the file: a
/// declaration counts only when it is declared by the suite the file ran
/// (a file of another suite saying it is `declared_by` the victim's suite
/// is left out). The same suite's declaration of a title in a later-started
/// run replaces the earlier (the suite changed its row); a later
/// declaration of a title another suite declares (or the same suite for
/// another instrument) is left out, naming both places, and the earlier
/// stands: one crafted file cannot take the board away. Never merged. A
/// declaration that fails [`check`] (a built-in title, a field out of
/// range: a file the host did not write, or another tool's) is left out
/// too; the host says why.
pub fn settle<'a>(declared: impl IntoIterator<Item = Declared<'a>>) -> Settled {
    let mut out: Vec<(RowDeclaration, String)> = Vec::new();
    let mut left_out = Vec::new();
    // Title → its place in `out`: a folder of many runs (or a crafted file
    // of many rows) is settled in n log n, not by a scan per declaration.
    let mut at: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (d, ran, place) in declared {
        if check(d).is_err() {
            continue;
        }
        if !declared_by(d, ran) {
            left_out.push(format!(
                "{place}: row {:?} is left out: it says it is declared by {}, but the file ran the suite {ran:?}",
                d.title,
                or_unnamed(&d.declared_by)
            ));
            continue;
        }
        let key = title_key(&d.title);
        match at.get(&key).map(|&i| &mut out[i]) {
            None => {
                at.insert(key, out.len());
                out.push((d.clone(), place));
            }
            Some((o, _)) if o == d => {}
            Some((o, first)) => {
                if suite_of(&o.declared_by) != suite_of(&d.declared_by) || o.instrument != d.instrument {
                    let like = if o.title == d.title { String::new() } else { format!(" as {:?}", o.title) };
                    left_out.push(format!(
                        "{place}: row {:?} ({}, instrument {}) is left out: {first} declares it first{like} ({}, \
                         instrument {}); a title names one row: rename one of them",
                        d.title,
                        or_unnamed(&d.declared_by),
                        d.instrument,
                        or_unnamed(&o.declared_by),
                        o.instrument,
                    ));
                    continue;
                }
                *o = d.clone();
                *first = place;
            }
        }
    }
    Settled { rows: out.into_iter().map(|(d, _)| d).collect(), left_out }
}

fn or_unnamed(declared_by: &str) -> &str {
    if declared_by.is_empty() { "suite not named" } else { declared_by }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparktest_record::{Better, Outcome};

    pub(crate) fn row(title: &str, figure: FigureKind, metric: Option<&str>) -> RowDeclaration {
        RowDeclaration {
            title: title.into(),
            instrument: "capitals".into(),
            methodology: String::new(),
            figure,
            metric: metric.map(Into::into),
            unit: String::new(),
            better: Better::Higher,
            standing: Standing::Relative,
            tie_margin: 0.0,
            tags: vec![],
            groups: vec![],
            declared_by: "capitals-example@0.1.0".into(),
        }
    }

    #[test]
    fn a_declaration_is_refused_by_its_first_unusable_field() {
        let field = |d: &RowDeclaration| check(d).map_err(|e| e.field);
        assert_eq!(field(&row("Capital cities", FigureKind::PassShare, None)), Ok(()));
        assert_eq!(field(&row("Prose speed", FigureKind::PassShare, None)), Err("title"));
        assert_eq!(field(&row(" padded", FigureKind::PassShare, None)), Err("title"));
        assert_eq!(field(&row("Capital cities", FigureKind::Mean, None)), Err("metric"));
        assert_eq!(field(&row("Capital cities", FigureKind::PassShare, Some("ms"))), Err("metric"));
        let mut d = row("Capital cities", FigureKind::Mean, Some("completion-tokens"));
        d.standing = Standing::Fraction;
        assert_eq!(field(&d), Err("standing"));
        d.standing = Standing::Relative;
        d.tie_margin = 1.0;
        assert_eq!(field(&d), Err("tie_margin"));
        d.tie_margin = 0.02;
        d.instrument = String::new();
        assert_eq!(field(&d), Err("instrument"));
    }

    #[test]
    fn cases_feed_a_row_by_instrument_tag_and_group() {
        let case = |instrument: &str, name: &str, tags: &[&str]| CaseRecord::<()> {
            instrument: instrument.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..crate::test_case::case(name, Outcome::Pass, None)
        };
        let mut d = row("Capital cities", FigureKind::PassShare, None);
        assert!(feeds(&d, &case("capitals", "country::france", &[])));
        assert!(!feeds(&d, &case("speed", "country::france", &[])));
        d.groups = vec!["country".into()];
        d.tags = vec!["europe".into()];
        assert!(feeds(&d, &case("capitals", "country::france", &["europe"])));
        assert!(!feeds(&d, &case("capitals", "country::peru", &["americas"])));
        assert!(!feeds(&d, &case("capitals", "city::paris", &["europe"])));
    }

    #[test]
    fn one_title_from_two_suites_keeps_the_first_naming_both_and_a_suites_update_replaces_its_row() {
        let a = row("Capital cities", FigureKind::PassShare, None);
        let mut newer = a.clone();
        newer.declared_by = "capitals-example@0.2.0".into();
        newer.methodology = "now with more countries".into();
        let ran = "capitals-example";
        let settled =
            settle([(&a, ran, "run-1".to_string()), (&a, ran, "run-2".into()), (&newer, ran, "run-3".into())]);
        assert_eq!(settled, Settled { rows: vec![newer.clone()], left_out: vec![] });

        let mut other = a.clone();
        other.declared_by = "geography@1.0.0".into();
        let settled = settle([(&a, ran, "run-1".to_string()), (&other, "geography", "run-2".into())]);
        assert_eq!(settled.rows, vec![a.clone()], "the first stands");
        let [said] = settled.left_out.as_slice() else { panic!("{:?}", settled.left_out) };
        assert!(
            said.starts_with("run-2: row \"Capital cities\" (geography@1.0.0, instrument capitals) is left out"),
            "{said}"
        );
        assert!(said.contains("run-1 declares it first (capitals-example@0.1.0"), "{said}");

        let built_in = row("Prose speed", FigureKind::PassShare, None);
        let settled = settle([(&built_in, ran, "run-9".to_string()), (&a, ran, "run-1".into())]);
        assert_eq!(settled.rows, vec![a.clone()]);
    }

    #[test]
    fn titles_are_compared_as_people_read_them() {
        let real = "Prose speed";
        for like in [
            "Prose\u{200b} speed",      // a zero-width space
            "Prose\u{a0}speed",         // a no-break space
            "Pr\u{43e}se speed",        // a Cyrillic о
            "\u{ff30}rose speed",       // a full-width P
            "Pro\u{200d}se speed",      // a zero-width joiner
            "Prose  speed",             // a double space
            "prose SPEED",              // another case
            "Prose\u{3000}speed\u{ad}", // an ideographic space, a soft hyphen
        ] {
            assert_eq!(title_key(like), title_key(real), "{like:?}");
            let err = check(&row(like, FigureKind::PassShare, None)).unwrap_err();
            assert_eq!(err.field, "title", "{like:?}");
            assert!(err.message.contains("reads as the built-in row \"Prose speed\""), "{like:?}: {err}");
        }
        assert_ne!(title_key("Prose speed"), title_key("Prose speedup"));
        assert!(check(&row("Capital cities", FigureKind::PassShare, None)).is_ok());
        // Two declared titles that read alike are one title: the first stands.
        let a = row("Capital cities", FigureKind::PassShare, None);
        let mut b = row("Capital\u{a0}Cities", FigureKind::PassShare, None);
        b.declared_by = "geography@1.0.0".into();
        let settled = settle([(&a, "capitals-example", "run-1".to_string()), (&b, "geography", "run-2".into())]);
        assert_eq!(settled.rows, vec![a.clone()]);
        assert!(
            settled.left_out[0].contains("run-1 declares it first as \"Capital cities\""),
            "{:?}",
            settled.left_out
        );
    }

    #[test]
    fn a_declaration_counts_only_for_the_suite_its_file_ran() {
        let a = row("Capital cities", FigureKind::PassShare, None);
        // A later file of another suite that says it is the victim's, with
        // its "better" flipped: left out, the victim's row stands.
        let mut forged = a.clone();
        forged.better = Better::Lower;
        let settled = settle([(&a, "capitals-example", "run-1".to_string()), (&forged, "geography", "run-2".into())]);
        assert_eq!(settled.rows, vec![a.clone()]);
        assert_eq!(
            settled.left_out,
            ["run-2: row \"Capital cities\" is left out: it says it is declared by capitals-example@0.1.0, but the \
              file ran the suite \"geography\""]
        );
        // Alone, it declares nothing.
        assert_eq!(settle([(&forged, "geography", "run-2".to_string())]).rows, vec![]);
    }
}
