//! A TUN device (IFF_TUN | IFF_NO_PI: each read or write is one bare IP packet), opened
//! in this process's network namespace or inside another one. A device made this way
//! is not persistent: the kernel removes it when its file descriptor closes, also when
//! the process is killed, so a crashed shell leaves no device behind.

use super::ShellError;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

/// struct ifreq as TUNSETIFF reads it: the name, then the flags (the rest is unused).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// One open TUN device, non-blocking.
pub struct Tun {
    file: File,
    pub name: String,
}

impl Tun {
    /// Creates the device `name` in the calling thread's network namespace.
    pub fn open(name: &str) -> Result<Tun, ShellError> {
        let io = |what: &str, source| ShellError::Io {
            what: format!("{what} TUN device {name}"),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/net/tun")
            .map_err(|e| io("opening /dev/net/tun for", e))?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        if name.len() >= libc::IFNAMSIZ {
            return Err(ShellError::Setup(format!("device name {name} too long")));
        }
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads (and writes back the name into) an ifreq-sized buffer
        // that lives across the call.
        let r = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req) };
        if r != 0 {
            return Err(io("creating", std::io::Error::last_os_error()));
        }
        // SAFETY: fcntl on an fd we own, with integer flags.
        let ok = unsafe {
            let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            fl >= 0 && libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK) == 0
        };
        if !ok {
            return Err(io("making non-blocking", std::io::Error::last_os_error()));
        }
        Ok(Tun {
            file,
            name: name.to_string(),
        })
    }

    /// Creates the device `name` inside the namespace mounted at `netns` (a thread
    /// enters it for the call; the device stays there, its fd here). `sysctls` are
    /// written inside the namespace too, as (path under /proc/sys, value).
    pub fn open_in(netns: &Path, name: &str, sysctls: &[(&str, &str)]) -> Result<Tun, ShellError> {
        let (netns, name) = (netns.to_path_buf(), name.to_string());
        let sysctls: Vec<(String, String)> = sysctls
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        std::thread::spawn(move || -> Result<Tun, ShellError> {
            enter(&netns)?;
            for (key, value) in &sysctls {
                let path = Path::new("/proc/sys").join(key);
                std::fs::write(&path, value).map_err(|source| ShellError::Io {
                    what: format!("writing {} in {}", path.display(), netns.display()),
                    source,
                })?;
            }
            Tun::open(&name)
        })
        .join()
        .map_err(|_| ShellError::Setup("the thread entering the namespace panicked".into()))?
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Reads one packet; `Ok(None)` when none is waiting.
    pub fn read(&mut self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match self.file.read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Hands one packet to the kernel of the device's namespace.
    pub fn write(&mut self, packet: &[u8]) -> std::io::Result<()> {
        self.file.write(packet).map(|_| ())
    }
}

/// Moves the calling thread into the network namespace mounted at `netns`.
pub(super) fn enter(netns: &Path) -> Result<(), ShellError> {
    let ns = File::open(netns).map_err(|source| ShellError::Io {
        what: format!("opening {}", netns.display()),
        source,
    })?;
    // SAFETY: setns on an fd we own; it changes only this thread's namespace.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(ShellError::Io {
            what: format!("entering {}", netns.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}
