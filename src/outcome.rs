//! What a study was asked (its header, the journal's first entry) and what it
//! produced (the verdict and everything the exporters need). The study fills
//! these in; `report` turns them into bytes without importing the study.

use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::record::{OptionSet, TrialRecord};
use crate::scale::Scale;
use crate::search::Strategy;
use crate::space::Candidate;
use crate::stats::{Estimate, Summary};

fn rocksdb() -> String {
    "rocksdb".into()
}

/// What a study was asked to do: the journal's first entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyHeader {
    pub kvtune_version: String,
    /// The engine tuned (journals from before engines had names are RocksDB's).
    #[serde(default = "rocksdb")]
    pub engine: String,
    pub dataset: Dataset,
    pub full_budget: u64,
    pub scale: Scale,
    pub scale_reason: String,
    pub space_name: String,
    /// The search space file's text, so a resumed study searches the same space.
    pub space_text: String,
    pub strategy: Strategy,
    pub trials: usize,
    pub confirm_top: usize,
    pub confirm_repeats: usize,
    pub seed: u64,
}

impl StudyHeader {
    pub fn scaled_budget(&self) -> u64 {
        self.scale.apply(self.full_budget)
    }
}

/// Significance level for "beats the defaults".
pub const ALPHA: f64 = 0.05;

/// One candidate re-run in the confirmation rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contender {
    pub label: String,
    pub candidate: Candidate,
    pub is_default: bool,
    /// Whole-replay ops/s of each successful confirmation run.
    pub runs: Vec<f64>,
    pub summary: Summary,
    /// Median peak memory and disk size over the runs.
    pub peak_memory: u64,
    pub disk_bytes: u64,
    /// Against the defaults (None for the defaults themselves).
    pub change: Option<Estimate>,
    pub p_value: Option<f64>,
}

/// The confirmed contenders compared with the defaults, and the recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Contenders, best median first.
    pub contenders: Vec<Contender>,
    /// Index into `contenders` of the recommendation.
    pub recommended: usize,
    pub beats_defaults: bool,
}

impl Verdict {
    pub fn recommended(&self) -> &Contender {
        &self.contenders[self.recommended]
    }

    pub fn defaults(&self) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.is_default)
    }
}

/// One engine option of the recommendation beside the defaults' value, as
/// people read them (sizes in binary units).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionRow {
    pub name: String,
    pub recommended: String,
    pub defaults: String,
}

impl OptionRow {
    pub fn changed(&self) -> bool {
        self.recommended != self.defaults
    }
}

/// A study's result with everything a report needs, so exporters open nothing.
#[derive(Debug, Clone)]
pub struct StudyOutcome {
    pub header: StudyHeader,
    pub trials: Vec<TrialRecord>,
    pub verdict: Option<Verdict>,
    pub phase_names: Vec<String>,
    /// The engine's defaults fitted to the full budget, as a candidate.
    pub default_candidate: Candidate,
    /// The recommendation at the full budget in the engine's absolute terms.
    pub recommended_options: Option<OptionSet>,
    /// The recommendation beside the defaults, option by option, at the full budget.
    pub option_rows: Vec<OptionRow>,
    /// The engine's native options file of the recommendation.
    pub options_file: Option<String>,
}

/// What `kvtune bench` measured: the runs and each metric's median and spread.
#[derive(Debug, Clone, Serialize)]
pub struct BenchSummary {
    pub preset: String,
    pub dataset: String,
    pub budget: u64,
    pub scale: String,
    pub runs: Vec<crate::record::Measurement>,
    pub failed: usize,
    pub metrics: Vec<(String, Summary)>,
}
