//! `quiclab sim`: run scenario files in the simulator.

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use quiclab_sim::output::tables::{summary_table, write_results};
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::{Progress, Scenario, Simulation};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant as WallClock;

/// Events between progress updates: cheap for the simulator (one counter compare per
/// event), frequent enough for a display (the simulator does about a million a second).
const PROGRESS_EVERY_EVENTS: u64 = 1 << 16;

#[derive(Subcommand)]
pub enum SimCommand {
    /// Run one scenario: print a summary, write results.json and CSVs (and qlog/pcap
    /// when the scenario's [measure] asks) into --out.
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Output directory (default: out/<scenario name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override a scenario key (repeatable), with a plan's `[set]` syntax: a number or
    /// expression (`topology.forward.delay_ms=2*20`) or quoted text (`client.congestion_control.algorithm='none'`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

pub fn run(c: SimCommand) -> Result<()> {
    match c {
        SimCommand::Run(a) => run_one(a),
    }
}

fn run_one(a: RunArgs) -> Result<()> {
    let mut scenario = load_with_overrides(&a.file, &a.set)?;
    if let Some(seed) = a.seed {
        scenario.seed = seed;
    }
    let out = a.out.unwrap_or_else(|| {
        PathBuf::from("out").join(quiclab_sim::output::tables::sanitize(&scenario.name))
    });
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let started = WallClock::now();
    let file = a.file.display().to_string();
    let mut sim = Simulation::new(scenario, &file, Some(&out))?;
    // Progress only on a terminal: redirected stderr gets nothing extra.
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| progress_bar(&mut sim, started));
    let result = sim.run();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let result = result?;
    let wall = started.elapsed();
    // Results first: a reader that closes stdout early (`| head`) still gets them.
    write_results(&out, &result)
        .with_context(|| format!("writing results to {}", out.display()))?;
    print!("{}", summary_table(&result));
    println!(
        "simulated {:.3} s in {:.3} s wall time ({} events)",
        result.end_s,
        wall.as_secs_f64(),
        result.events
    );
    println!("results: {}", out.display());
    Ok(())
}

/// The scenario file with each `--set KEY=VALUE` applied (by the lab's `[set]` rule) and
/// the result validated by the simulator, whose error names an unknown key.
fn load_with_overrides(file: &Path, sets: &[String]) -> Result<Scenario> {
    if sets.is_empty() {
        return Ok(Scenario::load(file)?);
    }
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {name}"))?;
    let mut table: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {name}"))?;
    for set in sets {
        let (key, value) = set
            .split_once('=')
            .ok_or_else(|| anyhow!("--set {set}: expected KEY=VALUE"))?;
        quiclab_lab::apply_set(&mut table, key.trim(), value)
            .with_context(|| format!("--set on {name}"))?;
    }
    let label = format!("{name} with --set {}", sets.join(" --set "));
    // The schema's error (e.g. an unknown key) without toml's excerpt of the generated
    // text, whose line numbers are not the file's.
    // Relative trace paths, the overrides' too, resolve against the file's directory.
    Scenario::parse_in(&toml::to_string(&table)?, &label, file.parent()).map_err(|e| match e {
        ScenarioError::Parse { file, message } => {
            let reason = message.lines().rev().find(|l| !l.trim().is_empty());
            anyhow!("{file}: {}", reason.unwrap_or_default().trim())
        }
        e => e.into(),
    })
}

/// A progress bar over virtual time (simulated time, wall time, events/s), fed by the
/// simulation's progress hook; the wall clock is read here, never in the simulator.
fn progress_bar(sim: &mut Simulation, started: WallClock) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let shown = bar.clone();
    sim.set_progress_hook(
        PROGRESS_EVERY_EVENTS,
        Box::new(move |p: Progress| {
            let wall = started.elapsed().as_secs_f64();
            let stop_ms = (p.stop.as_secs_f64() * 1e3) as u64;
            shown.set_length(stop_ms);
            shown.set_position((p.now.as_secs_f64() * 1e3) as u64);
            shown.set_message(format!(
                "simulated {:.3} of {:.3} s, wall {wall:.1} s, {} events ({:.0} events/s)",
                p.now.as_secs_f64(),
                p.stop.as_secs_f64(),
                p.events,
                p.events as f64 / wall.max(1e-9),
            ));
        }),
    );
    bar
}
