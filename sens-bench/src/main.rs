//! The command line. Each command is parsed here and calls one function of the
//! library; errors print once, with their causes, and exit with code 2.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sens_bench::engine_cli;

#[derive(Parser)]
#[command(
    name = "sens-bench",
    version,
    about = "Measure whether the Sens engine makes coding agents reuse code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The engine on the command line: index, dupes.
    Engine {
        #[command(subcommand)]
        command: engine_cli::EngineCommand,
    },
    /// Report on a batch: Markdown, CSV and plots, or the comparisons as JSON.
    Report(sens_bench::report::ReportOptions),
    /// Horizonte sequences.
    #[command(subcommand)]
    Sequence(Sequence),
    /// Time the statistics (10,000 resamples) on a synthetic 12-task batch.
    StatsBench,
}

#[derive(Subcommand)]
enum Sequence {
    /// Final sizes, growth curves and the decision of a sequence batch.
    Report(sens_bench::report::sequence::SequenceOptions),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome: anyhow::Result<ExitCode> = match cli.command {
        Command::Engine { command } => engine_cli::run(command),
        Command::Report(options) => sens_bench::report::report(&options),
        Command::Sequence(Sequence::Report(options)) => {
            sens_bench::report::sequence::sequence_report(&options)
        }
        Command::StatsBench => sens_bench::stats_bench::run(),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
