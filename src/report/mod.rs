//! Exporters. Each turns a study into bytes and does no I/O of its own; the
//! two `write_*` functions here are the only place results reach the disk.

pub mod csv;
pub mod markdown;
pub mod preset;

use std::path::Path;

use anyhow::Context;

use crate::engine::rocksdb::{options_file, RocksConfig};
use crate::space::Space;
use crate::study::{StudyHeader, StudyOutcome, TrialRecord};
pub use preset::Preset;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("writing {}", path.display()))
}

/// Rewrites `trials.csv` (atomically, so a crash leaves the last good copy).
pub fn write_trials_csv(
    dir: &Path,
    space: &Space,
    phases: &[&str],
    trials: &[TrialRecord],
) -> anyhow::Result<()> {
    write(dir, "trials.csv", &csv::trials_csv(space, phases, trials)?)
}

/// Writes the preset, the OPTIONS file and the report of a finished study.
/// `scratch` is where RocksDB may make a throwaway database for the OPTIONS file.
pub fn write_study(
    dir: &Path,
    header: &StudyHeader,
    outcome: &StudyOutcome,
    scratch: &Path,
) -> anyhow::Result<()> {
    write(dir, "report.md", markdown::report(header, outcome).as_bytes())?;
    let Some(verdict) = &outcome.verdict else {
        return Ok(());
    };
    let preset = Preset::from_study(header, verdict).map_err(anyhow::Error::msg)?;
    write(dir, "preset.toml", preset.to_toml().as_bytes())?;
    let config = RocksConfig::from_candidate(&verdict.recommended().candidate, header.full_budget)
        .map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(scratch)?;
    let options = options_file(&config, scratch)?;
    let banner = format!(
        "# RocksDB options recommended by kvtune {} for the `{}` workload at a memory budget of {}.\n\
         # RocksDB does not write the block cache into OPTIONS files: create an LRU cache of\n\
         # block_cache_size = {} bytes ({}) and pass it when loading, e.g. Options::load_latest(dir, env,\n\
         # false, Cache::new_lru_cache({})) in Rust or LoadOptionsFromFile(config_options, path, &db_opts,\n\
         # &cf_descs, &cache) in C++. (load_latest reads a database directory: copy this file in as OPTIONS-000001.)\n",
        env!("CARGO_PKG_VERSION"),
        header.dataset.name,
        crate::budget::ByteSize(header.full_budget),
        config.block_cache_size,
        crate::budget::ByteSize(config.block_cache_size),
        config.block_cache_size,
    );
    write(dir, "OPTIONS", format!("{banner}{options}").as_bytes())
}
