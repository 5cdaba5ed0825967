//! `kvtune datasets [NAME]`: the built-in datasets, or one described: where
//! it comes from, its phases and their op mix, and its size at a budget.

use std::fmt::Write;

use crate::budget::ByteSize;
use crate::cli::DatasetsArgs;
use crate::dataset::ops::{Batch, OpKind, Tally};
use crate::dataset::{Dataset, BUILT_IN};

pub fn datasets(args: DatasetsArgs) -> anyhow::Result<()> {
    let budget = args.sizing.budget();
    let text = match &args.name {
        None => list(budget)?,
        Some(name) => {
            let mut dataset = Dataset::find(name)?;
            if let Some(ratio) = args.sizing.data_ratio {
                dataset = dataset.with_data_ratio(ratio)?;
            }
            describe(&dataset, budget, args.sizing.seed)?
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

fn describe(d: &Dataset, budget: u64, seed: u64) -> anyhow::Result<String> {
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
    for note in workload.notes() {
        let _ = writeln!(out, "note: {note}");
    }
    for mut phase in workload.phases(seed) {
        let mut tally = Tally::default();
        let mut batch = Batch::default();
        while phase.source.next_batch(&mut batch) {
            tally.add(&batch);
        }
        if let Some(e) = phase.source.take_error() {
            return Err(e.context(format!("phase {}", phase.name)));
        }
        let total = tally.total_ops();
        let _ = writeln!(
            out,
            "\nphase {}: {total} ops in {} batches ({} warm-up)",
            phase.name, tally.batches, phase.warmup_ops
        );
        for (i, kind) in OpKind::ALL.iter().enumerate().filter(|(i, _)| tally.ops[*i] > 0) {
            let ops = tally.ops[i] as f64;
            let _ = writeln!(
                out,
                "  {:<14} {:>6.2}%  {:>10} ops  key {:>6.1} B  value {:>8.1} B",
                format!("{kind:?}"),
                ops * 100.0 / total.max(1) as f64,
                tally.ops[i],
                tally.key_bytes[i] as f64 / ops,
                tally.value_bytes[i] as f64 / ops
            );
        }
    }
    Ok(out)
}
