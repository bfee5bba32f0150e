//! `quiclab shell`: any program behind a scenario's links, as Mahimahi's shells do it.
//! The program runs in its own network namespace, whose only interface besides
//! loopback is a TUN device with a default route through it; this process reads every
//! IP packet the program sends there (TCP, UDP, ICMP alike), puts it through the
//! scenario's forward link (quiclab-link's models on the wall clock, the UDP emulator's
//! code: queues, impairments, traces, ECN marking, `[[schedule]]`), and writes it into
//! a second TUN device in the host's namespace, whose kernel delivers it to the host's
//! sockets; replies take the return link the other way.
//!
//! Why a second TUN device on the host side (as Mahimahi's `mm-link`), not a veth pair:
//! a veth pair's far end is in the host's namespace already, so packets would cross
//! without passing through this process (adding delay to a veth needs netem, which
//! this kernel lacks). A TUN device in the host's namespace gives the host a real
//! address (QUICLAB_SHELL_BASE, `.1` of the shell's /30 in 198.18.0.0/15) on a
//! point-to-point device: what we write into it is delivered to the host's sockets as
//! if it had come in on a network interface, and the host's replies to the inside
//! address are routed out through it, to us. No NAT or forwarding is set up: the
//! program reaches the host, not the internet.
//!
//! Addresses, names and clean-up are in `netns.rs` (namespaces `qlsh-PID`, removed on
//! drop and, after a crash, by the next run's [`netns::sweep`]); the devices in
//! `tun.rs` (removed by the kernel when this process's descriptors close, on any exit);
//! packet conversion in `ip.rs`; the loop in `relay.rs`. Outputs are the emulator's
//! (`emulate/output.rs`): links.csv, links.json, emulate.json with the shell's counters,
//! queue traces, and captures (`pcap/all.pcap`: every IPv4 packet as read, both ways;
//! `pcap/forward.pcap`, `pcap/return.pcap`: as each starts transmission).
//!
//! Modelling assumptions: the link sizes a packet as its IPv4 total length (no link
//! layer framing, as in the simulator and emulator); the program's kernel and the
//! host's see a 0-delay, unlimited device, so their own queues (qdisc, TSQ) are empty
//! and the emulated queue is the bottleneck's.
//!
//! # Call contract
//! [`Shell::create`] (root; sweeps leftovers, builds the namespace and devices),
//! optionally [`Shell::capture_to`], [`Shell::spawn`] the program, [`Shell::run`] until
//! it exits, [`Shell::finish`] for the outputs; dropping the shell removes the
//! namespace and devices.

mod ip;
mod netns;
mod relay;
mod tun;

pub use relay::ShellCounters;

use crate::driver::{Clock, WakeMode};
use crate::emulate::lateness::{LatenessSummary, SendLateness};
use crate::emulate::output;
use crate::emulate::wake::Waker;
use crate::NetError;
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_proto::Instant;
use quiclab_sim::Scenario;
use relay::IpRelay;
use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The variable holding the host's address inside the shell (Mahimahi's MAHIMAHI_BASE).
pub const BASE_VAR: &str = "QUICLAB_SHELL_BASE";
/// The device's name inside the namespace.
const INSIDE_DEV: &str = "qlsh0";
/// After a stop signal, how long the program has to exit before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Why the shell could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("quiclab shell needs root (network namespaces and TUN devices): run it as root or with sudo")]
    NotRoot,
    #[error("quiclab shell needs iproute2's `ip` on the PATH (Debian: apt-get install iproute2)")]
    NoIp,
    #[error("{command}: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Net(#[from] NetError),
}

/// How the relay sleeps (the emulator's `--wake` and `--spin-us`).
#[derive(Clone, Copy, Debug)]
pub struct ShellConfig {
    pub wake: WakeMode,
    pub spin: Duration,
}

/// A namespace with the scenario's links between it and the host (module docs).
pub struct Shell {
    // Dropped first: closing the devices removes them, then the namespace goes.
    relay: IpRelay,
    ns: netns::Namespace,
    scenario: Scenario,
    base: Ipv4Addr,
    inside: Ipv4Addr,
    swept: Vec<String>,
}

impl Shell {
    /// Checks for root, removes crashed runs' leftovers, creates the namespace, both
    /// devices and their addresses and routes; the relay's clock starts.
    pub fn create(
        scenario: Scenario,
        duplex: Duplex,
        config: &ShellConfig,
    ) -> Result<Shell, ShellError> {
        // SAFETY: geteuid has no failure mode.
        if unsafe { libc::geteuid() } != 0 {
            return Err(ShellError::NotRoot);
        }
        let swept = netns::sweep()?;
        let name = netns::own_name();
        // The device MTU the links carry whole (a larger packet would be an mtu drop).
        let mtu = [LinkSide::Forward, LinkSide::Return]
            .map(|s| duplex.link(s).mtu)
            .into_iter()
            .min()
            .unwrap_or(1500)
            .clamp(68, 65_535)
            .to_string();
        let lock = netns::Lock::take()?;
        let (base, inside) = netns::free_subnet()?;
        let ns = netns::Namespace::add(&name)?;
        let host = tun::Tun::open(&name)?;
        // Best effort: without IPv6 the key is absent, and nothing to turn off.
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
        netns::ip(&["addr", "add", &format!("{base}/30"), "dev", &name])?;
        netns::ip(&["link", "set", &name, "mtu", &mtu, "up"])?;
        drop(lock);
        let off = [
            ("net/ipv6/conf/all/disable_ipv6", "1"),
            ("net/ipv6/conf/default/disable_ipv6", "1"),
        ];
        let inner = tun::Tun::open_in(&ns.path(), INSIDE_DEV, &off)?;
        let n = ns.name.clone();
        let in_ns = |args: &[&str]| netns::ip(&[&["-n", &n][..], args].concat());
        in_ns(&["link", "set", "lo", "up"])?;
        in_ns(&["addr", "add", &format!("{inside}/30"), "dev", INSIDE_DEV])?;
        in_ns(&["link", "set", INSIDE_DEV, "mtu", &mtu, "up"])?;
        in_ns(&[
            "route",
            "add",
            "default",
            "via",
            &base.to_string(),
            "dev",
            INSIDE_DEV,
        ])?;
        let waker = Waker::new(config.wake, config.spin);
        let mut relay = IpRelay::new(duplex, [inner, host], Clock::new(), waker)?;
        let m = &scenario.measure;
        relay.lateness = SendLateness::for_window(m.from_s, m.to_s);
        Ok(Shell {
            relay,
            ns,
            scenario,
            base,
            inside,
            swept,
        })
    }

    /// The host's address as the program sees it (QUICLAB_SHELL_BASE).
    pub fn base(&self) -> Ipv4Addr {
        self.base
    }

    /// The program's own address.
    pub fn inside(&self) -> Ipv4Addr {
        self.inside
    }

    /// The namespace's name (`qlsh-PID`).
    pub fn namespace(&self) -> &str {
        &self.ns.name
    }

    /// The crashed runs' namespaces and devices [`Shell::create`] removed.
    pub fn swept(&self) -> &[String] {
        &self.swept
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Captures both sides into `out/pcap` from now on.
    pub fn capture_to(&mut self, out: &Path) -> Result<(), ShellError> {
        self.relay.capture = Some(output::open_pcaps(out, &mut self.relay.duplex)?);
        Ok(())
    }

    /// Starts `program ARGS` inside the namespace with QUICLAB_SHELL_BASE set; it is
    /// killed if this process dies (PR_SET_PDEATHSIG), so a crash leaves no program
    /// holding the namespace.
    pub fn spawn(&self, program: &OsString, args: &[OsString]) -> Result<Child, ShellError> {
        let path = self.ns.path();
        let ns = std::fs::File::open(&path).map_err(|source| ShellError::Io {
            what: format!("opening {}", path.display()),
            source,
        })?;
        let fd = ns.as_raw_fd();
        let mut cmd = Command::new(program);
        cmd.args(args).env(BASE_VAR, self.base.to_string());
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe syscalls (setns, prctl) on an fd the parent keeps open.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| ShellError::Io {
            what: format!("starting {}", program.to_string_lossy()),
            source,
        })?;
        drop(ns);
        Ok(child)
    }

    /// Relays until `child` exits; on `stop` (a signal to this process) the child gets
    /// SIGTERM, and SIGKILL [`GRACE`] later. Returns the relay time at the end and the
    /// child's status.
    pub fn run(
        &mut self,
        child: &mut Child,
        stop: &AtomicBool,
    ) -> Result<(Instant, ExitStatus), ShellError> {
        let mut status = None;
        let mut termed: Option<std::time::Instant> = None;
        let mut failure = None;
        let end = self.relay.run(&mut || {
            match child.try_wait() {
                Ok(Some(s)) => {
                    status = Some(s);
                    return true;
                }
                Ok(None) => {}
                Err(e) => {
                    failure = Some(e);
                    return true;
                }
            }
            if stop.load(Ordering::Relaxed) {
                let pid = child.id() as libc::pid_t;
                match termed {
                    // SAFETY: kill(2) on our own child's PID.
                    None => unsafe {
                        libc::kill(pid, libc::SIGTERM);
                        termed = Some(std::time::Instant::now());
                    },
                    Some(t) if t.elapsed() > GRACE => {
                        let _ = child.kill();
                    }
                    Some(_) => {}
                }
            }
            false
        })?;
        if let Some(e) = failure {
            return Err(ShellError::Io {
                what: "waiting for the program".into(),
                source: e,
            });
        }
        let status =
            status.ok_or_else(|| ShellError::Setup("the program's status was lost".into()))?;
        Ok((end, status))
    }

    /// What the relay counted so far.
    pub fn counters(&self) -> ShellCounters {
        self.relay.counters
    }

    /// How late the relay sent against the model so far.
    pub fn lateness(&self) -> LatenessSummary {
        self.relay.lateness.total.summary()
    }

    /// Flushes the captures and writes links.csv, links.json, the queue traces and
    /// emulate.json (the shell's counters as `relay`) into `out`.
    pub fn finish(&mut self, out: &Path, end: Instant) -> Result<(), ShellError> {
        let r = &mut self.relay;
        let state = output::RelayState {
            duplex: &mut r.duplex,
            capture: &mut r.capture,
            counters: &r.counters,
            lateness: &r.lateness,
            rebinds: &[],
        };
        Ok(output::finish(out, &self.scenario, state, end, None)?)
    }
}

/// SIGINT, SIGTERM and SIGHUP as a flag (no forced exit on a second signal, unlike
/// [`crate::signal::install`]: the shell must live to remove its namespace).
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, ShellError> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(|source| ShellError::Io {
            what: format!("installing a handler for signal {sig}"),
            source,
        })?;
    }
    Ok(flag)
}
