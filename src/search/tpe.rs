//! `--strategy tpe`: a tree-structured Parzen estimator per parameter (the
//! `tpe` crate), Optuna's default sampler: it proposes values whose density
//! among the best tenth of trials is high against the rest. It learns from
//! every search trial it is told of; a candidate that never succeeded is
//! told as a penalty below the worst success.

use rand_tpe::rngs::StdRng;
use rand_tpe::SeedableRng;
use tpe::density_estimation::DefaultEstimatorBuilder;
use tpe::TpeOptimizer;

use super::{untried, Admissible, Proposal, Sampler};
use crate::record::{Objective, Stage, TrialRecord};
use crate::space::{Candidate, Domain, Space};

pub struct TpeSampler {
    /// One optimiser per parameter, in the space's order, over [0, 1] for
    /// numbers (the unit encoding) and the choice index for choices.
    optimisers: Vec<TpeOptimizer<DefaultEstimatorBuilder>>,
    objective: Objective,
    rng: StdRng,
    /// For a random candidate where the estimators only repeat themselves.
    fallback: rand::rngs::StdRng,
    admissible: Admissible,
    /// Scores told so far, for the penalty of a failed trial.
    worst: Option<f64>,
    /// Failed trials' points waiting for a success to set the penalty by.
    pending: Vec<Vec<f64>>,
    space: Space,
}

/// How far below the worst success a failure is told (in log units: 10%).
const PENALTY: f64 = 0.1;

impl TpeSampler {
    /// TPE optimisers for `space`, drawing from a generator seeded with `seed`.
    pub fn new(space: &Space, objective: Objective, seed: u64, admissible: Admissible) -> Self {
        let rng = StdRng::seed_from_u64(seed);
        let fallback = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed ^ 0xFA11);
        let optimisers = space
            .params
            .iter()
            .map(|p| match &p.domain {
                Domain::Choice { values } => TpeOptimizer::new(
                    tpe::histogram_estimator(),
                    tpe::categorical_range(values.len()).expect("a choice has values"),
                ),
                _ => TpeOptimizer::new(tpe::parzen_estimator(), tpe::range(0.0, 1.0).expect("a valid range")),
            })
            .collect();
        TpeSampler {
            optimisers,
            objective,
            rng,
            fallback,
            admissible,
            worst: None,
            pending: vec![],
            space: space.clone(),
        }
    }

    /// Each parameter's value in the optimiser's terms.
    fn point(space: &Space, candidate: &Candidate) -> Vec<f64> {
        space
            .params
            .iter()
            .zip(space.encode(candidate))
            .map(|(p, u)| match &p.domain {
                Domain::Choice { values } => {
                    ((u * values.len() as f64) as usize).min(values.len() - 1) as f64
                }
                _ => u,
            })
            .collect()
    }

    fn tell_point(&mut self, point: &[f64], loss: f64) {
        for (optimiser, value) in self.optimisers.iter_mut().zip(point) {
            let _ = optimiser.tell(*value, loss);
        }
    }
}

impl Sampler for TpeSampler {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        for _ in 0..100 {
            let unit: Vec<f64> = space
                .params
                .iter()
                .zip(self.optimisers.iter_mut())
                .map(|(p, optimiser)| {
                    let value = optimiser.ask(&mut self.rng).unwrap_or(0.5);
                    match &p.domain {
                        Domain::Choice { values } => (value.floor() + 0.5) / values.len() as f64,
                        _ => value,
                    }
                })
                .collect();
            let candidate = space.decode(&unit);
            if self.admissible.fresh(history, &candidate) {
                return Some(Proposal { candidate, origin: "tpe".into() });
            }
        }
        // The estimators keep proposing what was tried or would be
        // rejected: a random untried one.
        let candidate = untried(space, history, &mut self.fallback, &self.admissible)?;
        Some(Proposal { candidate, origin: "random".into() })
    }

    fn tell(&mut self, trial: &TrialRecord) {
        if trial.stage != Stage::Search {
            return;
        }
        let point = Self::point(&self.space, &trial.candidate_as_ran());
        // TPE minimises: the loss is minus the score; a candidate that never
        // succeeded is told just below the worst success (once there is one).
        match self.objective.score(&trial.measurement) {
            Some(score) => {
                let worst = self.worst.map_or(score, |w| w.min(score));
                self.worst = Some(worst);
                self.tell_point(&point, -score);
                for failed in std::mem::take(&mut self.pending) {
                    self.tell_point(&failed, -(worst - PENALTY));
                }
            }
            None => match self.worst {
                Some(worst) => self.tell_point(&point, -(worst - PENALTY)),
                None => self.pending.push(point),
            },
        }
    }
}
