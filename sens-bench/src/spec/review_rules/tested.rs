//! `review test` writes each passing rule's `tested` block into its rules file in
//! place: only the lines of that block change (replaced, or added after the
//! rule's last line), so comments, order and quoting stay as the person wrote
//! them. Rules are found by their lines, as block-style YAML is written by hand;
//! the edited text must parse to the same rules with the new `tested`, or the
//! file is left as it was and the error says why.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail, ensure};

use super::{RuleBook, RuleText, Tested, parse};

/// Writes `tested` (by rule id) into the rules files of `book`, each file once.
pub fn write_tested(
    root: &Path,
    tested: &BTreeMap<String, Tested>,
    book: &RuleBook,
) -> anyhow::Result<()> {
    let mut files: BTreeMap<(&str, &str), Vec<RuleText>> = BTreeMap::new();
    for rule in &book.rules {
        let mut text = rule.text.clone();
        if let Some(result) = tested.get(&text.id) {
            text.tested = Some(result.clone());
        }
        files
            .entry((&rule.source, &rule.folder))
            .or_default()
            .push(text);
    }
    for ((source, folder), rules) in files {
        if !rules.iter().any(|r| tested.contains_key(&r.id)) {
            continue;
        }
        let path = root.join(source);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let edited = edit(&text, &rules, tested)
            .and_then(|edited| {
                let written: Vec<RuleText> = parse(&edited, folder, source)?
                    .into_iter()
                    .map(|rule| rule.text)
                    .collect();
                ensure!(written == rules, "the edited file reads differently");
                Ok(edited)
            })
            .with_context(|| {
                format!(
                    "{source}: cannot write `tested` in place, so the file is left as it was \
                     (write its rules as block-style YAML: one `- id: ...` line per rule, \
                     one key per line)"
                )
            })?;
        std::fs::write(&path, edited)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `text` with the `tested` block of every rule of `rules` (in file order) that
/// has a result in `tested`.
fn edit(
    text: &str,
    rules: &[RuleText],
    tested: &BTreeMap<String, Tested>,
) -> anyhow::Result<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let items = items(&lines)?;
    ensure!(
        items.len() == rules.len(),
        "found {} rules by their lines, not {}",
        items.len(),
        rules.len()
    );
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    // From the last rule up, so the earlier rules' line numbers hold.
    for (item, rule) in items.iter().zip(rules).rev() {
        let Some(result) = tested.get(&rule.id) else {
            continue;
        };
        let pad = " ".repeat(item.key_indent);
        let block = [
            format!("{pad}tested:{newline}"),
            format!("{pad}  margin: {:.2}{newline}", result.margin),
            format!("{pad}  hash: \"{}\"{newline}", result.hash),
        ];
        let range = match item.tested_block(&lines) {
            Some(range) => range,
            None => {
                let after = item.last_line(&lines) + 1;
                after..after
            }
        };
        if range.start > 0 && !lines[range.start - 1].ends_with('\n') {
            lines[range.start - 1].push_str(newline);
        }
        lines.splice(range, block);
    }
    Ok(lines.concat())
}

/// One rule of the list: its lines `start..end` and the column of its keys.
#[derive(Debug, PartialEq)]
struct Item {
    start: usize,
    end: usize,
    key_indent: usize,
}

impl Item {
    /// Whether a line is a comment outside the rule's values: one at or left of
    /// its keys (a deeper `#` line may be inside a block scalar).
    fn outside(&self, line: &str) -> bool {
        is_blank(line) || (is_comment(line) && indent(line) <= self.key_indent)
    }

    /// The rule's last line of content.
    fn last_line(&self, lines: &[String]) -> usize {
        (self.start..self.end)
            .rev()
            .find(|&i| !self.outside(&lines[i]))
            .unwrap_or(self.start)
    }

    /// The lines of the rule's `tested` key and its value, if it has one.
    fn tested_block(&self, lines: &[String]) -> Option<std::ops::Range<usize>> {
        let first = (self.start + 1..self.end).find(|&i| {
            let line = &lines[i];
            indent(line) == self.key_indent
                && line[self.key_indent..]
                    .strip_prefix("tested")
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })?;
        let next_key = (first + 1..self.end)
            .find(|&i| !is_blank(&lines[i]) && indent(&lines[i]) <= self.key_indent)
            .unwrap_or(self.end);
        let last = (first..next_key)
            .rev()
            .find(|&i| !is_blank(&lines[i]))
            .unwrap_or(first);
        Some(first..last + 1)
    }
}

/// The rules of a block-style rules file, by their lines.
fn items(lines: &[String]) -> anyhow::Result<Vec<Item>> {
    let skip = |from: usize| {
        (from..lines.len())
            .find(|&i| {
                let line = lines[i].trim();
                !(line.is_empty()
                    || line.starts_with('#')
                    || line.starts_with('%')
                    || line == "---")
            })
            .unwrap_or(lines.len())
    };
    let mut first = skip(0);
    let keyed = lines.get(first).is_some_and(|line| {
        line.strip_prefix("rules")
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    });
    if keyed {
        first = skip(first + 1);
    }
    let Some(dash) = lines.get(first).filter(|line| is_dash(line)) else {
        bail!("no block list of rules (lines starting with `- `)");
    };
    let list_indent = indent(dash);
    let mut starts = Vec::new();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(first) {
        if is_blank(line) || (is_comment(line) && indent(line) <= list_indent) {
            continue;
        }
        if indent(line) == list_indent && is_dash(line) {
            starts.push(i);
        } else if indent(line) <= list_indent {
            end = i;
            break;
        }
    }
    let mut items = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let item_end = starts.get(n + 1).copied().unwrap_or(end);
        let after_dash = &lines[start][list_indent + 1..];
        let rest = after_dash.trim_start();
        let key_indent = if rest.trim().is_empty() || rest.starts_with('#') {
            // `-` alone: the keys are on the next lines.
            (start + 1..item_end)
                .find(|&i| !is_blank(&lines[i]) && !is_comment(&lines[i]))
                .map(|i| indent(&lines[i]))
                .context("a `-` with no rule under it")?
        } else {
            lines[start].len() - rest.len()
        };
        items.push(Item {
            start,
            end: item_end,
            key_indent,
        });
    }
    Ok(items)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// A list item's line: `-` then a space, or `-` alone.
fn is_dash(line: &str) -> bool {
    line.trim_start()
        .strip_prefix('-')
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.split_inclusive('\n').map(str::to_string).collect()
    }

    #[test]
    fn items_are_found_under_rules_and_at_the_top_level() {
        let keyed =
            lines("# c\nrules:\n  - id: a\n    x: 1\n\n  # between\n  -\n    id: b\nother: 1\n");
        assert_eq!(
            items(&keyed).unwrap(),
            [
                Item {
                    start: 2,
                    end: 6,
                    key_indent: 4
                },
                Item {
                    start: 6,
                    end: 8,
                    key_indent: 4
                }
            ]
        );
        let listed = lines("---\n- id: a\n  x: |\n    # not a comment\n# after\n");
        let found = items(&listed).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key_indent, 2);
        assert_eq!(found[0].last_line(&listed), 3, "a deeper `#` is content");
        assert!(items(&lines("rules: [{id: a}]\n")).is_err());
    }

    #[test]
    fn a_tested_block_is_replaced_up_to_the_next_key() {
        let text =
            lines("- id: a\n  tested:\n    margin: 0.5\n\n    hash: x\n\n  # note\n  fix: f\n");
        let item = &items(&text).unwrap()[0];
        assert_eq!(item.tested_block(&text), Some(1..5));
    }
}
