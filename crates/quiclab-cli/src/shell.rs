//! `quiclab shell`: a command in a network namespace behind a scenario's links
//! ([`quiclab_net::shell`]), its flags and its start-up and exit lines. The exit status
//! is the command's (128 + N when a signal N ended it).

use anyhow::Result;
use clap::Args;
use quiclab_net::emulate;
use quiclab_net::shell::{self, Shell, ShellConfig};
use quiclab_net::WakeMode;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct ShellArgs {
    /// The scenario (TOML): its point_to_point links and [[schedule]] are emulated, the
    /// forward link carrying what the command sends, the return link what it receives;
    /// flows, [client], [server] and stop are ignored.
    scenario: PathBuf,
    /// Write links.csv, emulate.json (and captures) here at exit.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Capture both sides (pcap/ in --out); also on when the scenario's measure.pcap is.
    #[arg(long, requires = "out")]
    pcap: bool,
    /// Sleeps: `timerfd` (to the nanosecond) or `poll` (whole milliseconds).
    #[arg(long, default_value = "timerfd", value_parser = ["poll", "timerfd"])]
    wake: String,
    /// Microseconds before a deadline to stop sleeping and poll without blocking.
    #[arg(long, default_value_t = 50)]
    spin_us: u64,
    /// Scheduling of the relay: `fifo` = real-time SCHED_FIFO (the command keeps normal
    /// scheduling), `normal` = leave it.
    #[arg(long, default_value = "fifo", value_parser = ["fifo", "normal"])]
    sched: String,
    /// The command and its arguments, after `--` (none: $SHELL, else /bin/sh). Inside,
    /// QUICLAB_SHELL_BASE holds the host's address.
    #[arg(last = true)]
    command: Vec<OsString>,
}

pub fn run(a: ShellArgs) -> Result<()> {
    let (scenario, duplex) = emulate::load(&a.scenario)?;
    let capture = a.pcap || scenario.measure.pcap;
    let config = ShellConfig {
        wake: WakeMode::from_name(&a.wake),
        spin: Duration::from_micros(a.spin_us),
    };
    let stop = shell::stop_on_signals()?;
    let mut sh = Shell::create(scenario, duplex, &config)?;
    for name in sh.swept() {
        eprintln!("quiclab shell: removed {name}, left by a run that ended without cleaning up");
    }
    eprintln!(
        "quiclab shell: {} in namespace {}: inside {}, {}={}",
        sh.scenario().name,
        sh.namespace(),
        sh.inside(),
        shell::BASE_VAR,
        sh.base()
    );
    if let (Some(out), true) = (&a.out, capture) {
        sh.capture_to(out)?;
    }
    let (program, args) = match a.command.split_first() {
        Some((p, rest)) => (p.clone(), rest.to_vec()),
        None => (
            std::env::var_os("SHELL").unwrap_or_else(|| "/bin/sh".into()),
            Vec::new(),
        ),
    };
    // Started before the relay raises its priority, so it keeps normal scheduling.
    let mut child = sh.spawn(&program, &args)?;
    if a.sched == "fifo" {
        if let Err(e) = emulate::raise_priority() {
            eprintln!("quiclab shell: real-time scheduling refused ({e}): timing suffers on a busy machine");
        }
    }
    let (end, status) = sh.run(&mut child, &stop)?;
    let l = sh.lateness();
    eprintln!(
        "quiclab shell: command ended at {:.3} s ({status}); {:?}; send lateness p50 {} µs, p99 {} µs, max {} µs",
        end.as_secs_f64(),
        sh.counters(),
        l.p50_us,
        l.p99_us,
        l.max_us
    );
    if let Some(out) = &a.out {
        sh.finish(out, end)?;
    }
    // Removes the namespace and the devices before exiting with the command's status.
    drop(sh);
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
}
