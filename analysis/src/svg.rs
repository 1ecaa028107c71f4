//! Small SVG charts for the HTML report: stacked columns over categories,
//! horizontal bars, and lines over numbers. Each chart is one `<svg>` element
//! with its axes, grid, labels and legend; text is drawn by the browser, so no
//! fonts are needed here.

use std::fmt::Write;

/// Chart size in SVG units (the page scales it to its width).
const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 52.0;

/// Ten colours from easy to hard (viridis), for tiers and other series.
pub const PALETTE: [&str; 10] = [
    "#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
    "#b5de2b", "#fde725",
];

/// Colour `index` of `n` from easy to hard: [`PALETTE`] stretched over `n`,
/// its anchors interpolated, so that 20 tiers get 20 distinct colours.
pub fn ramp(index: usize, n: usize) -> String {
    let t = if n <= 1 {
        0.0
    } else {
        index as f64 / (n - 1) as f64
    } * (PALETTE.len() - 1) as f64;
    let (lo, frac) = (t.floor() as usize, t.fract());
    let hi = (lo + 1).min(PALETTE.len() - 1);
    let rgb = |hex: &str| {
        let v = u32::from_str_radix(&hex[1..], 16).unwrap_or(0);
        [(v >> 16) & 255, (v >> 8) & 255, v & 255].map(f64::from)
    };
    let (a, b) = (rgb(PALETTE[lo]), rgb(PALETTE[hi]));
    let mix: Vec<String> = (0..3)
        .map(|i| format!("{:02x}", (a[i] + (b[i] - a[i]) * frac).round() as u8))
        .collect();
    format!("#{}", mix.concat())
}

/// One named series of values.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// One value per category (or per x).
    pub values: Vec<f64>,
    /// Fill or stroke colour.
    pub colour: String,
}

pub use pregen_pictures::escape;

/// Axis ticks from 0 covering `max`: steps of 1, 2 or 5 times a power of ten,
/// about five of them.
pub fn ticks(max: f64) -> Vec<f64> {
    ticks_between(0.0, max)
}

/// A round step of about a fifth of `span`: 1, 2 or 5 times a power of ten.
pub fn nice_step(span: f64, parts: f64) -> f64 {
    let rough = span / parts;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * power)
}

/// Axis ticks covering `lo..=hi` on round steps, the first at or below `lo`.
pub fn ticks_between(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return vec![0.0, 1.0];
    }
    let step = nice_step(hi - lo, 5.0);
    let first = (lo / step).floor();
    let n = ((hi / step).ceil() - first).max(1.0) as usize;
    (0..=n).map(|i| (first + i as f64) * step).collect()
}

/// A tick label: whole numbers plainly, others with up to three decimals.
fn label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Legend rows: where each series' key goes (x, row), wrapped to the width.
fn legend_layout(series: &[Series]) -> Vec<(f64, usize)> {
    if series.len() < 2 {
        return Vec::new();
    }
    let (mut x, mut row) = (LEFT, 0);
    series
        .iter()
        .map(|s| {
            let w = 24.0 + 6.5 * s.name.chars().count() as f64;
            if x + w > WIDTH - RIGHT && x > LEFT {
                (x, row) = (LEFT, row + 1);
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// The height a legend of `series` adds beyond its first row.
fn legend_extra(series: &[Series]) -> f64 {
    legend_layout(series)
        .last()
        .map_or(0.0, |&(_, row)| LEGEND_ROW * row as f64)
}

/// A legend row's height.
const LEGEND_ROW: f64 = 14.0;

/// The frame shared by every chart: the title, the y axis with its grid from
/// `y_lo` up to `y_hi` on round ticks, the axis titles, `extra` units of
/// legend rows above the plot. Returns the open `<svg>` and the y scale.
fn frame(
    title: &str,
    (x_title, y_title): (&str, &str),
    (y_lo, y_hi): (f64, f64),
    extra: f64,
) -> (String, impl Fn(f64) -> f64) {
    let ticks = ticks_between(y_lo, y_hi);
    let (bottom_value, top_value) = (ticks[0], *ticks.last().unwrap_or(&1.0));
    let (top, height) = (TOP + extra, HEIGHT + extra);
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = move |v: f64| top + plot_h * (1.0 - (v - bottom_value) / (top_value - bottom_value));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         role=\"img\" aria-label=\"{t}\" class=\"chart\">\n\
         <text x=\"{LEFT}\" y=\"20\" class=\"title\">{t}</text>\n",
        t = escape(title)
    );
    for &t in &ticks {
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(t) + 4.0,
            label(t),
            yy = y(t),
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n\
         <text transform=\"translate(14 {:.1}) rotate(-90)\" class=\"axis\" \
         text-anchor=\"middle\">{}</text>",
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        height - 8.0,
        escape(x_title),
        top + plot_h / 2.0,
        escape(y_title),
    );
    (svg, y)
}

/// The legend, in rows under the title (wrapped to the width), when there is
/// more than one series.
fn legend(svg: &mut String, series: &[Series]) {
    for (s, (x, row)) in series.iter().zip(legend_layout(series)) {
        let y = 27.0 + LEGEND_ROW * row as f64;
        let _ = writeln!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            s.colour,
            x + 13.0,
            y + 9.0,
            escape(&s.name),
        );
    }
}

/// Stacked columns: one column per category, each series a layer.
pub fn columns(
    title: &str,
    x_title: &str,
    y_title: &str,
    categories: &[String],
    series: &[Series],
) -> String {
    let totals: Vec<f64> = (0..categories.len())
        .map(|i| series.iter().filter_map(|s| s.values.get(i)).sum())
        .collect();
    let extra = legend_extra(series);
    let (mut svg, y) = frame(
        title,
        (x_title, y_title),
        (0.0, totals.iter().copied().fold(0.0, f64::max)),
        extra,
    );
    let n = categories.len().max(1) as f64;
    let slot = (WIDTH - LEFT - RIGHT) / n;
    let width = (slot * 0.8).max(1.0);
    // Label at most about 16 categories, evenly spaced.
    let every = (categories.len() as f64 / 16.0).ceil().max(1.0) as usize;
    for (i, category) in categories.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - width) / 2.0;
        let mut base = 0.0;
        for s in series {
            let v = s.values.get(i).copied().unwrap_or(0.0);
            if v > 0.0 {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"{:.1}\" \
                     fill=\"{}\" shape-rendering=\"crispEdges\"><title>{}: {} {}</title></rect>",
                    y(base + v),
                    y(base) - y(base + v),
                    s.colour,
                    escape(category),
                    label(v),
                    escape(&s.name),
                );
            }
            base += v;
        }
        if i % every == 0 {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                x + width / 2.0,
                HEIGHT + extra - BOTTOM + 16.0,
                escape(category),
            );
        }
    }
    legend(&mut svg, series);
    svg.push_str("</svg>\n");
    svg
}

/// Horizontal bars, one per row, longest first as given.
pub fn bars(title: &str, x_title: &str, rows: &[(String, f64)], colour: &str) -> String {
    let row_h = 22.0;
    let height = TOP + row_h * rows.len().max(1) as f64 + 40.0;
    // Room for the longest label (about 6.5 units a character), within reason.
    let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let label_w = (6.5 * longest as f64 + 12.0).clamp(120.0, 400.0);
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max);
    let ticks = ticks(max);
    let top_value = *ticks.last().unwrap_or(&1.0);
    let plot_w = WIDTH - label_w - RIGHT - 40.0;
    let x = |v: f64| label_w + plot_w * v / top_value;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         role=\"img\" aria-label=\"{t}\" class=\"chart\">\n\
         <text x=\"{LEFT}\" y=\"20\" class=\"title\">{t}</text>\n",
        t = escape(title)
    );
    let bottom = TOP + row_h * rows.len().max(1) as f64;
    for &t in &ticks {
        let _ = writeln!(
            svg,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{TOP}\" y2=\"{bottom:.1}\" class=\"grid\"/>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            bottom + 14.0,
            label(t),
            xx = x(t),
        );
    }
    for (i, (name, v)) in rows.iter().enumerate() {
        let top = TOP + row_h * i as f64;
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>{}: {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\">{}</text>",
            label_w - 6.0,
            top + 15.0,
            escape(name),
            top + 3.0,
            x(*v) - label_w,
            row_h - 6.0,
            escape(name),
            label(*v),
            x(*v) + 4.0,
            top + 15.0,
            label(*v),
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{}</text>",
        label_w + plot_w / 2.0,
        height - 8.0,
        escape(x_title),
    );
    svg.push_str("</svg>\n");
    svg
}

/// Lines over x (sorted ascending), with a dot at every point; the y axis
/// spans the values (from a round tick at or below the least, not from 0).
pub fn lines(title: &str, x_title: &str, y_title: &str, xs: &[f64], series: &[Series]) -> String {
    let values = || series.iter().flat_map(|s| s.values.iter().copied());
    let y_max = values().fold(f64::MIN, f64::max);
    let y_min = values().fold(f64::MAX, f64::min);
    let (y_lo, y_hi) = if y_max > y_min {
        (y_min, y_max)
    } else {
        (y_min - 1.0, y_min + 1.0)
    };
    let extra = legend_extra(series);
    let (mut svg, y) = frame(title, (x_title, y_title), (y_lo, y_hi), extra);
    let (lo, hi) = (
        xs.first().copied().unwrap_or(0.0),
        xs.last().copied().unwrap_or(1.0),
    );
    let span = if hi > lo { hi - lo } else { 1.0 };
    let plot_w = WIDTH - LEFT - RIGHT - 20.0;
    let x = |v: f64| LEFT + 10.0 + plot_w * (v - lo) / span;
    for &v in xs {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            x(v),
            HEIGHT + extra - BOTTOM + 16.0,
            label(v),
        );
    }
    for s in series {
        let points: Vec<String> = xs
            .iter()
            .zip(&s.values)
            .map(|(&a, &b)| format!("{:.1},{:.1}", x(a), y(b)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
            points.join(" "),
            s.colour,
        );
        for (&a, &b) in xs.iter().zip(&s.values) {
            let _ = writeln!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{}\"><title>{} at {}: {}</title></circle>",
                x(a),
                y(b),
                s.colour,
                escape(&s.name),
                label(a),
                label(b),
            );
        }
    }
    legend(&mut svg, series);
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(1234.0), vec![0.0, 500.0, 1000.0, 1500.0]);
        assert_eq!(ticks(0.07), vec![0.0, 0.02, 0.04, 0.06, 0.08]);
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
        assert_eq!(ticks(f64::NAN), vec![0.0, 1.0]);
        for max in [0.3, 7.0, 99.0, 1e6 + 1.0] {
            let t = ticks(max);
            assert!(
                *t.last().expect("ticks") >= max && t.len() <= 7,
                "{max}: {t:?}"
            );
        }
    }

    #[test]
    fn ticks_between_start_at_a_round_value_below_the_least() {
        assert_eq!(
            ticks_between(52.3, 58.9),
            vec![52.0, 54.0, 56.0, 58.0, 60.0]
        );
        assert_eq!(ticks_between(0.0, 10.0), ticks(10.0));
        assert_eq!(
            ticks_between(-3.0, 7.0),
            vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]
        );
    }

    #[test]
    fn twenty_tiers_get_twenty_colours_and_a_legend_that_fits() {
        let colours: std::collections::BTreeSet<String> = (0..20).map(|i| ramp(i, 20)).collect();
        assert_eq!(colours.len(), 20);
        assert_eq!(
            (ramp(0, 20), ramp(19, 20)),
            (PALETTE[0].into(), PALETTE[9].into())
        );
        let series: Vec<Series> = (1..=20)
            .map(|t| Series {
                name: format!("tier {t:02}"),
                values: vec![1.0],
                colour: ramp(t - 1, 20),
            })
            .collect();
        let layout = legend_layout(&series);
        assert!(
            layout
                .iter()
                .all(|&(x, _)| x + 24.0 + 6.5 * 7.0 <= WIDTH - RIGHT)
        );
        assert!(layout.last().is_some_and(|&(_, row)| row >= 1), "wrapped");
        let svg = columns("t", "x", "y", &["a".into()], &series);
        for s in &series {
            assert!(
                svg.contains(&format!(">{}<", s.name)),
                "{} in the legend",
                s.name
            );
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let svg = bars("R&D", "seeds", &[("too <short>".into(), 3.0)], "#000");
        assert!(svg.contains("too &lt;short&gt;") && !svg.contains("<short>"));
        assert!(svg.contains("R&amp;D"));
    }

    /// Column heights are proportional to the values, layers stack.
    #[test]
    fn columns_stack_in_proportion() {
        let svg = columns(
            "t",
            "x",
            "y",
            &["a".into(), "b".into()],
            &[
                Series {
                    name: "one".into(),
                    values: vec![2.0, 4.0],
                    colour: "#111".into(),
                },
                Series {
                    name: "two".into(),
                    values: vec![2.0, 0.0],
                    colour: "#222".into(),
                },
            ],
        );
        // The drawn columns are the rects with a tooltip (the legend's have none).
        let heights: Vec<f64> = svg
            .split("<rect ")
            .filter(|r| r.contains("<title>"))
            .filter_map(|r| r.split("height=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        // Three non-empty layers; the 0 value draws nothing.
        assert_eq!(heights.len(), 3, "{svg}");
        assert!((heights[0] - heights[1]).abs() < 0.11, "{heights:?}");
        assert!((heights[2] - 2.0 * heights[0]).abs() < 0.11, "{heights:?}");
        assert!(svg.contains(">one<") && svg.contains(">two<"), "legend");
    }
}
