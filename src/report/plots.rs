//! The report's figures as SVG text (plotters' SVG backend, its naive font
//! metrics: the browser draws the text). Each returns `None` when the study
//! has nothing to show in it yet, so a report of a study still searching
//! leaves out the figures of its later stages.

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::markdown::MEMORY_PARTS;
use crate::outcome::{StudyOutcome, Transfer, Verdict};
use crate::record::{Objective, Stage, TrialRecord};
use crate::space::{Domain, Space};

const WIDTH: u32 = 760;
const HEIGHT: u32 = 340;
const FONT: &str = "sans-serif";
const DEFAULTS: RGBColor = RGBColor(120, 120, 120);
const OK: RGBColor = RGBColor(31, 119, 180);
const BEST: RGBColor = RGBColor(214, 39, 40);
const SEED: RGBColor = RGBColor(44, 160, 44);
const RACE: RGBColor = RGBColor(255, 127, 14);
/// Colours of the memory parts, in `MEMORY_PARTS` order.
const PARTS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(190, 190, 190),
];

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// An SVG of `height` pixels drawn by `draw`; `None` if drawing failed
/// (plotters refuses, say, an empty range), which leaves the figure out.
fn svg(height: u32, draw: impl FnOnce(&Area) -> Drawn) -> Option<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        draw(&root).ok()?;
        root.present().ok()?;
    }
    Some(text)
}

/// A chart's frame on `root`: its caption, and room for the axes' labels
/// (`y_labels` pixels on the left).
fn frame<'a, 'b>(
    root: &'a Area<'b>,
    caption: impl AsRef<str>,
    y_labels: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(caption.as_ref(), (FONT, 15))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(y_labels);
    builder
}

/// The chart's legend at `position`, over a pale box.
fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Drawn {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// A range around `values` with a margin, never empty.
fn span(values: impl IntoIterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let (mut low, mut high) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if !low.is_finite() {
        return 0.0..1.0;
    }
    if from_zero {
        low = low.min(0.0);
    }
    let pad = ((high - low) * 0.08).max(high.abs() * 0.02).max(1e-9);
    high += pad;
    if !from_zero {
        low -= pad;
    }
    low..high
}

/// A figure as people read it: thousands and millions shortened.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn axis_label(objective: &Objective) -> String {
    format!("{objective} ({})", objective.unit())
}

/// The search's trials in order, each with its objective (failed ones none).
fn search_points(outcome: &StudyOutcome) -> Vec<(usize, &TrialRecord, Option<f64>)> {
    let objective = &outcome.header.objectives[0];
    outcome
        .trials
        .iter()
        .filter(|t| t.stage == Stage::Search)
        .enumerate()
        .map(|(i, t)| (i, t, objective.value(&t.measurement)))
        .collect()
}

/// After each search trial that succeeded, the best objective so far.
fn best_so_far(outcome: &StudyOutcome) -> Vec<(f64, f64)> {
    let objective = &outcome.header.objectives[0];
    let mut best: Option<f64> = None;
    search_points(outcome)
        .iter()
        .filter_map(|(i, _, v)| {
            let v = (*v)?;
            let b = match best {
                Some(b) if objective.merit_of(b) >= objective.merit_of(v) => b,
                _ => v,
            };
            best = Some(b);
            Some((*i as f64, b))
        })
        .collect()
}

/// The best-so-far lines of several studies on one chart (`kvtune report
/// --compare`): which search got where, in how many trials; `None` unless
/// they all tuned the same dataset for the same objective.
pub fn histories(studies: &[(&str, &StudyOutcome)]) -> Option<String> {
    // One axis only holds studies that measured the same thing.
    let objective = &studies.first()?.1.header.objectives[0];
    let comparable = |o: &StudyOutcome| {
        &o.header.objectives[0] == objective && o.header.dataset.name == studies[0].1.header.dataset.name
    };
    if !studies.iter().all(|(_, o)| comparable(o)) {
        return None;
    }
    let lines: Vec<(&str, Vec<(f64, f64)>)> = studies.iter().map(|(l, o)| (*l, best_so_far(o))).collect();
    let trials = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0)).fold(1.0, f64::max);
    svg(HEIGHT, |root| {
        let mut chart = frame(root, "Best so far, study by study (one run each)", 60).build_cartesian_2d(
            -0.5..trials + 0.5,
            span(lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.1)), false),
        )?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("search trial")
            .y_desc(axis_label(objective))
            .y_label_formatter(&|v| short(*v))
            .draw()?;
        for (k, (label, line)) in lines.iter().enumerate() {
            let colour = [BEST, OK, SEED, RACE][k % 4];
            chart
                .draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))?
                .label(*label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], colour.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// The optimisation history: each search trial's objective by origin, the
/// best so far, and the band the defaults' runs span.
pub fn history(outcome: &StudyOutcome) -> Option<String> {
    let objective = &outcome.header.objectives[0];
    let points = search_points(outcome);
    if points.iter().all(|(_, _, v)| v.is_none()) {
        return None;
    }
    let defaults: Vec<f64> = outcome
        .trials
        .iter()
        .filter(|t| t.is_default && matches!(t.stage, Stage::Search | Stage::Race | Stage::Confirm))
        .filter_map(|t| objective.value(&t.measurement))
        .collect();
    let values: Vec<f64> = points.iter().filter_map(|p| p.2).chain(defaults.iter().copied()).collect();
    let best_line = best_so_far(outcome);
    let data = span(values.iter().copied(), false);
    let floor = data.start;
    // The lower third is left free for the legend.
    let below = data.start - (data.end - data.start) * 0.6;
    let y = if data.start >= 0.0 { below.max(0.0) } else { below }..data.end;
    svg(HEIGHT, |root| {
        let x = -0.5..(points.len() as f64 - 0.5).max(1.0);
        let mut chart = frame(root, "Search history (one run each; racing reruns not shown)", 60)
            .build_cartesian_2d(x.clone(), y)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("search trial")
            .y_desc(axis_label(objective))
            .y_label_formatter(&|v| short(*v))
            .draw()?;
        if let (Some(low), Some(high)) =
            (defaults.iter().copied().reduce(f64::min), defaults.iter().copied().reduce(f64::max))
        {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x.start, low), (x.end, high)],
                    DEFAULTS.mix(0.2).filled(),
                )))?
                .label("defaults' runs (range)")
                .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], DEFAULTS.mix(0.3).filled()));
        }
        chart
            .draw_series(LineSeries::new(best_line.clone(), BEST.stroke_width(2)))?
            .label("best so far")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], BEST.stroke_width(2)));
        for (name, colour, pick) in [
            (
                "seeds and defaults",
                SEED,
                (|t: &TrialRecord| t.is_default || t.origin.starts_with("seed:")) as fn(&TrialRecord) -> bool,
            ),
            ("design and model", OK, |t: &TrialRecord| !(t.is_default || t.origin.starts_with("seed:"))),
        ] {
            let dots =
                points.iter().filter(|(_, t, _)| pick(t)).filter_map(|(i, _, v)| Some((*i as f64, (*v)?)));
            chart
                .draw_series(dots.map(|p| Circle::new(p, 4, colour.filled())))?
                .label(name)
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
        }
        let failed = points.iter().filter(|(_, _, v)| v.is_none()).map(|(i, _, _)| (*i as f64, floor));
        chart
            .draw_series(failed.map(|p| Cross::new(p, 4, BLACK.stroke_width(2))))?
            .label("failed, rejected or pruned")
            .legend(|(x, y)| Cross::new((x + 6, y), 4, BLACK.stroke_width(2)));
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// Horizontal bars, one per labelled share, largest on top.
fn bars(caption: &str, rows: &[(String, f64)], x_desc: &str) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let height = 60 + 26 * rows.len() as u32;
    let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    svg(height, |root| {
        let n = rows.len() as f64;
        let mut chart = frame(root, caption, 280)
            .build_cartesian_2d(span(rows.iter().map(|r| r.1), true), -0.5..n - 0.5)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_y_mesh()
            .y_labels(rows.len())
            .y_label_formatter(&|y| {
                let i = (n - 1.0 - y.round()) as usize;
                if (y - y.round()).abs() < 1e-6 {
                    labels.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .draw()?;
        chart.draw_series(rows.iter().enumerate().map(|(i, (_, v))| {
            let y = n - 1.0 - i as f64;
            Rectangle::new([(0.0, y - 0.35), (*v, y + 0.35)], OK.filled())
        }))?;
        Ok(())
    })
}

/// Each parameter's share of the explained variation.
pub fn importances(outcome: &StudyOutcome) -> Option<String> {
    let rows: Vec<(String, f64)> = outcome.importances.iter().map(|(n, s)| (n.clone(), s * 100.0)).collect();
    bars("Parameter importance (share of the model's explained variation)", &rows, "% of variation")
}

/// Slice plots: the objective of each search trial against the value of
/// each of the most important parameters, defaults marked.
pub fn slices(outcome: &StudyOutcome, space: &Space, most: usize) -> Vec<(String, String)> {
    let objective = &outcome.header.objectives[0];
    let points = search_points(outcome);
    let names: Vec<&String> = outcome.importances.iter().take(most).map(|(n, _)| n).collect();
    names
        .into_iter()
        .filter_map(|name| {
            let param = space.params.iter().find(|p| &p.name == name)?;
            let at = space.params.iter().position(|p| &p.name == name)?;
            let dots: Vec<(f64, f64, bool)> = points
                .iter()
                .filter_map(|(_, t, v)| Some((space.encode(&t.candidate)[at], (*v)?, t.is_default)))
                .collect();
            let choices = match &param.domain {
                Domain::Choice { values } => Some(values.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
                _ => None,
            };
            let y = span(dots.iter().map(|d| d.1), false);
            let figure = svg(HEIGHT - 60, |root| {
                let mut chart = frame(root, name.as_str(), 60).build_cartesian_2d(0.0..1.0, y.clone())?;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE)
                    .x_labels(if choices.is_some() { 0 } else { 6 })
                    .x_label_formatter(&|x| unit_label(space, at, *x))
                    .y_label_formatter(&|v| short(*v))
                    .y_desc(axis_label(objective))
                    .draw()?;
                // A choice's values, each under the column of its trials.
                let labels = choices.iter().flat_map(|values| {
                    values.iter().enumerate().map(|(i, v)| {
                        let x = (i as f64 + 0.5) / values.len() as f64;
                        let centred = TextStyle::from((FONT, 13)).pos(Pos::new(HPos::Center, VPos::Center));
                        Text::new(v.clone(), (x, y.start + (y.end - y.start) * 0.05), centred)
                    })
                });
                chart.draw_series(labels)?;
                chart.draw_series(dots.iter().map(|&(x, y, default)| {
                    let colour = if default { SEED } else { OK };
                    Circle::new((x, y), 4, colour.mix(0.75).filled())
                }))?;
                Ok(())
            })?;
            Some((name.clone(), figure))
        })
        .collect()
}

/// The value of parameter `at` at `x` of its unit range, for an axis.
fn unit_label(space: &Space, at: usize, x: f64) -> String {
    space.params[at].decode(x).to_string()
}

/// Throughput against disk size per search trial, the front of the ones no
/// other beats on both marked: the bz1 seed's question of speed against bytes.
pub fn speed_and_size(outcome: &StudyOutcome) -> Option<String> {
    let per_unit =
        outcome.trials.iter().find_map(|t| t.measurement.bytes_per_unit.as_ref().map(|(u, _)| u.clone()));
    let size = |t: &TrialRecord| match (&per_unit, &t.measurement.bytes_per_unit) {
        (Some(_), Some((_, b))) => Some(*b),
        (None, _) => t.measurement.bytes_per_key.or(Some(t.measurement.disk_bytes as f64 / (1 << 20) as f64)),
        _ => None,
    };
    let x_desc = match (&per_unit, outcome.trials.iter().any(|t| t.measurement.bytes_per_key.is_some())) {
        (Some(unit), _) => format!("disk bytes per {unit}"),
        (None, true) => "disk bytes per key".to_string(),
        (None, false) => "disk MiB".to_string(),
    };
    let dots: Vec<(f64, f64, bool)> = outcome
        .trials
        .iter()
        .filter(|t| t.stage == Stage::Search && t.measurement.ok() && t.measurement.ops_per_sec > 0.0)
        .filter_map(|t| Some((size(t)?, t.measurement.ops_per_sec, t.is_default)))
        .collect();
    if dots.len() < 2 {
        return None;
    }
    let mut front: Vec<(f64, f64)> = dots
        .iter()
        .filter(|(s, o, _)| !dots.iter().any(|(s2, o2, _)| s2 <= s && o2 >= o && (s2 < s || o2 > o)))
        .map(|(s, o, _)| (*s, *o))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    svg(HEIGHT, |root| {
        let mut chart = frame(root, "Speed against size on disk (search trials; green: defaults; red: nothing both faster and smaller)", 60).build_cartesian_2d(span(dots.iter().map(|d| d.0), false), span(dots.iter().map(|d| d.1), false))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_desc(x_desc.as_str())
            .y_desc("ops/s")
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .draw()?;
        chart.draw_series(
            dots.iter().map(|&(s, o, d)| Circle::new((s, o), 4, if d { SEED } else { OK }.mix(0.7).filled())),
        )?;
        chart.draw_series(LineSeries::new(front, BEST.stroke_width(2)))?;
        Ok(())
    })
}

/// Grouped bars: one group per label, one bar per series.
fn grouped(
    caption: &str,
    groups: &[String],
    series: &[(String, Vec<f64>)],
    y_desc: &str,
    log: bool,
) -> Option<String> {
    if groups.is_empty() || series.is_empty() {
        return None;
    }
    let colours = [BEST, DEFAULTS, OK, SEED];
    let values = series.iter().flat_map(|s| s.1.iter().copied()).filter(|v| *v > 0.0);
    let to_y = |v: f64| if log { v.max(1e-9).log10() } else { v };
    let range = span(values.map(to_y), !log);
    svg(HEIGHT, |root| {
        let n = groups.len() as f64;
        let mut chart = frame(root, caption, 60).build_cartesian_2d(-0.5..n - 0.5, range.clone())?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_x_mesh()
            .x_labels(groups.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    groups.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| short(if log { 10f64.powf(*v) } else { *v }))
            .y_desc(y_desc)
            .draw()?;
        let width = 0.8 / series.len() as f64;
        for (k, (name, values)) in series.iter().enumerate() {
            let colour = colours[k % colours.len()];
            chart
                .draw_series(values.iter().enumerate().filter(|(_, v)| **v > 0.0).map(|(g, v)| {
                    let left = g as f64 - 0.4 + k as f64 * width;
                    Rectangle::new([(left, range.start), (left + width * 0.9, to_y(*v))], colour.filled())
                }))?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// Per-phase throughput and latency percentiles of the shown runs (the
/// recommendation's and the defaults' median confirmation runs).
pub fn phases(runs: &[&TrialRecord]) -> Vec<String> {
    let Some(first) = runs.first() else { return vec![] };
    let groups: Vec<String> = first.measurement.phases.iter().map(|p| p.name.clone()).collect();
    let per_phase = |read: &dyn Fn(&crate::record::PhaseResult) -> f64| -> Vec<(String, Vec<f64>)> {
        runs.iter()
            .map(|r| {
                let values = groups
                    .iter()
                    .map(|g| r.measurement.phases.iter().find(|p| &p.name == g).map_or(0.0, read))
                    .collect();
                (r.label.clone(), values)
            })
            .collect()
    };
    let throughput = grouped("Throughput by phase", &groups, &per_phase(&|p| p.ops_per_sec), "ops/s", false);
    let mut latency_groups = vec![];
    let mut latency: Vec<(String, Vec<f64>)> = runs.iter().map(|r| (r.label.clone(), vec![])).collect();
    for g in &groups {
        for (name, read) in [("p50", 0), ("p99", 1), ("p99.9", 2)] {
            latency_groups.push(format!("{g} {name}"));
            for (k, r) in runs.iter().enumerate() {
                let l = r.measurement.phases.iter().find(|p| &p.name == g).map(|p| p.latency.clone());
                latency[k].1.push(l.map_or(0.0, |l| [l.p50_us, l.p99_us, l.p999_us][read]));
            }
        }
    }
    let latency = grouped("Latency by phase (log scale)", &latency_groups, &latency, "microseconds", true);
    throughput.into_iter().chain(latency).collect()
}

/// The budget split of each shown run, stacked, against the budget.
pub fn memory(runs: &[&TrialRecord], budget: u64) -> Option<String> {
    if runs.is_empty() || runs.iter().all(|r| r.measurement.peak_anon == 0) {
        return None;
    }
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    let most = runs
        .iter()
        .map(|r| mib(r.measurement.peak_anon + r.measurement.peak_page_cache))
        .fold(mib(budget), f64::max);
    svg(120 + 50 * runs.len() as u32, |root| {
        let n = runs.len() as f64;
        let mut chart = frame(
            root,
            "Where the budget went: MiB, each part at its own peak (the line is the budget)",
            140,
        )
        .build_cartesian_2d(0.0..most * 2.0, -0.5..n - 0.5)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_y_mesh()
            .y_labels(runs.len())
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 {
                    runs.get(i as usize).map(|r| r.label.clone()).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (k, (name, read)) in MEMORY_PARTS.iter().enumerate() {
            let colour = PARTS[k % PARTS.len()];
            let bars = runs.iter().enumerate().map(|(i, r)| {
                let start: u64 = MEMORY_PARTS[..k].iter().map(|(_, f)| f(&r.measurement)).sum();
                let end = start + read(&r.measurement);
                Rectangle::new([(mib(start), i as f64 - 0.3), (mib(end), i as f64 + 0.3)], colour.filled())
            });
            chart
                .draw_series(bars)?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(mib(budget), -0.5), (mib(budget), n - 0.5)],
            BLACK.stroke_width(2),
        )))?;
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// Each contender's change against the defaults beside it in the rounds,
/// with its 95% interval, and the smallest change the rounds could show.
pub fn confirmation(v: &Verdict) -> Option<String> {
    let rows: Vec<(String, f64, f64, f64)> = v
        .contenders
        .iter()
        .filter_map(|c| {
            let p = c.paired?;
            Some((c.label.clone(), p.change.point * 100.0, p.change.low * 100.0, p.change.high * 100.0))
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let recommended = v.recommended().label.clone();
    let mde = v.min_detectable_change.map(|m| m * 100.0);
    interval_rows(
        "Confirmation: change against the defaults (paired rounds, 95% CI; grey: what the rounds can resolve)",
        &rows,
        Some(&recommended),
        mde,
        "% change of the objective's merit",
    )
}

/// Rows of a point with an interval around it, 0 marked, one row per label.
fn interval_rows(
    caption: &str,
    rows: &[(String, f64, f64, f64)],
    highlight: Option<&str>,
    band: Option<f64>,
    x_desc: &str,
) -> Option<String> {
    let height = 80 + 40 * rows.len() as u32;
    svg(height, |root| {
        let n = rows.len() as f64;
        let values =
            rows.iter().flat_map(|r| [r.2, r.3]).chain([0.0]).chain(band.into_iter().flat_map(|b| [b, -b]));
        let mut chart = frame(root, caption, 140).build_cartesian_2d(span(values, false), -0.5..n - 0.5)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_y_mesh()
            .y_labels(rows.len())
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 {
                    rows.get(i as usize).map(|r| r.0.clone()).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .draw()?;
        if let Some(b) = band {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(-b, -0.5), (b, n - 0.5)],
                DEFAULTS.mix(0.15).filled(),
            )))?;
        }
        chart.draw_series(std::iter::once(PathElement::new(vec![(0.0, -0.5), (0.0, n - 0.5)], BLACK)))?;
        for (i, (label, point, low, high)) in rows.iter().enumerate() {
            let colour = if highlight == Some(label.as_str()) { BEST } else { OK };
            let y = i as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(*low, y), (*high, y)],
                colour.stroke_width(3),
            )))?;
            chart.draw_series(std::iter::once(Circle::new((*point, y), 6, colour.filled())))?;
        }
        Ok(())
    })
}

/// Each contender's merit over the defaults at the study's scale and at the
/// larger one: a line that stays above 1 is a result that holds.
pub fn transfer(t: &Transfer) -> Option<String> {
    let rows: Vec<(String, f64, f64)> = t
        .rows
        .iter()
        .filter_map(|r| Some((r.label.clone(), r.ratio_at_study_scale?, r.ratio_at_larger_scale?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let larger = t.scale.to_string();
    svg(HEIGHT - 40, |root| {
        let mut chart =
            frame(root, format!("Merit over the defaults at the study's scale and at {larger}"), 60)
                .build_cartesian_2d(
                    -0.3..1.3,
                    span(rows.iter().flat_map(|r| [r.1, r.2]).chain([1.0]), false),
                )?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_x_mesh()
            .x_labels(3)
            .x_label_formatter(&|x: &f64| match x.round() as i64 {
                0 if x.abs() < 1e-6 => "study's scale".into(),
                1 if (x - 1.0).abs() < 1e-6 => format!("scale {larger}"),
                _ => String::new(),
            })
            .y_desc("ratio to the defaults")
            .draw()?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.3, 1.0), (1.3, 1.0)],
            DEFAULTS.stroke_width(1),
        )))?;
        for (k, (label, at_study, at_larger)) in rows.iter().enumerate() {
            let colour = [BEST, OK, SEED, RACE][k % 4];
            chart
                .draw_series(LineSeries::new([(0.0, *at_study), (1.0, *at_larger)], colour.stroke_width(2)))?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], colour.stroke_width(2)));
            chart.draw_series(
                [(0.0, *at_study), (1.0, *at_larger)].map(|p| Circle::new(p, 5, colour.filled())),
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}
