//! A point-to-point topology's two link directions (forward: client to server, return:
//! server to client) as a clock-agnostic component: datagrams go in with their arrival
//! time, deliveries come out with the time they are due at the far end. The links are
//! the simulator's own ([`Link`]: impairments, queue, serialization, propagation; built
//! from a scenario by quiclab-sim the way a simulation builds them, so a seed gives the
//! same random streams as in `sim run`), and the scheduled link changes apply at their
//! times. The real-time emulator (`quiclab emulate`) drives it with the wall clock;
//! tests drive it with virtual time.
//!
//! # Call contract
//! Times passed in must never decrease. [`Duplex::arrive`] offers a datagram at `now`;
//! [`Duplex::poll`] returns, one at a time, the deliveries due at or before `now`, in
//! due order; [`Duplex::next_due`] is when the next internal event (end of a
//! transmission, a delivery, a link change) happens, so the caller can sleep until then.
//! Internal events run at their own (virtual) time even when the caller comes late, so
//! a late caller never changes the model's timeline, only when it acts on it.

use crate::config::{LinkChange, LinkSide};
use crate::events::{EventQueue, Next, Slab};
use crate::link::{Link, LinkAction, Packet};
use crate::time::saturating_secs;
use quiclab_proto::Instant;
use std::collections::VecDeque;

/// What the event queue holds.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Link `usize` finished serializing the packet in slab slot `usize`.
    TxDone(usize, usize),
    /// The packet in the slot reaches the far end of link `usize`.
    Deliver(usize, usize),
    /// Scheduled change `usize` of the scenario.
    Change(usize),
    /// Link `usize` reaches its next delivery opportunity (trace-driven links).
    Wake(usize),
}

/// A datagram that reached the far end of a link direction.
#[derive(Debug)]
pub struct Delivery {
    pub side: LinkSide,
    /// When the model delivers it (the caller sends it then, or as soon after as it can).
    pub due: Instant,
    pub packet: Packet,
}

/// Both directions of a point-to-point link, driven by the caller's clock.
pub struct Duplex {
    /// [forward, return], as the simulator numbers them.
    links: Vec<Link>,
    events: EventQueue<Ev>,
    flying: Slab<Packet>,
    schedule: Vec<LinkChange>,
    ready: VecDeque<Delivery>,
}

fn index(side: LinkSide) -> usize {
    match side {
        LinkSide::Forward => 0,
        LinkSide::Return => 1,
    }
}

fn secs(s: f64) -> Instant {
    Instant::ZERO + saturating_secs(s)
}

impl Duplex {
    /// Both directions from their links ([forward, return], configured: measurement
    /// window, traces, pcap) and the scheduled changes, applied at `at_s` seconds after
    /// [`Instant::ZERO`] in `schedule`'s order. quiclab-sim builds the links from a
    /// scenario (`quiclab_sim::net::duplex::build_duplex`) as a simulation would.
    pub fn new(links: [Link; 2], schedule: Vec<LinkChange>) -> Duplex {
        let mut events = EventQueue::new();
        for (i, c) in schedule.iter().enumerate() {
            events.push(secs(c.at_s), Ev::Change(i));
        }
        Duplex {
            links: links.into(),
            events,
            flying: Slab::default(),
            schedule,
            ready: VecDeque::new(),
        }
    }

    /// One direction's link (its statistics, queue length, pcap writer).
    pub fn link(&self, side: LinkSide) -> &Link {
        &self.links[index(side)]
    }

    pub fn link_mut(&mut self, side: LinkSide) -> &mut Link {
        &mut self.links[index(side)]
    }

    /// Offers `packet` to `side`'s link at `now` (after running everything due before).
    pub fn arrive(&mut self, now: Instant, side: LinkSide, packet: Packet) {
        self.advance(now);
        let l = index(side);
        let action = self.links[l].arrive(now, packet);
        self.schedule_tx(l, action);
    }

    /// The next delivery due at or before `now`, if any.
    pub fn poll(&mut self, now: Instant) -> Option<Delivery> {
        if self.ready.is_empty() {
            self.advance(now);
        }
        self.ready.pop_front()
    }

    /// When the next internal event happens (`None`: nothing in flight or scheduled).
    pub fn next_due(&self) -> Option<Instant> {
        match self.ready.front() {
            Some(d) => Some(d.due),
            None => self.events.peek_time(),
        }
    }

    /// Runs every event due at or before `now`, each at its own time, in order.
    fn advance(&mut self, now: Instant) {
        while let Some((at, next)) = self.events.pop_due(now) {
            if let Next::Event(ev) = next {
                self.handle(at, ev);
            }
        }
    }

    /// The same steps as the simulator's event handler for these events (quiclab-sim's
    /// `sim.rs`).
    fn handle(&mut self, at: Instant, ev: Ev) {
        match ev {
            Ev::TxDone(l, key) => {
                let link = &mut self.links[l];
                let due = link.delivery_time(at, self.flying.get(key));
                let next = link.start_next(at);
                self.events.push(due, Ev::Deliver(l, key));
                self.schedule_tx(l, next);
            }
            Ev::Deliver(l, key) => {
                let packet = self.flying.remove(key);
                // A delivery starts a new flight on the reverse direction.
                self.links[1 - l].impairments.on_reverse_delivery();
                let side = if l == 0 {
                    LinkSide::Forward
                } else {
                    LinkSide::Return
                };
                self.ready.push_back(Delivery {
                    side,
                    due: at,
                    packet,
                });
            }
            Ev::Change(i) => {
                let c = &self.schedule[i];
                self.links[index(c.link)].apply_change(at, c);
            }
            Ev::Wake(l) => {
                let next = self.links[l].start_next(at);
                self.schedule_tx(l, next);
            }
        }
    }

    fn schedule_tx(&mut self, l: usize, action: Option<LinkAction>) {
        match action {
            Some(LinkAction::TxDone(at, packet)) => {
                let key = self.flying.insert(packet);
                self.events.push(at, Ev::TxDone(l, key));
            }
            Some(LinkAction::Wake(at)) => self.events.push(at, Ev::Wake(l)),
            None => {}
        }
    }
}
