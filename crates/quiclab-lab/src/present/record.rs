//! The last full run's outcomes, `experiments/last-full-run.csv` (committed): one row
//! per claim and check of every plan a full `quiclab reproduce --record` ran, with the
//! date and the git revision. The index shows it next to the current run, and
//! `scripts/doc_figures.py` writes the README's per-seed table from it.
//!
//! Columns: `experiment` (the plan's results path under the output directory, e.g.
//! `quic-vs-tcp/4-countries`), `kind` (`claim` or `check`), `name`, `source` and
//! `where` (claims), `status` (a claim's status or a check's verdict), `ours`,
//! `reason`, `date` (YYYY-MM-DD, UTC) and `revision`. Recording a subset of the
//! experiments replaces only their rows.

use crate::csv;
use crate::error::LabError;
use crate::present::statement_text::ours;
use crate::present::statements::evaluate_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The header of `last-full-run.csv`.
pub const HEADER: &str = "experiment,kind,name,source,where,status,ours,reason,date,revision";

/// One statement's outcome in a full run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub experiment: String,
    /// "claim" or "check".
    pub kind: String,
    pub name: String,
    pub source: String,
    pub where_: String,
    pub status: String,
    pub ours: String,
    pub reason: String,
    pub date: String,
    pub revision: String,
}

impl Recorded {
    fn cells(&self) -> [&str; 10] {
        [
            &self.experiment,
            &self.kind,
            &self.name,
            &self.source,
            &self.where_,
            &self.status,
            &self.ours,
            &self.reason,
            &self.date,
            &self.revision,
        ]
    }
}

/// The recorded outcomes, keyed by (experiment, kind, name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LastFullRun(pub BTreeMap<(String, String, String), Recorded>);

impl LastFullRun {
    /// Reads `path`; a missing file is an empty record (no full run recorded yet).
    pub fn read(path: &Path) -> Result<LastFullRun, LabError> {
        if !path.exists() {
            return Ok(LastFullRun::default());
        }
        let data = |why: String| LabError::Data {
            file: path.display().to_string(),
            why,
        };
        let t = csv::read(path).map_err(|e| data(e.to_string()))?;
        let cols: Vec<usize> = HEADER
            .split(',')
            .map(|c| t.require(c))
            .collect::<Result<_, _>>()
            .map_err(|e| data(e.to_string()))?;
        let mut out = BTreeMap::new();
        for row in 0..t.rows.len() {
            let c = |i: usize| t.get(row, cols[i]).unwrap_or("").to_string();
            let r = Recorded {
                experiment: c(0),
                kind: c(1),
                name: c(2),
                source: c(3),
                where_: c(4),
                status: c(5),
                ours: c(6),
                reason: c(7),
                date: c(8),
                revision: c(9),
            };
            out.insert((r.experiment.clone(), r.kind.clone(), r.name.clone()), r);
        }
        Ok(LastFullRun(out))
    }

    /// The outcome of statement `name` of `kind` in `experiment`.
    pub fn get(&self, experiment: &str, kind: &str, name: &str) -> Option<&Recorded> {
        self.0
            .get(&(experiment.to_string(), kind.to_string(), name.to_string()))
    }

    /// The file's text: rows sorted by experiment, kind and name.
    pub fn to_csv(&self) -> String {
        format!("{HEADER}\n") + &csv::to_text(self.0.values().map(Recorded::cells))
    }
}

/// A results directory's path under the output directory, with `/` separators.
pub fn experiment_path(out: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(out).unwrap_or(dir);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Records the statements of the full run's results `dirs` (under `out`) in `path`,
/// replacing the rows of those experiments and keeping the others.
pub fn record_full_run(
    path: &Path,
    out: &Path,
    dirs: &[PathBuf],
    date: &str,
    revision: &str,
) -> Result<(), LabError> {
    let mut record = LastFullRun::read(path)?;
    for dir in dirs {
        let experiment = experiment_path(out, dir);
        record.0.retain(|k, _| k.0 != experiment);
        let e = evaluate_dir(dir)?;
        let rows = e
            .claims
            .iter()
            .map(|c| Recorded {
                experiment: experiment.clone(),
                kind: "claim".into(),
                name: c.spec.name.clone(),
                source: c.spec.source.clone(),
                where_: c.spec.where_.clone(),
                status: c.status.as_str().into(),
                ours: ours(&c.judged),
                reason: c.reason.clone(),
                date: date.into(),
                revision: revision.into(),
            })
            .chain(e.checks.iter().map(|c| Recorded {
                experiment: experiment.clone(),
                kind: "check".into(),
                name: c.spec.name.clone(),
                source: String::new(),
                where_: String::new(),
                status: c.verdict.as_str().into(),
                ours: ours(&c.judged),
                reason: c.reason.clone(),
                date: date.into(),
                revision: revision.into(),
            }));
        for r in rows {
            record
                .0
                .insert((r.experiment.clone(), r.kind.clone(), r.name.clone()), r);
        }
    }
    std::fs::write(path, record.to_csv()).map_err(|e| LabError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_nothing_when_absent() {
        let dir = std::env::temp_dir().join(format!("quiclab-record-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("last-full-run.csv");
        assert_eq!(LastFullRun::read(&path).unwrap(), LastFullRun::default());
        let r = Recorded {
            experiment: "quic-vs-tcp/4-countries".into(),
            kind: "claim".into(),
            name: "india_page".into(),
            source: "003".into(),
            where_: "Table 3".into(),
            status: "not reproduced".into(),
            ours: "+4.0% [+1.0%, +7.0%]".into(),
            reason: "a, \"quoted\" reason".into(),
            date: "2025-11-26".into(),
            revision: "abc1234".into(),
        };
        let mut rec = LastFullRun::default();
        rec.0.insert(
            (r.experiment.clone(), r.kind.clone(), r.name.clone()),
            r.clone(),
        );
        std::fs::write(&path, rec.to_csv()).unwrap();
        let back = LastFullRun::read(&path).unwrap();
        assert_eq!(
            back.get("quic-vs-tcp/4-countries", "claim", "india_page"),
            Some(&r)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
