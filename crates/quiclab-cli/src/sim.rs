//! `quiclab sim`: run scenario files in the simulator.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use quiclab_sim::output::tables::{summary_table, write_results};
use quiclab_sim::{Scenario, Simulation};
use std::path::PathBuf;
use std::time::Instant as WallClock;

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
    let result = Simulation::new(scenario, &file, Some(&out))?.run()?;
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
