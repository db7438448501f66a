//! Bits-per-character arithmetic: what the likelihood instrument computes,
//! and what the host's tests check on recorded engine responses. Plain
//! arithmetic, built for the guests and the host alike.

/// The score of one text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Sum of −log2 p over the scored tokens.
    pub bits: f64,
    /// Characters of the text as sent (Unicode scalar values).
    pub chars: usize,
    /// Tokens with a log-probability.
    pub scored_tokens: usize,
    /// Tokens without one (the first token has no context).
    pub unscored_tokens: usize,
}

impl Score {
    /// Bits per character.
    pub fn bpc(&self) -> f64 {
        if self.chars == 0 { f64::NAN } else { self.bits / self.chars as f64 }
    }
}

/// Score `text` from the natural-log probabilities of its tokens (None for
/// a token the engine gives no probability, like the first). Characters are
/// counted from the text as sent, never from token strings (a BOS token or
/// a detokeniser's artefacts would change them).
pub fn score(text: &str, logprobs: impl IntoIterator<Item = Option<f64>>) -> Score {
    let mut bits = 0.0;
    let (mut scored, mut unscored) = (0, 0);
    for lp in logprobs {
        match lp {
            Some(nats) => {
                bits += -nats / core::f64::consts::LN_2;
                scored += 1;
            }
            None => unscored += 1,
        }
    }
    Score { bits, chars: text.chars().count(), scored_tokens: scored, unscored_tokens: unscored }
}

/// The corpus figure: total bits over total characters.
pub fn corpus_bpc(scores: &[Score]) -> f64 {
    let bits: f64 = scores.iter().map(|s| s.bits).sum();
    let chars: usize = scores.iter().map(|s| s.chars).sum();
    if chars == 0 { f64::NAN } else { bits / chars as f64 }
}
