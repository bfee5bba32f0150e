//! The results store: every plan invocation writes its runs as one Parquet file,
//! `<out>/results/<plan>-<YYYYmmddTHHMMSSZ>-<pid>-<n>.parquet` (Parquet files are not
//! appended to, so a resumed or repeated sweep adds a file), beside the CSV/JSONL
//! files, which stay as they are. `python -m quiclab query` and `quiclab.results(DIR)`
//! read every such file under a directory (docs/RESULTS.md).
//!
//! Long layout, one row per (run, value) so plans with different axes and metrics live
//! in one table: `kind` is `axis`, `metric` or `expected`, `key` the axis or metric
//! name, `value` the number (null: the metric is absent in that run) or `text` a text
//! axis's value. Every row also carries its run (`run` ordinal, `point`, `rep`,
//! `seed`, `run_key`, `scenario_hash`, `stack`, `run_wall_s`, `run_cpu_s`) and the
//! invocation's provenance ([`provenance::Provenance`]: `git_rev`, `git_dirty`,
//! `build`, `quiclab_version`, `host`, `started_at`, `wall_s`, `cpu_s`).
//!
//! Nothing here changes another result file: provenance (clock, git, host) is read
//! only for this file.

pub mod provenance;
pub mod table;

use crate::error::LabError;
use crate::plan::AxisValue;
use crate::run::prepare::PreparedPlan;
use crate::run::rows::{write_atomic, Row};
use provenance::{Invocation, Provenance, RunTime};
use ring::digest::{digest, SHA256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use table::{Table, Values};

/// One long row before it becomes columns.
struct Cell<'a> {
    run: usize,
    row: &'a Row,
    kind: &'static str,
    key: &'a str,
    value: Option<f64>,
    text: Option<&'a str>,
}

/// Every (run, value) cell of `rows` in run order: axes, metrics, expectations, each in
/// the plan's order.
fn cells<'a>(prepared: &'a PreparedPlan, rows: &'a [Row]) -> Vec<Cell<'a>> {
    let plan = &prepared.plan;
    let mut out = Vec::new();
    for (run, row) in rows.iter().enumerate() {
        let cell = |kind, key, value, text| Cell {
            run,
            row,
            kind,
            key,
            value,
            text,
        };
        for a in &plan.axes {
            out.push(match row.params.get(&a.name) {
                Some(AxisValue::Number(n)) => cell("axis", a.name.as_str(), Some(*n), None),
                Some(AxisValue::Text(s)) => cell("axis", &a.name, None, Some(s.as_str())),
                None => cell("axis", &a.name, None, None),
            });
        }
        for m in plan.metrics.keys() {
            out.push(cell("metric", m, row.metrics.get(m).copied(), None));
        }
        for m in plan.expected.keys() {
            out.push(cell("expected", m, row.expected.get(m).copied(), None));
        }
    }
    out
}

/// Hex SHA-256 of the resolved scenario (its canonical JSON), per run key.
fn scenario_hashes(prepared: &PreparedPlan) -> Result<BTreeMap<&str, String>, LabError> {
    let mut out = BTreeMap::new();
    for s in prepared.unique() {
        let json = serde_json::to_vec(&s.scenario).map_err(|e| LabError::Data {
            file: prepared.plan_file(),
            why: format!("the scenario of run {}: {e}", s.key),
        })?;
        let hash: String = digest(&SHA256, &json)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.insert(s.key.as_str(), hash);
    }
    Ok(out)
}

type Columns = Vec<(&'static str, Values)>;

/// The columns of the run each cell belongs to (the same on all cells of a run).
fn run_columns(
    prepared: &PreparedPlan,
    cells: &[Cell],
    inv: &Invocation,
) -> Result<Columns, LabError> {
    let hashes = scenario_hashes(prepared)?;
    let stacks: BTreeMap<&str, Option<&str>> = prepared
        .specs
        .iter()
        .map(|s| (s.key.as_str(), s.stack.as_deref()))
        .collect();
    let int = |f: &dyn Fn(&Cell) -> i64| Values::Int(cells.iter().map(|c| Some(f(c))).collect());
    let text = |f: &dyn Fn(&Cell) -> Option<String>| Values::Text(cells.iter().map(f).collect());
    let time = |f: &dyn Fn(RunTime) -> f64| {
        let v = cells.iter().map(|c| inv.run_time(&c.row.key).map(f));
        Values::Float(v.map(|t| t.filter(|t| t.is_finite())).collect())
    };
    Ok(vec![
        ("run", int(&|c| c.run as i64)),
        ("point", int(&|c| c.row.point as i64)),
        ("rep", int(&|c| i64::from(c.row.rep))),
        (
            "seed",
            Values::UInt(cells.iter().map(|c| Some(c.row.seed)).collect()),
        ),
        ("run_key", text(&|c| Some(c.row.key.clone()))),
        (
            "scenario_hash",
            text(&|c| hashes.get(c.row.key.as_str()).cloned()),
        ),
        (
            "stack",
            text(&|c| {
                stacks
                    .get(c.row.key.as_str())
                    .copied()
                    .flatten()
                    .map(str::to_string)
            }),
        ),
        ("run_wall_s", time(&|t| t.wall_s)),
        ("run_cpu_s", time(&|t| t.cpu_s)),
    ])
}

/// The cells' own columns: what each holds.
fn cell_columns(cells: &[Cell]) -> Columns {
    let text = |f: &dyn Fn(&Cell) -> Option<String>| Values::Text(cells.iter().map(f).collect());
    vec![
        ("kind", text(&|c| Some(c.kind.to_string()))),
        ("key", text(&|c| Some(c.key.to_string()))),
        (
            "value",
            Values::Float(cells.iter().map(|c| c.value).collect()),
        ),
        ("text", text(&|c| c.text.map(str::to_string))),
    ]
}

/// The invocation's columns, the same on every row (`n` rows of each): (which plan and
/// invocation, its provenance).
fn invocation_columns(
    prepared: &PreparedPlan,
    inv: &Invocation,
    prov: &Provenance,
    n: usize,
) -> (Columns, Columns) {
    let text = |v: &str| Values::Text(vec![Some(v.to_string()); n]);
    let which = vec![
        ("plan", text(&prepared.plan.name)),
        ("plan_file", text(&prepared.plan_file())),
        ("invocation", text(&inv.id())),
        ("quick", Values::Bool(vec![Some(prepared.quick); n])),
    ];
    let provenance = vec![
        ("git_rev", Values::Text(vec![prov.git_rev.clone(); n])),
        ("git_dirty", Values::Bool(vec![prov.git_dirty; n])),
        ("build", text(&prov.build)),
        ("quiclab_version", text(&prov.version)),
        ("host", text(&prov.host)),
        (
            "started_at",
            Values::Timestamp(vec![Some(prov.started_at_us); n]),
        ),
        ("wall_s", Values::Float(vec![Some(prov.wall_s); n])),
        ("cpu_s", Values::Float(vec![prov.cpu_s; n])),
    ];
    (which, provenance)
}

/// The results table of one invocation: the plan and invocation, then each cell's run,
/// then the cell, then the provenance (docs/RESULTS.md lists the columns).
pub fn results_table(
    prepared: &PreparedPlan,
    rows: &[Row],
    invocation: &Invocation,
    prov: &Provenance,
) -> Result<Table, LabError> {
    let cells = cells(prepared, rows);
    let (which, provenance) = invocation_columns(prepared, invocation, prov, cells.len());
    let columns = which
        .into_iter()
        .chain(run_columns(prepared, &cells, invocation)?)
        .chain(cell_columns(&cells))
        .chain(provenance);
    Ok(Table {
        columns: columns.map(|(k, v)| (k.to_string(), v)).collect(),
    })
}

/// Writes the invocation's results file into `out/results/` and returns its path.
pub fn write_store(
    prepared: &PreparedPlan,
    rows: &[Row],
    invocation: &Invocation,
    out: &Path,
) -> Result<PathBuf, LabError> {
    let plan_dir = prepared
        .plan_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let prov = invocation.provenance(plan_dir);
    let table = results_table(prepared, rows, invocation, &prov)?;
    let dir = out.join("results");
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let path = dir.join(format!(
        "{}-{}.parquet",
        prepared.plan.name,
        invocation.id()
    ));
    let bytes = table
        .to_parquet(&format!("quiclab {}", prov.version))
        .map_err(|e| LabError::Data {
            file: path.display().to_string(),
            why: e.to_string(),
        })?;
    write_atomic(&path, &bytes)?;
    Ok(path)
}
