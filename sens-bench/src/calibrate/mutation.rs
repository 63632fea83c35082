//! The mutations: the labelled copies made of one drawn function (exact,
//! renamed, reformatted at each formatter setting, near copies at several
//! distances), and the kinds in report order.

use std::collections::BTreeMap;

use anyhow::Result;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use sens_engine::fingerprint::TokenClass;
use sens_engine::lang::Lang;
use sens_engine::units;

use super::corpus::Sample;
use super::formatter::{Formatted, Formatter};

/// The mutation kinds, in report order; `unrelated` is the negative class.
pub const KINDS: &[&str] = &[
    "exact",
    "renamed",
    "reformatted",
    "renamed+reformatted",
    "near.insert1",
    "near.insert2",
    "near.insert3",
    "near.delete1",
    "near.change1",
    "near.literal1",
    "unrelated",
];

/// One labelled pair.
#[derive(Debug, Clone)]
pub(super) struct Pair {
    pub(super) lang: &'static Lang,
    pub(super) kind: &'static str,
    /// The formatter setting of a reformatted kind.
    pub(super) setting: Option<String>,
    pub(super) original: String,
    pub(super) copy: String,
}

/// Single-line statements of the language's samples, to insert into others.
pub(super) fn statement_pool(samples: &[Sample]) -> Result<Vec<String>> {
    let mut pool = Vec::new();
    for sample in samples {
        let spans = units::spans(sample.lang, &sample.text)?;
        pool.extend(spans.statements.iter().filter_map(|(r, _)| {
            let s = &sample.text[r.clone()];
            (!s.contains('\n') && (20..=90).contains(&s.len())).then(|| s.to_string())
        }));
    }
    Ok(pool)
}

/// Every copy of one sample, labelled, and per formatter setting how many of
/// its reformatted texts changed and how many it failed on. A formatter that
/// fails on a text leaves that variant out (reported on standard error).
pub(super) fn mutations(
    sample: &Sample,
    settings: &[Formatter],
    pool: &[String],
    rng: &mut ChaCha8Rng,
) -> Result<(Vec<Pair>, Vec<Formatted>)> {
    let lang = sample.lang;
    let pair = |kind: &'static str, setting: Option<&str>, copy: String| Pair {
        lang,
        kind,
        setting: setting.map(str::to_string),
        original: sample.text.clone(),
        copy,
    };
    let renamed = rename(lang, &sample.text)?;
    let mut out = vec![
        pair("exact", None, sample.text.clone()),
        pair("renamed", None, renamed.clone()),
    ];
    let mut formatted = vec![Formatted::default(); settings.len()];
    // The formatters run side by side: their start-up is most of the time.
    let outputs: Vec<[(&str, &String, Result<String>); 2]> = settings
        .par_iter()
        .map(|f| {
            [
                ("reformatted", &sample.text),
                ("renamed+reformatted", &renamed),
            ]
            .map(|(kind, text)| (kind, text, f.format(text)))
        })
        .collect();
    for ((f, outcome), runs) in settings.iter().zip(formatted.iter_mut()).zip(outputs) {
        for (kind, text, result) in runs {
            match result {
                Ok(copy) => {
                    outcome.changed += usize::from(copy != *text);
                    out.push(pair(kind, Some(&f.label), copy));
                }
                Err(err) => {
                    outcome.failed += 1;
                    eprintln!("{kind} {}: {err:#}", sample.origin);
                }
            }
        }
    }
    let mut inserted = sample.text.clone();
    for kind in ["near.insert1", "near.insert2", "near.insert3"] {
        let Some(text) = edit_statement(lang, &inserted, pool, rng, Edit::Insert)? else {
            break;
        };
        inserted = text;
        out.push(pair(kind, None, inserted.clone()));
    }
    for (kind, edit) in [
        ("near.delete1", Edit::Delete),
        ("near.change1", Edit::Change),
    ] {
        if let Some(text) = edit_statement(lang, &sample.text, pool, rng, edit)? {
            out.push(pair(kind, None, text));
        }
    }
    if let Some(text) = change_literal(lang, &sample.text, rng)? {
        out.push(pair("near.literal1", None, text));
    }
    Ok((out, formatted))
}

/// Every identifier and literal replaced, consistently (equal texts get equal
/// replacements).
fn rename(lang: &Lang, text: &str) -> Result<String> {
    let spans = units::spans(lang, text)?;
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    let mut out = text.to_string();
    let mut replacements = Vec::new();
    for (range, class) in &spans.leaves {
        let old = &text[range.clone()];
        let n = names.len();
        let new = names
            .entry(old)
            .or_insert_with(|| match class {
                TokenClass::Identifier => format!("v{n}"),
                TokenClass::String => format!("\"s{n}\""),
                TokenClass::Number if old.bytes().all(|b| b.is_ascii_digit()) => {
                    format!("{}", 7 * n + 3)
                }
                _ => old.to_string(),
            })
            .clone();
        replacements.push((range.clone(), new));
    }
    for (range, new) in replacements.into_iter().rev() {
        out.replace_range(range, &new);
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Insert,
    Delete,
    Change,
}

/// One statement inserted before a random statement, that statement deleted
/// (when its block keeps another), or replaced; statements come from `pool`.
fn edit_statement(
    lang: &Lang,
    text: &str,
    pool: &[String],
    rng: &mut ChaCha8Rng,
    edit: Edit,
) -> Result<Option<String>> {
    let spans = units::spans(lang, text)?;
    let alone_on_line = |r: &std::ops::Range<usize>| {
        let line_start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..r.start]
            .trim()
            .is_empty()
            .then_some(line_start)
    };
    let choices: Vec<(std::ops::Range<usize>, usize, usize)> = spans
        .statements
        .iter()
        .filter(|(_, block)| {
            edit != Edit::Delete || spans.statements.iter().filter(|(_, b)| b == block).count() > 1
        })
        .filter(|(r, _)| edit != Edit::Change || !text[r.clone()].contains('\n'))
        .filter_map(|(r, block)| Some((r.clone(), *block, alone_on_line(r)?)))
        .collect();
    let (Some((range, _, line_start)), false) = (
        choices.get(rng.random_range(0..choices.len().max(1))),
        pool.is_empty(),
    ) else {
        return Ok(None);
    };
    let borrowed = &pool[rng.random_range(0..pool.len())];
    let indent = &text[*line_start..range.start];
    let mut out = text.to_string();
    match edit {
        Edit::Insert => out.insert_str(range.start, &format!("{borrowed}\n{indent}")),
        Edit::Change => out.replace_range(range.clone(), borrowed),
        Edit::Delete => {
            let end = text[range.end..]
                .find('\n')
                .map_or(text.len(), |i| range.end + i + 1);
            out.replace_range(*line_start..end, "");
        }
    }
    Ok(Some(out))
}

/// One string or number changed.
fn change_literal(lang: &Lang, text: &str, rng: &mut ChaCha8Rng) -> Result<Option<String>> {
    let spans = units::spans(lang, text)?;
    let literals: Vec<_> = spans
        .leaves
        .iter()
        .filter(|(_, c)| matches!(c, TokenClass::String | TokenClass::Number))
        .collect();
    let Some((range, class)) = literals.get(rng.random_range(0..literals.len().max(1))) else {
        return Ok(None);
    };
    let new = if *class == TokenClass::Number {
        "12345"
    } else {
        "\"calibration changed\""
    };
    let mut out = text.to_string();
    out.replace_range(range.clone(), new);
    Ok(Some(out))
}
