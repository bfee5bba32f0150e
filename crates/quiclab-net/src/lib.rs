//! quiclab on real networks: the real-UDP endpoint driver and the real-time link
//! emulator, as a library the command line (`quiclab server|client|emulate`) and other
//! programs call in-process.
//!
//! # Endpoint driver
//! [`EndpointDriver`] runs a sans-IO [`quiclab_proto::Endpoint`] on one non-blocking UDP
//! [`Socket`] with the wall clock: bind a socket ([`Socket::bind`], or
//! [`EndpointDriver::bind`]), wrap it with a [`DriverConfig`], then
//! [`EndpointDriver::run`] the endpoint with an [`Application`] (the protocol above
//! QUIC: accept connections, read and write streams) until the application is
//! finished. The loop sends in GSO bursts, receives GRO batches, paces with a timerfd
//! ([`WakeMode`]), grows the socket buffers from the windows it sees and logs kernel
//! drops into the qlog ([`monitor`]), and ends a client's handshake on an ICMP port
//! unreachable ([`Socket::report_icmp_errors`]).
//!
//! # Emulator
//! [`emulate::Emulator`] relays UDP between one client and one server through a
//! scenario's point-to-point links (quiclab-link's models, the simulator's code) on the
//! wall clock: [`emulate::load`] a scenario, [`emulate::Emulator::bind`] its two
//! sockets with an [`emulate::EmulatorConfig`] (listen and upstream addresses),
//! [`emulate::Emulator::run`] until a stop, then [`emulate::Emulator::finish`] writes
//! links.csv, emulate.json and the captures.
//!
//! # Host probes
//! [`mtu`] (the interface's and the route's MTU, PMTU discovery's bound), [`txtime`]
//! (whether the kernel could time departures, SO_TXTIME) and [`signal`] (SIGPIPE back to
//! its default; SIGINT/SIGTERM as a flag both loops watch).
//!
//! Errors are [`NetError`]s naming the failed operation, with the OS error as source;
//! scenario errors are [`emulate::EmulateError`]s. Run-time notes (a socket buffer grown, a
//! new client at the emulator, a connection closed) go to stderr, or where the thread
//! asked ([`notes::redirect`]).

#[macro_use]
pub mod notes;
pub mod app;
mod burn;
pub mod calibrate;
mod driver;
pub mod emulate;
mod error;
mod icmp;
mod iface;
pub mod monitor;
pub mod mtu;
#[cfg(target_os = "linux")]
mod netlink;
pub mod os_crypto;
pub mod probe;
pub mod shell;
pub mod signal;
mod stop;
mod timer;
pub mod transfer;
pub mod txtime;
pub mod udp;

pub use burn::Burn;
pub use driver::{Application, Clock, Counters, DriverConfig, EndpointDriver, WakeMode};
pub use error::{AppError, NetError, Result};
pub use stop::StopHandle;
pub use udp::{Granted, Socket};
