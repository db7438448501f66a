//! Text for sbatch, from templates with named slots (`templates/*.sbatch`),
//! every slot written through [`write`]. A campaign file, a path or a name
//! is input, never script: sbatch reads its `#SBATCH` lines itself and
//! stops at the first line that is not a comment, so a value that ended
//! its line would both run as shell and drop every resource after it.

use crate::error::Error;

/// The array job's template: a task per configuration.
pub const ARRAY: &str = include_str!("templates/array.sbatch");
/// The board job's template.
pub const BOARD: &str = include_str!("templates/board.sbatch");

/// A slot's value and how it is written.
#[derive(Debug, Clone)]
pub enum Slot {
    /// Text inside a `#` comment line: control characters escaped
    /// (`\n`), so it cannot end the comment.
    Comment(String),
    /// Comment lines, one each (a template line that is this slot alone).
    CommentLines(Vec<String>),
    /// The value of an `#SBATCH` option, which sbatch parses; `key` says
    /// where it came from, for the error that refuses it.
    Value {
        /// The key or flag that gave it (`campaign.toml: campaign.slurm.mem`).
        key: String,
        /// What the user gave.
        value: String,
    },
    /// Whole `#SBATCH` lines (a template line that is this slot alone).
    Options(Vec<SbatchOption>),
    /// One word for bash.
    Word(String),
    /// Shell lines the user wrote to run (`setup`), one line each.
    Shell {
        /// The key that gave them.
        key: String,
        /// The lines.
        lines: Vec<String>,
    },
}

/// One `#SBATCH` line: `flag=value`, or a whole argument (`extra`) when
/// `flag` is empty.
#[derive(Debug, Clone)]
pub struct SbatchOption {
    /// `--mem`, or empty.
    pub flag: &'static str,
    /// The key that gave it, for errors.
    pub key: String,
    /// The value (or the whole argument).
    pub value: String,
}

/// Why a value cannot be an `#SBATCH` option's: empty, or a control
/// character (newline, CR, NUL, other C0, DEL, C1), which would end the
/// line sbatch reads or be read by it as something else.
pub fn sbatch_refusal(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("empty: leave the key out for Slurm's default".into());
    }
    let c = value.chars().find(|c| c.is_control())?;
    Some(format!(
        "{value:?} holds the control character {:?}: sbatch reads an #SBATCH line to its end, so it cannot be \
         written there",
        c
    ))
}

/// Why a `setup` entry cannot be one shell line: a control character
/// other than a tab, which would end the line or hide what runs.
pub fn shell_line_refusal(line: &str) -> Option<String> {
    let c = line.chars().find(|c| c.is_control() && *c != '\t')?;
    Some(format!("{line:?} holds the control character {c:?}: one shell line each"))
}

/// A value as sbatch reads it back whole: as it is where it has nothing
/// sbatch splits on, else in double quotes with `\` and `"` escaped (sbatch
/// takes `"…"` and `\` in `#SBATCH` lines; unquoted, a space ends the
/// argument and `#` starts a comment).
fn sbatch_value(key: &str, value: &str) -> Result<String, Error> {
    if let Some(why) = sbatch_refusal(value) {
        return Err(Error::setup(format!("{key}: {why}")));
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,:/=+@%^~".contains(c);
    if value.chars().all(plain) {
        return Ok(value.to_string());
    }
    Ok(format!("\"{}\"", value.replace('\\', r"\\").replace('"', "\\\"")))
}

/// A word for bash, single-quoted: `'it'\''s'`. A newline inside stays in
/// the word.
pub fn word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Text for a comment line: every control character escaped.
fn comment(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// A slot as the script's text: the one place a value becomes script.
/// Lines come back each ending in a newline; other slots are one line.
pub fn write(slot: &Slot) -> Result<String, Error> {
    Ok(match slot {
        Slot::Comment(s) => comment(s),
        Slot::CommentLines(lines) => lines.iter().map(|l| format!("# {}\n", comment(l))).collect(),
        Slot::Value { key, value } => sbatch_value(key, value)?,
        Slot::Options(options) => {
            let mut out = String::new();
            for o in options {
                let v = sbatch_value(&o.key, &o.value)?;
                out.push_str(&match o.flag {
                    "" => format!("#SBATCH {v}\n"),
                    flag => format!("#SBATCH {flag}={v}\n"),
                });
            }
            out
        }
        Slot::Word(s) => word(s),
        Slot::Shell { key, lines } => {
            let mut out = String::new();
            for l in lines {
                if let Some(why) = shell_line_refusal(l) {
                    return Err(Error::setup(format!("{key}: {why}")));
                }
                out.push_str(l);
                out.push('\n');
            }
            out
        }
    })
}

/// The template with its slots filled: `{{name}}` inline, or a line that
/// is `{{name}}` alone replaced by the slot's lines (none for an empty
/// list). A slot the template names and `slots` lacks is a bug.
pub fn render(template: &str, slots: &[(&str, Slot)]) -> Result<String, Error> {
    let find = |name: &str| {
        slots.iter().find(|(n, _)| *n == name).map(|(_, s)| s).unwrap_or_else(|| panic!("no slot {name:?}"))
    };
    let mut out = String::new();
    for line in template.lines() {
        if let Some(name) = line.strip_prefix("{{").and_then(|l| l.strip_suffix("}}")).filter(|n| !n.contains('{')) {
            let slot = find(name);
            if matches!(slot, Slot::CommentLines(_) | Slot::Options(_) | Slot::Shell { .. }) {
                out.push_str(&write(slot)?);
                continue;
            }
        }
        let mut rest = line;
        while let Some(start) = rest.find("{{") {
            let end = rest[start..].find("}}").map(|e| start + e).unwrap_or_else(|| panic!("unclosed slot: {line}"));
            out.push_str(&rest[..start]);
            let slot = find(&rest[start + 2..end]);
            assert!(
                !matches!(slot, Slot::CommentLines(_) | Slot::Options(_) | Slot::Shell { .. }),
                "lines inside a line: {line}"
            );
            // A word may hold a newline inside its quotes: after the
            // `#SBATCH` block, where sbatch no longer reads.
            out.push_str(&write(slot)?);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn each_slot_is_quoted_for_who_reads_it() {
        assert_eq!(word("it's"), r"'it'\''s'");
        assert_eq!(write(&Slot::Comment("a\nb\r\0".into())).unwrap(), r"a\nb\r\u{0}");
        let v = |s: &str| write(&Slot::Value { key: "k".into(), value: s.into() });
        assert_eq!(v("gpu:1").unwrap(), "gpu:1");
        assert_eq!(v("a b \"q\" \\ #x").unwrap(), r#""a b \"q\" \\ #x""#);
        for bad in ["a\nb", "a\rb", "a\0b", "a\u{1b}b", "a\u{7f}", "a\u{85}", ""] {
            let e = v(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Setup);
            assert!(e.message.starts_with("k: "), "{e}");
        }
        let shell = Slot::Shell { key: "setup".into(), lines: vec!["module load x\r".into()] };
        assert!(write(&shell).unwrap_err().message.contains("'\\r'"));
    }

    #[test]
    fn a_template_fills_inline_slots_and_whole_line_lists() {
        let slots = [
            ("name", Slot::Comment("n".into())),
            ("list", Slot::Options(vec![])),
            ("more", Slot::Options(vec![SbatchOption { flag: "--mem", key: "m".into(), value: "1G".into() }])),
            ("w", Slot::Word("a b".into())),
        ];
        let text = render("# {{name}} x\n{{list}}\n{{more}}\necho {{w}} {{w}}\n", &slots).unwrap();
        assert_eq!(text, "# n x\n#SBATCH --mem=1G\necho 'a b' 'a b'\n");
    }
}
