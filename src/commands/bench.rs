//! `kvtune bench`: measure one option set (a preset, or the engine's defaults
//! fitted to the budget) several times, and print each metric's median and spread.

use std::path::Path;

use anyhow::{bail, Context};

use super::{pick_scale, runner};
use crate::budget::ByteSize;
use crate::cli::BenchArgs;
use crate::dataset::Dataset;
use crate::engine;
use crate::outcome::BenchSummary;
use crate::record::metric_series;
use crate::report::{text, Preset};
use crate::scale::Scale;
use crate::stats::summarize_each;
use crate::trial::{self, Request};

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let preset = (args.preset != "defaults").then(|| Preset::load(Path::new(&args.preset))).transpose()?;
    let engine = engine::find(preset.as_ref().map_or("rocksdb", |p| p.engine.as_str()))?;
    let full_budget = match (args.budget, &preset) {
        (Some(b), _) => b.0,
        (None, Some(p)) => p.budget_bytes,
        (None, None) => bail!("--budget is required with --preset defaults"),
    };
    let dataset_name = args.dataset.clone().or_else(|| preset.as_ref().map(|p| p.dataset.clone()));
    let dataset = Dataset::find(&dataset_name.context("--dataset is required with --preset defaults")?)?;
    let candidate = preset
        .as_ref()
        .map_or_else(|| engine.defaults(full_budget), |p| engine.complete(&p.candidate, full_budget));
    engine.resolve(&candidate, full_budget).with_context(|| format!("preset {}", args.preset))?;
    if args.repeat == 0 {
        bail!("--repeat 0: give at least 1");
    }
    let runner = runner(&args.common)?;
    let asked = match (args.common.scale, &preset) {
        (Some(scale), _) => Some((scale, "as asked (--scale)")),
        (None, Some(p)) => Some((
            p.scale.parse::<Scale>().with_context(|| format!("preset {}", args.preset))?,
            "the preset was measured at (--scale changes it)",
        )),
        (None, None) => None,
    };
    let choice = pick_scale(&args.common, asked, engine, &dataset, full_budget, &runner)?;
    if !args.common.json {
        eprintln!(
            "kvtune bench: {} at budget {}, scale {} ({}), {} runs",
            args.preset,
            ByteSize(full_budget),
            choice.scale,
            choice.reason,
            args.repeat
        );
    }
    trial::stop_cleanly_on_interrupt();
    let request = Request {
        engine,
        candidate: &candidate,
        dataset: &dataset,
        budget: choice.scale.apply(full_budget),
        seed: args.common.seed,
    };
    let mut runs = Vec::new();
    let mut failed = 0;
    for i in 0..args.repeat {
        let m = trial::attempt(&runner, &request, &format!("bench{i}"), None)?.measurement;
        if !args.common.json {
            eprintln!(
                "run {}: {} {:.0} ops/s in {:.1} s {}",
                i + 1,
                m.status,
                m.ops_per_sec,
                m.wall_secs,
                m.reason.as_deref().unwrap_or("")
            );
        }
        if m.ok() {
            runs.push(m);
        } else {
            failed += 1;
        }
    }
    let summary = BenchSummary {
        preset: args.preset.clone(),
        dataset: dataset.name.clone(),
        budget: full_budget,
        scale: choice.scale.to_string(),
        metrics: summarize_each(metric_series(&runs), args.common.seed),
        runs,
        failed,
    };
    if args.common.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", text::bench_table(&summary));
    }
    if summary.runs.is_empty() {
        bail!("no run of {} succeeded", args.preset);
    }
    Ok(())
}
