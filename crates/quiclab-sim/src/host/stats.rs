//! A host model's counters, as the run's results show them (`FlowResult::client_host`
//! and `server_host`, and `hosts.csv`).

use serde::Serialize;

/// What one endpoint's host did during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostStats {
    /// Datagrams the CPU processed on receipt (handed to the endpoint).
    pub rx_packets: u64,
    /// Datagrams dropped because `rx_queue_packets` were already waiting.
    pub rx_queue_drops: u64,
    /// Datagrams dropped because `socket_rcvbuf` bytes were already waiting.
    pub socket_drops: u64,
    /// The most datagrams waiting for the CPU at once.
    pub max_rx_waiting: u64,
    /// Datagrams sent, and the sendmsg calls (GSO batches) that carried them.
    pub tx_packets: u64,
    pub tx_batches: u64,
    /// Times the endpoint was not asked for more because `socket_sndbuf` was full.
    pub sndbuf_blocked: u64,
    /// CPU time spent on packets, seconds, and its share of the run.
    pub busy_s: f64,
    pub cpu_utilisation: f64,
    /// Timer wake-ups that slept (a timer in the future), and how late they fired
    /// against the time asked for (granularity plus wake-up latency), µs.
    pub timer_wakes: u64,
    pub timer_late_mean_us: f64,
    pub timer_late_max_us: f64,
    /// Requests whose response the application held for `app_delay_ms`.
    pub app_delayed: u64,
    #[serde(skip)]
    pub(crate) busy_ns: u64,
    #[serde(skip)]
    pub(crate) late_sum_ns: u64,
}

impl HostStats {
    /// The counters with the shares of a run that lasted `end_s`.
    pub fn finished(&self, end_s: f64) -> HostStats {
        let mut s = self.clone();
        s.busy_s = self.busy_ns as f64 / 1e9;
        s.cpu_utilisation = if end_s > 0.0 { s.busy_s / end_s } else { 0.0 };
        if self.timer_wakes > 0 {
            s.timer_late_mean_us = self.late_sum_ns as f64 / 1e3 / self.timer_wakes as f64;
        }
        s
    }
}
