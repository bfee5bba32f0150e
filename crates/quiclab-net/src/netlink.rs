//! Just enough rtnetlink to name a device's qdiscs (for the SO_TXTIME report in
//! [`crate::txtime`]): one RTM_GETQDISC dump (no external tool, no privilege needed),
//! through the rust-netlink crates (netlink-sys for the socket, netlink-packet-route
//! for the messages).

use netlink_packet_core::{NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST};
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use nix::sys::socket::{setsockopt, sockopt::ReceiveTimeout};
use nix::sys::time::{TimeVal, TimeValLike};
use std::io;

/// The kinds (`fq`, `noqueue`, `mq`, ...) of the qdiscs on interface `ifindex`, the
/// root first. Gives up after a second without an answer.
pub fn qdisc_kinds(ifindex: i32) -> io::Result<Vec<String>> {
    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    setsockopt(&socket, ReceiveTimeout, &TimeVal::seconds(1)).map_err(io::Error::from)?;

    let mut query = TcMessage::default();
    query.header.index = ifindex;
    let mut request = NetlinkMessage::from(RouteNetlinkMessage::GetQueueDiscipline(query));
    request.header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.sequence_number = 1;
    request.finalize();
    let mut bytes = vec![0; request.buffer_len()];
    request.serialize(&mut bytes);
    socket.send(&bytes, 0)?;

    let mut kinds = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = socket.recv(&mut &mut buf[..], 0)?;
        if n == 0 || parse(&buf[..n], ifindex, &mut kinds) {
            return Ok(kinds);
        }
    }
}

/// Reads one receive's messages into `kinds`; whether the dump is over (done, an
/// error, or bytes that do not parse).
fn parse(mut bytes: &[u8], ifindex: i32, kinds: &mut Vec<String>) -> bool {
    while !bytes.is_empty() {
        let Ok(message) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(bytes) else {
            return true;
        };
        match message.payload {
            NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewQueueDiscipline(tc)) => {
                if tc.header.index == ifindex {
                    add_kind(&tc, kinds);
                }
            }
            NetlinkPayload::InnerMessage(_) | NetlinkPayload::Noop => {}
            _ => return true,
        }
        let len = message.header.length as usize;
        if len == 0 {
            return true;
        }
        bytes = bytes.get(len..).unwrap_or(&[]);
    }
    false
}

/// The qdisc's TCA_KIND, the root's first in the list.
fn add_kind(tc: &TcMessage, kinds: &mut Vec<String>) {
    let kind = tc.attributes.iter().find_map(|a| match a {
        TcAttribute::Kind(kind) => Some(kind.clone()),
        _ => None,
    });
    if let Some(kind) = kind {
        if tc.header.parent == TcHandle::ROOT {
            kinds.insert(0, kind);
        } else {
            kinds.push(kind);
        }
    }
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
        assert!(kinds.is_empty());
    }
}
