//! Random search: uniform over the encoded space, among admissible candidates.

use rand::rngs::StdRng;

use super::{untried, Admissible, Proposal, Sampler};
use crate::record::TrialRecord;
use crate::space::Space;

pub struct RandomSampler {
    rng: StdRng,
    admissible: Admissible,
}

impl RandomSampler {
    pub fn new(rng: StdRng, admissible: Admissible) -> Self {
        RandomSampler { rng, admissible }
    }
}

impl Sampler for RandomSampler {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let candidate = untried(space, history, &mut self.rng, &self.admissible)?;
        Some(Proposal { candidate, origin: "random".into() })
    }
}
