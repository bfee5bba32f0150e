//! Packet events for the sinks without allocations per packet: the frame list of
//! `PacketSent` / `PacketReceived` is a buffer kept in the connection, taken back after
//! the sink has read the event, and frame fields the sink does not read are not built
//! ([`FrameDetail`]). With a metrics sink attached to every connection (the simulator),
//! building and dropping these lists was ~9% of the instructions per datagram.

use super::Connection;
use crate::events::{Event, FrameDetail, FrameSummary, KernelDrops};
use crate::time::Instant;

impl Connection {
    /// Whether an event sink is attached: a driver skips building its own records for
    /// connections nobody logs.
    pub fn has_event_sink(&self) -> bool {
        self.outbox.logging()
    }

    /// Logs a real-UDP driver's socket reading into this connection's trace (qlog
    /// `quiclab:kernel_drops`). The connection never reads sockets itself (the core has
    /// no I/O); this only passes the driver's figures to the sink, at the driver's
    /// `now`. Nothing happens without a sink, and no state of the connection changes.
    pub fn log_kernel_drops(&mut self, now: Instant, reading: KernelDrops) {
        self.outbox.log(now, &Event::KernelDrops(reading));
    }

    /// What the sink reads of packets' frames; `None` without a sink.
    pub(super) fn frame_detail(&self) -> Option<FrameDetail> {
        self.outbox.frame_detail()
    }

    /// An empty frame list to fill for a packet event (the reused buffer).
    pub(super) fn take_frame_list(&mut self) -> Vec<FrameSummary> {
        std::mem::take(&mut self.scratch.frames)
    }

    /// Emits a packet event and keeps its frame list's buffer for the next one.
    pub(super) fn emit_packet(&mut self, now: Instant, event: Event) {
        self.outbox.log(now, &event);
        if let Event::PacketSent { mut frames, .. } | Event::PacketReceived { mut frames, .. } =
            event
        {
            frames.clear();
            self.scratch.frames = frames;
        }
    }
}
