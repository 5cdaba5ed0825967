//! `kvtune datasets [NAME]`: the built-in datasets, or one described: where
//! it comes from, its phases and their op mix, and its size at a budget.

use std::fmt::Write;

use crate::budget::ByteSize;
use crate::cli::DatasetsArgs;
use crate::dataset::ops::{Batch, OpKind};
use crate::dataset::{Dataset, BUILT_IN};

pub fn datasets(args: DatasetsArgs) -> anyhow::Result<()> {
    let budget = args.scale.map_or(args.budget.0, |s| s.apply(args.budget.0));
    let text = match &args.name {
        None => list(budget)?,
        Some(name) => {
            let mut dataset = Dataset::find(name)?;
            if let Some(ratio) = args.data_ratio {
                dataset = dataset.with_data_ratio(ratio)?;
            }
            describe(&dataset, budget, args.seed)
        }
    };
    print!("{text}");
    Ok(())
}

fn list(budget: u64) -> anyhow::Result<String> {
    let mut out = format!("{:<10} {:>11}  {}\n", "dataset", "data/budget", "what it models");
    for (name, _) in BUILT_IN {
        let d = Dataset::find(name)?;
        let _ = writeln!(out, "{name:<10} {:>11.2}  {}", d.native_ratio(budget), d.description);
    }
    out.push_str("\nkvtune datasets NAME describes one (phases, op mix, size); --dataset FILE takes a dataset file or a trace.\n");
    Ok(out)
}

/// Counts of one kind of operation in a phase.
#[derive(Default)]
struct Tally {
    ops: u64,
    key_bytes: u64,
    value_bytes: u64,
}

fn describe(d: &Dataset, budget: u64, seed: u64) -> String {
    let workload = d.workload(budget);
    let shape = workload.shape();
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", d.name, d.description);
    if !d.source.is_empty() {
        let _ = writeln!(out, "source: {}", d.source);
    }
    let _ = writeln!(
        out,
        "at a budget of {}: {} keys, {} of user data (data/budget {:.2}{}){}{}",
        ByteSize(budget),
        shape.keys,
        ByteSize(shape.user_bytes),
        shape.user_bytes as f64 / budget as f64,
        if d.data_ratio.is_some() { ", as asked" } else { ", the modelled system's own" },
        d.prefix_len.map_or(String::new(), |p| format!("; reads stay within {p}-byte key prefixes")),
        d.objective.as_deref().map_or(String::new(), |o| format!("; its users optimise {o}")),
    );
    for mut phase in workload.phases(seed) {
        let mut tallies: Vec<(OpKind, Tally)> = OpKind::ALL.iter().map(|k| (*k, Tally::default())).collect();
        let mut batch = Batch::default();
        let mut batches = 0u64;
        while phase.source.next_batch(&mut batch) {
            batches += 1;
            for op in &batch.ops {
                let t = &mut tallies.iter_mut().find(|(k, _)| *k == op.kind).expect("every kind").1;
                t.ops += 1;
                t.key_bytes += op.key.len() as u64;
                t.value_bytes += op.value.len() as u64;
            }
        }
        let total: u64 = tallies.iter().map(|(_, t)| t.ops).sum();
        let _ = writeln!(
            out,
            "\nphase {}: {total} ops in {batches} batches ({} warm-up)",
            phase.name, phase.warmup_ops
        );
        for (kind, t) in tallies.iter().filter(|(_, t)| t.ops > 0) {
            let _ = writeln!(
                out,
                "  {:<14} {:>6.2}%  {:>10} ops  key {:>6.1} B  value {:>8.1} B",
                format!("{kind:?}"),
                t.ops as f64 * 100.0 / total.max(1) as f64,
                t.ops,
                t.key_bytes as f64 / t.ops as f64,
                t.value_bytes as f64 / t.ops as f64
            );
        }
    }
    out
}
