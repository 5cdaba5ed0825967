//! Put-backs: while an expert seed leads, its one-step neighbours towards
//! the defaults (each parameter it changes, put back alone), as an
//! engineer prunes a preset; then the same of a put-back that took the
//! lead. A seed bundles an engineer's guesses, none of them measured alone,
//! and a model rarely proposes the point one change away from the best it
//! knows: on spork at 1/128 the default run recommended the write-heavy
//! seed, whose zstd at the bottom level cost it 12% (`kvtune ablate`: put
//! back, +12.2%, p = 0.006), and its 18 trials never tried that. Racing
//! then settles each put-back against the leader on paired runs.
//!
//! A put-back takes the place of a proposal the strategy itself judges not
//! worth a trial (bayes: its expected improvement below what a run
//! resolves), and follows when the strategy has nothing left; it never
//! displaces a proposal the model expects to gain from. Forced in, they
//! cost more than they found on the benchmark (`cargo bench --bench
//! search`, the full space's made-up landscape, 30 trials): one ask in two
//! took bayes's best found from 92% of the best to 84% (and its first
//! contender on the table from 15 trials to within 5% of the best to 20,
//! when every leader was pruned), one in three to 87%; in place of flat
//! proposals only, 90.6% against 90.8% without put-backs over 120 seeds (18
//! put-backs in the 120 studies). A leader the model proposed is left to
//! the model, whose pool already draws around the best it knows.

use super::start::SEED_ORIGIN;
use super::{Admissible, Proposal, Sampler};
use crate::racing;
use crate::record::{Objective, Stage, TrialRecord};
use crate::space::{Candidate, Space};

/// How a put-back's trials are marked in the history: `put-back:PARAM`.
pub const PUT_BACK_ORIGIN: &str = "put-back:";

pub struct PutBacks {
    inner: Box<dyn Sampler>,
    objective: Objective,
    admissible: Admissible,
}

impl PutBacks {
    pub fn new(inner: Box<dyn Sampler>, objective: Objective, admissible: Admissible) -> Self {
        PutBacks { inner, objective, admissible }
    }
}

/// `set`'s one-step neighbours towards `defaults`, each with the parameter
/// it puts back: for each parameter `set` gives a value other than the
/// defaults', `set` with that one put back, unless the two run alike (a
/// value the engine overrides, or one that only counts beside another,
/// would only cost a run). `kvtune ablate` measures the same list.
pub fn one_change_back(
    set: &Candidate,
    defaults: &Candidate,
    alike: impl Fn(&Candidate, &Candidate) -> bool,
) -> Vec<(String, Candidate)> {
    set.iter()
        .filter_map(|(param, value)| {
            let default = defaults.get(param).filter(|d| *d != value)?;
            let mut back = set.clone();
            back.insert(param.clone(), default.clone());
            (!alike(&back, set)).then(|| (param.clone(), back))
        })
        .collect()
}

/// The leading candidate's put-backs not tried yet, if a seed or a put-back
/// leads ([`one_change_back`] of it, those the study would run), the
/// space's parameters first, in its order. A put-back's value is the
/// defaults', which may lie outside the space (a memtable share below its
/// range at a large budget, a parameter only seeds set): a model sees it
/// where the space's encoding puts it, at the range's end or, for a
/// parameter the space does not search, at the leader's own point, where
/// its run counts as one more of the leader's, noise to the model.
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
    let mut backs =
        one_change_back(&leader.candidate, &defaults.candidate, |a, b| admissible.runs_alike(a, b));
    backs.retain(|(_, back)| admissible.fresh(history, back));
    backs.sort_by_key(|(name, _)| searched(name));
    backs
}

impl Sampler for PutBacks {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let own = self.inner.ask(space, history);
        if own.is_some() && !self.inner.flat() {
            return own;
        }
        let backs = put_backs(space, history, &self.objective, &self.admissible);
        if backs.is_empty() {
            return own;
        }
        let candidates: Vec<Candidate> = backs.iter().map(|(_, c)| c.clone()).collect();
        let (name, candidate) = backs.get(self.inner.prefer(space, history, &candidates))?.clone();
        Some(Proposal { candidate, origin: format!("{PUT_BACK_ORIGIN}{name}") })
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.inner.tell(trial);
    }

    fn prefer(&mut self, space: &Space, history: &[TrialRecord], candidates: &[Candidate]) -> usize {
        self.inner.prefer(space, history, candidates)
    }
}
