//! Random search: uniform over the encoded space.

use rand::rngs::StdRng;

use super::{seen, Proposal, Sampler};
use crate::record::TrialRecord;
use crate::space::Space;

pub struct RandomSampler {
    rng: StdRng,
}

impl RandomSampler {
    pub fn new(rng: StdRng) -> Self {
        RandomSampler { rng }
    }
}

impl Sampler for RandomSampler {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let candidate =
            (0..100).map(|_| space.sample(&mut self.rng)).find(|candidate| !seen(history, candidate))?;
        Some(Proposal { candidate, origin: "random".into() })
    }
}
