//! `kvtune --engines rocksdb,pebble,badger`: which engine, with which
//! options. Each engine is tuned alone, with the same budget, dataset,
//! trials and time, into OUT/ENGINE; then the recommendations (an engine's
//! defaults where it has none) run side by side in paired rounds, each round
//! in a random order, at one scale, and the benchstat-style table answers.

use std::path::Path;

use anyhow::Context;

use super::compare::{print, run, Side};
use super::tune::{default_out_dir, tune};
use crate::cli::{Target, TuneArgs};
use crate::engine;
use crate::outcome::Comparison;
use crate::report::text::{comparison_table, Layout};
use crate::report::Preset;

/// Paired rounds of the engines' final comparison, at least.
const MIN_ROUNDS: usize = 3;

pub fn engines(args: TuneArgs) -> anyhow::Result<()> {
    for name in &args.engines {
        engine::find(name)?.prepare()?;
    }
    let budget = args.budget.context("--budget is required")?;
    let dataset = args.dataset.clone().context("--dataset is required")?;
    let out = args.out.clone().unwrap_or_else(|| default_out_dir(&dataset, budget.0));
    let mut sides = vec![];
    for (i, name) in args.engines.iter().enumerate() {
        eprintln!(
            "kvtune: engine {} of {}: tuning {name} into {}",
            i + 1,
            args.engines.len(),
            out.join(name).display()
        );
        let mut one = args.clone();
        one.engines.clear();
        one.common.engine = Some(name.clone());
        one.out = Some(out.join(name));
        // An engine whose study fails still runs at its defaults below.
        if let Err(e) = tune(one) {
            eprintln!("kvtune: tuning {name} failed: {e:#}; it is compared at its defaults");
        }
        let preset = out.join(name).join("preset.toml");
        sides.push(if preset.exists() { preset.display().to_string() } else { format!("defaults@{name}") });
    }
    let target = Target {
        dataset: Some(dataset),
        budget: Some(budget),
        data_ratio: args.data_ratio,
        objective: args.objective.first().cloned(),
        settings: vec![],
    };
    let mut common = args.common.clone();
    common.engine = None;
    eprintln!("kvtune: the engines side by side: {}", sides.join(" vs "));
    let plain: Vec<Side> = sides.iter().map(|spec| Side { spec: spec.clone(), settings: vec![] }).collect();
    let comparison = run(&plain, &target, args.confirm_repeats.max(MIN_ROUNDS), &common)?;
    let names: Vec<String> =
        args.engines.iter().zip(&sides).map(|(engine, side)| side_name(engine, side)).collect();
    write_answer(&out, &comparison, &names)?;
    if !common.json {
        println!("{}", answer(&comparison, &names));
    }
    print(&comparison, &common, Layout::Text)
}

/// An engine and the option set it ran: its study's recommendation, or its defaults.
fn side_name(engine: &str, side: &str) -> String {
    match Preset::load(Path::new(side)) {
        Ok(preset) => format!("{engine} with {} ({side})", preset.recommended),
        Err(_) => format!("{engine} with its defaults (its study recommended nothing)"),
    }
}

/// Which engine: the sides by median whole-replay throughput, fastest first.
fn answer(comparison: &Comparison, names: &[String]) -> String {
    let mut ranked: Vec<(&str, f64)> = names
        .iter()
        .zip(&comparison.metrics[0].sides)
        .map(|(name, summary)| (name.as_str(), summary.as_ref().map_or(0.0, |s| s.median.point)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let lines: Vec<String> =
        ranked.iter().map(|(label, median)| format!("  {median:>12.0} ops/s  {label}")).collect();
    format!(
        "Which engine, with which options (median whole-replay throughput over {} paired rounds; the table below \
         has each against the first with its CI and p):\n{}\n",
        comparison.rounds,
        lines.join("\n")
    )
}

/// `engines.md`: the answer and the table, beside each engine's study.
fn write_answer(out: &Path, comparison: &Comparison, names: &[String]) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("making {}", out.display()))?;
    let text = format!(
        "# Which engine for `{}` at {}\n\n```\n{}```\n\n{}",
        comparison.dataset,
        crate::budget::ByteSize(comparison.budget),
        answer(comparison, names),
        comparison_table(comparison, Layout::Markdown)
    );
    let path = out.join("engines.md");
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}
