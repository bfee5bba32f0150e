//! `bench-udp emulate`: the real-time link emulator's timing accuracy and throughput on
//! loopback (issue 14). A sender paces 1200-byte datagrams (sequence number inside)
//! through `quiclab emulate` (forward link: the rate under test, 10 ms delay, a
//! 1000-packet drop-tail queue) to a receiver in the same process, which timestamps
//! them with the same clock. Two phases per rate: half the link rate (delay accuracy)
//! and 120% of it (throughput, a standing queue).
//!
//! The intended delivery time of every datagram is computed by replaying the actual
//! send times through the same link model ([`Duplex`], quiclab-link's code, which the simulator runs too) in
//! virtual time; the delay error is the actual arrival minus that (so it includes both
//! loopback hops and the emulator's receive and send paths, as an endpoint sees it).

use anyhow::{bail, Context, Result};
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_link::link::Packet;
use quiclab_link::quantile::percentile;
use quiclab_proto::Instant as SimInstant;
use quiclab_sim::net::duplex::build_duplex;
use quiclab_sim::Scenario;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PAYLOAD: usize = 1200;
const DELAY_MS: f64 = 10.0;

fn scenario(rate_mbps: f64) -> String {
    format!(
        "name = \"emulate-bench\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"point_to_point\"\n\
         [topology.forward]\nrate_mbps = {rate_mbps}\ndelay_ms = {DELAY_MS}\n\
         queue = {{ discipline = \"drop_tail\", packets = 1000 }}\n[topology.return]\n"
    )
}

/// One phase's figures.
pub struct Phase {
    pub sent: usize,
    pub received: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub throughput_mbps: f64,
}

/// Sends datagrams at `rate_bps` (wire bits) for `secs`; returns send times (ns since
/// `epoch`) by sequence number.
fn send_phase(
    sock: &UdpSocket,
    to: SocketAddr,
    rate_bps: f64,
    secs: f64,
    epoch: Instant,
    first_seq: u64,
) -> Result<Vec<u64>> {
    let gap = Duration::from_secs_f64((PAYLOAD + 28) as f64 * 8.0 / rate_bps);
    let count = (secs / gap.as_secs_f64()) as u64;
    let mut buf = vec![0u8; PAYLOAD];
    let mut times = Vec::with_capacity(count as usize);
    let start = Instant::now();
    for i in 0..count {
        let due = start + gap * u32::try_from(i).unwrap_or(u32::MAX);
        loop {
            let now = Instant::now();
            if now >= due {
                break;
            }
            if due - now > Duration::from_micros(300) {
                std::thread::sleep(due - now - Duration::from_micros(200));
            } else {
                std::hint::spin_loop();
            }
        }
        buf[..8].copy_from_slice(&(first_seq + i).to_le_bytes());
        let t = Instant::now().duration_since(epoch).as_nanos() as u64;
        // Loopback sends do not fail short of a full buffer; a lost one is not received.
        let _ = sock.send_to(&buf, to);
        times.push(t);
    }
    Ok(times)
}

/// Real-time priority of the receiving thread: above the emulator's (20) and the
/// sender's (the bench runs under `chrt -f 10`), so a datagram is timestamped as soon as
/// it arrives. At the sender's priority the receiver waited for a CPU behind the
/// sender's pacing spin and the relay (three real-time threads on two cores), and that
/// wait, not the emulator, was most of the measured p99 error.
const RECEIVER_PRIORITY: i32 = 30;

/// Raises the calling thread to SCHED_FIFO at `priority`; whether it was granted.
fn realtime_thread(priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Puts the calling thread (the sender) back in the normal class. Its timing needs no
/// precision (the error is measured against the model replayed on the actual send
/// times), and its pacing spin at real-time priority kept a CPU 100% busy in the FIFO
/// class, so the kernel's RT throttling (95% per second) stopped every real-time
/// thread on that CPU for ~50 ms once a second: the 27-50 ms p99 errors seen at 100
/// and 500 Mbit/s on an idle machine. At normal priority the relay and the receiver
/// preempt the spin whenever they wake.
fn normal_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

/// Receives until nothing arrives for 1.5 s; (seq, ns since epoch).
fn receive(sock: &UdpSocket, epoch: Instant) -> Vec<(u64, u64)> {
    if !realtime_thread(RECEIVER_PRIORITY) {
        eprintln!("bench receiver: SCHED_FIFO refused; its wake-ups add to the error");
    }
    let mut got = Vec::new();
    let mut buf = vec![0u8; 2048];
    let _ = sock.set_read_timeout(Some(Duration::from_millis(1500)));
    while let Ok((n, _)) = sock.recv_from(&mut buf) {
        if n >= 8 {
            let t = Instant::now().duration_since(epoch).as_nanos() as u64;
            let seq = u64::from_le_bytes(buf[..8].try_into().unwrap_or_default());
            got.push((seq, t));
        }
    }
    got
}

/// Intended delivery times (ns) by sequence number, `None` where the model drops.
fn replay(text: &str, sends: &[u64]) -> Result<Vec<Option<u64>>> {
    let s: Scenario = toml::from_str(text)?;
    s.validate_links("bench")?;
    let mut d = build_duplex(&s, "bench")?;
    let addr = SocketAddrV4::new([127, 0, 0, 1].into(), 1);
    let mut due = vec![None; sends.len()];
    let mut take = |d: &mut Duplex, now: SimInstant| {
        while let Some(x) = d.poll(now) {
            let seq = u64::from_le_bytes(x.packet.payload[..8].try_into().unwrap_or_default());
            if let Some(slot) = due.get_mut(seq as usize) {
                *slot = Some(x.due.as_nanos());
            }
        }
    };
    for (seq, &t) in sends.iter().enumerate() {
        let now = SimInstant::from_nanos(t);
        take(&mut d, now);
        let mut payload = vec![0u8; PAYLOAD];
        payload[..8].copy_from_slice(&(seq as u64).to_le_bytes());
        let packet = Packet::datagram(addr, addr, payload);
        d.arrive(now, LinkSide::Forward, packet);
    }
    take(&mut d, SimInstant::MAX);
    Ok(due)
}

fn figures(due: &[Option<u64>], got: &[(u64, u64)], range: (u64, u64)) -> Phase {
    let mut errors = Vec::new();
    let (mut first, mut last, mut received) = (u64::MAX, 0, 0usize);
    for &(seq, t) in got.iter().filter(|(s, _)| *s >= range.0 && *s < range.1) {
        received += 1;
        first = first.min(t);
        last = last.max(t);
        if let Some(Some(d)) = due.get(seq as usize) {
            errors.push((t as f64 - *d as f64) / 1e3);
        }
    }
    errors.sort_by(f64::total_cmp);
    let span = (last.saturating_sub(first)) as f64 / 1e9;
    Phase {
        sent: (range.1 - range.0) as usize,
        received,
        p50_us: percentile(&errors, 0.5),
        p99_us: percentile(&errors, 0.99),
        throughput_mbps: if span > 0.0 {
            (received.saturating_sub(1)) as f64 * (PAYLOAD + 28) as f64 * 8.0 / span / 1e6
        } else {
            0.0
        },
    }
}

fn spawn_emulator(
    quiclab: &Path,
    dir: &Path,
    listen: u16,
    upstream: SocketAddr,
    extra: &[String],
) -> Result<Child> {
    Command::new(quiclab)
        .arg("emulate")
        .arg(dir.join("bench.toml"))
        .args(["--listen", &format!("127.0.0.1:{listen}")])
        .args(["--upstream", &upstream.to_string()])
        .arg("--out")
        .arg(dir.join("out"))
        .args(extra)
        .stderr(Stdio::null())
        .spawn()
        .context("starting quiclab emulate")
}

/// Runs both phases at `rate_mbps`; `extra` are emulator flags (e.g. `--spin-us 0`).
pub fn measure(
    quiclab: &Path,
    rate_mbps: f64,
    secs: f64,
    extra: &[String],
) -> Result<(Phase, Phase)> {
    let dir = std::env::temp_dir().join(format!("quiclab-emubench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let text = scenario(rate_mbps);
    std::fs::write(dir.join("bench.toml"), &text)?;
    let rx = UdpSocket::bind("127.0.0.1:0")?;
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    let listen = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut emu = spawn_emulator(quiclab, &dir, listen, rx.local_addr()?, extra)?;
    std::thread::sleep(Duration::from_millis(500));
    let epoch = Instant::now();
    let rx2 = rx.try_clone()?;
    let receiver = std::thread::spawn(move || receive(&rx2, epoch));
    normal_thread();
    let to: SocketAddr = format!("127.0.0.1:{listen}").parse()?;
    let rate = rate_mbps * 1e6;
    let mut sends = send_phase(&tx, to, rate * 0.5, secs, epoch, 0)?;
    let split = sends.len() as u64;
    // Let the first phase drain before the second.
    std::thread::sleep(Duration::from_millis(50));
    sends.extend(send_phase(&tx, to, rate * 1.2, secs, epoch, split)?);
    let got = receiver
        .join()
        .map_err(|_| anyhow::anyhow!("receiver panicked"))?;
    // SIGTERM: the emulator writes its own lateness figures (emulate.json) on the way out.
    // SAFETY: signalling the child this function spawned.
    unsafe { libc::kill(emu.id() as libc::pid_t, libc::SIGTERM) };
    let _ = emu.wait();
    if let Ok(j) = std::fs::read_to_string(dir.join("out").join("emulate.json")) {
        eprintln!("{rate_mbps} Mbit/s, emulator's own view: {j}");
    }
    if got.is_empty() {
        bail!("nothing came through the emulator at {rate_mbps} Mbit/s");
    }
    let due = replay(&text, &sends)?;
    let n = sends.len() as u64;
    Ok((
        figures(&due, &got, (0, split)),
        figures(&due, &got, (split, n)),
    ))
}
