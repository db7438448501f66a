//! Foreign text as it may be printed: the one printer of every string that
//! came from a server (a model name, an error body), a suite's data or a
//! measurements folder (case ids, reasons, file names, campaign ids), on a
//! terminal, in a CI log, in JUnit or in `board.md`'s plain text.
//!
//! Such a string may hold ESC and BEL (a terminal's escape sequences: a
//! title set, the screen cleared, a link that says one thing and goes to
//! another), a bidirectional override (text that reads other than it is),
//! or a newline followed by `::error::` (a GitHub workflow command: the
//! runner reads any line that starts with `::`, after its leading spaces).
//! [`shown`] writes every control character as an escape, and every
//! newline it keeps is followed by [`CONTINUED`], so that no line the
//! foreign text breaks starts with its own words.

use std::borrow::Cow;

/// What follows every newline kept in foreign text: a line it breaks
/// starts with this, never with the text (the GitHub runner trims leading
/// spaces, so the bar is what makes it safe).
pub const CONTINUED: &str = "  | ";

/// Whether `c` is printed as an escape: a control character (C0 but tab
/// and newline, DEL, C1), a bidirectional embedding, override or isolate,
/// and the line and paragraph separators.
fn escaped(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// `text` as it may be printed: each control character (ESC, BEL, CR, NUL,
/// DEL, the C1 range), bidirectional control and line separator written
/// `\u{1b}`; each newline kept, with [`CONTINUED`] after it. Text with none
/// is returned as it is, unallocated.
pub fn shown(text: &str) -> Cow<'_, str> {
    escape(text, &["\n", CONTINUED])
}

/// `text` on one line: as [`shown`], and each newline written `\n`. For a
/// field that is one line by its nature (a heading, a name, an attribute).
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, &["\\n"])
}

/// `text` with each character [`escaped`] written `\u{..}` and each newline
/// written as the pieces of `newline`; borrowed when it holds neither.
fn escape<'a>(text: &'a str, newline: &[&str]) -> Cow<'a, str> {
    if !text.chars().any(|c| c == '\n' || escaped(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => newline.iter().for_each(|piece| out.push_str(piece)),
            c if escaped(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` on one line ([`one_line`]) where the printer starts a line with
/// it (a heading): after [`CONTINUED`]'s bar when it would begin with `:`
/// or `#`, as a workflow command or a log's comment does.
pub fn starting_a_line(text: &str) -> Cow<'_, str> {
    let t = one_line(text);
    if t.trim_start().starts_with([':', '#']) { Cow::Owned(format!("{}{t}", CONTINUED.trim_start())) } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_no_line_starts_with_foreign_text() {
        assert!(matches!(shown("plain text, tabs\tand ünïcode"), Cow::Borrowed(_)));
        let hostile = "model\u{1b}]0;pwned\u{7}\u{1b}[2J\r::warning::x\n::error::gotcha\u{202e}txt.exe\u{85}\u{2028}";
        let said = shown(hostile);
        assert_eq!(
            said,
            "model\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{d}::warning::x\n  | ::error::gotcha\\u{202e}txt.exe\\u{85}\\u{2028}"
        );
        for line in said.lines().skip(1) {
            assert!(line.starts_with(CONTINUED), "{line:?}");
            assert!(!line.trim_start().starts_with("::"), "{line:?}");
        }
        assert!(!said.chars().any(|c| c.is_control() && c != '\n'), "{said:?}");
        assert_eq!(one_line("a\nb\u{1b}"), "a\\nb\\u{1b}");
        assert!(!one_line(hostile).contains('\n'));
        assert_eq!(starting_a_line("::error::x"), "| ::error::x");
        assert_eq!(starting_a_line(" # note"), "|  # note");
        assert!(matches!(starting_a_line("Prose speed"), Cow::Borrowed(_)));
    }
}
