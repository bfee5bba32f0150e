//! `quiclab shell` end to end (root only: each test prints why it skips otherwise):
//! curl inside the shell downloading 5 MB over HTTP/1.1 from a server on the host
//! through a 10 Mbit/s, 50 ms RTT path with a 1-BDP drop-tail queue, against the ideal
//! time; a quiclab client inside fetching from a quiclab server outside; no namespace
//! or device left afterwards, also after a SIGKILL of a previous run; the typed error
//! without root.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_quiclab");

/// One at a time: the download is timed to 15%, and every test builds a namespace.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why this machine cannot run the shell, if it cannot.
fn unable() -> Option<String> {
    // SAFETY: geteuid has no failure mode.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("no `ip` (iproute2)".into());
    }
    None
}

macro_rules! require_root {
    ($name:expr) => {
        if let Some(why) = unable() {
            eprintln!("skipping {}: {why}", $name);
            return;
        }
    };
}

/// 10 Mbit/s each way, 25 ms each way (50 ms RTT), 1500-byte MTU, a drop-tail queue of
/// one BDP each way: 10e6 bit/s * 0.05 s / 8 = 62,500 bytes.
const PATH: &str = "name = \"shell-10m-50ms\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"point_to_point\"\n\
[topology.forward]\nrate_mbps = 10.0\ndelay_ms = 25.0\nmtu = 1500\nqueue = { discipline = \"drop_tail\", bytes = 62500 }\n\
[topology.return]\nrate_mbps = 10.0\ndelay_ms = 25.0\nmtu = 1500\nqueue = { discipline = \"drop_tail\", bytes = 62500 }\n";

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quiclab-shell-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scenario(dir: &Path) -> PathBuf {
    let p = dir.join("path.toml");
    std::fs::write(&p, PATH).unwrap();
    p
}

/// Runs `quiclab shell SCENARIO --out OUT -- sh -c SCRIPT`; returns its output and PID.
fn shell(scenario: &Path, out: &Path, script: &str) -> (Output, u32) {
    let child = Command::new(BIN)
        .arg("shell")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(["--pcap", "--", "sh", "-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts quiclab shell");
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

/// Whether the namespace or the host device of the shell with `pid` exists.
fn leftovers(pid: u32) -> Vec<PathBuf> {
    [
        format!("/run/netns/qlsh-{pid}"),
        format!("/sys/class/net/qlsh-{pid}"),
    ]
    .into_iter()
    .map(PathBuf::from)
    .filter(|p| p.exists())
    .collect()
}

/// A tiny HTTP/1.1 server on the host (all addresses, so the shell's base address
/// too): every request gets `size` bytes, then the connection closes. Returns its port.
fn http_server(size: usize) -> u16 {
    let listener = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let body = vec![b'x'; size];
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
            );
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        }
    });
    port
}

/// The MSS a Linux sender uses on a 1500-byte MTU: 1460 minus 12 bytes of timestamp
/// option when net.ipv4.tcp_timestamps is on.
fn mss() -> f64 {
    let ts = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_timestamps")
        .map(|s| s.trim() != "0")
        .unwrap_or(true);
    if ts {
        1448.0
    } else {
        1460.0
    }
}

/// curl inside downloads 5 MB from the host: within 15% of the ideal time. Ideal (the
/// issue's definition): one handshake (1 RTT, 0.05 s) plus size over the link's payload
/// rate, 10 Mbit/s * MSS / 1500 (each 1500-byte IP packet carries one MSS of data):
/// with timestamps 9.653 Mbit/s, so 5,000,000 * 8 / 9.653e6 = 4.144 s, ideal 4.194 s,
/// bound 4.823 s. Up to two attempts (a loaded machine only adds time).
#[test]
fn curl_downloads_5mb_within_15_percent_of_ideal() {
    require_root!("curl_downloads_5mb_within_15_percent_of_ideal");
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skipping: no curl (scripts/setup-tests.sh installs it)");
        return;
    }
    let _serial = one_at_a_time();
    let size = 5_000_000usize;
    let dir = temp("curl");
    let scen = scenario(&dir);
    let port = http_server(size);
    let payload_rate = 10e6 * mss() / 1500.0;
    let ideal = 0.05 + size as f64 * 8.0 / payload_rate;
    let script = format!(
        "curl -sS --http1.1 -o /dev/null -w '%{{time_connect}} %{{time_total}} %{{size_download}}' http://$QUICLAB_SHELL_BASE:{port}/file"
    );
    let mut attempts = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("out{i}"));
        let (r, pid) = shell(&scen, &out, &script);
        let stdout = String::from_utf8_lossy(&r.stdout).to_string();
        assert!(
            r.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(leftovers(pid).is_empty(), "left: {:?}", leftovers(pid));
        let v: Vec<f64> = stdout
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (connect, total, bytes) = (v[0], v[1], v[2]);
        assert_eq!(bytes as usize, size, "{stdout}");
        // The handshake crossed the emulated path: one RTT at least.
        assert!(
            connect >= 0.05,
            "connect {connect} s: the path's 50 ms RTT is missing"
        );
        let links = std::fs::read_to_string(out.join("links.csv")).expect("links.csv");
        let ret = links
            .lines()
            .find(|l| l.starts_with("return,"))
            .expect("return row");
        let delivered: u64 = ret.split(',').nth(2).unwrap().parse().unwrap();
        assert!(
            delivered > size as u64,
            "return link carried {delivered} bytes"
        );
        eprintln!(
            "attempt {i}: connect {:.1} ms, total {total:.3} s; ideal {ideal:.3} s ({:+.1}%)",
            connect * 1e3,
            100.0 * (total / ideal - 1.0)
        );
        attempts.push(total);
        if total <= 1.15 * ideal {
            return;
        }
    }
    panic!("no download within 15% of {ideal:.3} s: {attempts:?}");
}

/// A quiclab client inside fetches 1 MB from a quiclab server outside, over QUIC.
#[test]
fn quic_client_inside_reaches_server_outside() {
    require_root!("quic_client_inside_reaches_server_outside");
    let _serial = one_at_a_time();
    let dir = temp("quic");
    let scen = scenario(&dir);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let port = std::net::UdpSocket::bind("0.0.0.0:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(BIN)
        .args(["server", "--listen", &format!("0.0.0.0:{port}")])
        .arg("--root")
        .arg(&root)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let script =
        format!("{BIN} client --insecure --check https://$QUICLAB_SHELL_BASE:{port}/1000000");
    let (r, pid) = shell(&scen, &dir.join("out"), &script);
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(leftovers(pid).is_empty(), "left: {:?}", leftovers(pid));
    let emu = std::fs::read_to_string(dir.join("out/emulate.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&emu).unwrap();
    assert!(
        v["relay"]["to_inside"].as_u64().unwrap() > 700,
        "1 MB in ~1,000 packets: {emu}"
    );
}

/// A run killed with SIGKILL leaves its namespace mounted (its device goes with its
/// descriptor); the next run removes it, and leaves nothing of its own.
#[test]
fn next_run_removes_what_a_killed_run_left() {
    require_root!("next_run_removes_what_a_killed_run_left");
    let _serial = one_at_a_time();
    let dir = temp("kill");
    let scen = scenario(&dir);
    let mut victim = Command::new(BIN)
        .arg("shell")
        .arg(&scen)
        .args(["--", "sleep", "30"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let vpid = victim.id();
    let ns = PathBuf::from(format!("/run/netns/qlsh-{vpid}"));
    let dev = PathBuf::from(format!("/sys/class/net/qlsh-{vpid}"));
    for _ in 0..200 {
        if ns.exists() && dev.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(
        ns.exists() && dev.exists(),
        "the shell set up its namespace"
    );
    std::thread::sleep(Duration::from_millis(200));
    victim.kill().unwrap();
    victim.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(ns.exists(), "a killed run cannot remove its namespace");
    assert!(
        !dev.exists(),
        "the kernel removes a TUN device with its descriptor"
    );
    let (r, pid) = shell(&scen, &dir.join("out"), "true");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("removed qlsh-{vpid}")), "{stderr}");
    assert!(leftovers(vpid).is_empty(), "left: {:?}", leftovers(vpid));
    assert!(leftovers(pid).is_empty(), "left: {:?}", leftovers(pid));
}

/// SIGTERM to the shell: the command gets SIGTERM, and the shell removes its
/// namespace and exits with the command's status (128 + 15).
#[test]
fn sigterm_ends_the_command_and_cleans_up() {
    require_root!("sigterm_ends_the_command_and_cleans_up");
    let _serial = one_at_a_time();
    let dir = temp("term");
    let mut sh = Command::new(BIN)
        .arg("shell")
        .arg(scenario(&dir))
        .args(["--", "sleep", "30"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = sh.id();
    for _ in 0..200 {
        if leftovers(pid).len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(leftovers(pid).len(), 2, "namespace and device set up");
    std::thread::sleep(Duration::from_millis(200));
    let start = std::time::Instant::now();
    // SAFETY: kill(2) on the shell this test started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    let status = sh.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "sleep ended by SIGTERM, not its 30 s"
    );
    assert!(leftovers(pid).is_empty(), "left: {:?}", leftovers(pid));
}

/// The command's exit status is the shell's.
#[test]
fn exit_status_is_the_commands() {
    require_root!("exit_status_is_the_commands");
    let _serial = one_at_a_time();
    let dir = temp("status");
    let (r, pid) = shell(&scenario(&dir), &dir.join("out"), "exit 3");
    assert_eq!(r.status.code(), Some(3));
    assert!(leftovers(pid).is_empty());
}

/// Without root: a typed error that says so, and nothing created.
#[test]
fn without_root_a_clear_error() {
    require_root!("without_root_a_clear_error (it drops root itself)");
    let dir = temp("noroot");
    let scen = scenario(&dir);
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&scen, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.arg("shell").arg(&scen).args(["--", "true"]);
    // SAFETY: setuid between fork and exec, to the conventional `nobody`.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let r = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
}
