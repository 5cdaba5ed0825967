//! Exporters: pure functions from a study's outcome to bytes (CSV, Markdown,
//! HTML with SVG figures, preset TOML, terminal text). [`write_study`] and [`write_trials_csv`] put
//! those bytes in the output folder through the one writer here.

pub mod csv;
pub mod html;
pub mod markdown;
mod plots;
pub mod preset;
pub mod text;

use std::path::Path;

use anyhow::Context;

use crate::outcome::StudyOutcome;
use crate::record::TrialRecord;
use crate::space::Space;
pub use preset::Preset;

/// Writes `bytes` to `dir/name` atomically, so a crash leaves the last good copy.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("writing {}", path.display()))
}

/// Rewrites `trials.csv`.
pub fn write_trials_csv(
    dir: &Path,
    space: &Space,
    phases: &[String],
    trials: &[TrialRecord],
) -> anyhow::Result<()> {
    write(dir, "trials.csv", &csv::trials_csv(space, phases, trials)?)
}

/// Rewrites `report.html` of a study still running.
pub fn write_live(dir: &Path, outcome: &StudyOutcome, space: &Space) -> anyhow::Result<()> {
    write(dir, "report.html", html::report(outcome, space).as_bytes())
}

/// Writes `report.md` and `report.html`.
pub fn write_reports(dir: &Path, outcome: &StudyOutcome, space: &Space) -> anyhow::Result<()> {
    write(dir, "report.md", markdown::report(outcome).as_bytes())?;
    write(dir, "report.html", html::report(outcome, space).as_bytes())
}

/// Writes `versus.html`: studies side by side.
pub fn write_versus(dir: &Path, studies: &[(&str, &StudyOutcome)]) -> anyhow::Result<()> {
    write(dir, "versus.html", html::versus(studies).as_bytes())
}

/// Writes the reports, and with a recommendation its preset and options files.
pub fn write_study(dir: &Path, outcome: &StudyOutcome, space: &Space) -> anyhow::Result<()> {
    write_reports(dir, outcome, space)?;
    if let Some(preset) = Preset::from_outcome(outcome) {
        write(dir, "preset.toml", preset.to_toml().as_bytes())?;
    }
    if let Some(files) = &outcome.options_files {
        let banner = format!(
            "# {} options recommended by kvtune {} for the `{}` workload at a memory budget of {}.\n",
            outcome.header.engine,
            env!("CARGO_PKG_VERSION"),
            outcome.header.dataset.name,
            crate::budget::ByteSize(outcome.header.full_budget),
        );
        write(dir, "OPTIONS", format!("{banner}{}", files.full).as_bytes())?;
        if let Some(portable) = &files.portable {
            write(dir, "OPTIONS-portable", format!("{banner}{portable}").as_bytes())?;
        }
    }
    Ok(())
}
