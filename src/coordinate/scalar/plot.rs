//! The run as a picture: the class metric per epoch above, each peer's announced values below.
//!
//! Drawn with `plotters` into an SVG string (line series only); the caller writes it where it
//! wants. A metric that spans several orders of magnitude on positive values (preference's
//! distance falls geometrically) is drawn as its base-10 logarithm, and the axis says so. A run
//! that never reached CONVERGE gives the same two panels, empty, with the halt in the caption.

use super::Report;
use plotters::prelude::*;
use thiserror::Error;

/// The picture's size in pixels.
pub const SIZE: (u32, u32) = (960, 720);

/// Why the picture could not be drawn.
#[derive(Debug, Error)]
#[error("cannot draw the plot: {message}")]
pub struct PlotError {
    /// What the plotting library said.
    pub message: String,
}

fn plot_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError { message: e.to_string() }
}

/// The (x, y) range covering `points`, padded, never empty.
fn bounds(points: impl Iterator<Item = (f64, f64)>) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let (mut x_max, mut y_min, mut y_max) = (1.0f64, f64::INFINITY, f64::NEG_INFINITY);
    for (x, y) in points {
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if !y_min.is_finite() || !y_max.is_finite() {
        (y_min, y_max) = (0.0, 1.0);
    }
    let pad = ((y_max - y_min) * 0.05).max(1e-9 * y_max.abs().max(1.0));
    (0.0..x_max, (y_min - pad)..(y_max + pad))
}

/// A chart on `area` with the layout both panels share: the caption, an `epoch` x axis labelled
/// in whole numbers, and `y_desc` on the y axis.
fn panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    (x_range, y_range): (std::ops::Range<f64>, std::ops::Range<f64>),
) -> Result<
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>,
    PlotError,
> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, y_range)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(y_desc)
        .draw()
        .map_err(plot_err)?;
    Ok(chart)
}

/// Whether a metric's points are drawn as their base-10 logarithm: every value positive and
/// spanning more than three orders of magnitude.
fn log_scale(points: &[(f64, f64)]) -> bool {
    let positive = !points.is_empty() && points.iter().all(|(_, y)| *y > 0.0);
    let (lo, hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, y)| (lo.min(*y), hi.max(*y)));
    positive && hi / lo > 1e3
}

/// The metric per epoch (the initial value at epoch 0), finite values only, on the scale
/// [`log_scale`] picks; and the y axis's description.
fn metric_series(report: &Report, metric_name: &str) -> (Vec<(f64, f64)>, String) {
    let mut metric: Vec<(f64, f64)> = Vec::new();
    if let Some(m) = &report.metric {
        metric.push((0.0, m.initial));
    }
    metric.extend(report.trajectory.iter().filter_map(|p| p.metric.map(|m| (p.epoch as f64 + 1.0, m))));
    metric.retain(|(_, y)| y.is_finite());
    if log_scale(&metric) {
        metric.iter_mut().for_each(|(_, y)| *y = y.log10());
        (metric, format!("log10 {metric_name}"))
    } else {
        (metric, metric_name.to_owned())
    }
}

/// Each peer's announced values per epoch, finite values only, in roster order.
fn peer_series(report: &Report) -> Vec<(String, Vec<(f64, f64)>)> {
    report
        .peers
        .iter()
        .map(|peer| {
            let points = report
                .trajectory
                .iter()
                .filter_map(|p| p.values.get(&peer.name).map(|v| (p.epoch as f64 + 1.0, *v)))
                .filter(|(_, v)| v.is_finite())
                .collect();
            (peer.name.clone(), points)
        })
        .collect()
}

/// The picture's title: the run, its class when known, and its halt.
fn title(report: &Report) -> String {
    let halt = report.halt.map_or("no halt recorded", |h| h.code());
    match report.class {
        Some(class) => format!("run {} · {class} · halt {halt}", report.run),
        None => format!("run {} · halt {halt}", report.run),
    }
}

/// Draws the series' legend on a chart.
fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<
        'a,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
) -> Result<(), PlotError> {
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(plot_err)
}

/// The upper panel: the metric per epoch.
fn metric_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    report: &Report,
    metric_name: &str,
) -> Result<(), PlotError> {
    let (metric, y_desc) = metric_series(report, metric_name);
    let caption = if report.trajectory.is_empty() {
        format!("{metric_name} per epoch (no CONVERGE epochs)")
    } else {
        format!("{metric_name} per epoch")
    };
    let mut chart = panel(area, &caption, &y_desc, bounds(metric.iter().copied()))?;
    if !metric.is_empty() {
        chart
            .draw_series(LineSeries::new(metric.iter().copied(), BLUE.stroke_width(2)))
            .map_err(plot_err)?
            .label(metric_name)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        legend(&mut chart)?;
    }
    Ok(())
}

/// The lower panel: each peer's announced values per epoch.
fn peers_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    report: &Report,
) -> Result<(), PlotError> {
    let series = peer_series(report);
    let ranges = bounds(series.iter().flat_map(|(_, points)| points.iter().copied()));
    let mut chart = panel(area, "announced values per epoch", "value", ranges)?;
    let mut drawn = false;
    for (i, (name, points)) in series.into_iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let color = Palette99::pick(i);
        let legend_color = color.to_rgba();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(plot_err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], legend_color.stroke_width(2)));
        drawn = true;
    }
    if drawn {
        legend(&mut chart)?;
    }
    Ok(())
}

/// Draws the report's trajectory as an SVG document.
pub fn render_svg(report: &Report) -> Result<String, PlotError> {
    let metric_name = report.metric.as_ref().map_or("metric", |m| m.name.as_str()).to_owned();
    let title = title(report);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let root = root.titled(&title, ("sans-serif", 20)).map_err(plot_err)?;
        let panels = root.split_evenly((2, 1));
        metric_panel(&panels[0], report, &metric_name)?;
        peers_panel(&panels[1], report)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::log_scale;

    #[test]
    fn a_positive_metric_spanning_over_three_orders_is_drawn_on_a_log_scale() {
        // (values, log scale?)
        let table: [(&[f64], bool); 6] = [
            (&[], false),
            (&[1.0, 10.0, 100.0], false),
            (&[1.0, 1000.0], false),
            (&[1.0, 1000.5], true),
            (&[1e-6, 1.0], true),
            (&[0.0, 1e6], false),
        ];
        for (values, expected) in table {
            let points: Vec<(f64, f64)> = values.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect();
            assert_eq!(log_scale(&points), expected, "{values:?}");
        }
    }
}
