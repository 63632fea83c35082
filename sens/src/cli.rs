//! `sens ...` (in the harness `sens-bench engine ...`): the engine on the command
//! line (docs/contract.md, "The engine on the command line"). Each command builds the
//! index of a folder and prints a small table, or the binding JSON with `--json`;
//! `install`, `hook`, `mcp`, `approve`, `reject`, `status` and `serve` are Sens in a
//! person's own Claude Code (`crate::resident`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use sens_engine::Engine;
use sens_engine::cache::IndexCache;
use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::finding::{Finding, Suggestion};
use sens_engine::index::{BuildReport, Index, Unit};
use sens_engine::judge::Judge;
use sens_engine::session::DEFAULT_HOOK_TIMEOUT_SECS;
use sens_engine::shared_lines::{SharedLines, shared_lines};
use sens_engine::suggest::vector_cache::VectorCounts;
use sens_engine::suggest::{self, Ranking};
use sens_engine::walk::WalkOptions;
use serde::Serialize;

use crate::invocation::Invocation;
use crate::resident::install::{self, HookCommand};
use crate::resident::{Project, client, server};

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index a project: files, units by kind and language, parse errors, time per phase.
    Index {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Take unchanged files' parses from this on-disk cache folder and
        /// store the others there (e.g. DIR/.sens/cache).
        #[arg(long, value_name = "CACHE")]
        cache: Option<PathBuf>,
    },
    /// Every duplicate group the rules would see (exact, renamed, near).
    Dupes {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Smallest unit reported, in normalized tokens (default: the rules' floor).
        #[arg(long)]
        min_tokens: Option<usize>,
    },
    /// The PreToolUse verdict for writing NEWFILE's content to PATH in DIR: exit 0
    /// on allow, 1 on deny.
    Check {
        dir: PathBuf,
        /// Where the content would be written, relative to DIR or absolute.
        #[arg(long = "file")]
        file: PathBuf,
        /// A file holding the content to write.
        #[arg(long = "content")]
        content: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Up to 8 existing symbols relevant to a prompt, or none.
    Suggest {
        dir: PathBuf,
        prompt: String,
        #[arg(long)]
        json: bool,
        /// Per item, the fields and words that scored, and the list's confidence
        /// (items are shown even when the engine would say nothing).
        #[arg(long)]
        explain: bool,
        /// The on-disk cache of parses and symbol vectors (default: the resident
        /// engine's, DIR/.sens/index-cache).
        #[arg(long, value_name = "CACHE")]
        cache: Option<PathBuf>,
    },
    /// Distil the static model from the installed transformer (SENS_SUGGEST_MODEL
    /// or .tools/minilm), kept beside its weights; a no-op when it is there.
    Distill,
    /// Time a full index (per phase), copy lookups and one-file re-indexes, and
    /// jscpd on the same folder when installed.
    Bench {
        dir: PathBuf,
        /// Full index runs; the fastest is reported.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Times the PreToolUse verdict row is repeated on the one open engine
        /// (each run's p50 and p99 printed, then the worst p99).
        #[arg(long, default_value_t = 1)]
        verdict_runs: usize,
    },
    /// Register Sens's hooks in DIR/.claude/settings.json, merged with the
    /// person's own (a backup is kept under DIR/.sens/). DIR must be the top
    /// folder of a git repository.
    Install {
        dir: PathBuf,
        #[command(flatten)]
        resident: ResidentArgs,
    },
    /// Remove every hook and server of Sens's, edited or not (a file restored
    /// byte for byte when its backup proves to be the original).
    Uninstall { dir: PathBuf },
    /// The hook command: the hook input on stdin, the resident engine's answer
    /// on stdout (exit 2, blocking, when the engine cannot answer in time).
    Hook {
        /// The project (default: CLAUDE_PROJECT_DIR, set by Claude Code).
        dir: Option<PathBuf>,
        #[command(flatten)]
        resident: ResidentArgs,
    },
    /// The query tools as a stdio MCP server (the command `install` writes into
    /// DIR/.mcp.json): JSON-RPC lines on stdin answered by the resident engine.
    Mcp {
        dir: PathBuf,
        /// Seconds without a request after which the resident engine exits.
        #[arg(long, default_value_t = DEFAULT_IDLE_SECS)]
        idle_secs: u64,
    },
    /// Make the project as it stands the approved state (ends a pause).
    Approve { dir: PathBuf },
    /// Restore the approved state after confirming; the rejected state is kept
    /// under refs/sens/rejected/N.
    Reject {
        dir: PathBuf,
        /// Do not ask.
        #[arg(long)]
        yes: bool,
    },
    /// The engine process, index size, approved point, pending findings and last
    /// decisions.
    Status { dir: PathBuf },
    /// Run the resident engine of DIR in the foreground (the hook starts it
    /// detached when none answers).
    Serve {
        dir: PathBuf,
        /// Exit after this many seconds without a request.
        #[arg(long, default_value_t = DEFAULT_IDLE_SECS)]
        idle_secs: u64,
    },
}

/// Seconds without a request after which the resident engine exits.
const DEFAULT_IDLE_SECS: u64 = 1800;

/// The resident engine's settings, written into the hook command by `install`.
#[derive(Debug, clap::Args)]
pub struct ResidentArgs {
    /// The hook's timeout in the CLI (seconds): the hook answers before it.
    #[arg(long, default_value_t = DEFAULT_HOOK_TIMEOUT_SECS)]
    timeout_secs: u32,
    /// Seconds without a request after which the resident engine exits.
    #[arg(long, default_value_t = DEFAULT_IDLE_SECS)]
    idle_secs: u64,
}

/// `sens [--rules FILE] COMMAND`: the rules file (docs/rules.md, "Rules files")
/// applies to every command; without it the defaults.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A rules file (TOML with RuleConfig's fields; absent ones take the defaults).
    #[arg(long, global = true, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Runs one command as `invocation` (the binary that the hooks `install` writes
/// call, and that messages name).
pub fn run(args: Args, invocation: &Invocation) -> Result<ExitCode> {
    // Loaded before anything runs, so a malformed file stops the command at once.
    let cfg = RuleConfig::load(args.rules.as_deref())?;
    match args.command {
        Command::Index { dir, json, cache } => index(&dir, &cfg, json, cache.as_deref()),
        Command::Dupes {
            dir,
            json,
            min_tokens,
        } => dupes(&dir, &cfg, json, min_tokens),
        Command::Check {
            dir,
            file,
            content,
            json,
        } => check(&dir, &cfg, &file, &content, json),
        Command::Suggest {
            dir,
            prompt,
            json,
            explain,
            cache,
        } => suggest(&dir, &cfg, &prompt, (json, explain), cache),
        Command::Distill => distill(),
        Command::Bench {
            dir,
            runs,
            verdict_runs,
        } => crate::bench::bench(&dir, &cfg, runs, verdict_runs),
        Command::Install { dir, resident } => {
            let project = Project::new(&dir)?;
            let rules = args.rules.as_deref().map(absolute).transpose()?;
            let command = HookCommand {
                invocation: invocation.clone(),
                project: project.root.clone(),
                rules,
                timeout_secs: resident.timeout_secs,
                idle_secs: resident.idle_secs,
            };
            println!("{}", install::install(&project, &command)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Uninstall { dir } => {
            println!("{}", install::uninstall(&Project::new(&dir)?)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Hook { dir, resident } => Ok(client::hook(
            dir.as_deref(),
            args.rules,
            invocation,
            Duration::from_secs(resident.timeout_secs.into()),
            Duration::from_secs(resident.idle_secs),
        )),
        Command::Mcp { dir, idle_secs } => client::mcp(&client::Launch {
            idle: Duration::from_secs(idle_secs),
            ..launch(&dir, args.rules, invocation)?
        }),
        Command::Approve { dir } => client::approve(&launch(&dir, args.rules, invocation)?),
        Command::Reject { dir, yes } => client::reject(&launch(&dir, args.rules, invocation)?, yes),
        Command::Status { dir } => client::status(&Project::new(&dir)?, invocation),
        Command::Serve { dir, idle_secs } => server::serve(
            &Project::new(&dir)?,
            &cfg,
            invocation,
            Duration::from_secs(idle_secs),
        ),
    }
}

/// How `approve` and `reject` start the engine when none runs.
fn launch(dir: &Path, rules: Option<PathBuf>, invocation: &Invocation) -> Result<client::Launch> {
    Ok(client::Launch {
        project: Project::new(dir)?,
        rules,
        invocation: invocation.clone(),
        idle: Duration::from_secs(DEFAULT_IDLE_SECS),
    })
}

fn absolute(path: &Path) -> Result<PathBuf> {
    path.canonicalize()
        .with_context(|| format!("the rules file {} does not exist", path.display()))
}

fn build(dir: &Path, cfg: &RuleConfig) -> Result<(Index, BuildReport)> {
    Index::build(dir, cfg.clone(), WalkOptions::default())
}

fn index(dir: &Path, cfg: &RuleConfig, json: bool, cache: Option<&Path>) -> Result<ExitCode> {
    let report = match cache {
        Some(cache) => {
            let cache = IndexCache::open(cache, cfg)?;
            let opts = WalkOptions::default();
            Index::build_with_sources(dir, cfg.clone(), opts, None, Some(&cache))?.1
        }
        None => build(dir, cfg)?.1,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", index_table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn index_table(r: &BuildReport) -> String {
    let mut out = String::new();
    let mut row = |k: &str, v: String| out.push_str(&format!("{k:<22}{v:>10}\n"));
    row("files", r.files.to_string());
    row("units", r.units.to_string());
    row("  functions", r.functions.to_string());
    row("  classes", r.classes.to_string());
    row("  windows", r.windows.to_string());
    row("modules", r.modules.to_string());
    row("parse errors", r.parse_errors.to_string());
    for (lang, n) in &r.languages {
        row(&format!("  {lang}"), format!("{n} files"));
    }
    for (reason, n) in &r.skipped {
        row(&format!("skipped {reason}"), n.to_string());
    }
    if let Some(cache) = &r.cache {
        row("cache hits", cache.hits.to_string());
        row("cache misses", cache.misses.to_string());
        row("cache rejected", cache.rejected.to_string());
        row("cache unwritten", cache.unwritten.to_string());
    }
    let s = &r.seconds;
    for (phase, secs) in [
        ("walk", s.walk),
        ("read", s.read),
        ("parse", s.parse),
        ("fingerprint", s.fingerprint),
        ("insert", s.insert),
        ("total", s.total),
    ] {
        row(&format!("seconds {phase}"), format!("{secs:.3}"));
    }
    out
}

#[derive(Serialize)]
struct DupesJson {
    groups: Vec<GroupJson>,
}

#[derive(Serialize)]
struct GroupJson {
    rule: &'static str,
    similarity: f64,
    units: Vec<UnitJson>,
    /// What its first two units share.
    why: SharedLines,
}

#[derive(Serialize)]
struct UnitJson {
    file: String,
    line: u32,
    end_line: u32,
    name: String,
}

fn dupes(dir: &Path, cfg: &RuleConfig, json: bool, min_tokens: Option<usize>) -> Result<ExitCode> {
    let (index, _) = build(dir, cfg)?;
    let min_tokens = min_tokens.unwrap_or(index.config().floor);
    let groups = dupes::groups(&index, min_tokens)
        .into_iter()
        .map(|g| {
            let units: Vec<&Unit> = g.units.iter().filter_map(|&id| index.unit(id)).collect();
            let read = |u: &Unit| std::fs::read_to_string(dir.join(&*u.file));
            let (first, second) = (units[0], units[1]);
            let why = shared_lines(
                &first.data,
                &second.data,
                [&first.file, &second.file],
                [&read(first)?, &read(second)?],
            );
            anyhow::Ok(GroupJson {
                rule: g.kind.rule(),
                similarity: g.similarity,
                units: units
                    .iter()
                    .map(|u| UnitJson {
                        file: u.file.to_string(),
                        line: u.data.start_line,
                        end_line: u.data.end_line,
                        name: u.data.name.clone(),
                    })
                    .collect(),
                why,
            })
        })
        .collect::<Result<_>>()?;
    let out = DupesJson { groups };
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", dupes_table(&out));
    }
    Ok(ExitCode::SUCCESS)
}

/// Line pairs a group's text shows (JSON has them all).
const SHOWN_LINE_PAIRS: usize = 12;

fn dupes_table(d: &DupesJson) -> String {
    let mut out = String::new();
    for g in &d.groups {
        out.push_str(&format!("{} (similarity {:.2})\n", g.rule, g.similarity));
        for u in &g.units {
            out.push_str(&format!(
                "  {}:{}-{}  {}\n",
                u.file, u.line, u.end_line, u.name
            ));
        }
        let why = &g.why;
        let identical = why.lines.iter().filter(|l| l.2).count();
        out.push_str(&format!(
            "  why: {} shingles shared (of {} and {}); {} lines of the second in the first, {identical} identical, {} the same shape only\n",
            why.shingles,
            why.of[0],
            why.of[1],
            why.lines.len(),
            why.lines.len() - identical
        ));
        // A few pairs of lines, `=` identical, `~` the same shape only.
        let pairs: Vec<String> = why
            .lines
            .iter()
            .take(SHOWN_LINE_PAIRS)
            .map(|&(a, b, same)| format!("{a}{}{b}", if same { '=' } else { '~' }))
            .collect();
        if !pairs.is_empty() {
            let more = if why.lines.len() > SHOWN_LINE_PAIRS {
                " ..."
            } else {
                ""
            };
            out.push_str(&format!("  lines: {}{more}\n", pairs.join(" ")));
        }
    }
    out.push_str(&format!("{} duplicate groups\n", d.groups.len()));
    out
}

#[derive(Serialize)]
struct CheckJson<'a> {
    verdict: &'static str,
    findings: &'a [Finding],
}

/// `deny` when any finding blocks.
pub fn verdict(findings: &[Finding]) -> &'static str {
    if findings.iter().any(|f| f.blocks) {
        "deny"
    } else {
        "allow"
    }
}

fn check(
    dir: &Path,
    cfg: &RuleConfig,
    file: &Path,
    content: &Path,
    json: bool,
) -> Result<ExitCode> {
    let text = std::fs::read_to_string(content)
        .with_context(|| format!("cannot read the new content from {}", content.display()))?;
    let mut engine = Engine::open(dir, cfg.clone())?;
    if engine.relative(file).is_none() {
        bail!(
            "{} is outside {}: --file must name a path inside the project",
            file.display(),
            dir.display()
        );
    }
    let findings = engine.check_write(file, &text)?;
    let verdict = verdict(&findings);
    if json {
        let out = CheckJson {
            verdict,
            findings: &findings,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{verdict}");
        for f in &findings {
            let kind = if f.blocks { "blocks" } else { "hint" };
            println!(
                "  {} ({kind}, {:.2}) {}:{} {}: {}",
                f.rule, f.similarity, f.new.file, f.new.line, f.new.name, f.message
            );
        }
    }
    Ok(if verdict == "deny" {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Serialize)]
struct SuggestJson<'a> {
    suggestions: &'a [Suggestion],
    /// The symbol vectors this command embedded and read (absent without a model).
    vectors: Option<VectorCounts>,
}

#[derive(Serialize)]
struct ExplainJson<'a> {
    #[serde(flatten)]
    ranking: &'a Ranking,
    vectors: Option<VectorCounts>,
}

fn suggest(
    dir: &Path,
    cfg: &RuleConfig,
    prompt: &str,
    (json, explain): (bool, bool),
    cache: Option<PathBuf>,
) -> Result<ExitCode> {
    let cache = match cache {
        Some(cache) => cache,
        None => Project::new(dir)?.index_cache(),
    };
    // Without a cache (a read-only project) every call parses and embeds again.
    let cache = IndexCache::open(&cache, cfg)
        .map_err(|e| eprintln!("sens: {e:#}: nothing is kept for the next call"))
        .ok();
    // The index alone: an engine would also keep large files' trees (parsing
    // them again) and read every file once more to stamp it, for a session this
    // command never has.
    // The model loads while the index is read: each takes a core for about
    // the same time (docs/experiments/suggestions.md, "A command-line
    // suggestion's time").
    std::thread::spawn(suggest::model::shared);
    let opts = WalkOptions::default();
    let index = Index::build_with_sources(dir, cfg.clone(), opts, None, cache.as_ref())?.0;
    // A command runs once: the model's background pass, in the foreground.
    let store = cache.as_ref().map(IndexCache::dir);
    if let Some(dir) = store {
        suggest::prepare_with_store(&index, dir)?;
    } else {
        suggest::prepare(&index);
    }
    let vectors = suggest::model::shared().map(|m| m.vector_counts());
    if explain {
        let ranking = suggest::rank(&index, prompt);
        if json {
            let out = ExplainJson {
                ranking: &ranking,
                vectors,
            };
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            print!("{}", explain_table(&ranking));
            if let Some(v) = vectors {
                println!("{}", vectors_line(v));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let suggestions = suggest::suggest_with_store(&index, prompt, store);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&SuggestJson {
                suggestions: &suggestions,
                vectors,
            })?
        );
    } else if suggestions.is_empty() {
        println!("no existing symbol is relevant enough");
    } else {
        for s in &suggestions {
            println!("{}", suggestion_line(s));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn distill() -> Result<ExitCode> {
    let dir = suggest::model::model_dir()?;
    let start = std::time::Instant::now();
    suggest::model::Model::load_static(&dir)?;
    println!(
        "the static model of {} is ready ({:.1} s)",
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn vectors_line(v: VectorCounts) -> String {
    let mut line = format!(
        "symbol vectors: {} embedded, {} read from the cache",
        v.embedded, v.read
    );
    if v.rejected > 0 {
        line.push_str(&format!(" ({} corrupt cache file rebuilt)", v.rejected));
    }
    line
}

fn suggestion_line(s: &Suggestion) -> String {
    format!(
        "{}:{}  {}  ({} usages, score {:.2})",
        s.file, s.line, s.signature, s.usages, s.score
    )
}

fn explain_table(r: &Ranking) -> String {
    let mut out = format!(
        "prompt words: {}\nconfidence {:.3} (minimum {:.3}): {}\n",
        r.words.join(" "),
        r.confidence,
        suggest::MIN_CONFIDENCE,
        if r.silent {
            "nothing is suggested"
        } else {
            "the list is given"
        }
    );
    if let Some(m) = r.model {
        out.push_str(&format!(
            "best cosine {:.3} (vouches from {:.2})\n",
            m.best_cosine, m.vouch
        ));
    }
    for item in &r.items {
        out.push_str(&format!(
            "{}\n    coverage {:.3}:",
            suggestion_line(&item.suggestion),
            item.coverage
        ));
        if let Some(c) = item.cosine {
            out.push_str(&format!(" cosine {c:.3}"));
        }
        for m in &item.matches {
            let fields: Vec<String> = m.fields.iter().map(|(f, n)| format!("{f}x{n}")).collect();
            out.push_str(&format!(
                " {} {:.2} [{}]",
                m.word,
                m.score,
                fields.join(" ")
            ));
        }
        out.push('\n');
    }
    out
}
