//! `report.md`: the answer first (what to use, how much faster, how sure),
//! then how it was measured, the confirmation runs and every trial.

use std::fmt::Write;

use super::text::{headline, ops, pct};
use crate::budget::ByteSize;
use crate::outcome::{StudyHeader, StudyOutcome, Verdict};
use crate::record::Stage;

pub fn report(outcome: &StudyOutcome) -> String {
    let header = &outcome.header;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# kvtune: `{}` at a memory budget of {}\n",
        header.dataset.name,
        ByteSize(header.full_budget)
    );
    match &outcome.verdict {
        Some(v) => answer(&mut md, outcome, v),
        None => md.push_str(
            "**No trial succeeded, so there is no recommendation.** See the trials below for the errors.\n\n",
        ),
    }
    method(&mut md, header, outcome);
    if let Some(v) = &outcome.verdict {
        confirmation(&mut md, v);
    }
    trials(&mut md, outcome);
    md
}

fn answer(md: &mut String, outcome: &StudyOutcome, v: &Verdict) {
    let header = &outcome.header;
    let best = v.recommended();
    md.push_str("## Answer\n\n");
    let _ = writeln!(md, "**{}**\n", headline(v));
    if let Some(close) = v.contenders.iter().find(|c| !c.is_default && !v.beats_defaults) {
        if let (Some(change), Some(p)) = (close.change, close.p_value) {
            let _ = writeln!(
                md,
                "The best other candidate, {}, measured {} (95% CI {} to {}, p = {:.3}).\n",
                close.label,
                pct(change.point),
                pct(change.low),
                pct(change.high),
                p
            );
        }
    }
    let _ = writeln!(
        md,
        "Measured at scale {} (budget {}); peak memory {} of the scaled budget {}. Options below are for the full budget of {}: \
         `preset.toml` and the `OPTIONS` file beside this report hold them.\n",
        header.scale,
        ByteSize(header.scaled_budget()),
        ByteSize(best.peak_memory),
        ByteSize(header.scaled_budget()),
        ByteSize(header.full_budget)
    );
    if !outcome.option_rows.is_empty() {
        let _ = writeln!(md, "| {} option | recommended | defaults (fitted) |\n|---|---|---|", header.engine);
        for row in &outcome.option_rows {
            let mark = if row.changed() { " **changed**" } else { "" };
            let _ = writeln!(md, "| `{}` | {}{mark} | {} |", row.name, row.recommended, row.defaults);
        }
        md.push('\n');
    }
}

fn method(md: &mut String, header: &StudyHeader, outcome: &StudyOutcome) {
    let search = outcome.trials.iter().filter(|t| t.stage == Stage::Search).count();
    let memory_source = outcome
        .trials
        .iter()
        .find(|t| !t.measurement.memory_source.is_empty())
        .map(|t| t.measurement.memory_source.clone())
        .unwrap_or_else(|| "none measured".into());
    let _ = writeln!(
        md,
        "## How it was measured\n\n\
         - Workload: `{}` ({}), seed {}.\n\
         - Scale {}: budget {} and the dataset shrunk alike. {}\n\
         - Search: {} over `{}`, {} trials (the first is RocksDB's defaults fitted to the budget).\n\
         - Confirmation: the best {} candidates and the defaults re-run {} times each, interleaved; the recommendation is the best median, \
         if it beats the defaults with Mann-Whitney p < 0.05.\n\
         - Throughput is operations over the seconds spent inside RocksDB calls, warm-up excluded; generating operations is not counted.\n\
         - Memory: each trial ran in its own process under a memory cap of the scaled budget; peak memory from {}.\n",
        header.dataset.name,
        header.dataset.description,
        header.seed,
        header.scale,
        ByteSize(header.scaled_budget()),
        header.scale_reason,
        format!("{:?}", header.strategy).to_lowercase(),
        header.space_name,
        search,
        header.confirm_top,
        header.confirm_repeats,
        memory_source
    );
}

fn confirmation(md: &mut String, v: &Verdict) {
    md.push_str("## Confirmation runs\n\n| candidate | ops/s median | 95% CI | ± | runs | vs defaults | 95% CI | p | peak memory | disk |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &v.contenders {
        let s = &c.summary;
        let (change, ci, p) = match (c.change, c.p_value) {
            (Some(ch), Some(p)) => {
                (pct(ch.point), format!("{} to {}", pct(ch.low), pct(ch.high)), format!("{p:.3}"))
            }
            _ => ("~".into(), String::new(), String::new()),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} to {} | ±{:.0}% | {} | {change} | {ci} | {p} | {} | {} |",
            c.label,
            ops(s.median.point),
            ops(s.median.low),
            ops(s.median.high),
            s.spread * 100.0,
            s.n,
            ByteSize(c.peak_memory),
            ByteSize(c.disk_bytes)
        );
    }
    md.push('\n');
}

fn trials(md: &mut String, outcome: &StudyOutcome) {
    let phases = &outcome.phase_names;
    let defaults = &outcome.default_candidate;
    md.push_str("## Every trial\n\nParameters are shown where they differ from the defaults.\n\n| # | stage | label | status | ops/s |");
    for p in phases {
        let _ = write!(md, " {p} ops/s |");
    }
    md.push_str(" write amp | disk | bytes/key | peak memory | wall s | parameters |\n|---");
    md.push_str(&"|---".repeat(phases.len() + 10));
    md.push_str("|\n");
    for t in &outcome.trials {
        let m = &t.measurement;
        let _ = write!(md, "| {} | {} | {} | {} |", t.number, t.stage, t.label, m.status);
        let _ = write!(md, " {} |", if m.ok() { ops(m.ops_per_sec) } else { String::new() });
        for p in phases {
            let value =
                m.phases.iter().find(|r| r.name == *p).map(|r| ops(r.ops_per_sec)).unwrap_or_default();
            let _ = write!(md, " {value} |");
        }
        let changed: Vec<String> = t
            .candidate
            .iter()
            .filter(|(k, v)| defaults.get(*k) != Some(v))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let note = match &m.reason {
            Some(r) => format!("{} ({r})", changed.join(", ")),
            None => changed.join(", "),
        };
        let _ = writeln!(
            md,
            " {} | {} | {} | {} | {:.1} | {} |",
            m.write_amplification.map(|w| format!("{w:.2}")).unwrap_or_default(),
            if m.disk_bytes > 0 { ByteSize(m.disk_bytes).to_string() } else { String::new() },
            m.bytes_per_key.map(|b| format!("{b:.1}")).unwrap_or_default(),
            if m.peak_memory > 0 { ByteSize(m.peak_memory).to_string() } else { String::new() },
            m.wall_secs,
            note.replace('|', "/")
        );
    }
}
