//! TCP Fast Open (RFC 7413): the cookie exchange and data in the SYN.
//!
//! - Client (§4.1.3, §4.2.1): without a cached cookie its SYN carries an empty TFO
//!   option (a cookie request) and no data; the cookie the SYN-ACK returns is kept for
//!   the driver to cache per server address. With a cookie, the SYN carries it and up
//!   to one segment of the data written before the SYN left. If the SYN-ACK does not
//!   acknowledge that data (the server refused it), the data is resent after the
//!   handshake without a congestion response (§4.2.2).
//! - Server (§4.1.2, §4.2.2): the cookie is a deterministic function of the client's
//!   IP address and a secret the driver sets per server host (a keyed hash from the
//!   scenario's seed, not a cipher: nothing here is secret, the run must reproduce).
//!   A SYN with a valid cookie has its data accepted at once and the server may send
//!   data before the three-way handshake completes; an empty or invalid cookie gets
//!   a fresh one in the SYN-ACK and the SYN's data is ignored.

use super::{new_segment, Outgoing, TcpConnection};
use crate::wire::{Header, Options};
use quiclab_proto::{DetRng, Instant};
use std::net::Ipv4Addr;

/// Cookie length (RFC 7413 §4.1.1 allows 4 to 16 bytes; Linux uses 8).
pub const COOKIE_LEN: usize = 8;

/// The cookie a server with `key` issues to `client` (RFC 7413 §4.1.2).
pub fn cookie(key: u64, client: Ipv4Addr) -> Vec<u8> {
    let mix = key ^ u64::from(u32::from(client)).rotate_left(29);
    DetRng::new(mix).next_u64().to_be_bytes()[..COOKIE_LEN].to_vec()
}

/// TFO state of one connection.
#[derive(Debug, Default)]
pub(crate) struct FastOpen {
    /// Client: the cookie to present (from the driver's cache).
    pub cookie: Option<Vec<u8>>,
    /// Client: the cookie the server issued in its SYN-ACK.
    pub received: Option<Vec<u8>>,
    /// Client: data bytes sent in the SYN.
    pub syn_data: u64,
    /// Server: the cookie secret; `None` = cookies are not issued.
    pub key: Option<u64>,
    /// Server: the cookie to put in the SYN-ACK (the SYN asked for one or had a bad one).
    pub issue: Option<Vec<u8>>,
    /// Server: the SYN's data was accepted; client: the server acknowledged it.
    pub accepted: bool,
}

impl TcpConnection {
    /// Client, before the first `poll_transmit`: the cookie cached for this server
    /// (RFC 7413 §4.1.3), or `None` to request one. Ignored with `fast_open` off.
    pub fn set_fast_open_cookie(&mut self, cookie: Option<Vec<u8>>) {
        self.tfo.cookie = cookie;
    }

    /// Server: the secret its cookies derive from (the same for every connection of
    /// one server host, so a cookie from one connection opens the next).
    pub fn set_fast_open_key(&mut self, key: u64) {
        self.tfo.key = Some(key);
    }

    /// Client: the cookie the server's SYN-ACK carried, to cache.
    pub fn fast_open_cookie_received(&self) -> Option<&[u8]> {
        self.tfo.received.as_deref()
    }

    /// Client: the SYN carried data the server acknowledged; server: it accepted it.
    pub fn fast_open_accepted(&self) -> bool {
        self.tfo.accepted
    }

    /// Whether the SYN will carry data: a client with TFO on and a cookie, before its
    /// first SYN left. The application may write now.
    pub fn may_write_before_syn(&self) -> bool {
        self.config.fast_open
            && self.state == super::State::SynSent
            && self.tfo.cookie.is_some()
            && self.syn_count == 0
    }

    /// Client SYN: the TFO option and the data it carries (RFC 7413 §4.2.1). Returns
    /// the payload; records it in the scoreboard as the first segment.
    pub(super) fn fast_open_syn(&mut self, now: Instant, options: &mut Options) -> Vec<u8> {
        if !self.config.fast_open {
            return Vec::new();
        }
        options.fast_open = Some(self.tfo.cookie.clone().unwrap_or_default());
        if self.tfo.cookie.is_none() || self.syn_count > 0 || self.sb.unsent() == 0 {
            // Retransmitted SYNs carry no data: it is resent after the handshake.
            return Vec::new();
        }
        let room = u64::from(self.config.mss).saturating_sub(options.encoded_len() as u64);
        let len = self.sb.unsent().min(room);
        let o = Outgoing {
            start: 0,
            end: len,
            fin: false,
            retransmission: false,
        };
        let mut payload = Vec::with_capacity(len as usize);
        self.sb.copy(0, len, &mut payload);
        self.tx_count += 1;
        let snap = self.delivery.on_sent(now, len, len);
        self.sb
            .on_sent(0, new_segment(&o, now, self.tx_count, snap));
        self.cc.on_packet_sent(now, len, self.sb.pipe);
        self.stats.data_segments_sent += 1;
        self.tfo.syn_data = len;
        payload
    }

    /// Client, on the SYN-ACK (already established): keeps the issued cookie and
    /// settles the SYN's data: acknowledged, or resent without a congestion response.
    pub(super) fn fast_open_syn_ack(&mut self, now: Instant, h: &Header) {
        if let Some(c) = h.options.fast_open.as_ref().filter(|c| !c.is_empty()) {
            self.tfo.received = Some(c.clone());
        }
        if self.tfo.syn_data == 0 {
            return;
        }
        let acked = u64::from(h.ack.wrapping_sub(self.iss.wrapping_add(1)));
        if acked >= self.tfo.syn_data {
            self.tfo.accepted = true;
            let delivered = self.sb.on_ack(acked.min(self.tfo.syn_data), &[]);
            let acked = self.on_delivered(now, &delivered);
            self.inform_controller(now, &acked, &Default::default(), None);
        } else {
            // §4.2.2: the server ignored the data; it goes again as the first segment.
            self.sb.mark_all_lost();
        }
    }

    /// Server, on a SYN (LISTEN): checks the cookie, accepts the data or issues a
    /// cookie (RFC 7413 §4.2.2).
    pub(super) fn fast_open_listen(&mut self, now: Instant, h: &Header, payload: &[u8]) {
        let (Some(key), Some(presented), true) = (
            self.tfo.key,
            h.options.fast_open.as_ref(),
            self.config.fast_open,
        ) else {
            return;
        };
        let Some(client) = self.remote.map(|r| *r.ip()) else {
            return;
        };
        let valid = cookie(key, client);
        if *presented == valid {
            self.tfo.accepted = true;
            self.rx
                .on_data(now, 0, payload, h.has(crate::wire::flags::FIN));
        } else {
            self.tfo.issue = Some(valid);
        }
    }

    /// The acknowledgement number of the SYN-ACK: the SYN plus accepted SYN data.
    pub(super) fn syn_ack_number(&self) -> u32 {
        self.irs.wrapping_add(1).wrapping_add(self.rx.next as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_depend_on_key_and_client() {
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        assert_eq!(cookie(1, a), cookie(1, a));
        assert_ne!(cookie(1, a), cookie(2, a));
        assert_ne!(cookie(1, a), cookie(1, b));
        assert_eq!(cookie(1, a).len(), COOKIE_LEN);
    }
}
