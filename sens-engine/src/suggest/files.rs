//! Lifts from the file a candidate lives in. A file is a unit of design: its
//! name says what it holds (`cookies.py` for "cookie storage"), and a file where
//! several candidates score is more likely the place asked about than a lone
//! match elsewhere (file coherence).

use rustc_hash::FxHashMap;

use crate::words::subwords;

/// What a file whose name and folder hold every prompt word adds, in units of
/// the best score (a share of it for a share of the words).
const NAME_LIFT: f64 = 1.0;
/// Under this share of the prompt's words, a file name's match is chance.
const MIN_SHARE: f64 = 0.1;
/// What the file with the most score among the best candidates adds to its best
/// candidate, in units of the best score; other files in proportion.
const COHERENCE_LIFT: f64 = 0.2;
/// The best candidates whose scores make a file's.
pub const COHERENCE_POOL: usize = 50;

/// The prompt's words, as a file's name is read.
pub struct FileWords {
    words: Vec<String>,
    cache: FxHashMap<String, f64>,
}

impl FileWords {
    pub fn of(prompt: &str) -> Self {
        let mut words = subwords(prompt);
        words.sort();
        words.dedup();
        Self {
            words,
            cache: FxHashMap::default(),
        }
    }

    /// What the file `path` adds: the share of the prompt's words its stem and
    /// folder hold (see [`same_word`]), once at least [`MIN_SHARE`].
    pub fn lift(&mut self, path: &str) -> f64 {
        if self.words.is_empty() {
            return 0.0;
        }
        if let Some(&v) = self.cache.get(path) {
            return v;
        }
        let mut parts = path.rsplit('/');
        let stem = parts.next().unwrap_or(path);
        let stem = stem.split('.').next().unwrap_or(stem);
        let folder = parts.next().unwrap_or("");
        let named = subwords(&format!("{stem} {folder}"));
        let matched = self
            .words
            .iter()
            .filter(|w| named.iter().any(|n| same_word(w, n)))
            .count();
        let share = matched as f64 / self.words.len() as f64;
        let v = if share >= MIN_SHARE {
            NAME_LIFT * share
        } else {
            0.0
        };
        self.cache.insert(path.to_string(), v);
        v
    }
}

/// The same word, or one word's forms: the shorter is the longer's prefix but
/// for its last letter, over four letters or more (`cooki` and `cooky` as the
/// stems of `cookie` and `cookies`, `depend` and `dependenci`).
fn same_word(a: &str, b: &str) -> bool {
    let short = a.len().min(b.len());
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    a == b || (common >= 4 && common + 1 >= short)
}

/// Each best candidate's lift for the score its file gathers: `scored` holds
/// (file, score) of the best candidates, best first; the result, in the same
/// order, is what each adds (only a file's first candidate gets any).
pub fn coherence(scored: &[(&str, f64)]) -> Vec<f64> {
    let best = scored.first().map_or(0.0, |s| s.1);
    let mut sums: FxHashMap<&str, f64> = FxHashMap::default();
    for &(file, score) in scored {
        *sums.entry(file).or_default() += score;
    }
    let top = sums.values().copied().fold(0.0, f64::max);
    if top <= 0.0 {
        return vec![0.0; scored.len()];
    }
    let mut seen = rustc_hash::FxHashSet::default();
    scored
        .iter()
        .map(|&(file, _)| {
            if seen.insert(file) {
                COHERENCE_LIFT * best * sums[file] / top
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_for_the_prompts_words_is_lifted() {
        let mut w = FileWords::of("cookie storage and persistence");
        assert!(w.lift("src/requests/cookies.py") > 0.0);
        assert_eq!(w.lift("src/requests/models.py"), 0.0);
        let mut w = FileWords::of("how nested dependencies are resolved");
        assert!(w.lift("fastapi/dependencies/utils.py") > 0.0);
    }

    #[test]
    fn a_file_where_several_candidates_score_lifts_its_best_one() {
        let lifts = coherence(&[("a.py", 1.0), ("b.py", 0.9), ("b.py", 0.8), ("a.py", 0.1)]);
        // b.py gathers 1.7, a.py 1.1: b's best gets the whole lift.
        assert!((lifts[1] - COHERENCE_LIFT).abs() < 1e-12);
        assert!((lifts[0] - COHERENCE_LIFT * 1.1 / 1.7).abs() < 1e-12);
        assert_eq!(lifts[2], 0.0);
        assert_eq!(lifts[3], 0.0);
    }
}
