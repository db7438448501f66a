//! The statistics of cargo-sparktest, small on purpose: what a cell's
//! uncertainty is and whether a change between two runs is beyond
//! run-to-run variation.
//!
//! - [`wilson`]: the Wilson score interval of a binomial proportion
//!   (E. B. Wilson, "Probable inference, the law of succession, and
//!   statistical inference", JASA 1927). Unlike the normal ("Wald")
//!   interval it stays inside 0–1 and is not zero-width at 0/n or n/n.
//! - [`mcnemar_exact`]: McNemar's test for paired pass/fail items
//!   (Q. McNemar, Psychometrika 1947) in its exact form: a two-sided
//!   binomial test of the discordant pairs against one half.
//! - [`fisher_exact`]: Fisher's exact test of two independent
//!   proportions, for runs whose items cannot be paired.
//! - [`bootstrap_paired_ratio`], [`bootstrap_ratio_of_means`],
//!   [`bootstrap_mean_of_means`], [`bootstrap_with`]: percentile
//!   bootstrap intervals (B. Efron, "Bootstrap methods: another look at the
//!   jackknife", Annals of Statistics 1979) with a seeded generator, so the
//!   same inputs and seed give the same interval.
//!
//! Every function is deterministic; nothing here reads a clock.
//!
//! # Known limitations
//!
//! - The percentile bootstrap is too narrow with very few items (under
//!   about ten); callers say when a figure rests on so few.
//! - Exact tests use `f64` log-probabilities: fine to tens of thousands of
//!   items, not beyond.
#![warn(missing_docs)]

/// The normal quantile of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A two-sided interval around an estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Whether the two intervals share any point.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

/// The Wilson score interval of `k` successes in `n` trials at normal
/// quantile `z` (use [`Z95`]); None when `n` is 0.
pub fn wilson(k: u64, n: u64, z: f64) -> Option<Interval> {
    if n == 0 || k > n {
        return None;
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval { estimate: p, low: (centre - half).clamp(0.0, 1.0), high: (centre + half).clamp(0.0, 1.0) })
}

/// ln C(n, k).
fn ln_choose(n: u64, k: u64) -> f64 {
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln()).sum()
}

/// McNemar's exact test: the two-sided p-value of `b` items that went one
/// way and `c` that went the other, under the hypothesis that either way
/// is equally likely (concordant pairs carry no information). 1 when no
/// item changed.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let tail: f64 = (0..=k).map(|i| (ln_choose(n, i) - ln_half_n).exp()).sum();
    (2.0 * tail).min(1.0)
}

/// Fisher's exact test of the 2×2 table `[[a, b], [c, d]]` (rows: the two
/// runs; columns: passed, not passed), two-sided: the probability, with
/// the margins fixed, of every table no more likely than the one seen.
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (r1, r2, c1) = (a + b, c + d, a + c);
    let n = r1 + r2;
    if r1 == 0 || r2 == 0 || c1 == 0 || c1 == n {
        return 1.0;
    }
    let ln_p = |x: u64| ln_choose(r1, x) + ln_choose(r2, c1 - x) - ln_choose(n, c1);
    let seen = ln_p(a);
    let lo = c1.saturating_sub(r2);
    let hi = r1.min(c1);
    // A relative tolerance, as R's fisher.test uses, so that tables as
    // likely as the one seen are not lost to rounding.
    let p: f64 = (lo..=hi).map(ln_p).filter(|l| *l <= seen + 1e-7).map(f64::exp).sum();
    p.min(1.0)
}

/// A small seeded generator (SplitMix64): the bootstrap's only source of
/// randomness, so that a recorded seed repeats an interval exactly.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        // Lemire's multiply-shift; the bias at these sizes is below 2^-50.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The nearest-rank `p`th percentile (0–100) of `sorted` (ascending,
/// finite): the smallest value with at least `p`% of the values at or
/// below it, so every percentile is a value that was measured (as `vllm
/// bench serve` and GuideLLM report them). None when `sorted` is empty.
pub fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    // p × n first: exact for whole p, where (p / 100) × n is not (7% of
    // 100 would be 7.000000000000001 and take the 8th value).
    let i = (p * sorted.len() as f64 / 100.0).ceil() as usize;
    sorted.get(i.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// The mean of a resample of `xs` (with replacement).
fn resampled_mean(xs: &[f64], rng: &mut Rng) -> f64 {
    if xs.len() == 1 {
        return xs[0];
    }
    (0..xs.len()).map(|_| xs[rng.below(xs.len())]).sum::<f64>() / xs.len() as f64
}

/// The `q` quantile (0–1) of sorted values, by linear interpolation.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

fn percentile_interval(estimate: f64, mut draws: Vec<f64>) -> Interval {
    draws.sort_by(f64::total_cmp);
    Interval { estimate, low: quantile(&draws, 0.025), high: quantile(&draws, 0.975) }
}

/// The mean over items of the ratio B ÷ A, with a 95% percentile bootstrap
/// interval. Each item holds its samples on each side (one figure, or one
/// per repetition): every resample draws items with replacement and, within
/// each drawn item, its samples with replacement, so both the spread
/// between items and the spread between repetitions of one item count.
/// None when there is no item or a side of an item has no sample or a mean
/// of zero.
pub fn bootstrap_paired_ratio(items: &[(Vec<f64>, Vec<f64>)], resamples: usize, seed: u64) -> Option<Interval> {
    if items.is_empty() || resamples == 0 {
        return None;
    }
    if items.iter().any(|(a, b)| a.is_empty() || b.is_empty() || mean(a) == 0.0) {
        return None;
    }
    let estimate = items.iter().map(|(a, b)| mean(b) / mean(a)).sum::<f64>() / items.len() as f64;
    let mut rng = Rng::new(seed);
    let mut draws = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut sum = 0.0;
        for _ in 0..items.len() {
            let (a, b) = &items[rng.below(items.len())];
            let (ma, mb) = (resampled_mean(a, &mut rng), resampled_mean(b, &mut rng));
            sum += if ma == 0.0 { 0.0 } else { mb / ma };
        }
        draws.push(sum / items.len() as f64);
    }
    Some(percentile_interval(estimate, draws))
}

/// mean(B) ÷ mean(A) for two independent samples, with a 95% percentile
/// bootstrap interval (each side resampled on its own). None when a side
/// is empty or A's mean is zero.
pub fn bootstrap_ratio_of_means(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> Option<Interval> {
    if a.is_empty() || b.is_empty() || resamples == 0 || mean(a) == 0.0 {
        return None;
    }
    let estimate = mean(b) / mean(a);
    let mut rng = Rng::new(seed);
    let draws = (0..resamples)
        .map(|_| {
            let ma = resampled_mean(a, &mut rng);
            let mb = resampled_mean(b, &mut rng);
            if ma == 0.0 { 0.0 } else { mb / ma }
        })
        .collect();
    Some(percentile_interval(estimate, draws))
}

/// A 95% percentile bootstrap interval around `estimate` of a statistic
/// the caller resamples itself: `draw` is called `resamples` times with
/// the seeded generator and returns one resample's statistic, or None
/// when that resample leaves it undefined (those are left out). For
/// statistics the fixed shapes above do not fit, such as a figure read
/// from resampled requests. None when `resamples` is 0, the estimate is
/// not finite, or fewer than half the resamples are defined.
pub fn bootstrap_with(
    estimate: f64,
    resamples: usize,
    seed: u64,
    mut draw: impl FnMut(&mut Rng) -> Option<f64>,
) -> Option<Interval> {
    if resamples == 0 || !estimate.is_finite() {
        return None;
    }
    let mut rng = Rng::new(seed);
    let draws: Vec<f64> = (0..resamples).filter_map(|_| draw(&mut rng)).filter(|x| x.is_finite()).collect();
    if draws.len() * 2 < resamples {
        return None;
    }
    Some(percentile_interval(estimate, draws))
}

/// The mean over groups of each group's mean, with a 95% percentile
/// bootstrap interval that resamples each group's samples on its own (the
/// groups are fixed: the categories of a speed row, each measured several
/// times). None when there is no group, a group is empty, or a sample is
/// not finite.
pub fn bootstrap_mean_of_means(groups: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    if groups.is_empty() || resamples == 0 || groups.iter().any(|g| g.is_empty() || g.iter().any(|x| !x.is_finite())) {
        return None;
    }
    let estimate = groups.iter().map(|g| mean(g)).sum::<f64>() / groups.len() as f64;
    let mut rng = Rng::new(seed);
    let draws = (0..resamples)
        .map(|_| groups.iter().map(|g| resampled_mean(g, &mut rng)).sum::<f64>() / groups.len() as f64)
        .collect();
    Some(percentile_interval(estimate, draws))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed independently with Python's exact integer
    // and fraction arithmetic (math.comb, fractions.Fraction), and checked
    // against published examples where there are some.

    #[test]
    fn nearest_rank_percentiles_are_measured_values() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let at = |p| nearest_rank(&v, p).unwrap();
        assert_eq!((at(50.0), at(90.0), at(99.0), at(100.0), at(0.0)), (50.0, 90.0, 99.0, 100.0, 1.0));
        assert_eq!(nearest_rank(&[7.0], 99.0), Some(7.0));
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 50.0), Some(2.0));
        assert_eq!(nearest_rank(&[], 50.0), None);
        // Every whole percentile of every size to 400, against whole-number
        // arithmetic: the rank is ⌈p × n ÷ 100⌉.
        for n in 1..=400usize {
            let v: Vec<f64> = (1..=n).map(|x| x as f64).collect();
            for p in 1..=99usize {
                let rank = (p * n).div_ceil(100);
                assert_eq!(nearest_rank(&v, p as f64), Some(rank as f64), "p{p} of {n}");
            }
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn a_caller_drawn_bootstrap_is_seeded_and_leaves_undefined_draws_out() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let draw = |rng: &mut Rng| Some((0..xs.len()).map(|_| xs[rng.below(xs.len())]).sum::<f64>() / 6.0);
        let a = bootstrap_with(3.5, 2000, 7, draw).unwrap();
        assert_eq!(Some(a), bootstrap_with(3.5, 2000, 7, draw));
        assert!(a.low < 3.5 && 3.5 < a.high && a.low > 1.0 && a.high < 6.0, "{a:?}");
        // Every other draw undefined: still half defined, kept.
        let mut k = 0;
        assert!(
            bootstrap_with(1.0, 100, 1, |_| {
                k += 1;
                (k % 2 == 0).then_some(1.0)
            })
            .is_some()
        );
        // Fewer than half defined: no interval.
        assert_eq!(bootstrap_with(1.0, 100, 1, |r| (r.below(10) == 0).then_some(1.0)), None);
        assert_eq!(bootstrap_with(f64::NAN, 100, 1, |_| Some(1.0)), None);
        assert_eq!(bootstrap_with(1.0, 0, 1, |_| Some(1.0)), None);
    }

    #[test]
    fn the_mean_of_means_bootstrap_is_seeded_and_brackets_its_estimate() {
        let groups = vec![vec![10.0, 11.0, 12.0], vec![20.0, 22.0, 21.0]];
        let a = bootstrap_mean_of_means(&groups, 2000, 7).unwrap();
        assert_eq!(a, bootstrap_mean_of_means(&groups, 2000, 7).unwrap(), "same seed, same interval");
        assert!((a.estimate - 16.0).abs() < 1e-12);
        // Every resample mean lies between the smallest and largest possible
        // mean of means: (10 + 20) / 2 and (12 + 22) / 2.
        assert!(a.low >= 15.0 && a.high <= 17.0 && a.low < a.estimate && a.estimate < a.high, "{a:?}");
        // One sample per group: nothing to resample, a zero-width interval.
        let one = bootstrap_mean_of_means(&[vec![5.0], vec![7.0]], 100, 1).unwrap();
        assert_eq!((one.low, one.high), (6.0, 6.0));
        assert!(bootstrap_mean_of_means(&[vec![]], 100, 1).is_none());
        assert!(bootstrap_mean_of_means(&[vec![f64::NAN]], 100, 1).is_none());
    }

    #[test]
    fn mcnemar_exact_matches_the_binomial_tail() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(1, 0), 1.0);
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        // 15 flips one way, none back: 2 × 0.5^15.
        assert!(close(mcnemar_exact(15, 0), 6.103515625e-05, 1e-12));
        assert!(close(mcnemar_exact(0, 15), 6.103515625e-05, 1e-12));
        // 2 × (1 + 10 + 45) / 1024.
        assert!(close(mcnemar_exact(2, 8), 0.109375, 1e-12));
        assert!(close(mcnemar_exact(0, 6), 0.03125, 1e-12));
        assert!(close(mcnemar_exact(30, 12), 0.007915897334896727, 1e-9));
        assert!(close(mcnemar_exact(100, 70), 0.02584438758134169, 1e-9));
    }

    #[test]
    fn wilson_bounds_for_known_counts() {
        let w = wilson(0, 10, Z95).unwrap();
        assert_eq!(w.low, 0.0);
        assert!(close(w.high, 0.2775327998628892, 1e-12), "{w:?}");
        let w = wilson(5, 10, Z95).unwrap();
        assert!(close(w.low, 0.236593090512564, 1e-12) && close(w.high, 0.7634069094874361, 1e-12), "{w:?}");
        let w = wilson(51, 60, Z95).unwrap();
        assert!(close(w.low, 0.7388541093022145, 1e-12) && close(w.high, 0.9190255941983225, 1e-12), "{w:?}");
        assert_eq!(w.estimate, 0.85);
        let w = wilson(60, 60, Z95).unwrap();
        assert!(close(w.low, 0.93982814785791, 1e-12) && close(w.high, 1.0, 1e-12), "{w:?}");
        assert!(wilson(0, 0, Z95).is_none());
        assert!(wilson(3, 2, Z95).is_none());
    }

    #[test]
    fn fisher_exact_matches_published_tables() {
        // Fisher's tea-tasting design, and the table on Wikipedia's page.
        assert!(close(fisher_exact(3, 1, 1, 3), 0.4857142857142857, 1e-9));
        assert!(close(fisher_exact(1, 9, 11, 3), 0.0027594561852200836, 1e-9));
        assert!(close(fisher_exact(51, 9, 36, 24), 0.0038184521965669324, 1e-9));
        assert!(close(fisher_exact(10, 0, 0, 10), 1.082508822446903e-05, 1e-9));
        assert!(close(fisher_exact(5, 5, 5, 5), 1.0, 1e-12));
        assert_eq!(fisher_exact(0, 0, 3, 4), 1.0);
    }

    #[test]
    fn the_generator_is_splitmix64() {
        // The first output of SplitMix64 seeded with 0 (Vigna's reference).
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut r = Rng::new(7);
        assert!((0..1000).all(|_| r.below(3) < 3));
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_estimate() {
        let items: Vec<(Vec<f64>, Vec<f64>)> = (0..10)
            .map(|i| {
                let a = 50.0 + f64::from(i);
                (vec![a, a * 1.02, a * 0.98], vec![a * 1.3, a * 1.32, a * 1.28])
            })
            .collect();
        let x = bootstrap_paired_ratio(&items, 2000, 21).unwrap();
        let y = bootstrap_paired_ratio(&items, 2000, 21).unwrap();
        assert_eq!(x, y, "same seed, same interval");
        assert!(close(x.estimate, 1.3, 1e-3), "{x:?}");
        assert!(x.low < x.estimate && x.estimate < x.high && x.low > 1.2, "{x:?}");
        // No spread at all: a zero-width interval at the ratio.
        let flat = vec![(vec![10.0], vec![11.0]); 5];
        let f = bootstrap_paired_ratio(&flat, 100, 1).unwrap();
        assert!(close(f.low, 1.1, 1e-12) && close(f.high, 1.1, 1e-12), "{f:?}");
        assert!(bootstrap_paired_ratio(&[], 100, 1).is_none());
        assert!(bootstrap_paired_ratio(&[(vec![0.0], vec![1.0])], 100, 1).is_none());
    }

    #[test]
    fn unpaired_bootstrap_of_a_ratio_of_means() {
        let a = [9.0, 10.0, 11.0, 10.0];
        let b = [19.0, 20.0, 21.0];
        let r = bootstrap_ratio_of_means(&a, &b, 2000, 3).unwrap();
        assert!(close(r.estimate, 2.0, 1e-12));
        assert!(r.low > 1.7 && r.high < 2.3 && r.contains(2.0), "{r:?}");
        assert!(bootstrap_ratio_of_means(&[], &b, 10, 1).is_none());
    }

    #[test]
    fn interval_overlap() {
        let i = |low, high| Interval { estimate: low, low, high };
        assert!(i(0.1, 0.5).overlaps(&i(0.5, 0.9)));
        assert!(!i(0.1, 0.4).overlaps(&i(0.5, 0.9)));
    }
}
