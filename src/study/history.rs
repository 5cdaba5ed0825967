//! What can be said of a study from its header and the trials it recorded,
//! without running anything: the time it took and has left, its verdict
//! and larger-scale check, its Pareto front, and the outcome its reports
//! are written from. The running study asks it as it goes; `kvtune report`
//! asks it of a journal.

use std::path::Path;

use statrs::statistics::{Data, OrderStatistics};

use super::{machines, transfer, verdict, MAX_REJECTIONS_IN_A_ROW, STARVED_SEARCH_TRIALS};
use crate::engine::Engine;
use crate::outcome::{
    OptionRow, ParetoPoint, Progress, SearchEnd, StudyHeader, StudyOutcome, Transfer, Verdict,
};
use crate::racing;
use crate::record::{Stage, TrialRecord};
use crate::search::{self, importance};
use crate::space::Space;

/// Seconds the rest of a study costs ([`History::costs`]).
struct Costs {
    /// A search trial, erring long.
    trial: f64,
    /// A confirmation round: every contender, the defaults and the baseline.
    round: f64,
    /// The larger-scale check.
    verify: f64,
}

/// Why `--time` cannot hold a starved search's confirmation, and the
/// minutes of `--time` that give the search about 30 trials.
#[derive(Debug, Clone, PartialEq)]
pub struct TooShort {
    pub why: String,
    pub minutes: f64,
}

pub struct History<'a> {
    pub header: &'a StudyHeader,
    pub trials: &'a [TrialRecord],
    pub space: &'a Space,
    pub engine: &'a dyn Engine,
}

impl<'a> History<'a> {
    /// The trials of one stage, in order.
    pub fn of_stage(&self, stage: Stage) -> Vec<TrialRecord> {
        self.trials.iter().filter(|t| t.stage == stage).cloned().collect()
    }

    /// The verdict on the confirmation runs recorded, and with runs at the
    /// larger scale the check of it there: a contender that loses there
    /// beyond the noise is vetoed and the verdict taken again without it.
    pub fn judge(&self) -> (Option<Verdict>, Option<Transfer>) {
        let confirmed = self.of_stage(Stage::Confirm);
        let objective = &self.header.objectives[0];
        let verdict = verdict::judge(&confirmed, objective, self.header.seed, &[]);
        let larger = self.of_stage(Stage::Verify);
        let (Some(scale), Some(v), false) = (self.header.verify_scale, &verdict, larger.is_empty()) else {
            return (verdict, None);
        };
        let checked = transfer::compare(v, &larger, scale);
        let vetoed = transfer::vetoes(&checked, v);
        if vetoed.is_empty() {
            return (verdict, Some(checked));
        }
        let verdict = verdict::judge(&confirmed, objective, self.header.seed, &vetoed);
        let checked = verdict.as_ref().map(|v| transfer::compare(v, &larger, scale));
        (verdict, checked)
    }

    /// Seconds of the study's clock spent so far: each trial's seconds
    /// shared among the trials running side by side with it (`--time` is
    /// the wall-clock time of the whole study, however many workers).
    /// The calibration that chose the scale counts: it ran inside `--time`;
    /// so does each run's overhead outside its process.
    pub fn spent(&self) -> f64 {
        let trials: f64 = self.trials.iter().map(|t| t.clock_secs() / t.side_by_side.max(1) as f64).sum();
        self.header.calibration_secs + trials
    }

    /// The median seconds of `label`'s successful search and racing runs,
    /// overhead included.
    fn clock_of(&self, label: &str) -> Option<f64> {
        let walls: Vec<f64> = self
            .trials
            .iter()
            .filter(|t| t.stage.is_search() && t.measurement.ok() && t.label == label)
            .map(TrialRecord::clock_secs)
            .collect();
        (!walls.is_empty()).then(|| crate::stats::median(&walls))
    }

    /// What the rest of the study costs, estimated from the search so far:
    /// each side by its own runs (the current contenders, the defaults, and
    /// RocksDB as shipped as slow as the defaults), since the search gathers
    /// around fast candidates while the defaults may be slow (ycsb-e's ran
    /// 1.8 times a typical trial). A trial costs the upper quartile of the
    /// search's runs (the defaults' only until another candidate ran: they
    /// are costed apart), and a contender at least that: the next trial may
    /// run long and become a contender (mixgraph's last one ran 1.25 times
    /// the median, and as a contender took the study 1.7 min over 30m).
    fn costs(&self) -> Option<Costs> {
        let clocks = |defaults: bool| -> Vec<f64> {
            self.trials
                .iter()
                .filter(|t| t.stage.is_search() && t.measurement.ok() && t.is_default == defaults)
                .map(TrialRecord::clock_secs)
                .collect()
        };
        let walls = match clocks(false) {
            searched if searched.is_empty() => clocks(true),
            searched => searched,
        };
        if walls.is_empty() {
            return None;
        }
        let typical = Data::new(walls).upper_quartile();
        let header = self.header;
        let contenders: Vec<f64> = racing::ranked(self.trials, &header.objectives[0])
            .into_iter()
            .take(header.confirm_top)
            .filter_map(|t| self.clock_of(&t.label))
            .map(|own| own.max(typical))
            .chain(std::iter::repeat(typical))
            .take(header.confirm_top)
            .collect();
        let defaults = self.clock_of("defaults").unwrap_or(typical);
        let baseline = if header.baseline.is_some() { defaults } else { 0.0 };
        let round: f64 = contenders.iter().sum::<f64>() + defaults;
        // A run at k times the scale takes about k times as long.
        let k = header.verify_scale.map_or(0.0, |s| header.scale.times_to(s));
        Some(Costs { trial: typical, round: round + baseline, verify: k * round })
    }

    /// A search trial's seconds, erring long, and the seconds the
    /// confirmation's asked rounds and the larger-scale check will take
    /// ([`History::costs`]).
    pub fn time_after_search(&self) -> Option<(f64, f64)> {
        let costs = self.costs()?;
        Some((costs.trial, self.header.confirm_repeats as f64 * costs.round + costs.verify))
    }

    /// Whether the search must stop to leave time for the confirmation and
    /// the larger-scale check within `--time`.
    pub fn out_of_time(&self) -> bool {
        match (self.header.time_budget_secs, self.time_after_search()) {
            (Some(limit), Some((typical, reserved))) => self.spent() + typical + reserved > limit,
            _ => false,
        }
    }

    /// Why the search may not start another trial, if a limit forbids it
    /// (`under_way`: search trials running, counted as run): `--trials`, a
    /// run of candidates the memory model rejected, or `--time`.
    pub fn search_closed(&self, under_way: usize) -> Option<String> {
        let search = || self.trials.iter().filter(|t| t.stage == Stage::Search);
        let ran = self.search_trials_run() + under_way;
        let rejected_in_a_row = search().rev().take_while(|t| !t.measurement.ran()).count();
        if ran >= self.header.trials {
            Some(format!("it reached its limit of {} trials", self.header.trials))
        } else if rejected_in_a_row >= MAX_REJECTIONS_IN_A_ROW {
            Some(format!("the memory model rejected {rejected_in_a_row} candidates in a row"))
        } else if self.out_of_time() {
            Some("another trial would have left the confirmation too little of --time".into())
        } else {
            None
        }
    }

    /// The history as it stood when the confirmation began (all of it
    /// while the search runs).
    fn before_confirmation(&self) -> History<'a> {
        let end = self.trials.iter().position(|t| t.stage.is_after_search()).unwrap_or(self.trials.len());
        History { trials: &self.trials[..end], ..*self }
    }

    /// Why the search stopped where it did, judged as the planner judged it,
    /// on the trials recorded before the confirmation began; `None` while
    /// the search runs. Where no limit closed it, its sampler had nothing
    /// left, and a user who asked for more trials must be told so.
    pub fn search_ended(&self) -> Option<SearchEnd> {
        self.trials.iter().any(|t| t.stage.is_after_search()).then_some(())?;
        let before = self.before_confirmation();
        let strategy = self.header.strategy;
        let trials = before.trials.iter().filter(|t| t.stage == Stage::Search).count();
        Some(match before.search_closed(0) {
            Some(why) => SearchEnd { trials, why, by_sampler: false, spare_rounds: 0 },
            None => SearchEnd {
                trials,
                why: format!(
                    "its {strategy} sampler had nothing left to propose ({})",
                    strategy.nothing_left_means()
                ),
                by_sampler: true,
                // As many as began, so far.
                spare_rounds: self
                    .confirm_rounds()
                    .min(self.confirm_rounds_run())
                    .saturating_sub(self.header.confirm_repeats),
            },
        })
    }

    /// The confirmation rounds that ran (or began).
    fn confirm_rounds_run(&self) -> usize {
        let rounds = self.trials.iter().filter(|t| t.stage == Stage::Confirm).filter_map(|t| t.round);
        rounds.max().map_or(0, |r| r + 1)
    }

    /// The confirmation's rounds: `--confirm-repeats`, and more where the
    /// sampler closed the search with `--time` to spare ([`History::spare_rounds`]).
    /// Judged on the search's trials alone, so every worker, a resume and
    /// the report count alike, and before any confirmation run is seen, so
    /// that how many rounds run does not depend on what they show.
    pub fn confirm_rounds(&self) -> usize {
        // Once the larger-scale check began, the confirmation is over: a
        // journal from before spare rounds, resumed, gets none after it.
        if self.trials.iter().any(|t| t.stage == Stage::Verify) {
            return self.confirm_rounds_run().max(self.header.confirm_repeats);
        }
        let before = self.before_confirmation();
        let by_sampler = before.search_closed(0).is_none();
        self.header.confirm_repeats + if by_sampler { before.spare_rounds() } else { 0 }
    }

    /// Rounds the confirmation can add with the time the search left: what
    /// `--time` holds beyond the study so far, one more trial's margin, the
    /// asked rounds and the larger-scale check, in whole rounds, at most
    /// `--confirm-repeats` more. A study whose sampler stopped early would
    /// otherwise end with the user's time unused; more rounds resolve
    /// smaller gains (twice the rounds, about 1/1.4 of the gain).
    fn spare_rounds(&self) -> usize {
        let (Some(limit), Some(costs)) = (self.header.time_budget_secs, self.costs()) else {
            return 0;
        };
        let asked = self.header.confirm_repeats;
        let left = limit - self.spent() - costs.trial - asked as f64 * costs.round - costs.verify;
        if left <= 0.0 || costs.round <= 0.0 {
            return 0;
        }
        ((left / costs.round) as usize).min(asked)
    }

    /// When `--time` left the search almost nothing: how little, and what
    /// limit would give it room. A study that only confirms the defaults is
    /// not what the user asked for.
    pub fn time_starved(&self) -> Option<String> {
        let (limit, (typical, reserved)) = (self.header.time_budget_secs?, self.time_after_search()?);
        let searched = self.search_beyond_defaults();
        if searched >= STARVED_SEARCH_TRIALS
            || self.search_trials_run() >= self.header.trials
            || !self.out_of_time()
        {
            return None;
        }
        Some(format!(
            "--time {} left the search {searched} trials beyond the defaults: at up to {typical:.0} s a trial the \
             confirmation and the larger-scale check alone take about {:.0} min; --time {:.0}m gives the search about \
             30 trials (or lower --confirm-repeats, or a smaller --scale)",
            crate::outcome::duration_text(limit),
            reserved / 60.0,
            self.minutes_for_a_search()?
        ))
    }

    /// Search trials that ran (the memory model's rejections did not).
    pub fn search_trials_run(&self) -> usize {
        self.search_runs().count()
    }

    /// Search trials that ran, the defaults' aside.
    fn search_beyond_defaults(&self) -> usize {
        self.search_runs().filter(|t| !t.is_default).count()
    }

    fn search_runs(&self) -> impl Iterator<Item = &TrialRecord> {
        self.trials.iter().filter(|t| t.stage == Stage::Search && t.measurement.ran())
    }

    /// Minutes of `--time` that give the search about 30 trials beside the
    /// calibration, the confirmation and the larger-scale check.
    fn minutes_for_a_search(&self) -> Option<f64> {
        let (typical, reserved) = self.time_after_search()?;
        Some(((self.header.calibration_secs + reserved + 30.0 * typical) / 60.0).ceil())
    }

    /// Where `--time` starved the search ([`History::time_starved`]) and the
    /// confirmation with the larger-scale check would run past it: the study
    /// stops before its confirmation rather than overrun the limit (a
    /// confirmation of the defaults alone is not what the user asked for
    /// either), and says the `--time` to resume with.
    pub fn too_short_to_confirm(&self) -> Option<TooShort> {
        self.time_starved()?;
        let (limit, (typical, reserved)) = (self.header.time_budget_secs?, self.time_after_search()?);
        if self.spent() + reserved <= limit {
            return None;
        }
        let searched = self.search_beyond_defaults();
        Some(TooShort {
            why: format!(
                "--time {} left the search {searched} trial{} beyond the defaults, and at up to {typical:.0} s a trial \
                 the confirmation and the larger-scale check would take about {:.0} min more, past the limit",
                crate::outcome::duration_text(limit),
                if searched == 1 { "" } else { "s" },
                reserved / 60.0
            ),
            minutes: self.minutes_for_a_search()?,
        })
    }

    /// With two objectives, the search candidates no other candidate beats
    /// on both (each by its mean over its search and racing runs).
    fn pareto(&self) -> Vec<ParetoPoint> {
        let [first, second] = match self.header.objectives.as_slice() {
            [a, b] => [a, b],
            _ => return vec![],
        };
        let points: Vec<(String, [f64; 2])> = self
            .trials
            .iter()
            .filter(|t| t.stage == Stage::Search && t.measurement.ok())
            .filter_map(|t| {
                let score = [
                    racing::mean_score(self.trials, &t.label, first)?,
                    racing::mean_score(self.trials, &t.label, second)?,
                ];
                Some((t.label.clone(), score))
            })
            .collect();
        let dominated = |s: &[f64; 2]| {
            points.iter().any(|(_, o)| o[0] >= s[0] && o[1] >= s[1] && (o[0] > s[0] || o[1] > s[1]))
        };
        points
            .iter()
            .filter(|(_, s)| !dominated(s))
            .map(|(label, s)| ParetoPoint {
                label: label.clone(),
                values: [first.from_score(s[0]), second.from_score(s[1])],
            })
            .collect()
    }

    /// The finished study with what its reports need: the recommendation and
    /// the defaults at the full budget, and the engine's options file.
    pub fn outcome(
        &self,
        (verdict, transfer): (Option<Verdict>, Option<Transfer>),
        progress: Progress,
        scratch: &Path,
    ) -> anyhow::Result<StudyOutcome> {
        let full_budget = self.header.full_budget;
        let defaults = self.engine.resolve(&self.engine.defaults(full_budget), full_budget)?;
        let (recommended_options, option_rows, options_files) = match &verdict {
            None => (None, vec![], None),
            Some(v) => {
                let candidate = &v.recommended().candidate;
                let recommended = self.engine.resolve(candidate, full_budget)?;
                let rows = recommended
                    .shown
                    .iter()
                    .map(|(name, value)| OptionRow {
                        name: name.clone(),
                        recommended: value.clone(),
                        defaults: defaults
                            .shown
                            .iter()
                            .find(|(n, _)| n == name)
                            .map_or(String::new(), |d| d.1.clone()),
                    })
                    .collect();
                let files = self.engine.options_file(candidate, full_budget, scratch)?;
                (Some(recommended.options), rows, Some(files))
            }
        };
        Ok(StudyOutcome {
            header: self.header.clone(),
            trials: self.trials.to_vec(),
            verdict,
            phase_names: self.header.dataset.workload(self.header.scaled_budget()).phase_names(),
            default_candidate: self.engine.defaults(self.header.full_budget),
            recommended_options,
            option_rows,
            options_files,
            transfer,
            importances: importance::importances(
                self.space,
                self.trials,
                &self.header.objectives[0],
                self.header.seed,
            ),
            seeds_left_out: search::seeds_left_out(self.space, self.trials),
            racing: racing::summarize(self.trials, &self.header.objectives[0]),
            pareto: self.pareto(),
            search_cut_short: self.time_starved(),
            resume_minutes: self.too_short_to_confirm().map(|t| t.minutes),
            search_ended: self.search_ended(),
            machines: machines::machines(self.trials, &self.header.objectives[0]),
            progress,
        })
    }
}
