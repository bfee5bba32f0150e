//! Figures as data, rendered with plotters to PNG and SVG: line and scatter plots with
//! error bars and analytic curves, CDFs, bar charts and time series. Every figure has a
//! title, axis labels with units and a legend.

use std::path::Path;

/// How a measured series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// Axis scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

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
pub fn render(figure: &Figure, stem: &Path) -> Result<(), PlotError> {
    let _ = (figure, stem);
    todo!("L2")
}
