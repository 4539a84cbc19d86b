//! The health page's plots as plain geometry that a template turns into
//! inline SVG (escaped like any other text): horizontal bars for a value
//! per label and polylines for series over time. Pure.
//!
//! In: labelled values or dated series. Out: coordinates. Touches nothing.

use serde::Serialize;

/// Width of every plot (SVG user units).
pub const WIDTH: f64 = 640.0;

/// One horizontal bar.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bar {
    /// Label (left of the bar).
    pub label: String,
    /// The value as printed.
    pub value: String,
    /// Top edge.
    pub y: f64,
    /// Length.
    pub w: f64,
}

/// A bar chart.
#[derive(Debug, Clone, Serialize)]
pub struct Bars {
    /// Element id prefix (for the SVG's title).
    pub id: String,
    /// The plot's accessible title.
    pub title: String,
    /// Bars, top to bottom.
    pub bars: Vec<Bar>,
    /// Total height.
    pub height: f64,
    /// Where bars start (after the labels).
    pub x0: f64,
    /// One bar's height.
    pub bar_h: f64,
}

/// Bars of `rows` (label, value), longest value = full width.
pub fn bars(id: &str, title: &str, rows: &[(String, f64)], fmt: impl Fn(f64) -> String) -> Bars {
    let (x0, bar_h, gap) = (200.0, 18.0, 6.0);
    let max = rows.iter().map(|r| r.1).fold(0.0_f64, f64::max);
    let span = WIDTH - x0 - 80.0;
    let bars = rows
        .iter()
        .enumerate()
        .map(|(i, (label, v))| Bar {
            label: label.clone(),
            value: fmt(*v),
            y: i as f64 * (bar_h + gap),
            w: if max > 0.0 { (v / max * span).max(1.0) } else { 1.0 },
        })
        .collect::<Vec<_>>();
    let height = (bars.len() as f64 * (bar_h + gap)).max(bar_h);
    Bars { id: id.to_string(), title: title.to_string(), height, bars, x0, bar_h }
}

/// One series of a line plot.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Line {
    /// Its name (the legend).
    pub name: String,
    /// `x,y x,y ...` for `<polyline points>`.
    pub points: String,
    /// The last value as printed.
    pub last: String,
    /// Palette index (0..6), for its CSS class.
    pub color: usize,
}

/// A line plot of several series over a shared x axis.
#[derive(Debug, Clone, Serialize)]
pub struct Lines {
    /// The series.
    pub lines: Vec<Line>,
    /// Plot height.
    pub height: f64,
    /// First and last x labels (dates).
    pub from: String,
    /// Last x label.
    pub to: String,
    /// The top of the y axis as printed.
    pub top: String,
}

/// A named series of (x label, y) points, x sorted.
pub type Series = (String, Vec<(String, f64)>);

/// Lines of `series` (name, [(x label, y)]) over the x labels `xs`
/// (sorted); a series holds its last value between its points (a step).
pub fn lines(xs: &[String], series: &[Series]) -> Lines {
    let height = 200.0;
    let max = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0_f64, f64::max);
    let n = xs.len().max(2) - 1;
    let x_of = |i: usize| 40.0 + i as f64 * (WIDTH - 120.0) / n as f64;
    let y_of = |v: f64| if max > 0.0 { height - v / max * (height - 10.0) } else { height };
    let lines = series
        .iter()
        .enumerate()
        .map(|(c, (name, pts))| {
            let mut out = vec![];
            let mut cur = 0.0;
            let mut j = 0;
            for (i, x) in xs.iter().enumerate() {
                while j < pts.len() && pts[j].0 <= *x {
                    cur = pts[j].1;
                    j += 1;
                }
                out.push(format!("{:.1},{:.1}", x_of(i), y_of(cur)));
            }
            if xs.len() == 1 {
                // One day: a level line across the plot (a point draws nothing).
                out.push(format!("{:.1},{:.1}", x_of(1), y_of(cur)));
            }
            Line { name: name.clone(), points: out.join(" "), last: format!("{cur}"), color: c % 6 }
        })
        .collect();
    Lines {
        lines,
        height,
        from: xs.first().cloned().unwrap_or_default(),
        to: xs.last().cloned().unwrap_or_default(),
        top: format!("{max}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_longest() {
        let b = bars("t", "T", &[("a".into(), 2.0), ("b".into(), 1.0), ("c".into(), 0.0)], |v| format!("{v:.1}"));
        assert_eq!(b.bars.len(), 3);
        assert_eq!(b.bars[0].w, WIDTH - 280.0);
        assert_eq!(b.bars[1].w, (WIDTH - 280.0) / 2.0);
        assert_eq!(b.bars[2].w, 1.0, "a zero still shows");
        assert_eq!(b.bars[1].value, "1.0");
        assert!(b.bars[1].y > b.bars[0].y);
        assert_eq!(bars("t", "T", &[], |v| v.to_string()).bars.len(), 0);
    }

    #[test]
    fn lines_step_between_points() {
        let xs: Vec<String> = ["d1", "d2", "d3"].iter().map(|s| s.to_string()).collect();
        let l = lines(&xs, &[("docs".into(), vec![("d1".into(), 10.0), ("d3".into(), 20.0)])]);
        let pts: Vec<&str> = l.lines[0].points.split(' ').collect();
        assert_eq!(pts.len(), 3);
        assert_eq!(pts[0].split(',').nth(1), pts[1].split(',').nth(1), "held between points");
        assert_eq!(pts[2], "560.0,10.0", "the maximum at the top");
        assert_eq!(l.lines[0].last, "20");
        assert_eq!((l.from.as_str(), l.to.as_str()), ("d1", "d3"));
        let one = lines(&xs[..1], &[("docs".into(), vec![("d1".into(), 5.0)])]);
        assert_eq!(one.lines[0].points, "40.0,10.0 560.0,10.0", "one day is still a line");
    }
}
