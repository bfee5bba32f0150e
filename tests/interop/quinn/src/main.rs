//! quinn-hq: an hq-interop (HTTP/0.9 over QUIC) client on quinn 0.11, the third foreign
//! client of quiclab's interop tests (tests/interop/run.sh; issues 32 and 38), built by
//! cargo with the workspace so it is never skipped. It follows the QUIC interop
//! runner's client conventions, as tests/interop/quic-go/ does:
//!
//!   quinn-hq [--testcase CASE] [--out DIR] [--qlog-dir DIR] URL...
//!
//! Defaults come from the runner's environment: TESTCASE, DOWNLOADS (the download
//! directory), REQUESTS (space-separated URLs); SSLKEYLOGFILE, when set, receives the
//! TLS secrets (rustls' KeyLogFile). With --qlog-dir, quinn's qlog (its `qlog`
//! feature) and a copy that quiclab's lab reads (src/qlog.rs; instant-ack-foreign's
//! quinn client); the interop runner reads its evidence from the quiclab server's
//! qlog instead. Certificates are not verified (the runner's clients
//! do the same with its test certificates). Exit status: 0 when every file arrived, 1
//! on any failure, 127 for a test case it does not support (the runner's convention).
//!
//! Test cases: handshake, transfer, multiplexing (every URL on one connection, all
//! streams at once) and multiconnect (the runner's handshakeloss and
//! handshakecorruption: one connection per URL, one after the other).

mod fetch;
mod qlog;
mod tls;
mod url;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use url::Request;

#[derive(Parser, Debug)]
#[command(
    name = "quinn-hq",
    about = "hq-interop client on quinn (interop tests)"
)]
struct Args {
    /// Interop runner test case (default: $TESTCASE, else handshake).
    #[arg(long)]
    testcase: Option<String>,
    /// Download directory (default: $DOWNLOADS, else the current directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write quinn's qlog here (see src/qlog.rs).
    #[arg(long)]
    qlog_dir: Option<PathBuf>,
    /// URLs to GET (default: $REQUESTS, space separated).
    urls: Vec<String>,
}

/// How a test case's URLs are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// All on one connection.
    OneConnection,
    /// One connection per URL, one after the other.
    ConnectionPerUrl,
}

fn plan(testcase: &str) -> Option<Plan> {
    match testcase {
        "handshake" | "transfer" | "multiplexing" => Some(Plan::OneConnection),
        "multiconnect" => Some(Plan::ConnectionPerUrl),
        _ => None,
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let testcase = args
        .testcase
        .or_else(|| env("TESTCASE"))
        .unwrap_or_else(|| "handshake".into());
    let Some(plan) = plan(&testcase) else {
        eprintln!("unsupported test case: {testcase}");
        return ExitCode::from(127);
    };
    let out = args
        .out
        .or_else(|| env("DOWNLOADS").map(PathBuf::from))
        .unwrap_or_else(|| ".".into());
    let mut urls = args.urls;
    if urls.is_empty() {
        urls = env("REQUESTS")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
    }
    let keylog = env("SSLKEYLOGFILE").is_some();
    match run(plan, &urls, &out, keylog, args.qlog_dir.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quinn-hq: client failed: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    plan: Plan,
    urls: &[String],
    out: &std::path::Path,
    keylog: bool,
    qlog_dir: Option<&std::path::Path>,
) -> Result<()> {
    let reqs = urls
        .iter()
        .map(|u| Request::parse(u))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = reqs.first() else {
        bail!("no URLs (arguments or $REQUESTS)")
    };
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let bind = if first.addr()?.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls::client(keylog)?)?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    let qlog = match qlog_dir {
        Some(dir) => {
            let (q, stream) = qlog::Qlog::start(dir)?;
            let mut transport = quinn::TransportConfig::default();
            transport.qlog_stream(Some(stream));
            config.transport_config(Arc::new(transport));
            Some(q)
        }
        None => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let client = fetch::Client::new(config, bind.parse()?, out, qlog.clone())?;
        let result = match plan {
            Plan::OneConnection => client.fetch_all(&reqs).await,
            Plan::ConnectionPerUrl => {
                let mut r = Ok(());
                for req in &reqs {
                    r = client.fetch_all(std::slice::from_ref(req)).await;
                    if r.is_err() {
                        break;
                    }
                }
                r
            }
        };
        client.finish().await;
        result
    })?;
    match qlog {
        Some(q) => q.finish(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_cases_map_to_plans() {
        assert_eq!(plan("transfer"), Some(Plan::OneConnection));
        assert_eq!(plan("handshake"), Some(Plan::OneConnection));
        assert_eq!(plan("multiconnect"), Some(Plan::ConnectionPerUrl));
        assert_eq!(plan("zerortt"), None);
        assert_eq!(plan("connectionmigration"), None);
    }
}
