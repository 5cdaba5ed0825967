//! What each subcommand does, from validated arguments to printed results.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::Serialize;

use crate::budget::{machine_memory, ByteSize, GIB};
use crate::cli::{BenchArgs, Common, TuneArgs, WorkerArgs};
use crate::dataset::Dataset;
use crate::engine::rocksdb::{complete, default_candidate, param_known, RocksConfig};
use crate::report::Preset;
use crate::scale::{self, Scale, ScaleChoice};
use crate::space::{Candidate, Domain, Space};
use crate::stats::{summarize, Summary};
use crate::study::journal::{self, Entry, Journal};
use crate::study::{self, StudyHeader, StudySettings, TrialRecord};
use crate::trial::{self, Measurement, Runner, Status, TrialSpec};

/// Built-in search spaces: name and file text.
pub const BUILT_IN_SPACES: &[(&str, &str)] = &[
    ("rocksdb", include_str!("../search-spaces/rocksdb.toml")),
    ("badger-thread", include_str!("../search-spaces/badger-thread.toml")),
];

fn load_space(name_or_path: &str) -> anyhow::Result<Space> {
    if let Some((name, text)) = BUILT_IN_SPACES.iter().find(|(n, _)| *n == name_or_path) {
        return Ok(Space::parse(name, text, &param_known)?);
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        let known: Vec<&str> = BUILT_IN_SPACES.iter().map(|(n, _)| *n).collect();
        bail!(
            "search space `{name_or_path}` is neither a file nor a built-in space; built-in spaces are {}",
            known.join(", ")
        );
    }
    let space = Space::load(path, &param_known)?;
    check_space_values(&space).map_err(|e| anyhow::anyhow!("search space {}, {e}", path.display()))?;
    Ok(space)
}

/// Every level, bound and choice of a space must be a value RocksDB takes, so
/// a bad one is caught before the study starts, not at the trial that draws it.
fn check_space_values(space: &Space) -> Result<(), String> {
    for param in &space.params {
        let mut values = param.grid_levels();
        if let Domain::Choice { values: choices } = &param.domain {
            values.extend(choices.iter().cloned());
        }
        for value in values {
            let mut candidate = default_candidate(GIB);
            candidate.insert(param.name.clone(), value.clone());
            RocksConfig::from_candidate(&candidate, GIB)
                .map_err(|why| format!("parameter `{}`: value {value}: {why}", param.name))?;
        }
    }
    Ok(())
}

/// A runner whose trials stop at ten times the target length.
fn runner(common: &Common) -> anyhow::Result<Runner> {
    warn_if_tmpfs(&common.workdir);
    let mut runner = Runner::new(absolute(&common.workdir)?)?;
    runner.timeout = Duration::from_secs_f64((common.trial_seconds * 10.0).max(60.0));
    Ok(runner)
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir()?.join(path) })
}

fn warn_if_tmpfs(dir: &Path) {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let probe = dir.ancestors().find(|p| p.exists()).unwrap_or(Path::new("."));
    let Ok(c_path) = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()) else {
        return;
    };
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid C string and stat a properly sized buffer.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } == 0 && stat.f_type as i64 == TMPFS_MAGIC {
        eprintln!(
            "warning: the work directory {} is on tmpfs (memory), not a disk: results will not match a real disk; pass --workdir DIR on a disk",
            dir.display()
        );
    }
}

/// The scale to run at: the user's (checked against this machine) or chosen
/// by calibration runs of the defaults.
fn pick_scale(
    common: &Common,
    asked: Option<(Scale, &str)>,
    dataset: &Dataset,
    full_budget: u64,
    runner: &Runner,
) -> anyhow::Result<ScaleChoice> {
    let memory = machine_memory();
    if full_budget < scale::MIN_SCALED_BUDGET {
        bail!(
            "--budget {} is below the smallest budget kvtune can measure, {}: RocksDB and the trial process need that much before any cache or memtable",
            ByteSize(full_budget),
            ByteSize(scale::MIN_SCALED_BUDGET)
        );
    }
    if let Some((scale, source)) = asked {
        let scaled = scale.apply(full_budget);
        if scaled < scale::MIN_SCALED_BUDGET {
            bail!(
                "--scale {scale} gives a budget of {}, below the smallest kvtune can measure ({}): give a larger --scale",
                ByteSize(scaled),
                ByteSize(scale::MIN_SCALED_BUDGET),
            );
        }
        if scaled > memory / 2 {
            bail!(
                "--scale {scale} gives a budget of {} but this machine has {} of memory, and a trial needs its budget plus room for kvtune: \
                 give a smaller --scale such as {} (budget and data shrink alike, so the ratio that decides the results is kept)",
                ByteSize(scaled),
                ByteSize(memory),
                scale::scale_for(full_budget, memory / 2)
            );
        }
        return Ok(ScaleChoice { scale, reason: format!("scale {scale} {source}") });
    }
    if !common.json {
        eprintln!("kvtune: choosing a scale for a budget of {} on a machine with {} of memory: calibrating with RocksDB's defaults...", ByteSize(full_budget), ByteSize(memory));
    }
    let defaults = default_candidate(full_budget);
    let mut measure = |s: Scale| -> anyhow::Result<f64> {
        let m = run_candidate(runner, &defaults, dataset, full_budget, s, common.seed, "calibrate")?;
        if m.status != Status::Ok {
            bail!(
                "the calibration run of RocksDB's defaults at scale {s} did not succeed: {}",
                m.reason.unwrap_or_default()
            );
        }
        Ok(m.wall_secs)
    };
    let choice = scale::choose(full_budget, memory, common.trial_seconds, &mut measure)?;
    if full_budget > memory / 2 && !common.json {
        eprintln!("kvtune: a budget of {} is more than this machine can test; scaling budget and data down together.", ByteSize(full_budget));
    }
    Ok(choice)
}

fn run_candidate(
    runner: &Runner,
    candidate: &Candidate,
    dataset: &Dataset,
    full_budget: u64,
    scale: Scale,
    seed: u64,
    label: &str,
) -> anyhow::Result<Measurement> {
    let budget = scale.apply(full_budget);
    let config = RocksConfig::from_candidate(candidate, budget).map_err(anyhow::Error::msg)?;
    let spec = TrialSpec { config, dataset: dataset.clone(), budget, seed };
    runner.run(&spec, label, None)
}

fn default_out_dir(dataset: &str, budget: u64) -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    let stamp = format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rest / 3600, rest / 60 % 60, rest % 60);
    PathBuf::from("out").join(format!("{dataset}-{}-{stamp}", ByteSize(budget).to_string().replace(' ', "")))
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

pub fn tune(args: TuneArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.resume {
        return resume(dir, &args.common);
    }
    let full_budget = args.budget.context("--budget is required")?.0;
    let dataset = Dataset::find(args.dataset.as_deref().context("--dataset is required")?)?;
    let space = load_space(&args.space)?;
    check_study_size(&args)?;
    let runner = runner(&args.common)?;
    let asked = args.common.scale.map(|s| (s, "as asked (--scale)"));
    let choice = pick_scale(&args.common, asked, &dataset, full_budget, &runner)?;
    let out_dir = args.out.clone().unwrap_or_else(|| default_out_dir(&dataset.name, full_budget));
    if !args.common.json {
        eprintln!(
            "kvtune: scale {} (budget {}, dataset shrunk alike): {}",
            choice.scale,
            ByteSize(choice.scale.apply(full_budget)),
            choice.reason
        );
    }
    let header = StudyHeader {
        kvtune_version: env!("CARGO_PKG_VERSION").into(),
        dataset,
        full_budget,
        scale: choice.scale,
        scale_reason: choice.reason,
        space_name: space.name.clone(),
        space_text: space.text.clone(),
        strategy: args.strategy,
        trials: args.trials,
        confirm_top: args.confirm_top,
        confirm_repeats: args.confirm_repeats,
        seed: args.common.seed,
    };
    run_study(header, None, space, out_dir, runner, args.common.json)
}

fn check_study_size(args: &TuneArgs) -> anyhow::Result<()> {
    if args.trials == 0 {
        bail!("--trials 0: give at least 1 (the first trial is RocksDB's defaults)");
    }
    if args.confirm_repeats == 0 {
        bail!("--confirm-repeats 0: give at least 1 (4 or more for a p value below 0.05 to be possible)");
    }
    if args.confirm_repeats < 4 && !args.common.json {
        eprintln!(
            "warning: with --confirm-repeats {} the Mann-Whitney test cannot reach p < 0.05, so no candidate can be shown to beat the defaults; use 4 or more",
            args.confirm_repeats
        );
    }
    Ok(())
}

/// Continues the study recorded in `dir`'s journal with the settings it began with.
fn resume(dir: &Path, common: &Common) -> anyhow::Result<()> {
    let entries = Journal::read(&dir.join("journal.jsonl"))?;
    let Some(Entry::Started(header)) = entries.first() else {
        bail!("{}/journal.jsonl does not begin with a study's start: it cannot be resumed", dir.display());
    };
    if entries.iter().any(|e| matches!(e, Entry::Finished { .. })) {
        bail!(
            "the study in {} has finished already: its results are in {}/report.md",
            dir.display(),
            dir.display()
        );
    }
    let prior: Vec<TrialRecord> = journal::trials(&entries).into_iter().cloned().collect();
    let space = Space::parse(&header.space_name, &header.space_text, &param_known)?;
    if !common.json {
        eprintln!("kvtune: resuming the study in {} after {} recorded trials", dir.display(), prior.len());
    }
    let runner = runner(common)?;
    run_study((**header).clone(), Some(prior), space, dir.to_path_buf(), runner, common.json)
}

fn run_study(
    header: StudyHeader,
    prior: Option<Vec<TrialRecord>>,
    space: Space,
    out_dir: PathBuf,
    runner: Runner,
    json: bool,
) -> anyhow::Result<()> {
    if !json {
        eprintln!(
            "kvtune: {} search trials + {} confirmation runs; results in {}",
            header.trials,
            (header.confirm_top + 1) * header.confirm_repeats,
            out_dir.display()
        );
    }
    trial::stop_cleanly_on_interrupt();
    let outcome = study::run(StudySettings {
        header: header.clone(),
        prior,
        space,
        out_dir: out_dir.clone(),
        runner,
        show_progress: !json,
    })
    .map_err(|e| match e.downcast_ref::<trial::Interrupted>() {
        Some(_) => e.context(format!(
            "every finished trial is in {}/journal.jsonl: continue with `kvtune --resume {}`",
            out_dir.display(),
            out_dir.display()
        )),
        None => e,
    })?;
    if json {
        let json = serde_json::json!({ "out_dir": out_dir, "scale": header.scale.to_string(), "verdict": outcome.verdict });
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    print_answer(&header, &outcome, &out_dir);
    Ok(())
}

fn print_answer(header: &StudyHeader, outcome: &study::StudyOutcome, out_dir: &Path) {
    let mut out = std::io::stdout().lock();
    let Some(v) = &outcome.verdict else {
        let _ = writeln!(out, "No trial succeeded; see {}/report.md for the errors.", out_dir.display());
        return;
    };
    let best = v.recommended();
    let _ = writeln!(
        out,
        "\n{} at a budget of {} (measured at scale {}):\n  {}",
        header.dataset.name,
        ByteSize(header.full_budget),
        header.scale,
        v.headline()
    );
    let _ = writeln!(
        out,
        "  peak memory {} of the scaled budget {}",
        ByteSize(best.peak_memory),
        ByteSize(header.scaled_budget())
    );
    let _ = writeln!(
        out,
        "  wrote {}/: preset.toml, OPTIONS, report.md, trials.csv, journal.jsonl",
        out_dir.display()
    );
}

/// The medians and spreads `bench` prints, by metric.
#[derive(Debug, Serialize)]
struct BenchSummary {
    preset: String,
    dataset: String,
    budget: u64,
    scale: String,
    runs: Vec<Measurement>,
    failed: usize,
    metrics: Vec<(String, Summary)>,
}

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let preset = (args.preset != "defaults").then(|| Preset::load(Path::new(&args.preset))).transpose()?;
    let full_budget = match (args.budget, &preset) {
        (Some(b), _) => b.0,
        (None, Some(p)) => p.budget_bytes,
        (None, None) => bail!("--budget is required with --preset defaults"),
    };
    let dataset_name = args.dataset.clone().or_else(|| preset.as_ref().map(|p| p.dataset.clone()));
    let dataset = Dataset::find(&dataset_name.context("--dataset is required with --preset defaults")?)?;
    let candidate = preset
        .as_ref()
        .map_or_else(|| default_candidate(full_budget), |p| complete(&p.candidate, full_budget));
    RocksConfig::from_candidate(&candidate, full_budget)
        .map_err(|e| anyhow::anyhow!("preset {}: {e}", args.preset))?;
    if args.repeat == 0 {
        bail!("--repeat 0: give at least 1");
    }
    let runner = runner(&args.common)?;
    let asked = match (args.common.scale, &preset) {
        (Some(scale), _) => Some((scale, "as asked (--scale)")),
        (None, Some(p)) => Some((
            p.scale.parse::<Scale>().map_err(|e| anyhow::anyhow!("preset {}: {e}", args.preset))?,
            "the preset was measured at (--scale changes it)",
        )),
        (None, None) => None,
    };
    let choice = pick_scale(&args.common, asked, &dataset, full_budget, &runner)?;
    if !args.common.json {
        eprintln!(
            "kvtune bench: {} at budget {}, scale {} ({}), {} runs",
            args.preset,
            ByteSize(full_budget),
            choice.scale,
            choice.reason,
            args.repeat
        );
    }
    let mut runs = Vec::new();
    let mut failed = 0;
    for i in 0..args.repeat {
        let m = run_candidate(
            &runner,
            &candidate,
            &dataset,
            full_budget,
            choice.scale,
            args.common.seed,
            &format!("bench{i}"),
        )?;
        if !args.common.json {
            eprintln!(
                "run {}: {} {:.0} ops/s in {:.1} s {}",
                i + 1,
                m.status,
                m.ops_per_sec,
                m.wall_secs,
                m.reason.as_deref().unwrap_or("")
            );
        }
        if m.status == Status::Ok {
            runs.push(m);
        } else {
            failed += 1;
        }
    }
    let metrics = bench_metrics(&runs, args.common.seed);
    let summary = BenchSummary {
        preset: args.preset.clone(),
        dataset: dataset.name.clone(),
        budget: full_budget,
        scale: choice.scale.to_string(),
        runs,
        failed,
        metrics,
    };
    if args.common.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_bench(&summary);
    }
    if summary.runs.is_empty() {
        bail!("no run of {} succeeded", args.preset);
    }
    Ok(())
}

fn bench_metrics(runs: &[Measurement], seed: u64) -> Vec<(String, Summary)> {
    if runs.is_empty() {
        return vec![];
    }
    let mut series: Vec<(String, Vec<f64>)> =
        vec![("ops/s (whole replay)".into(), runs.iter().map(|m| m.ops_per_sec).collect())];
    for (i, phase) in runs[0].phases.iter().enumerate() {
        let get = |f: &dyn Fn(&crate::replay::PhaseResult) -> f64| {
            runs.iter().filter_map(|m| m.phases.get(i).map(f)).collect::<Vec<f64>>()
        };
        series.push((format!("{} ops/s", phase.name), get(&|p| p.ops_per_sec)));
        series.push((format!("{} MB/s", phase.name), get(&|p| p.mb_per_sec)));
        series.push((format!("{} p50 us", phase.name), get(&|p| p.latency.p50_us)));
        series.push((format!("{} p99 us", phase.name), get(&|p| p.latency.p99_us)));
        series.push((format!("{} p99.9 us", phase.name), get(&|p| p.latency.p999_us)));
    }
    series.push(("write amplification".into(), runs.iter().filter_map(|m| m.write_amplification).collect()));
    series.push(("stall s".into(), runs.iter().map(|m| m.stall_secs).collect()));
    series.push(("disk MiB".into(), runs.iter().map(|m| m.disk_bytes as f64 / 1048576.0).collect()));
    series.push(("bytes/key".into(), runs.iter().filter_map(|m| m.bytes_per_key).collect()));
    series.push(("peak memory MiB".into(), runs.iter().map(|m| m.peak_memory as f64 / 1048576.0).collect()));
    series.push(("wall s".into(), runs.iter().map(|m| m.wall_secs).collect()));
    series.into_iter().filter(|(_, v)| !v.is_empty()).map(|(name, v)| (name, summarize(&v, seed))).collect()
}

fn print_bench(summary: &BenchSummary) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{:<24} {:>14} {:>25} {:>7} {:>4}", "metric", "median", "95% CI", "±", "n");
    for (name, s) in &summary.metrics {
        let _ = writeln!(
            out,
            "{:<24} {:>14.2} {:>12.2} .. {:<10.2} {:>6.1}% {:>4}",
            name,
            s.median.point,
            s.median.low,
            s.median.high,
            s.spread * 100.0,
            s.n
        );
    }
    if summary.failed > 0 {
        let _ = writeln!(out, "{} run(s) did not succeed", summary.failed);
    }
    if let Some(m) = summary.runs.first() {
        let _ = writeln!(out, "memory measured by {}", m.memory_source);
    }
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    trial::worker(&args.spec, &args.db_dir, &args.report, args.cgroup.as_deref())
}
