//! Plots (plotters), each written as SVG and PNG: per-task differences with their
//! intervals, tokens per condition, Horizonte growth curves. Drawing depends only on
//! the analysed values, so the same records give the same files.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::analysis::{Analysis, Metric, Scope};
use super::fmt_num;
use crate::record::RunStatus;

const WIDTH: u32 = 960;
const FONT: &str = "sans-serif";

/// A chart that can draw itself on any plotters backend.
trait Chart {
    /// The canvas height in pixels (the width is fixed).
    fn height(&self) -> u32;
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>;
}

/// Draws `chart` to `dir/stem.svg` and `dir/stem.png`.
fn save(chart: &impl Chart, dir: &Path, stem: &str) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let size = (WIDTH, chart.height());
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    let failed = |path: &Path, err: String| anyhow!("cannot draw {}: {err}", path.display());
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        chart.draw(&root).map_err(|e| failed(&svg, e.to_string()))?;
        root.present().map_err(|e| failed(&svg, e.to_string()))?;
    }
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        chart.draw(&root).map_err(|e| {
            failed(
                &png,
                format!("{e} (PNG text needs a font: install fontconfig and fonts-dejavu-core)"),
            )
        })?;
        root.present().map_err(|e| failed(&png, e.to_string()))?;
    }
    Ok(vec![svg, png])
}

/// The colour of a condition, the same in every plot: C0, C1, C2... by their
/// number, other names by their place in the batch's list of conditions.
fn condition_color(name: &str, index: usize) -> RGBColor {
    let number = name.strip_prefix('C').and_then(|n| n.parse::<usize>().ok());
    color(number.unwrap_or(index))
}

fn color(index: usize) -> RGBColor {
    const COLORS: [RGBColor; 6] = [
        RGBColor(0x44, 0x44, 0x44),
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0x94, 0x67, 0xbd),
        RGBColor(0xff, 0x7f, 0x0e),
    ];
    COLORS[index % COLORS.len()]
}

/// A value range with a margin, never empty.
fn padded(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !low.is_finite() || !high.is_finite() {
        return (-1.0, 1.0);
    }
    let margin = if high > low { (high - low) * 0.06 } else { 1.0 };
    (low - margin, high + margin)
}

/// The name of the category at a tick, when the tick sits on one.
fn category(names: &[String], value: f64, top_down: bool) -> String {
    let index = value.round();
    if (value - index).abs() > 1e-6 || index < 0.0 || index as usize >= names.len() {
        return String::new();
    }
    let index = index as usize;
    let index = if top_down {
        names.len() - 1 - index
    } else {
        index
    };
    names[index].clone()
}

/// One point with its interval, in row `row` for one condition.
struct Interval {
    row: usize,
    value: f64,
    low: f64,
    high: f64,
}

/// Per-task differences with intervals: a row per task (and "all"), a mark per
/// condition.
struct Forest {
    title: String,
    x_label: String,
    rows: Vec<String>,
    series: Vec<(String, Vec<Interval>)>,
}

/// Pixels per row of a forest plot.
const ROW_PX: u32 = 34;

impl Forest {
    /// Empty rows above the data that hold the legend, so it never covers a mark.
    fn legend_rows(&self) -> usize {
        (self.series.len() * 22 + 16).div_ceil(ROW_PX as usize)
    }
}

impl Chart for Forest {
    fn height(&self) -> u32 {
        140 + ROW_PX * (self.rows.len() + self.legend_rows()) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let n = self.rows.len();
        let all = self.series.iter().flat_map(|(_, points)| points);
        let (x0, x1) = padded(all.flat_map(|p| [p.low, p.high]).chain([0.0]));
        let longest = self.rows.iter().map(|r| r.len()).max().unwrap_or(4) as u32;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(24 + 8 * longest)
            .build_cartesian_2d(x0..x1, -0.5..((n + self.legend_rows()) as f64 - 0.5))?;
        let y_format = |y: &f64| category(&self.rows, *y, true);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels((n + self.legend_rows()).max(2) * 2 + 1)
            .y_label_formatter(&y_format)
            .x_label_formatter(&|x| fmt_num(*x))
            .x_desc(self.x_label.as_str())
            .label_style((FONT, 14))
            .draw()?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
            BLACK.mix(0.4),
        )))?;
        let m = self.series.len() as f64;
        for (k, (condition, points)) in self.series.iter().enumerate() {
            let style = condition_color(condition, k + 1);
            let offset = (k as f64 - (m - 1.0) / 2.0) * 0.5 / m.max(1.0);
            let y = |row: usize| (n - 1 - row) as f64 + offset;
            chart
                .draw_series(points.iter().map(|p| {
                    ErrorBar::new_horizontal(
                        y(p.row),
                        p.low,
                        p.value,
                        p.high,
                        style.stroke_width(2),
                        8,
                    )
                }))?
                .label(condition.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, style.filled()));
            chart.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.value, y(p.row)), 4, style.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.4))
            .label_font((FONT, 14))
            .draw()?;
        Ok(())
    }
}

/// Runs as points per condition with each condition's median as a bar.
struct Strip {
    title: String,
    y_label: String,
    conditions: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Chart for Strip {
    fn height(&self) -> u32 {
        520
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let m = self.conditions.len();
        let (_, y1) = padded(self.values.iter().flatten().copied().chain([0.0]));
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5..(m as f64 - 0.5), 0.0..y1)?;
        let x_format = |x: &f64| category(&self.conditions, *x, false);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(m.max(2) * 2 + 1)
            .x_label_formatter(&x_format)
            .y_label_formatter(&|y| fmt_num(*y))
            .y_desc(self.y_label.as_str())
            .label_style((FONT, 14))
            .draw()?;
        for (k, (condition, values)) in self.conditions.iter().zip(&self.values).enumerate() {
            let style = condition_color(condition, k);
            // A fixed spread so runs with equal values stay visible.
            let x = |j: usize| k as f64 + ((j % 9) as f64 - 4.0) * 0.035;
            chart.draw_series(
                values
                    .iter()
                    .enumerate()
                    .map(|(j, v)| Circle::new((x(j), *v), 4, style.mix(0.7).filled())),
            )?;
            if let Some(median) = crate::stats::median(values) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(k as f64 - 0.3, median), (k as f64 + 0.3, median)],
                    style.stroke_width(3),
                )))?;
            }
        }
        Ok(())
    }
}

/// A line per sequence: project size after each step, coloured by condition.
pub struct GrowthCurve {
    pub condition: String,
    /// (step, size) in step order.
    pub points: Vec<(u32, f64)>,
}

struct Growth<'a> {
    title: String,
    conditions: Vec<String>,
    curves: &'a [GrowthCurve],
}

impl Chart for Growth<'_> {
    fn height(&self) -> u32 {
        560
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let points = || self.curves.iter().flat_map(|c| c.points.iter());
        let last_step = points().map(|p| p.0).max().unwrap_or(1).max(1);
        let (y0, y1) = padded(points().map(|p| p.1));
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(0.5..(f64::from(last_step) + 0.5), y0.max(0.0)..y1)?;
        chart
            .configure_mesh()
            .x_desc("step")
            .x_label_formatter(&|x| {
                if x.fract() == 0.0 {
                    fmt_num(*x)
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| fmt_num(*y))
            .y_desc("project size (lines of code)")
            .label_style((FONT, 14))
            .draw()?;
        for (k, condition) in self.conditions.iter().enumerate() {
            let style = condition_color(condition, k);
            let mut labelled = false;
            for curve in self.curves.iter().filter(|c| &c.condition == condition) {
                let line = curve.points.iter().map(|(s, v)| (f64::from(*s), *v));
                let series = chart.draw_series(LineSeries::new(line, style.stroke_width(2)))?;
                if !labelled {
                    series
                        .label(condition.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                    labelled = true;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.4))
            .label_font((FONT, 14))
            .draw()?;
        Ok(())
    }
}

fn differences_stem(metric: Metric) -> String {
    format!("differences_{}", metric.name())
}

const TOKENS_STEM: &str = "tokens_per_condition";

/// The metrics with comparisons, each drawn as a differences plot.
fn compared_metrics(a: &Analysis) -> Vec<Metric> {
    Metric::ALL
        .into_iter()
        .filter(|m| a.comparisons.iter().any(|c| c.metric == *m))
        .collect()
}

fn differences_title(metric: Metric, baseline: &str) -> String {
    format!("{} vs {baseline} per task", metric.label())
}

/// The plots a batch report draws: (file stem, title), in order.
pub fn report_plot_names(a: &Analysis) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = compared_metrics(a)
        .into_iter()
        .map(|m| (differences_stem(m), differences_title(m, &a.baseline)))
        .collect();
    names.push((TOKENS_STEM.to_string(), "tokens per condition".to_string()));
    names
}

/// Draws every plot of a batch report into `dir`; returns the files written.
pub fn report_plots(a: &Analysis, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for metric in compared_metrics(a) {
        let chart = differences_chart(a, metric);
        written.extend(save(&chart, dir, &differences_stem(metric))?);
    }
    let values = a
        .conditions
        .iter()
        .map(|condition| {
            a.records
                .iter()
                .filter(|r| {
                    r.status == RunStatus::Ok && r.sequence.is_none() && &r.condition == condition
                })
                .filter_map(|r| Metric::Tokens.value(r))
                .collect()
        })
        .collect();
    let chart = Strip {
        title: "Tokens per run (ok runs; bar: median)".to_string(),
        y_label: "tokens (input + output + cache)".to_string(),
        conditions: a.conditions.clone(),
        values,
    };
    written.extend(save(&chart, dir, TOKENS_STEM)?);
    Ok(written)
}

fn differences_chart(a: &Analysis, metric: Metric) -> Forest {
    let mut rows: Vec<String> = a.tasks.clone();
    rows.push("all".to_string());
    let series = a
        .conditions
        .iter()
        .filter(|c| **c != a.baseline)
        .map(|condition| {
            let points = a
                .comparisons
                .iter()
                .filter(|c| c.metric == metric && &c.condition == condition)
                .filter_map(|c| {
                    let row = match &c.scope {
                        Scope::Task(task) => a.tasks.iter().position(|t| t == task)?,
                        Scope::All => a.tasks.len(),
                    };
                    Some(Interval {
                        row,
                        value: c.median_diff,
                        low: c.ci_low,
                        high: c.ci_high,
                    })
                })
                .collect();
            (condition.clone(), points)
        })
        .collect();
    Forest {
        title: differences_title(metric, &a.baseline),
        x_label: format!(
            "median difference vs {} with 95% bootstrap interval",
            a.baseline
        ),
        rows,
        series,
    }
}

/// The file stem of the growth plot.
pub const GROWTH_STEM: &str = "growth";

/// Draws the growth curves of a sequence into `dir`, as `stem`.svg and .png.
pub fn growth_plot(
    sequence: &str,
    conditions: &[String],
    curves: &[GrowthCurve],
    dir: &Path,
    stem: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let chart = Growth {
        title: format!("Project size per step: {sequence}"),
        conditions: conditions.to_vec(),
        curves,
    };
    save(&chart, dir, stem)
}
