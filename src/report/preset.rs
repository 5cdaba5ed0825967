//! `preset.toml`: the recommended option set, readable by people and loadable
//! by `kvtune bench --preset` and the library.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::budget::ByteSize;
use crate::outcome::StudyOutcome;
use crate::record::{Adjustment, OptionSet};
use crate::space::Candidate;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    pub kvtune_version: String,
    pub engine: String,
    pub dataset: String,
    /// The dataset file, where the dataset is not built in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_file: Option<std::path::PathBuf>,
    /// User data over the budget it was measured with, where not the dataset's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_ratio: Option<f64>,
    pub budget: String,
    pub budget_bytes: u64,
    /// The scale the figures below were measured at.
    pub scale: String,
    pub seed: u64,
    /// `defaults` or the search trial the options came from.
    pub recommended: String,
    pub beats_defaults: bool,
    pub measured: Option<Measured>,
    /// As searched: memory as shares of the budget. `kvtune bench` loads this.
    pub candidate: Candidate,
    /// The same options in the engine's absolute terms at the full budget,
    /// each by its scaling rule.
    /// (`[rocksdb]` in presets before kvtune had other engines.)
    #[serde(alias = "rocksdb")]
    pub options: OptionSet,
    /// The options exactly as the measured runs ran them, at the scaled budget.
    #[serde(default, alias = "rocksdb_as_measured")]
    pub options_as_measured: OptionSet,
    /// Where the measured runs ran a parameter at another value than asked.
    #[serde(default)]
    pub adjusted: Vec<Adjustment>,
}

/// Figures from the interleaved confirmation runs, at the preset's scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub runs: usize,
    /// What was measured (the study's objective) and its unit.
    pub objective: String,
    pub unit: String,
    pub median: f64,
    pub ci95: [f64; 2],
    pub defaults_median: Option<f64>,
    pub defaults_ci95: Option<[f64; 2]>,
    /// Paired change over the defaults run beside it (0.10 = 10% faster):
    /// the geometric mean of the rounds' ratios.
    pub gain: Option<f64>,
    pub gain_ci95: Option<[f64; 2]>,
    /// Paired t-test on the log ratios, Holm-corrected for the contenders.
    pub p_value: Option<f64>,
    /// The smallest gain the confirmation rounds could resolve (80% power).
    pub min_detectable_gain: Option<f64>,
    /// The engine as it ships, run beside it (`stock-rocksdb`), and the
    /// paired change over it with its interval and (uncorrected) p value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain_over_baseline: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain_over_baseline_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value_over_baseline: Option<f64>,
    pub peak_memory_bytes: u64,
    pub scaled_budget_bytes: u64,
    pub disk_bytes: u64,
}

impl Preset {
    /// The recommendation of a study, if it made one.
    pub fn from_outcome(outcome: &StudyOutcome) -> Option<Self> {
        let (header, verdict) = (&outcome.header, outcome.verdict.as_ref()?);
        let best = verdict.recommended();
        let defaults = verdict.defaults();
        let gain_source = if best.is_default { None } else { best.paired.map(|p| p.change) };
        let measured_run = outcome.representative(&best.label);
        Some(Preset {
            kvtune_version: env!("CARGO_PKG_VERSION").into(),
            engine: header.engine.clone(),
            dataset: header.dataset.name.clone(),
            dataset_file: header.dataset.file.clone(),
            data_ratio: header.dataset.data_ratio,
            budget: ByteSize(header.full_budget).to_string(),
            budget_bytes: header.full_budget,
            scale: header.scale.to_string(),
            seed: header.seed,
            recommended: best.label.clone(),
            beats_defaults: verdict.beats_defaults,
            measured: Some(Measured {
                runs: best.summary.n,
                objective: verdict.objective.to_string(),
                unit: verdict.objective.unit().into(),
                median: best.summary.median.point,
                ci95: [best.summary.median.low, best.summary.median.high],
                defaults_median: defaults.map(|d| d.summary.median.point),
                defaults_ci95: defaults.map(|d| [d.summary.median.low, d.summary.median.high]),
                gain: gain_source.map(|g| g.point),
                gain_ci95: gain_source.map(|g| [g.low, g.high]),
                p_value: if best.is_default { None } else { best.p_adjusted },
                min_detectable_gain: verdict.min_detectable_change,
                baseline: verdict.baseline().map(|b| b.label.clone()),
                gain_over_baseline: verdict.over_baseline.map(|p| p.change.point),
                gain_over_baseline_ci95: verdict.over_baseline.map(|p| [p.change.low, p.change.high]),
                p_value_over_baseline: verdict.over_baseline.map(|p| p.p),
                peak_memory_bytes: best.peak_memory,
                scaled_budget_bytes: header.scaled_budget(),
                disk_bytes: best.disk_bytes,
            }),
            candidate: best.candidate.clone(),
            options: outcome.recommended_options.clone()?,
            options_as_measured: measured_run.map(|r| r.options.clone()).unwrap_or_default(),
            adjusted: measured_run.map(|r| r.adjusted.clone()).unwrap_or_default(),
        })
    }

    /// The preset as TOML, with a header comment saying how to use it.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string_pretty(self).expect("a preset serializes");
        format!(
            "# kvtune preset: {} options for the `{}` workload at a memory budget of {}.\n\
                          # [options] holds the engine's absolute values for the full budget, each option by its scaling rule;\n\
             # [candidate] the same options as kvtune searched them (memory as shares of the budget);\n\
             # [options_as_measured] the values the measured runs ran with, at scale {}, where the\n\
             # figures in [measured] come from. Measure again, at any scale, with:\n\
                          #   kvtune bench --preset preset.toml [--scale S]\n\n{body}",
            self.engine,
            self.dataset,
            self.budget,
            self.scale,
        )
    }

    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "cannot read preset {} ({e}): give a preset.toml kvtune wrote, or `defaults`",
                path.display()
            )
        })?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("preset {} is not valid: {e}", path.display()))
    }
}
