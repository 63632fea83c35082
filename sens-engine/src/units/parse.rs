//! A file's text into a syntax tree within a time budget, from scratch or reusing
//! the tree of the text before an edit. Both parse the prepared text
//! ([`Lang::prepare`]), which keeps every offset of the source.

use std::ops::{ControlFlow, Range};
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, ParseOptions, Parser, Point, Tree};

use crate::lang::Lang;

/// How long one file's parse may take. Linear grammars parse megabytes in that
/// time; a file that does not is not judged (a blocking `unjudged` finding)
/// rather than holding a hook past the CLI's callback timeout.
pub const DEFAULT_PARSE_BUDGET: Duration = Duration::from_secs(2);

/// A parse stopped at its budget: tree-sitter's progress callback ended it, so
/// no work is left running.
#[derive(Debug, thiserror::Error)]
#[error("the {language} parser did not finish within its budget of {} ms", budget.as_millis())]
pub struct OverBudget {
    pub language: &'static str,
    pub budget: Duration,
}

thread_local! {
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
}

/// Parses `source` with the language's grammar, reusing one parser per thread.
/// Extraction reads token texts from `source` itself: preparing (blanking what is
/// not code) keeps every offset.
/// Fails with [`OverBudget`] when the parse takes longer than `budget`.
pub fn parse_tree(lang: &Lang, source: &str, budget: Duration) -> anyhow::Result<Tree> {
    parse_with(lang, &lang.prepare(source), None, budget)
}

fn parse_with(
    lang: &Lang,
    text: &str,
    old: Option<&Tree>,
    budget: Duration,
) -> anyhow::Result<Tree> {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser
            .set_language(&lang.language)
            .map_err(|e| anyhow::anyhow!("grammar of {} cannot be loaded: {e}", lang.name()))?;
        let started = Instant::now();
        let mut within_budget = |_: &tree_sitter::ParseState| {
            if started.elapsed() < budget {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        };
        let bytes = text.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            old,
            Some(ParseOptions::new().progress_callback(&mut within_budget)),
        );
        match tree {
            Some(tree) => Ok(tree),
            None if started.elapsed() >= budget => {
                // A cancelled parser would resume this parse on its next call.
                parser.reset();
                Err(OverBudget {
                    language: lang.name(),
                    budget,
                }
                .into())
            }
            None => Err(anyhow::anyhow!("the {} parser gave up", lang.name())),
        }
    })
}

/// Parses `new` reusing the tree of `old` (tree-sitter re-parses only what the
/// edit touched), within `budget`. Returns the new tree and the byte range of
/// `new` that differs from `old`.
pub fn reparse(
    lang: &Lang,
    old: &str,
    old_tree: &Tree,
    new: &str,
    budget: Duration,
) -> anyhow::Result<(Tree, Range<usize>)> {
    let (old, new) = (lang.prepare(old), lang.prepare(new));
    let changed = changed_range(&old, &new);
    let old_end = old.len() - (new.len() - changed.end);
    let mut tree = old_tree.clone();
    tree.edit(&InputEdit {
        start_byte: changed.start,
        old_end_byte: old_end,
        new_end_byte: changed.end,
        start_position: point(&old, changed.start),
        old_end_position: point(&old, old_end),
        new_end_position: point(&new, changed.end),
    });
    let tree = parse_with(lang, &new, Some(&tree), budget)?;
    Ok((tree, changed))
}

/// [`reparse`] without the old tree: parses `new` whole and returns the same
/// range, so that extraction still fingerprints only the units the edit
/// touched (a file whose tree is not kept costs a parse, not an extraction).
pub fn parse_changed(
    lang: &Lang,
    old: &str,
    new: &str,
    budget: Duration,
) -> anyhow::Result<(Tree, Range<usize>)> {
    let new = lang.prepare(new);
    let changed = changed_range(&lang.prepare(old), &new);
    let tree = parse_with(lang, &new, None, budget)?;
    Ok((tree, changed))
}

/// The byte range of `new` between the longest common prefix and suffix of the
/// two texts, on character boundaries.
pub fn changed_range(old: &str, new: &str) -> Range<usize> {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !new.is_char_boundary(prefix) || !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !new.is_char_boundary(new.len() - suffix) || !old.is_char_boundary(old.len() - suffix) {
        suffix -= 1;
    }
    prefix..new.len() - suffix
}

fn point(text: &str, byte: usize) -> Point {
    let head = &text.as_bytes()[..byte];
    let row = head.iter().filter(|&&c| c == b'\n').count();
    let column = head.iter().rev().take_while(|&&c| c != b'\n').count();
    Point { row, column }
}

#[cfg(test)]
mod tests {
    use anyhow::Context;
    use std::time::Duration;

    use super::parse_with;
    use crate::config::RuleConfig;
    use crate::units::{Fingerprinter, ParsedFile, extract, parse_file};

    /// One function, then `lines` comment lines at the top level.
    fn function_then_comments(lines: usize) -> String {
        let mut source = String::from(
            "def total(items):\n    acc = 0\n    for i in items:\n        acc += i\n    return acc\n",
        );
        for i in 0..lines {
            source.push_str(&format!("# comment line {i}\n"));
        }
        source
    }

    #[test]
    fn a_long_run_of_comments_gives_the_units_of_the_unprepared_source() -> anyhow::Result<()> {
        let lang = crate::lang::for_path("a.py").context("no python")?;
        let fp = Fingerprinter::new(&RuleConfig::default());
        let source = function_then_comments(4000);
        let thinned = parse_file(lang, &source, &fp)?;
        // Unprepared, the grammar is quadratic here: no budget.
        let unprepared = parse_with(lang, &source, None, Duration::MAX)?;
        let raw = extract(lang, &source, &unprepared, &fp, None);
        assert_eq!(thinned, raw);
        let alone = parse_file(lang, &function_then_comments(0), &fp)?;
        let names = |p: &ParsedFile| {
            p.units
                .iter()
                .map(|u| (u.name.clone(), u.exact))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&thinned), names(&alone));
        assert_eq!(
            names(&thinned),
            vec![("total".to_string(), alone.units[0].exact)]
        );
        Ok(())
    }
}
