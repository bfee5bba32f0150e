//! `quiclab query "SQL"`: SQL over the results store (every `results/*.parquet` under
//! `--dir`; docs/RESULTS.md). DuckDB runs in its Python wheel, so this hands the query
//! to `python -m quiclab query` in the project's venv (`.venv/`, made by
//! scripts/setup-tests.sh) or in `$QUICLAB_PYTHON`; building DuckDB's C++ into this
//! binary would cost many minutes of compile time.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct QueryArgs {
    /// The SQL, over the views `runs` (one row per run), `metrics` (long) and `store`
    /// (every row as written), e.g. "select plan, count(*) from runs group by plan".
    sql: String,
    /// Where to look for results/*.parquet, recursively.
    #[arg(long, default_value = "out")]
    dir: PathBuf,
    /// Print CSV instead of a table.
    #[arg(long)]
    csv: bool,
}

/// `.venv/bin/python` in `start` or the nearest ancestor that has one.
fn venv_python_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(".venv/bin/python"))
        .find(|p| p.is_file())
}

/// `$QUICLAB_PYTHON`, else the venv of the current directory's project, else that of
/// this executable's (target/release/quiclab lives in the project).
fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("QUICLAB_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let cwd = std::env::current_dir().ok();
    let exe = std::env::current_exe().ok();
    cwd.as_deref()
        .and_then(venv_python_from)
        .or_else(|| exe.as_deref().and_then(venv_python_from))
}

const HOW: &str = "run scripts/setup-tests.sh in the quiclab checkout (it makes .venv/ with \
     duckdb and the quiclab Python package), or set QUICLAB_PYTHON to a Python that has both \
     (pip install duckdb ./python)";

pub fn run(a: QueryArgs) -> Result<()> {
    let Some(python) = python() else {
        bail!("quiclab query needs Python with duckdb and quiclab, and found no .venv: {HOW}");
    };
    let ready = Command::new(&python)
        .args(["-c", "import duckdb, quiclab"])
        .output()
        .with_context(|| format!("cannot run {}: {HOW}", python.display()))?;
    if !ready.status.success() {
        bail!(
            "{} cannot import duckdb and quiclab ({}): {HOW}",
            python.display(),
            String::from_utf8_lossy(&ready.stderr).trim()
        );
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "quiclab", "query", "--dir"])
        .arg(&a.dir)
        .arg(&a.sql);
    if a.csv {
        cmd.arg("--csv");
    }
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", python.display()))?;
    if !status.success() {
        // Python printed why.
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}
