//! `[endpoints]`: a plan's points run with real QUIC stacks, through the real-time
//! emulator, instead of inside the simulator. The same plan (scenario, axes, `[set]`,
//! metrics, findings) then runs in both places. quiclab's own server, client and
//! emulator (a stack or emulator left at its default) run in-process through
//! quiclab-net, doing what the `DEFAULT_*` commands below would do; commands a plan
//! writes run as processes.
//!
//! ```toml
//! [endpoints]
//! axis = "stack"                       # a text axis: "sim" = the simulator, else a stack
//! [endpoints.stacks.quiclab]           # quiclab's own client and server (the defaults)
//! [endpoints.stacks.aioquic]
//! client = "{python} {repo}/tests/interop/aioquic_client.py --output {out_dir}/body --qlog-dir {qlog_dir} {url}"
//! requires = "{python} -c 'import aioquic'"
//! ```
//!
//! A template is split at whitespace into the program and its arguments (single quotes
//! group words; no shell), then each `{placeholder}` is replaced by its value, so a
//! value with spaces stays one argument. Placeholders ([`PLACEHOLDERS`]) are checked
//! when the plan loads: an unknown one is an error naming the key.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The axis value that runs a point in the simulator.
pub const SIM: &str = "sim";

/// quiclab's own server: the run's `[server]` transport config, its certificate
/// padding, a qlog per connection. Left at the default it runs in-process (the lab's
/// `run/real/inproc.rs`); this command is what that run is equivalent to.
pub const DEFAULT_SERVER: &str = "{quiclab} server --listen {server_addr} --root {root} \
     --config {server_config} --cert-padding {cert_padding} --qlog-dir {server_qlog_dir}";

/// quiclab's own client: one hq-interop GET of the flow's response size, the run's
/// `[client]` transport config, its qlog in `{qlog_dir}` (in-process by default, as
/// the server).
pub const DEFAULT_CLIENT: &str = "{quiclab} client {url} --insecure --alpn hq-interop \
     --check --config {client_config} --qlog-dir {qlog_dir}";

/// The emulator between them: the run's resolved scenario, applied in real time; its
/// links.csv, emulate.json and a pcap of both sides (with the key log) go to
/// `{out_dir}/emulator` (in-process by default, as the server).
pub const DEFAULT_EMULATOR: &str = "{quiclab} emulate {scenario} --listen {listen_addr} \
     --upstream {server_addr} --out {out_dir}/emulator --pcap --keylog {keylog}";

/// `emulator = "none"`.
pub const NO_EMULATOR: &str = "none";

/// `emulator = "shell"`: no UDP relay; the client command runs inside `quiclab shell`
/// on the run's scenario (`{quiclab} shell {scenario} --out {out_dir}/emulator --
/// CLIENT...`), so any IP traffic (TCP too) crosses the scenario's links to a server
/// on the host, reached from inside at `$QUICLAB_SHELL_BASE` on `{server_port}`.
/// Needs root, as `quiclab shell` does.
pub const SHELL_EMULATOR: &str = "shell";

/// Every placeholder a template may use, with what it becomes.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    ("quiclab", "the quiclab binary running the plan"),
    (
        "python",
        "$PYTHON, else <repo>/.venv/bin/python if present, else python3",
    ),
    (
        "repo",
        "the repository root (nearest ancestor of the plan with Cargo.toml)",
    ),
    ("plan_dir", "the plan file's directory"),
    (
        "url",
        "https://127.0.0.1:<port>/<size>: the flow's GET, through the emulator",
    ),
    ("host", "127.0.0.1"),
    (
        "port",
        "the emulator's listening port (where the client connects)",
    ),
    ("listen_addr", "127.0.0.1:<port>"),
    ("server_port", "the server's own port"),
    ("server_addr", "127.0.0.1:<server_port>"),
    (
        "size",
        "the flow's response size in bytes (`flows[0].workload.size`)",
    ),
    ("out_dir", "this run's working directory"),
    (
        "qlog_dir",
        "the client's qlog directory (metrics are read from here)",
    ),
    ("server_qlog_dir", "the server's qlog directory"),
    (
        "keylog",
        "a TLS key log file for this run (also $SSLKEYLOGFILE)",
    ),
    (
        "cert",
        "a PEM certificate for localhost/127.0.0.1 written for this run",
    ),
    ("key", "its PEM private key"),
    ("root", "the directory the server serves"),
    ("scenario", "the run's resolved scenario file (TOML)"),
    (
        "server_config",
        "the scenario's `[server]` transport table as a TOML file",
    ),
    (
        "client_config",
        "the scenario's `[client]` transport table as a TOML file",
    ),
    (
        "cert_padding",
        "the scenario's `certificate_padding` (0 if unset)",
    ),
];

/// `[endpoints]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Endpoints {
    /// A text axis whose value names each point's stack ("sim" = the simulator).
    /// Without it the plan must name exactly one stack, used at every point.
    pub axis: Option<String>,
    /// The stacks, by name.
    pub stacks: BTreeMap<String, Stack>,
    /// The emulator's command (default: quiclab's emulator in-process, as
    /// [`DEFAULT_EMULATOR`]); `"none"` runs without
    /// one: the client connects to the server directly over loopback (no link model;
    /// for checking a stack's commands, not for measurements of the scenario);
    /// `"shell"` runs the client command inside `quiclab shell` on the scenario's
    /// links ([`SHELL_EMULATOR`]: for stacks that are not UDP, e.g. Linux TCP).
    pub emulator: Option<String>,
    /// Wall-clock limit of one run's client, seconds (default 60).
    pub timeout_s: Option<f64>,
    /// Run the server and client (processes or in-process threads) in the real-time
    /// FIFO class where permitted (default true; `run/real/process.rs` says why);
    /// `false` leaves them in the normal class.
    pub realtime: Option<bool>,
}

/// One stack: its client and server commands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// The client command (default: quiclab's client in-process, as
    /// [`DEFAULT_CLIENT`]). It must exit 0 after the GET,
    /// having written one qlog file into `{qlog_dir}`, or none: then only its first
    /// ClientHello retransmission is measured, from the emulator's capture
    /// (`run/real/pcap.rs`).
    pub client: Option<String>,
    /// The server command (default: quiclab's server in-process, as
    /// [`DEFAULT_SERVER`]); it runs until the lab stops it (SIGTERM).
    pub server: Option<String>,
    /// A command that exits 0 when the stack can run here (e.g. its package is
    /// installed); otherwise the stack is "not available" and its runs are not made.
    pub requires: Option<String>,
    /// At most this many repetitions of each of this stack's points (default: the
    /// plan's, full or quick): for a client that is slow to start (a browser). Not
    /// part of run keys, so existing runs keep theirs.
    pub repetitions: Option<u32>,
}

impl Stack {
    pub fn client_template(&self) -> &str {
        self.client.as_deref().unwrap_or(DEFAULT_CLIENT)
    }

    pub fn server_template(&self) -> &str {
        self.server.as_deref().unwrap_or(DEFAULT_SERVER)
    }
}

impl Endpoints {
    pub fn emulator_template(&self) -> &str {
        self.emulator.as_deref().unwrap_or(DEFAULT_EMULATOR)
    }

    /// `emulator = "none"`: no relay between client and server.
    pub fn direct(&self) -> bool {
        self.emulator.as_deref() == Some(NO_EMULATOR)
    }

    /// `emulator = "shell"`: the client runs inside `quiclab shell` ([`SHELL_EMULATOR`]).
    pub fn via_shell(&self) -> bool {
        self.emulator.as_deref() == Some(SHELL_EMULATOR)
    }

    /// The stack a point with `params` runs with: `None` = the simulator.
    pub fn stack_of<'a>(
        &'a self,
        params: &BTreeMap<String, super::AxisValue>,
    ) -> Option<(&'a str, &'a Stack)> {
        let name = match &self.axis {
            Some(axis) => match params.get(axis) {
                Some(super::AxisValue::Text(v)) if v != SIM => v.as_str(),
                _ => return None,
            },
            None => self.stacks.keys().next()?.as_str(),
        };
        self.stacks
            .get_key_value(name)
            .map(|(k, s)| (k.as_str(), s))
    }

    /// Every (key, template) pair of the section, for checks.
    pub fn templates(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        if !self.direct() && !self.via_shell() {
            out.push(("endpoints.emulator".to_string(), self.emulator_template()));
        }
        for (name, s) in &self.stacks {
            let k = format!("endpoints.stacks.{name}");
            out.push((format!("{k}.client"), s.client_template()));
            out.push((format!("{k}.server"), s.server_template()));
            if let Some(r) = &s.requires {
                out.push((format!("{k}.requires"), r.as_str()));
            }
        }
        out
    }
}

/// A template's words (single quotes group words and are removed); `Err` for an
/// unterminated quote or an empty template.
pub fn split_words(template: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in template.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if quoted {
        return Err("unterminated ' quote".into());
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

/// The `{name}` placeholders of `word`, in order; `Err` for an unclosed brace.
pub fn placeholders(word: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = word;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let j = after
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in `{word}`"))?;
        out.push(&after[..j]);
        rest = &after[j + 1..];
    }
    Ok(out)
}

/// Checks a template: it splits into words and names only known placeholders.
pub fn check_template(template: &str) -> Result<(), String> {
    for word in split_words(template)? {
        for p in placeholders(&word)? {
            if !PLACEHOLDERS.iter().any(|(k, _)| *k == p) {
                let known: Vec<&str> = PLACEHOLDERS.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "unknown placeholder `{{{p}}}`; known: {}",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_placeholders() {
        let w = split_words("{python} -c 'import aioquic'  x").unwrap();
        assert_eq!(w, vec!["{python}", "-c", "import aioquic", "x"]);
        assert_eq!(placeholders("a{b}c{d}").unwrap(), vec!["b", "d"]);
        assert!(split_words("a 'b").is_err());
        assert!(split_words("   ").is_err());
        assert!(placeholders("{oops").is_err());
        for t in [DEFAULT_CLIENT, DEFAULT_SERVER, DEFAULT_EMULATOR] {
            check_template(t).unwrap();
        }
        let e = check_template("{quiclab} client {uri}").unwrap_err();
        assert!(e.contains("`{uri}`"), "{e}");
    }
}
