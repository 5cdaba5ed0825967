use std::process::ExitCode;

use clap::Parser;
use kvtune::cli::{Cli, Command};
use kvtune::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Tune(args)) => commands::tune(args),
        Some(Command::Bench(args)) => commands::bench(args),
        Some(Command::TrialWorker(args)) => commands::worker(args),
        None => commands::tune(cli.tune),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
