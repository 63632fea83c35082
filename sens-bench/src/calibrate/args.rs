//! The arguments of `sens-bench calibrate`.

use std::path::PathBuf;

use super::formatter::{Formatter, parse_formatter};

#[derive(clap::Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// Folders of real code to draw functions from (one or more).
    #[arg(long, num_args = 1.., required_unless_present = "labels")]
    pub corpus: Vec<PathBuf>,
    /// Labelled duplicate groups of real projects (JSON lines, see
    /// docs/precision.md): their precision is reported beside the recall.
    #[arg(long, requires = "projects")]
    pub labels: Option<PathBuf>,
    /// The folder holding each labelled project under its name
    /// (scripts/precision-corpus.sh fetches them).
    #[arg(long)]
    pub projects: Option<PathBuf>,
    /// Where the tables and plots go.
    #[arg(long)]
    pub out: PathBuf,
    /// Functions drawn per language.
    #[arg(long, default_value_t = 40)]
    pub per_language: usize,
    /// Normalized tokens a drawn function has at least and at most.
    #[arg(long, default_value_t = 80)]
    pub min_tokens: usize,
    #[arg(long, default_value_t = 600)]
    pub max_tokens: usize,
    /// Unrelated pairs per drawn function.
    #[arg(long, default_value_t = 10)]
    pub unrelated: usize,
    #[arg(long, default_value_t = 20260530)]
    pub seed: u64,
    /// A formatter setting `LANG=COMMAND` (repeatable; the command reads
    /// standard input): the settings given for a language replace its
    /// built-in list.
    #[arg(long = "formatter", value_parser = parse_formatter)]
    pub formatters: Vec<(String, Formatter)>,
    /// Where to write the pairs the defaults get wrong (a missed copy, a denied
    /// unrelated function) and the reformatted copies whose fingerprint
    /// changed, each as its two texts, to see what breaks.
    #[arg(long)]
    pub misses: Option<PathBuf>,
}
