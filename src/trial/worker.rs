//! The child's side of a trial: join the cgroup, open a fresh store, replay
//! every phase, and write what it measured for the parent to read.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::cgroup::MemoryCgroup;
use super::TrialSpec;
use crate::dataset::DataUnit;
use crate::engine;
use crate::record::{EngineMetrics, PhaseResult};
use crate::replay::run_phase;

/// What the child measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerReport {
    pub phases: Vec<PhaseResult>,
    pub engine: EngineMetrics,
    pub disk_bytes: u64,
    pub peak_rss: u64,
    /// The dataset's own unit of data, if it counts in one.
    #[serde(default)]
    pub data_unit: Option<DataUnit>,
}

/// `kvtune trial-worker SPEC DB REPORT [CGROUP]`.
pub fn worker(
    spec_path: &Path,
    db_dir: &Path,
    report_path: &Path,
    cgroup: Option<&Path>,
) -> anyhow::Result<()> {
    if let Some(path) = cgroup {
        MemoryCgroup::join(path)?;
    }
    let spec: TrialSpec = serde_json::from_slice(&std::fs::read(spec_path)?)?;
    let report = replay_workload(&spec, db_dir)?;
    std::fs::write(report_path, serde_json::to_vec(&report)?)?;
    Ok(())
}

/// Opens a fresh store and runs every phase of the workload against it.
pub fn replay_workload(spec: &TrialSpec, db_dir: &Path) -> anyhow::Result<WorkerReport> {
    let workload = spec.dataset.workload(spec.budget);
    let mut store = engine::find(&spec.engine)?.open(&spec.candidate, spec.budget, db_dir)?;
    let mut phases = Vec::new();
    for mut phase in workload.phases(spec.seed) {
        let result =
            run_phase(store.as_mut(), &mut phase).with_context(|| format!("phase {}", phase.name))?;
        phases.push(result);
    }
    // What is still in memory goes to disk, unbilled: the size on disk is the data's.
    store.flush()?;
    store.settle()?;
    let engine = store.metrics();
    let disk_bytes = store.disk_bytes();
    // A driver's peak is its own: the two processes' peaks, summed, bound the trial's.
    let helper_peak = store.helper_peak_rss();
    drop(store);
    let peak_rss = crate::budget::peak_rss(None) + helper_peak;
    Ok(WorkerReport { phases, engine, disk_bytes, peak_rss, data_unit: workload.data_unit() })
}
