//! `kvtune dataset export`: a dataset written as trace files, one a phase,
//! and a dataset file listing them.

use std::fmt::Write;

use crate::budget::ByteSize;
use crate::cli::{DatasetArgs, DatasetCommand};
use crate::dataset::ops::OpKind;
use crate::dataset::trace::export::export;
use crate::dataset::Dataset;

pub fn dataset(args: DatasetArgs) -> anyhow::Result<()> {
    let DatasetCommand::Export(args) = args.command;
    let mut dataset = Dataset::find(&args.name)?;
    if let Some(ratio) = args.sizing.data_ratio {
        dataset = dataset.with_data_ratio(ratio)?;
    }
    let budget = args.sizing.budget();
    let exported = export(&dataset, budget, args.sizing.seed, args.format, &args.out)?;
    let mut out = format!(
        "{} at a budget of {} (seed {}) written as {} traces:\n",
        dataset.name,
        ByteSize(budget),
        args.sizing.seed,
        args.format
    );
    for phase in &exported.phases {
        let mix: Vec<String> = OpKind::ALL
            .iter()
            .zip(phase.tally.ops)
            .filter(|(_, n)| *n > 0)
            .map(|(kind, n)| format!("{n} {kind:?}"))
            .collect();
        let _ = writeln!(out, "  {}: {} ({})", phase.name, phase.file.display(), mix.join(", "));
        if phase.dropped > 0 {
            let _ = writeln!(
                out,
                "    {} ops left out: a RocksDB trace has no record for them (CompactRange)",
                phase.dropped
            );
        }
    }
    let _ = writeln!(
        out,
        "dataset file: {}  (kvtune bench --preset defaults --dataset {} --budget {})",
        exported.dataset_file.display(),
        exported.dataset_file.display(),
        ByteSize(budget).to_string().replace(' ', "")
    );
    print!("{out}");
    Ok(())
}
