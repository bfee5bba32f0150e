//! `quiclab emulate`: the flags of the real-time link emulator
//! ([`quiclab_net::emulate`]) and its start-up and exit lines.

use anyhow::{bail, Result};
use clap::Args;
use quiclab_net::emulate::{self, Emulator, EmulatorConfig, Rebind, RebindKind};
use quiclab_net::{signal, udp, WakeMode};
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
    /// Percent of the time the relay stays off the CPU (its CPU time against the wall
    /// clock; no spin while it owes rest, 50 µs sleeps when busy), so the kernel's
    /// real-time throttling never stops it for ~50 ms; 0: spin before every deadline.
    #[arg(long, default_value_t = 10.0)]
    rest_percent: f64,
    /// Scheduling: `fifo` = real-time SCHED_FIFO if permitted (precise wake-ups on a
    /// busy machine), `normal` = leave it.
    #[arg(long, default_value = "fifo", value_parser = ["fifo", "normal"])]
    sched: String,
    /// UDP socket buffer size asked for, each way, per socket.
    #[arg(long, default_value_t = udp::DEFAULT_BUFFER)]
    socket_buffer: usize,
    /// NAT rebinding, as the interop runner's rebind scenarios: at --first-rebind and
    /// then every --rebind-freq the relay moves its socket toward the server to a new
    /// source port (`port`) or a new source address in 127.0.0.0/8 (`addr`: 127.0.0.2,
    /// .3, ...; needs a loopback --upstream). The client side keeps its mapping.
    #[arg(long, value_parser = ["port", "addr"])]
    rebind: Option<String>,
    /// Seconds from the start to the first rebind.
    #[arg(long, default_value_t = 1.0, requires = "rebind")]
    first_rebind: f64,
    /// Seconds between later rebinds (0: only the first).
    #[arg(long, default_value_t = 5.0, requires = "rebind")]
    rebind_freq: f64,
}

/// `--rebind`, `--first-rebind`, `--rebind-freq` as the emulator's schedule.
fn rebind_schedule(a: &EmulateArgs) -> Result<Option<Rebind>> {
    let kind = match a.rebind.as_deref() {
        None => return Ok(None),
        Some("addr") => RebindKind::Addr,
        Some(_) => RebindKind::Port,
    };
    let seconds = |flag: &str, s: f64| {
        if s.is_finite() && (0.0..1e9).contains(&s) {
            Ok(Duration::from_secs_f64(s))
        } else {
            bail!("--{flag} {s}: must be a number of seconds >= 0")
        }
    };
    let first = seconds("first-rebind", a.first_rebind)?;
    let every = seconds("rebind-freq", a.rebind_freq)?;
    Ok(Some(Rebind {
        kind,
        first,
        every: (!every.is_zero()).then_some(every),
    }))
}

pub fn run(a: EmulateArgs) -> Result<()> {
    let (scenario, duplex) = emulate::load(&a.scenario)?;
    let duration = match a.duration {
        Some(d) if d.is_finite() && d > 0.0 && d < 1e9 => Some(Duration::from_secs_f64(d)),
        Some(d) => bail!("--duration {d}: must be a number of seconds > 0"),
        None => None,
    };
    let config = EmulatorConfig {
        listen: a.listen,
        upstream: a.upstream,
        wake: WakeMode::from_name(&a.wake),
        spin: Duration::from_micros(a.spin_us),
        rest: a.rest_percent / 100.0,
        socket_buffer: a.socket_buffer,
        rebind: rebind_schedule(&a)?,
    };
    let capture = a.pcap || scenario.measure.pcap;
    let mut emulator = Emulator::bind(scenario, duplex, &config)?;
    eprintln!(
        "quiclab emulate: {} on {} -> {}; {}",
        emulator.scenario().name,
        a.listen,
        a.upstream,
        emulator.granted()
    );
    if a.sched == "fifo" {
        match emulate::raise_priority() {
            Ok(throttled) => {
                eprintln!("quiclab emulate: real-time scheduling (SCHED_FIFO 20)");
                if let Some(note) = throttled {
                    eprintln!("quiclab emulate: {note}");
                }
            }
            Err(e) => eprintln!(
                "quiclab emulate: real-time scheduling refused ({e}): timing suffers on a busy machine"
            ),
        }
    }
    eprintln!("quiclab emulate: {}", emulator.sleep_note());
    signal::install();
    if let (Some(out), true) = (&a.out, capture) {
        emulator.capture_to(out)?;
    }
    let stopped = emulator.run(duration, &signal::stop_requested)?;
    let l = emulator.lateness();
    eprintln!(
        "quiclab emulate stopped at {:.3} s: {:?}; send lateness p50 {} µs, p99 {} µs, max {} µs",
        stopped.as_secs_f64(),
        emulator.counters(),
        l.p50_us,
        l.p99_us,
        l.max_us
    );
    if let Some(out) = &a.out {
        emulator.finish(out, stopped, a.keylog.as_deref())?;
    }
    Ok(())
}
