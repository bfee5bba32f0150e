//! Streams and flow control (RFC 9000 §2-4): per-stream send and receive buffers,
//! stream limits, connection- and stream-level flow control with receive-window
//! auto-tuning, and the stream-related frames.
//!
//! The connection feeds stream frames in ([`Streams::on_frame`]), asks for frames to send
//! ([`Streams::write_frames`]), and reports what each sent packet carried as acknowledged
//! or lost ([`Streams::on_acked`], [`Streams::on_lost`]).

mod flow;
mod recv;
mod sched;
mod send;
mod send_buf;
mod state;
#[cfg(test)]
mod tests;

pub use send_buf::SendData;
pub use state::{ReadOutcome, StreamError, StreamEvent, StreamFrameRecord, StreamParams, Streams};
