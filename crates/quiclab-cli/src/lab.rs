//! `quiclab lab run`, `quiclab plot`, `quiclab report`, `quiclab reproduce`: sweeps,
//! figures and reports (crate quiclab-lab).

use anyhow::{anyhow, Context, Result};
use clap::Args;
use quiclab_lab::present::index::write_index;
use quiclab_lab::present::record::{record_full_run, LastFullRun};
use quiclab_lab::present::reproduce::{self, run_and_report, LAST_FULL_RUN};
use quiclab_lab::present::{adhoc, report, statements};
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
    /// Exit 0 even when a check fails, is inconclusive or has no data (the reports say
    /// so anyway).
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
    /// Record every claim's and check's outcome, with the date and the git revision, in
    /// experiments/last-full-run.csv (full runs only: not with --quick).
    #[arg(long)]
    record: bool,
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
    statements_gate(&[out], a.sweep.keep_going)
}

/// Prints the claims' counts per source and the checks' counts, and fails (exit
/// status 1) when a check fails, is inconclusive or has no data, unless `keep_going`.
/// Claims never change the exit status.
fn statements_gate(dirs: &[PathBuf], keep_going: bool) -> Result<()> {
    let gate = statements::gate(dirs)?;
    if gate.is_empty() {
        return Ok(());
    }
    for line in gate.summary_lines() {
        println!("{line}");
    }
    for line in &gate.failing {
        eprintln!("  {line}");
    }
    if gate.failing.is_empty() || keep_going {
        return Ok(());
    }
    Err(anyhow!(
        "{} check(s) fail, are inconclusive or have no data (--keep-going to exit 0 anyway)",
        gate.failing.len()
    ))
}

/// Today's date (UTC) as YYYY-MM-DD, from the wall clock (civil-from-days, proleptic
/// Gregorian).
fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `git rev-parse --short HEAD` in `dir`, or "unknown".
fn git_revision(dir: &std::path::Path) -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "unknown".into())
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
    if a.record && a.sweep.quick {
        return Err(anyhow!(
            "--record keeps the last full run: it does not go with --quick"
        ));
    }
    use_this_binary();
    let started = WallClock::now();
    let done = reproduce::reproduce(&root, &a.name, &a.out, &a.sweep.options())?;
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
    println!("report: {}", done.index.display());
    if a.record {
        let path = root.join(LAST_FULL_RUN);
        record_full_run(
            &path,
            &a.out,
            &done.dirs,
            &today_utc(),
            &git_revision(&root),
        )?;
        // The index again, its "last full run" column now this run.
        write_index(&a.out, &done.dirs, &LastFullRun::read(&path)?)?;
        println!(
            "recorded: {} (scripts/doc_figures.py --only reproduction updates the README)",
            path.display()
        );
    }
    statements_gate(&done.dirs, a.sweep.keep_going)
}
