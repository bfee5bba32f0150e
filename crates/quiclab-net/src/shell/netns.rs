//! The shell's network namespace and its host-side plumbing, through iproute2's `ip`
//! (the namespace is a named one, mounted at /run/netns/NAME, so that a crashed run's
//! leftovers can be found by name and removed).
//!
//! Names: the namespace and the host's TUN device are both `qlsh-PID` (PID: the shell's
//! process). [`sweep`] removes every `qlsh-*` namespace or device whose PID is no
//! longer running, after killing what still runs inside such a namespace (orphans of
//! the crashed run, which would otherwise keep it alive). A PID reused by an unrelated
//! process keeps that leftover until the next sweep after it ends.
//!
//! Addresses: each shell takes the first free /30 of 198.18.0.0/15 (RFC 2544 §C.2.2,
//! the benchmarking range, never routed off the machine): `.1` on the host's TUN
//! (QUICLAB_SHELL_BASE), `.2` inside. Concurrent shells take turns choosing, under an
//! flock on /run/quiclab-shell.lock, until their host address is assigned.

use super::ShellError;
use std::fs::File;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;

/// Prefix of everything the shell names.
pub const PREFIX: &str = "qlsh-";
/// /30 subnets in 198.18.0.0/15.
const SUBNETS: u32 = 1 << 15;
const RANGE_START: u32 = u32::from_be_bytes([198, 18, 0, 0]);

/// This process's name for its namespace and host device.
pub fn own_name() -> String {
    format!("{PREFIX}{}", std::process::id())
}

/// Where `ip netns` mounts a namespace.
pub fn mount_path(name: &str) -> PathBuf {
    PathBuf::from("/run/netns").join(name)
}

/// Runs `ip ARGS`; its stderr is the error's text.
pub fn ip(args: &[&str]) -> Result<String, ShellError> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ShellError::NoIp
        } else {
            ShellError::Io {
                what: "running ip".into(),
                source: e,
            }
        }
    })?;
    if !out.status.success() {
        return Err(ShellError::Command {
            command: format!("ip {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The PID in a `qlsh-PID` name.
pub fn pid_of(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.parse().ok()
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes the namespaces and devices of shells that are no longer running (see the
/// module docs); returns their names.
pub fn sweep() -> Result<Vec<String>, ShellError> {
    let mut removed = Vec::new();
    let own = std::process::id();
    let dead = |name: &str| pid_of(name).is_some_and(|p| p != own && !alive(p));
    for name in list("/run/netns").into_iter().filter(|n| dead(n)) {
        if let Ok(pids) = ip(&["netns", "pids", &name]) {
            for pid in pids
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                // SAFETY: kill(2) with a PID and a signal number.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        ip(&["netns", "del", &name])?;
        removed.push(name);
    }
    for name in list("/sys/class/net").into_iter().filter(|n| dead(n)) {
        // A device left only if made persistent by someone; gone already otherwise.
        if ip(&["link", "del", &name]).is_ok() {
            removed.push(name);
        }
    }
    Ok(removed)
}

/// The `qlsh-*` entries of a directory (none if it does not exist).
fn list(dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(PREFIX))
        .collect()
}

/// A held flock on /run/quiclab-shell.lock, released on drop.
pub struct Lock {
    _held: File,
}

impl Lock {
    pub fn take() -> Result<Lock, ShellError> {
        let file = File::create("/run/quiclab-shell.lock").map_err(|source| ShellError::Io {
            what: "creating /run/quiclab-shell.lock".into(),
            source,
        })?;
        // SAFETY: flock on an fd we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(ShellError::Io {
                what: "locking /run/quiclab-shell.lock".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(Lock { _held: file })
    }
}

/// The host's and the inside's addresses of the first /30 of 198.18.0.0/15 no address
/// of this namespace's interfaces is in (call it holding the [`Lock`]).
pub fn free_subnet() -> Result<(Ipv4Addr, Ipv4Addr), ShellError> {
    let used: Vec<u32> = ip(&["-4", "-o", "addr", "show"])?
        .lines()
        .filter_map(|l| {
            let a = l.split_whitespace().skip_while(|w| *w != "inet").nth(1)?;
            a.split('/').next()?.parse::<Ipv4Addr>().ok()
        })
        .map(u32::from)
        .collect();
    (0..SUBNETS)
        .map(|i| RANGE_START + 4 * i)
        .find(|net| !used.iter().any(|a| a & !3 == *net))
        .map(|net| (Ipv4Addr::from(net + 1), Ipv4Addr::from(net + 2)))
        .ok_or_else(|| ShellError::Setup("every /30 of 198.18.0.0/15 is in use".into()))
}

/// The named namespace, deleted on drop (what still runs inside keeps it alive
/// until it exits, unnamed).
pub struct Namespace {
    pub name: String,
}

impl Namespace {
    pub fn add(name: &str) -> Result<Namespace, ShellError> {
        ip(&["netns", "add", name])?;
        Ok(Namespace {
            name: name.to_string(),
        })
    }

    pub fn path(&self) -> PathBuf {
        mount_path(&self.name)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            note!("quiclab shell: removing namespace {}: {e}", self.name);
        }
    }
}
