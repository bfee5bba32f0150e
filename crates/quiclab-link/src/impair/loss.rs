//! Random loss models and their running state.
//!
//! Every datagram consumes exactly two values from the loss stream, whatever the model
//! (one for the Gilbert-Elliott state transition, one for the loss decision), so datagram
//! `k` sees the same two numbers under every model and probability: raising a Bernoulli
//! `p` only adds losses, and a scheduled model change never shifts later draws.

use super::LossModel;
use quiclab_proto::DetRng;

/// Checks a probability field; the error names it.
pub(crate) fn check_prob(field: &str, p: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(format!("{field} must be in [0, 1]"))
    }
}

/// Validates a loss model; fields are named `loss.<field>`.
pub(crate) fn validate(model: &LossModel) -> Result<(), String> {
    match *model {
        LossModel::None => Ok(()),
        LossModel::Bernoulli { p } => check_prob("loss.p", p),
        LossModel::Periodic { p } => {
            // p = 0 would mean "one drop every infinitely many": use `none` instead.
            if p > 0.0 && p <= 1.0 {
                Ok(())
            } else {
                Err("loss.p must be in (0, 1] for the periodic model".to_string())
            }
        }
        LossModel::GilbertElliott {
            p_good_bad,
            p_bad_good,
            loss_good,
            loss_bad,
        } => {
            check_prob("loss.p_good_bad", p_good_bad)?;
            check_prob("loss.p_bad_good", p_bad_good)?;
            check_prob("loss.loss_good", loss_good)?;
            check_prob("loss.loss_bad", loss_bad)
        }
    }
}

/// The period of the periodic model: n = round(1/p), at least 1.
pub(crate) fn periodic_n(p: f64) -> u64 {
    // p is validated to (0, 1], so 1/p is in [1, inf); `as` saturates huge values.
    ((1.0 / p).round() as u64).max(1)
}

/// A loss model with its state (periodic counter, Gilbert-Elliott state).
#[derive(Debug)]
pub(crate) struct LossState {
    model: LossModel,
    /// Datagrams offered since this model was installed (periodic model).
    since_installed: u64,
    /// Gilbert-Elliott: whether the channel is in the bad state. Starts good.
    bad: bool,
}

impl LossState {
    /// `model` must have passed [`validate`].
    pub(crate) fn new(model: LossModel) -> Self {
        LossState {
            model,
            since_installed: 0,
            bad: false,
        }
    }

    /// Whether the model is [`LossModel::None`] (never loses, whatever it draws).
    pub(crate) fn is_none(&self) -> bool {
        matches!(self.model, LossModel::None)
    }

    /// Whether the next datagram is lost. Draws exactly two values from `rng`.
    pub(crate) fn next_lost(&mut self, rng: &mut DetRng) -> bool {
        let transition = rng.next_f64();
        let decide = rng.next_f64();
        self.since_installed += 1;
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => decide < p,
            // Datagrams n, 2n, 3n... (counted from installation) are dropped: exactly
            // one drop after every n - 1 delivered, no randomness.
            LossModel::Periodic { p } => self.since_installed.is_multiple_of(periodic_n(p)),
            LossModel::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            } => gilbert_elliott_step(
                &mut self.bad,
                [p_good_bad, p_bad_good, loss_good, loss_bad],
                transition,
                decide,
            ),
        }
    }
}

/// One datagram through a Gilbert-Elliott channel whose state is `bad`, with the
/// parameters `[p_good_bad, p_bad_good, loss_good, loss_bad]` and two uniform draws:
/// the state moves first (good->bad below `p_good_bad`, bad->good below `p_bad_good`),
/// then the datagram is lost below the new state's loss rate. The loss trace's burst
/// form (`trace/loss.rs`) takes the same step.
pub(crate) fn gilbert_elliott_step(
    bad: &mut bool,
    p: [f64; 4],
    transition: f64,
    decide: f64,
) -> bool {
    let [p_good_bad, p_bad_good, loss_good, loss_bad] = p;
    *bad = if *bad {
        transition >= p_bad_good
    } else {
        transition < p_good_bad
    };
    decide < if *bad { loss_bad } else { loss_good }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: LossModel, seed: u64, n: usize) -> Vec<bool> {
        validate(&model).unwrap();
        let mut st = LossState::new(model);
        let mut rng = DetRng::new(seed);
        (0..n).map(|_| st.next_lost(&mut rng)).collect()
    }

    fn mean_burst(fates: &[bool]) -> f64 {
        let (mut bursts, mut lost, mut prev) = (0u64, 0u64, false);
        for &l in fates {
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        lost as f64 / bursts.max(1) as f64
    }

    #[test]
    fn validation_names_the_field() {
        assert_eq!(
            validate(&LossModel::Bernoulli { p: 1.5 }).unwrap_err(),
            "loss.p must be in [0, 1]"
        );
        assert!(validate(&LossModel::Bernoulli { p: f64::NAN }).is_err());
        assert!(validate(&LossModel::Bernoulli { p: -0.1 }).is_err());
        assert!(validate(&LossModel::Periodic { p: 0.0 }).is_err());
        assert!(validate(&LossModel::Periodic { p: f64::NAN }).is_err());
        assert!(validate(&LossModel::Periodic { p: 1.0 }).is_ok());
        let ge = LossModel::GilbertElliott {
            p_good_bad: 0.1,
            p_bad_good: 0.2,
            loss_good: 0.0,
            loss_bad: f64::INFINITY,
        };
        assert_eq!(
            validate(&ge).unwrap_err(),
            "loss.loss_bad must be in [0, 1]"
        );
    }

    #[test]
    fn bernoulli_rate() {
        let f = run(LossModel::Bernoulli { p: 0.05 }, 1, 100_000);
        let rate = f.iter().filter(|&&l| l).count() as f64 / f.len() as f64;
        assert!((rate - 0.05).abs() < 0.003, "rate {rate}");
        assert!(run(LossModel::Bernoulli { p: 0.0 }, 1, 1000)
            .iter()
            .all(|&l| !l));
        assert!(run(LossModel::Bernoulli { p: 1.0 }, 1, 1000)
            .iter()
            .all(|&l| l));
    }

    #[test]
    fn bernoulli_higher_p_is_a_superset() {
        // Fixed draws per datagram couple the runs: more loss never saves a datagram.
        let lo = run(LossModel::Bernoulli { p: 0.01 }, 9, 10_000);
        let hi = run(LossModel::Bernoulli { p: 0.03 }, 9, 10_000);
        assert!(lo.iter().zip(&hi).all(|(&l, &h)| !l || h));
    }

    #[test]
    fn periodic_is_exact() {
        for (p, n) in [(0.01, 100u64), (0.1, 10), (0.3, 3), (1.0, 1), (0.004, 250)] {
            assert_eq!(periodic_n(p), n);
            for k in [1u64, 3, 17] {
                let f = run(LossModel::Periodic { p }, 5, (n * k) as usize);
                let drops: Vec<u64> = (1..=n * k).filter(|&i| f[(i - 1) as usize]).collect();
                let want: Vec<u64> = (1..=k).map(|j| j * n).collect();
                assert_eq!(drops, want, "p {p} k {k}");
            }
        }
        // 1/p not an integer: rounded (1/0.3 = 3.33 -> 3, 1/0.4 = 2.5 -> 3).
        assert_eq!(periodic_n(0.4), 3);
    }

    #[test]
    fn gilbert_elliott_stationary_loss_and_bursts() {
        let (p_gb, p_bg, lg, lb) = (0.01, 0.2, 0.001, 0.6);
        let ge = LossModel::GilbertElliott {
            p_good_bad: p_gb,
            p_bad_good: p_bg,
            loss_good: lg,
            loss_bad: lb,
        };
        let f = run(ge, 3, 200_000);
        let pi_bad = p_gb / (p_gb + p_bg);
        let want = (1.0 - pi_bad) * lg + pi_bad * lb;
        let rate = f.iter().filter(|&&l| l).count() as f64 / f.len() as f64;
        assert!((rate - want).abs() < 0.1 * want, "rate {rate} want {want}");
        let b = run(LossModel::Bernoulli { p: want }, 3, 200_000);
        let (gb, bb) = (mean_burst(&f), mean_burst(&b));
        assert!(gb > 1.5 * bb, "GE bursts {gb} vs Bernoulli {bb}");
    }

    #[test]
    fn none_never_loses() {
        assert!(run(LossModel::None, 1, 1000).iter().all(|&l| !l));
    }
}
