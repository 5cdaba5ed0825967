//! One file per subcommand, each mostly argument handling; what they share
//! (the trial runner, the scale) is here.

mod ablate;
mod bench;
mod compare;
mod dataset;
mod datasets;
mod engines;
mod explain;
mod launch;
mod report;
mod table;
mod trial_worker;
mod tune;
mod worker;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

pub use ablate::ablate;
pub use bench::bench;
pub use compare::compare;
pub use dataset::dataset;
pub use datasets::datasets;
pub use explain::explain;
pub use launch::launch;
pub use report::report;
pub use table::table;
pub use trial_worker::trial_worker;
pub use tune::tune;
pub use worker::worker;

use crate::budget::{machine_memory, ByteSize};
use crate::cli::Common;
use crate::dataset::trace::Pace;
use crate::dataset::Dataset;
use crate::engine::Engine;
use crate::record::Objective;
use crate::scale::{self, Scale, ScaleChoice};
use crate::trial::{self, ChildRunner, Quiet, Request};

/// The dataset a command names, with `--data-ratio` and `--pace` applied.
fn load_dataset(name: &str, data_ratio: Option<f64>, pace: Option<Pace>) -> anyhow::Result<Dataset> {
    let mut dataset = Dataset::find(name)?;
    if let Some(ratio) = data_ratio {
        dataset = dataset.with_data_ratio(ratio)?;
    }
    if let Some(pace) = pace {
        dataset = dataset.with_pace(pace)?;
    }
    Ok(dataset)
}

/// What the dataset file names as its objective, else the whole replay's
/// throughput.
fn own_objective(dataset: &Dataset) -> anyhow::Result<Objective> {
    match &dataset.objective {
        Some(own) => own.parse::<Objective>().with_context(|| format!("dataset {}", dataset.name)),
        None => Ok(Objective::Throughput),
    }
}

/// Fails unless the workload has the phase `objective` measures.
fn check_objective(objective: &Objective, dataset: &Dataset) -> anyhow::Result<()> {
    objective.check(&dataset.workload(1 << 30).phase_names()).map_err(anyhow::Error::msg)
}

/// The trial runner: child processes, stopped at their time limit; from
/// here on Ctrl-C stops the running trial cleanly (calibration included).
fn runner(common: &Common) -> anyhow::Result<ChildRunner> {
    trial::stop_cleanly_on_interrupt();
    trial::warn_if_not_a_local_disk(&common.workdir);
    let timeout =
        Duration::from_secs_f64(common.trial_timeout.unwrap_or((common.trial_seconds * 10.0).max(120.0)));
    let quiet = Quiet {
        cpus: common.cpus.clone().map(|c| c.0),
        drop_caches: common.drop_caches,
        cooldown: Duration::from_secs_f64(common.cooldown.max(0.0)),
    };
    ChildRunner::new(absolute(&common.workdir)?, timeout, quiet)
}

/// The study recorded in `dir`, refused if it has finished; where `dir`
/// holds none, the error says it "holds no {missing}".
fn unfinished_study(dir: &Path, missing: &str) -> anyhow::Result<crate::study::journal::Recorded> {
    let recorded = crate::study::journal::read_study(dir)
        .with_context(|| format!("{} holds no {missing}", dir.display()))?;
    if recorded.finished {
        bail!(
            "the study in {} has finished already: its results are in {}/report.md",
            dir.display(),
            dir.display()
        );
    }
    Ok(recorded)
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir()?.join(path) })
}

/// The scale to run at: the one asked for (checked against this machine),
/// or the one calibration runs of the engine's defaults choose.
fn pick_scale(
    common: &Common,
    asked: Option<(Scale, &str)>,
    engine: &dyn Engine,
    dataset: &Dataset,
    full_budget: u64,
    runner: &ChildRunner,
) -> anyhow::Result<ScaleChoice> {
    let memory = machine_memory();
    scale::check_budget(full_budget)?;
    if let Some((scale, source)) = asked {
        scale::check(scale, full_budget, memory)?;
        check_disk(&common.workdir, dataset, scale.apply(full_budget))?;
        return Ok(ScaleChoice { scale, reason: format!("scale {scale} {source}"), trial_secs: None });
    }
    if !common.json {
        eprintln!(
            "kvtune: choosing a scale for a budget of {} on a machine with {} of memory: calibrating with the defaults...",
            ByteSize(full_budget),
            ByteSize(memory)
        );
    }
    let defaults = engine.defaults(full_budget);
    let mut measure = |s: Scale| -> anyhow::Result<f64> {
        let request = Request {
            engine,
            candidate: &defaults,
            dataset,
            budget: s.apply(full_budget),
            seed: common.seed,
        };
        let m = trial::attempt(runner, &request, "calibrate", None)?.measurement;
        if !m.ok() {
            bail!(
                "the calibration run of the defaults at scale {s} did not succeed ({}): {}",
                m.status,
                m.reason.unwrap_or_default()
            );
        }
        Ok(m.wall_secs)
    };
    let choice = scale::choose(full_budget, memory, common.trial_seconds, &mut measure)?;
    check_disk(&common.workdir, dataset, choice.scale.apply(full_budget))?;
    if full_budget > memory / 2 && !common.json {
        eprintln!(
            "kvtune: a budget of {} is more than this machine can test; scaling budget and data down together.",
            ByteSize(full_budget)
        );
    }
    Ok(choice)
}

/// Refuses a work directory without room for one trial's database at
/// `budget` (the trials run one at a time, each database deleted after it).
fn check_disk(workdir: &Path, dataset: &Dataset, budget: u64) -> anyhow::Result<()> {
    match disk_shortfall(workdir, dataset, budget) {
        Some(short) => bail!("{short}: give --workdir on a disk with more room, or a smaller --scale"),
        None => Ok(()),
    }
}

/// How the work directory falls short of room for a run at `budget`, if it does.
fn disk_shortfall(workdir: &Path, dataset: &Dataset, budget: u64) -> Option<String> {
    let data = dataset.workload(budget).shape().user_bytes;
    let needed = trial::disk_needed(data);
    let free = trial::free_bytes(workdir).filter(|free| *free < needed)?;
    Some(format!(
        "the work directory {} has {} free, and a run of `{}` at a budget of {} needs about {} (twice its {} of data)",
        workdir.display(),
        ByteSize(free),
        dataset.name,
        ByteSize(budget),
        ByteSize(needed),
        ByteSize(data)
    ))
}
