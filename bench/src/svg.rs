//! Line plots as hand-built SVG: a grid of panels, each with its axes
//! (linear or log), ticks, one polyline with markers per series and a
//! legend. Enough for the scaling curves; no plotting dependency.

use std::fmt::Write;

/// One line of a panel.
pub(super) struct Series {
    pub(super) name: String,
    /// (x, y) pairs, in x order.
    pub(super) points: Vec<(f64, f64)>,
}

/// One plot.
pub(super) struct Panel {
    pub(super) title: String,
    pub(super) x_label: String,
    pub(super) y_label: String,
    pub(super) x_log: bool,
    pub(super) y_log: bool,
    pub(super) series: Vec<Series>,
}

const PANEL_W: f64 = 400.0;
const PANEL_H: f64 = 330.0;
/// Room around the plot area: left (y ticks), right, top (title), bottom
/// (x ticks, x label, then up to three legend lines).
const MARGIN: (f64, f64, f64, f64) = (62.0, 16.0, 34.0, 96.0);
/// Where the x label's baseline is, below the plot area.
const X_LABEL_BELOW: f64 = 32.0;
const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// The panels in rows of `columns`, as one SVG document.
pub(super) fn render(panels: &[Panel], columns: usize) -> String {
    let columns = columns.max(1);
    let rows = panels.len().div_ceil(columns);
    let (w, h) = (PANEL_W * columns as f64, PANEL_H * rows as f64);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    );
    for (i, p) in panels.iter().enumerate() {
        let (col, row) = (i % columns, i / columns);
        let _ = writeln!(
            s,
            "<g transform=\"translate({},{})\">",
            col as f64 * PANEL_W,
            row as f64 * PANEL_H
        );
        s += &panel(p);
        s += "</g>\n";
    }
    s + "</svg>\n"
}

/// One axis: its range in plot units (log10 of the value on a log axis).
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    /// The axis over `values`: whole decades when log; from 0 (or the
    /// lowest value, for x) to a little over the highest when linear.
    fn over(values: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> Axis {
        let v: Vec<f64> = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (min, max) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        if v.is_empty() {
            return Axis {
                log,
                lo: 0.0,
                hi: 1.0,
            };
        }
        if log {
            let (lo, hi) = (nice_125(min, true).log10(), nice_125(max, false).log10());
            return Axis {
                log,
                lo,
                hi: if hi > lo { hi } else { lo + 1.0 },
            };
        }
        let lo = if from_zero { min.min(0.0) } else { min };
        let hi = if from_zero { max * 1.08 } else { max };
        Axis {
            log,
            lo,
            hi: if hi > lo { hi } else { lo + 1.0 },
        }
    }

    /// Where `v` falls, from 0 (lo) to 1 (hi).
    fn at(&self, v: f64) -> f64 {
        let u = if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        };
        (u - self.lo) / (self.hi - self.lo)
    }

    /// The values to mark.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let steps: &[f64] = match self.hi - self.lo <= 2.5 {
                true => &[1.0, 2.0, 5.0],
                false => &[1.0],
            };
            let (lo, hi) = (10f64.powf(self.lo) * 0.9999, 10f64.powf(self.hi) * 1.0001);
            let decades = self.lo.floor() as i32..=self.hi.ceil() as i32;
            let all = decades.flat_map(|d| steps.iter().map(move |m| m * 10f64.powi(d)));
            return all.filter(|v| (lo..=hi).contains(v)).collect();
        }
        let step = nice_step((self.hi - self.lo) / 5.0);
        let first = (self.lo / step).ceil() as i64;
        let last = (self.hi / step).floor() as i64;
        (first..=last).map(|k| k as f64 * step).collect()
    }
}

/// The largest 1, 2 or 5 times a power of ten at or below `v` (`down`),
/// or the smallest at or above it.
fn nice_125(v: f64, down: bool) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0].map(|m| m * p);
    if down {
        steps
            .into_iter()
            .rev()
            .find(|s| *s <= v * 1.000001)
            .unwrap_or(p)
    } else {
        steps
            .into_iter()
            .find(|s| *s >= v / 1.000001)
            .unwrap_or(10.0 * p)
    }
}

/// 1, 2 or 5 times a power of ten, near `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.max(f64::MIN_POSITIVE).log10().floor());
    match raw / p {
        r if r < 1.5 => p,
        r if r < 3.5 => 2.0 * p,
        r if r < 7.5 => 5.0 * p,
        _ => 10.0 * p,
    }
}

/// A tick label: short, with k and M.
fn short(v: f64) -> String {
    let a = v.abs();
    let (n, unit) = match a {
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if n.fract().abs() < 1e-9 {
        0
    } else if n.abs() < 10.0 {
        1
    } else {
        0
    };
    format!("{n:.digits$}{unit}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The plot area: its left, top, width and height within the panel.
fn area() -> (f64, f64, f64, f64) {
    let (l, r, t, b) = MARGIN;
    (l, t, PANEL_W - l - r, PANEL_H - t - b)
}

fn panel(p: &Panel) -> String {
    let all = || p.series.iter().flat_map(|s| s.points.iter());
    let x = Axis::over(all().map(|pt| pt.0), p.x_log, false);
    let y = Axis::over(all().map(|pt| pt.1), p.y_log, true);
    let mut s = frame(p);
    s += &x_ticks(&x);
    s += &y_ticks(&y);
    for (i, series) in p.series.iter().enumerate() {
        s += &line(series, &x, &y, COLORS[i % COLORS.len()]);
    }
    s += &legend(&p.series);
    s
}

/// Title, axis labels and the box.
fn frame(p: &Panel) -> String {
    let (l, t, w, h) = area();
    format!(
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
         <text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n\
         <rect x=\"{l}\" y=\"{t}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"#444\"/>\n",
        PANEL_W / 2.0,
        escape(&p.title),
        l + w / 2.0,
        t + h + X_LABEL_BELOW,
        escape(&p.x_label),
        t + h / 2.0,
        escape(&p.y_label),
    )
}

fn x_ticks(x: &Axis) -> String {
    let (l, t, w, h) = area();
    let mut s = String::new();
    for v in x.ticks() {
        let px = l + x.at(v) * w;
        let _ = writeln!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{t}\" x2=\"{px:.1}\" y2=\"{}\" stroke=\"#ddd\"/>\
             <text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            t + h,
            t + h + 14.0,
            short(v)
        );
    }
    s
}

fn y_ticks(y: &Axis) -> String {
    let (l, t, w, h) = area();
    let mut s = String::new();
    for v in y.ticks() {
        let py = t + h - y.at(v) * h;
        let _ = writeln!(
            s,
            "<line x1=\"{l}\" y1=\"{py:.1}\" x2=\"{}\" y2=\"{py:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            l + w,
            l - 4.0,
            py + 4.0,
            short(v)
        );
    }
    s
}

/// A series as a polyline with a dot at each point.
fn line(series: &Series, x: &Axis, y: &Axis, color: &str) -> String {
    let (l, t, w, h) = area();
    let at = |(vx, vy): (f64, f64)| (l + x.at(vx) * w, t + h - y.at(vy) * h);
    let points: Vec<(f64, f64)> = series.points.iter().copied().map(at).collect();
    let path: Vec<String> = points
        .iter()
        .map(|(a, b)| format!("{a:.1},{b:.1}"))
        .collect();
    let mut s = format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>\n",
        path.join(" ")
    );
    for (a, b) in points {
        let _ = writeln!(
            s,
            "<circle cx=\"{a:.1}\" cy=\"{b:.1}\" r=\"3\" fill=\"{color}\"/>"
        );
    }
    s
}

/// The series' names, one a line under the x label.
fn legend(series: &[Series]) -> String {
    let (l, t, _, h) = area();
    let mut s = String::new();
    for (i, x) in series.iter().enumerate() {
        let y = t + h + X_LABEL_BELOW + 18.0 + i as f64 * 15.0;
        let _ = writeln!(
            s,
            "<rect x=\"{l}\" y=\"{}\" width=\"14\" height=\"3\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{y}\">{}</text>",
            y - 4.0,
            COLORS[i % COLORS.len()],
            l + 20.0,
            escape(&x.name)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_end_on_1_2_5_and_mark_decades() {
        let a = Axis::over([300.0, 1_048_576.0].into_iter(), true, false);
        assert_eq!((a.lo, a.hi), (200f64.log10(), 2e6f64.log10()));
        assert_eq!(a.ticks(), vec![1e3, 1e4, 1e5, 1e6]);
        let b = Axis::over([1.0, 100.0].into_iter(), true, false);
        assert_eq!(b.ticks(), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::over([1.0, 20.0].into_iter(), false, false);
        assert_eq!(a.ticks(), vec![5.0, 10.0, 15.0, 20.0]);
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(20.0), "20");
    }

    #[test]
    fn a_panel_renders_one_polyline_per_series() {
        let p = Panel {
            title: "t <1>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: false,
            y_log: true,
            series: vec![Series {
                name: "a & b".into(),
                points: vec![(1.0, 10.0), (2.0, 100.0)],
            }],
        };
        let svg = render(&[p], 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("t &lt;1&gt;") && svg.contains("a &amp; b"));
    }
}
