//! Running a point with real stacks (`[endpoints]`, see [`crate::plan::endpoints`]):
//! the server, then the emulator with the run's resolved scenario between a listening
//! port and the server, then the client. quiclab's own server, client and emulator (the
//! default templates) run in-process on threads of the lab through `quiclab-net`
//! ([`inproc`]); other stacks' commands run as processes ([`process`]). The client's
//! qlog gives
//! the flow's times ([`qlog`]), written as a result with the simulator's paths
//! (`flows[0].handshake_done_s`, `ttfb_s`, `ttlb_s`, `client_first_sample_pto_ms`,
//! plus `client_first_retransmit_ms`), so `[metrics]`, `[expected]` and findings read
//! both kinds of run alike. A client that writes no qlog gets only
//! `client_first_retransmit_ms`, from the emulator's capture ([`pcap`]). The emulator's
//! links, when it wrote them, are the result's `links` ([`links`]).
//!
//! Real runs are in wall-clock time on loopback: not deterministic (scheduling, the
//! emulator's timer accuracy, the stacks' own delays), so plans give them repetitions
//! and read medians and confidence intervals. They run one at a time (ports, and the
//! 2-core machine's timing), after the simulated runs. Each run's files stay in
//! `<results>/real/<key>/` (qlogs, the configs, the emulator's files, each process's
//! output).

pub mod available;
pub mod inproc;
pub mod links;
pub mod pcap;
pub mod process;
pub mod qlog;
pub mod times;
pub mod workdir;

use crate::error::LabError;
use crate::plan::endpoints::{Endpoints, Stack};
use crate::plan::expand::RunSpec;
use crate::run::cache::entry_bytes;
use process::{spawn, Proc, Sched};
use std::path::Path;
use std::time::Duration;
use workdir::{expand, Values};

/// How long a server or the emulator may take to come up.
const START_LIMIT: Duration = Duration::from_secs(5);
/// Default limit of one client run.
const CLIENT_LIMIT_S: f64 = 60.0;

/// Checks that every stack of `specs` can run here (the quiclab binary where a
/// template starts it; each stack's `requires`), before any run starts; returns the
/// run-independent placeholder values. quiclab's own server, client and emulator (the
/// default templates) run in-process and need no binary.
pub fn check_stacks(
    endpoints: &Endpoints,
    specs: &[&RunSpec],
    plan_dir: &Path,
) -> Result<Values, LabError> {
    let mut names: Vec<&str> = specs.iter().filter_map(|s| s.stack.as_deref()).collect();
    names.sort_unstable();
    names.dedup();
    let Some(first) = names.first() else {
        return Ok(Values::new());
    };
    let repo = available::repo_root(plan_dir);
    let binary = available::quiclab_binary(first).ok();
    let fixed = workdir::fixed_values(binary.as_deref(), plan_dir, repo.as_deref());
    let starts_quiclab = |t: &str| t.contains("{quiclab}");
    let emulator = endpoints
        .emulator
        .as_deref()
        .filter(|_| !endpoints.direct());
    // The shell is `{quiclab} shell`: it needs the binary as a command does.
    if binary.is_none() && (endpoints.via_shell() || emulator.is_some_and(starts_quiclab)) {
        available::quiclab_binary(first)?;
    }
    for name in names {
        let Some(stack) = endpoints.stacks.get(name) else {
            continue;
        };
        let commands = [&stack.client, &stack.server, &stack.requires];
        if binary.is_none()
            && commands
                .iter()
                .filter_map(|c| c.as_deref())
                .any(starts_quiclab)
        {
            available::quiclab_binary(name)?;
        }
        if let Some(req) = stack.requires.as_deref() {
            let argv = expand(req, &fixed).map_err(|why| LabError::Unavailable {
                stack: name.to_string(),
                why,
            })?;
            available::check_requires(name, &argv)?;
        }
    }
    Ok(fixed)
}

/// Runs one real run and returns its cache entry's bytes.
pub fn run_real(
    spec: &RunSpec,
    endpoints: &Endpoints,
    fixed: &Values,
    cache_dir: &Path,
    label: &str,
) -> Result<Vec<u8>, LabError> {
    let fail = |why: String| LabError::Run {
        label: label.to_string(),
        why,
    };
    let name = spec.stack.as_deref().unwrap_or_default();
    let stack = endpoints
        .stacks
        .get(name)
        .ok_or_else(|| fail(format!("no stack `{name}` in [endpoints]")))?;
    let dir = workdir::run_dir(cache_dir, &spec.key);
    let direct = endpoints.direct() || endpoints.via_shell();
    let values = workdir::prepare(&dir, &spec.scenario_toml, fixed, direct).map_err(&fail)?;
    let limit = Duration::from_secs_f64(endpoints.timeout_s.unwrap_or(CLIENT_LIMIT_S));
    let relay = match endpoints.emulator.as_deref() {
        _ if endpoints.via_shell() => Relay::Shell,
        _ if direct => Relay::Direct,
        None => Relay::Builtin,
        Some(t) => Relay::Command(t),
    };
    let sched = if endpoints.realtime.unwrap_or(true) {
        Sched::Fifo
    } else {
        Sched::Inherit
    };
    let run = (limit, sched, spec.seed);
    let (server_sched, client_sched) =
        run_processes(stack, relay, &values, &dir, run).map_err(&fail)?;
    let times = client_times(&values, &dir).map_err(&fail)?;
    let mut result = real_result(name, &dir, (server_sched, client_sched), &times);
    if let Some(l) = links::emulator_links(&dir).map_err(&fail)? {
        result["links"] = l;
    }
    entry_bytes(&spec.key, spec.seed, spec.rep, &spec.params, &result)
}

/// A real run's result: the client's times under the simulator's paths, and how the
/// processes ran (their directory and scheduling class, server's first).
fn real_result(
    name: &str,
    dir: &Path,
    (server_sched, client_sched): (&str, &str),
    times: &qlog::ClientTimes,
) -> serde_json::Value {
    serde_json::json!({
        "real": {
            "stack": name,
            "dir": dir.display().to_string(),
            "server_sched": server_sched,
            "client_sched": client_sched,
        },
        "flows": [{
            "name": "get",
            "workload": "request",
            "start_s": 0.0,
            "handshake_done_s": times.handshake_done_s,
            "ttfb_s": times.ttfb_s,
            "ttlb_s": times.ttlb_s,
            "goodput_bytes": times.response_bytes,
            "client_first_sample_pto_ms": times.first_sample_pto_ms,
            "client_first_retransmit_ms": times.first_retransmit_ms,
        }],
    })
}

/// A real run's result with every field it always has (for
/// [`crate::run::complete`]).
pub(crate) fn result_template() -> serde_json::Value {
    real_result("", Path::new(""), ("", ""), &qlog::ClientTimes::default())
}

/// The client's times: from `{out_dir}/times.json` when the client wrote one (a
/// client that is not QUIC, [`times`]), else from its qlog, or, when it wrote none, its
/// first retransmission from the emulator's capture ([`pcap`]; the other times stay
/// empty). A qlog whose sent packets list no frames (quinn's) cannot show a
/// retransmitted ClientHello: that one time comes from the capture too.
fn client_times(values: &Values, dir: &Path) -> Result<qlog::ClientTimes, String> {
    if let Some(t) = times::read(dir)? {
        return Ok(t);
    }
    let qlog_dir = Path::new(&values["qlog_dir"]);
    if let Some(p) = qlog::find_qlog(qlog_dir)? {
        let mut times = qlog::client_times(&qlog::read_events(&p)?)?;
        if !times.sent_frames_logged {
            times.first_retransmit_ms = capture_retransmit(qlog_dir, dir)?;
        }
        return Ok(times);
    }
    Ok(qlog::ClientTimes {
        first_retransmit_ms: capture_retransmit(qlog_dir, dir)?,
        ..qlog::ClientTimes::default()
    })
}

/// The client's first ClientHello retransmission in the emulator's capture.
fn capture_retransmit(qlog_dir: &Path, dir: &Path) -> Result<Option<f64>, String> {
    let capture = dir.join("emulator/pcap/all.pcap");
    if !capture.is_file() {
        return Err(format!(
            "{}: the client wrote no qlog file (or one listing no frames), and there is no \
             capture at {} (the default emulator writes it) to read its retransmissions from",
            qlog_dir.display(),
            capture.display()
        ));
    }
    pcap::first_retransmit_in(&capture)
}

/// What sits between the client and the server.
enum Relay<'a> {
    /// `emulator = "none"`: nothing.
    Direct,
    /// The default: quiclab's emulator, in-process ([`inproc::start_emulator`]).
    Builtin,
    /// A command's process.
    Command(&'a str),
    /// `emulator = "shell"`: none; the client runs inside `quiclab shell`.
    Shell,
}

/// A server or emulator of a run: quiclab's own on a thread of the lab, or a process.
enum Running {
    Thread(inproc::Thread),
    Proc(Proc),
}

impl Running {
    fn sched(&self) -> &'static str {
        match self {
            Running::Thread(t) => t.sched(),
            Running::Proc(p) => p.sched(),
        }
    }

    /// Stops it; an in-process one's error (a process's exit status is not judged).
    fn stop(&mut self) -> Result<(), String> {
        match self {
            Running::Thread(t) => t.stop(),
            Running::Proc(p) => {
                p.stop();
                Ok(())
            }
        }
    }

    /// The last lines of its stderr or notes, for error messages.
    fn tail(&self) -> String {
        match self {
            Running::Thread(t) => t.notes_tail(),
            Running::Proc(p) => p.stderr_tail(),
        }
    }
}

/// The client's seed when the server's is `seed` (two endpoints, two random streams).
const CLIENT_SEED: u64 = 0x636c_6965_6e74;

/// Server, emulator, client: quiclab's own (default templates) in-process, other
/// stacks' commands as processes; the client must succeed within `limit`. Returns the
/// server's and the client's scheduling class.
fn run_processes(
    stack: &Stack,
    relay: Relay<'_>,
    values: &Values,
    dir: &Path,
    (limit, sched, seed): (Duration, Sched, u64),
) -> Result<(&'static str, &'static str), String> {
    let keylog = Path::new(&values["keylog"]);
    let env = [("SSLKEYLOGFILE", keylog)];
    let start = |name: &str, template: &str, sched: Sched| -> Result<Running, String> {
        let mut p = spawn(name, &expand(template, values)?, dir, &env, sched)?;
        p.wait_started(START_LIMIT)?;
        Ok(Running::Proc(p))
    };
    let mut server = match &stack.server {
        None => Running::Thread(inproc::start_server(values, seed, sched, START_LIMIT)?),
        Some(t) => start("server", t, sched)?,
    };
    let mut emu = match relay {
        Relay::Direct | Relay::Shell => None,
        Relay::Builtin => Some(Running::Thread(inproc::start_emulator(
            values,
            START_LIMIT,
        )?)),
        // The emulator raises its own priority (above the endpoints').
        Relay::Command(t) => Some(start("emulator", t, Sched::Inherit)?),
    };
    let shell = matches!(relay, Relay::Shell);
    let client = match &stack.client {
        None if shell => {
            Err("emulator = \"shell\" runs a client command; the stack has none".into())
        }
        None => inproc::run_client(values, seed ^ CLIENT_SEED, sched, limit).map(|(_, c)| c),
        Some(t) => run_client_process(t, values, dir, &env, (limit, sched, shell)),
    };
    let emu_stopped = emu.as_mut().map_or(Ok(()), Running::stop);
    let server_stopped = server.stop();
    let client_sched = client.map_err(|e| {
        format!(
            "{e} (server: {}; emulator: {})",
            server.tail(),
            emu.as_ref().map(Running::tail).unwrap_or_default()
        )
    })?;
    emu_stopped?;
    server_stopped?;
    Ok((server.sched(), client_sched))
}

/// A stack's client command as a process, which must exit 0 within `limit`; returns its
/// scheduling class. `shell`: it runs inside `quiclab shell` on the run's scenario,
/// whose links.csv and emulate.json go to `{out_dir}/emulator` as the emulator's do.
fn run_client_process(
    template: &str,
    values: &Values,
    dir: &Path,
    env: &[(&str, &Path)],
    (limit, sched, shell): (Duration, Sched, bool),
) -> Result<&'static str, String> {
    let mut argv = expand(template, values)?;
    if shell {
        let quiclab = values
            .get("quiclab")
            .ok_or("emulator = \"shell\" needs the quiclab binary")?;
        let out = dir.join("emulator").display().to_string();
        let scenario = values["scenario"].clone();
        let prefix = [
            quiclab.clone(),
            "shell".into(),
            scenario,
            "--out".into(),
            out,
        ];
        argv = prefix
            .into_iter()
            .chain(["--".to_string()])
            .chain(argv)
            .collect();
    }
    let mut client = spawn("client", &argv, dir, env, sched)?;
    let class = client.sched();
    let status = client.wait(limit)?;
    if !status.success() {
        return Err(format!(
            "the client exited with {status}: {}",
            client.stderr_tail()
        ));
    }
    Ok(class)
}
