//! Quantiles of measured samples, one definition for every figure quiclab reports (the
//! lab's summaries and estimates, the simulator's RTT window statistics, the emulator's
//! lateness, the UDP benches): linear interpolation between the two closest ranks
//! (numpy's default "linear", Hyndman & Fan type 7). The q-quantile of n ordered values
//! v[0..n] is v[lo] + f·(v[lo+1] − v[lo]) with lo + f = (n − 1)·q. It lives here, in the
//! lowest crate the simulator, the emulator and the benches share (the lab too, through
//! them); it reads nothing but its arguments.

/// Where the q-quantile of `n` ordered values falls: ranks `lo` and `hi` (0-based,
/// `hi = lo + 1` except at the top) and the fraction of the way from `lo` to `hi`.
/// `q` is clamped to 0..=1; `n` must be at least 1.
fn ranks(n: usize, q: f64) -> (usize, usize, f64) {
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(n - 1);
    (lo, (lo + 1).min(n - 1), h - lo as f64)
}

/// The `q`-quantile (0..=1) of `sorted` (ascending); NaN when empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let (lo, hi, f) = ranks(sorted.len(), q);
    sorted[lo] + f * (sorted[hi] - sorted[lo])
}

/// The `q`-quantile (0..=1) of a histogram: `bins` gives each bin's value (every sample
/// in a bin counts as that value) and its count, values ascending. NaN when the
/// histogram holds no sample.
pub fn histogram_quantile(bins: impl IntoIterator<Item = (f64, u64)>, q: f64) -> f64 {
    let bins: Vec<(f64, u64)> = bins.into_iter().filter(|b| b.1 > 0).collect();
    let n: u64 = bins.iter().map(|b| b.1).sum();
    let Ok(n) = usize::try_from(n) else {
        return f64::NAN;
    };
    if n == 0 {
        return f64::NAN;
    }
    let (lo, hi, f) = ranks(n, q);
    let (mut v_lo, mut v_hi) = (f64::NAN, f64::NAN);
    let mut seen = 0usize;
    for (value, count) in bins {
        let first = seen;
        seen = seen.saturating_add(usize::try_from(count).unwrap_or(usize::MAX));
        if (first..seen).contains(&lo) {
            v_lo = value;
        }
        if (first..seen).contains(&hi) {
            v_hi = value;
            break;
        }
    }
    v_lo + f * (v_hi - v_lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_linear_values() {
        // numpy.percentile(range(1, 11), [0, 5, 50, 95, 100]) = [1, 1.45, 5.5, 9.55, 10]
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let got: Vec<f64> = [0.0, 0.05, 0.5, 0.95, 1.0]
            .iter()
            .map(|&q| percentile(&v, q))
            .collect();
        for (g, want) in got.iter().zip([1.0, 1.45, 5.5, 9.55, 10.0]) {
            assert!((g - want).abs() < 1e-12, "{got:?}");
        }
        assert!(percentile(&[], 0.5).is_nan());
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&[1.0, 3.0], 2.0), 3.0, "q is clamped");
    }

    #[test]
    fn a_histogram_is_its_expanded_samples() {
        let bins = [(1.0, 3), (2.0, 0), (5.0, 1), (8.0, 4)];
        let expanded: Vec<f64> = bins
            .iter()
            .flat_map(|&(v, c)| std::iter::repeat_n(v, c as usize))
            .collect();
        for q in [0.0, 0.1, 0.25, 0.375, 0.4, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(
                histogram_quantile(bins, q),
                percentile(&expanded, q),
                "q = {q}"
            );
        }
        assert!(histogram_quantile([(1.0, 0)], 0.5).is_nan());
        assert!(histogram_quantile([], 0.5).is_nan());
    }
}
