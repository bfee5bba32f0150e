//! `quiclab probe URL...`: one QUIC handshake per server with quiclab's client
//! ([`quiclab_net::probe`]), many at once under a rate limit, printed as a table and
//! written as CSV (one row per server, columns in [`output::COLUMNS`]) or JSON. A
//! server that does not answer is a row with an error, never a failure of the command.

mod output;

use crate::inputs;
use anyhow::{bail, Context, Result};
use clap::Args;
use quiclab_net::probe::{self, ProbeOptions, ProbeReport, Target};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Certificates are NOT verified: a measurement tool records the chain a server
/// sends, whoever signed it (the CertificateVerify signature is still checked).
#[derive(Args)]
pub struct ProbeArgs {
    /// Servers: https://host[:port][/path], host:port or host (port 443).
    urls: Vec<String>,
    /// Also read servers from this file, one per line (# starts a comment).
    #[arg(long)]
    file: Option<PathBuf>,
    /// ALPNs offered, most preferred first (comma-separated; the server picks one).
    #[arg(long, value_delimiter = ',', default_value = "h3,hq-interop")]
    alpn: Vec<String>,
    /// Servers probed at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    parallel: u32,
    /// Most handshakes started per second, over all servers (0: no limit).
    #[arg(long, default_value_t = 10.0)]
    rate: f64,
    /// Longest wait for one server's handshake, milliseconds.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// Write one row per server to this CSV file (columns: see the guide, "probe").
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the reports as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Seed of the client's randomness; probe i uses seed + i (default: from the OS).
    #[arg(long)]
    seed: Option<u64>,
}

pub fn run(a: ProbeArgs) -> Result<()> {
    if !(a.rate.is_finite() && a.rate >= 0.0) {
        bail!("--rate must be a number of handshakes per second, 0 or more");
    }
    let mut inputs_list = a.urls.clone();
    if let Some(f) = &a.file {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        inputs_list.extend(
            text.lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(String::from),
        );
    }
    if inputs_list.is_empty() {
        bail!("no servers to probe (give URLs or --file)");
    }
    let seed = inputs::seed(a.seed)?;
    let opts = ProbeOptions {
        alpns: a.alpn.iter().map(|s| s.as_bytes().to_vec()).collect(),
        timeout: Duration::from_millis(a.timeout_ms),
        seed,
        ..ProbeOptions::default()
    };
    eprintln!(
        "quiclab probe: {} server(s), {} at once, {} handshakes/s, timeout {} ms, seed {seed}; certificates not verified",
        inputs_list.len(),
        a.parallel,
        if a.rate > 0.0 { a.rate.to_string() } else { "unlimited".into() },
        a.timeout_ms
    );
    let reports = probe_all(&inputs_list, &opts, a.parallel as usize, a.rate);
    print!("{}", output::table(&reports));
    if let Some(path) = &a.csv {
        std::fs::write(path, output::csv(&reports))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&output::json(&reports))?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Probes every input on `parallel` threads, starting at most `rate` per second;
/// reports in input order (an unparsable input is a report with its error).
fn probe_all(
    inputs: &[String],
    opts: &ProbeOptions,
    parallel: usize,
    rate: f64,
) -> Vec<ProbeReport> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<ProbeReport>>> = Mutex::new(vec![None; inputs.len()]);
    let pace = Pacer::new(rate);
    std::thread::scope(|s| {
        for _ in 0..parallel.min(inputs.len()) {
            s.spawn(|| {
                // The probes' run-time notes would interleave: dropped.
                quiclab_net::notes::redirect(Box::new(std::io::sink()));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(i) else { break };
                    let report = match Target::parse(input) {
                        Ok(t) => {
                            pace.wait();
                            let o = ProbeOptions {
                                seed: opts.seed.wrapping_add(i as u64),
                                ..opts.clone()
                            };
                            probe::probe(&t, &o)
                        }
                        Err(e) => ProbeReport {
                            target: Target {
                                input: input.clone(),
                                ..Target::default()
                            },
                            error: Some(e.to_string()),
                            ..ProbeReport::default()
                        },
                    };
                    slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(report);
                }
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|e| e.into_inner());
    slots.into_iter().flatten().collect()
}

/// Spaces handshake starts 1/rate apart across threads (rate 0: no spacing).
struct Pacer {
    gap: Option<Duration>,
    next: Mutex<Instant>,
}

impl Pacer {
    fn new(rate: f64) -> Pacer {
        Pacer {
            gap: (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate)),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Blocks until this caller's start time (the slot after the last one handed out).
    fn wait(&self) {
        let Some(gap) = self.gap else { return };
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let at = (*next).max(Instant::now());
            *next = at + gap;
            at
        };
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
    }
}
