//! Running one candidate: the [`TrialRunner`] seam the study asks, the one
//! path every command takes to run a candidate (memory model first), and the
//! real runner: a child process in a memory cgroup on a fresh database
//! directory.

pub mod cgroup;
mod child;
mod interrupt;
mod neighbours;
mod quiet;
#[cfg(test)]
pub mod scripted;
mod workdir;
mod worker;

use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::budget::Shape;
use crate::dataset::Dataset;
use crate::engine::{Engine, Resolved};
use crate::record::{Adjustment, Measurement, OptionSet, Status};
use crate::space::Candidate;
pub use child::ChildRunner;
pub use interrupt::{interrupted, stop_cleanly_on_interrupt, Interrupted};
pub use neighbours::Registry;
pub use quiet::{CpuList, Quiet};
pub use workdir::{disk_needed, free_bytes, warn_if_not_a_local_disk};

/// How a failed trial's reason begins when its work directory filled up.
pub const DISK_FULL: &str = "disk full";
pub use worker::{replay_workload, worker};

/// Everything a runner needs to run one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    pub engine: String,
    /// Complete: every parameter of the engine.
    pub candidate: Candidate,
    pub dataset: Dataset,
    /// The scaled budget: the workload's size and the memory cap.
    pub budget: u64,
    pub seed: u64,
}

/// Runs trials. The child-process runner is the only one users run; the
/// study is tested against a scripted one.
pub trait TrialRunner {
    /// Runs one trial. A trial's own failure (a crash, an OOM kill, a
    /// timeout) is a [`Measurement`] with its status; `Err` is kvtune's own
    /// (interrupted, no room for a trial directory). A trial still running
    /// after `prune_after` is stopped as pruned.
    fn run(
        &self,
        spec: &TrialSpec,
        label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement>;
}

/// A candidate as it ran, and what it measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The candidate as the engine took it.
    pub candidate: Candidate,
    /// The engine's absolute options as they ran.
    pub options: OptionSet,
    /// Where what ran differs from what was asked.
    pub adjusted: Vec<Adjustment>,
    pub measurement: Measurement,
}

/// What to run: a candidate of an engine on a dataset at a scaled budget.
pub struct Request<'a> {
    pub engine: &'a dyn Engine,
    pub candidate: &'a Candidate,
    pub dataset: &'a Dataset,
    pub budget: u64,
    pub seed: u64,
}

/// `(round, entrant)` for `rounds` rounds of `n` entrants, each round in its
/// own seeded random order: drift and order effects hit every entrant alike,
/// and each entrant's run pairs with the others' runs of the same round.
pub fn rounds(n: usize, rounds: usize, seed: u64) -> Vec<(usize, usize)> {
    (0..rounds)
        .flat_map(|round| {
            let mut order: Vec<usize> = (0..n).collect();
            let round_seed = seed ^ 0xC0F1_A5E5 ^ (round as u64).wrapping_mul(0x9E37_79B9);
            order.shuffle(&mut StdRng::seed_from_u64(round_seed));
            order.into_iter().map(move |index| (round, index))
        })
        .collect()
}

/// Why a candidate the engine took is rejected without running, if it is:
/// the dataset forbids a setting, or (`model_gates`) the memory model says it
/// cannot fit the budget.
fn refusal(
    engine: &dyn Engine,
    resolved: &Resolved,
    dataset: &Dataset,
    shape: Shape,
    budget: u64,
    model_gates: bool,
) -> Option<String> {
    if let Err(why) = engine.check_dataset(&resolved.candidate, dataset) {
        return Some(format!("not for this dataset: {why}"));
    }
    let misfit = resolved.memory.misfit(shape, budget).filter(|_| model_gates)?;
    Some(format!("rejected before running: {misfit}"))
}

/// Whether [`attempt`] would run a candidate the engine resolved at
/// `budget` rather than reject it before running; `shape` is the dataset's
/// workload shape at that budget, worked out once by a caller that asks
/// often.
pub fn would_run(
    engine: &dyn Engine,
    resolved: &Resolved,
    dataset: &Dataset,
    shape: Shape,
    budget: u64,
) -> bool {
    refusal(engine, resolved, dataset, shape, budget, true).is_none()
}

/// Runs a candidate, unless the engine's memory model says it cannot fit the
/// budget: then it is recorded as rejected without running. Tune and bench
/// both run candidates through here.
pub fn attempt(
    runner: &dyn TrialRunner,
    request: &Request,
    label: &str,
    prune_after: Option<Duration>,
) -> anyhow::Result<Attempt> {
    attempt_gated(runner, request, label, prune_after, true)
}

/// Runs a reference the study must measure whatever the memory model
/// predicts (the engine as shipped): the cgroup alone says whether it fits.
pub fn attempt_ungated(runner: &dyn TrialRunner, request: &Request, label: &str) -> anyhow::Result<Attempt> {
    attempt_gated(runner, request, label, None, false)
}

fn attempt_gated(
    runner: &dyn TrialRunner,
    request: &Request,
    label: &str,
    prune_after: Option<Duration>,
    model_gates: bool,
) -> anyhow::Result<Attempt> {
    // A candidate the engine refuses is a recorded result, not the end of
    // the study.
    let resolved = match request.engine.resolve(request.candidate, request.budget) {
        Ok(resolved) => resolved,
        Err(why) => {
            return Ok(Attempt {
                candidate: request.candidate.clone(),
                options: OptionSet::new(),
                adjusted: vec![],
                measurement: Measurement::not_run(Status::Rejected, format!("the engine refuses it: {why}")),
            })
        }
    };
    let shape = request.dataset.workload(request.budget).shape();
    let refusal = refusal(request.engine, &resolved, request.dataset, shape, request.budget, model_gates);
    let measurement = match refusal {
        Some(why) => Measurement::not_run(Status::Rejected, why),
        None => {
            let spec = TrialSpec {
                engine: request.engine.name().to_string(),
                candidate: resolved.candidate.clone(),
                dataset: request.dataset.clone(),
                budget: request.budget,
                seed: request.seed,
            };
            runner.run(&spec, label, prune_after)?
        }
    };
    Ok(Attempt {
        candidate: resolved.candidate,
        options: resolved.options,
        adjusted: resolved.adjusted,
        measurement,
    })
}
