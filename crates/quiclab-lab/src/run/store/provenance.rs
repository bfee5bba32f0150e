//! Where a plan invocation's numbers come from: the source revision, the build, the
//! host, the date and the time it took. Read from the clock, git and the OS here, at
//! the edge of the lab, never in the simulator; nothing read here reaches a cache key,
//! a seed or any deterministic result file.

use crate::plan::expand::code_id;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One run's cost as measured by the invocation that executed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTime {
    pub wall_s: f64,
    /// CPU time of the thread that ran it (a run executes on one thread).
    pub cpu_s: f64,
}

/// A plan invocation in progress: started when an executor begins, it times the runs
/// it executes ([`Invocation::time`]) and is closed into [`Provenance`] when the
/// results are collected.
#[derive(Debug)]
pub struct Invocation {
    started_at: SystemTime,
    started: Instant,
    cpu_at_start: Option<f64>,
    /// This process's count of invocations, for a unique [`Invocation::id`].
    seq: usize,
    times: Mutex<BTreeMap<String, RunTime>>,
}

impl Invocation {
    /// Starts the clocks now.
    pub fn start() -> Invocation {
        Invocation {
            started_at: SystemTime::now(),
            started: Instant::now(),
            cpu_at_start: cpu_seconds(libc::CLOCK_PROCESS_CPUTIME_ID),
            seq: SEQ.fetch_add(1, Ordering::Relaxed),
            times: Mutex::new(BTreeMap::new()),
        }
    }

    /// `<YYYYmmddTHHMMSSZ>-<pid>-<n>`: the start (UTC), the process and the
    /// process's count of invocations, unique on a host.
    pub fn id(&self) -> String {
        let stamp = utc_stamp(micros_since_epoch(self.started_at));
        format!("{stamp}-{}-{}", std::process::id(), self.seq)
    }

    /// Runs `f` (the run with cache key `key`) and records its wall and thread CPU time.
    pub fn time<T>(&self, key: &str, f: impl FnOnce() -> T) -> T {
        let wall = Instant::now();
        let cpu = cpu_seconds(libc::CLOCK_THREAD_CPUTIME_ID);
        let out = f();
        let cpu_s = match (cpu, cpu_seconds(libc::CLOCK_THREAD_CPUTIME_ID)) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        let t = RunTime {
            wall_s: wall.elapsed().as_secs_f64(),
            cpu_s,
        };
        if let Ok(mut times) = self.times.lock() {
            times.insert(key.to_string(), t);
        }
        out
    }

    /// The time of the run `key`, if this invocation executed it.
    pub fn run_time(&self, key: &str) -> Option<RunTime> {
        self.times.lock().ok()?.get(key).copied()
    }

    /// The provenance of this invocation so far, for results of plans in `plan_dir`.
    pub fn provenance(&self, plan_dir: &Path) -> Provenance {
        let (git_rev, git_dirty) = git_state(plan_dir);
        let cpu_s = match (
            self.cpu_at_start,
            cpu_seconds(libc::CLOCK_PROCESS_CPUTIME_ID),
        ) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        Provenance {
            git_rev,
            git_dirty,
            build: code_id().to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            host: host_name(),
            started_at_us: micros_since_epoch(self.started_at),
            wall_s: self.started.elapsed().as_secs_f64(),
            cpu_s,
        }
    }
}

/// What every row of one results file records about where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// `git rev-parse HEAD` of the repository holding the plan; `None` outside git.
    pub git_rev: Option<String>,
    /// Whether tracked files differ from that revision (`git status`); `None` outside git.
    pub git_dirty: Option<bool>,
    /// The build's hash ([`code_id`], also part of every cache key).
    pub build: String,
    /// quiclab's version.
    pub version: String,
    pub host: String,
    /// When the invocation started, in microseconds since the Unix epoch (UTC).
    pub started_at_us: i64,
    /// Wall and process CPU time of the invocation (all its threads).
    pub wall_s: f64,
    pub cpu_s: Option<f64>,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn micros_since_epoch(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// `YYYYmmddTHHMMSSZ` (UTC) of a time in microseconds since the Unix epoch.
fn utc_stamp(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let (y, m, d) = civil_date(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian; Howard
/// Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A CPU clock in seconds (`clock_gettime`), `None` if the OS refuses it.
fn cpu_seconds(clock: libc::clockid_t) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, which is what we pass.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// (revision, dirty) of the git work tree holding `dir`; both `None` when git or the
/// repository is not there.
fn git_state(dir: &Path) -> (Option<String>, Option<bool>) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let rev = git(&["rev-parse", "HEAD"]).filter(|r| !r.is_empty());
    let dirty = rev
        .as_ref()
        .and_then(|_| git(&["status", "--porcelain", "--untracked-files=no"]))
        .map(|s| !s.is_empty());
    (rev, dirty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(59), (1970, 3, 1));
        // 2000-02-29 (a leap day of a century year divisible by 400).
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_783), (2026, 11, 26));
    }

    #[test]
    fn stamp_formats_utc() {
        let micros = (20_783 * 86_400 + 12 * 3600 + 3 * 60 + 4) * 1_000_000 + 5;
        assert_eq!(utc_stamp(micros), "20261126T120304Z");
    }

    #[test]
    fn invocation_ids_differ() {
        assert_ne!(Invocation::start().id(), Invocation::start().id());
    }

    #[test]
    fn timing_records_the_run() {
        let inv = Invocation::start();
        let v = inv.time("k", || (0..100_000u64).sum::<u64>());
        assert_eq!(v, 4_999_950_000);
        let t = inv.run_time("k").unwrap();
        assert!(t.wall_s >= 0.0 && t.cpu_s >= 0.0);
        assert_eq!(inv.run_time("other"), None);
    }
}
