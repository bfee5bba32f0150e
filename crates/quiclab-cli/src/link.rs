//! `quiclab link`: link profiles (`scenarios/links/*.toml`, quiclab-link's `profile`).

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use quiclab_link::profile::Profile;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum LinkCommand {
    /// Write a link profile's realisation as trace files: OUT.up.mahimahi (client ->
    /// server) and OUT.down.mahimahi (Mahimahi delivery traces), OUT.delay.csv and
    /// OUT.loss.csv (both directions). They are the realisation a scenario's `trace = {
    /// profile = PROFILE, seconds = N }` runs with `seed = S`, and replay to the same
    /// results.
    Export(ExportArgs),
}

#[derive(Args)]
pub struct ExportArgs {
    /// The profile file (scenarios/links/*.toml).
    profile: PathBuf,
    /// Length of the realisation, s (at most 3600); the delivery traces repeat after it.
    #[arg(long)]
    seconds: f64,
    /// The seed (a scenario's `seed` gives the realisation it runs with).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Prefix of the four files written (directories are created).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(c: LinkCommand) -> Result<()> {
    match c {
        LinkCommand::Export(a) => export(a),
    }
}

fn export(a: ExportArgs) -> Result<()> {
    let profile = Profile::load(&a.profile).map_err(|e| anyhow!("{}: {e}", a.profile.display()))?;
    let realisation = profile
        .realise(a.seed, a.seconds)
        .map_err(|e| anyhow!("{}: {e}", a.profile.display()))?;
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let [up, down, delay, loss] = realisation
        .write(&a.out)
        .with_context(|| format!("writing {}.*", a.out.display()))?;
    let show = |p: &PathBuf| p.display().to_string();
    println!(
        "{} s of {} (seed {}):\n  {}\n  {}\n  {}\n  {}",
        a.seconds,
        a.profile.display(),
        a.seed,
        show(&up),
        show(&down),
        show(&delay),
        show(&loss)
    );
    // Absolute paths: a relative one in a scenario is relative to the scenario's file.
    let abs = |p: &PathBuf| show(&std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()));
    println!("As a scenario's links:");
    for (side, mm) in [("forward", &up), ("return", &down)] {
        println!(
            "[topology.{side}]\ntrace = {{ mahimahi = {:?}, delay = {:?}, loss = {:?} }}",
            abs(mm),
            abs(&delay),
            abs(&loss)
        );
    }
    Ok(())
}
