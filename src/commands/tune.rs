//! `kvtune tune` (the default command): a new study, or `--resume` of one.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::{check_objective, disk_shortfall, load_dataset, own_objective, pick_scale, runner};
use crate::budget::ByteSize;
use crate::cli::{Common, TimeLimit, TuneArgs};
use crate::dataset::Dataset;
use crate::engine::{self, Engine};
use crate::outcome::{Baseline, SearchLimits, StudyHeader, TRIAL_CAP};
use crate::record::{Objective, TrialRecord};
use crate::report::text;
use crate::scale::TimePlan;
use crate::space::Space;
use crate::study::history::History;
use crate::study::journal::{Entry, Journal};
use crate::study::{self, workers, StudySettings, WorkerSettings};
use crate::trial::{self, ChildRunner};

pub fn tune(args: TuneArgs) -> anyhow::Result<()> {
    if !args.engines.is_empty() {
        return super::engines::engines(args);
    }
    if let Some(dir) = &args.resume {
        refuse_settings_on_resume(&args.given)?;
        return resume(dir, &args.common, args.workers, LimitsAsked::of(&args), args.create_only);
    }
    if args.create_only && args.out.is_none() {
        bail!("--create-only needs --out DIR: the folder the study's workers will run it from");
    }
    let engine = engine::find(args.common.engine.as_deref().unwrap_or("rocksdb"))?;
    let full_budget = args.budget.context("--budget is required")?.0;
    let name = args.dataset.as_deref().context("--dataset is required")?;
    let dataset = load_dataset(name, args.data_ratio, args.common.pace)?;
    let space = Space::find(args.space.as_deref().unwrap_or(engine.name()), &engine.param_names())?;
    engine.check_space(&space, full_budget)?;
    check_study_size(&args)?;
    let objectives = objectives(&args, &dataset)?;
    engine.prepare()?;
    let runner = runner(&args.common)?;
    let asked = args.common.scale.map(|s| (s, "as asked (--scale)"));
    let calibration = std::time::Instant::now();
    let choice = pick_scale(&args.common, asked, engine, &dataset, full_budget, &runner)?;
    let calibration_secs = calibration.elapsed().as_secs_f64();
    let out_dir = args.out.clone().unwrap_or_else(|| default_out_dir(&dataset.name, full_budget));
    if !args.common.json {
        eprintln!(
            "kvtune: scale {} (budget {}, dataset shrunk alike): {}",
            choice.scale,
            ByteSize(choice.scale.apply(full_budget)),
            choice.reason
        );
    }
    // The larger scale must fit this machine's memory and its work disk.
    let (verify_scale, verify_note) =
        match args.verify_scale.resolve(choice.scale, full_budget, crate::budget::machine_memory()) {
            (Some(larger), note) => {
                match disk_shortfall(&args.common.workdir, &dataset, larger.apply(full_budget)) {
                    Some(short) => (None, format!("skipped: {short}")),
                    None => (Some(larger), note),
                }
            }
            unchanged => unchanged,
        };
    let mut header = StudyHeader {
        kvtune_version: env!("CARGO_PKG_VERSION").into(),
        engine: engine.name().into(),
        dataset,
        full_budget,
        scale: choice.scale,
        scale_reason: choice.reason,
        space_name: space.name.clone(),
        space_text: space.text.clone(),
        strategy: args.strategy,
        objectives,
        trials: args.trials.unwrap_or(TRIAL_CAP),
        time_budget_secs: args.time.0.map(|d| d.as_secs_f64()),
        calibration_secs,
        racing: !args.no_racing,
        early_stop: !args.no_early_stop,
        quiet: runner.quiet.clone(),
        confirm_top: args.confirm_top,
        confirm_repeats: args.confirm_repeats,
        verify_scale,
        verify_note,
        baseline: engine.shipped_defaults(full_budget).map(|(candidate, description)| Baseline {
            label: format!("stock-{}", engine.name()),
            candidate,
            description,
        }),
        seed: args.common.seed,
        limits_at_start: None,
    };
    let check_asked = args.given.iter().any(|id| id == "verify_scale");
    fit_check_to_time(&mut header, choice.trial_secs, check_asked, &out_dir);
    if args.create_only {
        study::create(&out_dir, &header)?;
        println!(
            "kvtune: the study is in {dir}; run it with workers that see that folder: `kvtune worker {dir}` on each \
             machine, or `kvtune launch slurm {dir} --workers N`, or `kvtune launch k8s {dir} --workers N ...`",
            dir = out_dir.display()
        );
        return Ok(());
    }
    if args.workers > 1 {
        study::create(&out_dir, &header)?;
        let joining = Joining {
            header,
            dir: out_dir,
            engine,
            space,
            prior: vec![],
            confirmation_began: false,
            own_cpus: false,
        };
        return joining.run_local(&args.common, args.workers);
    }
    run_study(header, false, space, out_dir, engine, runner, args.common.json, WorkerSettings::default())
}

/// Leaves out the larger-scale check where, at the calibration's `trial_secs`,
/// it would crowd the search out of `--time` ([`TimePlan::check_crowds_out_search`]),
/// unless the user `asked` for it: the note says so and how to run it after.
fn fit_check_to_time(header: &mut StudyHeader, trial_secs: Option<f64>, asked: bool, out_dir: &Path) {
    let (Some(larger), Some(limit_secs), Some(trial_secs), false) =
        (header.verify_scale, header.time_budget_secs, trial_secs, asked)
    else {
        return;
    };
    let plan = TimePlan {
        limit_secs,
        calibration_secs: header.calibration_secs,
        trial_secs,
        confirm_runs: header.confirm_runs(),
        check_runs: header.verify_runs(),
    };
    let preset = out_dir.join("preset.toml").display().to_string();
    if let Some(note) = plan.check_crowds_out_search(header.scale, larger, &preset) {
        header.verify_scale = None;
        header.verify_note = note;
    }
}

/// `out/DATASET-BUDGET-YYYYMMDD-HHMMSS` (UTC).
pub(super) fn default_out_dir(dataset: &str, budget: u64) -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stamp: String = now.trim_end_matches('Z').replace('T', "-").replace([':'], "").replacen('-', "", 2);
    PathBuf::from("out").join(format!("{dataset}-{}-{stamp}", ByteSize(budget).to_string().replace(' ', "")))
}

/// The objectives asked for, else the dataset's own, checked against its phases.
fn objectives(args: &TuneArgs, dataset: &Dataset) -> anyhow::Result<Vec<Objective>> {
    let objectives = match &args.objective[..] {
        [] => vec![own_objective(dataset)?],
        asked => asked.to_vec(),
    };
    if objectives.len() > 2 {
        bail!("--objective takes one or two objectives, not {}", objectives.len());
    }
    for objective in &objectives {
        check_objective(objective, dataset)?;
    }
    Ok(objectives)
}

fn check_study_size(args: &TuneArgs) -> anyhow::Result<()> {
    if args.trials == Some(0) {
        bail!("--trials 0: give at least 1 (the first trial is the engine's defaults)");
    }
    if args.workers == 0 {
        bail!("--workers 0: give at least 1 (this process is the first worker)");
    }
    if args.confirm_repeats == 0 {
        bail!("--confirm-repeats 0: give at least 1 (3 or more for the paired test to resolve anything)");
    }
    if args.confirm_repeats < 3 && !args.common.json {
        eprintln!(
            "warning: with --confirm-repeats {} the paired test has almost no power, so no candidate is likely to be shown to beat the defaults; use 3 or more",
            args.confirm_repeats
        );
    }
    Ok(())
}

/// Flags `--resume` takes: where trials run, how kvtune prints, how long a
/// trial may take before it is stopped, and how far the search may go. Every
/// other flag shapes the results, and the study goes on with the ones it
/// began with.
const RESUME_TAKES: &[&str] =
    &["resume", "workdir", "json", "trial_timeout", "workers", "trials", "time", "create_only"];

/// Refuses flags a resumed study would not apply, rather than ignore them.
fn refuse_settings_on_resume(given: &[String]) -> anyhow::Result<()> {
    let refused: Vec<String> = given
        .iter()
        .filter(|id| !RESUME_TAKES.contains(&id.as_str()))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !refused.is_empty() {
        bail!(
            "--resume goes on with the settings the study began with (its journal records them), so it takes no {}: \
             leave {} out, or start a new study with them; --resume takes --workdir, --json, --trial-timeout, --workers, \
             and --trials, --time and --create-only for a search still running",
            refused.join(", "),
            if refused.len() == 1 { "it" } else { "them" }
        );
    }
    Ok(())
}

/// Continues the study recorded in `dir`'s journal with the settings it
/// began with. A study that live workers are running is theirs: this
/// machine joins it with `kvtune worker` instead.
fn resume(
    dir: &Path,
    common: &Common,
    workers: usize,
    asked: LimitsAsked,
    limits_only: bool,
) -> anyhow::Result<()> {
    if limits_only && !asked.any() {
        bail!(
            "--resume with --create-only records new limits for the study's workers: give --trials N or --time T \
             (or leave --create-only out to run the study here)"
        );
    }
    if let Some(beat) = workers::live(dir, workers::STALE_AFTER).first() {
        bail!(
            "the study in {} is in use by another kvtune (pid {} on {}, worker {}): wait for it to end, or stop it, \
             before resuming; to add this machine to it, run `kvtune worker {}`",
            dir.display(),
            beat.pid,
            beat.host,
            beat.name,
            dir.display()
        );
    }
    if asked.any() && study::journal::read_study(dir).is_ok_and(|s| s.finished) {
        bail!(
            "the study in {dir} has finished (its search, confirmation and verdict are recorded), so --trials and --time \
             cannot reopen its search: search longer in a new study, then measure the two answers side by side with \
             `kvtune compare NEW/preset.toml {dir}/preset.toml`",
            dir = dir.display()
        );
    }
    let mut study = Joining::read(dir, common, "resuming")?;
    study.change_limits(asked, common.json)?;
    if limits_only {
        println!(
            "kvtune: the new limits are in {dir}/journal.jsonl: run the study with `kvtune worker {dir}` on each machine, \
             `kvtune launch slurm|k8s {dir} ...`, or `kvtune --resume {dir}` here",
            dir = dir.display()
        );
        return Ok(());
    }
    study.run_local(common, workers)
}

/// The search limits a `--resume` gives: `None` for each one not given.
struct LimitsAsked {
    trials: Option<usize>,
    time: Option<TimeLimit>,
}

impl LimitsAsked {
    fn of(args: &TuneArgs) -> Self {
        let time = args.given.iter().any(|id| id == "time").then_some(args.time);
        LimitsAsked { trials: args.trials, time }
    }

    fn any(&self) -> bool {
        self.trials.is_some() || self.time.is_some()
    }
}

/// A recorded study a process goes on with: a `--resume`, or a worker.
pub(super) struct Joining {
    header: StudyHeader,
    dir: PathBuf,
    engine: &'static dyn Engine,
    space: Space,
    prior: Vec<TrialRecord>,
    /// Its confirmation has begun (claimed, if not yet recorded).
    confirmation_began: bool,
    /// Pin trials to this process's `--cpus`, not the study's: a worker on
    /// another machine has CPUs of its own.
    own_cpus: bool,
}

impl Joining {
    /// The study in `dir`, unless it has finished; `doing` says what this
    /// process is doing with it, for the line it prints.
    pub(super) fn read(dir: &Path, common: &Common, doing: &str) -> anyhow::Result<Self> {
        let missing = "kvtune study: give the folder a study was made in (`kvtune ... --out DIR`, with \
                       --create-only for workers to run it)";
        let recorded = super::unfinished_study(dir, missing)?;
        let header = recorded.header;
        if header.kvtune_version != env!("CARGO_PKG_VERSION") && !common.json {
            eprintln!(
                "warning: the study was started by kvtune {} and this is {}: a resumed sampler may not go on as the first one would",
                header.kvtune_version,
                env!("CARGO_PKG_VERSION")
            );
        }
        let engine = engine::find(&header.engine)?;
        engine.prepare()?;
        let space = Space::parse(&header.space_name, &header.space_text, &engine.param_names())?;
        if !common.json {
            eprintln!(
                "kvtune: {doing} the study in {} after {} recorded trials",
                dir.display(),
                recorded.trials.len()
            );
        }
        Ok(Joining {
            header,
            dir: dir.to_path_buf(),
            engine,
            space,
            prior: recorded.trials,
            confirmation_began: recorded.confirmation_began,
            own_cpus: false,
        })
    }

    /// Puts the limits `asked` in force for the rest of the search, recorded
    /// in the journal so that workers, reports and a later resume see them.
    fn change_limits(&mut self, asked: LimitsAsked, quiet: bool) -> anyhow::Result<()> {
        if !asked.any() {
            return Ok(());
        }
        let (before, limits) = (self.header.limits(), self.limits_asked(&asked)?);
        if limits == before {
            return Ok(());
        }
        Journal::open(&self.dir.join("journal.jsonl"))?.lock()?.append(&Entry::Limits(limits))?;
        self.header.change_limits(limits);
        if !quiet {
            eprintln!(
                "kvtune: the search's limits are now {limits} (they were {before}); it has run {} search trials in \
                 {:.0} s of the study's time",
                self.history().search_trials_run(),
                self.history().spent()
            );
        }
        Ok(())
    }

    /// The limits `asked`, the study's own where one is not given; refused
    /// where they cannot apply or would change nothing: the confirmation has
    /// begun, or a search its limits closed would stay closed.
    fn limits_asked(&self, asked: &LimitsAsked) -> anyhow::Result<SearchLimits> {
        let dir = self.dir.display();
        if self.confirmation_began {
            let how = self.history().search_ended().map(|end| {
                let plural = if end.trials == 1 { "" } else { "s" };
                format!(" after {} search trial{plural} ({})", end.trials, end.why)
            });
            bail!(
                "the study in {dir} ended its search{} and its confirmation has begun, so --trials and --time would \
                 change nothing: resume it without them, and search longer in a new study",
                how.unwrap_or_default()
            );
        }
        let trials = asked.trials.unwrap_or(self.header.trials);
        if trials != self.header.trials && self.header.strategy == crate::search::Strategy::Grid {
            bail!(
                "--trials: a grid study enumerates its levels for the {} trials it began with, so its trials cannot \
                 change; resume it with --time alone, or start a new grid study",
                self.header.trials
            );
        }
        let searched = self.history().search_trials_run();
        if asked.trials.is_some() && trials <= searched {
            bail!("--trials {trials}: the study in {dir} has run {searched} search trials already; give more than {searched}");
        }
        let time_budget_secs = match asked.time {
            Some(limit) => limit.0.map(|d| d.as_secs_f64()),
            None => self.header.time_budget_secs,
        };
        let limits = SearchLimits { trials, time_budget_secs };
        let mut header = self.header.clone();
        header.change_limits(limits);
        let after = History { header: &header, ..self.history() };
        if let (Some(_), Some(still)) = (self.history().search_closed(0), after.search_closed(0)) {
            bail!(
                "the search of the study in {dir} was closed by its limits, and {limits} would keep it closed ({still}): \
                 give a larger --trials or --time"
            );
        }
        if let Some(too_short) = after.too_short_to_confirm() {
            bail!("with {limits}, {}: give --time {:.0}m or more", too_short.why, too_short.minutes);
        }
        Ok(limits)
    }

    fn history(&self) -> History<'_> {
        History { header: &self.header, trials: &self.prior, space: &self.space, engine: self.engine }
    }

    /// As a worker of the study: its trials pinned to this process's `--cpus`.
    pub(super) fn on_own_cpus(self) -> Self {
        Joining { own_cpus: true, ..self }
    }

    /// Runs the study here with `workers` workers: this process alone (named
    /// HOST:PID), or `worker-0` and `kvtune worker` processes `worker-1`...
    pub(super) fn run_local(self, common: &Common, workers: usize) -> anyhow::Result<()> {
        if workers <= 1 {
            return self.run(common, WorkerSettings::default(), &[]);
        }
        let helpers: Vec<String> = (1..workers).map(|i| format!("worker-{i}")).collect();
        self.run(common, WorkerSettings { name: "worker-0".into(), ..WorkerSettings::default() }, &helpers)
    }

    /// Runs the study's trials here until it ends, with `helpers` more
    /// workers on this machine.
    pub(super) fn run(
        self,
        common: &Common,
        worker: WorkerSettings,
        helpers: &[String],
    ) -> anyhow::Result<()> {
        // Workers side by side each have a work directory of their own.
        let own = match helpers.is_empty() {
            true => common.clone(),
            false => Common { workdir: common.workdir.join(&worker.name), ..common.clone() },
        };
        // The trials go on as quiet as the study began.
        let mut runner = runner(&own)?;
        // Registered for the study before its helpers start, so that none
        // takes another worker of it for a stranger.
        let study = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        runner.neighbours = runner.neighbours.for_study(&study);
        runner.neighbours.register();
        runner.quiet = match self.own_cpus {
            true => crate::trial::Quiet { cpus: own.cpus.clone().map(|c| c.0), ..self.header.quiet.clone() },
            false => self.header.quiet.clone(),
        };
        // The time limit comes from --trial-seconds, which a resume does not
        // take; the study's own trials say what one takes here: a resumed trial
        // gets ten times the longest per GiB of budget, if that is more.
        if common.trial_timeout.is_none() {
            let per_gib =
                |t: &TrialRecord| t.measurement.wall_secs / (t.budget as f64 / (1u64 << 30) as f64).max(1.0);
            let longest = self.prior.iter().map(per_gib).fold(0.0, f64::max);
            runner.timeout = runner.timeout.max(std::time::Duration::from_secs_f64(10.0 * longest));
        }
        let helpers = Helpers::spawn(&self.dir, common, helpers)?;
        let done =
            run_study(self.header, true, self.space, self.dir, self.engine, runner, common.json, worker);
        // Ctrl-C reached the helpers by itself; a second SIGINT would end them mid-cleanup.
        let interrupted =
            done.as_ref().err().is_some_and(|e| e.downcast_ref::<trial::Interrupted>().is_some());
        helpers.wait(done.is_ok(), interrupted)?;
        done
    }
}

/// Other workers of the study on this machine (`--workers N`), each a
/// `kvtune worker` process with its own work directory, its output in
/// DIR/workers/NAME.log.
struct Helpers(Vec<(String, std::process::Child)>);

impl Helpers {
    fn spawn(dir: &Path, common: &Common, names: &[String]) -> anyhow::Result<Self> {
        let mut children = vec![];
        for name in names {
            let log_path = dir.join("workers").join(format!("{name}.log"));
            std::fs::create_dir_all(dir.join("workers"))?;
            let log = std::fs::File::create(&log_path)
                .with_context(|| format!("making the worker's log {}", log_path.display()))?;
            let mut command = std::process::Command::new(std::env::current_exe()?);
            command
                .arg("worker")
                .arg(dir)
                .args(["--name", name])
                .arg("--workdir")
                .arg(common.workdir.join(name))
                .stdout(log.try_clone()?)
                .stderr(log);
            if let Some(t) = common.trial_timeout {
                command.args(["--trial-timeout", &t.to_string()]);
            }
            let child = command.spawn().context("starting a worker of the study")?;
            children.push((name.clone(), child));
        }
        Ok(Helpers(children))
    }

    /// Waits for the helpers to see the study end; if this worker failed
    /// (other than by Ctrl-C, which reaches them by itself), stops them first.
    fn wait(self, ok: bool, interrupted: bool) -> anyhow::Result<()> {
        for (name, mut child) in self.0 {
            if !ok && !interrupted {
                // SAFETY: SIGINT to a child this process started: it stops its trial cleanly.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            }
            let status = child.wait()?;
            if ok && !status.success() {
                eprintln!(
                    "warning: worker {name} ended with {status}: see its log in the study's workers/ folder"
                );
            }
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn run_study(
    header: StudyHeader,
    resume: bool,
    space: Space,
    out_dir: PathBuf,
    engine: &'static dyn Engine,
    runner: ChildRunner,
    json: bool,
    worker: WorkerSettings,
) -> anyhow::Result<()> {
    if !json {
        let search = match header.time_budget_secs {
            Some(secs) => format!(
                "a {} search within {} (the calibration's {:.0} s and racing included{})",
                header.strategy,
                crate::outcome::duration_text(secs),
                header.calibration_secs,
                header
                    .limits()
                    .trials_set()
                    .map_or(String::new(), |trials| format!(", at most {trials} trials"))
            ),
            None => format!("up to {} {} search trials", header.trials, header.strategy),
        };
        // The time a sampler that stops early leaves goes to more rounds.
        let more = if header.time_budget_secs.is_some() {
            " (more if its sampler stops with --time to spare)"
        } else {
            ""
        };
        eprintln!(
            "kvtune: {search}, then {} confirmation runs{more} and {} at a larger scale ({}); results in {}",
            header.confirm_runs(),
            header.verify_runs(),
            header.verify_note,
            out_dir.display()
        );
    }
    let (space, held) = study::searched(engine, &space, &header.dataset);
    if !json {
        for h in &held {
            eprintln!("kvtune: {} held at {}, not searched: {}", h.name, h.value, h.why);
        }
    }
    let admissible =
        study::admissible(engine, header.dataset.clone(), header.full_budget, header.scaled_budget());
    let sampler = header.strategy.sampler(
        &space,
        header.trials,
        header.seed,
        &header.objectives[0],
        admissible,
        header.early_stop,
    );
    let outcome = study::run(StudySettings {
        header: header.clone(),
        resume,
        space,
        sampler,
        out_dir: out_dir.clone(),
        engine,
        runner: &runner,
        scratch: runner.workdir.clone(),
        show_progress: !json,
        worker,
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
    } else {
        print!("{}", text::answer(&outcome, &out_dir));
    }
    Ok(())
}
