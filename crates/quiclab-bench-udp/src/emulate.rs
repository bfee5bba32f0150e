//! `bench-udp emulate`: the real-time link emulator's timing accuracy and throughput on
//! loopback (issue 14). A sender paces 1200-byte datagrams (sequence number inside)
//! through `quiclab emulate` (forward link: the rate under test, 10 ms delay, a
//! 1000-packet drop-tail queue) to a receiver in the same process; send times and the
//! kernel's receive timestamps are both CLOCK_REALTIME. Two phases per rate: half the
//! link rate (delay accuracy) and 120% of it (throughput, a standing queue). The
//! sender's achieved rate is reported as "offered": a throughput below the link rate
//! with an offered load below it too means the bench, not the emulator, fell short.
//!
//! The intended delivery time of every datagram is computed by replaying the actual
//! send times through the same link model ([`Duplex`], quiclab-link's code, which the simulator runs too) in
//! virtual time; the delay error is the actual arrival minus that (so it includes both
//! loopback hops and the emulator's receive and send paths, as an endpoint's kernel
//! sees it; not the receiving thread's wake-up, since 2026-11-29).

use crate::stamped_batch as stamp;
use anyhow::{bail, Context, Result};
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_link::link::Packet;
use quiclab_link::quantile::percentile;
use quiclab_proto::Instant as SimInstant;
use quiclab_sim::net::duplex::build_duplex;
use quiclab_sim::Scenario;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
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
    pub p999_us: f64,
    /// The same over the datagrams whose send time is known to [`EXACT_NS`] (the send
    /// call returned that soon after its stamp), and their share of the phase's.
    pub exact_p99_us: f64,
    pub exact_p999_us: f64,
    pub exact_share: f64,
    /// What the sender offered: its datagrams over its first to last send.
    pub offered_mbps: f64,
    pub throughput_mbps: f64,
}

/// Sends datagrams at `rate_bps` (wire bits) for `secs`; returns send times (ns since
/// `epoch`, CLOCK_REALTIME) by sequence number. `sock` is connected to the emulator.
///
/// Each datagram leaves at its own due time while the sender keeps pace; when it has
/// fallen behind (it runs in the normal class, so the relay and other work preempt
/// it), the datagrams already due leave at once in one `sendmmsg` (up to
/// [`SEND_BATCH`]) with one send time, so that at 1 Gbit/s (~100,000 datagrams a
/// second) the offered load is what was asked for. The timing needs no precision: the
/// error is measured against the model replayed on the actual send times.
fn send_phase(
    sock: &UdpSocket,
    rate_bps: f64,
    secs: f64,
    epoch: u64,
    first_seq: u64,
) -> Result<(Vec<u64>, Vec<bool>)> {
    let gap = Duration::from_secs_f64((PAYLOAD + 28) as f64 * 8.0 / rate_bps);
    let count = (secs / gap.as_secs_f64()) as u64;
    let mut bufs = vec![[0u8; PAYLOAD]; SEND_BATCH];
    let mut times = Vec::with_capacity(count as usize);
    let mut calls = Vec::with_capacity(count as usize);
    let mut exact = Vec::with_capacity(count as usize);
    let start = Instant::now();
    let due = |i: u64| start + gap * u32::try_from(i).unwrap_or(u32::MAX);
    let mut i = 0;
    while i < count {
        loop {
            let now = Instant::now();
            if now >= due(i) {
                break;
            }
            if due(i) - now > Duration::from_micros(300) {
                std::thread::sleep(due(i) - now - Duration::from_micros(200));
            } else {
                std::hint::spin_loop();
            }
        }
        let now = Instant::now();
        let mut n = 1;
        while n < SEND_BATCH && i + (n as u64) < count && due(i + n as u64) <= now {
            n += 1;
        }
        for (k, b) in bufs.iter_mut().enumerate().take(n) {
            b[..8].copy_from_slice(&(first_seq + i + k as u64).to_le_bytes());
        }
        let t = realtime_ns().saturating_sub(epoch);
        // Loopback sends do not fail short of a full buffer; a lost one is not received.
        send_batch(sock, &bufs[..n]);
        let call = realtime_ns().saturating_sub(epoch).saturating_sub(t);
        calls.push(call as f64 / 1e3);
        exact.extend(std::iter::repeat_n(call <= EXACT_NS, n));
        times.extend(std::iter::repeat_n(t, n));
        i += n as u64;
    }
    // How long the send took from its stamp to the call's return: an upper bound on how
    // much later than stamped a datagram may have left (the sender can be preempted
    // in between), which the delay error then counts as the emulator's.
    calls.sort_by(f64::total_cmp);
    eprintln!(
        "bench sender: {count} datagrams in {} sends; stamp to send return p50 {:.1} µs, \
         p99 {:.1} µs, p999 {:.1} µs, max {:.0} µs",
        calls.len(),
        percentile(&calls, 0.5),
        percentile(&calls, 0.99),
        percentile(&calls, 0.999),
        calls.last().copied().unwrap_or(0.0)
    );
    Ok((times, exact))
}

/// A send whose call returned within this of its stamp left at its stamp to within
/// this. On a loaded machine the sender (normal class) is often preempted between its
/// stamp and the send (measured 2026-11-29 at load 7: p99 0.5-13 ms), and the delay
/// error then counts that wait as the emulator's; the `exact` figures leave those
/// datagrams out (they still pass through the emulator and its queue).
const EXACT_NS: u64 = 20_000;

/// Datagrams per `sendmmsg` of a sender that has fallen behind.
const SEND_BATCH: usize = 32;

/// Sends `bufs` as datagrams on the connected `sock`, one `sendmmsg`.
fn send_batch(sock: &UdpSocket, bufs: &[[u8; PAYLOAD]]) {
    let mut iovs: Vec<libc::iovec> = bufs
        .iter()
        .map(|b| libc::iovec {
            iov_base: b.as_ptr().cast_mut().cast(),
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: zeroed mmsghdrs are valid (no address: the socket is connected); each
    // points to its iovec, alive for the call; the kernel only reads the buffers.
    let mut msgs: Vec<libc::mmsghdr> = (0..bufs.len())
        .map(|_| unsafe { std::mem::zeroed() })
        .collect();
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: sendmmsg of `msgs`, all alive for the call.
    unsafe {
        libc::sendmmsg(
            sock.as_raw_fd(),
            msgs.as_mut_ptr(),
            msgs.len() as libc::c_uint,
            0,
        )
    };
}

/// Receives until nothing arrives for 1.5 s; (seq, kernel arrival time in ns since
/// `epoch`, CLOCK_REALTIME like [`realtime_ns`]).
///
/// The arrival time is the kernel's receive timestamp (SO_TIMESTAMPNS), which on
/// loopback is taken as the relay's `sendmsg` hands the datagram to the loopback device
/// (`stamp.rs` has the details), so it does not depend on when this thread gets a CPU
/// and the thread needs no real-time priority. Before (2026-11-29) this thread ran at
/// SCHED_FIFO 30 and stamped each datagram after its own `recvfrom`: at 1 Gbit/s that
/// was a second real-time thread using ~40% of a CPU, which shared the relay's CPU and
/// with it the kernel's real-time budget, and its wake-ups were part of the error.
/// Reads up to [`RECV_BATCH`] datagrams per `recvmmsg`.
fn receive(sock: &UdpSocket, epoch: u64) -> Vec<(u64, u64)> {
    normal_thread();
    let mut got = Vec::new();
    let _ = sock.set_read_timeout(Some(Duration::from_millis(1500)));
    let mut batch = stamp::RecvBatch::new(RECV_BATCH, 2048);
    while let Ok(n) = batch.recv(sock) {
        let read_at = realtime_ns();
        for i in 0..n {
            let (payload, stamp) = batch.get(i);
            if payload.len() >= 8 {
                let t = stamp.unwrap_or(read_at).saturating_sub(epoch);
                let seq = u64::from_le_bytes(payload[..8].try_into().unwrap_or_default());
                got.push((seq, t));
            }
        }
    }
    got
}

/// Puts the calling thread back in the normal class (the bench runs under `chrt -f 10`
/// and threads inherit it). The sender's timing needs no precision (the error is
/// measured against the model replayed on the actual send times), and its pacing spin
/// at real-time priority kept a CPU 100% busy in the FIFO class, so the kernel's RT
/// throttling (95% per second) stopped every real-time thread on that CPU for ~50 ms
/// once a second. The receiver's stamps are the kernel's. At normal priority the relay
/// preempts both whenever it wakes, and is the only real-time thread.
fn normal_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

/// The receiver's socket buffer: ~140 ms of 1 Gbit/s in 1200-byte datagrams, so a
/// receiver in the normal class that waits for a CPU loses nothing.
const RECV_BUFFER: usize = 32 << 20;

/// Datagrams per `recvmmsg` of the bench's receiver.
const RECV_BATCH: usize = 64;

/// CLOCK_REALTIME in ns: the clock of the kernel's receive timestamps, so the send
/// times are read from it too.
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
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

/// Mbit/s of `n` datagrams whose first and last are `span_ns` apart.
fn rate_mbps(n: usize, span_ns: u64) -> f64 {
    if span_ns == 0 {
        return 0.0;
    }
    n.saturating_sub(1) as f64 * (PAYLOAD + 28) as f64 * 8.0 / (span_ns as f64 / 1e9) / 1e6
}

fn figures(
    due: &[Option<u64>],
    got: &[(u64, u64)],
    (sends, exact): (&[u64], &[bool]),
    range: (u64, u64),
) -> Phase {
    let mut errors = Vec::new();
    let mut exact_errors = Vec::new();
    let (mut first, mut last, mut received) = (u64::MAX, 0, 0usize);
    for &(seq, t) in got.iter().filter(|(s, _)| *s >= range.0 && *s < range.1) {
        received += 1;
        first = first.min(t);
        last = last.max(t);
        if let Some(Some(d)) = due.get(seq as usize) {
            let e = (t as f64 - *d as f64) / 1e3;
            errors.push(e);
            if exact.get(seq as usize) == Some(&true) {
                exact_errors.push(e);
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    exact_errors.sort_by(f64::total_cmp);
    let sent = (range.1 - range.0) as usize;
    let phase = sends
        .get(range.0 as usize..range.1 as usize)
        .unwrap_or_default();
    let send_span = phase.last().zip(phase.first()).map_or(0, |(l, f)| l - f);
    Phase {
        sent,
        received,
        p50_us: percentile(&errors, 0.5),
        p99_us: percentile(&errors, 0.99),
        p999_us: percentile(&errors, 0.999),
        exact_p99_us: percentile(&exact_errors, 0.99),
        exact_p999_us: percentile(&exact_errors, 0.999),
        exact_share: exact_errors.len() as f64 / errors.len().max(1) as f64,
        offered_mbps: rate_mbps(sent, send_span),
        throughput_mbps: rate_mbps(received, last.saturating_sub(first)),
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
    if let Err(e) = stamp::enable_timestamps(&rx, RECV_BUFFER) {
        eprintln!("bench receiver: SO_TIMESTAMPNS refused ({e}); arrivals stamped on read");
    }
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    let listen = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut emu = spawn_emulator(quiclab, &dir, listen, rx.local_addr()?, extra)?;
    std::thread::sleep(Duration::from_millis(500));
    let epoch = realtime_ns();
    let rx2 = rx.try_clone()?;
    let receiver = std::thread::spawn(move || receive(&rx2, epoch));
    normal_thread();
    let to: SocketAddr = format!("127.0.0.1:{listen}").parse()?;
    tx.connect(to)?;
    let rate = rate_mbps * 1e6;
    let (mut sends, mut exact) = send_phase(&tx, rate * 0.5, secs, epoch, 0)?;
    let split = sends.len() as u64;
    // Let the first phase drain before the second.
    std::thread::sleep(Duration::from_millis(50));
    let (more, more_exact) = send_phase(&tx, rate * 1.2, secs, epoch, split)?;
    sends.extend(more);
    exact.extend(more_exact);
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
        figures(&due, &got, (&sends, &exact), (0, split)),
        figures(&due, &got, (&sends, &exact), (split, n)),
    ))
}
