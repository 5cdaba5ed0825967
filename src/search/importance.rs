//! Which parameters mattered: a functional-ANOVA split of a Gaussian
//! process fitted to every search and racing run (whatever the strategy). A
//! parameter's importance is the variance of its main effect (the model's
//! prediction averaged over every other parameter, as it alone changes) as
//! a share of all main effects.

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::bayes::Observations;
use super::Encoding;
use crate::record::{Objective, TrialRecord};
use crate::space::{Domain, Space};

/// Points the other parameters are averaged over.
const BASE_POINTS: usize = 128;
/// Levels a number is set to, across its range.
const LEVELS: usize = 8;

/// Each parameter's share of the explained variation, largest first; empty
/// with too few successful trials to fit a model.
pub fn importances(
    space: &Space,
    history: &[TrialRecord],
    objective: &Objective,
    seed: u64,
) -> Vec<(String, f64)> {
    let encoding = Encoding::new(space);
    let Some(model) = Observations::gather(space, &encoding, history, objective).fit() else {
        return vec![];
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let base: Vec<Vec<f64>> = (0..BASE_POINTS).map(|_| space.encode(&space.sample(&mut rng))).collect();
    let effects: Vec<f64> = space
        .params
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let levels: Vec<f64> = match &p.domain {
                Domain::Choice { values } => {
                    (0..values.len()).map(|i| (i as f64 + 0.5) / values.len() as f64).collect()
                }
                _ => (0..LEVELS).map(|i| (i as f64 + 0.5) / LEVELS as f64).collect(),
            };
            let means: Vec<f64> = levels
                .iter()
                .map(|level| {
                    let total: f64 = base
                        .iter()
                        .map(|unit| {
                            let mut unit = unit.clone();
                            unit[j] = *level;
                            model.predict(&encoding.encode(space, &space.decode(&unit)))
                        })
                        .sum();
                    total / base.len() as f64
                })
                .collect();
            variance(&means)
        })
        .collect();
    let total: f64 = effects.iter().sum();
    if total <= 0.0 {
        return vec![];
    }
    let mut shares: Vec<(String, f64)> =
        space.params.iter().zip(effects).map(|(p, e)| (p.name.clone(), e / total)).collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    shares
}

fn variance(values: &[f64]) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64
}
