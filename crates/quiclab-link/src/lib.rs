//! quiclab-link: the link models shared by the simulator (quiclab-sim, virtual time) and
//! the real-time emulator (`quiclab emulate`, wall-clock time since start).
//!
//! Time is injected: no function here reads a clock; each takes `now` (an
//! [`quiclab_proto::Instant`]) from its driver, and randomness comes from the
//! seeded generator the driver hands in, so the same inputs give the same fates.
//!
//! - [`link`]: one link direction (impairments at the entry, a transmit queue,
//!   serialization at the link rate, propagation delay, outages, scheduled changes);
//! - [`queue`]: drop-tail, CoDel and the AQMs (DualPI2, PIE, FQ-CoDel, RED) with their
//!   per-queue counters; [`impair`]: loss models, scripted drops, jitter,
//!   duplication; [`trace`]: Mahimahi delivery traces and delay/loss step traces;
//!   [`profile`]: generative link models (LEO, GEO, cellular, Wi-Fi) realised as traces;
//!   [`config`]: their scenario keys (serde);
//! - [`duplex`]: two directions as a clock-agnostic component (datagrams in, due
//!   deliveries out), on the [`events`] queue the simulator runs on too;
//! - [`pcap`]: captures of what a link transmits; [`quantile`]: the percentile every
//!   quiclab figure uses.

pub mod config;
pub mod duplex;
pub mod events;
pub mod impair;
pub mod link;
pub mod pcap;
pub mod profile;
pub mod quantile;
pub mod queue;
pub mod time;
pub mod trace;
