//! Runs one candidate in a child process (a re-exec of kvtune), in a memory
//! cgroup capped at the scaled budget, on a fresh database directory that is
//! removed afterwards whatever happens.

pub mod cgroup;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::engine::rocksdb::{RocksConfig, RocksStore};
use crate::engine::{EngineMetrics, KvStore};
use crate::replay::{overall_ops_per_sec, run_phase, PhaseResult};
use cgroup::MemoryCgroup;

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Did not fit the budget: rejected by the memory model, or killed by the cgroup.
    Infeasible,
    /// The engine or the process failed.
    Failed,
    /// Stopped early: far slower than the defaults, so it cannot win.
    Pruned,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Infeasible => "infeasible",
            Status::Failed => "failed",
            Status::Pruned => "pruned",
        })
    }
}

/// Everything the child needs to run one trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialSpec {
    pub config: RocksConfig,
    pub dataset: Dataset,
    /// The scaled budget: the workload's size and the cgroup's cap.
    pub budget: u64,
    pub seed: u64,
}

/// What the child measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerReport {
    pub phases: Vec<PhaseResult>,
    pub engine: EngineMetrics,
    pub disk_bytes: u64,
    pub peak_rss: u64,
}

/// The record of one run of a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub status: Status,
    /// Why the trial failed or was infeasible.
    pub reason: Option<String>,
    pub wall_secs: f64,
    /// Operations per second over the whole replay (the default objective).
    pub ops_per_sec: f64,
    pub phases: Vec<PhaseResult>,
    pub engine: EngineMetrics,
    pub user_bytes_written: u64,
    pub write_amplification: Option<f64>,
    pub stall_secs: f64,
    pub disk_bytes: u64,
    pub bytes_per_key: Option<f64>,
    /// Peak memory of the trial process: from the cgroup where there is one.
    pub peak_memory: u64,
    pub peak_rss: u64,
    pub memory_source: String,
}

impl Measurement {
    pub fn not_run(status: Status, reason: String) -> Self {
        Measurement {
            status,
            reason: Some(reason),
            wall_secs: 0.0,
            ops_per_sec: 0.0,
            phases: vec![],
            engine: EngineMetrics::default(),
            user_bytes_written: 0,
            write_amplification: None,
            stall_secs: 0.0,
            disk_bytes: 0,
            bytes_per_key: None,
            peak_memory: 0,
            peak_rss: 0,
            memory_source: String::new(),
        }
    }

    fn from_report(report: WorkerReport, wall_secs: f64) -> Self {
        let user_bytes_written: u64 = report.phases.iter().map(|p| p.all_write_bytes).sum();
        let keys = report.engine.live_keys_estimate;
        Measurement {
            status: Status::Ok,
            reason: None,
            wall_secs,
            ops_per_sec: overall_ops_per_sec(&report.phases),
            write_amplification: report.engine.write_amplification(user_bytes_written),
            stall_secs: report.engine.stall_micros as f64 / 1e6,
            disk_bytes: report.disk_bytes,
            bytes_per_key: (keys > 0).then(|| report.disk_bytes as f64 / keys as f64),
            peak_memory: report.peak_rss,
            peak_rss: report.peak_rss,
            memory_source: "peak RSS (no memory cgroup)".into(),
            user_bytes_written,
            phases: report.phases,
            engine: report.engine,
        }
    }
}

/// Runs trials in child processes.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The kvtune binary to re-exec as the worker.
    pub exe: PathBuf,
    /// Where database directories are made (a real disk, not tmpfs).
    pub workdir: PathBuf,
    /// A trial running longer than this is stopped and recorded as failed.
    pub timeout: Duration,
}

/// Says once per process that there is no cgroup, so results say peak RSS.
static CGROUP_WARNING: std::sync::Once = std::sync::Once::new();

impl Runner {
    pub fn new(workdir: PathBuf) -> anyhow::Result<Self> {
        sweep_stale(&workdir);
        Ok(Runner {
            exe: std::env::current_exe().context("finding the kvtune binary to run trials with")?,
            workdir,
            timeout: Duration::from_secs(3600),
        })
    }

    /// Runs one trial; never fails the caller for the trial's own failure.
    /// A trial still running after `prune_after` is stopped as pruned.
    pub fn run(
        &self,
        spec: &TrialSpec,
        label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement> {
        if interrupted() {
            return Err(Interrupted.into());
        }
        std::fs::create_dir_all(&self.workdir)
            .with_context(|| format!("creating the work directory {}", self.workdir.display()))?;
        // Removed on drop, whatever happens to the trial.
        let dir = tempfile::Builder::new()
            .prefix(&format!("trial-{}-{label}-", std::process::id()))
            .tempdir_in(&self.workdir)
            .with_context(|| format!("making a trial directory in {}", self.workdir.display()))?;
        let spec_path = dir.path().join("spec.json");
        let report_path = dir.path().join("report.json");
        std::fs::write(&spec_path, serde_json::to_vec(spec)?)?;
        let group = self.cgroup(label, spec.budget);
        let mut command =
            self.worker_command(&spec_path, &dir.path().join("db"), &report_path, group.as_ref());
        let started = Instant::now();
        let mut child = command.spawn().with_context(|| format!("starting {}", self.exe.display()))?;
        let stderr = child.stderr.take();
        let stderr_reader = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut s) = stderr {
                let _ = std::io::Read::read_to_string(&mut s, &mut text);
            }
            text
        });
        let limit = prune_after.map_or(self.timeout, |p| p.min(self.timeout));
        let status = wait_at_most(&mut child, limit)?;
        let wall_secs = started.elapsed().as_secs_f64();
        let stderr = stderr_reader.join().unwrap_or_default();
        let mut measurement = match status {
            Some(status) => classify(status, &report_path, &stderr, group.as_ref(), wall_secs),
            None if limit < self.timeout => Measurement::not_run(
                Status::Pruned,
                format!(
                    "stopped after {:.0} s, several times the defaults' time: it cannot be among the best",
                    limit.as_secs_f64()
                ),
            ),
            None => Measurement::not_run(
                Status::Failed,
                format!("stopped after {:.0} s, the trial time limit", limit.as_secs_f64()),
            ),
        };
        measurement.wall_secs = wall_secs;
        if let Some(peak) = group.as_ref().and_then(|g| g.peak()) {
            measurement.peak_memory = peak;
            measurement.memory_source = group.as_ref().map_or("", |g| g.describe()).into();
        }
        Ok(measurement)
    }

    /// `kvtune trial-worker ...`, set to die with this process.
    fn worker_command(&self, spec: &Path, db: &Path, report: &Path, group: Option<&MemoryCgroup>) -> Command {
        let mut command = Command::new(&self.exe);
        command
            .arg("trial-worker")
            .arg(spec)
            .arg(db)
            .arg(report)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(group) = group {
            command.arg(&group.path);
        }
        // Its own process group: a terminal's Ctrl-C reaches kvtune alone,
        // which stops the worker itself and records nothing half-done.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        // SAFETY: prctl is async-signal-safe and touches no memory of ours.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        command
    }

    fn cgroup(&self, label: &str, limit: u64) -> Option<MemoryCgroup> {
        let name = format!("kvtune-{}-{label}", std::process::id());
        match MemoryCgroup::create(&name, limit) {
            Ok(group) => Some(group),
            Err(why) => {
                CGROUP_WARNING.call_once(|| {
                    eprintln!("warning: the budget is not enforced: {why}; kvtune measures peak RSS instead and the report says so");
                });
                None
            }
        }
    }
}

/// Set by SIGINT/SIGTERM: the running trial is stopped and cleaned up, and
/// the study ends with an error that says how to resume it.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Makes Ctrl-C (and SIGTERM) stop kvtune between polls instead of at once,
/// so the running trial's directory and cgroup are removed.
/// A second signal ends kvtune at once (SA_RESETHAND), in case the clean
/// stop itself hangs.
pub fn stop_cleanly_on_interrupt() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe;
    // the sigaction struct is zeroed and then filled in as the man page says.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_interrupt as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// The error a study ends with when interrupted.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Waits for the child, killing it after `limit`; `None` if it was killed.
fn wait_at_most(
    child: &mut std::process::Child,
    limit: Duration,
) -> anyhow::Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    loop {
        if interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Interrupted.into());
        }
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a finished worker's exit means: its report, or why there is none.
fn classify(
    status: std::process::ExitStatus,
    report_path: &Path,
    stderr: &str,
    group: Option<&MemoryCgroup>,
    wall_secs: f64,
) -> Measurement {
    use std::os::unix::process::ExitStatusExt;
    if status.success() {
        let report = std::fs::read(report_path)
            .map_err(anyhow::Error::from)
            .and_then(|bytes| Ok(serde_json::from_slice::<WorkerReport>(&bytes)?));
        return match report {
            Ok(report) => Measurement::from_report(report, wall_secs),
            Err(e) => {
                Measurement::not_run(Status::Failed, format!("the worker wrote no readable report: {e}"))
            }
        };
    }
    if group.is_some_and(|g| g.oom_killed(status.signal() == Some(libc::SIGKILL))) {
        return Measurement::not_run(
            Status::Infeasible,
            "killed for memory by its cgroup: the option set does not fit the budget".into(),
        );
    }
    let how = match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (_, Some(signal)) => format!("signal {signal}"),
        _ => "unknown status".into(),
    };
    let last_lines: Vec<&str> = stderr.lines().rev().take(3).collect();
    let last_lines: Vec<&str> = last_lines.into_iter().rev().collect();
    Measurement::not_run(Status::Failed, format!("the trial failed ({how}): {}", last_lines.join(" / ")))
}

/// Removes trial directories and cgroups left by kvtune processes that died
/// (names carry the owner's pid), so an interrupted run leaves nothing behind.
fn sweep_stale(workdir: &Path) {
    let dead = |name: &str, prefix: &str| {
        let pid = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<i32>().ok());
        // SAFETY: kill with signal 0 only checks that the process exists.
        pid.is_some_and(|pid| {
            let gone = unsafe { libc::kill(pid, 0) } != 0;
            gone && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        })
    };
    for entry in std::fs::read_dir(workdir).into_iter().flatten().flatten() {
        if dead(&entry.file_name().to_string_lossy(), "trial-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    cgroup::sweep(&|name| dead(name, "kvtune-"));
}

/// The child's side: join the cgroup, replay the workload, report.
pub fn worker(
    spec_path: &Path,
    db_dir: &Path,
    report_path: &Path,
    cgroup: Option<&Path>,
) -> anyhow::Result<()> {
    if let Some(path) = cgroup {
        MemoryCgroup::join(path).map_err(anyhow::Error::msg)?;
    }
    let spec: TrialSpec = serde_json::from_slice(&std::fs::read(spec_path)?)?;
    let report = replay_workload(&spec, db_dir)?;
    std::fs::write(report_path, serde_json::to_vec(&report)?)?;
    Ok(())
}

/// Opens a fresh store and runs every phase of the workload against it.
pub fn replay_workload(spec: &TrialSpec, db_dir: &Path) -> anyhow::Result<WorkerReport> {
    let workload = spec.dataset.workload(spec.budget);
    let mut store = RocksStore::open(db_dir, &spec.config)?;
    let mut phases = Vec::new();
    for mut phase in workload.phases(spec.seed) {
        let result = run_phase(&mut store, &mut phase).with_context(|| format!("phase {}", phase.name))?;
        phases.push(result);
    }
    store.flush()?;
    let engine = store.metrics();
    drop(store);
    Ok(WorkerReport { phases, engine, disk_bytes: dir_size(db_dir), peak_rss: peak_rss() })
}

/// Bytes of all files below `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// This process's peak resident set (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
