//! `sens-bench calibrate`: measures the copy rules on a mutation corpus built
//! from real functions, labelled by construction. Each pair is an original
//! function and a text made from it (exact, renamed, reformatted by the
//! language's own formatter at other settings, renamed and reformatted, near
//! copies at several distances) or an unrelated function of similar size from
//! another corpus folder (another project). A pair is judged by indexing the original alone and asking the
//! engine's copy rules about a new file holding the other text: "denied" when a
//! blocking copy finding comes back. Recall and precision count those verdicts
//! against the labels, per mutation kind and language, for a sweep of
//! `threshold` with `floor`, with `min_shingles` and with `containment`; LSH candidate recall is set
//! against 1 - (1 - s^r)^b. Unrelated pairs are many per function (`--unrelated`:
//! the functions of other folders closest in size among all those found, not
//! only the drawn ones), so a false-positive rate under 1 % is measured on thousands.

//!
//! This root holds the command; each idea is a file of `calibrate/`: the
//! arguments (`args`), the corpus draw (`corpus`), the formatter catalogue
//! (`formatter`), the mutations (`mutation`), one pair judged by the engine
//! (`judge`), the sweep (`sweep`), LSH candidate recall (`lsh`), the pairs
//! written out (`misses`), the Markdown (`markdown`) and the plot (`plot`);
//! precision on labelled real projects is `precision`.

use std::process::ExitCode;

use anyhow::{Context, Result};

use sens_engine::lang::Lang;

mod args;
mod corpus;
mod formatter;
mod judge;
mod lsh;
mod markdown;
mod misses;
mod mutation;
mod plot;
pub mod precision;
mod sweep;

pub use args::CalibrateArgs;
pub use formatter::{Formatter, parse_formatter};
pub use lsh::LshBin;
pub use mutation::KINDS;
pub use sweep::{Calibration, Rate, SettingRate, SweepRow, calibrate};

use markdown::markdown;
use plot::plot;
use sweep::THRESHOLDS;

/// Measures recall on the mutation corpus (when `--corpus` is given) and
/// precision on the labelled groups (when `--labels` is), prints both and
/// writes them into `--out`.
pub fn run(args: &CalibrateArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    if !args.corpus.is_empty() {
        let calibration = calibrate(args)?;
        let markdown = markdown(&calibration);
        print!("{markdown}");
        write("calibration.md", &markdown)?;
        write(
            "calibration.json",
            &serde_json::to_string_pretty(&calibration)?,
        )?;
        plot(&calibration, &args.out)?;
    }
    if let (Some(labels), Some(projects)) = (&args.labels, &args.projects) {
        let measured = precision::measure(labels, projects, THRESHOLDS)?;
        let markdown = precision::markdown(&measured);
        print!("\n{markdown}");
        write("precision.md", &markdown)?;
        write("precision.json", &serde_json::to_string_pretty(&measured)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn extension(lang: &Lang) -> &'static str {
    lang.spec.extensions[0]
}
