//! What the fuzz targets in `fuzz/` need from a TCP connection (cargo feature
//! `fuzzing`, not part of the default public API): the sizes of the structures a peer
//! can grow, so a target can assert their bounds after every segment.

use super::TcpConnection;

/// The peer-influenced state of a [`TcpConnection`], in bytes or entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFootprint {
    /// Out-of-order bytes in the reassembly queue, and its entries.
    pub ooo_bytes: u64,
    pub ooo_segments: usize,
    /// Contiguous blocks of that queue (what SACK reports).
    pub ooo_blocks: usize,
    /// In-order bytes the application has not read.
    pub readable: usize,
    /// Bytes written and not yet acknowledged.
    pub send_buffered: u64,
    /// Scoreboard entries (sent segments not yet cumulatively acknowledged).
    pub scoreboard_segments: usize,
    /// SACKed ranges on the scoreboard.
    pub sacked_ranges: usize,
}

impl TcpConnection {
    /// The sizes of what a peer can make this connection hold (see [`TcpFootprint`]).
    pub fn footprint(&self) -> TcpFootprint {
        let (ooo_bytes, ooo_segments, ooo_blocks) = self.rx.ooo_footprint();
        TcpFootprint {
            ooo_bytes,
            ooo_segments,
            ooo_blocks,
            readable: self.rx.readable(),
            send_buffered: self.sb.buffered(),
            scoreboard_segments: self.sb.segs.len(),
            sacked_ranges: self.sb.sacked_ranges(),
        }
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &crate::TcpConfig {
        &self.config
    }
}
