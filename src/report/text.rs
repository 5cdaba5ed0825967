//! What kvtune prints on a terminal: the answer first, then the evidence.

use std::fmt::Write;
use std::path::Path;

use crate::budget::ByteSize;
use crate::outcome::{BenchSummary, StudyOutcome, Verdict, ALPHA};

/// A relative change as a signed percentage: +12.3%.
pub fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
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
    let measured = format!(
        "{:.0} ops/s (median of {} runs, 95% CI {:.0} to {:.0})",
        s.median.point, s.n, s.median.low, s.median.high
    );
    match (v.defaults(), v.beats_defaults, best.change, best.p_value) {
        (None, ..) => format!(
            "The defaults completed no confirmation run, so nothing could be compared with them; the best measured was {}: {measured}",
            best.label
        ),
        (Some(_), true, Some(c), Some(p)) => format!(
            "Use {}: {measured}, {:+.1}% over the defaults fitted to the budget (95% CI {:+.1}% to {:+.1}%, Mann-Whitney p = {p:.3})",
            best.label,
            c.point * 100.0,
            c.low * 100.0,
            c.high * 100.0
        ),
        _ => format!(
            "No candidate beat the defaults significantly (p < {ALPHA}), so kvtune recommends the defaults, fitted to the budget: {measured}"
        ),
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
    let _ = writeln!(
        out,
        "  peak memory {} of the scaled budget {}",
        ByteSize(v.recommended().peak_memory),
        ByteSize(header.scaled_budget())
    );
    let _ = writeln!(
        out,
        "  wrote {}/: preset.toml, OPTIONS, report.md, trials.csv, journal.jsonl",
        out_dir.display()
    );
    out
}

/// `kvtune bench`'s table: each metric's median, 95% CI, spread and runs.
pub fn bench_table(summary: &BenchSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<24} {:>14} {:>25} {:>7} {:>4}", "metric", "median", "95% CI", "±", "n");
    for (name, s) in &summary.metrics {
        let _ = writeln!(
            out,
            "{:<24} {:>14.2} {:>12.2} .. {:<10.2} {:>6.1}% {:>4}",
            name,
            s.median.point,
            s.median.low,
            s.median.high,
            s.spread * 100.0,
            s.n
        );
    }
    if summary.failed > 0 {
        let _ = writeln!(out, "{} run(s) did not succeed", summary.failed);
    }
    if let Some(m) = summary.runs.first() {
        let _ = writeln!(out, "memory measured by {}", m.memory_source);
    }
    out
}
