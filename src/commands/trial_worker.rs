//! `kvtune trial-worker`: the child side of a trial (kvtune starts it itself).

use crate::cli::WorkerArgs;
use crate::trial;

pub fn trial_worker(args: WorkerArgs) -> anyhow::Result<()> {
    trial::worker(&args.spec, &args.db_dir, &args.report, args.cgroup.as_deref())
}
