//! `kvtune explain PRESET`: each option the preset sets differently from the
//! engine as it ships, the searched parameter that sets it (found by
//! putting each parameter back to its shipped value and seeing which options
//! move), and, from the study's journal beside the preset, what the search
//! measured about that parameter: its importance, and the objective of the
//! trials that ran it as the preset does against the others.

use std::fmt::Write;

use crate::cli::ExplainArgs;
use crate::engine::{self, Engine};
use crate::record::{Objective, Stage, TrialRecord};
use crate::report::text::{num, p_value, pct};
use crate::report::Preset;
use crate::search::importance;
use crate::space::{Candidate, Domain, Space};
use crate::stats::{median, spearman};
use crate::study::journal;

pub fn explain(args: ExplainArgs) -> anyhow::Result<()> {
    let preset = Preset::load(&args.preset)?;
    let engine = engine::find(&preset.engine)?;
    let budget = preset.budget_bytes;
    let tuned = engine.complete(&preset.candidate, budget);
    let shipped = engine.shipped_defaults(budget).map_or_else(|| engine.defaults(budget), |(c, _)| c);
    let study = args.preset.parent().map(journal::read_study).and_then(Result::ok);
    print!("{}", headline(&preset));
    let ours = engine.resolve(&tuned, budget)?.shown;
    let theirs = engine.resolve(&shipped, budget)?.shown;
    let mut rows = vec![["option", "this preset", "as shipped", "set by"].map(String::from)];
    let mut params: Vec<String> = vec![];
    for (name, value) in &ours {
        let Some(stock) = theirs.iter().find(|(n, _)| n == name).map(|(_, v)| v) else { continue };
        if stock == value {
            continue;
        }
        let setters = setters(engine, &tuned, &shipped, budget, name);
        params.extend(setters.iter().filter(|p| !params.contains(p)).cloned().collect::<Vec<_>>());
        rows.push([name.clone(), value.clone(), stock.clone(), setters.join(", ")]);
    }
    if rows.len() == 1 {
        println!("This preset runs {} as shipped: no option differs.", preset.engine);
        return Ok(());
    }
    print!("{}", table(&rows));
    let Some(study) = study else {
        println!("\n(No study journal beside the preset: nothing more to say about what was measured.)");
        return Ok(());
    };
    let space = Space::parse(&study.header.space_name, &study.header.space_text, &engine.param_names())?;
    let objective = &study.header.objectives[0];
    let shares = importance::importances(&space, &study.trials, objective, study.header.seed);
    let share = |p: &str| shares.iter().find(|(n, _)| n == p).map_or(0.0, |(_, s)| *s);
    params.sort_by(|a, b| share(b).total_cmp(&share(a)));
    let searched = study.trials.iter().filter(|t| t.stage == Stage::Search && t.measurement.ran()).count();
    println!("\nWhat the search measured about those parameters ({searched} search trials, one run each; importance: share of the model's explained variation):");
    let width = params.iter().map(String::len).max().unwrap_or(0);
    for param in &params {
        let detail = evidence(param, &tuned, &space, &study.trials, objective);
        println!("  {param:width$}  importance {:.0}%, {detail}", share(param) * 100.0);
    }
    println!("\nWhich of these changes gave the gain, measured: kvtune ablate {}", args.preset.display());
    Ok(())
}

/// What the preset is, and what it measured.
fn headline(preset: &Preset) -> String {
    let mut text = format!(
        "{} for `{}` at {} ({}, measured at scale {})",
        preset.recommended, preset.dataset, preset.budget, preset.engine, preset.scale
    );
    if let Some(m) = &preset.measured {
        let _ = write!(text, ": {} {} median over {} runs", num(m.median), m.unit, m.runs);
        if let (Some(gain), Some([low, high]), Some(p)) = (m.gain, m.gain_ci95, m.p_value) {
            let _ = write!(
                text,
                ", {} over the defaults fitted to the budget (95% CI {} to {}, Holm-corrected {})",
                pct(gain),
                pct(low),
                pct(high),
                p_value(p)
            );
        }
    }
    text + ".\n\n"
}

/// The parameters that move option `name` away from its shipped value: put
/// back to the shipped value one at a time, each that changes the option.
fn setters(
    engine: &dyn Engine,
    tuned: &Candidate,
    shipped: &Candidate,
    budget: u64,
    name: &str,
) -> Vec<String> {
    let shown = |c: &Candidate| {
        engine
            .resolve(c, budget)
            .ok()
            .and_then(|r| r.shown.into_iter().find(|(n, _)| n == name).map(|(_, v)| v))
    };
    let ours = shown(tuned);
    tuned
        .keys()
        .filter(|param| {
            let Some(stock) = shipped.get(*param).filter(|v| Some(*v) != tuned.get(*param)) else {
                return false;
            };
            let mut back = tuned.clone();
            back.insert((*param).clone(), stock.clone());
            shown(&back) != ours
        })
        .cloned()
        .collect()
}

/// What the search trials say about `param`: for a choice the median objective of the trials that ran the preset's value
/// against the others; for a number, how the objective ranks with it.
fn evidence(
    param: &str,
    tuned: &Candidate,
    space: &Space,
    trials: &[TrialRecord],
    objective: &Objective,
) -> String {
    let Some(at) = space.params.iter().position(|p| p.name == param) else {
        return "not searched".into();
    };
    let runs: Vec<(&TrialRecord, f64)> = trials
        .iter()
        .filter(|t| t.stage == Stage::Search)
        .filter_map(|t| Some((t, objective.value(&t.measurement)?)))
        .collect();
    let unit = objective.unit();
    let detail = match &space.params[at].domain {
        Domain::Choice { .. } => {
            let (same, other): (Vec<_>, Vec<_>) =
                runs.iter().partition(|(t, _)| t.candidate.get(param) == tuned.get(param));
            let side = |group: &[&(&TrialRecord, f64)]| {
                let values: Vec<f64> = group.iter().map(|(_, v)| *v).collect();
                if values.is_empty() {
                    "no trial".to_string()
                } else {
                    format!("median {} {unit} over {} trials", num(median(&values)), values.len())
                }
            };
            format!(
                "trials with {}: {}; with another value: {}",
                tuned.get(param).map_or(String::new(), |v| v.to_string()),
                side(&same),
                side(&other)
            )
        }
        _ => {
            let pairs: Vec<(f64, f64)> =
                runs.iter().map(|(t, v)| (space.encode(&t.candidate)[at], *v)).collect();
            spearman(&pairs).map_or("too few trials to rank".into(), |rho| {
                format!(
                    "rank correlation of its value with {objective} {rho:+.2} over {} trials",
                    pairs.len()
                )
            })
        }
    };
    detail
}

/// Rows as aligned columns, the last one free.
fn table(rows: &[[String; 4]]) -> String {
    let widths: Vec<usize> = (0..3).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    let mut text = String::new();
    for row in rows {
        for (c, width) in widths.iter().enumerate() {
            let _ = write!(text, "{:width$}  ", row[c]);
        }
        let _ = writeln!(text, "{}", row[3]);
    }
    text
}
