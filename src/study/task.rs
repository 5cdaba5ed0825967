//! The units of work a study hands to its workers: a task is one or more
//! runs that belong together on one machine (a search trial; a racing pair;
//! a confirmation round; the larger-scale check), and a claim is a worker's
//! hold on one.

use serde::{Deserialize, Serialize};

use crate::record::{Stage, TrialRecord};
use crate::space::Candidate;

/// A candidate entered in the study under a label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entrant {
    pub label: String,
    pub candidate: Candidate,
    pub is_default: bool,
    /// Where it came from (a seed, the design, the model; a race).
    pub origin: String,
}

/// One run of a task, numbered when the task is claimed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub number: usize,
    pub stage: Stage,
    /// The confirmation or racing round it belongs to.
    pub round: Option<usize>,
    /// The (scaled) budget it runs at.
    pub budget: u64,
    #[serde(flatten)]
    pub entrant: Entrant,
}

/// A worker's hold on a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Names the task, the same in every claim of it: `search:#5`,
    /// `race:#5:1`, `confirm:2`, `verify`.
    pub task: String,
    /// The worker (`host:pid`, or the name it was given).
    pub worker: String,
    /// The claiming process's own number (see `Running::session`).
    #[serde(default)]
    pub session: u64,
    /// Back to back, in this order, on the claiming worker's machine.
    pub runs: Vec<PlannedRun>,
    /// Whether the sampler proposed it (a resumed or joining worker's
    /// sampler asks again here, so every worker's sampler stays the same).
    #[serde(default)]
    pub asked: bool,
    /// When it was claimed: seconds since the Unix epoch on the claiming
    /// worker's clock (for timelines; nothing is decided by it).
    #[serde(default)]
    pub at: f64,
}

/// Whether a study's confirmation has begun, so its search has ended: a run
/// after the search (a confirmation round, the larger-scale check) claimed
/// or recorded.
pub fn confirmation_began<'a>(claims: impl IntoIterator<Item = &'a Claim>, trials: &[TrialRecord]) -> bool {
    claims.into_iter().any(|c| c.runs.iter().any(|r| r.stage.is_after_search()))
        || trials.iter().any(|t| t.stage.is_after_search())
}
