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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome: anyhow::Result<ExitCode> = match cli.command {
        Command::Engine { command } => engine_cli::run(command),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
