//! NDCG@10 with binary gain, as semble's `benchmarks/metrics.py` defines it: a
//! query's relevant targets each count once, at the rank of the first result
//! matching it; the ideal ranking puts every target the index holds first.

/// The cut-off.
pub const K: usize = 10;

/// A result path matches a target path when they are equal or one is a suffix
/// of the other at a folder boundary (a package's copy of `src/flask/app.py` is
/// `flask/app.py`).
pub fn path_matches(file: &str, target: &str) -> bool {
    let (file, target) = (file.replace('\\', "/"), target.replace('\\', "/"));
    file == target || file.ends_with(&format!("/{target}")) || target.ends_with(&format!("/{file}"))
}

/// NDCG@[`K`] of a ranked list of files for the targets `relevant` (paths), of
/// which `indexed` are in the index: 0 when none is.
pub fn ndcg(ranked: &[String], relevant: &[String], indexed: usize) -> f64 {
    if indexed == 0 {
        return 0.0;
    }
    let mut gains = [0.0; K];
    for target in relevant {
        if let Some(rank) = ranked.iter().take(K).position(|f| path_matches(f, target)) {
            gains[rank] = 1.0;
        }
    }
    let dcg = |g: &[f64]| -> f64 {
        g.iter()
            .enumerate()
            .map(|(i, x)| x / ((i + 2) as f64).log2())
            .sum()
    };
    let ideal = dcg(&vec![1.0; indexed.min(K)]);
    dcg(&gains) / ideal
}

/// Files in the order their first item ranks, each once.
pub fn files_in_rank_order<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in items {
        if !out.iter().any(|o| o == f) {
            out.push(f.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Three queries computed by hand: 1/log2(r + 1) per relevant rank r, over
    /// the ideal sum for as many targets as the index holds.
    #[test]
    fn three_queries_match_their_hand_computed_ndcg() {
        let ranked = files_in_rank_order(["a.py", "b.py", "a.py", "c.py", "d.py"]);
        assert_eq!(ranked, strings(&["a.py", "b.py", "c.py", "d.py"]));
        // One target, first: 1.
        let first = ndcg(&ranked, &strings(&["src/pkg/a.py"]), 1);
        // One target, third: 1 / log2(4) = 0.5.
        let third = ndcg(&ranked, &strings(&["c.py"]), 1);
        // Two targets at 2 and 4: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3).
        let two = ndcg(&ranked, &strings(&["b.py", "d.py"]), 2);
        assert!((first - 1.0).abs() < 1e-12);
        assert!((third - 0.5).abs() < 1e-12);
        let expected = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((two - expected).abs() < 1e-12, "{two} vs {expected}");
        let mean = (first + third + two) / 3.0;
        assert!((mean - 0.716_973_6).abs() < 1e-6, "{mean}");
    }

    #[test]
    fn a_target_missing_from_the_index_scores_nothing_and_one_past_ten_counts_nothing() {
        assert_eq!(ndcg(&strings(&["a.py"]), &strings(&["z.py"]), 0), 0.0);
        let eleven: Vec<String> = (0..11).map(|i| format!("f{i}.py")).collect();
        assert_eq!(ndcg(&eleven, &strings(&["f10.py"]), 1), 0.0);
    }

    #[test]
    fn paths_match_at_a_folder_boundary_only() {
        assert!(path_matches("flask/app.py", "src/flask/app.py"));
        assert!(path_matches("src/flask/app.py", "flask/app.py"));
        assert!(!path_matches("myapp.py", "app.py"));
    }
}
