//! The command line. Each command is parsed here and calls one function of the
//! library; errors print once, with their causes, and exit with code 2.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use sens_bench::{commands, validate};

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
    /// Sens's own commands (those of the `sens` binary) and the engine's evaluations.
    Engine(commands::engine::EngineArgs),
    /// Check tasks: tests pass at the start, hidden tests fail there, and with the
    /// reference patch both pass (docs/validation.md). Exit 0 only if every task is
    /// valid.
    Validate {
        /// The folder of task folders (e.g. bench/tasks).
        #[arg(long)]
        tasks: PathBuf,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// Run the whole check N times and report a flake rate per command.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Tasks validated at once.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        #[command(flatten)]
        limits: CommandLimits,
    },
    /// Replay every engine decision of a batch with other rules and list what
    /// changed (exit 1 when a labelled decision gets worse, 2 on bad input or an
    /// unreplayable decision).
    Gate(sens_bench::gate::GateArgs),
    /// Review rules next to the code: list, run, test, dismiss (docs/review.md).
    Review(sens_bench::review::ReviewArgs),
    /// Label one engine decision of a batch just or unjust.
    Label(commands::label::LabelArgs),
    /// Report on a batch: Markdown, CSV and plots, or the comparisons as JSON.
    Report(sens_bench::report::ReportOptions),
    /// Run a batch: every task x condition x rep, resumable (docs/runs.md).
    Run(Box<commands::run::RunArgs>),
    /// Join the folders of a batch's shards (`--shard K/N`) into one batch folder.
    Merge(commands::merge::MergeArgs),
    /// Horizonte sequences.
    #[command(subcommand)]
    Sequence(Sequence),
    /// Time the statistics (10,000 resamples) on a synthetic 12-task batch.
    StatsBench,
    /// Measure the copy rules on mutated real functions; sweep threshold and floor.
    Calibrate(sens_bench::calibrate::CalibrateArgs),
}

#[derive(Subcommand)]
enum Sequence {
    /// Check a sequence: its start's tests pass, and each step's hidden tests fail
    /// before its reference patch and pass after it, with every earlier step's
    /// (docs/sequences.md). Prints each reference state's size and probe counts.
    Validate {
        /// The sequence folder (e.g. sequences/cuentas).
        dir: PathBuf,
        /// Stretches of the sequence walked at once, each on its own copy.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        #[command(flatten)]
        limits: CommandLimits,
    },
    /// Final sizes, growth curves and the decision of a sequence batch.
    Report(sens_bench::report::sequence::SequenceOptions),
    /// Run sequences step by step on the agent's own results (docs/sequences.md).
    Run(Box<commands::sequence::SequenceRunArgs>),
}

#[derive(Args)]
struct CommandLimits {
    /// Time limit in seconds for each set-up and test command.
    #[arg(long, default_value_t = 900)]
    timeout: u64,
    /// Where command logs go (default: a new folder under the cache).
    #[arg(long)]
    logs: Option<PathBuf>,
}

fn main() -> ExitCode {
    // A reader that stops early (`| head`) ends the process quietly, as for any
    // Unix tool, instead of a panic in the middle of `println!`.
    // SAFETY: resetting a signal's disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let outcome: anyhow::Result<ExitCode> = match cli.command {
        Command::Engine(args) => commands::engine::run(args),
        Command::Validate {
            tasks,
            task,
            repeat,
            jobs,
            limits,
        } => validate::task::validate_tasks(&validate::task::TaskOptions {
            tasks,
            task,
            repeat,
            jobs,
            timeout: Duration::from_secs(limits.timeout),
            logs: limits.logs,
        }),
        Command::Gate(args) => sens_bench::gate::gate(&args),
        Command::Review(args) => sens_bench::review::review(&args),
        Command::Label(args) => commands::label::label(&args),
        Command::Report(options) => sens_bench::report::report(&options),
        Command::Run(args) => commands::run::run(&args),
        Command::Merge(args) => commands::merge::merge(&args),
        Command::Sequence(Sequence::Run(args)) => commands::sequence::run(&args),
        Command::Sequence(Sequence::Validate { dir, jobs, limits }) => {
            validate::sequence::validate_sequence(&validate::sequence::SequenceOptions {
                sequence: dir,
                timeout: Duration::from_secs(limits.timeout),
                logs: limits.logs,
                jobs,
            })
        }
        Command::Sequence(Sequence::Report(options)) => {
            sens_bench::report::sequence::sequence_report(&options)
        }
        Command::StatsBench => commands::stats_bench::run(),
        Command::Calibrate(args) => sens_bench::calibrate::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
