//! A runner for unit tests: it returns what the test scripts for each
//! candidate (successes, failures, OOM kills, slow trials) and remembers
//! what it was asked to run, so the study can be tested without RocksDB.

use std::cell::RefCell;
use std::time::Duration;

use super::{TrialRunner, TrialSpec};
use crate::record::{EngineMetrics, Measurement, PhaseResult, Status};
use crate::space::Candidate;

type Script = Box<dyn Fn(&Candidate) -> Measurement>;

pub struct ScriptedRunner {
    script: Script,
    /// The candidates run, in order, with the prune limit each was given.
    pub calls: RefCell<Vec<(Candidate, Option<Duration>)>>,
}

impl ScriptedRunner {
    pub fn new(script: impl Fn(&Candidate) -> Measurement + 'static) -> Self {
        ScriptedRunner { script: Box::new(script), calls: RefCell::new(vec![]) }
    }
}

impl TrialRunner for ScriptedRunner {
    /// What the script says; a run longer than `prune_after` is pruned, as
    /// the child runner would stop it.
    fn run(
        &self,
        spec: &TrialSpec,
        _label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement> {
        self.calls.borrow_mut().push((spec.candidate.clone(), prune_after));
        let measurement = (self.script)(&spec.candidate);
        match prune_after {
            Some(limit) if measurement.wall_secs > limit.as_secs_f64() => {
                let mut pruned = Measurement::not_run(Status::Pruned, "past the prune limit".into());
                pruned.wall_secs = limit.as_secs_f64();
                Ok(pruned)
            }
            _ => Ok(measurement),
        }
    }
}

/// A successful run at `ops_per_sec` that took `wall_secs`.
pub fn ok(ops_per_sec: f64, wall_secs: f64) -> Measurement {
    let phase = PhaseResult {
        name: "only".into(),
        ops: (ops_per_sec * wall_secs) as u64,
        engine_secs: wall_secs,
        ops_per_sec,
        ..PhaseResult::default()
    };
    Measurement {
        status: Status::Ok,
        reason: None,
        wall_secs,
        ops_per_sec,
        phases: vec![phase],
        engine: EngineMetrics::default(),
        peak_memory: 1,
        ..Measurement::not_run(Status::Ok, String::new())
    }
}

/// A run that ended with `status` after `wall_secs`.
pub fn ended(status: Status, wall_secs: f64) -> Measurement {
    let mut m = Measurement::not_run(status, format!("scripted {status}"));
    m.wall_secs = wall_secs;
    m
}
