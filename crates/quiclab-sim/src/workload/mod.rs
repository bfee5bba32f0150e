//! The workloads' room: what runs on the simulated hosts on top of the network model.
//! QUIC applications (`app`: bulk, request/response, video, search; `h3app`: HTTP/3
//! pages; `webapp`, `webquic`, `webmeasure`: web pages and their measures), TCP and
//! TLS flows (`tcpflow`, `tcptls`), web pages over TCP (`tcpweb`) with HTTP/2-style
//! multiplexing (`h2mux`), the split-connection PEP (`pep`), and interactive media
//! frames over DATAGRAM or streams (`media`).

pub mod app;
pub mod datagram;
pub(crate) mod h2mux;
pub(crate) mod h3app;
pub mod media;
pub(crate) mod pep;
pub(crate) mod tcpflow;
pub mod tcptls;
pub(crate) mod tcpweb;
pub(crate) mod tls_records;
pub mod webapp;
pub mod webmeasure;
pub(crate) mod webquic;
