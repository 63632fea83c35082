//! `sens-bench engine suggest-eval CASES`: the engine's suggestions against a file
//! of labelled prompts, on projects fetched by name and version.
//!
//! The case file (TOML):
//!
//! ```toml
//! [projects.boltons]
//! pypi = "boltons==24.0.0"        # or npm = "immer@10.1.1", crate = "semver@1.0.27",
//!                                 # self = "<commit of this repository>", path = "dir"
//! [[cases]]
//! project = "boltons"
//! kind = "far"                    # far | near | none
//! prompt = "a request in a user's words"
//! expected = ["slugify"]          # symbol names; one of them is the answer
//! acceptable = ["split_punct_ws"] # also relevant: a list holding one is not wrong
//! holdout = true                  # kept out of tuning (reported apart)
//! ```
//!
//! `far`: the helper's name shares no word with the prompt; `near`: it does;
//! `none`: the project has nothing relevant (`expected` stays empty). Figures:
//! hit@8 and MRR over far and near cases (the rank of the first expected symbol),
//! the wrong-list rate (a non-empty list holding no expected or acceptable symbol)
//! over far and near cases, the empty-list rate over `none` cases, and the hits
//! with every list shown (what the ranking allows, whatever the silence). Sources
//! are fetched once into the cache (`suggest/` next to `pypi/`); `path` is relative
//! to the case file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sens_engine::Engine;
use sens_engine::cache::IndexCache;
use sens_engine::config::RuleConfig;
use sens_engine::suggest::{self, Ranking, Steps};
use serde::{Deserialize, Serialize};

use crate::workspace::Workspace;
use crate::workspace::cache::{Cache, download_sdist};
use crate::workspace::sources::unpack_sdist;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub projects: BTreeMap<String, ProjectSource>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectSource {
    pypi: Option<String>,
    npm: Option<String>,
    #[serde(rename = "crate")]
    krate: Option<String>,
    #[serde(rename = "self")]
    self_rev: Option<String>,
    path: Option<PathBuf>,
    /// A bench task folder: its source as a run materializes it.
    pub(crate) task: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Far,
    Near,
    /// The fix belongs in one existing function every caller goes through.
    Common,
    None,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Far, Kind::Near, Kind::Common, Kind::None];

    /// The kind as a case file spells it.
    fn label(self) -> &'static str {
        match self {
            Kind::Far => "far",
            Kind::Near => "near",
            Kind::Common => "common",
            Kind::None => "none",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub project: String,
    pub kind: Kind,
    #[serde(default)]
    pub prompt: String,
    /// The prompt in a file, relative to the case file (instead of `prompt`).
    pub prompt_file: Option<PathBuf>,
    #[serde(default)]
    pub expected: Vec<String>,
    #[serde(default)]
    pub acceptable: Vec<String>,
    #[serde(default)]
    pub holdout: bool,
}

/// What the engine answered for one case.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub project: String,
    pub kind: Kind,
    pub holdout: bool,
    pub prompt: String,
    /// 1-based rank of the first expected symbol.
    pub rank: Option<usize>,
    /// An expected symbol is among the ranking's items, shown or silenced.
    pub ranked_hit: bool,
    /// The list is non-empty and holds nothing expected or acceptable.
    pub wrong: bool,
    pub empty: bool,
    pub confidence: f64,
    /// The best cosine of any candidate to the prompt, when the model ranked.
    pub best_cosine: Option<f64>,
    /// The list given.
    pub names: Vec<String>,
    /// The ranking's items, also when silenced.
    pub ranked: Vec<String>,
}

/// The figures over a set of outcomes.
#[derive(Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub reuse_cases: usize,
    pub hits: usize,
    pub hit_at_8: f64,
    /// Reuse cases whose expected symbol is among the ranked items, the silence
    /// aside: the most hits any silence rule could give with this ranking.
    pub hits_shown_always: usize,
    pub mrr: f64,
    pub wrong_lists: usize,
    pub wrong_list_rate: f64,
    pub none_cases: usize,
    pub empty_lists: usize,
    pub empty_list_rate: f64,
}

pub fn load(path: &Path) -> Result<CaseFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut file: CaseFile = toml::from_str(&text)
        .with_context(|| format!("{} is not a valid case file", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    for (i, case) in file.cases.iter_mut().enumerate() {
        let at = || format!("{}: cases[{i}]", path.display());
        match (&case.prompt_file, case.prompt.is_empty()) {
            (Some(prompt_file), true) => {
                let prompt_path = base.join(prompt_file);
                case.prompt = std::fs::read_to_string(&prompt_path).with_context(|| {
                    format!(
                        "{}: field `prompt_file`: cannot read {}",
                        at(),
                        prompt_path.display()
                    )
                })?;
            }
            (None, false) => {}
            _ => bail!("{}: give exactly one of `prompt` and `prompt_file`", at()),
        }
        if !file.projects.contains_key(&case.project) {
            bail!(
                "{}: field `project`: no project `{}` in [projects]",
                at(),
                case.project
            );
        }
        match (case.kind, case.expected.is_empty()) {
            (Kind::None, false) => bail!("{}: field `expected` must be empty for kind none", at()),
            (Kind::Far | Kind::Near | Kind::Common, true) => {
                bail!(
                    "{}: field `expected` names no symbol for a reuse case",
                    at()
                )
            }
            _ => {}
        }
    }
    check_projects(&file.projects, path)?;
    Ok(file)
}

/// Each project gives exactly one source.
pub(crate) fn check_projects(
    projects: &BTreeMap<String, ProjectSource>,
    path: &Path,
) -> Result<()> {
    for (name, source) in projects {
        let given = [
            source.pypi.is_some(),
            source.npm.is_some(),
            source.krate.is_some(),
            source.self_rev.is_some(),
            source.path.is_some(),
            source.task.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            bail!(
                "{}: projects.{name}: give exactly one of `pypi`, `npm`, `crate`, `self`, `path`, `task`",
                path.display()
            );
        }
    }
    Ok(())
}

/// The outcome of one ranking against a case's labels, the list silenced under
/// `min_confidence`.
pub fn judge(case: &Case, ranking: &Ranking, min_confidence: f64) -> Outcome {
    let ranked: Vec<String> = ranking
        .items
        .iter()
        .map(|r| r.suggestion.name.clone())
        .collect();
    let names = if ranking.shown_at(min_confidence) {
        ranked.clone()
    } else {
        Vec::new()
    };
    let rank = names
        .iter()
        .position(|n| case.expected.contains(n))
        .map(|i| i + 1);
    let relevant = names
        .iter()
        .any(|n| case.expected.contains(n) || case.acceptable.contains(n));
    Outcome {
        project: case.project.clone(),
        kind: case.kind,
        holdout: case.holdout,
        prompt: case.prompt.clone(),
        rank,
        ranked_hit: ranked.iter().any(|n| case.expected.contains(n)),
        wrong: !names.is_empty() && !relevant,
        empty: names.is_empty(),
        confidence: ranking.confidence,
        best_cosine: ranking.model.map(|m| m.best_cosine),
        names,
        ranked,
    }
}

pub fn figures<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Figures {
    let mut f = Figures::default();
    let mut reciprocal = 0.0;
    for o in outcomes {
        if o.kind == Kind::None {
            f.none_cases += 1;
            f.empty_lists += usize::from(o.empty);
        } else {
            f.reuse_cases += 1;
            f.hits += usize::from(o.rank.is_some());
            f.hits_shown_always += usize::from(o.ranked_hit);
            f.wrong_lists += usize::from(o.wrong);
            reciprocal += o.rank.map_or(0.0, |r| 1.0 / r as f64);
        }
    }
    let share = |k: usize, n: usize| if n == 0 { 0.0 } else { k as f64 / n as f64 };
    f.hit_at_8 = share(f.hits, f.reuse_cases);
    f.mrr = if f.reuse_cases == 0 {
        0.0
    } else {
        reciprocal / f.reuse_cases as f64
    };
    f.wrong_list_rate = share(f.wrong_lists, f.reuse_cases);
    f.empty_list_rate = share(f.empty_lists, f.none_cases);
    f
}

/// The figures of each kind the outcomes hold, in [`Kind::ALL`]'s order.
pub fn figures_by_kind(outcomes: &[Outcome]) -> Vec<(Kind, Figures)> {
    Kind::ALL
        .into_iter()
        .filter(|&kind| outcomes.iter().any(|o| o.kind == kind))
        .map(|kind| (kind, figures(outcomes.iter().filter(|o| o.kind == kind))))
        .collect()
}

#[derive(Serialize)]
struct Report<'a> {
    all: Figures,
    tuning: Figures,
    holdout: Figures,
    /// Each kind's figures (kinds the file holds).
    by_kind: Vec<(Kind, Figures)>,
    /// The tuning cases' figures with the minimum confidence at another value.
    sweep: Vec<(f64, Figures)>,
    speed: Vec<Speed>,
    outcomes: &'a [Outcome],
}

/// The time of one suggestion on a project with its index resident.
#[derive(Serialize)]
struct Speed {
    project: String,
    /// Functions and classes indexed.
    symbols: usize,
    ms_p50: f64,
    samples: usize,
    /// Symbols the model embedded for this project (0 without a model, or
    /// when an earlier project of the file or the vector cache had the same
    /// texts).
    embedded: usize,
    /// Vectors read from the on-disk cache for this project.
    read: usize,
    /// The time to have every candidate's vector: read, embedded, written.
    embed_seconds: f64,
}

/// Each case's ranking is timed this many times.
const TIMINGS: usize = 5;

/// Minimum confidences the sweep tries.
const SWEEP: [f64; 10] = [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2];

/// The engine on a case project, with the harness's index cache, which also
/// keeps the symbol vectors (docs/caches.md), unless `cold`; every candidate's
/// vector made (the model's background pass, in the foreground). Returns the
/// engine and how many vectors it embedded.
pub fn open_engine(root: &Path, cache: &Cache, cold: bool) -> Result<(Engine, usize)> {
    let cfg = RuleConfig::default();
    let index_cache = match cold {
        true => None,
        false => Some(IndexCache::open(&cache.engine_index()?, &cfg)?),
    };
    let engine = Engine::open_with_cache(root, cfg, index_cache.as_ref())
        .with_context(|| format!("cannot index {}", root.display()))?;
    let embedded = engine.prepare_suggestions()?;
    Ok((engine, embedded))
}

/// Vectors read from on-disk caches by this process so far.
fn vectors_read() -> usize {
    suggest::model::shared().map_or(0, |m| m.vector_counts().read)
}

pub fn run(cases_path: &Path, json: bool, cold: bool, steps: Steps) -> Result<ExitCode> {
    let file = load(cases_path)?;
    let base = cases_path.parent().unwrap_or(Path::new("."));
    let cache = Cache::from_env()?;
    let mut rankings: Vec<(&Case, Ranking)> = Vec::new();
    let mut speed = Vec::new();
    for (name, source) in &file.projects {
        let cases: Vec<&Case> = file.cases.iter().filter(|c| &c.project == name).collect();
        if cases.is_empty() {
            continue;
        }
        let (root, _copy) = fetch(source, base, &cache)
            .with_context(|| format!("{}: projects.{name}", cases_path.display()))?;
        // The vectors timed apart (the index included): the suggestion's time
        // is with every vector made.
        let (read_before, start) = (vectors_read(), Instant::now());
        let (engine, embedded) =
            open_engine(&root, &cache, cold).with_context(|| format!("projects.{name}"))?;
        let embed_seconds = start.elapsed().as_secs_f64();
        let read = vectors_read() - read_before;
        let mut times = Vec::new();
        for case in cases {
            for _ in 1..TIMINGS {
                let start = Instant::now();
                std::hint::black_box(suggest::rank_steps(engine.index(), &case.prompt, steps));
                times.push(start.elapsed().as_secs_f64() * 1000.0);
            }
            let start = Instant::now();
            let ranking = suggest::rank_steps(engine.index(), &case.prompt, steps);
            times.push(start.elapsed().as_secs_f64() * 1000.0);
            rankings.push((case, ranking));
        }
        times.sort_by(f64::total_cmp);
        speed.push(Speed {
            project: name.clone(),
            symbols: engine
                .index()
                .units()
                .filter(|(_, u)| u.data.kind.is_symbol())
                .count(),
            ms_p50: times[times.len() / 2],
            samples: times.len(),
            embedded,
            read,
            embed_seconds,
        });
    }
    let judged = |min: f64| -> Vec<Outcome> {
        rankings
            .iter()
            .map(|(case, r)| judge(case, r, min))
            .collect()
    };
    let outcomes = judged(suggest::MIN_CONFIDENCE);
    let sweep = SWEEP
        .iter()
        .map(|&min| (min, figures(judged(min).iter().filter(|o| !o.holdout))))
        .collect();
    let report = Report {
        all: figures(&outcomes),
        tuning: figures(outcomes.iter().filter(|o| !o.holdout)),
        holdout: figures(outcomes.iter().filter(|o| o.holdout)),
        by_kind: figures_by_kind(&outcomes),
        sweep,
        speed,
        outcomes: &outcomes,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn table(r: &Report) -> String {
    let mut out = String::new();
    for o in r.outcomes {
        let verdict = match (o.kind, o.rank, o.empty, o.wrong) {
            (_, Some(rank), _, _) => format!("hit@{rank}"),
            (Kind::None, _, true, _) => "empty".to_string(),
            (_, _, true, _) => "EMPTY".to_string(),
            (_, _, _, true) => "WRONG".to_string(),
            _ => "miss".to_string(),
        };
        let kind = o.kind.label();
        let held = if o.holdout { "H" } else { " " };
        out.push_str(&format!(
            "{verdict:<7} {kind:<4} {held} {:.2} {:<10} {}\n        -> {}\n",
            o.confidence,
            o.project,
            headline(&o.prompt),
            if o.empty {
                format!("(silent: {})", o.ranked.join(", "))
            } else {
                o.names.join(", ")
            }
        ));
    }
    let kinds = r
        .by_kind
        .iter()
        .map(|(kind, f)| (kind.label().to_string(), f));
    let sweep = r.sweep.iter().map(|(min, f)| (format!("min {min:.2}"), f));
    let rows = [
        ("all", &r.all),
        ("tuning", &r.tuning),
        ("holdout", &r.holdout),
    ]
    .into_iter()
    .map(|(label, f)| (label.to_string(), f))
    .chain(kinds)
    .chain(sweep);
    for (label, f) in rows {
        out.push_str(&format!(
            "{label:<9} hit@8 {}/{} ({:.0}%)  MRR {:.2}  shown always {}  wrong lists {}/{} ({:.0}%)  empty for none {}/{} ({:.0}%)\n",
            f.hits,
            f.reuse_cases,
            100.0 * f.hit_at_8,
            f.mrr,
            f.hits_shown_always,
            f.wrong_lists,
            f.reuse_cases,
            100.0 * f.wrong_list_rate,
            f.empty_lists,
            f.none_cases,
            100.0 * f.empty_list_rate
        ));
    }
    for s in &r.speed {
        out.push_str(&format!(
            "{:<20} suggestion p50 {:.2} ms over {} runs, index resident ({} symbols)",
            s.project, s.ms_p50, s.samples, s.symbols
        ));
        if s.embedded + s.read > 0 {
            out.push_str(&format!(
                "; vectors: {} embedded, {} read, in {:.2} s with the index",
                s.embedded, s.read, s.embed_seconds
            ));
        }
        out.push('\n');
    }
    out
}

/// A prompt's first line, cut to fit a table row.
fn headline(prompt: &str) -> String {
    let line = prompt.lines().next().unwrap_or("");
    match line.char_indices().nth(90) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The project's source folder, fetched into the cache the first time (a task's
/// copy lives as long as the workspace returned with it).
pub(crate) fn fetch(
    source: &ProjectSource,
    base: &Path,
    cache: &Cache,
) -> Result<(PathBuf, Option<Workspace>)> {
    if let Some(path) = &source.path {
        return Ok((base.join(path), None));
    }
    if let Some(dir) = &source.task {
        let task = crate::spec::task::load_task(&base.join(dir))?;
        let copy = Workspace::for_task(&task, cache)?;
        return Ok((copy.root.clone(), Some(copy)));
    }
    if let Some(spec) = &source.krate {
        return Ok((crate_source(spec)?, None));
    }
    let (kind, spec) = match (&source.pypi, &source.npm, &source.self_rev) {
        (Some(s), _, _) => ("pypi", s),
        (_, Some(s), _) => ("npm", s),
        (_, _, Some(s)) => ("self", s),
        _ => bail!("no source given"),
    };
    let dest = cache
        .root
        .join("suggest")
        .join(format!("{kind}-{}", spec.replace(['/', '='], "_")));
    if dest.join(".complete").exists() {
        return Ok((dest, None));
    }
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .with_context(|| format!("cannot clear {}", dest.display()))?;
    }
    std::fs::create_dir_all(&dest).with_context(|| format!("cannot create {}", dest.display()))?;
    match kind {
        "pypi" => {
            let (name, version) = spec
                .split_once("==")
                .with_context(|| format!("field `pypi`: `{spec}` is not NAME==VERSION"))?;
            let sdist = download_sdist(cache, name, version)?;
            unpack_sdist(&sdist, &dest)?;
        }
        "npm" => {
            let tarball = npm_pack(spec, &dest)?;
            unpack_sdist(&tarball, &dest)?;
            std::fs::remove_file(&tarball)
                .with_context(|| format!("cannot remove {}", tarball.display()))?;
        }
        _ => git_archive(base, spec, &dest)?,
    }
    std::fs::write(dest.join(".complete"), "")
        .with_context(|| format!("cannot write into {}", dest.display()))?;
    Ok((dest, None))
}

fn checked(cmd: &mut Command, what: &str) -> Result<Vec<u8>> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// `npm pack NAME@VERSION` into `dest`; the tarball's path.
fn npm_pack(spec: &str, dest: &Path) -> Result<PathBuf> {
    let out = checked(
        Command::new("npm")
            .args(["pack", "--silent", spec, "--pack-destination"])
            .arg(dest),
        &format!("field `npm`: `npm pack {spec}`"),
    )?;
    let name = String::from_utf8_lossy(&out)
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    Ok(dest.join(name))
}

/// A commit of the repository holding the case file, as files.
fn git_archive(base: &Path, rev: &str, dest: &Path) -> Result<()> {
    let tar = checked(
        Command::new("git")
            .arg("-C")
            .arg(base)
            .args(["archive", "--format=tar", rev]),
        &format!("field `self`: `git archive {rev}`"),
    )?;
    tar::Archive::new(tar.as_slice())
        .unpack(dest)
        .with_context(|| format!("cannot unpack {rev} into {}", dest.display()))
}

/// A crate `NAME@VERSION` as cargo unpacks it into `$CARGO_HOME/registry/src`;
/// fetched with `cargo fetch` when it is not there yet.
fn crate_source(spec: &str) -> Result<PathBuf> {
    let (name, version) = spec
        .split_once('@')
        .with_context(|| format!("field `crate`: `{spec}` is not NAME@VERSION"))?;
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("field `crate`: neither CARGO_HOME nor HOME is set")?;
    let find = || -> Option<PathBuf> {
        std::fs::read_dir(home.join("registry/src"))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join(format!("{name}-{version}")))
            .find(|p| p.is_dir())
    };
    if let Some(found) = find() {
        return Ok(found);
    }
    let tmp = tempfile::tempdir().context("cannot create a temporary folder")?;
    std::fs::write(
        tmp.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[lib]\npath = \"lib.rs\"\n[dependencies]\n{name} = \"={version}\"\n"
        ),
    )?;
    std::fs::write(tmp.path().join("lib.rs"), "")?;
    checked(
        Command::new("cargo").arg("fetch").current_dir(tmp.path()),
        &format!("field `crate`: `cargo fetch` of {spec}"),
    )?;
    find().with_context(|| format!("field `crate`: cargo fetched {spec} but it is not unpacked"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sens_engine::finding::Suggestion;
    use sens_engine::suggest::Ranked;

    fn ranking(names: &[&str], confidence: f64) -> Ranking {
        Ranking {
            words: Vec::new(),
            confidence,
            model: None,
            silent: confidence < suggest::MIN_CONFIDENCE,
            items: names
                .iter()
                .map(|n| Ranked {
                    suggestion: Suggestion {
                        name: n.to_string(),
                        signature: String::new(),
                        file: String::new(),
                        line: 1,
                        usages: 0,
                        score: 1.0,
                    },
                    coverage: 0.5,
                    matches: Vec::new(),
                    cosine: None,
                })
                .collect(),
        }
    }

    fn case(kind: Kind, expected: &[&str], acceptable: &[&str]) -> Case {
        Case {
            project: "p".into(),
            kind,
            prompt: String::new(),
            prompt_file: None,
            expected: expected.iter().map(|s| s.to_string()).collect(),
            acceptable: acceptable.iter().map(|s| s.to_string()).collect(),
            holdout: false,
        }
    }

    #[test]
    fn figures_follow_the_labels() {
        let outcomes = [
            judge(
                &case(Kind::Far, &["a"], &[]),
                &ranking(&["x", "a"], 0.5),
                0.3,
            ),
            judge(
                &case(Kind::Near, &["b"], &["y"]),
                &ranking(&["y"], 0.5),
                0.3,
            ),
            judge(&case(Kind::Far, &["c"], &[]), &ranking(&["z"], 0.5), 0.3),
            judge(&case(Kind::Far, &["d"], &[]), &ranking(&["d"], 0.1), 0.3),
            judge(&case(Kind::None, &[], &[]), &ranking(&["q"], 0.1), 0.3),
            judge(&case(Kind::None, &[], &[]), &ranking(&["q"], 0.5), 0.3),
        ];
        let f = figures(&outcomes);
        assert_eq!((f.reuse_cases, f.hits, f.wrong_lists), (4, 1, 1));
        // `d` is ranked first but silenced.
        assert_eq!(f.hits_shown_always, 2);
        assert!((f.mrr - 0.5 / 4.0).abs() < 1e-12);
        assert_eq!((f.none_cases, f.empty_lists), (2, 1));
        assert!((f.empty_list_rate - 0.5).abs() < 1e-12);
    }

    #[test]
    fn each_kind_held_gets_its_own_figures() {
        let outcomes = [
            judge(&case(Kind::Far, &["a"], &[]), &ranking(&["a"], 0.5), 0.3),
            judge(&case(Kind::Far, &["b"], &[]), &ranking(&["z"], 0.5), 0.3),
            judge(&case(Kind::Common, &["c"], &[]), &ranking(&["c"], 0.5), 0.3),
            judge(&case(Kind::None, &[], &[]), &ranking(&["q"], 0.1), 0.3),
        ];
        let kinds = figures_by_kind(&outcomes);
        let summary: Vec<_> = kinds
            .iter()
            .map(|(kind, f)| {
                (
                    kind.label(),
                    f.reuse_cases,
                    f.hits,
                    f.wrong_lists,
                    f.empty_lists,
                )
            })
            .collect();
        // No near case: no near row.
        assert_eq!(
            summary,
            [
                ("far", 2, 1, 1, 0),
                ("common", 1, 1, 0, 0),
                ("none", 0, 0, 0, 1)
            ]
        );
    }
}
