//! Figures as data, rendered with plotters to PNG and SVG: line and scatter plots with
//! error bars and analytic curves, CDFs, bar charts and time series. Every figure has a
//! title, axis labels with units and a legend.

use std::path::Path;

/// How a measured series is drawn.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// Points joined by lines.
    Lines,
    /// Points only.
    Scatter,
}

/// One measured point: `y` with an optional error bar `[lo, hi]` (e.g. a 95% CI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub err: Option<(f64, f64)>,
}

/// A named measured series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub style: Style,
}

/// A named analytic curve (drawn as a thin line, no markers).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Axis scale: a plan's figure axes name it, so it is defined with the plan types.
pub use crate::plan::Scale;

/// What kind of chart.
#[derive(Clone, Debug, PartialEq)]
pub enum Chart {
    /// x-y: measured series (with error bars) and analytic curves.
    XY {
        series: Vec<Series>,
        curves: Vec<Curve>,
    },
    /// Empirical CDFs of samples, one line per named sample set (y axis: 0..1).
    Cdf { samples: Vec<(String, Vec<f64>)> },
    /// Grouped bars: categories on x, one bar per group within a category, with
    /// optional error bars: `values[g][c]` is group g's value for category c.
    Bars {
        categories: Vec<String>,
        groups: Vec<String>,
        values: Vec<Vec<Point>>,
    },
}

/// A complete figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub title: String,
    /// Axis labels including units, e.g. "RTT (ms)".
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub chart: Chart,
}

/// Rendering failed (I/O, or an empty/degenerate figure).
#[derive(Debug, thiserror::Error)]
#[error("plotting {path}: {why}")]
pub struct PlotError {
    pub path: String,
    pub why: String,
}

/// Writes `figure` to `<stem>.png` and `<stem>.svg` (stem = a path without extension).
///
/// Both files show the same figure at [`WIDTH`]x[`HEIGHT`]. Non-finite values (and
/// non-positive ones on a log axis) are skipped; a figure left with nothing to draw is a
/// [`PlotError`], never a panic. The SVG is byte-for-byte deterministic for a given figure.
pub fn render(figure: &Figure, stem: &Path) -> Result<(), PlotError> {
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    let fail = |path: &Path, why: String| PlotError {
        path: path.display().to_string(),
        why,
    };
    let prepared = prep::prepare(figure).map_err(|why| fail(stem, why))?;
    let text = render_svg_prepared(figure, &prepared).map_err(|why| fail(&svg, why))?;
    std::fs::write(&svg, text).map_err(|e| fail(&svg, e.to_string()))?;
    draw::to_png(figure, &prepared, &png).map_err(|why| fail(&png, why))?;
    Ok(())
}

/// The SVG text of `figure`, without touching the file system (for reports that inline
/// figures, and for determinism checks).
pub fn render_svg(figure: &Figure) -> Result<String, PlotError> {
    let fail = |why| PlotError {
        path: "<svg>".into(),
        why,
    };
    let prepared = prep::prepare(figure).map_err(fail)?;
    render_svg_prepared(figure, &prepared).map_err(fail)
}

fn render_svg_prepared(figure: &Figure, prepared: &prep::Prepared) -> Result<String, String> {
    draw::to_svg(figure, prepared)
}

/// Image size in pixels (PNG) and user units (SVG): wide enough for a legend beside data,
/// the aspect of a typical paper figure.
pub const WIDTH: u32 = 1000;
/// See [`WIDTH`].
pub const HEIGHT: u32 = 640;

/// The bundled font: plotters' `ab_glyph` backend has no system font lookup, so text
/// layout (and PNG glyphs) need one registered from bytes. DejaVu Sans: permissive
/// license (assets/LICENSE-DejaVu.txt), broad Unicode coverage for units like µs.
static FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
/// The family name every text style in this module uses.
const FAMILY: &str = "sans-serif";

/// Registers [`FONT`] once per process; later calls are no-ops.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Can only fail on a corrupt font file; text drawing then reports the error.
        let _ = plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, FONT);
    });
}

mod draw;
mod prep;
