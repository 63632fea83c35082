//! The calibration's plot: precision against recall, one line per floor.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::sweep::{Calibration, FLOORS, SweepRow};

/// Precision against recall, one line per floor over the thresholds (at the
/// default containment), as SVG and PNG.
pub(super) fn plot(c: &Calibration, out: &Path) -> Result<()> {
    let svg = out.join("precision-recall.svg");
    let png = out.join("precision-recall.png");
    draw_plot(c, SVGBackend::new(&svg, (800, 600)).into_drawing_area())
        .with_context(|| format!("cannot draw {}", svg.display()))?;
    draw_plot(c, BitMapBackend::new(&png, (800, 600)).into_drawing_area()).with_context(|| {
        format!(
            "cannot draw {} (PNG text needs a font: install fontconfig and fonts-dejavu-core)",
            png.display()
        )
    })?;
    Ok(())
}

fn draw_plot<DB: DrawingBackend>(
    c: &Calibration,
    root: DrawingArea<DB, plotters::coord::Shift>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    root.fill(&WHITE).map_err(err)?;
    let low =
        |f: fn(&SweepRow) -> f64| c.sweep.iter().map(f).fold(1.0f64, f64::min).max(0.0) - 0.02;
    let mut chart = ChartBuilder::on(&root)
        .caption("Copy rules: precision against recall", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(low(|r| r.recall)..1.005, low(|r| r.precision)..1.005)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("recall (copies denied)")
        .y_desc("precision")
        .draw()
        .map_err(err)?;
    for (i, floor) in FLOORS.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = c
            .sweep
            .iter()
            .filter(|r| {
                r.floor == *floor
                    && r.containment == c.config.containment
                    && r.min_shingles == c.config.min_shingles
            })
            .map(|r| (r.recall, r.precision))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(format!("floor {floor}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
