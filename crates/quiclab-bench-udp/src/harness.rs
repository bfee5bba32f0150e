//! Runs each stack's server and client as separate processes, one sample at a time,
//! stacks interleaved within each repetition so a noisy (shared, 2-core) machine
//! loads them alike; wall time of the client, CPU of both from `wait4`'s rusage.

use anyhow::{bail, Context, Result};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One stack under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// quiclab with its defaults: PMTU discovery up to the interface's MTU (on
    /// loopback 65507 bytes, as kernel TCP's MSS follows loopback's MTU).
    Quiclab,
    /// quiclab with PMTU discovery capped at 1452 bytes, quinn's bound (a 1500-byte
    /// Ethernet MTU): like for like with quinn and with a real network path.
    Quiclab1452,
    /// quiclab's server and client with `--tls-random seeded` whatever
    /// `BENCH_TLS_RANDOM` says: the handshakes suite's A/B against the OS-random default.
    QuiclabSeeded,
    Quinn,
    RustlsTcp,
}

impl Stack {
    pub fn name(self) -> &'static str {
        match self {
            Stack::Quiclab => "quiclab",
            Stack::Quiclab1452 => "quiclab-1452",
            Stack::QuiclabSeeded => "quiclab-seeded",
            Stack::Quinn => "quinn",
            Stack::RustlsTcp => "rustls/TCP",
        }
    }
}

/// The `--tls-random` of quiclab's server and client: `BENCH_TLS_RANDOM` (`seeded` or
/// `os`), by default `os`, what a real server or client uses (the seeded default of
/// `quiclab server` and `quiclab client` keeps runs repeatable at a handshake cost).
pub fn tls_random() -> String {
    std::env::var("BENCH_TLS_RANDOM").unwrap_or_else(|_| "os".into())
}

/// The `--tls-random` of a quiclab stack's server and client.
fn stack_tls_random(stack: Stack) -> String {
    match stack {
        Stack::QuiclabSeeded => "seeded".to_string(),
        _ => tls_random(),
    }
}

/// Where the binaries are.
pub struct Bins {
    pub quiclab: PathBuf,
    pub this: PathBuf,
    /// An empty directory for quiclab's server root (bodies are generated `/N`).
    pub root: PathBuf,
}

/// What one run measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub wall: f64,
    pub client_cpu: f64,
    pub server_cpu: f64,
    /// Peak resident set of the server, KiB.
    pub server_maxrss_kib: u64,
}

fn free_port(stack: Stack) -> Result<u16> {
    Ok(match stack {
        Stack::RustlsTcp => TcpListener::bind("127.0.0.1:0")?.local_addr()?.port(),
        _ => UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port(),
    })
}

fn server_cmd(b: &Bins, stack: Stack, port: u16) -> Command {
    let addr = format!("127.0.0.1:{port}");
    let mut c;
    match stack {
        Stack::Quiclab | Stack::Quiclab1452 | Stack::QuiclabSeeded => {
            c = Command::new(&b.quiclab);
            let random = stack_tls_random(stack);
            // ECDSA P-256 like the baselines' rcgen certificate.
            c.args([
                "server",
                "--seed",
                "1",
                "--cert-type",
                "ecdsa-p256",
                "--tls-random",
                &random,
                "--listen",
            ])
            .arg(addr)
            .arg("--root")
            .arg(&b.root);
            if stack == Stack::Quiclab1452 {
                c.args(["--pmtud-max", "1452"]);
            }
        }
        Stack::Quinn => {
            c = Command::new(&b.this);
            c.args(["quinn-server", &addr]);
        }
        Stack::RustlsTcp => {
            c = Command::new(&b.this);
            c.args(["tcp-server", &addr]);
        }
    }
    c
}

fn client_cmd(b: &Bins, stack: Stack, port: u16, connections: usize, bytes: u64) -> Command {
    let addr = format!("127.0.0.1:{port}");
    let mut c;
    match stack {
        Stack::Quiclab | Stack::Quiclab1452 | Stack::QuiclabSeeded => {
            c = Command::new(&b.quiclab);
            c.args([
                "client",
                "--insecure",
                "--alpn",
                "hq-interop",
                "--check",
                "--seed",
                "2",
                "--tls-random",
                &stack_tls_random(stack),
            ])
            .arg("--connections")
            .arg(connections.to_string())
            .arg(format!("https://{addr}/{bytes}"));
            if stack == Stack::Quiclab1452 {
                c.args(["--pmtud-max", "1452"]);
            }
        }
        Stack::Quinn => {
            c = Command::new(&b.this);
            c.args(["quinn-client", &addr])
                .arg(connections.to_string())
                .arg(bytes.to_string());
        }
        Stack::RustlsTcp => {
            c = Command::new(&b.this);
            c.args(["tcp-client", &addr]).arg(bytes.to_string());
        }
    }
    c
}

/// Waits for a child by pid; its exit status and resource usage.
fn wait4(pid: u32) -> Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; pid is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    if r < 0 {
        bail!("wait4: {}", std::io::Error::last_os_error());
    }
    Ok((status, usage))
}

fn cpu_seconds(u: &libc::rusage) -> f64 {
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// One transfer: `connections` connections each fetching `bytes`.
pub fn run_once(b: &Bins, stack: Stack, connections: usize, bytes: u64) -> Result<Sample> {
    let port = free_port(stack)?;
    let server = server_cmd(b, stack, port)
        .stderr(Stdio::null())
        .spawn()
        .context("starting the server")?;
    std::thread::sleep(Duration::from_millis(400));
    let start = Instant::now();
    let err_path = b.root.join(format!("client-{}.err", std::process::id()));
    let client = client_cmd(b, stack, port, connections, bytes)
        .stderr(std::fs::File::create(&err_path)?)
        .stdout(Stdio::null())
        .spawn()
        .context("starting the client")?;
    let (status, cu) = wait4(client.id())?;
    let wall = start.elapsed().as_secs_f64();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let (_, su) = wait4(server.id())?;
    if status != 0 {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        bail!("{} client failed ({status}): {tail:?}", stack.name());
    }
    Ok(Sample {
        wall,
        client_cpu: cpu_seconds(&cu),
        server_cpu: cpu_seconds(&su),
        server_maxrss_kib: su.ru_maxrss as u64,
    })
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A scratch directory for quiclab's server root.
pub fn scratch() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("bench-udp-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

pub fn exists(p: &Path) -> Result<()> {
    if !p.is_file() {
        bail!(
            "{}: not found (build quiclab-cli in release mode first)",
            p.display()
        );
    }
    Ok(())
}
