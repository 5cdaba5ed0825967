//! `kvtune report DIR`: a study's report.md and report.html written again
//! from its journal, with this kvtune's report (its preset and OPTIONS stay
//! as the study wrote them); a study that stopped midway gets a report of how
//! far it got, with no verdict. With `--compare`, other studies beside it.

use std::path::Path;

use anyhow::{bail, Context};

use crate::cli::ReportArgs;
use crate::engine;
use crate::outcome::{Progress, StudyOutcome};
use crate::report;
use crate::space::Space;
use crate::study::history::History;
use crate::study::{journal, workers};

pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    if args.json && !args.compare.is_empty() {
        bail!("--json prints one study's verdict; with --compare the side-by-side table is text (and versus.html)");
    }
    let (outcome, space) = read(&args.dir)?;
    if let Some(beat) = workers::live(&args.dir, workers::STALE_AFTER).first() {
        bail!(
            "the study in {} is running (kvtune pid {} on {}), which rewrites its report.html as it goes: open that",
            args.dir.display(),
            beat.pid,
            beat.host
        );
    }
    report::write_reports(&args.dir, &outcome, &space)?;
    let finished = outcome.progress == Progress::Finished;
    if !args.compare.is_empty() {
        return versus(&args, outcome);
    }
    if args.json {
        let json = serde_json::json!({
            "out_dir": args.dir,
            "finished": finished,
            "trials": outcome.trials.len(),
            "verdict": outcome.verdict,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        let state = if finished { "finished" } else { "stopped before it finished" };
        let dir = args.dir.display();
        println!(
            "kvtune: the study in {dir} ({state}, {} trials): {dir}/report.md and {dir}/report.html rewritten",
            outcome.trials.len()
        );
    }
    Ok(())
}

/// The study in `dir` as its journal says it now, with its search space.
fn read(dir: &Path) -> anyhow::Result<(StudyOutcome, Space)> {
    let recorded = journal::read_study(dir)?;
    let header = &recorded.header;
    let engine = engine::find(&header.engine)?;
    let space = Space::parse(&header.space_name, &header.space_text, &engine.param_names())?;
    let history = History { header, trials: &recorded.trials, space: &space, engine };
    let progress = if recorded.finished { Progress::Finished } else { Progress::Stopped };
    // The engine writes its options file through a scratch database.
    let scratch = tempfile::tempdir().context("making a scratch folder")?;
    // A study that stopped has no verdict yet, whatever runs it confirmed:
    // the rounds and the larger-scale check judge together.
    let judged = if recorded.finished { history.judge() } else { (None, None) };
    let outcome = history.outcome(judged, progress, scratch.path())?;
    Ok((outcome, space))
}

/// This study and the `--compare` ones side by side: the table printed,
/// `versus.html` written beside this study's reports.
fn versus(args: &ReportArgs, first: StudyOutcome) -> anyhow::Result<()> {
    let mut studies = vec![(args.dir.display().to_string(), first)];
    for dir in &args.compare {
        studies.push((dir.display().to_string(), read(dir)?.0));
    }
    let sides: Vec<(&str, &StudyOutcome)> = studies.iter().map(|(l, o)| (l.as_str(), o)).collect();
    report::write_versus(&args.dir, &sides)?;
    print!("{}", report::markdown::versus(&sides));
    println!("\n(written as {}/versus.html, with the searches on one chart)", args.dir.display());
    Ok(())
}
