//! `quiclab lab run`, `quiclab plot`, `quiclab report`, `quiclab reproduce`: sweeps,
//! figures and reports (crate quiclab-lab).

use anyhow::{anyhow, Context, Result};
use clap::Args;
use quiclab_lab::present::reproduce::{self, run_and_report};
use quiclab_lab::present::{adhoc, findings, report};
use quiclab_lab::RunOptions;
use std::path::PathBuf;
use std::time::Instant as WallClock;

/// Options of every sweep.
#[derive(Args)]
pub struct SweepOptions {
    /// Parallel runs (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Fewer points and repetitions (each plan's [quick] section), for CI and a first look.
    #[arg(long)]
    quick: bool,
    /// Exit 0 even when a finding fails or has no data (the reports say so anyway).
    #[arg(long)]
    keep_going: bool,
}

impl SweepOptions {
    fn options(&self) -> RunOptions {
        RunOptions {
            jobs: self.jobs,
            quick: self.quick,
            progress: true,
        }
    }
}

#[derive(Args)]
pub struct LabRunArgs {
    /// The plan file (TOML).
    plan: PathBuf,
    /// Output directory (default: out/lab/<plan file stem>).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    sweep: SweepOptions,
}

#[derive(Args)]
pub struct PlotArgs {
    /// A runs.csv or summary.csv, or a results directory (its summary.csv).
    results: PathBuf,
    /// Column for x (an axis name).
    #[arg(long)]
    x: String,
    /// Metric (or column) for y; with a summary, its mean and 95% CI.
    #[arg(long)]
    y: String,
    /// Column whose values become separate series.
    #[arg(long)]
    series: Option<String>,
    /// lines, scatter, bars or cdf.
    #[arg(long, default_value = "lines")]
    kind: String,
    /// Output path without extension (writes .png and .svg).
    #[arg(long, default_value = "plot")]
    out: PathBuf,
    #[arg(long)]
    title: Option<String>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// A plan's results directory (with plan.toml, summary.csv, figures/).
    dir: PathBuf,
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// An experiment name (a file or directory under experiments/), or `all`.
    name: String,
    /// Output directory (default: out/reproduce).
    #[arg(long, default_value = "out/reproduce")]
    out: PathBuf,
    /// The experiments directory (default: experiments/ here or in a parent directory).
    #[arg(long)]
    experiments: Option<PathBuf>,
    #[command(flatten)]
    sweep: SweepOptions,
}

/// Real-stack runs (`[endpoints]`) start this very binary as `{quiclab}`.
fn use_this_binary() {
    if let Ok(exe) = std::env::current_exe() {
        quiclab_lab::run::real::available::set_quiclab_binary(exe);
    }
}

pub fn lab_run(a: LabRunArgs) -> Result<()> {
    use_this_binary();
    let stem = a
        .plan
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    let out = a.out.unwrap_or_else(|| PathBuf::from("out/lab").join(stem));
    let started = WallClock::now();
    let report = run_and_report(&a.plan, &out, &a.sweep.options())?;
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
    println!("report: {}", report.display());
    findings_gate(&[out], a.sweep.keep_going)
}

/// Prints the findings' counts and fails (exit status 1) when one fails or has no
/// data, unless `keep_going`.
fn findings_gate(dirs: &[PathBuf], keep_going: bool) -> Result<()> {
    let (counts, failing) = findings::gate(dirs)?;
    if counts == findings::Counts::default() {
        return Ok(());
    }
    println!("findings: {counts}");
    for line in &failing {
        eprintln!("  {line}");
    }
    if failing.is_empty() || keep_going {
        return Ok(());
    }
    Err(anyhow!(
        "{} finding(s) fail or have no data (--keep-going to exit 0 anyway)",
        failing.len()
    ))
}

pub fn plot(a: PlotArgs) -> Result<()> {
    adhoc::plot_csv(
        &a.results,
        &a.x,
        &a.y,
        a.series.as_deref(),
        &a.kind,
        &a.out,
        a.title.as_deref(),
    )?;
    println!("wrote {}.png and {}.svg", a.out.display(), a.out.display());
    Ok(())
}

pub fn report(a: ReportArgs) -> Result<()> {
    let path = report::write_report(&a.dir)
        .with_context(|| format!("writing the report of {}", a.dir.display()))?;
    println!("report: {}", path.display());
    Ok(())
}

pub fn reproduce(a: ReproduceArgs) -> Result<()> {
    let root = match a.experiments {
        Some(r) => r,
        None => reproduce::find_root().ok_or_else(|| {
            anyhow!("no experiments/ directory here or above; pass --experiments DIR")
        })?,
    };
    use_this_binary();
    let started = WallClock::now();
    let done = reproduce::reproduce(&root, &a.name, &a.out, &a.sweep.options())?;
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
    println!("report: {}", done.index.display());
    findings_gate(&done.dirs, a.sweep.keep_going)
}
