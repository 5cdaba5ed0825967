//! What kvtune prints on a terminal: the answer first, then the evidence.

use std::fmt::Write;
use std::path::Path;

use crate::budget::ByteSize;
use crate::outcome::{Ablation, Comparison, MetricRow, StudyHeader, StudyOutcome, Transfer, Verdict, ALPHA};
use crate::record::{Better, Measurement, Neighbour, Objective};
use crate::stats::holm;

/// A relative change as a signed percentage: +12.3%.
pub fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// A p value as people quote it: "p = 0.012", "p < 0.001".
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// Operations per second with thousands separators: 12,345.
pub fn ops(x: f64) -> String {
    let whole = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 && c != '-' {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One sentence for people: what to use, how fast, how sure.
pub fn headline(v: &Verdict) -> String {
    let best = v.recommended();
    let s = &best.summary;
    let unit = v.objective.unit();
    let measured = format!(
        "{} {unit} (median of {} runs, 95% CI {} to {})",
        num(s.median.point),
        s.n,
        num(s.median.low),
        num(s.median.high)
    );
    match (v.defaults(), best.paired, best.p_adjusted) {
        (None, ..) => format!(
            "The defaults completed no confirmation run, so nothing could be compared with them; the best measured was {}: {measured}",
            best.label
        ),
        (Some(_), Some(paired), Some(p)) if v.beats_defaults => format!(
            "Use {}: {measured}, {} the defaults fitted to the budget (95% CI {}; paired t-test over {} rounds, Holm-corrected {})",
            best.label,
            change(&v.objective, paired.change.point),
            interval(&v.objective, paired.change.low, paired.change.high),
            paired.n,
            p_value(p)
        ),
        _ => format!(
            "No candidate beat the defaults significantly (p < {ALPHA}), so kvtune recommends the defaults, fitted to the budget: {measured}"
        ),
    }
}

/// A gain in an objective's merit as people read the objective: "+12.0% over"
/// or "3.0% under" for throughput, "10.7% lower than" for a latency or a size.
pub fn change(objective: &Objective, gain: f64) -> String {
    let value = value_change(objective, gain);
    let size = pct(value.abs()).trim_start_matches('+').to_string();
    match (objective.better(), value >= 0.0) {
        (Better::Lower, true) => format!("{size} higher than"),
        (Better::Lower, false) => format!("{size} lower than"),
        (_, true) => format!("{} over", pct(value)),
        (_, false) => format!("{size} under"),
    }
}

/// A confidence interval of a gain, as the objective's own change: "+17.1% to +40.1%".
pub fn interval(objective: &Objective, low: f64, high: f64) -> String {
    let (a, b) = (value_change(objective, low), value_change(objective, high));
    format!("{} to {}", pct(a.min(b)), pct(a.max(b)))
}

/// A gain in merit as the change in the objective's value (for a
/// lower-is-better objective, merit is the inverse ratio).
fn value_change(objective: &Objective, gain: f64) -> f64 {
    match objective.better() {
        Better::Lower => 1.0 / (1.0 + gain) - 1.0,
        _ => gain,
    }
}

/// What the confirmation could resolve, said before any gain is read.
pub fn resolution(v: &Verdict) -> Option<String> {
    let mde = v.min_detectable_change?;
    let rounds = v.contenders.iter().filter_map(|c| Some(c.paired?.n)).max()?;
    Some(format!(
        "With {rounds} paired rounds and the run-to-run noise measured here, the confirmation could resolve gains of about {} or more (80% power); smaller real gains may show as \"no difference\".",
        pct(mde).trim_start_matches('+')
    ))
}

/// The recommendation against the engine as it ships, the baseline
/// published tuners quote.
pub fn versus_baseline(v: &Verdict, header: &StudyHeader) -> Option<String> {
    let baseline = header.baseline.as_ref()?;
    let Some(paired) = v.over_baseline else {
        return Some(format!(
            "{} ({}) completed too few confirmation runs beside the recommendation to compare.",
            baseline.label, baseline.description
        ));
    };
    // Said plainly: a recommendation worse than the untuned engine is one
    // a user must not take on trust.
    let worse = if paired.p < ALPHA && paired.change.point < 0.0 {
        format!(
            " **The recommendation measured below {} (p < {ALPHA})**: what was searched did not beat the engine's own \
             defaults here; weigh that before adopting it.",
            baseline.label
        )
    } else {
        String::new()
    };
    Some(format!(
        "Against {} ({}): {} {} it (95% CI {}; paired over {} rounds, {}).{worse}",
        baseline.label,
        baseline.description,
        v.recommended().label,
        change(&v.objective, paired.change.point),
        interval(&v.objective, paired.change.low, paired.change.high),
        paired.n,
        p_value(paired.p)
    ))
}

/// Whether the recommendation holds at the larger scale, in a phrase.
pub fn holds(t: &Transfer) -> &'static str {
    match t.winner_still_wins {
        Some(true) => "the recommendation still beats the defaults there",
        Some(false) => {
            "**the recommendation measured below the defaults there**, within the noise of one run each: treat the \
             gain with care"
        }
        None => "no candidate was recommended over the defaults",
    }
}

/// The end of `kvtune tune`: the answer, the memory it used, where the files are.
pub fn answer(outcome: &StudyOutcome, out_dir: &Path) -> String {
    let header = &outcome.header;
    let Some(v) = &outcome.verdict else {
        return format!("No trial succeeded; see {}/report.md for the errors.\n", out_dir.display());
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} at a budget of {} (measured at scale {}):\n  {}",
        header.dataset.name,
        ByteSize(header.full_budget),
        header.scale,
        headline(v)
    );
    let left_out = v
        .contenders
        .iter()
        .filter_map(|c| Some(format!("{} was left out: {}.", c.label, c.disqualified.as_ref()?)));
    let larger =
        outcome.transfer.as_ref().map(|t| format!("At scale {} (one run each): {}.", t.scale, holds(t)));
    let cut_short =
        outcome.search_cut_short.as_ref().map(|note| format!("The search was cut short: {note}."));
    // A limit the user set is no news; a sampler that stopped first is.
    let stopped = outcome.search_ended.as_ref().filter(|end| end.by_sampler).map(|end| {
        let spare = end.spare_rounds_note(header.confirm_repeats).map(|n| format!("; {n}"));
        format!(
            "The search stopped after {} trials, within its limits of {}: {}{}.",
            end.trials,
            header.limits(),
            end.why,
            spare.unwrap_or_default()
        )
    });
    let unstable = outcome.machines.ratios.iter().filter(|r| r.unstable).map(|r| {
        format!("{}'s gain differs across the machines that measured it (see report.md, Workers).", r.label)
    });
    let beside =
        beside_note(outcome.trials.iter().map(|t| &t.measurement)).map(|note| format!("Warning: {note}."));
    for line in [resolution(v), versus_baseline(v, header)]
        .into_iter()
        .flatten()
        .chain(left_out)
        .chain(larger)
        .chain(cut_short)
        .chain(stopped)
        .chain(unstable)
        .chain(beside)
    {
        // Markdown's bold means nothing on a terminal.
        let _ = writeln!(out, "  {}", line.replace("**", ""));
    }
    if let Some(run) = outcome.representative(&v.recommended().label) {
        let _ = writeln!(out, "  {}", budget_used(&run.measurement, header.scaled_budget()));
    }
    let options: Vec<&str> = outcome.options_files.iter().flatten().map(|f| f.name).collect();
    let _ = writeln!(
        out,
        "  wrote {}/: preset.toml, {}, report.md, trials.csv, journal.jsonl",
        out_dir.display(),
        options.join(", ")
    );
    out
}

/// How many of `runs` ran while other kvtune processes were running trials
/// on the same machine, and which; `None` if none did.
pub fn beside_note<'a>(runs: impl IntoIterator<Item = &'a Measurement>) -> Option<String> {
    let runs: Vec<&Measurement> = runs.into_iter().filter(|m| m.ran()).collect();
    let beside: Vec<&Vec<Neighbour>> =
        runs.iter().filter_map(|m| m.beside.as_ref()).filter(|b| !b.is_empty()).collect();
    let neighbours = Neighbour::each_once(beside.iter().copied().flatten().cloned().collect());
    let named: Vec<String> = neighbours.iter().map(|n| format!("pid {}: `{}`", n.pid, n.command)).collect();
    (!beside.is_empty()).then(|| {
        format!(
            "{} of {} runs ran while another kvtune was running trials on the same machine ({}): their figures \
             are slower and noisier; run one study at a time on a machine",
            beside.len(),
            runs.len(),
            named.join("; ")
        )
    })
}

/// How much of the budget the engine's own memory took, and the page cache
/// beside it (which fills whatever is left).
pub fn budget_used(m: &Measurement, budget: u64) -> String {
    if m.peak_anon == 0 {
        return format!(
            "peak memory {} of the budget {} ({})",
            ByteSize(m.peak_memory),
            ByteSize(budget),
            m.memory_source
        );
    }
    format!(
        "budget used {:.0}%: the engine process's own memory peaked at {} of the budget {}; the page cache filled what was left (peak {})",
        m.peak_anon as f64 * 100.0 / budget as f64,
        ByteSize(m.peak_anon),
        ByteSize(budget),
        ByteSize(m.peak_page_cache)
    )
}

/// A figure in about four significant digits, thousands as k and millions as M.
pub fn num(x: f64) -> String {
    match x.abs() {
        v if v >= 1e6 => format!("{:.2}M", x / 1e6),
        v if v >= 1e4 => format!("{:.1}k", x / 1e3),
        v if v >= 100.0 => format!("{x:.0}"),
        v if v >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

/// How a table is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Text,
    Markdown,
}

/// The cells of one metric's row: name, then each side's median and spread,
/// then for every side after the first its paired change, or `~`; a change
/// past a hundredfold as a factor (a side near zero, such as the seconds a
/// phase left to settle when it left nothing: +108147496.7% read as noise).
fn metric_cells(row: &MetricRow) -> Vec<String> {
    let mut cells = vec![row.name.clone()];
    for (i, side) in row.sides.iter().enumerate() {
        cells.push(side.as_ref().map_or("-".into(), median_spread));
        if i == 0 {
            continue;
        }
        cells.push(match row.vs_first[i] {
            Some(p) if p.p < ALPHA && !(0.01..100.0).contains(&(p.change.point + 1.0)) => {
                format!("{:.1e} times p={:.3} n={}", p.change.point + 1.0, p.p, p.n)
            }
            Some(p) if p.p < ALPHA => format!(
                "{} ({} .. {}) p={:.3} n={}",
                pct(p.change.point),
                pct(p.change.low),
                pct(p.change.high),
                p.p,
                p.n
            ),
            Some(p) => format!("~ (p={:.3} n={})", p.p, p.n),
            None => "-".into(),
        });
    }
    cells
}

/// benchstat's table for `bench` (one side) and `compare` (several): each
/// metric's median ± spread per side and each side's paired change against
/// the first, `~` where the rounds show no significant change.
pub fn comparison_table(c: &Comparison, layout: Layout) -> String {
    let mut header = vec!["metric".to_string()];
    for (i, side) in c.sides.iter().enumerate() {
        header.push(format!("{} (median ± spread)", side.label));
        if i > 0 {
            header.push(format!("{} vs {}", side.label, c.sides[0].label));
        }
    }
    let rows: Vec<Vec<String>> = std::iter::once(header).chain(c.metrics.iter().map(metric_cells)).collect();
    render(&rows, layout) + &comparison_notes(c)
}

/// `kvtune ablate`'s answer: which changes carry the option set's gain,
/// then each change put back alone, the costliest first.
pub fn ablation_table(a: &Ablation, layout: Layout) -> String {
    let c = &a.comparison;
    let Some(row) = c.metrics.first() else { return comparison_notes(c) };
    let sides = PutBackSides::new(row, a.changes.len());
    let mut order: Vec<usize> = (1..=a.changes.len()).collect();
    order.sort_by(|&x, &y| sides.cost(y).total_cmp(&sides.cost(x)));
    let rows = ablation_rows(a, &sides, &order);
    ablation_headline(a, &sides, &order) + "\n" + &render(&rows, layout) + &comparison_notes(c)
}

/// An ablation's objective row, side by side: side 0 the option set as it
/// is, side i (1..=changes) with change i-1 put back, the last the defaults.
/// p values are Holm-corrected over the changes and the defaults, since many
/// are tested at once.
struct PutBackSides<'a> {
    row: &'a MetricRow,
    adjusted: Vec<f64>,
}

impl<'a> PutBackSides<'a> {
    fn new(row: &'a MetricRow, changes: usize) -> Self {
        let raw: Vec<f64> = (1..=changes + 1).map(|i| row.vs_first[i].map_or(1.0, |p| p.p)).collect();
        PutBackSides { row, adjusted: holm(&raw) }
    }

    fn p(&self, side: usize) -> f64 {
        self.adjusted[side - 1]
    }

    fn resolved(&self, side: usize) -> bool {
        self.p(side) < ALPHA
    }

    /// What putting the side's change back costs in merit: a loss is positive.
    fn cost(&self, side: usize) -> f64 {
        self.row.vs_first[side].map_or(f64::NEG_INFINITY, |p| match self.row.better {
            Better::Lower => p.change.point,
            _ => -p.change.point,
        })
    }

    /// The Holm p as printed, "-" where the rounds gave no pair to test.
    fn p_text(&self, side: usize) -> String {
        self.row.vs_first[side].map_or("-".into(), |_| format!("{:.3}", self.p(side)))
    }

    /// Whether any side was paired with the set (one round pairs nothing).
    fn any_paired(&self) -> bool {
        self.row.vs_first.iter().skip(1).any(Option::is_some)
    }

    /// The objective's change with the side's change put back: "-8.1%".
    fn change(&self, side: usize) -> String {
        self.row.vs_first[side].map_or("-".into(), |p| pct(p.change.point))
    }

    /// The same with its 95% CI, `~` first where the rounds did not resolve it.
    fn change_ci(&self, side: usize) -> String {
        let Some(p) = self.row.vs_first[side] else { return "-".into() };
        let unresolved = if self.resolved(side) { "" } else { "~ " };
        format!("{unresolved}{} ({} .. {})", pct(p.change.point), pct(p.change.low), pct(p.change.high))
    }
}

/// What a person reads first: the changes that carry the gain, what the
/// defaults cost, and the changes the set may be better without.
fn ablation_headline(a: &Ablation, sides: &PutBackSides, order: &[usize]) -> String {
    let mut out = format!("{} on {}: ", a.set, a.comparison.objective);
    if !sides.any_paired() {
        return out
            + &format!(
                "{} round(s) pair nothing, so no change's cost is measured; run --repeat 2 or more (5 by default).\n",
                a.comparison.rounds
            );
    }
    let changes = a.changes.len();
    let named = |pick: &dyn Fn(f64) -> bool| -> Vec<String> {
        order
            .iter()
            .filter(|&&i| sides.resolved(i) && pick(sides.cost(i)))
            .map(|&i| format!("{} {}", a.changes[i - 1].param, sides.change(i)))
            .collect()
    };
    let (losses, gains) = (named(&|cost| cost > 0.0), named(&|cost| cost < 0.0));
    out += &match losses.len() {
        0 => format!(
            "no change's cost, put back alone, is resolved once corrected for testing {} at once in {} rounds{}",
            changes + 1,
            a.comparison.rounds,
            unresolved_hint(a, sides, order)
        ),
        n => format!("{n} of its {changes} changes carry the gain; put back alone (Holm p < {ALPHA}): {}", losses.join(", ")),
    };
    if sides.resolved(changes + 1) {
        out += &format!("; the defaults (every change put back): {}", sides.change(changes + 1));
    }
    out += ".\n";
    if !gains.is_empty() {
        out += &format!(
            "Put back alone, these did better, so the set may be better without them: {}.\n",
            gains.join(", ")
        );
    }
    out
}

/// Where no change's cost is resolved: the costliest whose own 95% CI
/// excludes no change, as a lead, and what would settle it.
fn unresolved_hint(a: &Ablation, sides: &PutBackSides, order: &[usize]) -> String {
    let leads: Vec<String> = order
        .iter()
        .filter(|&&i| {
            sides.cost(i) > 0.0 && sides.row.vs_first[i].is_some_and(|p| p.change.low * p.change.high > 0.0)
        })
        .map(|&i| format!("{} {}", a.changes[i - 1].param, sides.change(i)))
        .collect();
    match leads.is_empty() {
        true => "; the gain is in the changes together, or each is smaller than the rounds resolve".into(),
        false => format!(
            "; the likeliest, each CI alone clear of zero: {}; more rounds (--repeat) would settle them",
            leads.join(", ")
        ),
    }
}

/// The table: the set as it is, each change in `order`, then the defaults.
fn ablation_rows(a: &Ablation, sides: &PutBackSides, order: &[usize]) -> Vec<Vec<String>> {
    let objective = format!("{} (median ± spread)", sides.row.name);
    let header = ["put back", "this set", "default", objective.as_str(), "vs the set as it is", "Holm p"];
    let summary = |i: usize| sides.row.sides[i].as_ref().map_or("-".into(), median_spread);
    let measured = |i: usize| [summary(i), sides.change_ci(i), sides.p_text(i)];
    let mut rows = vec![header.map(String::from).to_vec()];
    rows.push(vec!["nothing".into(), String::new(), String::new(), summary(0), String::new(), String::new()]);
    for &i in order {
        let put = &a.changes[i - 1];
        rows.push(
            [[put.param.clone(), put.value.to_string(), put.default.to_string()], measured(i)].concat(),
        );
    }
    let every = [String::from("every change (the defaults)"), String::new(), String::new()];
    rows.push([every, measured(a.changes.len() + 1)].concat());
    rows
}

/// A median and its spread, as benchstat prints them: 12.3k ± 4%.
fn median_spread(s: &crate::stats::Summary) -> String {
    format!("{} ± {:.0}%", num(s.median.point), s.spread * 100.0)
}

/// Rows (the first the header) as a Markdown table or aligned columns.
fn render(rows: &[Vec<String>], layout: Layout) -> String {
    let mut out = String::new();
    match layout {
        Layout::Markdown => {
            for (i, row) in rows.iter().enumerate() {
                let _ = writeln!(out, "| {} |", row.join(" | "));
                if i == 0 {
                    let _ = writeln!(out, "|{}", "---|".repeat(row.len()));
                }
            }
        }
        Layout::Text => {
            let widths: Vec<usize> = (0..rows[0].len())
                .map(|col| rows.iter().map(|r| r[col].chars().count()).max().unwrap_or(0))
                .collect();
            for row in rows {
                let cells: Vec<String> =
                    row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
                let _ = writeln!(out, "{}", cells.join("  ").trim_end());
            }
        }
    }
    out
}

/// Below a comparison's table: failed runs, how the rounds ran, what they
/// resolve, which memory was counted.
fn comparison_notes(c: &Comparison) -> String {
    let mut out = String::new();
    let failed: Vec<String> = c
        .sides
        .iter()
        .filter_map(|s| {
            let n = s.runs.iter().filter(|m| !m.ok()).count();
            (n > 0).then(|| format!("{}: {n} of {} runs did not succeed", s.label, s.runs.len()))
        })
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n{}", failed.join("; "));
    }
    let _ = writeln!(
        out,
        "\n{} rounds at scale {} (budget {}), each round in a random order; ± is the largest distance from the median; \
         a change is the geometric mean of the rounds' paired ratios with its 95% CI (paired t-test); ~ means p >= {ALPHA}.",
        c.rounds,
        c.scale,
                ByteSize(c.scaled_budget)
    );
    if let Some(mde) = c.min_detectable_change {
        let _ = writeln!(
            out,
            "Run-to-run noise here: {} rounds resolve changes of about {} or more in {}, the objective (80% power).",
            c.rounds,
            pct(mde).trim_start_matches('+'),
            c.objective
        );
    }
    if let Some(m) = c.sides.iter().flat_map(|s| &s.runs).find(|m| m.ok()) {
        let _ = writeln!(out, "Memory measured by {}.", m.memory_source);
    }
    if let Some(note) = beside_note(c.sides.iter().flat_map(|s| &s.runs)) {
        let _ = writeln!(out, "Warning: {note}.");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{PutBack, SideRuns};
    use crate::space::Value;
    use crate::stats::{Estimate, PairedChange, Summary};

    /// A side whose objective's median is `median`.
    fn summary(median: f64) -> Option<Summary> {
        let median = Estimate { point: median, low: median, high: median };
        Some(Summary { n: 3, median, min: 0.0, max: 0.0, spread: 0.05 })
    }

    /// A paired change of `change` with p value `p`.
    fn paired(change: f64, p: f64) -> Option<PairedChange> {
        let change = Estimate { point: change, low: change - 0.02, high: change + 0.02 };
        Some(PairedChange { n: 3, change, p, sd_log_ratio: 0.01 })
    }

    #[test]
    fn runs_beside_another_kvtune_are_counted_and_named() {
        use crate::record::Status;
        let alone = Measurement { beside: Some(vec![]), ..Measurement::not_run(Status::Ok, String::new()) };
        let tbs = Neighbour { pid: 7, command: "kvtune --dataset tbs".into() };
        let beside = Measurement { beside: Some(vec![tbs]), ..alone.clone() };
        assert_eq!(beside_note([&alone, &alone]), None);
        let note = beside_note([&alone, &beside, &beside]).unwrap();
        assert!(note.starts_with("2 of 3 runs"), "{note}");
        assert!(note.contains("(pid 7: `kvtune --dataset tbs`)"), "named once: {note}");
    }

    #[test]
    fn an_ablation_names_the_changes_that_carry_the_gain_costliest_first() {
        let put = |param: &str| PutBack { param: param.into(), value: Value::Int(1), default: Value::Int(0) };
        let labels = ["set", "set+a=0", "set+b=0", "set+c=0", "defaults@rocksdb"];
        let comparison = Comparison {
            dataset: "spork".into(),
            objective: "throughput".into(),
            budget: 1 << 30,
            scale: "1/16".into(),
            scaled_budget: 1 << 26,
            rounds: 3,
            sides: labels
                .iter()
                .map(|l| SideRuns { label: l.to_string(), options: Default::default(), runs: vec![] })
                .collect(),
            metrics: vec![MetricRow {
                name: "ops/s".into(),
                better: Better::Higher,
                sides: [100.0, 95.0, 80.0, 108.0, 70.0].map(summary).to_vec(),
                // Put back alone, a costs 5% and b 20%, both resolved;
                // putting c back does better.
                vs_first: vec![
                    None,
                    paired(-0.05, 0.001),
                    paired(-0.20, 0.002),
                    paired(0.08, 0.004),
                    paired(-0.3, 0.0001),
                ],
            }],
            min_detectable_change: Some(0.04),
        };
        let ablation =
            Ablation { set: "set".into(), changes: vec![put("a"), put("b"), put("c")], comparison };
        let text = ablation_table(&ablation, Layout::Text);
        assert!(text.contains("2 of its 3 changes carry the gain"), "{text}");
        assert!(text.contains("b -20.0%, a -5.0%"), "the costliest first: {text}");
        assert!(text.contains("the defaults (every change put back): -30.0%"), "{text}");
        assert!(text.contains("better without them: c +8.0%"), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(['a', 'b', 'c'])).collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(rows[0].starts_with('b') && rows[1].starts_with('a') && rows[2].starts_with('c'), "{text}");
        // Holm over the three changes and the defaults: a's 0.001 is the
        // second smallest of four, so 3 x 0.001.
        assert!(rows[1].ends_with("0.003"), "{text}");
        // Too few rounds to resolve any after the correction: the CIs alone lead.
        let mut unsure = ablation;
        for p in unsure.comparison.metrics[0].vs_first.iter_mut().flatten() {
            p.p = 0.3;
        }
        let text = ablation_table(&unsure, Layout::Text);
        assert!(text.contains("no change's cost, put back alone, is resolved once corrected for testing 4 at once in 3 rounds"), "{text}");
        assert!(text.contains("the likeliest, each CI alone clear of zero: b -20.0%, a -5.0%;"), "{text}");
        // One round pairs nothing: no conclusion, no p values.
        let mut one = unsure;
        one.comparison.rounds = 1;
        one.comparison.metrics[0].vs_first.iter_mut().for_each(|p| *p = None);
        let text = ablation_table(&one, Layout::Text);
        assert!(text.contains("1 round(s) pair nothing, so no change's cost is measured"), "{text}");
        assert!(!text.contains("the gain is in the changes together") && !text.contains("1.000"), "{text}");
    }

    #[test]
    fn a_change_past_a_hundredfold_reads_as_a_factor() {
        let row = |name: &str, change: f64| MetricRow {
            name: name.into(),
            better: Better::Lower,
            sides: [1.0, 1.0].map(summary).to_vec(),
            vs_first: vec![None, paired(change, 0.001)],
        };
        let comparison = Comparison {
            dataset: "tsdb".into(),
            objective: "throughput".into(),
            budget: 1 << 30,
            scale: "1/16".into(),
            scaled_budget: 1 << 26,
            rounds: 3,
            sides: ["a", "b"]
                .iter()
                .map(|l| SideRuns { label: l.to_string(), options: Default::default(), runs: vec![] })
                .collect(),
            metrics: vec![row("settle s", 1.08e6), row("stall s", -0.999), row("p99 us", 0.5)],
            min_detectable_change: Some(0.04),
        };
        let text = comparison_table(&comparison, Layout::Text);
        let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap().to_string();
        assert!(line("settle s").contains("1.1e6 times p=0.001"), "{text}");
        assert!(line("stall s").contains("1.0e-3 times p=0.001"), "{text}");
        assert!(line("p99 us").contains("+50.0% ("), "{text}");
    }
}
