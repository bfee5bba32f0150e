//! The processes of one real run: spawned from expanded argv with their output in
//! files, waited for with a wall-clock limit, and stopped with SIGTERM (so a server or
//! the emulator flushes its qlog, pcap and statistics) before SIGKILL.
//!
//! Endpoints may be spawned in the real-time FIFO class ([`Sched::Fifo`]): a woken
//! normal-priority process waits for a CPU behind every other runnable process, which
//! on a busy machine adds milliseconds to a round trip at random (measured: a
//! flow-control-limited download through the emulator at 50 ms RTT got 15.5-15.8
//! Mbit/s at load 11 with normal endpoints, 16.55 with FIFO ones, against the
//! simulator's 16.69; docs/PERFORMANCE.md).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Real-time priority of the endpoints: below the emulator's (20, `quiclab emulate`'s
/// own request), so the relay gets a CPU before them, and above every normal process.
pub(crate) const ENDPOINT_PRIORITY: i32 = 10;

/// The scheduling class a process is asked to run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// Inherit the lab's (normal) scheduling.
    Inherit,
    /// SCHED_FIFO at [`ENDPOINT_PRIORITY`] where permitted (root or CAP_SYS_NICE);
    /// where it is refused the process runs normally: check with [`Proc::sched`].
    Fifo,
}

/// A running process of a run, killed when dropped if still running.
pub struct Proc {
    pub name: String,
    child: Child,
    stderr: std::path::PathBuf,
}

/// Starts `argv` with stdout and stderr in `dir/<name>.out` and `dir/<name>.err`.
pub fn spawn(
    name: &str,
    argv: &[String],
    dir: &Path,
    env: &[(&str, &Path)],
    sched: Sched,
) -> Result<Proc, String> {
    let (prog, args) = argv.split_first().ok_or("empty command")?;
    let file = |ext: &str| {
        let p = dir.join(format!("{name}.{ext}"));
        File::create(&p)
            .map(|f| (f, p.clone()))
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let (out, _) = file("out")?;
    let (err, err_path) = file("err")?;
    let mut cmd = Command::new(prog);
    cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if sched == Sched::Fifo {
        // SAFETY: runs in the child between fork and exec and makes one
        // async-signal-safe syscall; a refusal is ignored (the process runs normally).
        unsafe {
            cmd.pre_exec(|| {
                let param = libc::sched_param {
                    sched_priority: ENDPOINT_PRIORITY,
                };
                libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
                Ok(())
            });
        }
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("{name}: cannot start `{}`: {e}", argv.join(" ")))?;
    Ok(Proc {
        name: name.to_string(),
        child,
        stderr: err_path,
    })
}

impl Proc {
    /// "fifo" if the process runs in the real-time FIFO class, else "normal".
    pub fn sched(&self) -> &'static str {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: a query about our own child, which has not been reaped (still ours).
        let policy = unsafe { libc::sched_getscheduler(pid) };
        if policy == libc::SCHED_FIFO {
            "fifo"
        } else {
            "normal"
        }
    }

    /// The last lines of its stderr, for error messages.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr)
    }

    /// Waits until the process has written to stderr (quiclab's server and emulator
    /// print their address once bound), up to `limit`; an exit meanwhile is an error.
    pub fn wait_started(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited at start ({status}): {}",
                    self.name,
                    self.stderr_tail()
                ));
            }
            if std::fs::metadata(&self.stderr).is_ok_and(|m| m.len() > 0) {
                // The message is printed right after binding; give the loop a moment.
                std::thread::sleep(Duration::from_millis(50));
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!("{} printed nothing within {limit:?}", self.name))
    }

    /// Waits for the exit, up to `limit` (then kills it and says so).
    pub fn wait(&mut self, limit: Duration) -> Result<ExitStatus, String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(format!("{} did not finish within {limit:?}", self.name));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM, up to 3 s to exit, then SIGKILL.
    pub fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on our own child's pid, which we have not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        if self.wait(Duration::from_secs(3)).is_err() {
            let _ = self.child.kill();
        }
    }
}

/// The last lines of a log file, for error messages (empty if unreadable).
pub fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}
