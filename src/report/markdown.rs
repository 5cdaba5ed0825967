//! `report.md`: the answer first (what to use, how much faster, how sure,
//! what the rounds could resolve), then the evidence: where the memory and
//! the time went, whether the result holds at a larger scale, how it was
//! measured, the confirmation runs and every trial.

use std::fmt::Write;

use super::text::{
    beside_note, budget_used, headline, holds, num, ops, p_value, pct, resolution, versus_baseline,
};
use crate::budget::ByteSize;
use crate::outcome::{Machines, Progress, StudyOutcome, Transfer, Verdict, UNSTABLE_SPREAD};
use crate::record::{Measurement, Objective, Stage, TrialRecord};

pub fn report(outcome: &StudyOutcome) -> String {
    let header = &outcome.header;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# kvtune: `{}` at a memory budget of {}\n",
        header.dataset.name,
        ByteSize(header.full_budget)
    );
    progress(&mut md, outcome);
    match &outcome.verdict {
        Some(v) => answer(&mut md, outcome, v),
        None if outcome.progress == Progress::Finished => md.push_str(
            "**No trial succeeded, so there is no recommendation.** See the trials below for the errors.\n\n",
        ),
        None => {}
    }
    if let Some(v) = &outcome.verdict {
        let shown = shown_runs(outcome, v);
        memory(&mut md, outcome, &shown);
        time(&mut md, &shown);
    }
    if let Some(t) = &outcome.transfer {
        transfer(&mut md, t, &outcome.header.objectives[0]);
    }
    search(&mut md, outcome);
    method(&mut md, outcome);
    if let Some(v) = &outcome.verdict {
        confirmation(&mut md, v);
    }
    machines(&mut md, &outcome.machines);
    trials(&mut md, outcome);
    md
}

/// With more than one worker: who ran how many trials where, and each
/// contender's gain on each machine, flagged where the machines disagree.
fn machines(md: &mut String, m: &Machines) {
    if m.workers.len() < 2 {
        return;
    }
    md.push_str(
        "## Workers

The study was shared by workers; each confirmation round and racing pair ran on one, so \
        its ratios are measured on one machine.\n\n| worker | machine | trials |\n|---|---|---|\n",
    );
    for w in &m.workers {
        let _ = writeln!(md, "| {} | {} | {} |", w.name, w.host, w.runs);
    }
    if m.ratios.is_empty() {
        md.push('\n');
        return;
    }
    let _ = writeln!(
        md,
        "\nEach contender over the defaults of the same rounds, per machine (mean of the rounds' ratios); flagged \
         where the machines differ by more than {:.0}%, a gain that may not carry to other machines.\n\n\
         | contender | per machine | |\n|---|---|---|",
        UNSTABLE_SPREAD * 100.0
    );
    for r in &m.ratios {
        let cells: Vec<String> =
            r.per_host.iter().map(|(host, ratio, n)| format!("{host}: {ratio:.3}x ({n} rounds)")).collect();
        let flag = if r.unstable { "**differs across machines**" } else { "" };
        let _ = writeln!(md, "| {} | {} | {flag} |", r.label, cells.join(", "));
    }
    md.push('\n');
}

/// For a study not finished: that it is not, and the best single run so
/// far (not yet a recommendation: confirmation has not judged it).
fn progress(md: &mut String, outcome: &StudyOutcome) {
    let state = match (outcome.progress, outcome.resume_minutes) {
        (Progress::Finished, _) => return,
        (Progress::Running, _) => {
            "**This study is still running**: this report is rewritten as trials end (at most every 10 s).".into()
        }
        (Progress::Stopped, None) => "**This study stopped before it finished**: `kvtune --resume` on its folder \
             continues it (`kvtune report` on the folder rewrites this report from its journal)."
            .to_string(),
        (Progress::Stopped, Some(minutes)) => format!(
            "**This study stopped before its confirmation**, which would have run past its `--time` (see The search): \
             `kvtune --resume` on its folder with `--time {minutes:.0}m` continues it with a search of about 30 trials \
             (without a longer `--time` it stops again)."
        ),
    };
    let objective = &outcome.header.objectives[0];
    let search: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Search).collect();
    let best = search
        .iter()
        .filter_map(|t| Some((objective.merit(&t.measurement)?, objective.value(&t.measurement)?, t)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let _ = writeln!(md, "{state} {} search trials so far.", search.len());
    if let Some((_, value, t)) = best {
        let _ = write!(
            md,
            " The best single run so far is {} ({}) at {} {}: one run, not yet confirmed against the defaults.",
            t.label,
            t.origin,
            num(value),
            objective.unit()
        );
    }
    md.push_str("\n\n");
}

/// The representative runs of the recommendation and of the defaults.
pub(super) fn shown_runs<'a>(outcome: &'a StudyOutcome, v: &Verdict) -> Vec<&'a TrialRecord> {
    let mut labels = vec![v.recommended().label.as_str()];
    if let Some(d) = v.defaults().filter(|d| d.label != v.recommended().label) {
        labels.push(d.label.as_str());
    }
    labels.into_iter().filter_map(|l| outcome.representative(l)).collect()
}

fn answer(md: &mut String, outcome: &StudyOutcome, v: &Verdict) {
    let header = &outcome.header;
    let best = v.recommended();
    md.push_str("## Answer\n\n");
    if let Some(resolution) = resolution(v) {
        let _ = writeln!(md, "{resolution}\n");
    }
    let _ = writeln!(md, "**{}**\n", headline(v));
    if !v.beats_defaults {
        if let Some(close) =
            v.contenders.iter().find(|c| !c.is_default && !c.is_baseline && c.paired.is_some())
        {
            let paired = close.paired.expect("filtered");
            let _ = writeln!(
                md,
                "The best other candidate, {}, measured {} against the defaults beside it (95% CI {} to {}, Holm-corrected {}).\n",
                close.label,
                pct(paired.change.point),
                pct(paired.change.low),
                pct(paired.change.high),
                p_value(close.p_adjusted.unwrap_or(1.0))
            );
        }
    }
    if let Some(line) = versus_baseline(v, header) {
        let _ = writeln!(md, "{line}\n");
    }
    for c in v.contenders.iter().filter(|c| c.disqualified.is_some()) {
        let _ =
            writeln!(md, "{} cannot be recommended: {}.\n", c.label, c.disqualified.as_deref().unwrap_or(""));
    }
    let used =
        outcome.representative(&best.label).map(|r| budget_used(&r.measurement, header.scaled_budget()));
    let _ = writeln!(
        md,
        "Measured at scale {} (budget {}); {}. Options below are for the full budget of {}, \
         by each option's scaling rule: `preset.toml` and {} beside this report hold them.\n",
        header.scale,
        ByteSize(header.scaled_budget()),
        used.unwrap_or_default(),
        ByteSize(header.full_budget),
        outcome
            .options_files
            .iter()
            .flatten()
            .map(|f| format!("`{}`", f.name))
            .collect::<Vec<_>>()
            .join(" and ")
    );
    if let Some(run) = outcome.representative(&best.label) {
        for a in &run.adjusted {
            let _ = writeln!(
                md,
                "- At the study's scale `{}` = {} ran as {}: {}.",
                a.param, a.asked, a.ran, a.why
            );
        }
        if !run.adjusted.is_empty() {
            md.push('\n');
        }
    }
    if !outcome.option_rows.is_empty() {
        let _ = writeln!(md, "| {} option | recommended | defaults (fitted) |\n|---|---|---|", header.engine);
        for row in &outcome.option_rows {
            let mark = if row.changed() { " **changed**" } else { "" };
            let _ = writeln!(md, "| `{}` | {}{mark} | {} |", row.name, row.recommended, row.defaults);
        }
        md.push('\n');
    }
}

fn mib(bytes: u64) -> String {
    ByteSize(bytes).to_string()
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return String::new();
    }
    format!("{:.0}%", part as f64 * 100.0 / whole as f64)
}

type MemoryPart = (&'static str, fn(&Measurement) -> u64);

/// What fills a budget, part by part, adding up to the process's anonymous
/// memory and the page cache charged to it.
pub(super) const MEMORY_PARTS: [MemoryPart; 5] = [
    ("block cache", |m| m.engine_memory().block_cache),
    ("memtables", |m| m.engine_memory().memtables),
    ("index and filters outside the cache", |m| m.engine_memory().table_readers),
    ("the rest of the process", |m| m.peak_anon.saturating_sub(m.engine_memory().total())),
    ("page cache", |m| m.peak_page_cache),
];

/// The budget split of each shown run: the engine's own parts, the rest of
/// the process, and the page cache.
fn memory(md: &mut String, outcome: &StudyOutcome, runs: &[&TrialRecord]) {
    let budget = outcome.header.scaled_budget();
    if runs.is_empty() || runs.iter().all(|r| r.measurement.peak_anon == 0) {
        return;
    }
    let _ = writeln!(
        md,
        "## Memory: where the budget went\n\nOf the scaled budget of {} (the engine's parts at the end of each phase, largest; the process's \
         anonymous memory and the page cache charged to it sampled every 100 ms, peaks):\n",
        ByteSize(budget)
    );
    md.push_str("| part |");
    for r in runs {
        let _ = write!(md, " {} | share |", r.label);
    }
    md.push_str("\n|---|");
    md.push_str(&"---|---|".repeat(runs.len()));
    md.push('\n');
    let totals: [MemoryPart; 2] = [
        ("**engine process (anonymous memory)**", |m| m.peak_anon),
        ("**cgroup peak (all charged)**", |m| m.peak_memory),
    ];
    let (process, page_cache) = MEMORY_PARTS.split_at(4);
    for &(name, read) in process.iter().chain(&totals[..1]).chain(page_cache).chain(&totals[1..]) {
        let _ = write!(md, "| {name} |");
        for r in runs {
            let bytes = read(&r.measurement);
            let _ = write!(md, " {} | {} |", mib(bytes), share(bytes, budget));
        }
        md.push('\n');
    }
    let used: Vec<String> =
        runs.iter().map(|r| format!("{} {}", r.label, share(r.measurement.peak_anon, budget))).collect();
    let _ = writeln!(
        md,
        "\nBudget used (the engine process's own memory over the budget): {}. The page cache fills what is left and the \
         kernel takes it back under pressure, so a cgroup peak at the budget is the cache doing its job.\n",
        used.join(", ")
    );
}

/// Per phase and kind of call: count, share of the phase's time, latency.
fn time(md: &mut String, runs: &[&TrialRecord]) {
    if runs.is_empty() {
        return;
    }
    md.push_str("## Where the time goes\n\n");
    for r in runs {
        let _ = writeln!(
            md,
            "{} (its median confirmation run):\n\n| phase | call | calls | ops | seconds | share of phase | p50 us | p99 us |\n|---|---|---|---|---|---|---|---|",
            r.label
        );
        for p in &r.measurement.phases {
            for c in &p.calls {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {:.2} | {:.0}% | {:.1} | {:.1} |",
                    p.name,
                    c.kind,
                    c.calls,
                    c.ops,
                    c.secs,
                    c.share_of_time * 100.0,
                    c.latency.p50_us,
                    c.latency.p99_us
                );
            }
            let settle = if p.secs() > 0.0 { p.settle_secs / p.secs() } else { 0.0 };
            let _ = writeln!(
                md,
                "| {} | settling (background work left behind) | | | {:.2} | {:.0}% | | |",
                p.name,
                p.settle_secs,
                settle * 100.0
            );
        }
        md.push('\n');
    }
}

fn transfer(md: &mut String, t: &Transfer, objective: &Objective) {
    let unit = objective.unit();
    let _ = writeln!(
        md,
        "## Does it hold at a larger scale?\n\nThe confirmed candidates and the defaults, once each at scale {} ({objective} in {unit}; \
         \"vs defaults\" is of merit, positive is better):\n\n\
         | candidate | at the study's scale | vs defaults | at scale {} | vs defaults |\n|---|---|---|---|---|",
        t.scale, t.scale
    );
    let ratio = |r: Option<f64>| r.map(|r| pct(r - 1.0)).unwrap_or_default();
    for row in &t.rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            row.label,
            num(row.at_study_scale),
            ratio(row.ratio_at_study_scale),
            row.at_larger_scale.map(num).unwrap_or_else(|| "failed".into()),
            ratio(row.ratio_at_larger_scale)
        );
    }
    let spearman = t.spearman.map_or("not enough runs".into(), |r| format!("{r:.2}"));
    let _ = writeln!(
        md,
        "\nRank agreement (Spearman) {spearman}; {}. One run a side at the larger scale: a check, not a verdict, \
         except that a candidate measuring below the defaults there by more than twice the run-to-run noise cannot be recommended.\n",
        holds(t)
    );
}

/// The search: where its candidates came from, how it progressed, what
/// racing did, which parameters mattered and, with two objectives, the front.
fn search(md: &mut String, outcome: &StudyOutcome) {
    let objective = &outcome.header.objectives[0];
    let search: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Search).collect();
    if search.is_empty() {
        return;
    }
    let mut origins: Vec<(String, usize)> = vec![];
    for t in &search {
        let kind = t.origin.split(':').next().unwrap_or("").to_string();
        match origins.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => origins.push((kind, 1)),
        }
    }
    let origins: Vec<String> = origins.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let r = &outcome.racing;
    let _ = writeln!(
        md,
        "## The search

{} search trials ({}), strategy {}, objective {}; {}racing spent {} runs on {} races: {} challengers replaced the incumbent, \
         and {} single-run rankings were overturned by the paired runs.\n",
        search.len(),
        origins.join(", "),
        outcome.header.strategy,
        objective,
        match r.repeats {
            0 => String::new(),
            n => format!("the defaults ran {} times at the start, so the first incumbent stood on a median; ", n + 1),
        },
        r.runs,
        r.races,
        r.won,
        r.overturned
    );
    for (seed, why) in &outcome.seeds_left_out {
        let _ = writeln!(md, "The expert seed `{seed}` was left out: {why}.\n");
    }
    if let Some(end) = &outcome.search_ended {
        let spare = end.spare_rounds_note(outcome.header.confirm_repeats).map(|n| format!("; {n}"));
        let _ = writeln!(
            md,
            "The search stopped after {} trials: {}{}.\n",
            end.trials,
            end.why,
            spare.unwrap_or_default()
        );
    }
    if let Some(note) = &outcome.search_cut_short {
        let _ = writeln!(md, "**The search was cut short:** {note}.\n");
    }
    md.push_str("| trial | from | ");
    let _ = write!(md, "{objective} ({}) | best single run so far |\n|---|---|---|---|\n", objective.unit());
    let mut best: Option<f64> = None;
    for t in &search {
        let value = objective.value(&t.measurement);
        if let Some(score) = objective.score(&t.measurement) {
            best = Some(best.map_or(score, |b: f64| b.max(score)));
        }
        let shown = value.map(num).unwrap_or_else(|| t.measurement.status.to_string());
        let best = best.map(|b| num(objective.from_score(b))).unwrap_or_default();
        let _ = writeln!(md, "| {} | {} | {shown} | {best} |", t.label, t.origin);
    }
    md.push('\n');
    if !outcome.importances.is_empty() {
        let ran = search.iter().filter(|t| t.measurement.ok()).count();
        let caveat = if ran < 10 * outcome.importances.len() {
            format!(
                " {ran} successful trials over {} parameters is few: read the order as a rough guide, and small shares as noise.",
                outcome.importances.len()
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "Which parameters mattered (share of the variation a model of every search trial explains, main effects).{caveat} \
             A share is of the variation across the trials, not of the gain: to measure which of the recommendation's \
             changes gave it, `kvtune ablate preset.toml` puts each back alone in paired rounds.\n\n\
             | parameter | importance |\n|---|---|"
        );
        for (name, share) in &outcome.importances {
            let _ = writeln!(md, "| `{name}` | {:.0}% |", share * 100.0);
        }
        md.push('\n');
    }
    if let [first, second] = outcome.header.objectives.as_slice() {
        let _ = writeln!(md, "The Pareto front of {first} and {second} (no other candidate is better on both):\n\n| candidate | {first} | {second} |\n|---|---|---|");
        for p in &outcome.pareto {
            let _ = writeln!(md, "| {} | {} | {} |", p.label, num(p.values[0]), num(p.values[1]));
        }
        md.push('\n');
    }
}

fn method(md: &mut String, outcome: &StudyOutcome) {
    let header = &outcome.header;
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
         - Search: {} over `{}`, {} trials (the first is the defaults fitted to the budget){}.\n\
         - Confirmation: the best {} candidates and the defaults{} in {} rounds, each round in a random order; each candidate is compared \
         with the defaults of its own round (a paired t-test on the log ratios, Holm-corrected across candidates). A candidate with a \
         failed run cannot be recommended.\n\
         - Larger scale: {}.\n\
         - Throughput is a phase's operations over its whole time: the time inside engine calls plus the time the engine then took to \
         finish the flushes and compactions the phase left behind (warm-up excluded; generating operations is never counted).\n\
                  - Memory: each trial ran in its own process under a memory cap of the scaled budget; peak memory from {}.\n\
         - Around each trial: {}.\n\
         - Other kvtune processes on the machine of each run: {}.\n",
        header.dataset.name,
        header.dataset.description,
        header.seed,
        header.scale,
        ByteSize(header.scaled_budget()),
        header.scale_reason,
        header.strategy,
        header.space_name,
        search,
        header
            .limits_at_start
            .map(|start| format!("; its limits, {start} at the start, were changed on a resume to {}", header.limits()))
            .unwrap_or_default(),
        header.confirm_top,
        header.baseline.as_ref().map(|b| format!(", with {} for reference", b.label)).unwrap_or_default(),
        outcome.confirm_rounds(),
        if header.verify_note.is_empty() { "off" } else { &header.verify_note },
        memory_source,
        header.quiet.describe(),
        neighbours_seen(&outcome.trials)
    );
}

/// What the runs say of other kvtune processes running trials beside them:
/// which, or that none was seen, or that runs were recorded unwatched.
fn neighbours_seen(trials: &[TrialRecord]) -> String {
    let runs = || trials.iter().map(|t| &t.measurement).filter(|m| m.ran());
    if let Some(note) = beside_note(runs()) {
        return note;
    }
    let unwatched = runs().filter(|m| m.beside.is_none()).count();
    match unwatched {
        0 => "none was seen running trials beside this study's runs".into(),
        n => format!(
            "none was seen; {n} of {} runs were recorded without looking (by an older kvtune)",
            runs().count()
        ),
    }
}

fn confirmation(md: &mut String, v: &Verdict) {
    let _ = writeln!(
        md,
        "## Confirmation runs\n\n{} in {}; a change is of merit (positive is better).\n\n\
         | candidate | median | 95% CI | ± | runs | vs defaults (paired) | 95% CI | p (Holm) | note | peak memory | disk |\n\
         |---|---|---|---|---|---|---|---|---|---|---|",
        v.objective,
        v.objective.unit()
    );
    for c in &v.contenders {
        let s = &c.summary;
        let (change, ci, p) = match c.paired {
            Some(x) => (
                pct(x.change.point),
                format!("{} to {}", pct(x.change.low), pct(x.change.high)),
                c.p_adjusted.map_or_else(|| format!("{:.3} uncorrected", x.p), |p| format!("{p:.3}")),
            ),
            None => ("~".into(), String::new(), String::new()),
        };
        let note = match &c.disqualified {
            Some(why) => why.replace('|', "/"),
            None if c.is_baseline => "baseline, not a candidate".into(),
            None => String::new(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} to {} | ±{:.0}% | {} | {change} | {ci} | {p} | {note} | {} | {} |",
            c.label,
            num(s.median.point),
            num(s.median.low),
            num(s.median.high),
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
    md.push_str(
        " settle s | write amp | disk | bytes/key | peak memory | CPU us/op | wall s | parameters |\n|---",
    );
    md.push_str(&"|---".repeat(phases.len() + 12));
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
        let mut notes: Vec<String> = t
            .candidate
            .iter()
            .filter(|(k, v)| defaults.get(*k) != Some(v))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        notes.extend(t.adjusted.iter().map(|a| format!("{} ran as {}", a.param, a.ran)));
        if let Some(r) = &m.reason {
            notes.push(format!("({r})"));
        }
        let _ = writeln!(
            md,
            " {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            if m.ok() { format!("{:.2}", m.settle_secs()) } else { String::new() },
            m.write_amplification.map(|w| format!("{w:.2}")).unwrap_or_default(),
            if m.disk_bytes > 0 { ByteSize(m.disk_bytes).to_string() } else { String::new() },
            m.bytes_per_key.map(|b| format!("{b:.1}")).unwrap_or_default(),
            if m.peak_memory > 0 { ByteSize(m.peak_memory).to_string() } else { String::new() },
            m.cpu_micros_per_op().map(|c| format!("{c:.2}")).unwrap_or_default(),
            m.wall_secs,
            notes.join(", ").replace('|', "/")
        );
    }
}

/// Studies side by side (`kvtune report DIR --compare DIR2`): a row per
/// fact, a column per study.
pub fn versus(studies: &[(&str, &StudyOutcome)]) -> String {
    let mut md = String::from("# kvtune: studies side by side\n\n| |");
    for (label, _) in studies {
        let _ = write!(md, " {label} |");
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(studies.len()));
    md.push('\n');
    type Fact = (&'static str, fn(&StudyOutcome) -> String);
    let facts: [Fact; 11] = [
        ("dataset, budget", |o| format!("{} at {}", o.header.dataset.name, ByteSize(o.header.full_budget))),
        ("objective", |o| o.header.objectives.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(", ")),
        ("scale, strategy", |o| format!("{}, {}", o.header.scale, o.header.strategy)),
        ("search trials", |o| {
            o.trials.iter().filter(|t| t.stage == Stage::Search && t.measurement.ran()).count().to_string()
        }),
        ("runs in all, hours", |o| {
            let ran: Vec<&TrialRecord> = o.trials.iter().filter(|t| t.measurement.ran()).collect();
            format!("{}, {:.2}", ran.len(), ran.iter().map(|t| t.measurement.wall_secs).sum::<f64>() / 3600.0)
        }),
        ("state", |o| format!("{:?}", o.progress).to_lowercase()),
        ("recommended", |o| o.verdict.as_ref().map_or("none".into(), |v| v.recommended().label.clone())),
        ("its median", |o| {
            o.verdict.as_ref().map_or(String::new(), |v| {
                format!("{} {}", num(v.recommended().summary.median.point), v.objective.unit())
            })
        }),
        ("over the fitted defaults", |o| o.verdict.as_ref().map_or(String::new(), gain_cell)),
        ("over the engine as shipped", |o| {
            o.verdict.as_ref().and_then(|v| v.over_baseline).map_or(String::new(), |p| {
                format!(
                    "{} ({} to {}, {})",
                    pct(p.change.point),
                    pct(p.change.low),
                    pct(p.change.high),
                    p_value(p.p)
                )
            })
        }),
        ("most important", |o| {
            o.importances
                .iter()
                .take(3)
                .map(|(n, s)| format!("{n} {:.0}%", s * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    ];
    for (name, fact) in facts {
        let _ = write!(md, "| {name} |");
        for (_, outcome) in studies {
            let _ = write!(md, " {} |", fact(outcome));
        }
        md.push('\n');
    }
    md
}

/// The recommendation's confirmed gain with its interval and p value, or
/// why there is none.
fn gain_cell(v: &Verdict) -> String {
    match (v.beats_defaults, v.recommended().paired, v.recommended().p_adjusted) {
        (true, Some(p), Some(q)) => {
            format!(
                "{} ({} to {}, {})",
                pct(p.change.point),
                pct(p.change.low),
                pct(p.change.high),
                p_value(q)
            )
        }
        _ => "no significant gain".into(),
    }
}
