//! Exporters: pure functions from a study's outcome to bytes (CSV, Markdown,
//! HTML with SVG figures, preset TOML, terminal text). [`write_study`] and [`TrialsCsv`] put
//! those bytes in the output folder through the one writer here.

pub mod csv;
pub mod html;
pub mod markdown;
mod plots;
pub mod preset;
pub mod text;

use std::path::Path;

use std::io::Write as _;

use anyhow::Context;

use crate::outcome::StudyOutcome;
use crate::record::TrialRecord;
use crate::space::Space;
pub use preset::Preset;

/// Writes `bytes` to `dir/name` atomically, so a crash leaves the last good copy.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    // One temporary name per process: workers of a study write side by side.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("writing {}", path.display()))
}

/// `trials.csv` kept current as trials come: the trials new since the last
/// write are appended when the columns are the ones written and the file is
/// as this writer left it; otherwise (the first write, a new parameter,
/// another worker of the study wrote it since) the file is rewritten whole.
/// Appending keeps a long study's cost per trial flat; a row torn by a
/// crash is rewritten on resume.
#[derive(Default)]
pub struct TrialsCsv {
    /// The columns, the trials and the file's length at the last write.
    written: Option<(csv::Columns, usize, u64)>,
}

impl TrialsCsv {
    pub fn update(
        &mut self,
        dir: &Path,
        space: &Space,
        phases: &[String],
        trials: &[TrialRecord],
    ) -> anyhow::Result<()> {
        let columns = csv::Columns::of(space, phases, trials);
        let path = dir.join("trials.csv");
        let on_disk = std::fs::metadata(&path).map(|m| m.len()).ok();
        match &self.written {
            Some((written, rows, len))
                if *written == columns && Some(*len) == on_disk && *rows <= trials.len() =>
            {
                let new = csv::rows_csv(&columns, &trials[*rows..], false)?;
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut file| file.write_all(&new))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            _ => write(dir, "trials.csv", &csv::rows_csv(&columns, trials, true)?)?,
        }
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        self.written = Some((columns, trials.len(), len));
        Ok(())
    }
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
    for file in outcome.options_files.iter().flatten() {
        let banner = format!(
            "{} {} options recommended by kvtune {} for the `{}` workload at a memory budget of {}.\n",
            file.comment,
            outcome.header.engine,
            env!("CARGO_PKG_VERSION"),
            outcome.header.dataset.name,
            crate::budget::ByteSize(outcome.header.full_budget),
        );
        write(dir, file.name, format!("{banner}{}", file.text).as_bytes())?;
    }
    Ok(())
}
