//! `quiclab sim`: run scenario files in the simulator.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use quiclab_sim::output::tables::{summary_table, write_results};
use quiclab_sim::{Progress, Scenario, Simulation};
use std::io::IsTerminal;
use std::path::PathBuf;
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
}

pub fn run(c: SimCommand) -> Result<()> {
    match c {
        SimCommand::Run(a) => run_one(a),
    }
}

fn run_one(a: RunArgs) -> Result<()> {
    let mut scenario = Scenario::load(&a.file)?;
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
    print!("{}", summary_table(&result));
    println!(
        "simulated {:.3} s in {:.3} s wall time ({} events)",
        result.end_s,
        wall.as_secs_f64(),
        result.events
    );
    write_results(&out, &result)
        .with_context(|| format!("writing results to {}", out.display()))?;
    println!("results: {}", out.display());
    Ok(())
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
