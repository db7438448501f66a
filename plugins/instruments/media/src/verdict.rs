//! The arithmetic of sharing a box: free memory against a media budget, and
//! what the serve must give up from its KV cache when it does not fit.

/// Bytes in a GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// What the serve leaves the media workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fit {
    /// Fits with the margin to spare.
    Yes,
    /// Fits only by trading KV cache: `kept` tokens of the pool remain, and
    /// the box then has `free_after` bytes free.
    YesWithKvTrade { kept: u64, given: u64, free_after: f64 },
    /// Fits, with less than the margin to spare.
    Marginal,
    /// Does not fit, even giving up KV cache down to the floor.
    No,
}

/// What the verdict is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// Free memory with the serve loaded and idle, bytes.
    pub free: f64,
    /// The media workload's need, bytes.
    pub budget: f64,
    /// What must be left over beyond the budget to call it a clean fit, bytes.
    pub margin: f64,
    /// KV bytes one token holds, where known.
    pub kv_bytes_per_token: Option<f64>,
    /// The KV pool in tokens, where known.
    pub pool_tokens: Option<u64>,
    /// The fewest tokens a trade may leave (one request's context), where
    /// the engine says it.
    pub floor_tokens: Option<u64>,
}

/// Why no trade was computed, when the box does not fit as it is.
pub fn verdict(i: &Inputs) -> (Fit, Option<String>) {
    if i.free >= i.budget + i.margin {
        return (Fit::Yes, None);
    }
    if i.free >= i.budget {
        return (Fit::Marginal, None);
    }
    let (Some(bytes), Some(pool)) = (i.kv_bytes_per_token.filter(|b| *b > 0.0), i.pool_tokens) else {
        return (
            Fit::No,
            Some("the engine told neither its KV bytes per token nor its pool: no trade computed".into()),
        );
    };
    let Some(floor) = i.floor_tokens else {
        return (
            Fit::No,
            Some("the engine did not say one request's context, the least a trade must keep: no trade computed".into()),
        );
    };
    // Give up enough to leave the budget and the margin free.
    let need = i.budget + i.margin - i.free;
    let given = (need / bytes).ceil() as u64;
    match pool.checked_sub(given) {
        Some(kept) if kept >= floor => {
            (Fit::YesWithKvTrade { kept, given, free_after: i.free + given as f64 * bytes }, None)
        }
        Some(_) => (
            Fit::No,
            Some(format!(
                "giving up {given} of {pool} KV tokens ({:.1} GiB) would leave less than one request's context ({floor} tokens)",
                given as f64 * bytes / GIB,
            )),
        ),
        None => (
            Fit::No,
            Some(format!(
                "the whole KV pool ({pool} tokens, {:.1} GiB) is less than the {:.1} GiB short",
                pool as f64 * bytes / GIB,
                need / GIB,
            )),
        ),
    }
}

use sparktest_sdk::contract::media::verdict;

impl Fit {
    /// The seed's words.
    pub fn word(&self) -> &'static str {
        match self {
            Fit::Yes => verdict::YES,
            Fit::YesWithKvTrade { .. } => verdict::YES_WITH_KV_TRADE,
            Fit::Marginal => verdict::MARGINAL,
            Fit::No => verdict::NO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(free_gib: f64) -> Inputs {
        Inputs {
            free: free_gib * GIB,
            budget: 48.8 * GIB,
            margin: 2.0 * GIB,
            // ~145 KiB per token, as a 27B model with an fp8 cache might hold.
            kv_bytes_per_token: Some(147_456.0),
            pool_tokens: Some(300_000),
            floor_tokens: Some(131_072),
        }
    }

    #[test]
    fn plenty_fits_and_a_thin_fit_is_marginal() {
        assert_eq!(verdict(&inputs(61.9)).0, Fit::Yes);
        assert_eq!(verdict(&inputs(49.5)).0, Fit::Marginal);
    }

    #[test]
    fn a_shortfall_is_paid_in_kv_tokens() {
        let (v, _) = verdict(&inputs(41.4));
        let Fit::YesWithKvTrade { kept, given, free_after } = v else { panic!("{v:?}") };
        // 48.8 + 2 − 41.4 = 9.4 GiB at 147,456 bytes a token.
        let expect = (9.4 * GIB / 147_456.0).ceil() as u64;
        assert_eq!(given, expect);
        assert_eq!(kept, 300_000 - expect);
        assert!((50.8 * GIB..50.81 * GIB).contains(&free_after), "{}", free_after / GIB);
    }

    #[test]
    fn no_when_the_pool_cannot_pay_or_nobody_says_what_a_token_costs() {
        // A 24 GiB box: even the whole pool would not free 27 GiB.
        let (v, why) = verdict(&inputs(24.0));
        assert_eq!(v, Fit::No);
        assert!(why.unwrap().contains("less than one request's context"));
        // 5 GiB free: 45.8 GiB short, more than the whole 41.2 GiB pool.
        let (v, why) = verdict(&inputs(5.0));
        assert_eq!(v, Fit::No);
        assert_eq!(why.unwrap(), "the whole KV pool (300000 tokens, 41.2 GiB) is less than the 45.8 GiB short");
        let unknown = Inputs { kv_bytes_per_token: None, ..inputs(41.4) };
        let (v, why) = verdict(&unknown);
        assert_eq!(v, Fit::No);
        assert!(why.unwrap().contains("no trade computed"));
        // Nor when nobody says how much one request needs kept.
        let no_floor = Inputs { floor_tokens: None, ..inputs(41.4) };
        let (v, why) = verdict(&no_floor);
        assert_eq!(v, Fit::No);
        assert!(why.unwrap().contains("one request's context"));
    }
}
