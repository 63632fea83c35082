//! A script into its simple commands: a small quote-aware lexer that splits at
//! control operators, takes command and process substitutions out as commands of
//! their own, and skips here-document bodies.

use anyhow::{Context, bail};

/// Splits a script into the texts of its simple commands, in order. Command and
/// process substitutions are analyzed as commands of their own (appended after
/// the command that holds them); here-document bodies are skipped.
pub fn split_commands(script: &str) -> anyhow::Result<Vec<String>> {
    let chars: Vec<char> = script.chars().collect();
    let mut segments = Vec::new();
    let mut nested = Vec::new();
    let mut current = String::new();
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut i = 0;
    let mut in_double = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\\' {
            current.push(c);
            if let Some(n) = next {
                current.push(n);
            }
            i += 2;
            continue;
        }
        // Command substitutions run inside double quotes as well as outside.
        let substitution = match c {
            '$' if next == Some('(') => Some((i + 2, ')')),
            '`' => Some((i + 1, '`')),
            _ => None,
        };
        if let Some((start, close)) = substitution {
            i = take_substitution(&chars, start, close, &mut nested)?;
            current.push_str("$SUBST");
            continue;
        }
        if in_double {
            if c == '"' {
                in_double = false;
            }
            current.push(c);
            i += 1;
            continue;
        }
        match c {
            '\'' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&ch| ch == '\'')
                    .with_context(|| format!("unterminated single quote in `{script}`"))?;
                current.extend(&chars[i..=i + 1 + end]);
                i += end + 2;
                continue;
            }
            '"' => {
                in_double = true;
                current.push(c);
            }
            '#' if current.is_empty() || current.ends_with(char::is_whitespace) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '<' if next == Some('<') && chars.get(i + 2) == Some(&'<') => {
                // a here-string: its word is an ordinary argument
                current.push_str("<<<");
                i += 3;
                continue;
            }
            '<' if next == Some('<') => {
                let (delimiter, strip_tabs, end) = heredoc_delimiter(&chars, i + 2);
                heredocs.push((delimiter, strip_tabs));
                i = end;
                continue;
            }
            '\n' => {
                push_segment(&mut segments, &mut current);
                i = skip_heredoc_bodies(&chars, i + 1, &mut heredocs);
                continue;
            }
            ';' | '(' | ')' => push_segment(&mut segments, &mut current),
            '&' if next == Some('>') || current.ends_with(['>', '<']) => current.push(c),
            '&' => {
                push_segment(&mut segments, &mut current);
                if next == Some('&') {
                    i += 1;
                }
            }
            '|' if current.ends_with('>') => current.push(c),
            '|' => {
                push_segment(&mut segments, &mut current);
                if matches!(next, Some('|' | '&')) {
                    i += 1;
                }
            }
            _ => current.push(c),
        }
        i += 1;
    }
    if in_double {
        bail!("unterminated double quote in `{script}`");
    }
    push_segment(&mut segments, &mut current);
    for inner in nested {
        segments.extend(split_commands(&inner)?);
    }
    Ok(segments)
}

fn push_segment(segments: &mut Vec<String>, current: &mut String) {
    if !current.trim().is_empty() {
        segments.push(current.trim().to_string());
    }
    current.clear();
}

/// Reads a substitution's body from `start` to its closing `close` (nesting and
/// quotes respected); returns the index after the close.
fn take_substitution(
    chars: &[char],
    start: usize,
    close: char,
    nested: &mut Vec<String>,
) -> anyhow::Result<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if c == '\\' => i += 1,
            Some(_) => {}
            None => match c {
                '\\' => i += 1,
                '\'' | '"' => quote = Some(c),
                '(' if close == ')' => depth += 1,
                _ if c == close && depth == 0 => {
                    nested.push(chars[start..i].iter().collect());
                    return Ok(i + 1);
                }
                ')' if close == ')' => depth -= 1,
                _ => {}
            },
        }
        i += 1;
    }
    bail!(
        "unterminated `{}` substitution",
        if close == ')' { "$(" } else { "`" }
    )
}

/// The delimiter word of `<<WORD` / `<<-'WORD'` starting at `start`; returns it,
/// whether tabs are stripped (`<<-`), and the index after it.
fn heredoc_delimiter(chars: &[char], start: usize) -> (String, bool, usize) {
    let mut i = start;
    let strip_tabs = chars.get(i) == Some(&'-');
    if strip_tabs {
        i += 1;
    }
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let mut word = String::new();
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') {
            break;
        }
        if !matches!(c, '\'' | '"' | '\\') {
            word.push(c);
        }
        i += 1;
    }
    (word, strip_tabs, i)
}

/// Skips the bodies of pending here-documents that start at `start`.
fn skip_heredoc_bodies(chars: &[char], start: usize, heredocs: &mut Vec<(String, bool)>) -> usize {
    let mut i = start;
    for (delimiter, strip_tabs) in heredocs.drain(..) {
        loop {
            if i >= chars.len() {
                return i;
            }
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            let line: String = chars[i..end].iter().collect();
            i = end + 1;
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if line == delimiter {
                break;
            }
        }
    }
    i.min(chars.len())
}

#[cfg(test)]
mod tests {
    use super::split_commands;

    #[test]
    fn split_keeps_quoted_operators_together() {
        assert_eq!(
            split_commands("a 'x;y' && b \"p|q\" | c").unwrap_or_default(),
            vec!["a 'x;y'", "b \"p|q\"", "c"]
        );
    }
}
