//! The `sens` command line: parses it and runs one command of `sens::cli`; errors
//! print once, with their causes, and exit with code 2.

use std::process::ExitCode;

use clap::Parser;
use sens::cli;
use sens::invocation::Invocation;

#[derive(Parser)]
#[command(
    name = "sens",
    version,
    about = "Sens in your Claude Code: what the project already has, at every prompt and write"
)]
struct Cli {
    #[command(flatten)]
    args: cli::Args,
}

fn main() -> ExitCode {
    // A reader that stops early (`| head`) ends the process quietly, as for any
    // Unix tool, instead of a panic in the middle of `println!`.
    // SAFETY: resetting a signal's disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let outcome = Invocation::current(&[]).and_then(|invocation| cli::run(cli.args, &invocation));
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
