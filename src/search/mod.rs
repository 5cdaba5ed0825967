//! Samplers propose candidates (`ask`) and learn from finished trials
//! (`tell`), as in Optuna: `grid`, `random`, `bayes` (a Gaussian process
//! with expected improvement, the default) and `tpe`. Every strategy but
//! grid starts the same way ([`start`]): the space's expert seeds, then
//! (for the models) a space-filling Sobol design.

mod bayes;
mod encoding;
mod grid;
pub mod importance;
mod random;
mod start;
#[cfg(test)]
mod tests;
mod tpe;

use rand::rngs::StdRng;
use rand::SeedableRng;

pub use bayes::BayesSampler;
pub use encoding::Encoding;
pub use grid::GridSampler;
pub use random::RandomSampler;
pub use start::Start;
pub use tpe::TpeSampler;

use crate::record::{Objective, TrialRecord};
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
}

pub use crate::outcome::Strategy;

/// Points of the space-filling design the models start from.
pub const SOBOL_POINTS: usize = 6;

impl Strategy {
    /// The sampler of this strategy for a study of `space` that maximises
    /// `objective`, deterministic for `seed`.
    pub fn sampler(
        self,
        space: &Space,
        budget_trials: usize,
        seed: u64,
        objective: &Objective,
    ) -> Box<dyn Sampler> {
        let rng = StdRng::seed_from_u64(seed ^ 0x5A3D_1E57);
        let sobol_seed = (seed ^ 0x50B0_1000) as u32;
        match self {
            Strategy::Grid => Box::new(GridSampler::new(space, budget_trials, rng)),
            Strategy::Random => Box::new(Start::new(space, 0, sobol_seed, Box::new(RandomSampler::new(rng)))),
            Strategy::Bayes => {
                let model = BayesSampler::new(space, objective.clone(), rng);
                Box::new(Start::new(space, SOBOL_POINTS, sobol_seed, Box::new(model)))
            }
            Strategy::Tpe => {
                let model = TpeSampler::new(space, objective.clone(), seed ^ 0x7BE0);
                Box::new(Start::new(space, SOBOL_POINTS, sobol_seed, Box::new(model)))
            }
        }
    }
}

/// Whether a candidate was tried already (tried candidates are recorded
/// completed with defaults, so compare on the parameters it sets).
fn seen(history: &[TrialRecord], candidate: &Candidate) -> bool {
    history.iter().any(|t| candidate.iter().all(|(k, v)| t.candidate.get(k) == Some(v)))
}
