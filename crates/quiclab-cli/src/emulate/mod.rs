//! `quiclab emulate`: the real-time link emulator. A UDP relay between one client and
//! one server that puts a scenario's links between them: the link code the simulator runs
//! ([`quiclab_link::duplex::Duplex`]: rate, delay, queues, impairments, scheduled
//! changes) driven by the wall clock. What of a scenario it uses is in [`config`]; the
//! loop is [`relay`], its precise sleep [`wake`], its outputs [`output`].

mod config;
mod lateness;
mod output;
mod relay;
mod wake;

use crate::net::Clock;
use crate::udp::{self, Socket};
use anyhow::{bail, Result};
use clap::Args;
use quiclab_proto::Instant;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct EmulateArgs {
    /// The scenario (TOML): its point_to_point links and [[schedule]] are emulated;
    /// flows, [client], [server] and stop are ignored.
    scenario: PathBuf,
    /// Where the client sends (the relay's front socket).
    #[arg(long)]
    listen: SocketAddr,
    /// The server the relay forwards to, from its own socket.
    #[arg(long)]
    upstream: SocketAddr,
    /// Write links.csv, emulate.json (and captures) here at exit.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Capture both sides (pcap/ in --out); also on when the scenario's measure.pcap is.
    #[arg(long, requires = "out")]
    pcap: bool,
    /// The server's TLS key log (SSLKEYLOGFILE), copied beside the captures at exit.
    #[arg(long, requires = "out")]
    keylog: Option<PathBuf>,
    /// Stop after this many seconds (default: run until SIGINT/SIGTERM).
    #[arg(long)]
    duration: Option<f64>,
    /// Sleeps: `timerfd` (to the nanosecond) or `poll` (whole milliseconds).
    #[arg(long, default_value = "timerfd", value_parser = ["poll", "timerfd"])]
    wake: String,
    /// Microseconds before a deadline to stop sleeping and poll without blocking.
    #[arg(long, default_value_t = 50)]
    spin_us: u64,
    /// Scheduling: `fifo` = real-time SCHED_FIFO if permitted (precise wake-ups on a
    /// busy machine), `normal` = leave it.
    #[arg(long, default_value = "fifo", value_parser = ["fifo", "normal"])]
    sched: String,
    /// UDP socket buffer size asked for, each way, per socket.
    #[arg(long, default_value_t = udp::DEFAULT_BUFFER)]
    socket_buffer: usize,
}

pub fn run(a: EmulateArgs) -> Result<()> {
    let (scenario, duplex) = config::load(&a.scenario)?;
    let duration = match a.duration {
        Some(d) if d.is_finite() && d > 0.0 && d < 1e9 => Some(Duration::from_secs_f64(d)),
        Some(d) => bail!("--duration {d}: must be a number of seconds > 0"),
        None => None,
    };
    if a.listen.is_ipv4() != a.upstream.is_ipv4() {
        bail!("--listen and --upstream must both be IPv4 or both IPv6");
    }
    let front = Socket::bind(a.listen, a.socket_buffer)?;
    let any: SocketAddr = if a.upstream.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let back = Socket::bind(any, a.socket_buffer)?;
    eprintln!(
        "quiclab emulate: {} on {} -> {}; {}",
        scenario.name,
        a.listen,
        a.upstream,
        front.granted()
    );
    if a.sched == "fifo" {
        wake::raise_priority();
    }
    let waker = wake::Waker::new(&a.wake, Duration::from_micros(a.spin_us));
    crate::signal::install();
    let clock = Clock::new();
    let mut relay = relay::Relay::new(duplex, (front, back), a.upstream, clock, waker)?;
    let capture = a.pcap || scenario.measure.pcap;
    if let (Some(out), true) = (&a.out, capture) {
        output::open_pcaps(out, &mut relay)?;
    }
    let end = duration.map(|d| Instant::ZERO + d);
    let stopped = relay.run(end, &crate::signal::stop_requested)?;
    let l = relay.lateness.summary();
    eprintln!(
        "quiclab emulate stopped at {:.3} s: {:?}; send lateness p50 {} µs, p99 {} µs, max {} µs",
        stopped.as_secs_f64(),
        relay.counters,
        l.p50_us,
        l.p99_us,
        l.max_us
    );
    if let Some(out) = &a.out {
        output::finish(out, &scenario, &mut relay, stopped, a.keylog.as_deref())?;
    }
    Ok(())
}
