//! `sens-bench engine semble-eval DIR`: the engine's ranking on MinishLab/semble's
//! code-search benchmark (`DIR` holds `repos.toml` and `annotations/`, see
//! [`annotations`]), on the repositories `scripts/semble-corpus.sh` fetches from
//! the package registries into the corpus folder (one folder per repository,
//! laid out as upstream).
//!
//! Each query's items are mapped to their files, each file kept at the rank of
//! its first item, and scored by NDCG@10 with binary gain ([`ndcg`]); a
//! repository's figure is its queries' mean, the overall figure the mean over
//! repositories, as semble reports. Two figures per query: the ranking alone
//! (items past the shown list, even when the engine would say nothing) and as
//! shipped (the list of at most 8, or nothing). semble's published figures for
//! the same repositories are printed beside them.

pub mod annotations;
pub mod ndcg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::index::Index;
use sens_engine::suggest::{self, Ranking, Steps, model::Model};
use serde::Serialize;

use crate::workspace::cache::Cache;
use annotations::{Category, Published, Query, Repo};
use ndcg::{files_in_rank_order, ndcg, path_matches};

/// Items ranked per query for the ranking-only figure: enough for ten files.
const DEPTH: usize = 200;

#[derive(Debug, clap::Args)]
pub struct Options {
    /// The folder of `repos.toml` and `annotations/`.
    #[arg(default_value = "bench/semble")]
    pub dir: PathBuf,
    /// The repositories, one folder each, as `scripts/semble-corpus.sh` fetches them.
    #[arg(long, default_value = "/tmp/semble-corpus")]
    pub corpus: PathBuf,
    /// Only this repository (repeatable; all fetched ones when absent).
    #[arg(long = "repo")]
    pub repos: Vec<String>,
    /// Rank by words alone, without the model.
    #[arg(long)]
    pub words_only: bool,
    #[arg(long)]
    pub json: bool,
    /// Each query's figures and best files, on stderr.
    #[arg(long)]
    pub queries: bool,
    /// Leave out parts of the ranking step (fusion, definition, file-name,
    /// coherence; `Steps::NAMES`), to measure what each adds.
    #[arg(long, value_delimiter = ',')]
    pub without: Vec<String>,
    /// Rank the shipped list with these parts (or none) instead of the engine's
    /// (`Steps::SHIPPED`), as `suggest-eval --steps` does: which parts to ship.
    #[arg(long, value_delimiter = ',')]
    pub shipped_steps: Option<Vec<String>>,
}

#[derive(Serialize)]
struct RepoResult {
    repo: String,
    language: String,
    queries: usize,
    /// The ranking alone.
    ndcg10: f64,
    /// As shipped: the list of at most 8, or nothing.
    shipped: f64,
    by_category: BTreeMap<Category, f64>,
    ms_p50: f64,
    semble: Published,
}

#[derive(Serialize)]
struct Summary {
    repos: usize,
    queries: usize,
    ndcg10: f64,
    shipped: f64,
    semble: f64,
    by_category: Vec<(Category, f64, f64)>,
    /// Language, repositories, ours, shipped, semble's.
    by_language: Vec<(String, usize, f64, f64, f64)>,
    ms_p50: f64,
}

pub fn run(opts: &Options) -> Result<ExitCode> {
    let listing = annotations::load_repos(&opts.dir.join("repos.toml"))?;
    let steps = Steps::ALL.without(&opts.without)?;
    let shipped_steps = Steps::named_or_shipped(opts.shipped_steps.as_deref())?;
    let model = if opts.words_only {
        None
    } else {
        suggest::model::shared()
    };
    let store = Cache::from_env()?.root.join("semble-vectors");
    std::fs::create_dir_all(&store)
        .with_context(|| format!("cannot create {}", store.display()))?;
    let unknown: Vec<&String> = opts
        .repos
        .iter()
        .filter(|r| !listing.repos.contains_key(*r))
        .collect();
    anyhow::ensure!(
        unknown.is_empty(),
        "--repo {unknown:?}: not in {}",
        opts.dir.join("repos.toml").display()
    );
    let mut results = Vec::new();
    for (name, repo) in &listing.repos {
        if !opts.repos.is_empty() && !opts.repos.contains(name) {
            continue;
        }
        let root = opts.corpus.join(name);
        if !root.is_dir() {
            eprintln!(
                "{name}: not in {} (scripts/semble-corpus.sh fetches it)",
                opts.corpus.display()
            );
            continue;
        }
        let file = opts.dir.join("annotations").join(format!("{name}.json"));
        let queries = annotations::load_queries(&file)?;
        let ranker = Ranker {
            model,
            steps,
            shipped_steps,
        };
        results.push(eval_repo(
            name, repo, &root, &queries, ranker, &store, opts,
        )?);
    }
    anyhow::ensure!(
        !results.is_empty(),
        "no repository to measure under {}: scripts/semble-corpus.sh fetches them",
        opts.corpus.display()
    );
    let summary = summarize(&results);
    if opts.json {
        let out = serde_json::json!({ "summary": summary, "repos": results });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", table(&results, &summary));
    }
    Ok(ExitCode::SUCCESS)
}

fn eval_repo(
    name: &str,
    repo: &Repo,
    root: &Path,
    queries: &[Query],
    ranker: Ranker,
    store: &Path,
    opts: &Options,
) -> Result<RepoResult> {
    let engine = Engine::open(root, RuleConfig::default())
        .with_context(|| format!("{name}: cannot index {}", root.display()))?;
    let index = engine.index();
    if ranker.model.is_some() {
        suggest::prepare_with_store(index, store)?;
    }
    let files: Vec<&str> = index.files().map(|(p, _)| p).collect();
    let mut ranked_sum = 0.0;
    let mut shipped_sum = 0.0;
    let mut by_category: BTreeMap<Category, (f64, usize)> = BTreeMap::new();
    let mut times = Vec::new();
    for q in queries {
        let indexed = q
            .targets
            .iter()
            .filter(|t| files.iter().any(|f| path_matches(f, t)))
            .count();
        let start = Instant::now();
        let deep = ranker.rank(index, &q.query, DEPTH);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        let ranked = files_in_rank_order(deep.items.iter().map(|r| r.suggestion.file.as_str()));
        let score = ndcg(&ranked, &q.targets, indexed);
        let shown = suggest::rank_deep(
            index,
            &q.query,
            ranker.model,
            suggest::MAX_SUGGESTIONS,
            ranker.shipped_steps,
        );
        let shipped = if shown.silent {
            0.0
        } else {
            let files = files_in_rank_order(shown.items.iter().map(|r| r.suggestion.file.as_str()));
            ndcg(&files, &q.targets, indexed)
        };
        ranked_sum += score;
        shipped_sum += shipped;
        let c = by_category.entry(q.category).or_default();
        c.0 += score;
        c.1 += 1;
        if opts.queries {
            eprintln!(
                "{name} [{}] {score:.3} / shipped {shipped:.3}  {:?}  want {:?}  got {:?}",
                q.category.label(),
                q.query,
                q.targets,
                ranked.iter().take(3).collect::<Vec<_>>()
            );
        }
    }
    times.sort_by(f64::total_cmp);
    let n = queries.len().max(1) as f64;
    Ok(RepoResult {
        repo: name.to_string(),
        language: repo.language.clone(),
        queries: queries.len(),
        ndcg10: ranked_sum / n,
        shipped: shipped_sum / n,
        by_category: by_category
            .into_iter()
            .map(|(c, (s, k))| (c, s / k as f64))
            .collect(),
        ms_p50: times.get(times.len() / 2).copied().unwrap_or(0.0),
        semble: repo.semble,
    })
}

/// The model (or none) and the ranking step's parts a run ranks with.
#[derive(Clone, Copy)]
struct Ranker<'m> {
    model: Option<&'m Model>,
    steps: Steps,
    /// The parts the shipped list ranks with.
    shipped_steps: Steps,
}

impl Ranker<'_> {
    fn rank(&self, index: &Index, prompt: &str, depth: usize) -> Ranking {
        suggest::rank_deep(index, prompt, self.model, depth, self.steps)
    }
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Means over repositories: overall, per category (over the repositories that
/// have queries of it) and per language.
fn summarize(results: &[RepoResult]) -> Summary {
    let published = |r: &RepoResult, c: Category| match c {
        Category::Architecture => r.semble.architecture,
        Category::Semantic => r.semble.semantic,
        Category::Symbol => r.semble.symbol,
    };
    let by_category = Category::ALL
        .into_iter()
        .map(|c| {
            let ours = mean(
                results
                    .iter()
                    .filter_map(|r| r.by_category.get(&c).copied()),
            );
            let theirs = mean(results.iter().filter_map(|r| published(r, c)));
            (c, ours, theirs)
        })
        .collect();
    let mut languages: Vec<&str> = results.iter().map(|r| r.language.as_str()).collect();
    languages.sort();
    languages.dedup();
    let by_language = languages
        .into_iter()
        .map(|l| {
            let of: Vec<&RepoResult> = results.iter().filter(|r| r.language == l).collect();
            (
                l.to_string(),
                of.len(),
                mean(of.iter().map(|r| r.ndcg10)),
                mean(of.iter().map(|r| r.shipped)),
                mean(of.iter().map(|r| r.semble.ndcg10)),
            )
        })
        .collect();
    let mut times: Vec<f64> = results.iter().map(|r| r.ms_p50).collect();
    times.sort_by(f64::total_cmp);
    Summary {
        repos: results.len(),
        queries: results.iter().map(|r| r.queries).sum(),
        ndcg10: mean(results.iter().map(|r| r.ndcg10)),
        shipped: mean(results.iter().map(|r| r.shipped)),
        semble: mean(results.iter().map(|r| r.semble.ndcg10)),
        by_category,
        by_language,
        ms_p50: times.get(times.len() / 2).copied().unwrap_or(0.0),
    }
}

fn table(results: &[RepoResult], s: &Summary) -> String {
    let mut out = format!(
        "{:<12} {:<11} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>9}\n",
        "repo",
        "language",
        "queries",
        "NDCG@10",
        "shipped",
        "semble",
        "arch",
        "sem",
        "sym",
        "p50 ms"
    );
    let cat = |r: &RepoResult, c| {
        r.by_category
            .get(&c)
            .map_or("-".to_string(), |v| format!("{v:.3}"))
    };
    for r in results {
        out += &format!(
            "{:<12} {:<11} {:>7} {:>8.3} {:>8.3} {:>8.3} {:>7} {:>7} {:>7} {:>9.2}\n",
            r.repo,
            r.language,
            r.queries,
            r.ndcg10,
            r.shipped,
            r.semble.ndcg10,
            cat(r, Category::Architecture),
            cat(r, Category::Semantic),
            cat(r, Category::Symbol),
            r.ms_p50
        );
    }
    out += &format!(
        "\noverall ({} repositories, {} queries): NDCG@10 {:.3} ranking only, {:.3} as shipped; semble hybrid {:.3}; median of the repositories' p50 {:.2} ms\n",
        s.repos, s.queries, s.ndcg10, s.shipped, s.semble, s.ms_p50
    );
    for (c, ours, theirs) in &s.by_category {
        out += &format!("  {:<13} {ours:.3}  semble {theirs:.3}\n", c.label());
    }
    for (l, n, ours, shipped, theirs) in &s.by_language {
        out += &format!(
            "  {l:<13} {ours:.3}  shipped {shipped:.3}  semble {theirs:.3}  ({n} repositories)\n"
        );
    }
    out
}
