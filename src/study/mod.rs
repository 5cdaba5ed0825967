//! A study: the defaults, then the sampler's candidates, each run as a trial
//! and recorded in the journal; then confirmation rounds of the best few and
//! the defaults, interleaved, and the verdict. Outputs are rewritten as the
//! study goes, so a crash leaves them current.
//!
//! A study is run by one or more workers sharing its folder (`kvtune tune`
//! is one; `kvtune worker DIR` joins from any machine that sees DIR). Each
//! worker, under the journal's lock, reads what was recorded and claimed,
//! asks [`plan`] what runs next, claims it and lets the lock go; it runs
//! the task on its own machine and records each run under the lock again.

pub mod compare;
pub mod history;
pub mod journal;
mod machines;
pub mod plan;
pub mod task;
mod transfer;
pub mod verdict;
pub mod workers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::budget::ByteSize;
use crate::dataset::Dataset;
use crate::engine::{Engine, Held};
use crate::outcome::{Progress, StudyHeader, StudyOutcome, BASELINE_ORIGIN};
use crate::racing;
use crate::record::{Objective, Stage, Status, TrialRecord};
use crate::report;
use crate::search::{Admissible, Resolution, Sampler};
use crate::space::{Candidate, Space};
use crate::trial::{self, Request, TrialRunner};
use history::History;
use journal::{Entry, Journal, Locked};
use plan::{Board, Plan};
use task::{Claim, PlannedRun};
use workers::Heartbeat;

/// Everything a study needs besides its header.
pub struct StudySettings<'a> {
    pub header: StudyHeader,
    /// Whether the study's folder holds it already: a resumed study, or a
    /// worker joining one.
    pub resume: bool,
    pub space: Space,
    /// The search strategy's sampler, fresh: it is replayed over the
    /// journal's asks and tells before it proposes anything.
    pub sampler: Box<dyn Sampler>,
    pub out_dir: PathBuf,
    pub engine: &'a dyn Engine,
    pub runner: &'a dyn TrialRunner,
    /// Where the engine may make scratch files (for its options file).
    pub scratch: PathBuf,
    pub show_progress: bool,
    pub worker: WorkerSettings,
}

/// Who this worker is and when it takes another's work over.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Unique among the study's workers: `host:pid` unless given.
    pub name: String,
    /// A worker whose heartbeat is older than this has stopped, and its
    /// claimed task is run again by another.
    pub stale_after: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings { name: workers::default_name(), stale_after: workers::STALE_AFTER }
    }
}

/// The search candidates this study's trials would run rather than reject
/// before running: a sampler's candidate completed at the full budget, as
/// the study completes it, and run at the trials' `budget`; two of them run
/// alike when the engine resolves them to the same options there.
pub fn admissible(
    engine: &'static dyn Engine,
    dataset: Dataset,
    full_budget: u64,
    budget: u64,
) -> Admissible {
    let shape = dataset.workload(budget).shape();
    Admissible::judged_by(move |c: &Candidate| {
        let resolved = engine.resolve(&engine.complete(c, full_budget), budget).ok()?;
        let admitted = trial::would_run(engine, &resolved, &dataset, shape, budget);
        Some(Resolution { admitted, options: resolved.options, adjusted: resolved.adjusted })
    })
}

/// The space a study searches: `space` without the parameters the dataset
/// holds at one value ([`Engine::held`]; a row cache where it deletes
/// ranges), and those held. Left in, a held parameter costs the search
/// most of what it draws: a Sobol point or a uniform draw of a row cache
/// share is almost never 0, so on tbs every design point was rejected.
pub fn searched(engine: &dyn Engine, space: &Space, dataset: &Dataset) -> (Space, Vec<Held>) {
    let mut held = engine.held(dataset);
    held.retain(|h| space.params.iter().any(|p| p.name == h.name));
    (space.without(&held.iter().map(|h| h.name).collect::<Vec<_>>()), held)
}

/// Trials whose candidate the memory model rejects are recorded but do not
/// use up `--trials`; past this many in a row the sampler is given up on.
const MAX_REJECTIONS_IN_A_ROW: usize = 200;

/// Fewer search trials than this beyond the defaults, stopped by `--time`,
/// and the study says the limit was too short.
const STARVED_SEARCH_TRIALS: usize = 5;

/// Shortest time between rewrites of the running study's `report.html`.
const LIVE_REPORT_EVERY: Duration = Duration::from_secs(10);

/// How often a worker waiting for others looks at the journal again.
const POLL_EVERY: Duration = Duration::from_millis(500);

/// A search trial still running after this many times the defaults' wall
/// time is stopped and recorded as pruned: it cannot be among the best.
pub const PRUNE_FACTOR: f64 = 3.0;

pub fn run(settings: StudySettings) -> anyhow::Result<StudyOutcome> {
    let StudySettings {
        header,
        resume,
        space,
        sampler,
        out_dir,
        engine,
        runner,
        scratch,
        show_progress,
        worker,
    } = settings;
    if !resume {
        create(&out_dir, &header)?;
    }
    let journal = Journal::open(&out_dir.join("journal.jsonl"))?;
    let phase_names = header.dataset.workload(header.scaled_budget()).phase_names();
    // With a time limit the number of search trials is not known up front,
    // so the bar counts seconds of the limit instead of trials.
    let planned = header.trials + header.confirm_runs() + header.verify_runs();
    let (length, unit) = match header.time_budget_secs {
        Some(limit) => (limit as usize, "s of the time limit"),
        None => (planned, "trials"),
    };
    let defaults = engine.defaults(header.full_budget);
    let mut study = Running {
        header,
        space: &space,
        engine,
        runner,
        journal,
        heartbeat: Heartbeat::start(&out_dir, &worker.name)?,
        watch: workers::Watch::new(&out_dir, worker.stale_after),
        session: session_id(),
        host: workers::host(),
        out_dir: out_dir.clone(),
        scratch,
        phase_names,
        defaults,
        read_to: 0,
        entries_read: 0,
        trials: vec![],
        recorded: BTreeSet::new(),
        written_trials: 0,
        rivals: BTreeMap::new(),
        claims: vec![],
        finished: false,
        held: BTreeSet::new(),
        sampler,
        exhausted: false,
        progress: progress_bar(show_progress, length, unit),
        show_progress,
        live_report_at: None,
        trials_csv: report::TrialsCsv::default(),
        busy_since: Instant::now(),
    };
    study.show_time_spent();
    match study.work() {
        Ok(outcome) => {
            study.progress.finish_and_clear();
            Ok(outcome)
        }
        Err(stopped) => {
            // The report shows every trial the stopped study recorded; the
            // error that stopped it is what the user must see, so a report
            // that cannot be written (a full disk, say) is only a warning.
            // A study other workers go on with is not stopped: they keep
            // its report.
            let others = workers::live(&out_dir, workers::STALE_AFTER).iter().any(|b| b.name != worker.name);
            if others {
                return Err(stopped);
            }
            if let Err(why) = study.write_live_report(Progress::Stopped) {
                eprintln!("warning: report.html was not rewritten: {why:#}");
            }
            Err(stopped)
        }
    }
}

/// A number no other process of the study is likely to draw.
fn session_id() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32) ^ rand::random::<u64>()
}

/// Makes a study's folder and starts its journal with `header`: workers
/// (this process, or others that see the folder) then run it.
pub fn create(out_dir: &Path, header: &StudyHeader) -> anyhow::Result<()> {
    create_out_dir(out_dir)?;
    let journal = Journal::open(&out_dir.join("journal.jsonl"))?;
    let mut locked = journal.lock()?;
    locked.append(&Entry::Started(Box::new(header.clone())))
}

/// Makes the output folder; one that already holds files is refused, so two
/// studies never mix in one journal.
fn create_out_dir(out_dir: &Path) -> anyhow::Result<()> {
    if std::fs::read_dir(out_dir).is_ok_and(|mut entries| entries.next().is_some()) {
        anyhow::bail!(
            "the output folder {} already holds files: give --out a new or empty folder",
            out_dir.display()
        );
    }
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("creating the output folder {}", out_dir.display()))
}

fn progress_bar(show: bool, len: usize, unit: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:30.cyan/blue}} {{pos}}/{{len}} {unit}, ETA {{eta}}  {{msg}}"
    );
    bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

struct Running<'a> {
    /// The study's header, with the limits a resume recorded since it began.
    header: StudyHeader,
    space: &'a Space,
    engine: &'a dyn Engine,
    runner: &'a dyn TrialRunner,
    journal: Journal,
    heartbeat: Heartbeat,
    watch: workers::Watch,
    /// Tells this process's claims from those of an earlier (or, misnamed,
    /// a concurrent) worker of the same name.
    session: u64,
    host: String,
    out_dir: PathBuf,
    scratch: PathBuf,
    phase_names: Vec<String>,
    defaults: Candidate,
    /// Where this worker stopped reading the journal: the byte, the entries.
    read_to: u64,
    entries_read: usize,
    /// The journal's trials, in the order they were recorded.
    trials: Vec<TrialRecord>,
    /// Their numbers.
    recorded: BTreeSet<usize>,
    /// Trials `write_new_trials` wrote out.
    written_trials: usize,
    /// Each search trial's rival for a race (see [`racing::first_rival`]).
    rivals: BTreeMap<String, Option<String>>,
    /// The latest claim of each task, in the order tasks were first claimed.
    claims: Vec<Claim>,
    /// The journal says the study ended.
    finished: bool,
    /// The tasks this worker claimed and is running.
    held: BTreeSet<String>,
    sampler: Box<dyn Sampler>,
    /// The sampler said it has nothing left to propose.
    exhausted: bool,
    progress: ProgressBar,
    show_progress: bool,
    /// When `report.html` was last rewritten.
    live_report_at: Option<Instant>,
    trials_csv: report::TrialsCsv,
    /// Since this worker last recorded a run (or stopped waiting for other
    /// workers): what of it the run's process did not take is its overhead.
    busy_since: Instant,
}

impl Running<'_> {
    /// What the study recorded so far.
    fn history(&self) -> History<'_> {
        History { header: &self.header, trials: &self.trials, space: self.space, engine: self.engine }
    }

    /// The objective the search and the verdict rank by (the first one asked).
    fn objective(&self) -> &Objective {
        &self.header.objectives[0]
    }

    /// Takes tasks until the study ends, by this worker's hand or another's.
    fn work(&mut self) -> anyhow::Result<StudyOutcome> {
        loop {
            // A worker between trials stops here on Ctrl-C or SIGTERM, before it claims anything.
            if trial::interrupted() {
                return Err(trial::Interrupted.into());
            }
            let mut locked = self.lock()?;
            if self.finished {
                drop(locked);
                let history = self.history();
                return history.outcome(history.judge(), Progress::Finished, &self.scratch);
            }
            let plan = self.board(&|claim| self.holds(claim)).next();
            let (task, runs, asked) = match plan {
                Plan::Run { task, runs } => (task, runs, false),
                Plan::Ask => {
                    let Some(proposal) = self.ask() else {
                        self.exhausted = true;
                        continue;
                    };
                    let candidate = self.engine.complete(&proposal.candidate, self.header.full_budget);
                    let (task, runs) =
                        self.board(&|claim| self.holds(claim)).search_task(candidate, false, proposal.origin);
                    (task, runs, true)
                }
                Plan::Wait => {
                    drop(locked);
                    self.progress.set_message("waiting for other workers' trials");
                    std::thread::sleep(POLL_EVERY);
                    self.busy_since = Instant::now();
                    continue;
                }
                Plan::StopBeforeConfirmation(too_short) => anyhow::bail!(
                    "{}: the study stopped before its confirmation, every trial kept. `kvtune --resume {dir} --time \
                     {minutes:.0}m` goes on with a search of about 30 trials; for a study that workers run, `kvtune \
                     --resume {dir} --time {minutes:.0}m --create-only` records the limit for them, then start them \
                     again (fewer --confirm-repeats or a smaller --scale need a new study)",
                    too_short.why,
                    dir = self.out_dir.display(),
                    minutes = too_short.minutes
                ),
                Plan::Finish => return self.finish(&mut locked),
            };
            let claim = self.claim(&mut locked, task, runs, asked)?;
            drop(locked);
            self.execute(&claim)?;
        }
    }

    /// The planner's view of the journal as last read.
    fn board<'b>(&'b self, held: &'b dyn Fn(&Claim) -> bool) -> Board<'b> {
        Board {
            history: self.history(),
            claims: self.claims.iter().collect(),
            recorded: &self.recorded,
            rivals: &self.rivals,
            held,
            defaults: &self.defaults,
            exhausted: self.exhausted,
        }
    }

    /// Whether `claim`'s worker still holds it: this worker if it claimed
    /// it in this run (a claim under its name from an earlier run, stopped,
    /// is held by no one), another if its heartbeat lives.
    fn holds(&self, claim: &Claim) -> bool {
        match claim.worker == self.heartbeat.name {
            true => claim.session == self.session && self.held.contains(&claim.task),
            false => self.watch.alive(&claim.worker),
        }
    }

    /// Takes the journal's lock and catches up with what was appended
    /// since this worker last read it.
    fn lock(&mut self) -> anyhow::Result<Locked> {
        let mut locked = self.journal.lock_from(self.read_to, self.entries_read)?;
        self.read_to = locked.end;
        for entry in std::mem::take(&mut locked.entries) {
            self.absorb(entry, false);
        }
        self.write_new_trials()?;
        Ok(locked)
    }

    /// Appends `entry` (this worker's own) under the lock held.
    fn append(&mut self, locked: &mut Locked, entry: Entry) -> anyhow::Result<()> {
        locked.append(&entry)?;
        locked.entries.clear();
        self.read_to = locked.end;
        self.absorb(entry, true);
        self.write_new_trials()
    }

    /// Takes one journal entry in: its trial or claim; the sampler replayed
    /// over the asks and tells other workers made (so it proposes what any
    /// worker's sampler would: this worker's own asks were live); each new
    /// trial logged, and for a search trial whether it must race.
    fn absorb(&mut self, entry: Entry, own: bool) {
        self.entries_read += 1;
        match entry {
            Entry::Claimed(claim) => {
                if claim.asked && !own {
                    let _ = self.ask();
                }
                match self.claims.iter_mut().find(|c| c.task == claim.task) {
                    Some(earlier) => *earlier = *claim,
                    None => self.claims.push(*claim),
                }
            }
            Entry::Trial(t) => {
                if t.stage == Stage::Search {
                    // A journal written before claims: its search trials were asked for all the same.
                    let claimed = self.claims.iter().any(|c| c.runs.iter().any(|r| r.number == t.number));
                    if !t.is_default && !claimed {
                        let _ = self.ask();
                    }
                    self.sampler.tell(&t);
                }
                self.recorded.insert(t.number);
                self.log(&t);
                self.advance(&t);
                let racer = t.stage == Stage::Search && !t.is_default;
                self.trials.push(*t);
                if racer {
                    let challenger = self.trials.last().expect("just pushed");
                    let rival = racing::first_rival(&self.trials, challenger, self.objective());
                    self.rivals.insert(challenger.label.clone(), rival);
                }
            }
            Entry::Finished { .. } => self.finished = true,
            // Limits a resume recorded while this worker runs (one read
            // earlier are in the header it began with already).
            Entry::Limits(limits) => self.header.change_limits(limits),
            Entry::Started(_) | Entry::Stopped(_) => {}
        }
    }

    /// Rewrites `trials.csv` and the live report when trials came in.
    fn write_new_trials(&mut self) -> anyhow::Result<()> {
        if self.trials.len() == self.written_trials {
            return Ok(());
        }
        self.written_trials = self.trials.len();
        self.trials_csv.update(&self.out_dir, self.space, &self.phase_names, &self.trials)?;
        self.write_live_report(Progress::Running)
    }

    /// The sampler's next proposal, asked with the trials recorded and each
    /// search trial under way on another worker as if it had scored the
    /// median so far (a constant liar), so that workers asking side by side
    /// are sent apart.
    fn ask(&mut self) -> Option<crate::search::Proposal> {
        match self.with_liars() {
            Some(history) => self.sampler.ask(self.space, &history),
            None => self.sampler.ask(self.space, &self.trials),
        }
    }

    /// The recorded trials and the liars, when a search trial is under way.
    fn with_liars(&self) -> Option<Vec<TrialRecord>> {
        let pending: Vec<&PlannedRun> = self
            .claims
            .iter()
            .filter(|c| c.task.starts_with("search:"))
            .flat_map(|c| c.runs.iter())
            .filter(|r| !self.recorded.contains(&r.number))
            .collect();
        let objective = self.objective();
        let mut scored: Vec<(f64, &TrialRecord)> = self
            .trials
            .iter()
            .filter(|t| t.stage == Stage::Search)
            .filter_map(|t| Some((objective.score(&t.measurement)?, t)))
            .collect();
        scored.sort_by(|a, b| a.0.total_cmp(&b.0));
        let lie = match scored.get(scored.len() / 2) {
            Some((_, t)) if !pending.is_empty() => t.measurement.clone(),
            _ => return None,
        };
        let liars = pending.into_iter().map(|r| TrialRecord {
            label: r.entrant.label.clone(),
            is_default: r.entrant.is_default,
            ..TrialRecord::replayed(r.number, r.entrant.candidate.clone(), lie.clone())
        });
        Some(self.trials.iter().cloned().chain(liars).collect())
    }

    /// Appends this worker's claim of `task`.
    fn claim(
        &mut self,
        locked: &mut Locked,
        task: String,
        runs: Vec<PlannedRun>,
        asked: bool,
    ) -> anyhow::Result<Claim> {
        if task == "confirm:0" {
            if let Some(note) = self.history().time_starved() {
                self.say(format!("kvtune: {note}"));
            }
        }
        let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let claim = Claim {
            task,
            worker: self.heartbeat.name.clone(),
            session: self.session,
            runs,
            asked,
            at: at.as_secs_f64(),
        };
        self.append(locked, Entry::Claimed(Box::new(claim.clone())))?;
        self.held.insert(claim.task.clone());
        Ok(claim)
    }

    /// Runs a claimed task's runs back to back, skipping those a stopped
    /// worker had recorded already, and records each as it ends; stops if
    /// another worker took the task over meanwhile (this one was thought
    /// gone: its results would be counted twice).
    fn execute(&mut self, claim: &Claim) -> anyhow::Result<()> {
        for run in &claim.runs {
            if self.recorded.contains(&run.number) {
                continue;
            }
            let prune_after = if run.stage == Stage::Search { self.prune_limit() } else { None };
            let record = self.run(run, prune_after)?;
            let mut locked = self.lock()?;
            let mine = self.claims.iter().any(|c| c.task == claim.task && c.session == claim.session);
            if !mine || self.recorded.contains(&run.number) {
                self.say(format!(
                    "kvtune: {} was taken over by another worker while this one ran it (its heartbeat was late); this run is not recorded",
                    claim.task
                ));
                // The run is the other worker's to count.
                self.busy_since = Instant::now();
                break;
            }
            if record.measurement.reason.as_deref().is_some_and(|r| r.starts_with(trial::DISK_FULL)) {
                self.log(&record);
                self.append(&mut locked, Entry::Stopped(Box::new(record.clone())))?;
                return Err(self.disk_full(&record));
            }
            let side_by_side = self.claims.iter().filter(|c| !self.done(c) && self.holds(c)).count();
            let busy = std::mem::replace(&mut self.busy_since, Instant::now()).elapsed().as_secs_f64();
            let overhead_secs = (busy - record.measurement.wall_secs).max(0.0);
            let record = TrialRecord { side_by_side: side_by_side.max(1), overhead_secs, ..record };
            self.append(&mut locked, Entry::Trial(Box::new(record)))?;
        }
        self.held.remove(&claim.task);
        Ok(())
    }

    /// Not the candidate's failure but the machine's: the journal keeps it
    /// as the study's stop, and a resume runs the trial again.
    fn disk_full(&self, record: &TrialRecord) -> anyhow::Error {
        let data = self.header.dataset.workload(record.budget).shape().user_bytes;
        anyhow::anyhow!(
            "the work directory ran out of space, so the study stopped at trial {} ({}): a trial at this scale \
             needs about {} free (twice its {} of data); free space there or give --workdir on a larger disk, then \
             continue with `kvtune --resume {}`, which runs that trial again",
            record.number,
            record.label,
            ByteSize(trial::disk_needed(data)),
            ByteSize(data),
            self.out_dir.display()
        )
    }

    /// Runs (or rejects) one planned run on this machine.
    fn run(&mut self, run: &PlannedRun, prune_after: Option<Duration>) -> anyhow::Result<TrialRecord> {
        let entrant = &run.entrant;
        self.progress.set_message(format!("running {}{}", entrant.label, self.best_message()));
        let request = Request {
            engine: self.engine,
            candidate: &entrant.candidate,
            dataset: &self.header.dataset,
            budget: run.budget,
            seed: self.header.seed,
        };
        // The engine as shipped is the reference users quote: measured even
        // where the memory model predicts it will not fit (the cgroup says).
        let label = run.number.to_string();
        let ran = match entrant.origin == BASELINE_ORIGIN {
            true => trial::attempt_ungated(self.runner, &request, &label)?,
            false => trial::attempt(self.runner, &request, &label, prune_after)?,
        };
        Ok(TrialRecord {
            number: run.number,
            stage: run.stage,
            label: entrant.label.clone(),
            is_default: entrant.is_default,
            origin: entrant.origin.clone(),
            round: run.round,
            candidate: ran.candidate,
            options: ran.options,
            adjusted: ran.adjusted,
            budget: run.budget,
            measurement: ran.measurement,
            worker: self.heartbeat.name.clone(),
            host: self.host.clone(),
            side_by_side: 1,    // counted when it is recorded
            overhead_secs: 0.0, // measured when it is recorded
        })
    }

    /// Whether every run of `claim` is recorded.
    fn done(&self, claim: &Claim) -> bool {
        claim.runs.iter().all(|r| self.recorded.contains(&r.number))
    }

    /// PRUNE_FACTOR times the defaults' wall time, once they have run.
    fn prune_limit(&self) -> Option<Duration> {
        self.trials
            .iter()
            .find(|t| t.is_default && t.measurement.status == Status::Ok)
            .map(|t| Duration::from_secs_f64(t.measurement.wall_secs * PRUNE_FACTOR))
    }

    /// Writes the study's outputs and closes its journal.
    fn finish(&mut self, locked: &mut Locked) -> anyhow::Result<StudyOutcome> {
        self.progress.finish_and_clear();
        let history = self.history();
        let outcome = history.outcome(history.judge(), Progress::Finished, &self.scratch)?;
        report::write_study(&self.out_dir, &outcome, self.space)?;
        // Finished goes last: a crash before it leaves a study that resumes.
        let recommended = outcome.verdict.as_ref().map(|v| v.recommended().label.clone());
        let beats_defaults = outcome.verdict.as_ref().is_some_and(|v| v.beats_defaults);
        self.append(locked, Entry::Finished { recommended, beats_defaults })?;
        Ok(outcome)
    }

    /// Rewrites `report.html` of a study that has not finished: while it
    /// runs at most every `LIVE_REPORT_EVERY` (the report fits a model and
    /// draws every trial, which at hundreds of short trials would cost more
    /// than a page reloaded every 30 s needs), and at once when it stops.
    fn write_live_report(&mut self, progress: Progress) -> anyhow::Result<()> {
        let running = progress == Progress::Running;
        if running && self.live_report_at.is_some_and(|at| at.elapsed() < LIVE_REPORT_EVERY) {
            return Ok(());
        }
        self.live_report_at = Some(Instant::now());
        // No verdict before the study ends, so the engine writes no options
        // file and needs no scratch space.
        let live = self.history().outcome((None, None), progress, &self.out_dir)?;
        report::write_live(&self.out_dir, &live, self.space)
    }

    /// Moves the bar: under a time limit it counts the seconds spent of the
    /// limit, otherwise the trials run.
    fn advance(&self, record: &TrialRecord) {
        if self.header.time_budget_secs.is_some() {
            self.show_time_spent();
        } else if record.measurement.ran() {
            self.progress.inc(1);
        }
    }

    /// Under a time limit: the seconds the trials took so far, of the limit.
    fn show_time_spent(&self) {
        if let Some(limit) = self.header.time_budget_secs {
            self.progress.set_length(limit.max(self.history().spent()) as u64);
            self.progress.set_position(self.history().spent() as u64);
        }
    }

    fn best_message(&self) -> String {
        let objective = self.objective();
        racing::leader(&self.trials, objective)
            .map(|(label, score, runs)| {
                let value = objective.from_score(score);
                let unit = objective.unit();
                format!(
                    "; best so far {label} ({value:.0} {unit}, mean of {runs} run{})",
                    if runs == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_default()
    }

    fn log(&self, t: &TrialRecord) {
        let m = &t.measurement;
        let line = match m.status {
            Status::Ok => format!(
                "{:7} trial {:>3} {:13} {:>10.0} ops/s  {:5.1} s  memory {}  {}",
                t.stage.to_string(),
                t.number,
                t.label,
                m.ops_per_sec,
                m.wall_secs,
                ByteSize(if m.peak_anon > 0 { m.peak_anon } else { m.peak_memory }),
                t.origin
            ),
            _ => format!(
                "{:7} trial {:>3} {:13} {}: {}",
                t.stage.to_string(),
                t.number,
                t.label,
                m.status,
                m.reason.as_deref().unwrap_or("")
            ),
        };
        // Another worker's trial says whose it was.
        match t.worker != self.heartbeat.name && !t.worker.is_empty() {
            true => self.say(format!("{line}  [{}]", t.worker)),
            false => self.say(line),
        }
    }

    /// A line above the progress bar (or on stderr without one).
    fn say(&self, line: String) {
        match (self.show_progress, self.progress.is_hidden()) {
            (true, true) => eprintln!("{line}"),
            (true, false) => self.progress.println(line),
            (false, _) => {}
        }
    }
}

#[cfg(test)]
mod tests;
