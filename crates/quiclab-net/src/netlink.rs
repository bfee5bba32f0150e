//! Just enough rtnetlink to name a device's qdiscs (for the SO_TXTIME report in
//! [`crate::txtime`]): one RTM_GETQDISC dump (no external tool, no privilege needed).
//!
//! Written by hand on a nix netlink socket: the messages are three fixed headers and one
//! attribute (rtnetlink(7), netlink(7); the layouts of `struct nlmsghdr`, `struct tcmsg`
//! and `struct rtattr` in linux/netlink.h, linux/rtnetlink.h). The rust-netlink crates
//! did this before, at about 40 s of the release build's CPU time for one report line
//! (docs/PERFORMANCE.md, "Build").

use nix::sys::socket::{
    bind, recv, send, setsockopt, socket, sockopt::ReceiveTimeout, AddressFamily, MsgFlags,
    NetlinkAddr, SockFlag, SockProtocol, SockType,
};
use nix::sys::time::{TimeVal, TimeValLike};
use std::io;
use std::os::fd::AsRawFd;

const NLMSG_HDRLEN: usize = 16;
const TCMSG_LEN: usize = 20;
const RTA_HDRLEN: usize = 4;
const NLMSG_NOOP: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const TCA_KIND: u16 = 1;
/// `TC_H_ROOT`: the parent handle of a device's root qdisc.
const TC_H_ROOT: u32 = 0xFFFF_FFFF;

/// The kinds (`fq`, `noqueue`, `mq`, ...) of the qdiscs on interface `ifindex`, the
/// root first. Gives up after a second without an answer.
pub fn qdisc_kinds(ifindex: i32) -> io::Result<Vec<String>> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )?;
    bind(fd.as_raw_fd(), &NetlinkAddr::new(0, 0))?;
    setsockopt(&fd, ReceiveTimeout, &TimeVal::seconds(1))?;
    send(fd.as_raw_fd(), &request(ifindex), MsgFlags::empty())?;

    let mut kinds = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty())?;
        if n == 0 || parse(&buf[..n], ifindex, &mut kinds) {
            return Ok(kinds);
        }
    }
}

/// An RTM_GETQDISC dump request: `nlmsghdr` then a `tcmsg` naming the device (the
/// kernel may dump every device's qdiscs anyway; [`parse`] filters).
fn request(ifindex: i32) -> Vec<u8> {
    let len = (NLMSG_HDRLEN + TCMSG_LEN) as u32;
    let mut m = Vec::with_capacity(len as usize);
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&RTM_GETQDISC.to_ne_bytes());
    m.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    m.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    m.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel assigns it
    m.extend_from_slice(&[0, 0, 0, 0]); // tcm_family (AF_UNSPEC), padding
    m.extend_from_slice(&ifindex.to_ne_bytes());
    m.extend_from_slice(&[0; 12]); // tcm_handle, tcm_parent, tcm_info
    m
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Netlink's 4-byte alignment (`NLMSG_ALIGN`, `RTA_ALIGN`).
fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// Reads one receive's messages into `kinds`; whether the dump is over (done, an
/// error, or bytes that do not parse).
fn parse(mut bytes: &[u8], ifindex: i32, kinds: &mut Vec<String>) -> bool {
    while !bytes.is_empty() {
        let (Some(len), Some(kind)) = (u32_at(bytes, 0), u16_at(bytes, 4)) else {
            return true;
        };
        let len = len as usize;
        let Some(message) = bytes.get(..len).filter(|_| len >= NLMSG_HDRLEN) else {
            return true;
        };
        match kind {
            RTM_NEWQDISC => match tc_kind(&message[NLMSG_HDRLEN..], ifindex) {
                Some(Some((kind, true))) => kinds.insert(0, kind),
                Some(Some((kind, false))) => kinds.push(kind),
                Some(None) => {}
                None => return true,
            },
            NLMSG_NOOP => {}
            NLMSG_DONE | NLMSG_ERROR => return true,
            _ => {}
        }
        bytes = bytes.get(align(len)..).unwrap_or(&[]);
    }
    false
}

/// From one RTM_NEWQDISC body (`tcmsg` then attributes): `Some(Some((TCA_KIND, is
/// root)))` for a qdisc of `ifindex` with a kind, `Some(None)` for another device's or
/// one without a kind, `None` when the body does not parse.
fn tc_kind(body: &[u8], ifindex: i32) -> Option<Option<(String, bool)>> {
    let index = u32_at(body, 4)? as i32;
    let parent = u32_at(body, 12)?;
    if index != ifindex {
        return Some(None);
    }
    let mut attrs = body.get(TCMSG_LEN..)?;
    while attrs.len() >= RTA_HDRLEN {
        let len = u16_at(attrs, 0)? as usize;
        let kind = u16_at(attrs, 2)?;
        let value = attrs.get(RTA_HDRLEN..len.max(RTA_HDRLEN))?;
        if kind == TCA_KIND {
            let name = value.split(|&b| b == 0).next().unwrap_or_default();
            let name = String::from_utf8_lossy(name).into_owned();
            return Some(Some((name, parent == TC_H_ROOT)));
        }
        attrs = attrs.get(align(len.max(RTA_HDRLEN))..).unwrap_or(&[]);
    }
    Some(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_qdisc_is_named() {
        // Loopback is interface 1 on Linux; its default qdisc is noqueue (a test
        // machine may have set another: any name will do, but there must be one).
        let kinds = qdisc_kinds(1).expect("an rtnetlink dump needs no privilege");
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| !k.is_empty()),
            "{kinds:?}"
        );
        assert_eq!(qdisc_kinds(i32::MAX).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn garbage_ends_the_dump() {
        let mut kinds = Vec::new();
        assert!(parse(&[0xff; 7], 1, &mut kinds));
        assert!(parse(&[0xff; 40], 1, &mut kinds));
        assert!(kinds.is_empty());
    }

    /// One RTM_NEWQDISC message for device `index` with parent `parent` and kind.
    fn qdisc_message(index: i32, parent: u32, kind: &str) -> Vec<u8> {
        let mut attr = Vec::new();
        let value_len = kind.len() + 1;
        attr.extend_from_slice(&((RTA_HDRLEN + value_len) as u16).to_ne_bytes());
        attr.extend_from_slice(&TCA_KIND.to_ne_bytes());
        attr.extend_from_slice(kind.as_bytes());
        attr.push(0);
        attr.resize(align(attr.len()), 0);
        let mut body = vec![0u8; TCMSG_LEN];
        body[4..8].copy_from_slice(&index.to_ne_bytes());
        body[12..16].copy_from_slice(&parent.to_ne_bytes());
        body.extend_from_slice(&attr);
        let mut m = Vec::new();
        m.extend_from_slice(&((NLMSG_HDRLEN + body.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&RTM_NEWQDISC.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(&body);
        m
    }

    #[test]
    fn root_first_other_devices_skipped() {
        let mut bytes = qdisc_message(2, 0x10001, "fq");
        bytes.extend(qdisc_message(3, TC_H_ROOT, "noqueue"));
        bytes.extend(qdisc_message(2, TC_H_ROOT, "mq"));
        let mut kinds = Vec::new();
        assert!(!parse(&bytes, 2, &mut kinds), "no DONE yet");
        assert_eq!(kinds, ["mq", "fq"]);
        let mut done = vec![0u8; NLMSG_HDRLEN];
        done[..4].copy_from_slice(&(NLMSG_HDRLEN as u32).to_ne_bytes());
        done[4..6].copy_from_slice(&NLMSG_DONE.to_ne_bytes());
        assert!(parse(&done, 2, &mut kinds));
    }

    #[test]
    fn request_is_a_dump_of_one_device() {
        let r = request(7);
        assert_eq!(r.len(), 36);
        assert_eq!(u32_at(&r, 0), Some(36));
        assert_eq!(u16_at(&r, 4), Some(RTM_GETQDISC));
        assert_eq!(u16_at(&r, 6), Some(NLM_F_REQUEST | NLM_F_DUMP));
        assert_eq!(u32_at(&r, 20), Some(7));
    }
}
