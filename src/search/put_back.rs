//! Put-backs: between a strategy's own proposals, while an expert seed
//! leads, the seed's one-step neighbours towards the defaults (each
//! parameter it changes, put back alone), as an engineer prunes a preset;
//! then the same of a put-back that took the lead. A seed bundles an
//! engineer's guesses, none of them measured alone, and a model rarely
//! proposes the point one change away from the best it knows: on spork at
//! 1/128 the default run recommended the write-heavy seed, whose zstd at
//! the bottom level cost it 12% (`kvtune ablate`: put back, +12.2%,
//! p = 0.006), and its 18 trials never tried that. Racing then settles
//! each put-back against the leader on paired runs. A leader the model
//! proposed is left to the model, whose pool draws around the best it
//! knows: put-backs of every leader, one ask in two, cost the benchmark
//! (`cargo bench --bench search`) a third more trials to a first contender
//! within 5% of the best (20 against 15 in the median) and, on the full
//! space, 8 points of the best found in 30 trials (84% against 92%).

use super::start::SEED_ORIGIN;
use super::{seen, Admissible, Proposal, Sampler};
use crate::racing;
use crate::record::{Objective, Stage, TrialRecord};
use crate::space::{Candidate, Space};

/// How a put-back's trials are marked in the history: `put-back:PARAM`.
pub const PUT_BACK_ORIGIN: &str = "put-back:";

pub struct PutBacks {
    inner: Box<dyn Sampler>,
    objective: Objective,
    admissible: Admissible,
    /// The next ask offers a put-back (asks alternate, a put-back first).
    put_back_turn: bool,
}

impl PutBacks {
    pub fn new(inner: Box<dyn Sampler>, objective: Objective, admissible: Admissible) -> Self {
        PutBacks { inner, objective, admissible, put_back_turn: true }
    }
}

/// The leading candidate's put-backs not tried yet, if a seed or a put-back
/// leads, each with the parameter
/// it puts back: those the study would run and whose options differ from
/// the leader's as the engine runs them (a value the engine overrides
/// would only cost a trial); the space's parameters first, in its order.
fn put_backs(
    space: &Space,
    history: &[TrialRecord],
    objective: &Objective,
    admissible: &Admissible,
) -> Vec<(String, Candidate)> {
    let pruned =
        |t: &&TrialRecord| t.origin.starts_with(SEED_ORIGIN) || t.origin.starts_with(PUT_BACK_ORIGIN);
    let Some(leader) = racing::best_beyond_defaults(history, objective).filter(pruned) else {
        return vec![];
    };
    let Some(defaults) = history.iter().find(|t| t.is_default && t.stage == Stage::Search) else {
        return vec![];
    };
    let searched = |name: &str| space.params.iter().position(|p| p.name == name).unwrap_or(usize::MAX);
    let mut changed: Vec<&String> = leader
        .candidate
        .iter()
        .filter(|(k, v)| defaults.candidate.get(*k).is_some_and(|d| d != *v))
        .map(|(k, _)| k)
        .collect();
    changed.sort_by_key(|name| searched(name));
    changed
        .into_iter()
        .map(|name| {
            let mut back = leader.candidate.clone();
            back.insert(name.clone(), defaults.candidate[name].clone());
            (name.clone(), back)
        })
        .filter(|(_, back)| {
            !seen(history, back) && admissible.admits(back) && !admissible.runs_alike(back, &leader.candidate)
        })
        .collect()
}

impl Sampler for PutBacks {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let backs = put_backs(space, history, &self.objective, &self.admissible);
        let put_back = |inner: &mut Box<dyn Sampler>| {
            let candidates: Vec<Candidate> = backs.iter().map(|(_, c)| c.clone()).collect();
            let (name, candidate) = backs.get(inner.prefer(space, history, &candidates))?.clone();
            Some(Proposal { candidate, origin: format!("{PUT_BACK_ORIGIN}{name}") })
        };
        if std::mem::replace(&mut self.put_back_turn, false) && !backs.is_empty() {
            return put_back(&mut self.inner);
        }
        self.put_back_turn = true;
        self.inner.ask(space, history).or_else(|| put_back(&mut self.inner))
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.inner.tell(trial);
    }

    fn prefer(&mut self, space: &Space, history: &[TrialRecord], candidates: &[Candidate]) -> usize {
        self.inner.prefer(space, history, candidates)
    }
}
