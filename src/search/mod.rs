//! Samplers propose candidates (`ask`) and learn from finished trials
//! (`tell`), as in Optuna: `grid`, `random`, `bayes` (a Gaussian process
//! and an upper confidence bound, the default) and `tpe`. Every strategy but
//! grid starts the same way ([`start`]): the space's expert seeds, then
//! (for the models) a space-filling Sobol design; after it, while an
//! expert seed (or a put-back of one) leads, the leader's put-backs take
//! the place of proposals the strategy judges not worth a trial, and once
//! none is left, one-knob steps of whatever leads ([`put_back`]).

mod bayes;
mod encoding;
mod grid;
pub mod importance;
mod put_back;
mod random;
mod start;
#[cfg(test)]
mod tests;
mod tpe;

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::SeedableRng;

pub use bayes::BayesSampler;
pub use encoding::Encoding;
pub use grid::GridSampler;
pub use put_back::{one_change_back, PutBacks, PUT_BACK_ORIGIN, STEP_ORIGIN, STEP_PATIENCE};
pub use random::RandomSampler;
pub use start::{seeds_left_out, Start};
pub use tpe::TpeSampler;

use crate::record::{as_ran, Adjustment, Objective, OptionSet, Stage, TrialRecord};
use crate::space::{Candidate, Space};

/// A candidate to try and where it came from (`seed:NAME`, `sobol`,
/// `model`, `random`, `grid`, `tpe`), for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub candidate: Candidate,
    pub origin: String,
}

/// A search strategy.
pub trait Sampler {
    /// The next candidate to try, or `None` when the strategy has nothing left.
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal>;
    /// Learns from a finished trial (models that keep state update here).
    fn tell(&mut self, _trial: &TrialRecord) {}
    /// Whether its last proposal was, by its own judgement, not worth a
    /// trial (bayes: its expected improvement was below what a run resolves).
    fn flat(&self) -> bool {
        false
    }
    /// Which of `candidates` (not empty) the strategy would try first:
    /// bayes's pick by its acquisition; the others' (tpe, random), the first.
    fn prefer(&mut self, _space: &Space, _history: &[TrialRecord], _candidates: &[Candidate]) -> usize {
        0
    }
}

pub use crate::outcome::Strategy;

/// Points of the space-filling design the models start from.
pub const SOBOL_POINTS: usize = 4;

impl Strategy {
    /// The sampler of this strategy for a study of `space` that maximises
    /// `objective`, deterministic for `seed`, proposing only what `admissible`
    /// admits where it can (grid walks every level of its grid regardless);
    /// without `early_stop`, bayes never judges that nothing is left.
    pub fn sampler(
        self,
        space: &Space,
        budget_trials: usize,
        seed: u64,
        objective: &Objective,
        admissible: Admissible,
        early_stop: bool,
    ) -> Box<dyn Sampler> {
        let rng = StdRng::seed_from_u64(seed ^ 0x5A3D_1E57);
        let sobol_seed = (seed ^ 0x50B0_1000) as u32;
        let start = |points, inner| {
            let put_backs = Box::new(PutBacks::new(inner, objective.clone(), admissible.clone()));
            Box::new(Start::new(space, points, sobol_seed, admissible.clone(), put_backs))
        };
        match self {
            Strategy::Grid => Box::new(GridSampler::new(space, budget_trials, rng)),
            Strategy::Random => start(0, Box::new(RandomSampler::new(rng, admissible.clone()))),
            Strategy::Bayes => start(
                SOBOL_POINTS,
                Box::new(
                    BayesSampler::new(space, objective.clone(), rng, admissible.clone()).stopping(early_stop),
                ),
            ),
            Strategy::Tpe => {
                let model = TpeSampler::new(space, objective.clone(), seed ^ 0x7BE0, admissible.clone());
                start(SOBOL_POINTS, Box::new(model))
            }
        }
    }
}

impl Strategy {
    /// What it means when this strategy's sampler proposes nothing more.
    pub fn nothing_left_means(self) -> String {
        match self {
            Strategy::Bayes => format!(
                "{}; then no one-knob step of the leader took its lead ({STEP_PATIENCE} in a row, or none left)",
                bayes::nothing_left_means()
            ),
            Strategy::Grid => "every point of its grid had run".into(),
            Strategy::Random | Strategy::Tpe => "no untried candidate the study would run was left".into(),
        }
    }
}

/// The engine's word on a candidate at the study's budget: whether the
/// study would run it, the options it runs as, and where it runs another
/// value than the one asked (a memtable share below the floor at a small
/// scale), that value.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub admitted: bool,
    pub options: OptionSet,
    pub adjusted: Vec<Adjustment>,
}

impl Resolution {
    /// Admitted, and run as asked with `options`.
    pub fn as_asked(options: OptionSet) -> Self {
        Resolution { admitted: true, options, adjusted: vec![] }
    }
}

/// The engine's word on a candidate, `None` where it cannot take it.
type Judge = Arc<dyn Fn(&Candidate) -> Option<Resolution> + Send + Sync>;

/// Which candidates the study would run: the checks a trial meets before it
/// runs (the engine's memory model against the budget, what the dataset
/// allows). A candidate they reject still costs a trial and, taught to a
/// model as a penalty, keeps its neighbours coming back (seen on spork at
/// twice the budget: 7 of a study's 29 search trials rejected, the model
/// chasing larger caches); so samplers leave such candidates out. It also
/// knows what a candidate runs as, so no sampler proposes what a trial
/// already ran, nor a put-back that changes nothing the engine runs, and a
/// model weighs a candidate where it would run.
#[derive(Clone)]
pub struct Admissible {
    admits: Arc<dyn Fn(&Candidate) -> bool + Send + Sync>,
    /// The engine's word (see [`Admissible::judged_by`]).
    judge: Option<Judge>,
}

impl Admissible {
    /// Admits what `admits` does; every candidate runs as asked, and no
    /// two alike.
    pub fn new(admits: impl Fn(&Candidate) -> bool + Send + Sync + 'static) -> Self {
        Admissible { admits: Arc::new(admits), judge: None }
    }

    /// Admits what the engine's `judge` admits, knowing what a candidate
    /// runs as: a value the engine overrides, or one that only counts
    /// beside another, changes nothing; a value below a floor runs at the
    /// floor. One call answers both, as a study resolves a candidate once.
    pub fn judged_by(judge: impl Fn(&Candidate) -> Option<Resolution> + Send + Sync + 'static) -> Self {
        let judge: Judge = Arc::new(judge);
        let admits = judge.clone();
        Admissible { admits: Arc::new(move |c| admits(c).is_some_and(|j| j.admitted)), judge: Some(judge) }
    }

    /// The engine's options for `candidate`, `None` without its word or
    /// where it cannot take it.
    fn options(&self, candidate: &Candidate) -> Option<OptionSet> {
        self.judge.as_ref().and_then(|judge| judge(candidate)).map(|j| j.options)
    }

    /// Whether `a` and `b` would run the same options (without an engine's
    /// word, whether they are the same candidate).
    pub fn runs_alike(&self, a: &Candidate, b: &Candidate) -> bool {
        match &self.judge {
            Some(_) => self.options(a).is_some_and(|options| self.options(b) == Some(options)),
            None => a == b,
        }
    }

    /// `candidate` with the values it would run at where the engine runs
    /// others than asked ([`as_ran`]): the point a model weighs it at, as
    /// it learns from each trial at the point it ran at.
    pub fn as_run(&self, candidate: &Candidate) -> Candidate {
        match self.judge.as_ref().and_then(|judge| judge(candidate)) {
            Some(j) => as_ran(candidate, &j.adjusted),
            None => candidate.clone(),
        }
    }

    /// [`Admissible::as_run`] of a candidate it admits, `None` for one it
    /// does not, with the engine asked once.
    pub fn admitted_as_run(&self, candidate: &Candidate) -> Option<Candidate> {
        match &self.judge {
            Some(judge) => judge(candidate).filter(|j| j.admitted).map(|j| as_ran(candidate, &j.adjusted)),
            None => self.admits(candidate).then(|| candidate.clone()),
        }
    }

    /// Admits every candidate (a table's look-ups, tests).
    pub fn any() -> Self {
        Admissible::new(|_| true)
    }

    pub fn admits(&self, candidate: &Candidate) -> bool {
        (self.admits)(candidate)
    }

    /// Whether a search trial of `history` ran the options `candidate`
    /// would: the history holds candidates as they ran, so one the engine
    /// adjusts is not [`seen`] as asked. On tsdb a put-back of 4 memtables
    /// merged 2 at a time to 2 memtables ran as merging 1; `seen` missed it
    /// and the same run was proposed four times in a row. Without an
    /// engine's word, [`seen`] is all there is.
    pub fn ran_alike(&self, history: &[TrialRecord], candidate: &Candidate) -> bool {
        self.judge.is_some() && self.among(&self.ran(history), candidate)
    }

    /// The options each search trial of `history` ran as (none without an
    /// engine's word).
    fn ran(&self, history: &[TrialRecord]) -> Vec<OptionSet> {
        history
            .iter()
            .filter(|t| t.stage == Stage::Search)
            .filter_map(|t| self.options(&t.candidate))
            .collect()
    }

    /// Whether `candidate` runs as one of `ran`.
    fn among(&self, ran: &[OptionSet], candidate: &Candidate) -> bool {
        self.options(candidate).is_some_and(|options| ran.contains(&options))
    }

    /// Whether the study would run `candidate` and no search trial ran it
    /// yet, as asked or alike.
    pub fn fresh(&self, history: &[TrialRecord], candidate: &Candidate) -> bool {
        !seen(history, candidate) && self.admits(candidate) && !self.ran_alike(history, candidate)
    }

    /// Keeps the [fresh](Admissible::fresh) of `named` candidates, the
    /// history resolved once for all of them (a leader's steps are dozens).
    pub fn retain_fresh(&self, history: &[TrialRecord], named: &mut Vec<(String, Candidate)>) {
        let ran = self.ran(history);
        named.retain(|(_, c)| !seen(history, c) && self.admits(c) && !self.among(&ran, c));
    }
}

/// A random candidate not tried yet (nor one that runs as a tried one),
/// an admissible one if any of many draws is, else the first inadmissible
/// draw; `None` when every draw was tried already.
fn untried(
    space: &Space,
    history: &[TrialRecord],
    rng: &mut StdRng,
    admissible: &Admissible,
) -> Option<Candidate> {
    let mut fallback = None;
    for _ in 0..1000 {
        let candidate = space.sample(rng);
        if seen(history, &candidate) {
            continue;
        }
        if !admissible.admits(&candidate) {
            fallback.get_or_insert(candidate);
        } else if !admissible.ran_alike(history, &candidate) {
            return Some(candidate);
        }
    }
    fallback
}

/// Whether a candidate was tried already (tried candidates are recorded
/// completed with defaults, so compare on the parameters it sets).
fn seen(history: &[TrialRecord], candidate: &Candidate) -> bool {
    history.iter().any(|t| candidate.iter().all(|(k, v)| t.candidate.get(k) == Some(v)))
}
