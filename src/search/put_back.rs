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
//! put-backs in the 120 studies).
//!
//! Steps: a one-knob step of the leader (one parameter moved to another
//! region of its range) may take a flat proposal's place too, pooled with
//! the put-backs of a pruned leader (a leader the model proposed has none,
//! and there the flat proposal itself stays among them), the model's pick
//! among the steps of the knobs stepped least so far (each knob probed
//! once before any twice). On tbs at twice the budget a 30-minute run
//! recommended 9 KB blocks and a longer study 155 KB blocks on the same
//! shape, 8% faster (the scans): the model had the leader and not the
//! knob's far end.
//! When the strategy has nothing left (bayes: its stop rule), steps go on
//! until [`STEP_PATIENCE`] of them have run since the leader's own trial
//! without one taking the lead: the model's stop says nothing anywhere is
//! worth a run, the steps ask it once more of the leader's own knobs.

use super::start::SEED_ORIGIN;
use super::{Admissible, Proposal, Sampler};
use crate::racing;
use crate::record::{Objective, Stage, TrialRecord};
use crate::space::{Candidate, Space};

/// How a put-back's trials are marked in the history: `put-back:PARAM`.
pub const PUT_BACK_ORIGIN: &str = "put-back:";
/// How a step's trials are marked in the history: `step:PARAM`.
pub const STEP_ORIGIN: &str = "step:";
/// Steps run since the leader's own trial after which, the strategy
/// having nothing left, the search ends: the leader held against that many
/// of its neighbours.
pub const STEP_PATIENCE: usize = 8;

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

/// What may take the place of a flat proposal, each with its origin, and
/// whether the leader is pruned (a seed or a put-back: bundled guesses).
/// Whatever leads, its one-knob moves not tried yet: if the leader is
/// pruned, its put-backs ([`one_change_back`], those the study would run)
/// and its [`one_knob_steps`], pooled for the strategy to pick from
/// (bayes: the highest upper bound), except that a put-back of a
/// parameter the space does not search comes first, as the model cannot
/// weigh it (it sees the put-back at the leader's own point); else its
/// steps alone, beside which the strategy's own flat proposal stays in the
/// running (on the benchmark's table, whose leaders the model finds,
/// steps in place of it took bayes from 13 trials to within 5% of the
/// best to 16; pooled with it, 13). Once the strategy has `stopped`, the
/// pool is offered while fewer than [`STEP_PATIENCE`] of its moves ran
/// since the leader's trial.
///
/// Pooled, not put-backs first: on tbs at twice the budget the leading
/// seed's put-backs took 22 of a 30-minute run's 45 trials, while the steps
/// that then won four races in a row waited behind them. A put-back's value
/// is the defaults', which may lie outside the space (a memtable share
/// below its range at a large budget): a model sees it at the range's end.
fn moves(
    space: &Space,
    history: &[TrialRecord],
    objective: &Objective,
    admissible: &Admissible,
    stopped: bool,
) -> (Vec<(String, Candidate)>, bool) {
    let Some(leader) = racing::best_beyond_defaults(history, objective) else {
        return (vec![], false);
    };
    let pruned = leader.origin.starts_with(SEED_ORIGIN) || leader.origin.starts_with(PUT_BACK_ORIGIN);
    let alike = |a: &Candidate, b: &Candidate| admissible.runs_alike(a, b);
    let mut backs = match pruned {
        true => fresh_put_backs(space, history, leader, admissible),
        false => vec![],
    };
    let searched = |name: &String| space.params.iter().any(|p| &p.name == name);
    let unseen = backs.iter().position(|(name, _)| !searched(name)).unwrap_or(backs.len());
    let labelled = |origin: &str, moves: Vec<(String, Candidate)>| {
        moves.into_iter().map(|(name, c)| (format!("{origin}{name}"), c)).collect::<Vec<_>>()
    };
    let blind = labelled(PUT_BACK_ORIGIN, backs.split_off(unseen));
    if !blind.is_empty() {
        return (blind, pruned);
    }
    let is_move = |t: &&TrialRecord| {
        t.stage == Stage::Search
            && (t.origin.starts_with(STEP_ORIGIN) || t.origin.starts_with(PUT_BACK_ORIGIN))
    };
    let moves_since = history.iter().filter(is_move).filter(|t| t.number > leader.number).count();
    if stopped && moves_since >= STEP_PATIENCE {
        return (vec![], pruned);
    }
    let mut steps = one_knob_steps(space, &leader.candidate, alike);
    steps.retain(|(_, step)| !backs.iter().any(|(_, back)| back == step));
    admissible.retain_fresh(history, &mut steps);
    keep_least_stepped(history, &mut steps);
    let mut pool = labelled(PUT_BACK_ORIGIN, backs);
    pool.extend(labelled(STEP_ORIGIN, steps));
    (pool, pruned)
}

/// The leader's put-backs the study would run and has not, the space's
/// parameters first in its order, then those it does not search.
fn fresh_put_backs(
    space: &Space,
    history: &[TrialRecord],
    leader: &TrialRecord,
    admissible: &Admissible,
) -> Vec<(String, Candidate)> {
    let Some(defaults) = history.iter().find(|t| t.is_default && t.stage == Stage::Search) else {
        return vec![];
    };
    let alike = |a: &Candidate, b: &Candidate| admissible.runs_alike(a, b);
    let mut backs = one_change_back(&leader.candidate, &defaults.candidate, alike);
    admissible.retain_fresh(history, &mut backs);
    let order = |name: &str| space.params.iter().position(|p| p.name == name).unwrap_or(usize::MAX);
    backs.sort_by_key(|(name, _)| order(name));
    backs
}

/// Keeps the steps of the parameters stepped least often in `history`
/// (every leader's steps counted): each knob is probed once before any is
/// probed again, the strategy picking among them. Left to the model's pick
/// alone, the tbs default run at 06a4bf7 stepped target_file_size three
/// times, compression, block size and bloom bits twice each, and never the
/// memtable share, the knob behind a longer study's leader (level
/// compaction with memtables at the range's top: +25% in its race); the
/// model, fitted on 15% noise, ranks one step of a leader against another
/// on little, and its stop leaves [`STEP_PATIENCE`] steps.
fn keep_least_stepped(history: &[TrialRecord], steps: &mut Vec<(String, Candidate)>) {
    let mut times = std::collections::HashMap::new();
    for t in history.iter().filter(|t| t.stage == Stage::Search) {
        if let Some(param) = t.origin.strip_prefix(STEP_ORIGIN) {
            *times.entry(param).or_insert(0) += 1;
        }
    }
    let stepped = |param: &str| times.get(param).copied().unwrap_or(0);
    let Some(fewest) = steps.iter().map(|(param, _)| stepped(param)).min() else {
        return;
    };
    steps.retain(|(param, _)| stepped(param) == fewest);
}

/// `set`'s one-knob steps: for each parameter of the space, `set` with it
/// alone at each other of its [`Param::step_levels`](crate::space::Param::step_levels),
/// unless the two run alike. Where a model's pool redraws one or two
/// parameters of the best points at random, these walk each knob of the
/// leader across its range, which is how an engineer probes a preset.
fn one_knob_steps(
    space: &Space,
    set: &Candidate,
    alike: impl Fn(&Candidate, &Candidate) -> bool,
) -> Vec<(String, Candidate)> {
    let mut steps = vec![];
    for param in &space.params {
        for level in param.step_levels() {
            if set.get(&param.name) == Some(&level) {
                continue;
            }
            let mut step = set.clone();
            step.insert(param.name.clone(), level);
            if !alike(&step, set) {
                steps.push((param.name.clone(), step));
            }
        }
    }
    steps
}

impl Sampler for PutBacks {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let own = self.inner.ask(space, history);
        if own.is_some() && !self.inner.flat() {
            return own;
        }
        let (mut moves, pruned) = moves(space, history, &self.objective, &self.admissible, own.is_none());
        if moves.is_empty() {
            return own;
        }
        // Beside a leader the model found, its own flat proposal stays in
        // the running: the steps are one more view of the same model.
        if let Some(own) = own.filter(|_| !pruned) {
            moves.push((own.origin, own.candidate));
        }
        let candidates: Vec<Candidate> = moves.iter().map(|(_, c)| c.clone()).collect();
        let (origin, candidate) = moves.get(self.inner.prefer(space, history, &candidates))?.clone();
        Some(Proposal { candidate, origin })
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.inner.tell(trial);
    }

    fn prefer(&mut self, space: &Space, history: &[TrialRecord], candidates: &[Candidate]) -> usize {
        self.inner.prefer(space, history, candidates)
    }
}
