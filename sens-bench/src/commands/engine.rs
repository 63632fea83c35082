//! `sens-bench engine ...`: Sens's own commands (`sens::cli`, the same as the `sens`
//! binary's, the hooks `install` writes calling `sens-bench engine`), and beside them
//! the harness's evaluations of the engine, which need the bench's corpora and
//! stay here: `suggest-eval`, `semble-eval`, `reuse-eval` and `scale`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use sens::invocation::Invocation;
use sens_engine::suggest::Steps;

#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    #[command(flatten)]
    Sens(sens::cli::Command),
    /// Suggestions against a file of labelled prompts: hit@8, MRR, wrong-list and
    /// empty-list rates (format: `sens_bench::evals::suggest`).
    SuggestEval {
        cases: PathBuf,
        #[arg(long)]
        json: bool,
        /// Without the on-disk index and vector cache: every project parsed and
        /// every symbol embedded (their cold time).
        #[arg(long)]
        cold: bool,
        /// Rank with these parts of the ranking step (fusion, definition,
        /// file-name, coherence, or none) instead of the shipped ones.
        #[arg(long, value_delimiter = ',')]
        steps: Option<Vec<String>>,
    },
    /// The ranking on MinishLab/semble's code-search benchmark: NDCG@10 overall, by
    /// category and by language, beside semble's published figures (format:
    /// `sens_bench::evals::semble`).
    SembleEval(crate::evals::semble::Options),
    /// The re-implementation finder against a file of re-implementations and new
    /// code: hit@1, hit@3, MRR, false notes (format: `sens_bench::evals::reuse`).
    ReuseEval {
        cases: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// How the engine's cost grows: a corpus of projects (scripts/vendor-corpus.sh)
    /// indexed at parts of it, each beside jscpd: files, units, time per phase,
    /// peak memory, the cache's cost and gain.
    Scale {
        corpus: PathBuf,
        /// The parts measured, as divisors of the corpus (8 = every 8th project).
        #[arg(long, value_delimiter = ',', default_value = "8,4,2,1")]
        parts: Vec<u32>,
        /// Leave jscpd out (it takes about 8x the engine's memory).
        #[arg(long)]
        no_jscpd: bool,
    },
}

/// `sens-bench engine [--rules FILE] COMMAND`: the rules file
/// (docs/rules.md, "Rules files") applies to every engine command; without it the
/// defaults.
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    /// A rules file (TOML with RuleConfig's fields; absent ones take the defaults).
    #[arg(long, global = true, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    #[command(subcommand)]
    pub command: EngineCommand,
}

pub fn run(args: EngineArgs) -> Result<ExitCode> {
    match args.command {
        EngineCommand::Sens(command) => {
            let args = sens::cli::Args {
                rules: args.rules,
                command,
            };
            sens::cli::run(args, &Invocation::current(&["engine"])?)
        }
        EngineCommand::SuggestEval {
            cases,
            json,
            cold,
            steps,
        } => {
            let steps = Steps::named_or_shipped(steps.as_deref())?;
            crate::evals::suggest::run(&cases, json, cold, steps)
        }
        EngineCommand::SembleEval(options) => crate::evals::semble::run(&options),
        EngineCommand::ReuseEval { cases, json } => crate::evals::reuse::run(&cases, json),
        EngineCommand::Scale {
            corpus,
            parts,
            no_jscpd,
        } => crate::evals::scale::scale(&corpus, &parts, !no_jscpd),
    }
}
