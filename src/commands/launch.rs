//! `kvtune launch slurm|k8s DIR`: writes (and for Slurm submits) the job
//! that starts a study's workers on a cluster.

use anyhow::{bail, Context};

use crate::budget::ByteSize;
use crate::cli::{LaunchArgs, Scheduler};
use crate::launch::{yaml, Launch, WORKER_OVERHEAD};

pub fn launch(args: LaunchArgs) -> anyhow::Result<()> {
    if args.workers == 0 {
        bail!("--workers 0: give at least 1 (one worker a node)");
    }
    let dir = super::absolute(&args.dir)?;
    let missing = format!(
        "study: make one first with `kvtune --budget ... --dataset ... --out {} --create-only`",
        args.dir.display()
    );
    let recorded = super::unfinished_study(&dir, &missing)?;
    let header = &recorded.header;
    let largest = header.verify_scale.map_or(0, |s| s.apply(header.full_budget)).max(header.scaled_budget());
    let launch_dir = dir.join("launch");
    std::fs::create_dir_all(&launch_dir).with_context(|| format!("making {}", launch_dir.display()))?;
    let kvtune = match (&args.kvtune, args.scheduler) {
        (Some(path), _) => path.clone(),
        (None, Scheduler::Slurm) => std::env::current_exe()?,
        (None, Scheduler::K8s) => "kvtune".into(),
    };
    let launch = Launch {
        dir: &dir,
        name: Launch::job_name(&dir),
        workers: args.workers,
        kvtune,
        workdir: args.workdir.clone(),
        memory: largest + WORKER_OVERHEAD,
        time_limit: args
            .time_limit
            .0
            .context("--time-limit off: give the workers a wall-clock limit, e.g. 4h")?,
    };
    eprintln!(
        "kvtune: {} workers, each allowed {} (its largest trial's budget, {}, and kvtune's own)",
        args.workers,
        ByteSize(launch.memory),
        ByteSize(largest)
    );
    match args.scheduler {
        Scheduler::Slurm => slurm(&args, &launch, &launch_dir.join("slurm.sbatch")),
        Scheduler::K8s => k8s(&args, &launch, &launch_dir.join("k8s-job.yaml")),
    }
}

fn slurm(args: &LaunchArgs, launch: &Launch, path: &std::path::Path) -> anyhow::Result<()> {
    let script = launch.slurm(args.partition.as_deref(), args.share_nodes, &args.sbatch);
    std::fs::write(path, script).with_context(|| format!("writing {}", path.display()))?;
    if args.no_submit {
        println!("{}", path.display());
        eprintln!("kvtune: submit it with `sbatch {}`", path.display());
        return Ok(());
    }
    let out = std::process::Command::new("sbatch").arg("--parsable").arg(path).output().context(
        "running sbatch: is Slurm's client installed and on PATH? (--no-submit writes the script only)",
    )?;
    if !out.status.success() {
        bail!("sbatch refused {}: {}", path.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let job = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap_or_default().to_string();
    println!("{job}");
    eprintln!(
        "kvtune: submitted job {job} ({} workers); watch it with `squeue -j {job}`, the study's report.html is rewritten as trials end, and `kvtune report {}` once it is done",
        launch.workers,
        launch.dir.display()
    );
    Ok(())
}

fn k8s(args: &LaunchArgs, launch: &Launch, path: &std::path::Path) -> anyhow::Result<()> {
    let (Some(image), Some(claim)) = (&args.image, &args.claim) else {
        bail!(
            "kvtune launch k8s needs --image (a container image with kvtune in it) and --claim (a ReadWriteMany \
             PersistentVolumeClaim holding {}, mounted at that path in every pod)",
            launch.dir.display()
        );
    };
    std::fs::write(path, yaml(&launch.k8s(image, claim)))
        .with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    eprintln!("kvtune: start the workers with `kubectl apply -f {}`", path.display());
    Ok(())
}
