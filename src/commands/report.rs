//! `kvtune report DIR`: a study's reports written again from its journal,
//! with this kvtune's report; a study that stopped midway gets a report of
//! how far it got (no preset: nothing was confirmed).

use anyhow::Context;

use crate::cli::ReportArgs;
use crate::engine;
use crate::outcome::Progress;
use crate::report;
use crate::space::Space;
use crate::study::history::History;
use crate::study::journal;

pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    let recorded = journal::read_study(&args.dir)?;
    let header = &recorded.header;
    let engine = engine::find(&header.engine)?;
    let space = Space::parse(&header.space_name, &header.space_text, &engine.param_names())?;
    let history = History { header, trials: &recorded.trials, space: &space, engine };
    let progress = if recorded.finished { Progress::Finished } else { Progress::Stopped };
    // The engine writes its options file through a scratch database.
    let scratch = tempfile::tempdir_in(&args.dir)
        .with_context(|| format!("making a scratch folder in {}", args.dir.display()))?;
    let outcome = history.outcome(history.judge(), progress, scratch.path())?;
    match progress {
        Progress::Finished => report::write_study(&args.dir, &outcome, &space)?,
        _ => report::write_reports(&args.dir, &outcome, &space)?,
    }
    if args.json {
        let json = serde_json::json!({
            "out_dir": args.dir,
            "finished": recorded.finished,
            "trials": recorded.trials.len(),
            "verdict": outcome.verdict,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        let state = if recorded.finished { "finished" } else { "stopped before it finished" };
        println!(
            "kvtune: the study in {} ({state}, {} trials): {}/report.md and {}/report.html rewritten",
            args.dir.display(),
            recorded.trials.len(),
            args.dir.display(),
            args.dir.display()
        );
    }
    Ok(())
}
