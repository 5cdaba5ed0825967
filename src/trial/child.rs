//! The real trial runner: a re-exec of kvtune (`trial-worker`) in a memory
//! cgroup capped at the scaled budget, on a fresh database directory that is
//! removed afterwards whatever happens.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::cgroup::MemoryCgroup;
use super::interrupt::{interrupted, Interrupted};
use super::neighbours::Registry;
use super::workdir::{free_bytes, sweep_stale};
use super::worker::WorkerReport;
use super::{Quiet, TrialRunner, TrialSpec, DISK_FULL};
use crate::budget::{ByteSize, GIB};
use crate::record::{overall_ops_per_sec, CpuUse, Measurement, Neighbour, Status};

/// Runs trials in child processes.
#[derive(Debug, Clone)]
pub struct ChildRunner {
    /// The kvtune binary to re-exec as the worker.
    pub exe: PathBuf,
    /// Where database directories are made (a real disk, not tmpfs).
    pub workdir: PathBuf,
    /// A trial running longer than this per GiB of its budget (at least
    /// this long) is stopped and recorded as failed.
    pub timeout: Duration,
    /// What is done around each trial to cut noise.
    pub quiet: Quiet,
    /// Where the other kvtune processes running trials here are seen.
    pub neighbours: Registry,
}

/// Says once per process that there is no cgroup, so results say peak RSS.
static CGROUP_WARNING: std::sync::Once = std::sync::Once::new();

impl ChildRunner {
    /// A runner re-executing this binary, after sweeping what dead kvtune
    /// processes left in `workdir`.
    pub fn new(workdir: PathBuf, timeout: Duration, quiet: Quiet) -> anyhow::Result<Self> {
        sweep_stale(&workdir);
        let exe = std::env::current_exe().context("finding the kvtune binary to run trials with")?;
        Ok(ChildRunner { exe, workdir, timeout, quiet, neighbours: Registry::machine() })
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
        let cpus = self.quiet.cpus.clone();
        // SAFETY: prctl and sched_setaffinity are async-signal-safe; the CPU
        // list was allocated before the fork.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                match &cpus {
                    Some(cpus) => Quiet::in_child(cpus),
                    None => Ok(()),
                }
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

impl TrialRunner for ChildRunner {
    fn run(
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
        self.quiet.before_trial();
        self.neighbours.register();
        let beside_before = self.neighbours.watch();
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
        // The time limit grows with the data: it is per GiB of budget.
        let timeout = self.timeout.mul_f64((spec.budget as f64 / GIB as f64).max(1.0));
        let limit = prune_after.map_or(timeout, |p| p.min(timeout));
        let cpu_before = cpu_times();
        let watched = watch(&child, limit, group.as_ref())?;
        let wall_secs = started.elapsed().as_secs_f64();
        let stderr = stderr_reader.join().unwrap_or_default();
        let mut measurement = match watched.status {
            Some(status) => classify(status, &report_path, &stderr, group.as_ref(), wall_secs),
                        None if limit < timeout => Measurement::not_run(
                Status::Pruned,
                format!(
                    "stopped after {:.0} s, several times the defaults' time: it cannot be among the best",
                    limit.as_secs_f64()
                ),
            ),
            None => Measurement::not_run(
                Status::Failed,
                                format!(
                    "stopped after {:.0} s, the trial time limit ({:.0} s per GiB of budget; --trial-timeout raises it)",
                    limit.as_secs_f64(),
                    self.timeout.as_secs_f64()
                ),
            ),
        };
        measurement.wall_secs = wall_secs;
        measurement.cpu = watched.cpu;
        measurement.peak_anon = watched.peak_anon;
        measurement.peak_page_cache = watched.peak_page_cache;
        measurement.steal_share = steal_share(cpu_before, cpu_times());
        measurement.beside = Some(Neighbour::each_once([beside_before, self.neighbours.watch()].concat()));
        if let Some(group) = &group {
            // A kernel without a peak file: the sampled peaks, summed.
            let sampled = watched.peak_anon + watched.peak_page_cache;
            measurement.peak_memory = group.peak().unwrap_or(sampled);
            measurement.memory_source = match group.peak() {
                Some(_) => group.describe().into(),
                None => "the cgroup's memory.stat, sampled every 100 ms (this kernel keeps no peak)".into(),
            };
        }
        Ok(measurement)
    }
}

/// What the parent saw of a child it waited for.
struct Watched {
    /// `None` if it was stopped at the limit.
    status: Option<ExitStatus>,
    cpu: CpuUse,
    peak_anon: u64,
    peak_page_cache: u64,
}

/// How often the cgroup's memory.stat is sampled for the peaks of anonymous
/// memory and page cache (the cgroup's own peak counts both together).
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// Waits for the child, killing it after `limit`, and reaps it with `wait4`
/// for the CPU its threads used; samples its cgroup's memory meanwhile.
fn watch(child: &Child, limit: Duration, group: Option<&MemoryCgroup>) -> anyhow::Result<Watched> {
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    let mut sampled: Option<Instant> = None;
    let (mut peak_anon, mut peak_page_cache) = (0, 0);
    loop {
        if sampled.is_none_or(|at| at.elapsed() >= SAMPLE_EVERY) {
            if let Some((anon, file)) = group.and_then(|g| g.usage_split()) {
                (peak_anon, peak_page_cache) = (peak_anon.max(anon), peak_page_cache.max(file));
            }
            sampled = Some(Instant::now());
        }
        let stop = interrupted() || started.elapsed() > limit;
        if stop {
            // The whole group: the worker leads its own (process_group(0)),
            // and a Go engine's driver, its child, goes with it.
            // SAFETY: the child is ours and not yet reaped, so the pid is still its.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        if let Some((status, cpu)) = reap(pid, stop)? {
            if interrupted() {
                return Err(Interrupted.into());
            }
            let status = (!stop).then_some(status);
            return Ok(Watched { status, cpu, peak_anon, peak_page_cache });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child's exit status and CPU use once it has exited (waiting for it
/// if `block`), or `None` while it runs.
fn reap(pid: libc::pid_t, block: bool) -> anyhow::Result<Option<(ExitStatus, CpuUse)>> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 only writes to it and to status.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    let reaped = loop {
        let reaped = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        // A signal (Ctrl-C) interrupting a blocking wait: wait again, the
        // child is being killed.
        if reaped == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        break reaped;
    };
    if reaped == 0 {
        return Ok(None);
    }
    if reaped != pid {
        let error = std::io::Error::last_os_error();
        return Err(anyhow::Error::from(error).context("waiting for the trial process"));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = CpuUse {
        user_secs: secs(usage.ru_utime),
        system_secs: secs(usage.ru_stime),
        voluntary_switches: usage.ru_nvcsw as u64,
        involuntary_switches: usage.ru_nivcsw as u64,
    };
    Ok(Some((ExitStatus::from_raw(status), cpu)))
}

/// The machine's CPU time so far, all CPUs: (steal, total), in clock ticks.
fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal; guest time is inside user.
    Some((*fields.get(7)?, fields.iter().take(8).sum()))
}

/// Share of the machine's CPU time stolen by the hypervisor between two readings.
fn steal_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((steal0, total0), (steal1, total1)) = (before?, after?);
    (total1 > total0).then(|| steal1.saturating_sub(steal0) as f64 / (total1 - total0) as f64)
}

/// What a finished worker's exit means: its report, or why there is none.
fn classify(
    status: ExitStatus,
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
            Ok(report) => measured(report, wall_secs),
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
    let disk_full = if stderr.contains("No space left on device") {
        let dir = report_path.parent().and_then(Path::parent).unwrap_or(report_path);
        let free = free_bytes(dir).map_or("unknown".into(), |b| ByteSize(b).to_string());
        format!("{DISK_FULL} in {} ({free} free when it failed): ", dir.display())
    } else {
        String::new()
    };
    Measurement::not_run(
        Status::Failed,
        format!("{disk_full}the trial failed ({how}): {}", last_lines.join(" / ")),
    )
}

/// The measurement a successful worker's report makes.
fn measured(report: WorkerReport, wall_secs: f64) -> Measurement {
    let user_bytes_written: u64 = report.phases.iter().map(|p| p.all_write_bytes).sum();
    let keys = report.engine.live_keys_estimate;
    Measurement {
        reason: None,
        wall_secs,
        ops_per_sec: overall_ops_per_sec(&report.phases),
        write_amplification: report.engine.write_amplification(user_bytes_written),
        stall_secs: report.engine.stall_micros as f64 / 1e6,
        disk_bytes: report.disk_bytes,
        bytes_per_key: (keys > 0).then(|| report.disk_bytes as f64 / keys as f64),
        bytes_per_unit: report
            .data_unit
            .filter(|u| u.count > 0)
            .map(|u| (u.name, report.disk_bytes as f64 / u.count as f64)),
        peak_memory: report.peak_rss,
        peak_rss: report.peak_rss,
        memory_source: "peak RSS (no memory cgroup)".into(),
        user_bytes_written,
        phases: report.phases,
        engine: report.engine,
        ..Measurement::not_run(Status::Ok, String::new())
    }
}
