//! The sweep's plot: one SVG with two charts side by side, server CPU per
//! payload and the server's heap, each against the number of connected
//! clients (on a log₂ axis, 16 to 4096), one line per server.
//!
//! Drawn with plotters' SVG backend alone (no bitmap backends, no font
//! files: text is written as SVG `<text>` for the viewer to set).

use std::path::Path;

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// One server's line: (clients, value) points.
pub(crate) struct Curve {
    /// Its name in the legend.
    pub(crate) name: String,
    pub(crate) points: Vec<(usize, f64)>,
}

/// Each curve's color, in order.
const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
];

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 560;

/// Writes the plot of `cpu` (µs per payload) and `heap` (bytes) to `path`,
/// with `caption` under the title.
pub(crate) fn write(
    path: &Path,
    cpu: &[Curve],
    heap: &[Curve],
    caption: &str,
) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let failed = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| failed(&e))?;
    let root = root
        .titled(
            "Server CPU per payload and server heap against connected clients",
            ("sans-serif", 22),
        )
        .map_err(|e| failed(&e))?;
    let (body, foot) = root.split_vertically(root.dim_in_pixel().1 - 75);
    legend(&foot, cpu.iter().chain(heap).map(|c| c.name.as_str())).map_err(|e| failed(&e))?;
    foot.draw_text(
        caption,
        &("sans-serif", 14).into_font().color(&BLACK),
        (20, 45),
    )
    .map_err(|e| failed(&e))?;
    let (left, right) = body.split_horizontally(WIDTH / 2);

    let most = |curves: &[Curve]| {
        (curves.iter().flat_map(|c| &c.points))
            .map(|p| p.1)
            .fold(0.0, f64::max)
    };
    let least = |curves: &[Curve]| {
        (curves.iter().flat_map(|c| &c.points))
            .map(|p| p.1)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min)
    };
    let (first, last) = clients_range(cpu.iter().chain(heap));

    // CPU: linear from zero.
    let top = most(cpu).max(1.0) * 1.1;
    let mut chart = ChartBuilder::on(&left)
        .caption("server CPU per payload (µs)", ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(first..last, 0.0..top)
        .map_err(|e| failed(&e))?;
    mesh(
        &mut chart,
        "µs of the server thread per payload echoed",
        |y| format!("{y:.1}"),
    )
    .map_err(|e| failed(&e))?;
    draw(&mut chart, cpu).map_err(|e| failed(&e))?;

    // Heap: logarithmic, in kilobytes.
    let kb = |curves: &[Curve]| -> Vec<Curve> {
        (curves.iter())
            .map(|c| Curve {
                name: c.name.clone(),
                points: c.points.iter().map(|&(n, b)| (n, b / 1000.0)).collect(),
            })
            .collect()
    };
    let heap = kb(heap);
    let (low, high) = (least(&heap) / 1.5, most(&heap).max(1.0) * 1.5);
    let low = if low.is_finite() { low } else { 1.0 };
    let mut chart = ChartBuilder::on(&right)
        .caption(
            "server heap once all clients connected (KB)",
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(first..last, (low..high).log_scale())
        .map_err(|e| failed(&e))?;
    mesh(&mut chart, "KB (1000 bytes), log scale", |y| {
        if *y >= 1000.0 {
            format!("{:.0} MB", y / 1000.0)
        } else if *y >= 10.0 {
            format!("{y:.0} KB")
        } else {
            format!("{y:.1} KB")
        }
    })
    .map_err(|e| failed(&e))?;
    draw(&mut chart, &heap).map_err(|e| failed(&e))?;

    root.present().map_err(|e| failed(&e))
}

/// The x axis: log₂ of the client counts, from the least to the most.
fn clients_range<'a>(curves: impl Iterator<Item = &'a Curve>) -> (f64, f64) {
    let counts: Vec<f64> = curves
        .flat_map(|c| c.points.iter().map(|p| (p.0 as f64).log2()))
        .collect();
    let first = counts.iter().copied().fold(f64::INFINITY, f64::min);
    let last = counts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if first.is_finite() && last > first {
        (first.floor(), last.ceil())
    } else {
        (4.0, 12.0)
    }
}

type Chart<'a, Y> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>;

/// Draws the grid and the labels: clients as powers of two along x.
fn mesh<Y>(
    chart: &mut Chart<'_, Y>,
    y_description: &str,
    y_label: impl Fn(&f64) -> String,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (first, last) = (chart.x_range().start, chart.x_range().end);
    chart
        .configure_mesh()
        .x_labels((last - first) as usize + 1)
        .y_labels(12)
        .x_label_formatter(&|x| format!("{:.0}", x.exp2()))
        .y_label_formatter(&y_label)
        .x_desc("connected clients (log₂ scale)")
        .y_desc(y_description)
        .light_line_style(WHITE.mix(0.0))
        .draw()
}

/// One line with its points per curve, each in its color (the order of
/// the legend's).
fn draw<Y>(
    chart: &mut Chart<'_, Y>,
    curves: &[Curve],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>>
where
    Y: Ranged<ValueType = f64>,
{
    for (curve, color) in curves.iter().zip(COLORS.iter().cycle()) {
        let points: Vec<(f64, f64)> = (curve.points.iter())
            .map(|&(n, v)| ((n as f64).log2(), v))
            .collect();
        let style = ShapeStyle::from(color).stroke_width(2);
        chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        chart.draw_series(
            (points.iter()).map(|&p| Circle::new(p, 3, ShapeStyle::from(color).filled())),
        )?;
    }
    Ok(())
}

/// One legend for both charts, in a row under them: the curves' names in
/// their colors, each name once, in order.
fn legend<'a>(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    let font = ("sans-serif", 15).into_font().color(&BLACK);
    let mut x = 20;
    for (name, color) in seen.into_iter().zip(COLORS.iter().cycle()) {
        let style = ShapeStyle::from(color).stroke_width(3);
        area.draw(&PathElement::new(vec![(x, 18), (x + 28, 18)], style))?;
        area.draw(&Circle::new(
            (x + 14, 18),
            3,
            ShapeStyle::from(color).filled(),
        ))?;
        area.draw_text(name, &font, (x + 34, 10))?;
        x += 50 + 6 * name.chars().count() as i32;
    }
    Ok(())
}
