//! How every study begins after the defaults: the expert seeds the space
//! file names (what any RocksDB engineer would try first, run even where
//! the memory model rejects them, so the report says so; those whose
//! `[seed_when]` the defaults' first run rules out are left out), then a Sobol
//! design that covers the space evenly (its inadmissible points passed
//! over), then the strategy's own proposals.

use super::{seen, Admissible, Proposal, Sampler};
use crate::record::TrialRecord;
use crate::space::{Candidate, Space};

/// How a seed's trials are marked in the history: `seed:NAME`.
pub(super) const SEED_ORIGIN: &str = "seed:";

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

/// The seeds a study leaves out, each with why: those whose `[seed_when]`
/// the database the defaults' first successful run left on disk does not
/// meet (none before that run). A seed that ran anyway (proposed by a
/// worker before the defaults' result was in) is not left out: the report
/// must not say so of a trial it lists.
pub fn seeds_left_out(space: &Space, history: &[TrialRecord]) -> Vec<(String, String)> {
    let Some(defaults) = history.iter().find(|t| t.is_default && t.measurement.ok()) else {
        return vec![];
    };
    let disk_ratio = defaults.measurement.disk_bytes as f64 / defaults.budget.max(1) as f64;
    let bytes_per_key = defaults.measurement.bytes_per_key;
    space
        .seed_when
        .iter()
        .filter(|(name, _)| !ran(history, name))
        .filter_map(|(name, when)| Some((name.clone(), when.rules_out(disk_ratio, bytes_per_key)?)))
        .collect()
}

/// Whether the seed `name` is in the history.
fn ran(history: &[TrialRecord], name: &str) -> bool {
    history.iter().any(|t| t.origin.strip_prefix(SEED_ORIGIN) == Some(name))
}

impl Sampler for Start {
    fn ask(&mut self, space: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let left_out = seeds_left_out(space, history);
        while self.made < self.seeds.len() {
            let (name, candidate) = &self.seeds[self.made];
            self.made += 1;
            if !seen(history, candidate) && !left_out.iter().any(|(n, _)| n == name) {
                return Some(Proposal {
                    candidate: candidate.clone(),
                    origin: format!("{SEED_ORIGIN}{name}"),
                });
            }
        }
        while self.made < self.seeds.len() + self.sobol_points {
            let candidate = self.sobol(space, self.made - self.seeds.len());
            self.made += 1;
            if self.admissible.fresh(history, &candidate) {
                return Some(Proposal { candidate, origin: "sobol".into() });
            }
        }
        self.inner.ask(space, history)
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.inner.tell(trial);
    }
}
