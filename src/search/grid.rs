//! Grid search over the levels the space file declares.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::{seen, Proposal, Sampler};
use crate::record::TrialRecord;
use crate::space::Space;

/// Walks the grid in order, or in a seeded random order when the grid has
/// more points than the trials allowed, so a cut-short grid is still spread.
pub struct GridSampler {
    order: Vec<u64>,
    next: usize,
}

/// Grids larger than this are sampled by index instead of listed.
const LISTED: u64 = 1 << 20;

impl GridSampler {
    pub fn new(space: &Space, trials: usize, mut rng: StdRng) -> Self {
        let size = space.grid_size();
        // The defaults take one of the trials.
        let order = if size < trials as u64 {
            (0..size).collect()
        } else if size <= LISTED {
            let mut all: Vec<u64> = (0..size).collect();
            all.shuffle(&mut rng);
            all
        } else {
            (0..trials * 4).map(|_| rand::Rng::random_range(&mut rng, 0..size)).collect()
        };
        GridSampler { order, next: 0 }
    }
}

impl Sampler for GridSampler {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        while let Some(&index) = self.order.get(self.next) {
            self.next += 1;
            let candidate = space.grid_point(index);
            if !seen(history, &candidate) {
                return Some(Proposal { candidate, origin: "grid".into() });
            }
        }
        None
    }
}
