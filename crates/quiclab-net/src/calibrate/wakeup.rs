//! Timer wake-up lateness with the driver's two wakers (`driver.rs`'s `wait`): a
//! timerfd in a mio poll (the default for waits under 5 ms, `timer.rs`) and the poll's
//! own timeout (epoll: whole milliseconds). Each sample arms a wait of a pacing-like
//! length, sleeps in the poll as the driver does, and records how long after the
//! deadline the thread ran again (wall clock: lateness is a wall-time quantity).

use crate::timer::Timer;
use mio::{Events, Interest, Poll, Token};
use std::time::{Duration, Instant};

/// How late each wake-up came, µs, in measurement order.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    pub timerfd_us: Vec<f64>,
    pub poll_us: Vec<f64>,
    /// The wait asked for each time (both wakers).
    pub wait: Duration,
}

/// `samples` wake-ups of each waker, each after a `wait`; `None` for the timerfd
/// samples when the kernel refuses a timerfd (then `timerfd_us` stays empty).
pub fn measure(samples: usize, wait: Duration) -> std::io::Result<Lateness> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(4);
    let mut out = Lateness {
        wait,
        ..Lateness::default()
    };
    if let Some(timer) = Timer::new() {
        let token = Token(1);
        poll.registry().register(
            &mut mio::unix::SourceFd(&timer.fd()),
            token,
            Interest::READABLE,
        )?;
        for _ in 0..samples {
            let due = Instant::now() + wait;
            timer.arm(wait);
            // The driver's backstop: the poll's own timeout 1 ms after the timer's.
            loop {
                poll.poll(&mut events, Some(wait + Duration::from_millis(1)))?;
                if events.iter().any(|e| e.token() == token) || Instant::now() >= due {
                    break;
                }
            }
            out.timerfd_us.push(late_us(due));
            timer.clear();
        }
    }
    for _ in 0..samples {
        let due = Instant::now() + wait;
        // Nothing is registered that could wake it: only the timeout returns.
        while Instant::now() < due {
            poll.poll(
                &mut events,
                Some(due.saturating_duration_since(Instant::now())),
            )?;
        }
        out.poll_us.push(late_us(due));
    }
    Ok(out)
}

fn late_us(due: Instant) -> f64 {
    Instant::now().saturating_duration_since(due).as_secs_f64() * 1e6
}

/// The `q` quantile (0-1) of `v` (nearest rank); NaN when empty.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
    s[i]
}
