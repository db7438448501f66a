//! Scoring a transcription against a page's ground truth.
//!
//! The truth marks each crossed-out word as `~~word~~`. A reply may mark
//! one the same way, or as `<s>word</s>`, `<del>word</del>`, `[crossed out:
//! word]` or `[struck: word]`. Words are compared after normalising:
//! lower-case, punctuation trimmed from both ends (so `48.20,` is `48.20`).
//!
//! - Word accuracy: 100 × (1 − word edit distance ÷ live words of the truth),
//!   at least 0: order matters, an extra or a missing word costs one each.
//! - Word recall: the share of the truth's live words found anywhere among
//!   the reply's live words (order does not matter).
//! - Each crossed-out word is noticed (marked as struck in the reply), read
//!   as live (present unmarked, more often than the truth's live text has
//!   it), or indeterminate (left out).

/// A page's words: live ones in order, and the crossed-out ones.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Words {
    /// Live words, normalised, in reading order.
    pub live: Vec<String>,
    /// Crossed-out words, normalised.
    pub struck: Vec<String>,
}

/// Lower-case, punctuation trimmed from both ends.
pub fn norm(w: &str) -> String {
    w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

/// Split a text into live and struck words, reading every struck-word
/// markup this module accepts.
pub fn words(text: &str) -> Words {
    // Turn every markup into ~~…~~ first.
    let mut t = text.replace("<s>", "~~").replace("</s>", "~~").replace("<del>", "~~").replace("</del>", "~~");
    for open in ["[crossed out:", "[crossed-out:", "[struck:", "[strikethrough:", "[deleted:"] {
        // ASCII lower-casing keeps every byte offset (full lower-casing
        // does not: `K`, the Kelvin sign, is 3 bytes and becomes 1).
        while let Some(at) = t.to_ascii_lowercase().find(open) {
            let end = t[at..].find(']').map_or(t.len(), |e| at + e);
            let inner = t[at + open.len()..end].trim().to_string();
            t = format!("{}~~{inner}~~{}", &t[..at], t.get(end + 1..).unwrap_or(""));
        }
    }
    let mut out = Words::default();
    for (i, part) in t.split("~~").enumerate() {
        let into = if i % 2 == 1 { &mut out.struck } else { &mut out.live };
        into.extend(part.split_whitespace().map(norm).filter(|w| !w.is_empty()));
    }
    out
}

/// Word-level edit distance.
fn edits(a: &[String], b: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(x != y)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// What became of each crossed-out word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Struck {
    /// Crossed out in the truth.
    pub total: usize,
    /// Marked as struck in the reply.
    pub noticed: usize,
    /// Read as live text.
    pub as_live: usize,
    /// Left out.
    pub indeterminate: usize,
    /// Words the reply marked as struck that the truth has live: striking
    /// everything is not noticing.
    pub wrong: usize,
}

impl Struck {
    /// The share of crossed-out words noticed, each wrongly struck word
    /// counting against it; None on a page with nothing crossed out.
    pub fn noticed_share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.noticed as f64 / (self.total + self.wrong) as f64)
    }
}

/// The score of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageScore {
    /// Live words of the truth.
    pub words: usize,
    /// Word edits between the truth's live words and the reply's.
    pub edits: usize,
    /// Truth live words found among the reply's live words.
    pub recalled: usize,
    /// The crossed-out words.
    pub struck: Struck,
}

impl PageScore {
    /// Word accuracy, percent.
    pub fn accuracy(&self) -> f64 {
        if self.words == 0 { 0.0 } else { (100.0 * (1.0 - self.edits as f64 / self.words as f64)).max(0.0) }
    }

    /// Word recall, percent.
    pub fn recall(&self) -> f64 {
        if self.words == 0 { 0.0 } else { 100.0 * self.recalled as f64 / self.words as f64 }
    }
}

fn count(list: &[String], w: &str) -> usize {
    list.iter().filter(|x| *x == w).count()
}

/// Score a reply against a page's truth lines.
pub fn score(truth_lines: &[String], reply: &str) -> PageScore {
    let truth = words(&truth_lines.join("\n"));
    let got = words(reply);
    let mut pool = got.live.clone();
    let mut recalled = 0;
    for w in &truth.live {
        if let Some(at) = pool.iter().position(|x| x == w) {
            pool.swap_remove(at);
            recalled += 1;
        }
    }
    let mut struck = Struck { total: truth.struck.len(), ..Struck::default() };
    let mut crossed = truth.struck.clone();
    for w in &got.struck {
        match crossed.iter().position(|x| x == w) {
            Some(at) => {
                crossed.swap_remove(at);
            }
            None => struck.wrong += 1,
        }
    }
    for w in &truth.struck {
        if got.struck.contains(w) {
            struck.noticed += 1;
        } else if count(&got.live, w) > count(&truth.live, w) {
            struck.as_live += 1;
        } else {
            struck.indeterminate += 1;
        }
    }
    PageScore { words: truth.live.len(), edits: edits(&truth.live, &got.live), recalled, struck }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    const PAGE: &[&str] = &["Dear Sam,", "meet on ~~Monday~~ Tuesday at 10.", "Bring 48.20, please"];

    #[test]
    fn a_perfect_reading_noticing_the_deletion() {
        let s = score(&lines(PAGE), "Dear Sam,\nmeet on ~~Monday~~ Tuesday at 10.\nBring 48.20, please");
        assert_eq!((s.accuracy(), s.recall()), (100.0, 100.0));
        assert_eq!(s.struck, Struck { total: 1, noticed: 1, as_live: 0, indeterminate: 0, wrong: 0 });
        // Other markups are read too.
        let s = score(&lines(PAGE), "Dear Sam, meet on [crossed out: Monday] Tuesday at 10. Bring 48.20 please");
        assert_eq!(s.struck.noticed, 1);
        assert_eq!(s.accuracy(), 100.0);
    }

    #[test]
    fn a_struck_word_read_as_live_counts_against_the_reading() {
        let s = score(&lines(PAGE), "Dear Sam, meet on Monday Tuesday at 10. Bring 48.20, please");
        assert_eq!(s.struck, Struck { total: 1, noticed: 0, as_live: 1, indeterminate: 0, wrong: 0 });
        // One inserted word among the truth's 10 live words.
        assert_eq!(s.accuracy(), 90.0);
        assert_eq!(s.recall(), 100.0);
    }

    #[test]
    fn a_left_out_struck_word_is_indeterminate_and_misreadings_cost() {
        let s = score(&lines(PAGE), "Dear Sam, meet on Thursday at 10. Bring 48.70 please");
        assert_eq!(s.struck, Struck { total: 1, noticed: 0, as_live: 0, indeterminate: 1, wrong: 0 });
        assert_eq!(s.edits, 2);
        assert_eq!(s.recalled, 8);
    }

    #[test]
    fn striking_everything_is_not_noticing() {
        // One unclosed ~~ strikes the rest of the page: the deletion is
        // among the struck words, and so are eight live ones.
        let s = score(&lines(PAGE), "Dear Sam, ~~meet on Monday Tuesday at 10. Bring 48.20, please");
        assert_eq!((s.struck.noticed, s.struck.wrong), (1, 8));
        assert_eq!(s.struck.noticed_share(), Some(1.0 / 9.0));
        // Two of the truth's ten live words survive: 100 × (1 − 8/10).
        assert_eq!(s.edits, 8);
        assert!((s.accuracy() - 20.0).abs() < 1e-9, "{}", s.accuracy());
    }

    #[test]
    fn markup_is_found_whatever_the_case_around_it() {
        // The Kelvin sign lower-cases to fewer bytes: offsets must hold.
        let s = score(&lines(PAGE), "\u{212A}\u{212A} Dear Sam, meet on [Crossed out: Monday] Tuesday");
        assert_eq!(s.struck.noticed, 1);
    }

    #[test]
    fn an_empty_reply_scores_nothing() {
        let s = score(&lines(PAGE), "");
        assert_eq!((s.accuracy(), s.recall()), (0.0, 0.0));
        assert_eq!(s.struck.indeterminate, 1);
    }
}
