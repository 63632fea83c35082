//! The corpus draw: real functions of a real size taken at random (seeded) from
//! the corpus folders, each as a text that parses on its own, and the unrelated
//! functions of other folders a sample is paired with.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use sens_engine::config::RuleConfig;
use sens_engine::lang::Lang;
use sens_engine::units::{self, UnitKind};
use sens_engine::walk::{self, WalkOptions};

use super::args::CalibrateArgs;

/// A real function drawn from a corpus, as a text that parses on its own.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    pub(super) lang: &'static Lang,
    /// `corpus-folder/relative/path:line`, for messages.
    pub(super) origin: String,
    /// Which `--corpus` folder it comes from: unrelated pairs join two folders
    /// (another file of one project may hold a real copy, as pflag's typed
    /// getters are of each other).
    pub(super) folder: usize,
    pub(super) tokens: usize,
    pub(super) text: String,
}

/// The drawn functions of a language, and every function found (the unrelated
/// draw).
type Drawn = (Vec<Sample>, Vec<Sample>);

/// Per language: up to `per_language` functions of a real size drawn at random
/// (seeded) from every corpus folder, and all of them. Methods that do not
/// parse alone are wrapped in a class (an `impl` in Rust).
pub(super) fn draw(
    args: &CalibrateArgs,
    rng: &mut ChaCha8Rng,
) -> Result<BTreeMap<&'static str, Drawn>> {
    let fp = units::Fingerprinter::new(&RuleConfig::default());
    let mut found: BTreeMap<&'static str, Vec<Sample>> = BTreeMap::new();
    for (folder, corpus) in args.corpus.iter().enumerate() {
        let walked = walk::walk(corpus, WalkOptions::default())
            .with_context(|| format!("corpus folder {}", corpus.display()))?;
        if walked.candidates.is_empty() {
            bail!(
                "corpus folder {} holds no file in a language of the engine",
                corpus.display()
            );
        }
        for candidate in &walked.candidates {
            let Ok(text) = walk::read(candidate)? else {
                continue;
            };
            let file = format!("{}/{}", corpus.display(), candidate.rel);
            let parsed = units::parse_file(candidate.lang, &text, &fp)
                .with_context(|| format!("cannot parse {file}"))?;
            let lines: Vec<&str> = text.lines().collect();
            for unit in parsed.units.iter().filter(|u| {
                u.kind == UnitKind::Function
                    && (args.min_tokens..=args.max_tokens).contains(&(u.tokens as usize))
            }) {
                let (from, to) = (unit.start_line as usize - 1, unit.end_line as usize);
                let Some(body) = lines.get(from..to) else {
                    continue;
                };
                let Some(text) = standalone(candidate.lang, &dedent(body), &fp)? else {
                    continue;
                };
                found
                    .entry(candidate.lang.name())
                    .or_default()
                    .push(Sample {
                        lang: candidate.lang,
                        origin: format!("{file}:{}", unit.start_line),
                        folder,
                        tokens: unit.tokens as usize,
                        text,
                    });
            }
        }
    }
    let mut drawn: BTreeMap<&'static str, Drawn> = BTreeMap::new();
    for (lang, all) in found {
        let mut samples = all.clone();
        samples.shuffle(rng);
        // Nested functions are drawn with their parents at most once each.
        samples.truncate(args.per_language);
        if samples.len() >= 2 {
            drawn.insert(lang, (samples, all));
        }
    }
    if drawn.is_empty() {
        bail!(
            "no function of {}..={} tokens found in {}",
            args.min_tokens,
            args.max_tokens,
            args.corpus
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(drawn)
}

/// The function's text as a file that parses without errors: alone, or inside
/// a wrapper; `None` when neither parses.
fn standalone(
    lang: &'static Lang,
    text: &str,
    fp: &units::Fingerprinter,
) -> Result<Option<String>> {
    let wrapper = if lang.name() == "rust" {
        "impl Calibration {"
    } else {
        "class Calibration {"
    };
    let candidates = [text.to_string(), format!("{wrapper}\n{text}\n}}\n")];
    for candidate in candidates {
        if !units::parse_file(lang, &candidate, fp)?.parse_errors {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in lines {
        out.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        out.push('\n');
    }
    out
}

/// The `n` functions of other corpus folders closest in size (ties: the first
/// found).
pub(super) fn unrelated_to<'a>(
    sample: &Sample,
    samples: &'a [Sample],
    n: usize,
) -> impl Iterator<Item = &'a Sample> {
    let mut others: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.folder != sample.folder)
        .collect();
    others.sort_by_key(|s| s.tokens.abs_diff(sample.tokens));
    others.into_iter().take(n)
}
