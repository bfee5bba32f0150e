//! `bench-udp`: quiclab's real-UDP driver side by side with quinn and with rustls over
//! kernel TCP (issue 13). Each suite runs every stack in one invocation, interleaved,
//! and prints medians and ratios as a Markdown table (docs/PERFORMANCE.md).
//!
//! ```text
//! bench-udp bulk       --quiclab PATH [--bytes N] [--reps R]
//! bench-udp handshakes --quiclab PATH [--connections N] [--reps R]
//! bench-udp emulate    --quiclab PATH [--rates 10,100,500,1000] [--secs S] [-- EMULATOR FLAGS]
//! bench-udp gaps       --quiclab PATH [--rates 50,200,500] [--secs S] [--wakes timerfd,poll]
//!                      [--bursts 1000,0] [--sched normal,fifo]
//! bench-udp {quinn,tcp}-server ADDR | quinn-client ADDR CONNS BYTES | tcp-client ADDR BYTES
//! ```
//! scripts/bench-udp.sh builds and runs them all.

mod body;
mod emulate;
mod gaps;
mod harness;
mod idle;
mod quinn_side;
mod stamp;
mod stamped_batch;
mod tcp_side;
mod tls;

use anyhow::{bail, Context, Result};
use harness::{median, run_once, Bins, Sample, Stack};
use std::path::PathBuf;

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("bench-udp: {e:#}");
        std::process::exit(1);
    }
}

fn run(args: Vec<String>) -> Result<()> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["quinn-server", addr] => quinn_side::server(addr.parse()?),
        ["quinn-client", addr, conns, bytes] => {
            quinn_side::client(addr.parse()?, conns.parse()?, bytes.parse()?)
        }
        ["tcp-server", addr] => tcp_side::server(addr.parse()?),
        ["tcp-client", addr, bytes] => tcp_side::client(addr.parse()?, bytes.parse()?),
        ["bulk", rest @ ..] => {
            let o = Opts::parse(rest)?;
            bulk(&o)
        }
        ["idle", rest @ ..] => {
            let o = Opts::parse(rest)?;
            let n = o.connections;
            let (server, client, up) = idle::measure(&o.bins, n)?;
            println!("idle: {n} connections held open after the handshake (hq-interop):\n");
            println!("- server RSS per idle connection: {:.1} KiB", server / 1024.0);
            println!("- client RSS per idle connection (whole process / {n}): {:.1} KiB", client / 1024.0);
            println!(
                "- {n} connections established in {up:.1} s (server and client --tls-random {})",
                harness::tls_random()
            );
            Ok(())
        }
        ["emulate", rest @ ..] => emulate_suite(rest),
        ["gaps", rest @ ..] => gaps_suite(rest),
        ["handshakes", rest @ ..] => {
            let o = Opts::parse(rest)?;
            handshakes(&o)
        }
        _ => bail!("usage: bench-udp bulk|handshakes --quiclab PATH [--bytes N] [--connections N] [--reps R]"),
    }
}

/// Options of the suites.
struct Opts {
    bins: Bins,
    bytes: u64,
    connections: usize,
    reps: usize,
}

impl Opts {
    fn parse(args: &[&str]) -> Result<Opts> {
        let mut quiclab = None;
        let (mut bytes, mut connections, mut reps) = (100_000_000u64, 1000usize, 5usize);
        let mut it = args.iter();
        while let Some(&flag) = it.next() {
            let value = it.next().with_context(|| format!("{flag} needs a value"))?;
            match flag {
                "--quiclab" => quiclab = Some(PathBuf::from(value)),
                "--bytes" => bytes = value.parse()?,
                "--connections" => connections = value.parse()?,
                "--reps" => reps = value.parse()?,
                _ => bail!("unknown option {flag}"),
            }
        }
        let quiclab = quiclab.context("--quiclab PATH (the release quiclab binary)")?;
        harness::exists(&quiclab)?;
        let bins = Bins {
            quiclab,
            this: std::env::current_exe()?,
            root: harness::scratch()?,
        };
        Ok(Opts {
            bins,
            bytes,
            connections,
            reps,
        })
    }
}

/// Runs `stacks` `reps` times, interleaved; the samples per stack.
fn samples(o: &Opts, stacks: &[Stack], connections: usize, bytes: u64) -> Result<Vec<Vec<Sample>>> {
    let mut out = vec![Vec::new(); stacks.len()];
    for rep in 0..o.reps {
        for (i, &s) in stacks.iter().enumerate() {
            let x = run_once(&o.bins, s, connections, bytes)?;
            eprintln!(
                "rep {rep} {:<10} wall {:.3} s, client CPU {:.3} s, server CPU {:.3} s, server max RSS {} KiB",
                s.name(),
                x.wall,
                x.client_cpu,
                x.server_cpu,
                x.server_maxrss_kib
            );
            out[i].push(x);
        }
    }
    Ok(out)
}

fn med(v: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    median(v.iter().map(f).collect())
}

/// Bulk: one connection, `bytes` server to client. quiclab runs twice: with its
/// defaults (datagrams up to the interface MTU, like kernel TCP's segments) and capped
/// at quinn's 1452 bytes (like for like with quinn, and with a 1500-byte network).
fn bulk(o: &Opts) -> Result<()> {
    let stacks = [
        Stack::Quiclab,
        Stack::Quiclab1452,
        Stack::Quinn,
        Stack::RustlsTcp,
    ];
    let s = samples(o, &stacks, 1, o.bytes)?;
    let gb = o.bytes as f64 / 1e9;
    println!(
        "bulk {} MB over loopback, one connection, medians of {}:\n",
        o.bytes / 1_000_000,
        o.reps
    );
    println!("| stack | wall s | Mbit/s | client CPU s/GB | server CPU s/GB |");
    println!("|---|---|---|---|---|");
    for (stack, v) in stacks.iter().zip(&s) {
        let wall = med(v, |x| x.wall);
        println!(
            "| {} | {wall:.3} | {:.0} | {:.2} | {:.2} |",
            stack.name(),
            o.bytes as f64 * 8.0 / wall / 1e6,
            med(v, |x| x.client_cpu) / gb,
            med(v, |x| x.server_cpu) / gb
        );
    }
    let (q, q1452, n, t) = (&s[0], &s[1], &s[2], &s[3]);
    let cpu = |v: &[Sample]| med(v, |x| x.client_cpu + x.server_cpu);
    let server = |v: &[Sample]| med(v, |x| x.server_cpu);
    println!();
    println!(
        "- wall-time ratio quinn/quiclab-1452 (>1: quiclab faster): {:.2} (quinn/quiclab: {:.2})",
        med(n, |x| x.wall) / med(q1452, |x| x.wall),
        med(n, |x| x.wall) / med(q, |x| x.wall)
    );
    println!(
        "- CPU per byte (client+server) quiclab-1452/quinn: {:.2}",
        cpu(q1452) / cpu(n)
    );
    println!(
        "- server CPU per GB over rustls-over-TCP: quiclab {:.2}, quiclab-1452 {:.2}, quinn {:.2}",
        server(q) / server(t),
        server(q1452) / server(t),
        server(n) / server(t)
    );
    Ok(())
}

/// Handshakes: `connections` concurrent connections, each one handshake and one
/// empty request; handshakes per CPU-second of the server (one thread each). quiclab's
/// server and client run with `--tls-random` from `BENCH_TLS_RANDOM` (default `os`)
/// and, unless that is `seeded`, also with `seeded` (the A/B, interleaved in the same
/// run).
fn handshakes(o: &Opts) -> Result<()> {
    let random = harness::tls_random();
    let stacks: &[Stack] = if random == "seeded" {
        &[Stack::Quiclab, Stack::Quinn]
    } else {
        &[Stack::Quiclab, Stack::QuiclabSeeded, Stack::Quinn]
    };
    let n = o.connections;
    let s = samples(o, stacks, n, 0)?;
    println!(
        "handshakes: {n} concurrent connections (handshake + one empty request), quiclab's server and client with --tls-random {random}, medians of {}:\n",
        o.reps
    );
    println!("| stack | wall s | server handshakes per CPU-s | client handshakes per CPU-s | server max RSS MiB |");
    println!("|---|---|---|---|---|");
    for (stack, v) in stacks.iter().zip(&s) {
        println!(
            "| {} | {:.3} | {:.0} | {:.0} | {:.1} |",
            stack.name(),
            med(v, |x| x.wall),
            n as f64 / med(v, |x| x.server_cpu),
            n as f64 / med(v, |x| x.client_cpu),
            med(v, |x| x.server_maxrss_kib as f64) / 1024.0
        );
    }
    let server = |v: &[Sample]| med(v, |x| x.server_cpu);
    let quinn = server(&s[stacks.len() - 1]);
    println!();
    println!(
        "- server handshakes per core, quiclab/quinn: {:.2}",
        quinn / server(&s[0])
    );
    if stacks.len() == 3 {
        println!(
            "- server handshakes per core, quiclab-seeded/quinn: {:.2} (os/seeded: {:.2})",
            quinn / server(&s[1]),
            server(&s[1]) / server(&s[0])
        );
    }
    Ok(())
}

/// `bench-udp emulate`: delay error and throughput through `quiclab emulate` per rate,
/// as a Markdown table.
fn emulate_suite(args: &[&str]) -> Result<()> {
    let (mut quiclab, mut rates, mut secs) = (None, vec![10.0, 100.0, 500.0, 1000.0], 3.0);
    let mut extra = Vec::new();
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        if flag == "--" {
            extra = it.by_ref().map(|s| s.to_string()).collect();
            break;
        }
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag {
            "--quiclab" => quiclab = Some(PathBuf::from(value)),
            "--rates" => rates = value.split(',').map(str::parse).collect::<Result<_, _>>()?,
            "--secs" => secs = value.parse()?,
            _ => bail!("unknown option {flag}"),
        }
    }
    let quiclab = quiclab.context("--quiclab PATH is required")?;
    println!("load average {}", load_average());
    println!(
        "| link | load | sent | offered | received | delay error p50 | p99 | p999 | \
         p99 / p999, exact send times (share) | throughput |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for rate in rates {
        let (light, heavy) = emulate::measure(&quiclab, rate, secs, &extra)?;
        for (load, p) in [("50%", light), ("120%", heavy)] {
            println!(
                "| {rate} Mbit/s | {load} | {} | {:.1} Mbit/s | {} | {:.0} µs | {:.0} µs | \
                 {:.0} µs | {:.0} / {:.0} µs ({:.0}%) | {:.1} Mbit/s |",
                p.sent,
                p.offered_mbps,
                p.received,
                p.p50_us,
                p.p99_us,
                p.p999_us,
                p.exact_p99_us,
                p.exact_p999_us,
                p.exact_share * 100.0,
                p.throughput_mbps
            );
        }
    }
    Ok(())
}

/// The machine's 1-minute load average (/proc/loadavg), for the record.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// `bench-udp gaps`: the pacer's schedule against the departures, per rate, wake-up
/// mode and burst setting, as a Markdown table.
fn gaps_suite(args: &[&str]) -> Result<()> {
    let mut quiclab = None;
    let (mut rates, mut secs) = (vec![50.0, 200.0, 500.0], 2.0);
    let mut wakes = vec!["timerfd".to_string(), "poll".to_string()];
    let mut bursts = vec![1000u64, 0];
    let mut scheds = vec![false, true];
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        let list = || value.split(',').map(str::trim);
        match flag {
            "--quiclab" => quiclab = Some(PathBuf::from(value)),
            "--rates" => rates = list().map(str::parse).collect::<Result<_, _>>()?,
            "--secs" => secs = value.parse()?,
            "--wakes" => wakes = list().map(String::from).collect(),
            "--bursts" => bursts = list().map(str::parse).collect::<Result<_, _>>()?,
            "--sched" => {
                scheds = list()
                    .map(|s| match s {
                        "normal" => Ok(false),
                        "fifo" => Ok(true),
                        _ => Err(anyhow::anyhow!("--sched: normal or fifo, not {s:?}")),
                    })
                    .collect::<Result<_>>()?
            }
            _ => bail!("unknown option {flag}"),
        }
    }
    let quiclab = quiclab.context("--quiclab PATH (the release quiclab binary)")?;
    harness::exists(&quiclab)?;
    let dir = gaps::scratch()?;
    println!(
        "gaps: paced bulk transfers over loopback ({secs} s each; load average {} at start)\n",
        load_average()
    );
    println!("| rate | server | wake | burst | datagrams | bursts | datagrams per burst p50 / p99 / max | gap error p50 | p99 | achieved | relay drops |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut txtime = String::new();
    let mut relay_drops = 0;
    for &rate_mbps in &rates {
        for &fifo in &scheds {
            for wake in &wakes {
                for &burst_us in &bursts {
                    let case = gaps::Case {
                        rate_mbps,
                        wake: wake.clone(),
                        burst_us,
                        fifo,
                    };
                    let f = gaps::measure(&quiclab, &dir, &case, secs)?;
                    print_gaps_row(&case, &f);
                    relay_drops += f.relay_drops;
                    txtime = f.txtime;
                }
            }
        }
    }
    if relay_drops > 0 {
        println!(
            "\n- relay drops: {relay_drops} departures not seen; their rows' gaps are too long"
        );
    }
    println!("\n- {txtime}");
    println!("- load average at the end: {}", load_average());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn print_gaps_row(case: &gaps::Case, f: &gaps::Figures) {
    let burst = match case.burst_us {
        0 => "10 datagrams".to_string(),
        us => format!("{us} µs"),
    };
    let sched = if case.fifo { "fifo" } else { "normal" };
    println!(
        "| {} Mbit/s | {sched} | {} | {burst} | {} | {} | {:.0} / {:.0} / {} | {:.1} µs | {:.1} µs | {:.1} Mbit/s ({:.0}%) | {} |",
        case.rate_mbps,
        case.wake,
        f.datagrams,
        f.bursts,
        f.burst_p50,
        f.burst_p99,
        f.burst_max,
        f.err_p50_us,
        f.err_p99_us,
        f.achieved_mbps,
        f.achieved_mbps / case.rate_mbps * 100.0,
        f.relay_drops
    );
}
