//! `kvtune dataset export`: a dataset's phases, as generated at one budget
//! and seed, written as trace files (one a phase) beside a dataset file that
//! lists them, so `--dataset THAT.toml` replays the same phases, and the
//! traces also go to RocksDB's own tools (`db_bench -benchmarks=replay`).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::rocksdb::RocksdbWriter;
use super::text::TextWriter;
use super::Format;
use crate::budget::ByteSize;
use crate::dataset::ops::{Batch, Tally};
use crate::dataset::Dataset;

/// One phase as written.
#[derive(Debug, Clone)]
pub struct ExportedPhase {
    pub name: String,
    pub file: PathBuf,
    pub tally: Tally,
    /// Ops the format has no record for (CompactRange in a RocksDB trace).
    pub dropped: u64,
}

/// What `export` wrote: the dataset file and the phases.
#[derive(Debug, Clone)]
pub struct Exported {
    pub dataset_file: PathBuf,
    pub phases: Vec<ExportedPhase>,
}

/// A writer of one format.
enum Writer {
    Rocksdb(RocksdbWriter<BufWriter<File>>),
    Text(TextWriter<BufWriter<File>>),
}

impl Writer {
    fn create(format: Format, file: &Path) -> anyhow::Result<Writer> {
        let out = BufWriter::with_capacity(1 << 20, File::create(file)?);
        Ok(match format {
            Format::RocksdbTrace => Writer::Rocksdb(RocksdbWriter::new(out)?),
            Format::Csv => Writer::Text(TextWriter::csv(out)?),
            Format::Jsonl => Writer::Text(TextWriter::jsonl(out)),
        })
    }

    fn write(&mut self, batch: &Batch, corpus: &[u8]) -> std::io::Result<()> {
        match self {
            Writer::Rocksdb(w) => w.write_batch(batch, corpus),
            Writer::Text(w) => w.write_batch(batch),
        }
    }

    /// Finishes the file; the ops it left out.
    fn finish(self) -> std::io::Result<u64> {
        let (mut out, dropped) = match self {
            Writer::Rocksdb(w) => {
                let dropped = w.dropped;
                (w.finish()?, dropped)
            }
            Writer::Text(w) => (w.finish()?, 0),
        };
        out.flush()?;
        out.get_ref().sync_all()?;
        Ok(dropped)
    }
}

/// Writes `dataset`'s phases at `budget` (already scaled) and `seed` as
/// `format` traces beside `out` (a `.toml` path), and the dataset file `out`.
pub fn export(
    dataset: &Dataset,
    budget: u64,
    seed: u64,
    format: Format,
    out: &Path,
) -> anyhow::Result<Exported> {
    if out.extension().and_then(|e| e.to_str()) != Some("toml") {
        bail!(
            "--out {}: give the path of the dataset .toml to write; the phase files go beside it",
            out.display()
        );
    }
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let workload = dataset.workload(budget);
    let mut phases = Vec::new();
    let mut warmups = Vec::new();
    for mut phase in workload.phases(seed) {
        let file = dir.join(format!("{stem}.{}.{}", phase.name, format.extension()));
        let mut writer =
            Writer::create(format, &file).with_context(|| format!("writing {}", file.display()))?;
        let mut tally = Tally::default();
        let mut batch = Batch::default();
        while phase.source.next_batch(&mut batch) {
            tally.add(&batch);
            writer
                .write(&batch, phase.source.corpus())
                .with_context(|| format!("writing {}", file.display()))?;
        }
        if let Some(e) = phase.source.take_error() {
            return Err(e.context(format!("phase {}", phase.name)));
        }
        let dropped = writer.finish().with_context(|| format!("writing {}", file.display()))?;
        warmups.push(phase.warmup_ops);
        phases.push(ExportedPhase { name: phase.name, file, tally, dropped });
    }
    let text = dataset_file(dataset, &stem, budget, seed, format, &phases, &warmups);
    std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
    Ok(Exported { dataset_file: out.to_path_buf(), phases })
}

/// The budget the exported ops belong to: a generated dataset's is the one
/// it was generated for; a trace's (converted to another format) is its
/// own recorded budget, or the smaller budget whose prefix was exported.
fn recorded_budget(d: &Dataset, budget: u64) -> Option<u64> {
    match &d.trace {
        Some(trace) => trace.recorded_budget.map(|r| r.min(budget)),
        None => Some(budget),
    }
}

/// TOML text of a string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The dataset file listing the exported phases, with the original's
/// prefix length and objective, its budget as the recorded one.
fn dataset_file(
    d: &Dataset,
    stem: &str,
    budget: u64,
    seed: u64,
    format: Format,
    phases: &[ExportedPhase],
    warmups: &[u64],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Written by `kvtune dataset export {} --format {}`: the operations dataset `{}`\n\
         # generates at a budget of {} with seed {seed}, one trace file a phase. Replay it with\n\
         #   kvtune bench --preset defaults --dataset {stem}.toml --budget {}\n",
        d.name,
        format,
        d.name,
        ByteSize(budget),
        ByteSize(budget).to_string().replace(' ', ""),
    );
    let _ = writeln!(t, "name = {}", quoted(stem));
    let description = format!("{} ({} exported at {}, seed {seed})", d.description, d.name, ByteSize(budget));
    let _ = writeln!(t, "description = {}", quoted(&description));
    let _ =
        writeln!(t, "source = {}", quoted(&format!("kvtune dataset export of `{}`; {}", d.name, d.source)));
    let _ = writeln!(t, "generator = \"trace\"");
    if let Some(p) = d.prefix_len {
        let _ = writeln!(t, "prefix_len = {p}");
    }
    if let Some(o) = &d.objective {
        let _ = writeln!(t, "objective = {}", quoted(o));
    }
    t.push_str("\n[trace]\n");
    match recorded_budget(d, budget) {
        Some(b) => {
            let _ = writeln!(
                t,
                "# The budget the operations were made for ({}): a study at a smaller budget\n\
                 # replays that share of each phase, from its start.\nrecorded_budget = {b}",
                ByteSize(b)
            );
        }
        None => {
            t.push_str("# No recorded budget, as the trace exported had none: every budget replays it all.\n")
        }
    }
    t.push_str("pace = \"fast\"\n");
    if format != Format::RocksdbTrace {
        let _ = writeln!(
            t,
            "# Values are written as sizes: replay cuts them from a corpus that compresses about this much.\n\
             value_compressibility = 2.0"
        );
    }
    let _ = writeln!(
        t,
        "# Each phase's leading ops are warm-up, run but not counted, as in `{}`.\nphases = [",
        d.name
    );
    for (p, warmup) in phases.iter().zip(warmups) {
        let file = p.file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(
            t,
            "  {{ name = {}, file = {}, warmup_ops = {warmup} }},",
            quoted(&p.name),
            quoted(&file)
        );
    }
    t.push_str("]\n");
    t
}
