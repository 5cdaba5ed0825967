//! Samplers propose candidates (`ask`) and learn from finished trials
//! (`tell`), as in Optuna. `grid` and `random` live here; a model-based
//! sampler plugs in through the same trait.

mod grid;
mod random;

use rand::rngs::StdRng;
use rand::SeedableRng;

pub use grid::GridSampler;
pub use random::RandomSampler;

use crate::record::TrialRecord;
use crate::space::{Candidate, Space};

/// A search strategy.
pub trait Sampler {
    /// The next candidate to try, or `None` when the strategy has nothing left.
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Candidate>;
    /// Learns from a finished trial (models update here; grid and random ignore it).
    fn tell(&mut self, _trial: &TrialRecord) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Every combination of the grid levels in the space file (shuffled when
    /// there are more than --trials).
    Grid,
    /// Candidates drawn uniformly (log-uniformly where the space says so).
    Random,
}

impl Strategy {
    pub fn sampler(self, space: &Space, budget_trials: usize, seed: u64) -> Box<dyn Sampler> {
        let rng = StdRng::seed_from_u64(seed ^ 0x5A3D_1E57);
        match self {
            Strategy::Grid => Box::new(GridSampler::new(space, budget_trials, rng)),
            Strategy::Random => Box::new(RandomSampler::new(rng)),
        }
    }
}

/// Whether a candidate was tried already (tried candidates are recorded
/// completed with defaults, so compare on the parameters it sets).
fn seen(history: &[TrialRecord], candidate: &Candidate) -> bool {
    history.iter().any(|t| candidate.iter().all(|(k, v)| t.candidate.get(k) == Some(v)))
}
