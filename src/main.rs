use std::process::ExitCode;

use kvtune::cli::{Cli, Command};
use kvtune::commands;

fn main() -> ExitCode {
    let cli = Cli::from_env();
    let result = match cli.command {
        Some(Command::Tune(args)) => commands::tune(args),
        Some(Command::Bench(args)) => commands::bench(args),
        Some(Command::Compare(args)) => commands::compare(args),
        Some(Command::Ablate(args)) => commands::ablate(args),
        Some(Command::Datasets(args)) => commands::datasets(args),
        Some(Command::Table(args)) => commands::table(args),
        Some(Command::Dataset(args)) => commands::dataset(args),
        Some(Command::Report(args)) => commands::report(args),
        Some(Command::Explain(args)) => commands::explain(args),
        Some(Command::Worker(args)) => commands::worker(args),
        Some(Command::Launch(args)) => commands::launch(args),
        Some(Command::TrialWorker(args)) => commands::trial_worker(args),
        None => commands::tune(cli.tune),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            // 130, as a shell reports a command ended by Ctrl-C, tells
            // scripts an interrupted study (resumable) from a failed one.
            match err.downcast_ref::<kvtune::trial::Interrupted>() {
                Some(_) => ExitCode::from(130),
                None => ExitCode::FAILURE,
            }
        }
    }
}
