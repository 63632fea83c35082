//! The sweep: the mutation corpus built and every pair judged at every swept
//! configuration of the copy rules, with the rates per kind, language and
//! formatter setting.

use std::collections::BTreeMap;

use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use sens_engine::config::RuleConfig;

use super::args::CalibrateArgs;
use super::corpus::{draw, unrelated_to};
use super::formatter::{Formatted, settings_of};
use super::judge::ParsedPair;
use super::lsh::{LshBin, lsh_recall};
use super::misses::write_misses;
use super::mutation::{KINDS, Pair, mutations, statement_pool};

pub(super) const THRESHOLDS: &[f64] = &[0.65, 0.70, 0.75, 0.80, 0.85, 0.90];
pub(super) const FLOORS: &[usize] = &[50, 65, 80, 100];
const MIN_SHINGLES: &[usize] = &[16, 24, 32, 40];
const CONTAINMENTS: &[f64] = &[0.80, 0.85, 0.90, 0.95, 1.0];

#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    pub language: String,
    pub kind: String,
    pub pairs: usize,
    /// Denied pairs (for `unrelated`: wrongly denied).
    pub denied: usize,
    /// Denied share for copies; allowed share for `unrelated`.
    pub rate: f64,
}

/// The reformatted kinds of one formatter setting at the defaults.
#[derive(Debug, Clone, Serialize)]
pub struct SettingRate {
    pub language: String,
    pub setting: String,
    /// `reformatted` and `renamed+reformatted`, in that order.
    pub kinds: Vec<Rate>,
    /// Of each kind, in that order: the pairs whose copy kept the original's
    /// exact (renamed) fingerprint, denied as `copy.exact` (`copy.renamed`)
    /// rather than by similarity.
    pub same_fingerprint: Vec<usize>,
    /// Reformatted texts that differ from their input (a setting that changes
    /// nothing measures nothing).
    pub changed: usize,
    /// Samples the formatter failed on (left out, reported on standard error).
    pub failed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub threshold: f64,
    pub floor: usize,
    pub min_shingles: usize,
    pub containment: f64,
    /// Over every copy kind and language.
    pub recall: f64,
    pub precision: f64,
    /// Kind -> denied share (allowed share for `unrelated`), all languages.
    pub kinds: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub corpora: Vec<String>,
    pub config: RuleConfig,
    /// Language -> the formatter settings used, and those missing.
    pub formatters: BTreeMap<String, Vec<String>>,
    /// At the configured defaults.
    pub rates: Vec<Rate>,
    /// Per language and formatter setting, at the defaults.
    pub settings: Vec<SettingRate>,
    pub sweep: Vec<SweepRow>,
    pub lsh: Vec<LshBin>,
}

/// Builds the corpus and measures it; writes nothing.
pub fn calibrate(args: &CalibrateArgs) -> Result<Calibration> {
    let defaults = RuleConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let samples = draw(args, &mut rng)?;
    let mut formatters = BTreeMap::new();
    let mut pairs = Vec::new();
    let mut outcomes = Vec::new();
    for (lang_samples, all) in samples.values() {
        let lang = lang_samples[0].lang;
        let (settings, missing) = settings_of(lang, &args.formatters);
        formatters.insert(
            lang.name().to_string(),
            settings
                .iter()
                .map(|f| format!("{}: `{}`", f.label, f.describe()))
                .chain(missing)
                .collect(),
        );
        let pool = statement_pool(lang_samples)?;
        let mut lang_outcomes = vec![Formatted::default(); settings.len()];
        for sample in lang_samples {
            let (mutated, formatted) = mutations(sample, &settings, &pool, &mut rng)?;
            pairs.extend(mutated);
            for (sum, one) in lang_outcomes.iter_mut().zip(formatted) {
                sum.changed += one.changed;
                sum.failed += one.failed;
            }
            pairs.extend(unrelated_to(sample, all, args.unrelated).map(|other| Pair {
                lang,
                kind: "unrelated",
                setting: None,
                original: sample.text.clone(),
                copy: other.text.clone(),
            }));
        }
        outcomes.extend(
            settings
                .into_iter()
                .zip(lang_outcomes)
                .map(|(f, outcome)| (lang.name(), f.label, outcome)),
        );
    }
    let mut sweep = Vec::new();
    let mut rates = Vec::new();
    let mut settings = Vec::new();
    let configs = sweep_configs(&defaults);
    // verdicts[config][pair]; each pair is parsed once for every config (the
    // swept fields do not change fingerprints).
    let mut verdicts = vec![Vec::with_capacity(pairs.len()); configs.len()];
    let mut same_fingerprints = Vec::with_capacity(pairs.len());
    for pair in &pairs {
        let parsed = ParsedPair::new(&defaults, pair)?;
        same_fingerprints.push(parsed.same_fingerprint());
        for (cfg, out) in configs.iter().zip(verdicts.iter_mut()) {
            out.push(parsed.denied(cfg)?);
        }
    }
    for (cfg, verdicts) in configs.into_iter().zip(verdicts) {
        if cfg == defaults {
            rates = rates_of(&pairs, &verdicts, true);
            settings = setting_rates(&pairs, &verdicts, &same_fingerprints, &outcomes);
            if let Some(dir) = &args.misses {
                write_misses(dir, &pairs, &verdicts, &same_fingerprints)?;
            }
        }
        sweep.push(sweep_row(&cfg, &pairs, &verdicts));
    }
    Ok(Calibration {
        corpora: args
            .corpus
            .iter()
            .map(|c| c.display().to_string())
            .collect(),
        config: defaults.clone(),
        formatters,
        rates,
        settings,
        sweep,
        lsh: lsh_recall(&defaults, &pairs)?,
    })
}

/// Every threshold with every floor, with every `min_shingles` and with every
/// containment, the other settings at their defaults.
fn sweep_configs(defaults: &RuleConfig) -> Vec<RuleConfig> {
    let mut configs = Vec::new();
    for &threshold in THRESHOLDS {
        for &floor in FLOORS {
            configs.push(RuleConfig {
                threshold,
                floor,
                ..defaults.clone()
            });
        }
        let varied = CONTAINMENTS
            .iter()
            .map(|&containment| RuleConfig {
                threshold,
                containment,
                ..defaults.clone()
            })
            .chain(MIN_SHINGLES.iter().map(|&min_shingles| RuleConfig {
                threshold,
                min_shingles,
                ..defaults.clone()
            }));
        for cfg in varied {
            if !configs.contains(&cfg) {
                configs.push(cfg);
            }
        }
    }
    configs
}

/// Denied share per (language, kind), and over all languages per kind; for
/// `unrelated` the allowed share.
fn rates_of(pairs: &[Pair], verdicts: &[bool], per_language: bool) -> Vec<Rate> {
    let mut cells: BTreeMap<(String, usize), (usize, usize)> = BTreeMap::new();
    for (pair, &denied) in pairs.iter().zip(verdicts) {
        let kind = KINDS.iter().position(|k| *k == pair.kind).unwrap_or(0);
        let mut languages = vec!["all".to_string()];
        if per_language {
            languages.push(pair.lang.name().to_string());
        }
        for language in languages {
            let cell = cells.entry((language, kind)).or_default();
            cell.0 += 1;
            cell.1 += usize::from(denied);
        }
    }
    cells
        .into_iter()
        .map(|((language, kind), (n, denied))| {
            let share = denied as f64 / n as f64;
            Rate {
                language,
                kind: KINDS[kind].to_string(),
                pairs: n,
                denied,
                rate: if KINDS[kind] == "unrelated" {
                    1.0 - share
                } else {
                    share
                },
            }
        })
        .collect()
}

/// The reformatted kinds' rates per (language, setting), with what each
/// setting changed and failed on (`outcomes`, in report order).
fn setting_rates(
    pairs: &[Pair],
    verdicts: &[bool],
    same_fingerprints: &[bool],
    outcomes: &[(&str, String, Formatted)],
) -> Vec<SettingRate> {
    outcomes
        .iter()
        .map(|(language, setting, formatted)| {
            let mine: Vec<(&Pair, bool, bool)> = pairs
                .iter()
                .zip(verdicts)
                .zip(same_fingerprints)
                .filter(|((p, _), _)| {
                    p.lang.name() == *language && p.setting.as_ref() == Some(setting)
                })
                .map(|((p, v), same)| (p, *v, *same))
                .collect();
            let same_of = |kind: &str| {
                mine.iter()
                    .filter(|(p, _, same)| p.kind == kind && *same)
                    .count()
            };
            let (pairs, verdicts): (Vec<Pair>, Vec<bool>) =
                mine.iter().map(|(p, v, _)| ((*p).clone(), *v)).unzip();
            SettingRate {
                language: language.to_string(),
                setting: setting.clone(),
                same_fingerprint: vec![same_of("reformatted"), same_of("renamed+reformatted")],
                kinds: rates_of(&pairs, &verdicts, false),
                changed: formatted.changed,
                failed: formatted.failed,
            }
        })
        .collect()
}

fn sweep_row(cfg: &RuleConfig, pairs: &[Pair], verdicts: &[bool]) -> SweepRow {
    let (mut tp, mut fp, mut positives) = (0usize, 0usize, 0usize);
    for (pair, &denied) in pairs.iter().zip(verdicts) {
        if pair.kind == "unrelated" {
            fp += usize::from(denied);
        } else {
            positives += 1;
            tp += usize::from(denied);
        }
    }
    SweepRow {
        threshold: cfg.threshold,
        floor: cfg.floor,
        min_shingles: cfg.min_shingles,
        containment: cfg.containment,
        recall: tp as f64 / positives.max(1) as f64,
        precision: if tp + fp == 0 {
            1.0
        } else {
            tp as f64 / (tp + fp) as f64
        },
        kinds: rates_of(pairs, verdicts, false)
            .into_iter()
            .map(|r| (r.kind, r.rate))
            .collect(),
    }
}
