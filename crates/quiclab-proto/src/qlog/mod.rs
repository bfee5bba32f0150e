//! The qlog sink: one connection's events as a JSON-SEQ (`.sqlog`) file, following
//! draft-ietf-quic-qlog-main-schema (QlogFileSeq) and draft-ietf-quic-qlog-quic-events
//! (the `quic:` namespace) in `shared/specs`.
//!
//! A pure sink: it serializes [`Event`]s and owns no domain types; the events, their
//! frame summaries and the packet and frame type names live in [`crate::events`].
//!
//! qvis: qvis reads JSON-SEQ files whose header carries `qlog_format: "JSON-SEQ"` and
//! `qlog_version: "0.3"`, fields the current draft dropped (it uses `file_schema` and
//! `serialization_format`). The header carries both sets so either reader accepts it.
//! Event names and fields follow the draft in our specs, not qlog 0.3's
//! `transport:`/`recovery:` categories (e.g. `quic:recovery_metrics_updated` rather
//! than `recovery:metrics_updated`, `quic:timer_updated` rather than
//! `recovery:loss_timer_updated`); a qvis build that predates the `quic:` namespace
//! shows such events only in its generic views.
//!
//! Choices where the draft leaves room, all documented at the field:
//! * `time` is the driver's (simulated) time in milliseconds since its epoch, with
//!   microsecond precision, printed from integers (`12.345`) so output is byte-stable.
//!   `common_fields.time_format` is `relative_to_epoch` with a monotonic clock of
//!   unknown epoch (the simulation's start).
//! * ACK frames carry the raw ACK Delay field ([`crate::events::FrameKind::Ack`]); the writer converts
//!   it to milliseconds with the ack_delay_exponent it saw in `parameters_set` (the
//!   local one for sent packets, the peer's for received ones; 3 until then).
//! * STREAM, CRYPTO and DATAGRAM frames log their Length field in `raw.length` as the
//!   draft requires, and also as a top-level `length` (qlog 0.3, read by qvis).
//!   Other frames log their full encoded size in `raw.length`.

mod frame_fields;
mod json;
mod multipath;
mod packet;
mod record;
mod tuple;

use crate::error::TransportErrorCode;
use crate::events::{
    packet_type_name, CongestionState, ConnectionState, DropReason, Event, EventSink, KeyType,
    LossTrigger, Owner, RecoveryMetrics, TlsResumption,
};
use crate::time::{duration_nanos, Instant};
use crate::wire::{ConnectionId, PacketType, Side, TransportParameters};
use json::Json;
use packet::write_packet;
use record::{
    begin, datagram_received, ecn_state_updated, end, kernel_drops, write_transport_error, RS,
};
use std::io::{self, Write};

/// The event schema URI of the draft implemented (its number appended, as drafts must).
pub const EVENT_SCHEMA: &str = "urn:ietf:params:qlog:events:quic-13";

/// Writes a connection's events as qlog JSON-SEQ to `W`.
///
/// Each record is one `write_all` call: wrap files in a `BufWriter`. The first I/O
/// error is kept (see [`QlogWriter::error`]) and all later output is dropped, so a
/// full disk never disturbs the connection being logged.
pub struct QlogWriter<W: Write + Send> {
    /// `None` only after `into_inner`.
    out: Option<W>,
    /// Reused record buffer.
    buf: Vec<u8>,
    error: Option<io::Error>,
    vantage: Side,
    /// To convert ACK Delay fields: ours for ACKs we send, the peer's for ACKs we get.
    local_ack_delay_exponent: u64,
    remote_ack_delay_exponent: u64,
    /// Previous states, logged as `old`.
    conn_state: Option<ConnectionState>,
    cc_state: Option<CongestionState>,
    /// Key phase of the current 1-RTT keys, [local, remote]; `None` before the first.
    key_phase: [Option<u64>; 2],
}

impl<W: Write + Send> QlogWriter<W> {
    /// Writes the header record at once. `odcid` becomes the trace's `group_id`.
    pub fn new(writer: W, title: &str, vantage: Side, odcid: Option<ConnectionId>) -> Self {
        Self::with_description(writer, title, "", vantage, odcid)
    }

    /// [`QlogWriter::new`] with the header's free-text `description`.
    pub fn with_description(
        writer: W,
        title: &str,
        description: &str,
        vantage: Side,
        odcid: Option<ConnectionId>,
    ) -> Self {
        let mut w = QlogWriter {
            out: Some(writer),
            buf: Vec::with_capacity(1024),
            error: None,
            vantage,
            local_ack_delay_exponent: 3,
            remote_ack_delay_exponent: 3,
            conn_state: None,
            cc_state: None,
            key_phase: [None, None],
        };
        let mut buf = std::mem::take(&mut w.buf);
        write_header(&mut buf, title, description, vantage, odcid);
        w.emit(&mut buf);
        w.buf = buf;
        w
    }

    /// The first I/O error met; once set, nothing more is written.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Flushes the writer (errors are kept like write errors).
    pub fn flush(&mut self) {
        if self.error.is_some() {
            return;
        }
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.flush() {
                self.error = Some(e);
            }
        }
    }

    /// Flushes and returns the writer.
    pub fn into_inner(mut self) -> W {
        self.flush();
        self.out.take().expect("writer present until into_inner")
    }

    /// Writes `buf` (complete records) unless an earlier write failed; clears it.
    fn emit(&mut self, buf: &mut Vec<u8>) {
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.write_all(buf) {
                    self.error = Some(e);
                }
            }
        }
        buf.clear();
    }

    /// The endpoint whose secret a key event is about.
    fn key_side(&self, owner: Owner) -> Side {
        match owner {
            Owner::Local => self.vantage,
            Owner::Remote => self.vantage.peer(),
        }
    }

    /// Appends the records for `ev` to `buf` and updates the writer's state.
    fn encode(&mut self, buf: &mut Vec<u8>, now: Instant, ev: &Event) {
        match ev {
            Event::ConnectionStarted {
                version,
                local_cid,
                remote_cid,
                ..
            } => connection_started(buf, now, *version, local_cid, remote_cid),
            Event::ConnectionStateUpdated { new } => {
                let mut j = begin(buf, now, "quic:connection_state_updated");
                if let Some(old) = self.conn_state {
                    j.key("old").lit(conn_state_name(old));
                }
                j.key("new").lit(conn_state_name(*new));
                end(j);
                self.conn_state = Some(*new);
            }
            Event::ParametersSet {
                owner,
                params,
                alpn,
                tls_cipher,
                resumption,
            } => {
                let tls = (alpn.as_deref(), tls_cipher.as_deref(), *resumption);
                self.parameters_set(buf, now, *owner, params, tls)
            }
            Event::PacketSent {
                header,
                size,
                frames,
            } => {
                let exp = self.local_ack_delay_exponent;
                write_packet(buf, now, "quic:packet_sent", header, *size, frames, exp);
            }
            Event::PacketReceived {
                header,
                size,
                frames,
            } => {
                let exp = self.remote_ack_delay_exponent;
                write_packet(buf, now, "quic:packet_received", header, *size, frames, exp);
            }
            Event::PacketDropped { ty, size, reason } => {
                packet_dropped(buf, now, *ty, *size, *reason);
            }
            Event::PacketLost {
                ty,
                pn,
                trigger,
                path_id,
            } => packet_lost(buf, now, (*ty, *pn, *path_id), *trigger),
            Event::MetricsUpdated(m) => {
                let mut j = begin(buf, now, "quic:recovery_metrics_updated");
                write_metrics(&mut j, m);
                end(j);
            }
            Event::CongestionStateUpdated { new } => {
                let mut j = begin(buf, now, "quic:congestion_state_updated");
                if let Some(old) = self.cc_state {
                    j.key("old").lit(cc_state_name(old));
                }
                j.key("new").lit(cc_state_name(*new));
                end(j);
                self.cc_state = Some(*new);
            }
            Event::KeyUpdated { key, owner } => self.key_updated(buf, now, *key, *owner),
            Event::KeyDiscarded { key } => key_discarded(buf, now, *key),
            Event::VersionInformation {
                server_versions,
                client_versions,
                chosen,
            } => version_information(buf, now, server_versions, client_versions, *chosen),
            Event::CarefulResumePhaseUpdated(u) => careful_resume_phase(buf, u),
            Event::MtuUpdated { old, new, done } => {
                let mut j = begin(buf, now, "quic:mtu_updated");
                j.key("old").u64(u64::from(*old));
                j.key("new").u64(u64::from(*new));
                if *done {
                    j.key("done").bool(true);
                }
                end(j);
            }
            Event::PtoExpired { pto_count } => {
                let mut j = begin(buf, now, "quic:timer_updated");
                j.key("timer_type").lit("pto");
                j.key("event_type").lit("expired");
                j.key("pto_count").u64(u64::from(*pto_count));
                end(j);
            }
            Event::ConnectionClosed {
                owner,
                code,
                application,
                reason,
            } => connection_closed(buf, now, *owner, *code, *application, reason),
            Event::KernelDrops(k) => kernel_drops(buf, now, k),
            Event::EcnStateUpdated { old, new } => ecn_state_updated(buf, now, *old, *new),
            Event::TupleAssigned {
                tuple_id,
                remote,
                local,
            } => tuple::tuple_assigned(buf, now, *tuple_id, *remote, *local),
            Event::MigrationStateUpdated { new, remote } => {
                tuple::migration_state_updated(buf, now, *new, *remote)
            }
            Event::DatagramReceived { size, ecn } => datagram_received(buf, now, *size, *ecn),
            Event::DatagramDropped { length, reason } => {
                let mut j = begin(buf, now, "quiclab:datagram_frame_dropped");
                j.key("raw").begin_obj();
                j.key("length").u64(*length as u64);
                j.end_obj();
                j.key("trigger").lit(reason.name());
                end(j);
            }
        }
    }

    /// `parameters_set` (and `alpn_information` once the ALPN is known); remembers the
    /// ack_delay_exponent to scale later ACK frames.
    fn parameters_set(
        &mut self,
        buf: &mut Vec<u8>,
        now: Instant,
        owner: Owner,
        params: &TransportParameters,
        (alpn, tls_cipher, resumption): (Option<&str>, Option<&str>, TlsResumption),
    ) {
        match owner {
            Owner::Local => self.local_ack_delay_exponent = params.ack_delay_exponent,
            Owner::Remote => self.remote_ack_delay_exponent = params.ack_delay_exponent,
        }
        let mut j = begin(buf, now, "quic:parameters_set");
        j.key("initiator").lit(owner_name(owner));
        // qlog quic-events §parameters_set; written only when true, so qlogs of
        // handshakes without resumption are unchanged.
        if resumption.resumed {
            j.key("resumption_allowed").bool(true);
        }
        if resumption.early_data {
            j.key("early_data_enabled").bool(true);
        }
        if let Some(cipher) = tls_cipher {
            j.key("tls_cipher").str(cipher);
        }
        write_params(&mut j, params);
        end(j);
        if let Some(alpn) = alpn {
            let mut j = begin(buf, now, "quic:alpn_information");
            j.key("chosen_alpn").begin_obj();
            j.key("string_value").str(alpn);
            j.end_obj();
            end(j);
        }
    }

    /// `key_updated`; counts 1-RTT key phases per direction.
    fn key_updated(&mut self, buf: &mut Vec<u8>, now: Instant, key: KeyType, owner: Owner) {
        let side = self.key_side(owner);
        let mut j = begin(buf, now, "quic:key_updated");
        j.key("key_type").lit(key_type_name(side, key));
        if key == KeyType::OneRtt {
            // The first 1-RTT keys come from TLS; later ones are key updates,
            // whose initiator the event does not say, so no trigger is logged.
            let slot = &mut self.key_phase[owner_index(owner)];
            let phase = slot.map_or(0, |p| p + 1);
            *slot = Some(phase);
            j.key("key_phase").u64(phase);
            if phase == 0 {
                j.key("trigger").lit("tls");
            }
        } else {
            j.key("trigger").lit("tls");
        }
        end(j);
    }
}

impl<W: Write + Send> EventSink for QlogWriter<W> {
    fn event(&mut self, now: Instant, event: &Event) {
        if self.error.is_some() {
            return;
        }
        let mut buf = std::mem::take(&mut self.buf);
        self.encode(&mut buf, now, event);
        self.emit(&mut buf);
        self.buf = buf;
        // A closing connection's log is complete on disk at once, not when a server
        // drops the connection after draining (RFC 9000 §10.2: three PTOs) or exits: a
        // reader watching the directory sees every event up to the close.
        if let Event::ConnectionStateUpdated {
            new: ConnectionState::Closing | ConnectionState::Draining | ConnectionState::Closed,
        } = event
        {
            self.flush();
        }
    }
}

impl<W: Write + Send> Drop for QlogWriter<W> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// `connection_started` and `version_information`.
fn connection_started(
    buf: &mut Vec<u8>,
    now: Instant,
    version: u32,
    local_cid: &ConnectionId,
    remote_cid: &ConnectionId,
) {
    let mut j = begin(buf, now, "quic:connection_started");
    for (key, cid) in [("local", local_cid), ("remote", remote_cid)] {
        j.key(key).begin_obj();
        j.key("connection_ids").begin_arr().hex(cid.as_bytes());
        j.end_arr().end_obj();
    }
    end(j);
    let mut j = begin(buf, now, "quic:version_information");
    j.key("chosen_version").hex(&version.to_be_bytes());
    end(j);
}

fn packet_dropped(
    buf: &mut Vec<u8>,
    now: Instant,
    ty: Option<PacketType>,
    size: usize,
    reason: DropReason,
) {
    let mut j = begin(buf, now, "quic:packet_dropped");
    if let Some(ty) = ty {
        j.key("header").begin_obj();
        j.key("packet_type").lit(packet_type_name(ty));
        j.end_obj();
    }
    j.key("raw").begin_obj();
    j.key("length").u64(size as u64);
    j.end_obj();
    // The draft's triggers are coarser than our reasons: keep ours too.
    j.key("details").begin_obj();
    j.key("reason").lit(drop_reason_name(reason));
    j.end_obj();
    j.key("trigger").lit(drop_trigger(reason));
    end(j);
}

/// `quic:careful_resume_phase_updated` (draft-ietf-tsvwg-careful-resume-qlog §3,
/// QUICCarefulResumePhaseUpdated), stamped with the time the phase changed.
fn careful_resume_phase(buf: &mut Vec<u8>, u: &crate::events::CarefulResumeUpdate) {
    let mut j = begin(buf, u.at, "quic:careful_resume_phase_updated");
    if let Some(old) = u.old {
        j.key("old").lit(old.name());
    }
    j.key("new").lit(u.new.name());
    j.key("state_data").begin_obj();
    j.key("pipesize").u64(u.pipesize);
    j.key("first_unvalidated_packet")
        .u64(u.first_unvalidated_packet);
    j.key("last_unvalidated_packet")
        .u64(u.last_unvalidated_packet);
    j.key("congestion_window").u64(u.congestion_window);
    if let Some(s) = u.ssthresh {
        j.key("ssthresh").u64(s);
    }
    j.end_obj();
    j.key("restored_data").begin_obj();
    j.key("saved_congestion_window")
        .u64(u.saved_congestion_window);
    j.key("saved_rtt")
        .ms(crate::time::duration_nanos(u.saved_rtt));
    j.end_obj();
    if let Some(t) = u.trigger {
        j.key("trigger").lit(t.name());
    }
    end(j);
}

fn packet_lost(
    buf: &mut Vec<u8>,
    now: Instant,
    (ty, pn, path_id): (PacketType, u64, Option<u32>),
    trigger: LossTrigger,
) {
    let mut j = begin(buf, now, "quic:packet_lost");
    j.key("header").begin_obj();
    j.key("packet_type").lit(packet_type_name(ty));
    j.key("packet_number").u64(pn);
    if let Some(path) = path_id {
        packet::write_path_id(&mut j, path);
    }
    j.end_obj();
    j.key("trigger").lit(loss_trigger_name(trigger));
    end(j);
}

/// Discarding a packet number space's keys drops both directions.
/// `quic:version_information` (qlog QUIC events §4.1): versions as hex strings.
fn version_information(
    buf: &mut Vec<u8>,
    now: Instant,
    server: &[u32],
    client: &[u32],
    chosen: Option<u32>,
) {
    let mut j = begin(buf, now, "quic:version_information");
    for (key, list) in [("server_versions", server), ("client_versions", client)] {
        // Lists are `[+ QuicVersion]`: an unknown (client upgraded before it saw the
        // server's list) or empty one is left out.
        if list.is_empty() {
            continue;
        }
        j.key(key).begin_arr();
        for v in list {
            j.hex(&v.to_be_bytes());
        }
        j.end_arr();
    }
    if let Some(v) = chosen {
        j.key("chosen_version").hex(&v.to_be_bytes());
    }
    end(j);
}

fn key_discarded(buf: &mut Vec<u8>, now: Instant, key: KeyType) {
    for side in [Side::Client, Side::Server] {
        let mut j = begin(buf, now, "quic:key_discarded");
        j.key("key_type").lit(key_type_name(side, key));
        if key != KeyType::OneRtt {
            j.key("trigger").lit("tls");
        }
        end(j);
    }
}

fn connection_closed(
    buf: &mut Vec<u8>,
    now: Instant,
    owner: Owner,
    code: TransportErrorCode,
    application: bool,
    reason: &str,
) {
    let mut j = begin(buf, now, "quic:connection_closed");
    j.key("initiator").lit(owner_name(owner));
    if application {
        j.key("application_error").lit("unknown");
        j.key("error_code").u64(code.0);
    } else {
        write_transport_error(&mut j, "connection_error", code.0);
    }
    j.key("reason").str(reason);
    if application {
        j.key("trigger").lit("application");
    } else if code != TransportErrorCode::NO_ERROR {
        j.key("trigger").lit("error");
    }
    end(j);
}

fn write_header(
    buf: &mut Vec<u8>,
    title: &str,
    description: &str,
    vantage: Side,
    odcid: Option<ConnectionId>,
) {
    let mut j = Json::new(buf);
    j.raw(&[RS]).begin_obj();
    j.key("file_schema")
        .lit("urn:ietf:params:qlog:file:sequential");
    j.key("serialization_format")
        .lit("application/qlog+json-seq");
    // Pre-draft fields qvis still requires.
    j.key("qlog_version").lit("0.3");
    j.key("qlog_format").lit("JSON-SEQ");
    j.key("title").str(title);
    j.key("description").str(description);
    j.key("trace").begin_obj();
    j.key("vantage_point").begin_obj();
    let side = side_name(vantage);
    j.key("name").lit(match vantage {
        Side::Client => "quiclab client",
        Side::Server => "quiclab server",
    });
    j.key("type").lit(side);
    j.end_obj();
    j.key("common_fields").begin_obj();
    if let Some(odcid) = odcid {
        j.key("group_id").hex(odcid.as_bytes());
    }
    j.key("protocol_type").begin_arr().lit("QUIC").end_arr();
    j.key("time_format").lit("relative_to_epoch");
    j.key("reference_time").begin_obj();
    j.key("clock_type").lit("monotonic");
    j.key("epoch").lit("unknown");
    j.end_obj();
    j.end_obj();
    j.key("event_schemas")
        .begin_arr()
        .lit(EVENT_SCHEMA)
        .end_arr();
    j.end_obj();
    j.end_obj().raw(b"\n");
}

fn write_params(j: &mut Json<'_>, p: &TransportParameters) {
    let cids = [
        (
            "original_destination_connection_id",
            &p.original_destination_connection_id,
        ),
        (
            "initial_source_connection_id",
            &p.initial_source_connection_id,
        ),
        ("retry_source_connection_id", &p.retry_source_connection_id),
    ];
    for (key, cid) in cids {
        if let Some(cid) = cid {
            j.key(key).hex(cid.as_bytes());
        }
    }
    if let Some(t) = &p.stateless_reset_token {
        j.key("stateless_reset_token").hex(t);
    }
    j.key("disable_active_migration")
        .bool(p.disable_active_migration);
    j.key("max_idle_timeout").u64(p.max_idle_timeout);
    j.key("max_udp_payload_size").u64(p.max_udp_payload_size);
    j.key("ack_delay_exponent").u64(p.ack_delay_exponent);
    j.key("max_ack_delay").u64(p.max_ack_delay);
    j.key("active_connection_id_limit")
        .u64(p.active_connection_id_limit);
    j.key("initial_max_data").u64(p.initial_max_data);
    j.key("initial_max_stream_data_bidi_local")
        .u64(p.initial_max_stream_data_bidi_local);
    j.key("initial_max_stream_data_bidi_remote")
        .u64(p.initial_max_stream_data_bidi_remote);
    j.key("initial_max_stream_data_uni")
        .u64(p.initial_max_stream_data_uni);
    j.key("initial_max_streams_bidi")
        .u64(p.initial_max_streams_bidi);
    j.key("initial_max_streams_uni")
        .u64(p.initial_max_streams_uni);
    if let Some(pa) = &p.preferred_address {
        j.key("preferred_address").begin_obj();
        if let Some((ip, port)) = pa.ipv4 {
            j.key("ip_v4")
                .lit(&std::net::Ipv4Addr::from(ip).to_string());
            j.key("port_v4").u64(u64::from(port));
        }
        if let Some((ip, port)) = pa.ipv6 {
            j.key("ip_v6")
                .lit(&std::net::Ipv6Addr::from(ip).to_string());
            j.key("port_v6").u64(u64::from(port));
        }
        j.key("connection_id").hex(pa.connection_id.as_bytes());
        j.key("stateless_reset_token").hex(&pa.reset_token);
        j.end_obj();
    }
    if let Some(v) = p.max_datagram_frame_size {
        j.key("max_datagram_frame_size").u64(v);
    }
    // draft-ietf-quic-ack-frequency; not in the qlog draft, so an extension field (µs).
    if let Some(v) = p.min_ack_delay {
        j.key("min_ack_delay").u64(v);
    }
}

fn write_metrics(j: &mut Json<'_>, m: &RecoveryMetrics) {
    let rtts = [
        ("min_rtt", m.min_rtt),
        ("smoothed_rtt", m.smoothed_rtt),
        ("latest_rtt", m.latest_rtt),
        ("rtt_variance", m.rtt_variance),
    ];
    for (key, d) in rtts {
        if let Some(d) = d {
            j.key(key).ms(duration_nanos(d));
        }
    }
    if let Some(v) = m.pto_count {
        j.key("pto_count").u64(u64::from(v));
    }
    let counts = [
        ("congestion_window", m.congestion_window),
        ("bytes_in_flight", m.bytes_in_flight),
        ("ssthresh", m.ssthresh),
    ];
    for (key, v) in counts {
        if let Some(v) = v {
            j.key(key).u64(v);
        }
    }
    // qlog: pacing_rate in bits per second; BBR's model as extension fields.
    let rates = [
        ("pacing_rate", m.pacing_rate),
        ("bbr_bw", m.model_bandwidth),
    ];
    for (key, v) in rates {
        if let Some(v) = v {
            j.key(key).u64(v.saturating_mul(8));
        }
    }
    if let Some(d) = m.model_min_rtt {
        j.key("bbr_min_rtt").ms(duration_nanos(d));
    }
    // Prague's (L4S) estimates as extension fields, fractions in [0, 1].
    let fractions = [
        ("prague_alpha", m.ecn_alpha_ppm),
        ("prague_ce_fraction", m.ce_fraction_ppm),
    ];
    for (key, v) in fractions {
        if let Some(v) = v {
            j.key(key).ppm(v);
        }
    }
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Client => "client",
        Side::Server => "server",
    }
}

fn owner_name(o: Owner) -> &'static str {
    match o {
        Owner::Local => "local",
        Owner::Remote => "remote",
    }
}

fn owner_index(o: Owner) -> usize {
    match o {
        Owner::Local => 0,
        Owner::Remote => 1,
    }
}

fn conn_state_name(s: ConnectionState) -> &'static str {
    match s {
        ConnectionState::Attempted => "attempted",
        ConnectionState::HandshakeStarted => "handshake_started",
        ConnectionState::HandshakeComplete => "handshake_complete",
        ConnectionState::HandshakeConfirmed => "handshake_confirmed",
        ConnectionState::Closing => "closing",
        ConnectionState::Draining => "draining",
        ConnectionState::Closed => "closed",
    }
}

fn cc_state_name(s: CongestionState) -> &'static str {
    match s {
        CongestionState::SlowStart => "slow_start",
        CongestionState::CongestionAvoidance => "congestion_avoidance",
        CongestionState::Recovery => "recovery",
        CongestionState::ApplicationLimited => "application_limited",
        CongestionState::BbrStartup => "startup",
        CongestionState::BbrDrain => "drain",
        CongestionState::BbrProbeBwDown => "probe_bw_down",
        CongestionState::BbrProbeBwCruise => "probe_bw_cruise",
        CongestionState::BbrProbeBwRefill => "probe_bw_refill",
        CongestionState::BbrProbeBwUp => "probe_bw_up",
        CongestionState::BbrProbeRtt => "probe_rtt",
    }
}

fn loss_trigger_name(t: LossTrigger) -> &'static str {
    match t {
        LossTrigger::ReorderingThreshold => "reordering_threshold",
        LossTrigger::TimeThreshold => "time_threshold",
        LossTrigger::PtoExpired => "pto_expired",
    }
}

fn drop_reason_name(r: DropReason) -> &'static str {
    match r {
        DropReason::HeaderParseError => "header_parse_error",
        DropReason::UnsupportedVersion => "unsupported_version",
        DropReason::KeyUnavailable => "key_unavailable",
        DropReason::DecryptionFailure => "decryption_failure",
        DropReason::Duplicate => "duplicate",
        DropReason::UnknownConnectionId => "unknown_connection_id",
        DropReason::InvalidInitial => "invalid_initial",
        DropReason::UnexpectedSourceCid => "unexpected_source_connection_id",
        DropReason::Draining => "draining",
        DropReason::Other => "other",
    }
}

/// The draft's `packet_dropped` trigger categories.
fn drop_trigger(r: DropReason) -> &'static str {
    match r {
        DropReason::HeaderParseError
        | DropReason::InvalidInitial
        | DropReason::UnexpectedSourceCid => "invalid",
        DropReason::UnsupportedVersion => "unsupported",
        DropReason::KeyUnavailable => "key_unavailable",
        DropReason::DecryptionFailure => "decryption_failure",
        DropReason::Duplicate => "duplicate",
        DropReason::UnknownConnectionId => "connection_unknown",
        // A closing or draining endpoint is unwilling to process packets.
        DropReason::Draining => "rejected",
        DropReason::Other => "general",
    }
}

/// The draft's `$KeyType` for `side`'s secret at `key`'s level.
fn key_type_name(side: Side, key: KeyType) -> &'static str {
    match (side, key) {
        (Side::Client, KeyType::Initial) => "client_initial_secret",
        (Side::Server, KeyType::Initial) => "server_initial_secret",
        (Side::Client, KeyType::Handshake) => "client_handshake_secret",
        (Side::Server, KeyType::Handshake) => "server_handshake_secret",
        (Side::Client, KeyType::OneRtt) => "client_1rtt_secret",
        (Side::Server, KeyType::OneRtt) => "server_1rtt_secret",
    }
}

#[cfg(test)]
mod tests;
