//! One real run's working directory and the values of the template placeholders
//! ([`crate::plan::endpoints::PLACEHOLDERS`]): the resolved scenario, the `[server]`
//! and `[client]` transport tables as config files (with `flows[0]`'s per-flow tables
//! merged over them, as the simulator merges them), a served directory, a certificate,
//! fresh loopback ports.

use crate::plan::endpoints::{placeholders, split_words};
use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};

/// The placeholder values of one run.
pub type Values = BTreeMap<&'static str, String>;

/// What the run's scenario asks of the real endpoints.
pub struct Workload {
    /// Bytes of the GET's response.
    pub size: u64,
}

/// A free UDP port on 127.0.0.1 (bound and released: runs are sequential, so nothing
/// else of ours takes it meanwhile).
fn free_port() -> Result<u16, String> {
    let s = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("no free UDP port: {e}"))?;
    s.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// `over` merged into `base`, tables recursively (the simulator's per-flow rule).
fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The transport table of `side` ("client" | "server") for flow 0.
fn side_table(scenario: &toml::Table, side: &str) -> toml::Table {
    let mut t = scenario
        .get(side)
        .and_then(toml::Value::as_table)
        .cloned()
        .unwrap_or_default();
    let flow = scenario
        .get("flows")
        .and_then(toml::Value::as_array)
        .and_then(|f| f.first())
        .and_then(|f| f.get(side))
        .and_then(toml::Value::as_table);
    if let Some(f) = flow {
        merge(&mut t, f);
    }
    as_simulated(&mut t);
    // The host table is the simulator's model of an end host (quiclab-sim's
    // `host`); a real endpoint is a real host, and its config file takes transport
    // keys only.
    t.remove("host");
    t
}

/// Turns off, unless the scenario sets them, the real driver's own defaults that the
/// simulator does not have (PMTU discovery, the not-sent limit; 0 = off), so the
/// processes send what the simulated endpoints send.
fn as_simulated(t: &mut toml::Table) {
    t.entry("pmtud_max_udp_payload_size")
        .or_insert(toml::Value::Integer(0));
    if let Some(flow) = t
        .entry("flow")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
    {
        flow.entry("notsent_lowat")
            .or_insert(toml::Value::Integer(0));
    }
}

/// Flow 0's workload, which must be one GET (`kind = "request"`): the real clients
/// download; uploads and pages are not run on real stacks.
pub fn workload(scenario: &toml::Table) -> Result<Workload, String> {
    let flows = scenario.get("flows").and_then(toml::Value::as_array);
    let w = flows
        .and_then(|f| f.first())
        .and_then(|f| f.get("workload"))
        .ok_or("the scenario has no flows[0].workload")?;
    let kind = w.get("kind").and_then(toml::Value::as_str).unwrap_or("");
    if kind != "request" {
        return Err(format!(
            "flows[0].workload.kind = {kind:?}: real stacks run one GET (\"request\")"
        ));
    }
    if flows.is_some_and(|f| f.len() > 1) {
        return Err("real stacks run one flow; the scenario has several".into());
    }
    let size = w
        .get("size")
        .and_then(toml::Value::as_integer)
        .and_then(|s| u64::try_from(s).ok())
        .ok_or("flows[0].workload.size is not a byte count")?;
    Ok(Workload { size })
}

/// The scenario as the emulator reads it: its links, without the simulator's host
/// tables (the real processes are the hosts; a profile path relative to the plan's
/// directory would not resolve from the run directory).
fn without_hosts(scenario: &toml::Table) -> Result<String, String> {
    let mut s = scenario.clone();
    for side in ["client", "server"] {
        if let Some(t) = s.get_mut(side).and_then(toml::Value::as_table_mut) {
            t.remove("host");
        }
    }
    if let Some(flows) = s.get_mut("flows").and_then(toml::Value::as_array_mut) {
        for f in flows.iter_mut().filter_map(toml::Value::as_table_mut) {
            for side in ["client", "server"] {
                if let Some(t) = f.get_mut(side).and_then(toml::Value::as_table_mut) {
                    t.remove("host");
                }
            }
        }
    }
    toml::to_string(&s).map_err(|e| e.to_string())
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<String, String> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

fn mkdir(path: &Path) -> Result<String, String> {
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

/// Creates `dir` afresh with the run's files and returns the placeholder values.
/// `fixed` holds the run-independent ones (quiclab, python, repo, plan_dir); `direct`:
/// no emulator, the client's port is the server's.
pub fn prepare(
    dir: &Path,
    scenario_toml: &str,
    fixed: &Values,
    direct: bool,
) -> Result<Values, String> {
    let _ = std::fs::remove_dir_all(dir);
    mkdir(dir)?;
    let scenario: toml::Table = toml::from_str(scenario_toml).map_err(|e| e.to_string())?;
    let w = workload(&scenario)?;
    let table_text = |t: toml::Table| toml::to_string(&t).map_err(|e| e.to_string());
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(|e| format!("certificate: {e}"))?;
    let server_port = free_port()?;
    let port = if direct { server_port } else { free_port()? };
    let mut v = fixed.clone();
    let padding = scenario
        .get("certificate_padding")
        .and_then(toml::Value::as_integer)
        .unwrap_or(0);
    v.insert("host", "127.0.0.1".into());
    v.insert("port", port.to_string());
    v.insert("listen_addr", format!("127.0.0.1:{port}"));
    v.insert("server_port", server_port.to_string());
    v.insert("server_addr", format!("127.0.0.1:{server_port}"));
    v.insert("size", w.size.to_string());
    v.insert("url", format!("https://127.0.0.1:{port}/{}", w.size));
    v.insert("out_dir", dir.display().to_string());
    v.insert("qlog_dir", mkdir(&dir.join("qlog-client"))?);
    v.insert("server_qlog_dir", mkdir(&dir.join("qlog-server"))?);
    v.insert("root", mkdir(&dir.join("root"))?);
    v.insert("keylog", dir.join("keylog.txt").display().to_string());
    v.insert("cert", write(&dir.join("cert.pem"), certified.cert.pem())?);
    v.insert(
        "key",
        write(&dir.join("key.pem"), certified.key_pair.serialize_pem())?,
    );
    v.insert(
        "scenario",
        write(&dir.join("scenario.toml"), without_hosts(&scenario)?)?,
    );
    let server = table_text(side_table(&scenario, "server"))?;
    v.insert("server_config", write(&dir.join("server.toml"), server)?);
    let client = table_text(side_table(&scenario, "client"))?;
    v.insert("client_config", write(&dir.join("client.toml"), client)?);
    v.insert("cert_padding", padding.to_string());
    Ok(v)
}

/// A template's argv with every placeholder replaced (templates were checked when
/// the plan loaded; a value missing here is an error, not an empty string).
pub fn expand(template: &str, values: &Values) -> Result<Vec<String>, String> {
    let mut argv = Vec::new();
    for word in split_words(template)? {
        let mut w = word.clone();
        for p in placeholders(&word)? {
            let value = values
                .get(p)
                .ok_or_else(|| format!("no value for `{{{p}}}` in `{template}`"))?;
            w = w.replace(&format!("{{{p}}}"), value);
        }
        argv.push(w);
    }
    Ok(argv)
}

/// The run-independent placeholder values (`{quiclab}` only when there is a binary).
pub fn fixed_values(quiclab: Option<&Path>, plan_dir: &Path, repo: Option<&Path>) -> Values {
    let mut v = Values::new();
    if let Some(q) = quiclab {
        v.insert("quiclab", q.display().to_string());
    }
    v.insert("plan_dir", plan_dir.display().to_string());
    let repo_text = repo.map_or_else(
        || plan_dir.display().to_string(),
        |r| r.display().to_string(),
    );
    v.insert("repo", repo_text);
    v.insert(
        "python",
        super::available::python(repo).display().to_string(),
    );
    v
}

/// Where a run's files go: `<results>/real/<key>` next to the cache.
pub fn run_dir(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir
        .parent()
        .unwrap_or(cache_dir)
        .join("real")
        .join(key)
}
