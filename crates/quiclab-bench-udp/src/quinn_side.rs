//! The quinn baseline, on a single-threaded tokio runtime (like quiclab's one-thread
//! loop): a server answering each bidirectional stream's 8-byte length with that
//! many body bytes, and a client fetching over `connections` connections at once.

use crate::{body, tls};
use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;

const ALPN: &[u8] = b"bench";
/// Socket buffer asked for each way (quiclab's default, `quiclab_net::udp::DEFAULT_BUFFER`).
const BUFFER: usize = 8 << 20;

/// Serves until killed.
pub fn server(listen: SocketAddr) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls::server(ALPN)?)?;
        let config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let endpoint = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(config),
            socket(listen)?,
            Arc::new(quinn::TokioRuntime),
        )?;
        eprintln!("quinn server on {listen}");
        while let Some(incoming) = endpoint.accept().await {
            tokio::spawn(async move {
                if let Err(e) = serve(incoming).await {
                    eprintln!("connection: {e:#}");
                }
            });
        }
        Ok(())
    })
}

/// A UDP socket with the socket buffers quiclab asks for by default (8 MiB each
/// way, forced past `rmem_max` when privileged), so both stacks get the same kernel.
fn socket(addr: SocketAddr) -> Result<std::net::UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_send_buffer_size(BUFFER)?;
    s.set_recv_buffer_size(BUFFER)?;
    // Past `rmem_max` only a privileged process gets more; errors keep the capped size.
    for opt in [libc::SO_SNDBUFFORCE, libc::SO_RCVBUFFORCE] {
        use std::os::fd::AsRawFd;
        let half = (BUFFER / 2) as libc::c_int;
        // SAFETY: a valid fd and a c_int option value of the right length.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                std::ptr::from_ref(&half).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    s.bind(&addr.into())?;
    Ok(s.into())
}

async fn serve(incoming: quinn::Incoming) -> Result<()> {
    let conn = incoming.await?;
    loop {
        let (mut send, mut recv) = match conn.accept_bi().await {
            Ok(s) => s,
            Err(quinn::ConnectionError::ApplicationClosed(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let mut len = [0u8; 8];
        recv.read_exact(&mut len).await?;
        let len = u64::from_be_bytes(len);
        let mut buf = vec![0u8; 64 * 1024];
        for (start, n) in body::chunks(len) {
            body::fill(&mut buf[..n], start);
            send.write_all(&buf[..n]).await?;
        }
        send.finish()?;
    }
}

/// Fetches `bytes` on each of `connections` concurrent connections; checks every byte.
pub fn client(server: SocketAddr, connections: usize, bytes: u64) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls::client(ALPN)?)?;
        let config = quinn::ClientConfig::new(Arc::new(crypto));
        let mut endpoint = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            None,
            socket("127.0.0.1:0".parse()?)?,
            Arc::new(quinn::TokioRuntime),
        )?;
        endpoint.set_default_client_config(config);
        let tasks: Vec<_> = (0..connections)
            .map(|_| {
                let ep = endpoint.clone();
                tokio::spawn(async move { fetch(&ep, server, bytes).await })
            })
            .collect();
        let mut failures = 0;
        for t in tasks {
            if let Err(e) = t.await? {
                eprintln!("FAILED: {e:#}");
                failures += 1;
            }
        }
        endpoint.wait_idle().await;
        if failures > 0 {
            bail!("{failures} failure(s)");
        }
        Ok(())
    })
}

async fn fetch(endpoint: &quinn::Endpoint, server: SocketAddr, bytes: u64) -> Result<()> {
    let conn = endpoint
        .connect(server, "localhost")?
        .await
        .context("handshake")?;
    let (mut send, mut recv) = conn.open_bi().await?;
    send.write_all(&bytes.to_be_bytes()).await?;
    send.finish()?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    while let Some(n) = recv.read(&mut buf).await? {
        body::check(&buf[..n], got).map_err(|at| anyhow!("wrong byte at {at}"))?;
        got += n as u64;
    }
    if got != bytes {
        bail!("body of {got} bytes, expected {bytes}");
    }
    conn.close(0u32.into(), b"done");
    Ok(())
}
