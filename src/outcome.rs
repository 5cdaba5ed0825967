//! What a study was asked (its header, the journal's first entry) and what it
//! produced (the verdict and everything the exporters need). The study fills
//! these in; `report` turns them into bytes without importing the study.

use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::engine::OptionsFiles;
use crate::record::{Objective, OptionSet, TrialRecord};
use crate::scale::Scale;

use crate::space::{Candidate, Value};
use crate::stats::{PairedChange, Summary};

fn rocksdb() -> String {
    "rocksdb".into()
}

fn throughput() -> Vec<Objective> {
    vec![Objective::Throughput]
}

fn yes() -> bool {
    true
}

fn throughput_one() -> Objective {
    Objective::Throughput
}

/// A search strategy: what the study's header records; `search` makes its sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Bayesian optimisation: a Gaussian process over the encoded space with a
    /// fitted noise term, fed every run; the next candidate where its upper
    /// confidence bound is highest.
    Bayes,
    /// Tree-structured Parzen estimators, one per parameter (Optuna's default).
    Tpe,
    /// Candidates drawn uniformly (log-uniformly where the space says so).
    Random,
    /// Every combination of the grid levels in the space file (shuffled when
    /// there are more than --trials).
    Grid,
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Strategy::Bayes => "bayes",
            Strategy::Tpe => "tpe",
            Strategy::Random => "random",
            Strategy::Grid => "grid",
        })
    }
}

/// Why a search stopped: a limit the user set (or its default), or its
/// sampler had nothing left, which a user who asked for more must be told.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchEnd {
    /// Search trials recorded when it stopped.
    pub trials: usize,
    pub why: String,
    pub by_sampler: bool,
    /// Confirmation rounds added beyond `--confirm-repeats` with the time
    /// the sampler left.
    pub spare_rounds: usize,
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
    /// What the study maximises; a second objective makes the report show the
    /// Pareto front of the two.
    #[serde(default = "throughput")]
    pub objectives: Vec<Objective>,
    /// Most search trials (racing runs not counted).
    pub trials: usize,
    /// Seconds the whole study may take (`--time`); the search stops early
    /// enough to leave the confirmation and the larger-scale check their time.
    #[serde(default)]
    pub time_budget_secs: Option<f64>,
    /// Seconds the calibration that chose the scale took, counted in the
    /// study's time (it ran inside `--time`).
    #[serde(default)]
    pub calibration_secs: f64,
    /// Whether promising candidates are raced against the incumbent.
    #[serde(default = "yes")]
    pub racing: bool,
    /// The strategy may end the search before its limits (`--no-early-stop` not given).
    #[serde(default = "yes")]
    pub early_stop: bool,
    /// What was done around each trial to cut noise (a resumed study keeps it).
    #[serde(default)]
    pub quiet: crate::trial::Quiet,
    pub confirm_top: usize,
    pub confirm_repeats: usize,
    /// The larger scale the contenders are re-measured at after the verdict,
    /// if any, and why (or why not).
    #[serde(default)]
    pub verify_scale: Option<Scale>,
    #[serde(default)]
    pub verify_note: String,
    /// The engine as it ships, confirmed beside the contenders for reference.
    #[serde(default)]
    pub baseline: Option<Baseline>,
    pub seed: u64,
    /// The search's limits as the study started, where a `--resume` changed
    /// them (`trials` and `time_budget_secs` then hold the new ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits_at_start: Option<SearchLimits>,
}

/// A `--time` limit as the user writes one (e.g. `1h 37m`), to the second.
pub fn duration_text(secs: f64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(secs as u64)).to_string()
}

/// How far a study's search may go: `--trials` and `--time`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchLimits {
    pub trials: usize,
    pub time_budget_secs: Option<f64>,
}

/// Search trials when only `--time` limits them: a cap the user did not
/// set, so it is not shown as one of their limits.
pub const TRIAL_CAP: usize = 500;

impl SearchLimits {
    /// The trial limit the user set: none where only `--time` limits the
    /// search, up to the cap.
    pub fn trials_set(&self) -> Option<usize> {
        (self.trials != TRIAL_CAP || self.time_budget_secs.is_none()).then_some(self.trials)
    }
}

impl std::fmt::Display for SearchLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.trials_set(), self.time_budget_secs) {
            (None, Some(secs)) => write!(f, "--time {}", duration_text(secs)),
            (Some(trials), Some(secs)) => write!(f, "{trials} trials, --time {}", duration_text(secs)),
            (_, None) => write!(f, "{} trials", self.trials),
        }
    }
}

/// The engine's defaults as it ships them (RocksDB: a 32 MiB block cache
/// whatever the budget): the baseline published tuners quote. It runs in
/// the confirmation rounds for reference and is never recommended: it is
/// not a candidate of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub label: String,
    pub candidate: Candidate,
    /// How it differs from the defaults fitted to the budget, in words.
    pub description: String,
}

/// The origin recorded on the baseline's runs.
pub const BASELINE_ORIGIN: &str = "baseline";

impl StudyHeader {
    /// The search limits in force.
    pub fn limits(&self) -> SearchLimits {
        SearchLimits { trials: self.trials, time_budget_secs: self.time_budget_secs }
    }

    /// Puts `limits` in force, keeping the ones the study started with.
    pub fn change_limits(&mut self, limits: SearchLimits) {
        self.limits_at_start.get_or_insert(self.limits());
        self.trials = limits.trials;
        self.time_budget_secs = limits.time_budget_secs;
    }

    pub fn scaled_budget(&self) -> u64 {
        self.scale.apply(self.full_budget)
    }

    /// Runs of the confirmation: every contender, the defaults and the
    /// baseline, each round.
    pub fn confirm_runs(&self) -> usize {
        (self.confirm_top + 1 + usize::from(self.baseline.is_some())) * self.confirm_repeats
    }

    /// Runs at the larger scale: every contender and the defaults, once.
    pub fn verify_runs(&self) -> usize {
        if self.verify_scale.is_some() {
            self.confirm_top + 1
        } else {
            0
        }
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
    /// The objective's value in each successful confirmation run.
    pub runs: Vec<f64>,
    pub summary: Summary,
    /// Median peak memory and disk size over the runs.
    pub peak_memory: u64,
    pub disk_bytes: u64,
    /// Against the defaults run beside it in each round (None for the
    /// defaults themselves).
    pub paired: Option<PairedChange>,
    /// The paired p value after Holm's correction for the number of contenders.
    pub p_adjusted: Option<f64>,
    /// Why it cannot be recommended whatever it measured (a failed run).
    pub disqualified: Option<String>,
    /// The engine as it ships, run for reference: no p value, never recommended.
    #[serde(default)]
    pub is_baseline: bool,
}

impl Contender {
    /// Its measured gain over the defaults if the paired test, corrected,
    /// says it is real.
    pub fn significant_gain(&self) -> Option<f64> {
        let gain = self.paired?.change.point;
        (self.p_adjusted? < ALPHA && gain > 0.0 && self.disqualified.is_none()).then_some(gain)
    }
}

/// The confirmed contenders compared with the defaults, and the recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// What the contenders were judged on.
    #[serde(default = "throughput_one")]
    pub objective: Objective,
    /// Contenders, best median first.
    pub contenders: Vec<Contender>,
    /// Index into `contenders` of the recommendation.
    pub recommended: usize,
    pub beats_defaults: bool,
    /// The smallest gain the confirmation rounds could show on this machine
    /// (80% power, Holm-corrected significance), from the pairs' own noise:
    /// the recommendation's where it beat the defaults, else the median
    /// over the contenders.
    pub min_detectable_change: Option<f64>,
    /// The recommendation against the baseline run beside it, round by
    /// round (one comparison, so uncorrected); `None` without a baseline.
    #[serde(default)]
    pub over_baseline: Option<PairedChange>,
}

impl Verdict {
    pub fn recommended(&self) -> &Contender {
        &self.contenders[self.recommended]
    }

    /// The defaults, if they completed any confirmation run.
    pub fn defaults(&self) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.is_default && !c.runs.is_empty())
    }

    /// The baseline, if it ran in the confirmation.
    pub fn baseline(&self) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.is_baseline)
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

/// One contender at the study's scale and at the larger one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferRow {
    pub label: String,
    /// The median of its confirmation runs' objective, at the study's scale.
    pub at_study_scale: f64,
    /// Its objective at the larger scale (`None`: that run failed).
    pub at_larger_scale: Option<f64>,
    /// Its merit over the defaults' at each scale (above 1 is better).
    pub ratio_at_study_scale: Option<f64>,
    pub ratio_at_larger_scale: Option<f64>,
}

/// How well the study's ranking holds at a larger scale: the seed thread's
/// worry ("might not be true for larger datasets") answered by measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub scale: Scale,
    pub rows: Vec<TransferRow>,
    /// Spearman's rank correlation of the contenders' throughput at the two scales.
    pub spearman: Option<f64>,
    /// Whether the recommendation is still faster than the defaults at the larger scale.
    pub winner_still_wins: Option<bool>,
}

/// How far the study behind a report got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Still running: the report is rewritten as trials end.
    Running,
    /// Stopped before it finished (interrupted or crashed): it can be resumed.
    Stopped,
    Finished,
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
    /// The engine's native options files of the recommendation.
    pub options_files: Option<OptionsFiles>,
    /// The contenders re-measured at a larger scale, if the study did so.
    pub transfer: Option<Transfer>,
    /// Each searched parameter's share of the explained variation, largest first.
    pub importances: Vec<(String, f64)>,
    /// The expert seeds the study left out, each with why.
    pub seeds_left_out: Vec<(String, String)>,
    /// What racing did.
    pub racing: RacingSummary,
    /// With two objectives: the search candidates no other beats on both.
    pub pareto: Vec<ParetoPoint>,
    /// Why the search ran far fewer trials than a study needs, if it did.
    pub search_cut_short: Option<String>,
    /// Where `--time` cannot hold the confirmation of that search, so the
    /// study stopped before it: the minutes of `--time` a resume needs.
    pub resume_minutes: Option<f64>,
    /// Why the search stopped, once the confirmation has begun.
    pub search_ended: Option<SearchEnd>,
    /// Which worker and machine measured what.
    pub machines: Machines,
    pub progress: Progress,
}

/// Per-machine ratios to the defaults further apart than this (max / min -
/// 1) flag a contender as differing across machines.
pub const UNSTABLE_SPREAD: f64 = 0.10;

/// Which worker and machine measured what, and whether gains hold on each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machines {
    pub workers: Vec<WorkerRuns>,
    /// Per confirmed contender, its ratio to the defaults on each machine
    /// (empty when one machine measured all).
    pub ratios: Vec<MachineRatios>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRuns {
    pub name: String,
    pub host: String,
    /// Trials it ran (rejected candidates, never run, left out).
    pub runs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineRatios {
    pub label: String,
    /// (host, mean ratio to the defaults of the same rounds, rounds).
    pub per_host: Vec<(String, f64, usize)>,
    /// The ratios differ across machines by more than the study allows.
    pub unstable: bool,
}

/// What racing against the incumbent did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RacingSummary {
    pub races: usize,
    /// Racing pairs' runs (the defaults' repeats at the start not counted).
    pub runs: usize,
    /// The defaults' runs at the start beyond their first, so the first
    /// incumbent stands on a median (journals from before them have none).
    #[serde(default)]
    pub repeats: usize,
    /// Races won: the challenger became the incumbent.
    pub won: usize,
    /// Races where the challenger's single run beat the incumbent's first
    /// racing run but the paired runs showed it worse: a single-run ranking
    /// overturned.
    pub overturned: usize,
}

/// A search candidate on the Pareto front of two objectives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParetoPoint {
    pub label: String,
    /// Its mean value of each objective over its search and racing runs.
    pub values: [f64; 2],
}

impl SearchEnd {
    /// The rounds the confirmation added with the time the search left, in a user's words.
    pub fn spare_rounds_note(&self, asked: usize) -> Option<String> {
        (self.spare_rounds > 0).then(|| {
            format!(
                "the confirmation spent the time it left on {} more rounds than --confirm-repeats asked ({} in all)",
                self.spare_rounds,
                asked + self.spare_rounds
            )
        })
    }
}

impl StudyOutcome {
    /// The confirmation's rounds: those asked, and those the time the
    /// search left allowed.
    pub fn confirm_rounds(&self) -> usize {
        self.header.confirm_repeats + self.search_ended.as_ref().map_or(0, |e| e.spare_rounds)
    }

    /// A contender's confirmation run with the median throughput: the one
    /// the report shows in detail (memory split, where the time went).
    pub fn representative(&self, label: &str) -> Option<&TrialRecord> {
        let mut runs: Vec<&TrialRecord> = self
            .trials
            .iter()
            .filter(|t| t.stage == crate::record::Stage::Confirm && t.label == label && t.measurement.ok())
            .collect();
        runs.sort_by(|a, b| a.measurement.ops_per_sec.total_cmp(&b.measurement.ops_per_sec));
        runs.get(runs.len() / 2).copied()
    }
}

/// One option set measured by `bench` or `compare`: its runs, round by round.
#[derive(Debug, Clone, Serialize)]
pub struct SideRuns {
    pub label: String,
    /// The engine's absolute options as the side's runs ran them, at the
    /// scaled budget (empty if the engine refused the option set).
    pub options: OptionSet,
    /// One run per round, in round order; failed runs included.
    pub runs: Vec<crate::record::Measurement>,
}

/// One metric across the sides of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct MetricRow {
    pub name: String,
    pub better: crate::record::Better,
    /// Each side's median and spread (`None` where no run has the metric).
    pub sides: Vec<Option<Summary>>,
    /// Each side against the first, pair by pair (`None` for the first, and
    /// where fewer than two rounds have the metric on both sides).
    pub vs_first: Vec<Option<PairedChange>>,
}

/// What `kvtune bench` and `kvtune compare` measured: sides run in rounds,
/// each round in a random order, and every metric summarised.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub dataset: String,
    /// What the first metric row is, and the rounds' resolution is of.
    pub objective: String,
    /// The full budget, and the scale and scaled budget the runs were made at.
    pub budget: u64,
    pub scale: String,
    pub scaled_budget: u64,
    pub rounds: usize,
    pub sides: Vec<SideRuns>,
    pub metrics: Vec<MetricRow>,
    /// The smallest change of the objective these rounds could show (80%
    /// power at p < 0.05), from the pairs' own noise.
    pub min_detectable_change: Option<f64>,
}

/// A change an option set makes to the defaults fitted to the budget: one
/// searched parameter, which `kvtune ablate` puts back.
#[derive(Debug, Clone, Serialize)]
pub struct PutBack {
    pub param: String,
    /// The option set's value.
    pub value: Value,
    /// The defaults' value, fitted to the budget.
    pub default: Value,
}

/// What `kvtune ablate` measured: which of an option set's changes gave its
/// gain. The comparison's first side is the option set as it is, then one
/// side per change, with that change alone put back (in the order of
/// `changes`), then the defaults, every change put back.
#[derive(Debug, Clone, Serialize)]
pub struct Ablation {
    pub set: String,
    pub changes: Vec<PutBack>,
    pub comparison: Comparison,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_name_only_what_the_user_set() {
        let limits = |trials, time: Option<f64>| SearchLimits { trials, time_budget_secs: time }.to_string();
        assert_eq!(limits(TRIAL_CAP, Some(1800.0)), "--time 30m");
        assert_eq!(limits(40, Some(5820.0)), "40 trials, --time 1h 37m");
        assert_eq!(limits(40, None), "40 trials");
    }
}
