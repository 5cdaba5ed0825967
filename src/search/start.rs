//! How every study begins after the defaults: the expert seeds the space
//! file names (what any RocksDB engineer would try first, run even where
//! the memory model rejects them, so the report says so), then a Sobol
//! design that covers the space evenly (its inadmissible points passed
//! over), then the strategy's own proposals.

use super::{seen, Admissible, Proposal, Sampler};
use crate::record::TrialRecord;
use crate::space::{Candidate, Space};

pub struct Start {
    seeds: Vec<(String, Candidate)>,
    sobol_points: usize,
    sobol_seed: u32,
    /// Design points it does not admit are passed over.
    admissible: Admissible,
    /// Proposals made so far from the seeds and the design.
    made: usize,
    inner: Box<dyn Sampler>,
}

impl Start {
    pub fn new(
        space: &Space,
        sobol_points: usize,
        sobol_seed: u32,
        admissible: Admissible,
        inner: Box<dyn Sampler>,
    ) -> Self {
        Start { seeds: space.seeds.clone(), sobol_points, sobol_seed, admissible, made: 0, inner }
    }

    /// The `index`-th point of an Owen-scrambled Sobol sequence, decoded.
    fn sobol(&self, space: &Space, index: usize) -> Candidate {
        let point: Vec<f64> = (0..space.params.len())
            .map(|dim| sobol_burley::sample(index as u32, dim as u32, self.sobol_seed) as f64)
            .collect();
        space.decode(&point)
    }
}

impl Sampler for Start {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        while self.made < self.seeds.len() {
            let (name, candidate) = &self.seeds[self.made];
            self.made += 1;
            if !seen(history, candidate) {
                return Some(Proposal { candidate: candidate.clone(), origin: format!("seed:{name}") });
            }
        }
        while self.made < self.seeds.len() + self.sobol_points {
            let candidate = self.sobol(space, self.made - self.seeds.len());
            self.made += 1;
            if !seen(history, &candidate) && self.admissible.admits(&candidate) {
                return Some(Proposal { candidate, origin: "sobol".into() });
            }
        }
        self.inner.ask(space, history)
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.inner.tell(trial);
    }
}
