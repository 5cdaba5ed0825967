//! What a study runs next, decided from its journal alone (the trials
//! recorded, the tasks claimed), so every worker sharing the study decides
//! alike: a claim whose worker stopped is taken over; then, while the
//! search is open, the next racing pair of a finished challenger, else a
//! new search trial (the first: the defaults, run thrice when racing);
//! then the confirmation rounds (unless `--time` cannot hold them after a
//! search it starved: then a stop); then the larger-scale check; then the end.
//! A worker waits while others finish what the next stage needs.

use std::collections::{BTreeMap, BTreeSet};

use super::history::{History, TooShort};
use super::task::{self, Claim, Entrant, PlannedRun};
use crate::outcome::BASELINE_ORIGIN;
use crate::racing;
use crate::record::{Stage, TrialRecord};
use crate::space::Candidate;
use crate::trial;

/// The task key of the defaults' search trial.
pub const DEFAULTS_TASK: &str = "search:defaults";

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Claim and run this task.
    Run { task: String, runs: Vec<PlannedRun> },
    /// Ask the sampler for a search candidate, then claim it as [`Board::search_task`].
    Ask,
    /// Other workers are finishing what the next stage needs.
    Wait,
    /// `--time` starved the search and cannot hold its confirmation and the
    /// larger-scale check: stop before them, resumable with more `--time`.
    StopBeforeConfirmation(TooShort),
    /// Everything ran: write the outputs and close the study.
    Finish,
}

/// What the planner sees.
pub struct Board<'a> {
    pub history: History<'a>,
    /// The latest claim of each task, in the order the tasks were first claimed.
    pub claims: Vec<&'a Claim>,
    /// The numbers of the trials recorded.
    pub recorded: &'a BTreeSet<usize>,
    /// Each search trial's rival for a race, if it must race
    /// ([`racing::first_rival`], worked out once as the trial comes in).
    pub rivals: &'a BTreeMap<String, Option<String>>,
    /// Whether a claim's worker still holds it (its heartbeat lives).
    pub held: &'a dyn Fn(&Claim) -> bool,
    /// The engine's defaults fitted to the full budget.
    pub defaults: &'a Candidate,
    /// The sampler said it has nothing left.
    pub exhausted: bool,
}

impl Board<'_> {
    pub fn next(&self) -> Plan {
        if let Some(orphan) = self.claims.iter().find(|c| !self.done(c) && !(self.held)(c)) {
            return Plan::Run { task: orphan.task.clone(), runs: orphan.runs.clone() };
        }
        if !self.confirmation_began() {
            if let Some(race) = self.race() {
                return race;
            }
            if self.search_open() {
                let defaults_taken = self.claimed(DEFAULTS_TASK)
                    || self.trials().iter().any(|t| t.is_default && t.stage == Stage::Search);
                return match defaults_taken {
                    true => Plan::Ask,
                    false => self.defaults_task(),
                };
            }
            if self.in_flight() {
                return Plan::Wait;
            }
            if let Some(too_short) = self.history.too_short_to_confirm() {
                return Plan::StopBeforeConfirmation(too_short);
            }
        }
        let contenders = self.contenders();
        if let Some(round) = self.confirm(&contenders) {
            return round;
        }
        if self.in_flight() {
            return Plan::Wait;
        }
        match self.verify(&contenders) {
            Some(check) if !self.claimed("verify") => check,
            _ => Plan::Finish,
        }
    }

    fn trials(&self) -> &[TrialRecord] {
        self.history.trials
    }

    /// Whether every run of `claim` is recorded.
    pub fn done(&self, claim: &Claim) -> bool {
        claim.runs.iter().all(|r| self.recorded.contains(&r.number))
    }

    fn in_flight(&self) -> bool {
        self.claims.iter().any(|c| !self.done(c))
    }

    fn claimed(&self, task: &str) -> bool {
        self.claims.iter().any(|c| c.task == task)
    }

    /// The number the next run gets: one past every number recorded or claimed.
    fn next_number(&self) -> usize {
        let claimed = self.claims.iter().flat_map(|c| c.runs.iter().map(|r| r.number));
        claimed.chain(self.trials().iter().map(|t| t.number)).max().map_or(0, |n| n + 1)
    }

    /// A search trial of `candidate`, labelled by its number (`defaults` for them).
    pub fn search_task(
        &self,
        candidate: Candidate,
        is_default: bool,
        origin: String,
    ) -> (String, Vec<PlannedRun>) {
        let number = self.next_number();
        let label = if is_default { "defaults".to_string() } else { format!("#{number}") };
        let task = if is_default { DEFAULTS_TASK.to_string() } else { format!("search:{label}") };
        let entrant = Entrant { label, candidate, is_default, origin };
        let budget = self.history.header.scaled_budget();
        (task, vec![PlannedRun { number, stage: Stage::Search, round: None, budget, entrant }])
    }

    /// The defaults' search trial; when the study races, with
    /// [`racing::DEFAULTS_RUNS`] runs in all, so the first incumbent stands
    /// on its median rather than on one run.
    fn defaults_task(&self) -> Plan {
        let (task, mut runs) = self.search_task(self.defaults.clone(), true, "defaults".into());
        if self.history.header.racing {
            let first = runs[0].clone();
            let repeats = (1..racing::DEFAULTS_RUNS).map(|i| PlannedRun {
                number: first.number + i,
                stage: Stage::Race,
                round: Some(i),
                entrant: Entrant { origin: racing::REPEAT_ORIGIN.into(), ..first.entrant.clone() },
                ..first.clone()
            });
            runs.extend(repeats);
        }
        Plan::Run { task, runs }
    }

    fn confirmation_began(&self) -> bool {
        task::confirmation_began(self.claims.iter().copied(), self.trials())
    }

    /// Whether the search may start another trial: trials, time, rejections
    /// and the sampler allowing (trials under way count as run).
    fn search_open(&self) -> bool {
        let under_way = self.claims.iter().filter(|c| c.task.starts_with("search:") && !self.done(c)).count();
        self.history.search_closed(under_way).is_none() && !self.exhausted
    }

    /// The next racing pair of a finished challenger, if one is due: a
    /// challenger whose single run came within reach of the incumbent (as
    /// the journal stood when it was recorded) races it, one pair at a time,
    /// until [`racing::decide`] settles it.
    fn race(&self) -> Option<Plan> {
        let header = self.history.header;
        if !header.racing || self.history.out_of_time() {
            return None;
        }
        let objective = &header.objectives[0];
        let trials = self.trials();
        for challenger in trials {
            // Only a challenger with a rival races (worked out once, as it came in).
            let raced = challenger.stage == Stage::Search && challenger.measurement.ok();
            if !raced || !matches!(self.rivals.get(&challenger.label), Some(Some(_))) {
                continue;
            }
            let prefix = format!("race:{}:", challenger.label);
            let claims: Vec<&&Claim> = self.claims.iter().filter(|c| c.task.starts_with(&prefix)).collect();
            if claims.iter().any(|c| !self.done(c)) {
                continue; // a pair under way
            }
            let origin = racing::origin(&challenger.label);
            // A journal written before claims has its racing runs only.
            let raced: Vec<&TrialRecord> =
                trials.iter().filter(|t| t.stage == Stage::Race && t.origin == origin).collect();
            let round = claims.len().max(raced.iter().filter_map(|t| t.round).max().map_or(0, |r| r + 1));
            let incumbent = if round == 0 {
                self.rivals[&challenger.label].clone()?
            } else {
                let pairs = racing::pairs(trials, &challenger.label, objective);
                if pairs.len() < round || racing::decide(&pairs) != racing::Outcome::Running {
                    continue; // decided, or a run of a pair failed
                }
                raced.iter().find(|t| t.label != challenger.label)?.label.clone()
            };
            let sides = [self.entrant(&challenger.label), self.entrant(&incumbent)];
            let seed = header.seed ^ (challenger.number as u64).wrapping_mul(0x9E37) ^ round as u64;
            let first = self.next_number();
            let runs = trial::rounds(2, 1, seed)
                .into_iter()
                .enumerate()
                .map(|(i, (_, side))| PlannedRun {
                    number: first + i,
                    stage: Stage::Race,
                    round: Some(round),
                    budget: header.scaled_budget(),
                    entrant: Entrant { origin: origin.clone(), ..sides[side].clone() },
                })
                .collect();
            return Some(Plan::Run { task: format!("{prefix}{round}"), runs });
        }
        None
    }

    /// The entrant a search trial's label stands for.
    fn entrant(&self, label: &str) -> Entrant {
        let t = self
            .trials()
            .iter()
            .find(|t| t.stage == Stage::Search && t.label == label)
            .expect("a search trial");
        Entrant {
            label: t.label.clone(),
            candidate: t.candidate.clone(),
            is_default: t.is_default,
            origin: t.origin.clone(),
        }
    }

    /// The best few search candidates ([`racing::ranked`]), then the defaults.
    pub fn contenders(&self) -> Vec<Entrant> {
        let objective = &self.history.header.objectives[0];
        let top = self.history.header.confirm_top;
        let mut picked: Vec<Entrant> = racing::ranked(self.trials(), objective)
            .into_iter()
            .take(top)
            .map(|t| self.entrant(&t.label))
            .collect();
        picked.push(Entrant {
            label: "defaults".into(),
            candidate: self.defaults.clone(),
            is_default: true,
            origin: "defaults".into(),
        });
        picked
    }

    /// The next confirmation round not yet claimed: every contender, the
    /// defaults and the baseline once, in an order drawn afresh each round
    /// (seeded), so drift and order effects hit all alike and each contender
    /// pairs with the defaults of its round on the same machine.
    fn confirm(&self, contenders: &[Entrant]) -> Option<Plan> {
        let header = self.history.header;
        let baseline = header.baseline.iter().map(|b| Entrant {
            label: b.label.clone(),
            candidate: b.candidate.clone(),
            is_default: false,
            origin: BASELINE_ORIGIN.into(),
        });
        let sides: Vec<Entrant> = contenders.iter().cloned().chain(baseline).collect();
        let rounds = self.history.confirm_rounds();
        let schedule = trial::rounds(sides.len(), rounds, header.seed);
        let round = (0..rounds).find(|r| !self.claimed(&format!("confirm:{r}")))?;
        let first = self.next_number();
        let runs = schedule
            .iter()
            .filter(|(r, _)| *r == round)
            .enumerate()
            .map(|(i, &(_, side))| PlannedRun {
                number: first + i,
                stage: Stage::Confirm,
                round: Some(round),
                budget: header.scaled_budget(),
                entrant: sides[side].clone(),
            })
            .collect();
        Some(Plan::Run { task: format!("confirm:{round}"), runs })
    }

    /// Each contender once more at the larger scale, in a seeded random
    /// order, when the study has one and a verdict to check.
    fn verify(&self, contenders: &[Entrant]) -> Option<Plan> {
        let scale = self.history.header.verify_scale?;
        self.history.judge().0?;
        let budget = scale.apply(self.history.header.full_budget);
        let first = self.next_number();
        let runs = trial::rounds(contenders.len(), 1, self.history.header.seed ^ 0x5CA1E)
            .into_iter()
            .enumerate()
            .map(|(i, (_, index))| PlannedRun {
                number: first + i,
                stage: Stage::Verify,
                round: None,
                budget,
                entrant: contenders[index].clone(),
            })
            .collect();
        Some(Plan::Run { task: "verify".into(), runs })
    }
}
