//! A study: the defaults, then the sampler's candidates, each run as a trial
//! and recorded in the journal; then confirmation rounds of the best few and
//! the defaults, interleaved, and the verdict. Outputs are rewritten as the
//! study goes, so a crash leaves them current.

pub mod compare;
pub mod history;
pub mod journal;
pub mod racing;
mod transfer;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::budget::ByteSize;
use crate::engine::Engine;
use crate::outcome::{Progress, StudyHeader, StudyOutcome, BASELINE_ORIGIN};
use crate::record::{Objective, Stage, Status, TrialRecord};
use crate::report;
use crate::scale::Scale;
use crate::search::Sampler;
use crate::space::{Candidate, Space};
use crate::trial::{self, Request, TrialRunner};
use history::History;
use journal::{Entry, Journal};

/// Everything a study needs besides its header.
pub struct StudySettings<'a> {
    pub header: StudyHeader,
    /// Trials a resumed study already recorded; `None` for a new study.
    pub prior: Option<Vec<TrialRecord>>,
    pub space: Space,
    /// The search strategy's sampler, fresh: a resumed study replays the
    /// journal's asks and tells into it.
    pub sampler: Box<dyn Sampler>,
    pub out_dir: PathBuf,
    pub engine: &'a dyn Engine,
    pub runner: &'a dyn TrialRunner,
    /// Where the engine may make scratch files (for its options file).
    pub scratch: PathBuf,
    pub show_progress: bool,
}

/// Trials whose candidate the memory model rejects are recorded but do not
/// use up `--trials`; past this many in a row the sampler is given up on.
const MAX_REJECTIONS_IN_A_ROW: usize = 200;

/// Fewer search trials than this beyond the defaults, stopped by `--time`,
/// and the study says the limit was too short.
const STARVED_SEARCH_TRIALS: usize = 5;

/// Shortest time between rewrites of the running study's `report.html`.
const LIVE_REPORT_EVERY: Duration = Duration::from_secs(10);

/// A search trial still running after this many times the defaults' wall
/// time is stopped and recorded as pruned: it cannot be among the best.
pub const PRUNE_FACTOR: f64 = 3.0;

pub fn run(settings: StudySettings) -> anyhow::Result<StudyOutcome> {
    let StudySettings { header, prior, space, sampler, out_dir, engine, runner, scratch, show_progress } =
        settings;
    let resuming = prior.is_some();
    if !resuming {
        create_out_dir(&out_dir)?;
    }
    let mut journal = Journal::create(&out_dir.join("journal.jsonl"))?;
    if !resuming {
        journal.append(&Entry::Started(Box::new(header.clone())))?;
    }
    let phase_names = header.dataset.workload(header.scaled_budget()).phase_names();
    // With a time limit the number of search trials is not known up front,
    // so the bar counts seconds of the limit instead of trials.
    let planned = header.trials + header.confirm_runs() + header.verify_runs();
    let (length, unit) = match header.time_budget_secs {
        Some(limit) => (limit as usize, "s of the time limit"),
        None => (planned, "trials"),
    };
    let mut study = Running {
        header: &header,
        space: &space,
        engine,
        runner,
        journal,
        out_dir: out_dir.clone(),
        phase_names,
        defaults: engine.defaults(header.full_budget),
        trials: prior.unwrap_or_default(),
        progress: progress_bar(show_progress, length, unit),
        show_progress,
        live_report_at: None,
        trials_csv: report::TrialsCsv::default(),
    };
    let done = study.trials.iter().filter(|t| t.measurement.ran()).count();
    study.progress.set_position(done as u64);
    study.show_time_spent();
    if let Err(stopped) = study.stages(sampler) {
        // The report shows every trial the stopped study recorded; the
        // error that stopped it is what the user must see, so a report that
        // cannot be written (a full disk, say) is only a warning.
        if let Err(why) = study.write_live_report(Progress::Stopped) {
            eprintln!("warning: report.html was not rewritten: {why:#}");
        }
        return Err(stopped);
    }
    study.progress.finish_and_clear();
    let history = study.history();
    let outcome = history.outcome(history.judge(), Progress::Finished, &scratch)?;
    report::write_study(&out_dir, &outcome, &space)?;
    // Finished goes last: a crash before it leaves a study that resumes.
    let recommended = outcome.verdict.as_ref().map(|v| v.recommended().label.clone());
    let beats_defaults = outcome.verdict.as_ref().is_some_and(|v| v.beats_defaults);
    study.journal.append(&Entry::Finished { recommended, beats_defaults })?;
    Ok(outcome)
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

/// A candidate entered in the study under a label.
#[derive(Debug, Clone)]
struct Entrant {
    label: String,
    candidate: Candidate,
    is_default: bool,
    /// Where it came from (a seed, the design, the model; a race).
    origin: String,
}

struct Running<'a> {
    header: &'a StudyHeader,
    space: &'a Space,
    engine: &'a dyn Engine,
    runner: &'a dyn TrialRunner,
    journal: Journal,
    out_dir: PathBuf,
    phase_names: Vec<String>,
    defaults: Candidate,
    trials: Vec<TrialRecord>,
    progress: ProgressBar,
    show_progress: bool,
    /// When `report.html` was last rewritten.
    live_report_at: Option<Instant>,
    trials_csv: report::TrialsCsv,
}

impl Running<'_> {
    /// What the study recorded so far.
    fn history(&self) -> History<'_> {
        History { header: self.header, trials: &self.trials, space: self.space, engine: self.engine }
    }

    /// The objective the search and the verdict rank by (the first one asked).
    fn objective(&self) -> &Objective {
        &self.header.objectives[0]
    }

    /// The search: proposals run one by one, each raced against the
    /// incumbent if it comes within reach, until the trials, the time or the
    /// sampler run out. A resumed study picks up where the journal ends.
    fn search(&mut self, mut sampler: Box<dyn Sampler>) -> anyhow::Result<()> {
        if self.trials.iter().any(|t| t.stage == Stage::Confirm) {
            return Ok(()); // the search had ended before the interruption
        }
        self.replay_sampler(sampler.as_mut());
        if let Some(last) = self.trials.iter().rev().find(|t| t.stage == Stage::Search).cloned() {
            self.race(&last)?; // a race an interruption cut short
        }
        self.search_loop(sampler)?;
        if let Some(note) = self.history().time_starved() {
            self.say(format!("kvtune: {note}"));
        }
        Ok(())
    }

    /// A resumed study replays its sampler over the recorded trials with the
    /// asks and tells a live run made (the defaults run without an ask;
    /// racing runs are seen in the history, not told), so it goes on
    /// exactly as an uninterrupted one would.
    fn replay_sampler(&self, sampler: &mut dyn Sampler) {
        for (i, t) in self.trials.iter().enumerate().filter(|(_, t)| t.stage == Stage::Search) {
            if !t.is_default {
                let _ = sampler.ask(self.space, &self.trials[..i]);
            }
            sampler.tell(t);
        }
    }

    fn search_loop(&mut self, mut sampler: Box<dyn Sampler>) -> anyhow::Result<()> {
        let header = self.header;
        let search: Vec<&TrialRecord> = self.trials.iter().filter(|t| t.stage == Stage::Search).collect();
        let mut ran = search.iter().filter(|t| t.measurement.ran()).count();
        let mut rejected_in_a_row = search.iter().rev().take_while(|t| !t.measurement.ran()).count();
        while ran < header.trials
            && rejected_in_a_row < MAX_REJECTIONS_IN_A_ROW
            && !self.history().out_of_time()
        {
            let defaults_tried = self.trials.iter().any(|t| t.is_default);
            let (candidate, is_default, origin) = if !defaults_tried {
                (self.defaults.clone(), true, "defaults".to_string())
            } else {
                match sampler.ask(self.space, &self.trials) {
                    Some(p) => (self.engine.complete(&p.candidate, header.full_budget), false, p.origin),
                    None => break,
                }
            };
            let label = if is_default { "defaults".to_string() } else { format!("#{}", self.trials.len()) };
            let limit = self.prune_limit();
            let entrant = Entrant { label, candidate, is_default, origin };
            let record = self.trial(Stage::Search, &entrant, None, limit)?;
            if !record.measurement.ran() {
                rejected_in_a_row += 1;
            } else {
                rejected_in_a_row = 0;
                ran += 1;
            }
            sampler.tell(&record);
            self.race(&record)?;
        }
        Ok(())
    }

    /// Races `challenger` against the incumbent if its single run came
    /// within reach: pairs of runs, each pair in a random order, until the
    /// race is decided (see [`racing`]).
    fn race(&mut self, challenger: &TrialRecord) -> anyhow::Result<()> {
        let objective = self.objective().clone();
        if !self.header.racing || challenger.is_default || !challenger.measurement.ok() {
            return Ok(());
        }
        let before: Vec<TrialRecord> = self
            .trials
            .iter()
            .filter(|t| t.number < challenger.number || t.stage == Stage::Search)
            .cloned()
            .collect();
        let Some(incumbent) = racing::incumbent(&before, &objective).filter(|i| *i != challenger.label)
        else {
            return Ok(());
        };
        let (Some(mine), Some(theirs)) = (
            objective.score(&challenger.measurement),
            racing::mean_score(&self.trials, &incumbent, &objective),
        ) else {
            return Ok(());
        };
        if mine < theirs - racing::WITHIN_REACH {
            return Ok(());
        }
        let entrants = [self.entrant(&challenger.label), self.entrant(&incumbent)];
        let origin = racing::origin(&challenger.label);
        while racing::decide(&racing::pairs(&self.trials, &challenger.label, &objective))
            == racing::Outcome::Running
        {
            if self.history().out_of_time() {
                break;
            }
            let round = racing::pairs(&self.trials, &challenger.label, &objective).len();
            let seed = self.header.seed ^ (challenger.number as u64).wrapping_mul(0x9E37);
            for (_, index) in trial::rounds(2, 1, seed ^ round as u64) {
                let entrant = Entrant { origin: origin.clone(), ..entrants[index].clone() };
                // A pair already half run before an interruption keeps its half.
                let done = self.trials.iter().any(|t| {
                    t.stage == Stage::Race
                        && t.origin == origin
                        && t.round == Some(round)
                        && t.label == entrant.label
                });
                if !done {
                    self.trial(Stage::Race, &entrant, Some(round), None)?;
                }
            }
            if racing::pairs(&self.trials, &challenger.label, &objective).len() <= round {
                break; // a run of the pair failed: the race cannot go on
            }
        }
        Ok(())
    }

    /// The entrant a search trial's label stands for.
    fn entrant(&self, label: &str) -> Entrant {
        let t = self
            .trials
            .iter()
            .find(|t| t.stage == Stage::Search && t.label == label)
            .expect("a search trial");
        Entrant {
            label: t.label.clone(),
            candidate: t.candidate.clone(),
            is_default: t.is_default,
            origin: t.origin.clone(),
        }
    }

    /// PRUNE_FACTOR times the defaults' wall time, once they have run.
    fn prune_limit(&self) -> Option<Duration> {
        self.trials
            .iter()
            .find(|t| t.is_default && t.measurement.status == Status::Ok)
            .map(|t| Duration::from_secs_f64(t.measurement.wall_secs * PRUNE_FACTOR))
    }

    /// The best few search candidates, then the defaults: the incumbent
    /// racing crowned first, then the others by their mean over every search
    /// and racing run, leaving out those that lost a race.
    fn pick_contenders(&self) -> Vec<Entrant> {
        let objective = self.objective();
        let incumbent = racing::incumbent(&self.trials, objective);
        let lost = |label: &str| {
            racing::decide(&racing::pairs(&self.trials, label, objective)) == racing::Outcome::Worse
        };
        let mut ranked: Vec<(f64, &TrialRecord)> = self
            .trials
            .iter()
            .filter(|t| t.stage == Stage::Search && t.measurement.ok() && !t.is_default && !lost(&t.label))
            .filter_map(|t| {
                let crowned = incumbent.as_deref() == Some(t.label.as_str());
                let mean = racing::mean_score(&self.trials, &t.label, objective)?;
                Some((if crowned { f64::INFINITY } else { mean }, t))
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut picked: Vec<Entrant> =
            ranked.into_iter().take(self.header.confirm_top).map(|(_, t)| self.entrant(&t.label)).collect();
        picked.push(Entrant {
            label: "defaults".into(),
            candidate: self.defaults.clone(),
            is_default: true,
            origin: "defaults".into(),
        });
        picked
    }

    /// Rounds in which every contender and the defaults run once, in an
    /// order drawn afresh each round (seeded), so drift and order effects hit
    /// all alike and each contender pairs with the defaults of its round.
    fn confirm(&mut self, contenders: &[Entrant]) -> anyhow::Result<()> {
        let schedule = trial::rounds(contenders.len(), self.header.confirm_repeats, self.header.seed);
        // A resumed study skips the runs it already has.
        let done = self.trials.iter().filter(|t| t.stage == Stage::Confirm).count();
        self.progress.set_length(self.progress.position() + schedule.len().saturating_sub(done) as u64);
        for &(round, index) in schedule.iter().skip(done) {
            self.trial(Stage::Confirm, &contenders[index], Some(round), None)?;
        }
        Ok(())
    }

    /// Each contender once more at the larger `scale`, in a seeded random
    /// order: does the ranking found at the study's scale hold?
    fn verify(&mut self, contenders: &[Entrant], scale: Scale) -> anyhow::Result<()> {
        let done = self.trials.iter().filter(|t| t.stage == Stage::Verify).count();
        let schedule = trial::rounds(contenders.len(), 1, self.header.seed ^ 0x5CA1E);
        let budget = scale.apply(self.header.full_budget);
        for &(_, index) in schedule.iter().skip(done) {
            self.run(Stage::Verify, &contenders[index], None, budget, None)?;
        }
        Ok(())
    }

    /// Runs (or rejects) one candidate at the study's scale and records it everywhere.
    fn trial(
        &mut self,
        stage: Stage,
        entrant: &Entrant,
        round: Option<usize>,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<TrialRecord> {
        self.run(stage, entrant, round, self.header.scaled_budget(), prune_after)
    }

    /// Runs (or rejects) one candidate at `budget` and records it everywhere.
    fn run(
        &mut self,
        stage: Stage,
        entrant: &Entrant,
        round: Option<usize>,
        budget: u64,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<TrialRecord> {
        self.progress.set_message(format!("running {}{}", entrant.label, self.best_message()));
        let number = self.trials.len();
        let request = Request {
            engine: self.engine,
            candidate: &entrant.candidate,
            dataset: &self.header.dataset,
            budget,
            seed: self.header.seed,
        };
        // The engine as shipped is the reference users quote: measured even
        // where the memory model predicts it will not fit (the cgroup says).
        let ran = match entrant.origin == BASELINE_ORIGIN {
            true => trial::attempt_ungated(self.runner, &request, &number.to_string())?,
            false => trial::attempt(self.runner, &request, &number.to_string(), prune_after)?,
        };
        let record = TrialRecord {
            number,
            stage,
            label: entrant.label.clone(),
            is_default: entrant.is_default,
            origin: entrant.origin.clone(),
            round,
            candidate: ran.candidate,
            options: ran.options,
            adjusted: ran.adjusted,
            budget,
            measurement: ran.measurement,
        };
        if record.measurement.reason.as_deref().is_some_and(|r| r.starts_with(trial::DISK_FULL)) {
            // Not the candidate's failure but the machine's: the journal
            // keeps it as the study's stop, and a resume runs the trial again.
            self.log(&record);
            self.journal.append(&Entry::Stopped(Box::new(record.clone())))?;
            let data = self.header.dataset.workload(budget).shape().user_bytes;
            anyhow::bail!(
                "the work directory ran out of space, so the study stopped at trial {} ({}): a trial at this scale \
                 needs about {} free (twice its {} of data); free space there or give --workdir on a larger disk, then \
                 continue with `kvtune --resume {}`, which runs that trial again",
                record.number,
                record.label,
                ByteSize(trial::disk_needed(data)),
                ByteSize(data),
                self.out_dir.display()
            );
        }
        self.record(&record)?;
        Ok(record)
    }

    /// The search, the confirmation of its best and the larger-scale check.
    fn stages(&mut self, sampler: Box<dyn Sampler>) -> anyhow::Result<()> {
        self.search(sampler)?;
        let contenders = self.pick_contenders();
        let baseline = self.header.baseline.iter().map(|b| Entrant {
            label: b.label.clone(),
            candidate: b.candidate.clone(),
            is_default: false,
            origin: BASELINE_ORIGIN.into(),
        });
        self.confirm(&contenders.iter().cloned().chain(baseline).collect::<Vec<_>>())?;
        if let (Some(scale), (Some(_), _)) = (self.header.verify_scale, self.history().judge()) {
            self.verify(&contenders, scale)?;
        }
        Ok(())
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

    /// Logs a finished trial, appends it to the journal and rewrites the CSV.
    fn record(&mut self, record: &TrialRecord) -> anyhow::Result<()> {
        self.log(record);
        self.journal.append(&Entry::Trial(Box::new(record.clone())))?;
        self.trials.push(record.clone());
        self.advance(record);
        self.trials_csv.update(&self.out_dir, self.space, &self.phase_names, &self.trials)?;
        self.write_live_report(Progress::Running)
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
        self.trials
            .iter()
            .filter(|t| t.measurement.ok())
            .max_by(|a, b| a.measurement.ops_per_sec.total_cmp(&b.measurement.ops_per_sec))
            .map(|t| format!("; best so far {} ({:.0} ops/s)", t.label, t.measurement.ops_per_sec))
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
        self.say(line);
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
