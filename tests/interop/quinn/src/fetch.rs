//! hq-interop fetches on quinn: "GET /path\r\n" on a new bidirectional stream, the
//! stream's data up to its FIN is the file (what the interop runner's clients do).

use crate::qlog::{Qlog, Read};
use crate::url::Request;
use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tokio::task::JoinSet;

/// A quinn endpoint that saves each response to `out/<file name>`.
pub struct Client {
    endpoint: quinn::Endpoint,
    out: PathBuf,
    /// With --qlog-dir: where each response read is recorded.
    qlog: Option<Qlog>,
}

impl Client {
    /// An endpoint on an ephemeral port of `bind` using `config` for every connection.
    pub fn new(
        config: quinn::ClientConfig,
        bind: SocketAddr,
        out: &Path,
        qlog: Option<Qlog>,
    ) -> Result<Client> {
        let mut endpoint = quinn::Endpoint::client(bind).context("binding the UDP socket")?;
        endpoint.set_default_client_config(config);
        Ok(Client {
            endpoint,
            out: out.to_path_buf(),
            qlog,
        })
    }

    /// GETs every request on one new connection (to the first request's HOST:PORT), all
    /// streams at once, then closes it. Fails when any request fails.
    pub async fn fetch_all(&self, reqs: &[Request]) -> Result<()> {
        let first = reqs.first().ok_or_else(|| anyhow!("no URLs"))?;
        let conn = self
            .endpoint
            .connect(first.addr()?, &first.host)?
            .await
            .context("handshake")?;
        let mut gets = JoinSet::new();
        for r in reqs {
            let name = r
                .file_name()
                .ok_or_else(|| anyhow!("{}: no file name", r.path))?;
            let file = self.out.join(name);
            gets.spawn(get(conn.clone(), r.path.clone(), file, self.qlog.clone()));
        }
        let mut errors = Vec::new();
        while let Some(joined) = gets.join_next().await {
            match joined {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(format!("{e:#}")),
                Err(e) => errors.push(format!("request task: {e}")),
            }
        }
        let s = conn.stats();
        eprintln!(
            "quinn-hq: connection to {}: rtt {:?}, {} packets sent, {} lost, {} congestion events",
            conn.remote_address(),
            s.path.rtt,
            s.path.sent_packets,
            s.path.lost_packets,
            s.path.congestion_events
        );
        conn.close(0u32.into(), b"");
        if !errors.is_empty() {
            bail!("{}", errors.join("; "));
        }
        Ok(())
    }

    /// Waits until every connection's CONNECTION_CLOSE went out (or timed out), so a
    /// server sees the close instead of waiting for its idle timeout.
    pub async fn finish(self) {
        self.endpoint.wait_idle().await;
    }
}

/// One request: sends "GET path\r\n", closes the send side, writes the body to `file`;
/// each chunk read (and the FIN) is recorded in `qlog` when there is one.
async fn get(
    conn: quinn::Connection,
    path: String,
    file: PathBuf,
    qlog: Option<Qlog>,
) -> Result<()> {
    let (mut send, mut recv) = conn.open_bi().await.context("opening a stream")?;
    send.write_all(format!("GET {path}\r\n").as_bytes())
        .await
        .with_context(|| format!("{path}: sending the request"))?;
    send.finish()?;
    let id = quinn::VarInt::from(recv.id()).into_inner();
    let mut body = Vec::new();
    loop {
        let chunk = recv
            .read_chunk(usize::MAX, true)
            .await
            .with_context(|| format!("{path}: reading the response"))?;
        let at = std::time::Instant::now();
        let (offset, len, fin) = match &chunk {
            Some(c) => (c.offset, c.bytes.len() as u64, false),
            None => (body.len() as u64, 0, true),
        };
        if let Some(q) = &qlog {
            q.read(
                id,
                Read {
                    at,
                    offset,
                    len,
                    fin,
                },
            );
        }
        match chunk {
            Some(c) => body.extend_from_slice(&c.bytes),
            None => break,
        }
    }
    std::fs::write(&file, body).with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}
