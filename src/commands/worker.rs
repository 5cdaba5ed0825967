//! `kvtune worker DIR`: joins a study from this machine and runs its trials
//! until it ends.

use super::tune::Joining;
use crate::cli::JoinArgs;
use crate::study::WorkerSettings;

pub fn worker(args: JoinArgs) -> anyhow::Result<()> {
    let defaults = WorkerSettings::default();
    let common = args.common();
    let settings = WorkerSettings {
        name: args.worker.name.unwrap_or(defaults.name),
        stale_after: args.worker.stale_after.0.unwrap_or(defaults.stale_after),
    };
    if crate::study::journal::read_study(&args.dir).is_ok_and(|s| s.finished) {
        // A worker started late (a queued array task, say) has nothing to do.
        eprintln!("kvtune: the study in {} has finished: nothing left to run", args.dir.display());
        return Ok(());
    }
    let joining =
        Joining::read(&args.dir, &common, &format!("worker {} joining", settings.name))?.on_own_cpus();
    joining.run(&common, settings, &[])
}
