//! quiclab's own server, client and emulator in-process, on threads of the lab
//! ([`quiclab_net`]): what the default templates (`DEFAULT_SERVER`, `DEFAULT_CLIENT`,
//! `DEFAULT_EMULATOR` in [`crate::plan::endpoints`]) would start as processes, with the
//! same files (the configs, qlogs, key log, the emulator's links.csv, emulate.json and
//! capture; each one's notes in `<name>.err`, as a process's stderr). The endpoints'
//! threads ask for the real-time FIFO class as the processes
//! did ([`super::process`] says why); the emulator's thread for its own, higher one.

use super::process::{Sched, ENDPOINT_PRIORITY};
use super::workdir::Values;
use quiclab_net::emulate::{self, Emulator, EmulatorConfig};
use quiclab_net::transfer::{self, FetchOptions, FetchReport, ServerOptions};
use quiclab_net::{DriverConfig, StopHandle};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a stopped thread may take to finish (close connections, write files).
const STOP_LIMIT: Duration = Duration::from_secs(3);

/// A server or emulator running on a thread of the lab until [`Thread::stop`].
pub struct Thread {
    pub name: &'static str,
    /// Its notes (`<run>/<name>.err`).
    notes: PathBuf,
    stop: Box<dyn Fn() + Send>,
    thread: Option<JoinHandle<Result<(), String>>>,
    sched: &'static str,
}

impl Thread {
    /// "fifo" if the thread runs in the real-time FIFO class, else "normal".
    pub fn sched(&self) -> &'static str {
        self.sched
    }

    /// The last lines of its notes, for error messages.
    pub fn notes_tail(&self) -> String {
        super::process::tail(&self.notes)
    }

    /// Stops the thread and waits for it (up to 3 s); its error, if any.
    pub fn stop(&mut self) -> Result<(), String> {
        (self.stop)();
        let Some(t) = self.thread.take() else {
            return Ok(());
        };
        join_within(self.name, t, STOP_LIMIT)
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Joins `t` if it ends within `limit` (a thread cannot be killed: past the limit it is
/// left to finish on its own, and the run fails).
fn join_within(
    name: &str,
    t: JoinHandle<Result<(), String>>,
    limit: Duration,
) -> Result<(), String> {
    let start = std::time::Instant::now();
    while !t.is_finished() {
        if start.elapsed() > limit {
            return Err(format!("{name} did not stop within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    t.join().unwrap_or_else(|_| Err(format!("{name} panicked")))
}

/// Sends the calling thread's notes (quiclab-net's run-time lines, which a process
/// would print on stderr) to `<dir>/<name>.err`, as a process's stderr went.
fn notes_to(dir: &Path, name: &str) {
    if let Ok(f) = std::fs::File::create(dir.join(format!("{name}.err"))) {
        quiclab_net::notes::redirect(Box::new(f));
    }
}

/// Puts the calling thread in the FIFO class at `priority` when asked and permitted
/// (Linux: `sched_setscheduler(0, …)` applies to the calling thread); returns the class
/// it runs in.
fn set_sched(sched: Sched, priority: i32) -> &'static str {
    if sched == Sched::Fifo {
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: a plain syscall on the calling thread with a valid sched_param; a
        // refusal leaves it in its class.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    }
    // SAFETY: a query about the calling thread.
    if unsafe { libc::sched_getscheduler(0) } == libc::SCHED_FIFO {
        "fifo"
    } else {
        "normal"
    }
}

fn value<'a>(values: &'a Values, key: &str) -> Result<&'a str, String> {
    values
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| format!("no value for `{{{key}}}`"))
}

fn addr(values: &Values, key: &str) -> Result<SocketAddr, String> {
    value(values, key)?
        .parse()
        .map_err(|e| format!("{{{key}}}: {e}"))
}

/// Waits for a thread's start-up message, or its error if it ended instead.
fn started<T>(
    name: &'static str,
    rx: &mpsc::Receiver<T>,
    thread: JoinHandle<Result<(), String>>,
    limit: Duration,
) -> Result<(T, JoinHandle<Result<(), String>>), String> {
    match rx.recv_timeout(limit) {
        Ok(v) => Ok((v, thread)),
        Err(mpsc::RecvTimeoutError::Disconnected) => match join_within(name, thread, limit) {
            Ok(()) => Err(format!("{name} ended at start")),
            Err(e) => Err(format!("{name} failed at start: {e}")),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(format!("{name} did not start within {limit:?}"))
        }
    }
}

/// Starts quiclab's server (as `DEFAULT_SERVER`) on `{server_addr}`.
pub fn start_server(
    values: &Values,
    seed: u64,
    sched: Sched,
    limit: Duration,
) -> Result<Thread, String> {
    let opts = ServerOptions {
        listen: addr(values, "server_addr")?,
        root: PathBuf::from(value(values, "root")?),
        config: Some(PathBuf::from(value(values, "server_config")?)),
        cert_padding: value(values, "cert_padding")?
            .parse()
            .map_err(|e| format!("{{cert_padding}}: {e}"))?,
        qlog_dir: Some(PathBuf::from(value(values, "server_qlog_dir")?)),
        key_log: Some(PathBuf::from(value(values, "keylog")?)),
        seed,
        driver: DriverConfig::default(),
    };
    let dir = PathBuf::from(value(values, "out_dir")?);
    let notes_dir = dir.clone();
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("quiclab server".into())
        .spawn(move || {
            notes_to(&dir, "server");
            let class = set_sched(sched, ENDPOINT_PRIORITY);
            transfer::serve(&opts, |_, stop| {
                let _ = tx.send((stop, class));
            })
            .map(drop)
            .map_err(|e| format!("server: {e}"))
        })
        .map_err(|e| format!("server thread: {e}"))?;
    let ((stop, class), thread): ((StopHandle, &'static str), _) =
        started("server", &rx, thread, limit)?;
    Ok(Thread {
        name: "server",
        notes: notes_dir.join("server.err"),
        stop: Box::new(move || stop.stop()),
        thread: Some(thread),
        sched: class,
    })
}

/// Starts the emulator (as `DEFAULT_EMULATOR`): the run's scenario between
/// `{listen_addr}` and `{server_addr}`, a capture of both sides, its files in
/// `{out_dir}/emulator` when stopped.
pub fn start_emulator(values: &Values, limit: Duration) -> Result<Thread, String> {
    let (scenario, duplex) =
        emulate::load(Path::new(value(values, "scenario")?)).map_err(|e| e.to_string())?;
    let config = EmulatorConfig::new(addr(values, "listen_addr")?, addr(values, "server_addr")?);
    let run_dir = PathBuf::from(value(values, "out_dir")?);
    let out = run_dir.join("emulator");
    let notes_dir = run_dir.clone();
    let keylog = PathBuf::from(value(values, "keylog")?);
    let flag = Arc::new(AtomicBool::new(false));
    let stop_flag = flag.clone();
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("quiclab emulate".into())
        .spawn(move || {
            notes_to(&run_dir, "emulator");
            let fail = |e: quiclab_net::NetError| format!("emulator: {e}");
            let mut emulator = Emulator::bind(scenario, duplex, &config).map_err(fail)?;
            // Its own real-time priority, above the endpoints' (as `quiclab emulate`).
            let class = if emulate::raise_priority().is_ok() {
                "fifo"
            } else {
                "normal"
            };
            emulator.capture_to(&out).map_err(fail)?;
            let _ = tx.send(class);
            let end = emulator
                .run(None, &|| stop_flag.load(Ordering::Relaxed))
                .map_err(fail)?;
            emulator.finish(&out, end, Some(&keylog)).map_err(fail)
        })
        .map_err(|e| format!("emulator thread: {e}"))?;
    let (class, thread) = started("emulator", &rx, thread, limit)?;
    Ok(Thread {
        name: "emulator",
        notes: notes_dir.join("emulator.err"),
        stop: Box::new(move || flag.store(true, Ordering::Relaxed)),
        thread: Some(thread),
        sched: class,
    })
}

/// Runs quiclab's client (as `DEFAULT_CLIENT`: one checked hq-interop GET of `{size}`
/// from `{port}`) on a thread, up to `limit`; returns its report and scheduling class.
/// A fetch that failed is an error with its report.
pub fn run_client(
    values: &Values,
    seed: u64,
    sched: Sched,
    limit: Duration,
) -> Result<(FetchReport, &'static str), String> {
    let port: u16 = value(values, "port")?
        .parse()
        .map_err(|e| format!("{{port}}: {e}"))?;
    let host: std::net::IpAddr = value(values, "host")?
        .parse()
        .map_err(|e| format!("{{host}}: {e}"))?;
    let opts = FetchOptions {
        server: SocketAddr::new(host, port),
        size: value(values, "size")?
            .parse()
            .map_err(|e| format!("{{size}}: {e}"))?,
        config: Some(PathBuf::from(value(values, "client_config")?)),
        qlog_dir: Some(PathBuf::from(value(values, "qlog_dir")?)),
        key_log: Some(PathBuf::from(value(values, "keylog")?)),
        seed,
        driver: DriverConfig::default(),
    };
    let dir = PathBuf::from(value(values, "out_dir")?);
    let notes = dir.join("client.err");
    let (stop_tx, stop_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("quiclab client".into())
        .spawn(move || {
            notes_to(&dir, "client");
            let class = set_sched(sched, ENDPOINT_PRIORITY);
            let report = transfer::fetch(&opts, |stop| {
                let _ = stop_tx.send(stop);
            });
            let _ = done_tx.send((report.map_err(|e| format!("client: {e}")), class));
        })
        .map_err(|e| format!("client thread: {e}"))?;
    let (report, class) = match done_rx.recv_timeout(limit) {
        Ok(done) => done,
        Err(_) => {
            // A graceful stop (the connection closes), then the thread's end.
            if let Ok(stop) = stop_rx.try_recv() {
                stop.stop();
            }
            let _ = done_rx.recv_timeout(STOP_LIMIT);
            return Err(format!("client did not finish within {limit:?}"));
        }
    };
    let report = report?;
    if report.failures > 0 || !report.handshake_completed {
        return Err(format!(
            "the client failed: {} failure(s), handshake {}, {} body bytes: {}",
            report.failures,
            if report.handshake_completed {
                "completed"
            } else {
                "not completed"
            },
            report.body_bytes,
            super::process::tail(&notes)
        ));
    }
    Ok((report, class))
}
