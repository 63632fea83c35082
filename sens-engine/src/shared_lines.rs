//! What two units of a duplicate group share, for a person to judge the match:
//! the engine's own count of shared shingles, and the lines of one that have
//! the same shape in the other (names, strings and numbers as placeholders,
//! layout ignored), each marked when its text is identical too. A pair that
//! shares only shape, with every name and string different, shows it here.

use serde::Serialize;

use crate::fingerprint::{TokenClass, common_at_least};
use crate::lang::for_path;
use crate::units::{UnitData, spans};

/// Why two units were matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedLines {
    /// Shingles of normalized tokens both units hold.
    pub shingles: usize,
    /// Distinct shingles of each unit, in the order given.
    pub of: [usize; 2],
    /// Lines of the second unit with a line of the same shape in the first:
    /// (line in the first, line in the second, identical text).
    pub lines: Vec<(u32, u32, bool)>,
}

/// A line's shape: its text with every name, string and number a placeholder
/// and no whitespace.
fn shapes(path: &str, text: &str) -> Vec<String> {
    let mut shaped = text.to_string();
    if let Some(leaves) = for_path(path).and_then(|lang| spans(lang, text).ok()) {
        // From the end, so earlier ranges stay valid.
        for (range, class) in leaves.leaves.iter().rev() {
            let placeholder = match class {
                TokenClass::Identifier => "$",
                TokenClass::String => "\"\"",
                TokenClass::Number => "0",
                TokenClass::Other => continue,
            };
            // A multi-line string keeps its line breaks: lines keep their numbers.
            let breaks = "\n".repeat(text[range.clone()].matches('\n').count());
            shaped.replace_range(range.clone(), &format!("{placeholder}{breaks}"));
        }
    }
    shaped
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

/// The lines `first` and `second` (units of the files `paths` holding
/// `texts`) have in common, each line of the second paired with the first
/// unused line of the same shape in the first.
pub fn shared_lines(
    first: &UnitData,
    second: &UnitData,
    paths: [&str; 2],
    texts: [&str; 2],
) -> SharedLines {
    let shingles = common_at_least(&first.shingles, &second.shingles, 0).unwrap_or(0);
    let span = |u: &UnitData| (u.start_line as usize - 1)..(u.end_line as usize);
    let lines = |i: usize, u: &UnitData| -> Vec<(u32, String, &str)> {
        let shaped = shapes(paths[i], texts[i]);
        let raw: Vec<&str> = texts[i].lines().collect();
        span(u)
            .filter_map(|n| {
                let shape = shaped.get(n)?;
                (!shape.is_empty()).then(|| (n as u32 + 1, shape.clone(), raw[n].trim()))
            })
            .collect()
    };
    let (a, b) = (lines(0, first), lines(1, second));
    let mut used = vec![false; a.len()];
    let mut shared = Vec::new();
    for (line, shape, raw) in &b {
        let found = a
            .iter()
            .enumerate()
            .find(|(i, (_, s, _))| !used[*i] && s == shape);
        if let Some((i, (a_line, _, a_raw))) = found {
            used[i] = true;
            shared.push((*a_line, *line, a_raw == raw));
        }
    }
    SharedLines {
        shingles,
        of: [first.shingles.len(), second.shingles.len()],
        lines: shared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RuleConfig;
    use crate::index::Index;

    fn unit(path: &str, text: &str) -> UnitData {
        let index = Index::new(RuleConfig::default()).unwrap();
        let parsed = index.parse(path, text).unwrap().unwrap();
        parsed.units.into_iter().max_by_key(|u| u.tokens).unwrap()
    }

    #[test]
    fn a_renamed_line_has_the_same_shape_and_other_text() {
        let a = "def f(x):\n    y = x + 1\n    return y\n";
        let b = "def g(z):\n    \"\"\"A docstring\n    of two lines.\"\"\"\n    w = z + 1\n    print('other')\n    return w\n";
        let (ua, ub) = (unit("a.py", a), unit("b.py", b));
        let shared = shared_lines(&ua, &ub, ["a.py", "b.py"], [a, b]);
        assert_eq!(
            shared.lines,
            vec![(1, 1, false), (2, 4, false), (3, 6, false)]
        );
        let same = shared_lines(&ua, &ua, ["a.py", "a.py"], [a, a]);
        assert!(
            same.lines
                .iter()
                .all(|&(x, y, identical)| x == y && identical)
        );
        assert_eq!(same.shingles, ua.shingles.len());
    }
}
