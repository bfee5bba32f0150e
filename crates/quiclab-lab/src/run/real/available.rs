//! What real runs need from the machine: the quiclab binary (set by the CLI, which is
//! that binary), a Python, the repository root, and each stack's `requires` check.
//! A missing piece is [`LabError::Unavailable`], reported as such, never a silent skip.

use crate::error::LabError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

static QUICLAB_BIN: OnceLock<PathBuf> = OnceLock::new();

/// Sets the quiclab binary that real runs start (`{quiclab}`): the CLI passes its own
/// executable. False if it was already set. Without it, `$QUICLAB_BIN` is used.
pub fn set_quiclab_binary(path: PathBuf) -> bool {
    QUICLAB_BIN.set(path).is_ok()
}

/// The quiclab binary, or why there is none.
pub fn quiclab_binary(stack: &str) -> Result<PathBuf, LabError> {
    QUICLAB_BIN
        .get()
        .cloned()
        .or_else(|| std::env::var_os("QUICLAB_BIN").map(PathBuf::from))
        .filter(|p| p.is_file())
        .ok_or_else(|| LabError::Unavailable {
            stack: stack.to_string(),
            why: "no quiclab binary to start (run the plan with the `quiclab` command, \
                  or set QUICLAB_BIN)"
                .into(),
        })
}

/// The repository root: the nearest ancestor of `plan_dir` with a Cargo.toml.
pub fn repo_root(plan_dir: &Path) -> Option<PathBuf> {
    let abs = plan_dir.canonicalize().ok()?;
    abs.ancestors()
        .find(|d| d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// `{python}`: $PYTHON, else `<repo>/.venv/bin/python` when present, else python3.
pub fn python(repo: Option<&Path>) -> PathBuf {
    if let Some(p) = std::env::var_os("PYTHON") {
        return PathBuf::from(p);
    }
    repo.map(|r| r.join(".venv/bin/python"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// Runs a stack's expanded `requires` command: Ok if it exits 0, else
/// [`LabError::Unavailable`] with what it printed.
pub fn check_requires(stack: &str, argv: &[String]) -> Result<(), LabError> {
    let unavailable = |why: String| LabError::Unavailable {
        stack: stack.to_string(),
        why,
    };
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| unavailable("empty `requires` command".into()))?;
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| unavailable(format!("`{}` cannot start: {e}", argv.join(" "))))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or("").trim();
    Err(unavailable(format!(
        "`{}` failed ({}): {last}",
        argv.join(" "),
        out.status
    )))
}
