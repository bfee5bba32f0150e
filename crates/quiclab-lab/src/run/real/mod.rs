//! Running a point with real stacks (`[endpoints]`, see [`crate::plan::endpoints`]):
//! the server command, then `quiclab emulate` with the run's resolved scenario between
//! a listening port and the server, then the client command; the client's qlog gives
//! the flow's times ([`qlog`]), written as a result with the simulator's paths
//! (`flows[0].handshake_done_s`, `ttfb_s`, `ttlb_s`, `client_first_sample_pto_ms`,
//! plus `client_first_retransmit_ms`), so `[metrics]`, `[expected]` and findings read
//! both kinds of run alike. A client that writes no qlog gets only
//! `client_first_retransmit_ms`, from the emulator's capture ([`pcap`]).
//!
//! Real runs are in wall-clock time on loopback: not deterministic (scheduling, the
//! emulator's timer accuracy, the stacks' own delays), so plans give them repetitions
//! and read medians and confidence intervals. They run one at a time (ports, and the
//! 2-core machine's timing), after the simulated runs. Each run's files stay in
//! `<results>/real/<key>/` (qlogs, the configs, each process's output).

pub mod available;
pub mod pcap;
pub mod process;
pub mod qlog;
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

/// Checks that every stack of `specs` can run here (the quiclab binary; each stack's
/// `requires`), before any run starts; returns the run-independent placeholder values.
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
    let fixed = workdir::fixed_values(
        &available::quiclab_binary(first)?,
        plan_dir,
        repo.as_deref(),
    );
    if !endpoints.direct() && endpoints.emulator.is_none() {
        // The default emulator is a subcommand of this quiclab: a build without it
        // cannot run the plan ("not available", not a failed run).
        let argv = vec![fixed["quiclab"].clone(), "emulate".into(), "--help".into()];
        available::check_requires(first, &argv).map_err(|e| match e {
            LabError::Unavailable { stack, why } => LabError::Unavailable {
                stack,
                why: format!("this quiclab has no `emulate` subcommand ({why})"),
            },
            other => other,
        })?;
    }
    for name in names {
        if let Some(req) = endpoints
            .stacks
            .get(name)
            .and_then(|s| s.requires.as_deref())
        {
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
    let direct = endpoints.direct();
    let values = workdir::prepare(&dir, &spec.scenario_toml, fixed, direct).map_err(&fail)?;
    let limit = Duration::from_secs_f64(endpoints.timeout_s.unwrap_or(CLIENT_LIMIT_S));
    let emulator = (!direct).then(|| endpoints.emulator_template());
    let sched = if endpoints.realtime.unwrap_or(true) {
        Sched::Fifo
    } else {
        Sched::Inherit
    };
    let (server_sched, client_sched) =
        run_processes(stack, emulator, &values, &dir, limit, sched).map_err(&fail)?;
    let times = client_times(&values, &dir).map_err(&fail)?;
    let result = real_result(name, &dir, (server_sched, client_sched), &times);
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

/// The client's times from its qlog, or, when it wrote none, its first retransmission
/// from the emulator's capture ([`pcap`]; the other times stay empty).
fn client_times(values: &Values, dir: &Path) -> Result<qlog::ClientTimes, String> {
    let qlog_dir = Path::new(&values["qlog_dir"]);
    if let Some(p) = qlog::find_qlog(qlog_dir)? {
        return qlog::client_times(&qlog::read_events(&p)?);
    }
    let capture = dir.join("emulator/pcap/all.pcap");
    if !capture.is_file() {
        return Err(format!(
            "{}: the client wrote no qlog file, and there is no capture at {} (the \
             default emulator writes it) to read its retransmissions from",
            qlog_dir.display(),
            capture.display()
        ));
    }
    Ok(qlog::ClientTimes {
        first_retransmit_ms: pcap::first_retransmit_in(&capture)?,
        ..qlog::ClientTimes::default()
    })
}

/// Server, emulator, client; the client must exit 0 within `limit`.
fn run_processes(
    stack: &Stack,
    emulator: Option<&str>,
    values: &Values,
    dir: &Path,
    limit: Duration,
    sched: Sched,
) -> Result<(&'static str, &'static str), String> {
    let keylog = Path::new(&values["keylog"]);
    let env = [("SSLKEYLOGFILE", keylog)];
    let mut server: Proc = spawn(
        "server",
        &expand(stack.server_template(), values)?,
        dir,
        &env,
        sched,
    )?;
    server.wait_started(START_LIMIT)?;
    let mut emu = match emulator {
        Some(t) => {
            // The emulator raises its own priority (above the endpoints').
            let mut p = spawn("emulator", &expand(t, values)?, dir, &[], Sched::Inherit)?;
            p.wait_started(START_LIMIT)?;
            Some(p)
        }
        None => None,
    };
    let mut client = spawn(
        "client",
        &expand(stack.client_template(), values)?,
        dir,
        &env,
        sched,
    )?;
    let scheds = (server.sched(), client.sched());
    let status = client.wait(limit);
    if let Some(e) = emu.as_mut() {
        e.stop();
    }
    server.stop();
    let status = status?;
    if !status.success() {
        return Err(format!(
            "the client exited with {status}: {} (server: {}; emulator: {})",
            client.stderr_tail(),
            server.stderr_tail(),
            emu.map(|e| e.stderr_tail()).unwrap_or_default()
        ));
    }
    Ok(scheds)
}
