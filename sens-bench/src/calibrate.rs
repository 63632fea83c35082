//! `sens-bench calibrate`: measures the copy rules on a mutation corpus built
//! from real functions, labelled by construction. Each pair is an original
//! function and a text made from it (exact, renamed, reformatted by the
//! language's own formatter at other settings, renamed and reformatted, near
//! copies at several distances) or an unrelated function of similar size from
//! another corpus folder (another project). A pair is judged by indexing the original alone and asking the
//! engine's copy rules about a new file holding the other text: "denied" when a
//! blocking copy finding comes back. Recall and precision count those verdicts
//! against the labels, per mutation kind and language, for a sweep of
//! `threshold` with `floor`, with `min_shingles` and with `containment`; LSH candidate recall is set
//! against 1 - (1 - s^r)^b. Unrelated pairs are many per function (`--unrelated`:
//! the functions of other folders closest in size among all those found, not
//! only the drawn ones), so a false-positive rate under 1 % is measured on thousands.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};
use plotters::prelude::*;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use sens_engine::config::RuleConfig;
use sens_engine::fingerprint::{TokenClass, jaccard_at_least};
use sens_engine::index::Index;
use sens_engine::lang::Lang;
use sens_engine::rules::copy_findings;
use sens_engine::units::{self, ParsedFile, UnitKind};
use sens_engine::walk::{self, WalkOptions};

pub mod precision;

#[derive(clap::Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// Folders of real code to draw functions from (one or more).
    #[arg(long, num_args = 1.., required_unless_present = "labels")]
    pub corpus: Vec<PathBuf>,
    /// Labelled duplicate groups of real projects (JSON lines, see
    /// docs/precision.md): their precision is reported beside the recall.
    #[arg(long, requires = "projects")]
    pub labels: Option<PathBuf>,
    /// The folder holding each labelled project under its name
    /// (scripts/precision-corpus.sh fetches them).
    #[arg(long)]
    pub projects: Option<PathBuf>,
    /// Where the tables and plots go.
    #[arg(long)]
    pub out: PathBuf,
    /// Functions drawn per language.
    #[arg(long, default_value_t = 40)]
    pub per_language: usize,
    /// Normalized tokens a drawn function has at least and at most.
    #[arg(long, default_value_t = 80)]
    pub min_tokens: usize,
    #[arg(long, default_value_t = 600)]
    pub max_tokens: usize,
    /// Unrelated pairs per drawn function.
    #[arg(long, default_value_t = 10)]
    pub unrelated: usize,
    #[arg(long, default_value_t = 20260530)]
    pub seed: u64,
    /// A formatter setting `LANG=COMMAND` (repeatable; the command reads
    /// standard input): the settings given for a language replace its
    /// built-in list.
    #[arg(long = "formatter", value_parser = parse_formatter)]
    pub formatters: Vec<(String, Formatter)>,
    /// Where to write the pairs the defaults get wrong (a missed copy, a denied
    /// unrelated function) and the reformatted copies whose fingerprint
    /// changed, each as its two texts, to see what breaks.
    #[arg(long)]
    pub misses: Option<PathBuf>,
}

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

const THRESHOLDS: &[f64] = &[0.65, 0.70, 0.75, 0.80, 0.85, 0.90];
const FLOORS: &[usize] = &[50, 65, 80, 100];
const MIN_SHINGLES: &[usize] = &[16, 24, 32, 40];
const CONTAINMENTS: &[f64] = &[0.80, 0.85, 0.90, 0.95, 1.0];

/// A real function drawn from a corpus, as a text that parses on its own.
#[derive(Debug, Clone)]
struct Sample {
    lang: &'static Lang,
    /// `corpus-folder/relative/path:line`, for messages.
    origin: String,
    /// Which `--corpus` folder it comes from: unrelated pairs join two folders
    /// (another file of one project may hold a real copy, as pflag's typed
    /// getters are of each other).
    folder: usize,
    tokens: usize,
    text: String,
}

/// One labelled pair.
#[derive(Debug, Clone)]
struct Pair {
    lang: &'static Lang,
    kind: &'static str,
    /// The formatter setting of a reformatted kind.
    setting: Option<String>,
    original: String,
    copy: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    pub language: String,
    pub kind: String,
    pub pairs: usize,
    /// Denied pairs (for `unrelated`: wrongly denied).
    pub denied: usize,
    /// Denied share for copies; allowed share for `unrelated`.
    pub rate: f64,
}

/// The reformatted kinds of one formatter setting at the defaults.
#[derive(Debug, Clone, Serialize)]
pub struct SettingRate {
    pub language: String,
    pub setting: String,
    /// `reformatted` and `renamed+reformatted`, in that order.
    pub kinds: Vec<Rate>,
    /// Of each kind, in that order: the pairs whose copy kept the original's
    /// exact (renamed) fingerprint, denied as `copy.exact` (`copy.renamed`)
    /// rather than by similarity.
    pub same_fingerprint: Vec<usize>,
    /// Reformatted texts that differ from their input (a setting that changes
    /// nothing measures nothing).
    pub changed: usize,
    /// Samples the formatter failed on (left out, reported on standard error).
    pub failed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub threshold: f64,
    pub floor: usize,
    pub min_shingles: usize,
    pub containment: f64,
    /// Over every copy kind and language.
    pub recall: f64,
    pub precision: f64,
    /// Kind -> denied share (allowed share for `unrelated`), all languages.
    pub kinds: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LshBin {
    pub from: f64,
    pub to: f64,
    pub pairs: usize,
    /// The copy's band keys share one with the original's.
    pub recall: f64,
    pub theory: f64,
    /// Its band or leave-one-out keys do: what a copy lookup gets candidates from.
    pub with_leave_one_out: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub corpora: Vec<String>,
    pub config: RuleConfig,
    /// Language -> the formatter settings used, and those missing.
    pub formatters: BTreeMap<String, Vec<String>>,
    /// At the configured defaults.
    pub rates: Vec<Rate>,
    /// Per language and formatter setting, at the defaults.
    pub settings: Vec<SettingRate>,
    pub sweep: Vec<SweepRow>,
    pub lsh: Vec<LshBin>,
}

/// Measures recall on the mutation corpus (when `--corpus` is given) and
/// precision on the labelled groups (when `--labels` is), prints both and
/// writes them into `--out`.
pub fn run(args: &CalibrateArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    if !args.corpus.is_empty() {
        let calibration = calibrate(args)?;
        let markdown = markdown(&calibration);
        print!("{markdown}");
        write("calibration.md", &markdown)?;
        write(
            "calibration.json",
            &serde_json::to_string_pretty(&calibration)?,
        )?;
        plot(&calibration, &args.out)?;
    }
    if let (Some(labels), Some(projects)) = (&args.labels, &args.projects) {
        let measured = precision::measure(labels, projects, THRESHOLDS)?;
        let markdown = precision::markdown(&measured);
        print!("\n{markdown}");
        write("precision.md", &markdown)?;
        write("precision.json", &serde_json::to_string_pretty(&measured)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the corpus and measures it; writes nothing.
pub fn calibrate(args: &CalibrateArgs) -> Result<Calibration> {
    let defaults = RuleConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let samples = draw(args, &mut rng)?;
    let mut formatters = BTreeMap::new();
    let mut pairs = Vec::new();
    let mut outcomes = Vec::new();
    for (lang_samples, all) in samples.values() {
        let lang = lang_samples[0].lang;
        let (settings, missing) = settings_of(lang, &args.formatters);
        formatters.insert(
            lang.name().to_string(),
            settings
                .iter()
                .map(|f| format!("{}: `{}`", f.label, f.describe()))
                .chain(missing)
                .collect(),
        );
        let pool = statement_pool(lang_samples)?;
        let mut lang_outcomes = vec![Formatted::default(); settings.len()];
        for sample in lang_samples {
            let (mutated, formatted) = mutations(sample, &settings, &pool, &mut rng)?;
            pairs.extend(mutated);
            for (sum, one) in lang_outcomes.iter_mut().zip(formatted) {
                sum.changed += one.changed;
                sum.failed += one.failed;
            }
            pairs.extend(unrelated_to(sample, all, args.unrelated).map(|other| Pair {
                lang,
                kind: "unrelated",
                setting: None,
                original: sample.text.clone(),
                copy: other.text.clone(),
            }));
        }
        outcomes.extend(
            settings
                .into_iter()
                .zip(lang_outcomes)
                .map(|(f, outcome)| (lang.name(), f.label, outcome)),
        );
    }
    let mut sweep = Vec::new();
    let mut rates = Vec::new();
    let mut settings = Vec::new();
    let configs = sweep_configs(&defaults);
    // verdicts[config][pair]; each pair is parsed once for every config (the
    // swept fields do not change fingerprints).
    let mut verdicts = vec![Vec::with_capacity(pairs.len()); configs.len()];
    let mut same_fingerprints = Vec::with_capacity(pairs.len());
    for pair in &pairs {
        let parsed = ParsedPair::new(&defaults, pair)?;
        same_fingerprints.push(parsed.same_fingerprint());
        for (cfg, out) in configs.iter().zip(verdicts.iter_mut()) {
            out.push(parsed.denied(cfg)?);
        }
    }
    for (cfg, verdicts) in configs.into_iter().zip(verdicts) {
        if cfg == defaults {
            rates = rates_of(&pairs, &verdicts, true);
            settings = setting_rates(&pairs, &verdicts, &same_fingerprints, &outcomes);
            if let Some(dir) = &args.misses {
                write_misses(dir, &pairs, &verdicts, &same_fingerprints)?;
            }
        }
        sweep.push(sweep_row(&cfg, &pairs, &verdicts));
    }
    Ok(Calibration {
        corpora: args
            .corpus
            .iter()
            .map(|c| c.display().to_string())
            .collect(),
        config: defaults.clone(),
        formatters,
        rates,
        settings,
        sweep,
        lsh: lsh_recall(&defaults, &pairs)?,
    })
}

/// Writes each wrongly judged pair, and each reformatted one whose
/// fingerprint changed, as `NNNN-KIND[-SETTING].{original,copy}.EXT` into `dir`.
fn write_misses(
    dir: &Path,
    pairs: &[Pair],
    verdicts: &[bool],
    same_fingerprints: &[bool],
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let wrong = pairs
        .iter()
        .zip(verdicts.iter().zip(same_fingerprints))
        .filter(|(p, (denied, same))| {
            **denied == (p.kind == "unrelated") || (p.setting.is_some() && !**same)
        });
    for (n, (pair, _)) in wrong.enumerate() {
        let setting: String = pair
            .setting
            .iter()
            .flat_map(|s| std::iter::once('-').chain(s.chars()))
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("{n:04}-{}{setting}", pair.kind);
        for (side, text) in [("original", &pair.original), ("copy", &pair.copy)] {
            let path = dir.join(format!("{stem}.{side}.{}", extension(pair.lang)));
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// Every threshold with every floor, with every `min_shingles` and with every
/// containment, the other settings at their defaults.
fn sweep_configs(defaults: &RuleConfig) -> Vec<RuleConfig> {
    let mut configs = Vec::new();
    for &threshold in THRESHOLDS {
        for &floor in FLOORS {
            configs.push(RuleConfig {
                threshold,
                floor,
                ..defaults.clone()
            });
        }
        let varied = CONTAINMENTS
            .iter()
            .map(|&containment| RuleConfig {
                threshold,
                containment,
                ..defaults.clone()
            })
            .chain(MIN_SHINGLES.iter().map(|&min_shingles| RuleConfig {
                threshold,
                min_shingles,
                ..defaults.clone()
            }));
        for cfg in varied {
            if !configs.contains(&cfg) {
                configs.push(cfg);
            }
        }
    }
    configs
}

/// The drawn functions of a language, and every function found (the unrelated
/// draw).
type Drawn = (Vec<Sample>, Vec<Sample>);

/// Per language: up to `per_language` functions of a real size drawn at random
/// (seeded) from every corpus folder, and all of them. Methods that do not
/// parse alone are wrapped in a class (an `impl` in Rust).
fn draw(args: &CalibrateArgs, rng: &mut ChaCha8Rng) -> Result<BTreeMap<&'static str, Drawn>> {
    let fp = units::Fingerprinter::new(&RuleConfig::default());
    let mut found: BTreeMap<&'static str, Vec<Sample>> = BTreeMap::new();
    for (folder, corpus) in args.corpus.iter().enumerate() {
        let walked = walk::walk(corpus, WalkOptions::default())
            .with_context(|| format!("corpus folder {}", corpus.display()))?;
        if walked.candidates.is_empty() {
            bail!(
                "corpus folder {} holds no file in a language of the engine",
                corpus.display()
            );
        }
        for candidate in &walked.candidates {
            let Ok(text) = walk::read(candidate)? else {
                continue;
            };
            let file = format!("{}/{}", corpus.display(), candidate.rel);
            let parsed = units::parse_file(candidate.lang, &text, &fp)
                .with_context(|| format!("cannot parse {file}"))?;
            let lines: Vec<&str> = text.lines().collect();
            for unit in parsed.units.iter().filter(|u| {
                u.kind == UnitKind::Function
                    && (args.min_tokens..=args.max_tokens).contains(&(u.tokens as usize))
            }) {
                let (from, to) = (unit.start_line as usize - 1, unit.end_line as usize);
                let Some(body) = lines.get(from..to) else {
                    continue;
                };
                let Some(text) = standalone(candidate.lang, &dedent(body), &fp)? else {
                    continue;
                };
                found
                    .entry(candidate.lang.name())
                    .or_default()
                    .push(Sample {
                        lang: candidate.lang,
                        origin: format!("{file}:{}", unit.start_line),
                        folder,
                        tokens: unit.tokens as usize,
                        text,
                    });
            }
        }
    }
    let mut drawn: BTreeMap<&'static str, Drawn> = BTreeMap::new();
    for (lang, all) in found {
        let mut samples = all.clone();
        samples.shuffle(rng);
        // Nested functions are drawn with their parents at most once each.
        samples.truncate(args.per_language);
        if samples.len() >= 2 {
            drawn.insert(lang, (samples, all));
        }
    }
    if drawn.is_empty() {
        bail!(
            "no function of {}..={} tokens found in {}",
            args.min_tokens,
            args.max_tokens,
            args.corpus
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(drawn)
}

/// The function's text as a file that parses without errors: alone, or inside
/// a wrapper; `None` when neither parses.
fn standalone(
    lang: &'static Lang,
    text: &str,
    fp: &units::Fingerprinter,
) -> Result<Option<String>> {
    let wrapper = if lang.name() == "rust" {
        "impl Calibration {"
    } else {
        "class Calibration {"
    };
    let candidates = [text.to_string(), format!("{wrapper}\n{text}\n}}\n")];
    for candidate in candidates {
        if !units::parse_file(lang, &candidate, fp)?.parse_errors {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in lines {
        out.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        out.push('\n');
    }
    out
}

/// A formatter at one setting, run on standard input: one labelled
/// reformatted variant of every sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatter {
    /// What the report shows: the command without its file-name plumbing.
    pub label: String,
    program: String,
    args: Vec<String>,
}

impl Formatter {
    fn new(label: &str, command: &[&str]) -> Self {
        let (program, args) = command
            .split_first()
            .map_or(("", &[][..]), |(p, a)| (*p, a));
        Self {
            label: label.to_string(),
            program: program.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    fn describe(&self) -> String {
        format!("{} {}", self.program, self.args.join(" "))
    }

    fn format(&self, text: &str) -> Result<String> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", self.program))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(text.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "{} failed: {}",
                self.describe(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            );
        }
        String::from_utf8(out.stdout).context("formatter output is not UTF-8")
    }
}

/// `--formatter LANG=COMMAND`: a setting of the named language, the command
/// split as a shell would (quotes group words), its label the command itself.
pub fn parse_formatter(arg: &str) -> Result<(String, Formatter), String> {
    let (lang, command) = arg
        .split_once('=')
        .ok_or_else(|| format!("--formatter {arg:?}: expected LANG=COMMAND"))?;
    let words = shlex::split(command)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| format!("--formatter {arg:?}: COMMAND is empty or badly quoted"))?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    Ok((
        lang.trim().to_string(),
        Formatter::new(command.trim(), &words),
    ))
}

/// The settings measured per language when `--formatter` names none for it:
/// the formatters a project or a model plausibly runs, each at settings that
/// move the layout tokens (semicolons, trailing commas, wrapping, quotes,
/// braces, tabs). Each is `(label, command)`; the command reads standard input.
fn builtin_settings(lang: &Lang) -> Vec<Formatter> {
    let ext = extension(lang);
    let stdin_path = format!("calibration.{ext}");
    let java_path = "Calibration.java";
    let f = Formatter::new;
    let prettier = |label: &str, opts: &[&str], path: &str| {
        let mut command = vec!["prettier"];
        command.extend_from_slice(opts);
        command.extend_from_slice(&["--stdin-filepath", path]);
        f(label, &command)
    };
    let biome = |label: &str, opts: &[&str]| {
        let path = format!("--stdin-file-path={stdin_path}");
        let mut command = vec!["biome", "format"];
        command.extend_from_slice(opts);
        command.push(&path);
        f(label, &command)
    };
    let rustfmt = |config: &str| {
        f(
            &format!("rustfmt {config}"),
            &["rustfmt", "--edition", "2021", "--config", config],
        )
    };
    let clang = |style: &str| {
        let assume = format!("--assume-filename={stdin_path}");
        f(
            &format!("clang-format --style={style}"),
            &["clang-format", &format!("--style={style}"), &assume],
        )
    };
    match lang.name() {
        "python" => vec![
            f("black -l 40 -S", &["black", "-q", "-l", "40", "-S", "-"]),
            f(
                "black -l 100 --skip-magic-trailing-comma",
                &[
                    "black",
                    "-q",
                    "-l",
                    "100",
                    "--skip-magic-trailing-comma",
                    "-",
                ],
            ),
            f(
                "black --preview -l 60",
                &["black", "-q", "--preview", "-l", "60", "-"],
            ),
            f(
                "ruff format --line-length 40",
                &["ruff", "format", "--isolated", "--line-length", "40", "-"],
            ),
            f(
                "ruff format quote-style=single indent-style=tab",
                &[
                    "ruff",
                    "format",
                    "--isolated",
                    "--config",
                    "format.quote-style='single'",
                    "--config",
                    "format.indent-style='tab'",
                    "-",
                ],
            ),
            f("yapf --style pep8", &["yapf", "--style", "pep8"]),
            f("yapf --style google", &["yapf", "--style", "google"]),
            f("yapf --style facebook", &["yapf", "--style", "facebook"]),
            f(
                "autopep8 --aggressive --aggressive --max-line-length 40",
                &[
                    "autopep8",
                    "--aggressive",
                    "--aggressive",
                    "--max-line-length",
                    "40",
                    "-",
                ],
            ),
        ],
        "typescript" | "tsx" | "javascript" => vec![
            prettier("prettier (defaults)", &[], &stdin_path),
            prettier(
                "prettier --no-semi --trailing-comma all --print-width 40 --single-quote",
                &[
                    "--no-semi",
                    "--trailing-comma",
                    "all",
                    "--print-width",
                    "40",
                    "--single-quote",
                ],
                &stdin_path,
            ),
            prettier(
                "prettier --arrow-parens avoid --trailing-comma none --no-bracket-spacing --quote-props consistent --print-width 60",
                &[
                    "--arrow-parens",
                    "avoid",
                    "--trailing-comma",
                    "none",
                    "--no-bracket-spacing",
                    "--quote-props",
                    "consistent",
                    "--print-width",
                    "60",
                ],
                &stdin_path,
            ),
            prettier(
                "prettier --use-tabs --print-width 120 --quote-props preserve",
                &[
                    "--use-tabs",
                    "--print-width",
                    "120",
                    "--quote-props",
                    "preserve",
                ],
                &stdin_path,
            ),
            biome("biome format (defaults)", &[]),
            biome(
                "biome format --semicolons=as-needed --javascript-formatter-quote-style=single --trailing-commas=none --arrow-parentheses=as-needed --line-width=40",
                &[
                    "--semicolons=as-needed",
                    "--javascript-formatter-quote-style=single",
                    "--trailing-commas=none",
                    "--arrow-parentheses=as-needed",
                    "--line-width=40",
                ],
            ),
        ],
        "rust" => vec![
            rustfmt("max_width=40"),
            rustfmt("use_small_heuristics=Max,max_width=120"),
            rustfmt(
                "match_arm_leading_pipes=Always,use_field_init_shorthand=true,use_try_shorthand=true,match_block_trailing_comma=true,fn_params_layout=Vertical,hard_tabs=true",
            ),
            rustfmt("use_small_heuristics=Off,max_width=60,remove_nested_parens=false"),
        ],
        "go" => vec![f("gofmt", &["gofmt"]), f("gofmt -s", &["gofmt", "-s"])],
        "java" => vec![
            prettier(
                "prettier-plugin-java --print-width 40",
                &["--plugin=prettier-plugin-java", "--print-width", "40"],
                java_path,
            ),
            prettier(
                "prettier-plugin-java --print-width 120 --use-tabs",
                &[
                    "--plugin=prettier-plugin-java",
                    "--print-width",
                    "120",
                    "--use-tabs",
                ],
                java_path,
            ),
            f(
                "astyle --style=google --add-braces",
                &["astyle", "--quiet", "--style=google", "--add-braces"],
            ),
            f(
                "astyle --style=allman --remove-braces --max-code-length=60",
                &[
                    "astyle",
                    "--quiet",
                    "--style=allman",
                    "--remove-braces",
                    "--max-code-length=60",
                ],
            ),
        ],
        "c" | "cpp" => ["LLVM", "Google", "GNU", "Mozilla", "WebKit"]
            .into_iter()
            .map(clang)
            .collect(),
        "bash" => vec![
            f("shfmt -i 2", &["shfmt", "-i", "2"]),
            f(
                "shfmt -i 4 -bn -ci -sr",
                &["shfmt", "-i", "4", "-bn", "-ci", "-sr"],
            ),
        ],
        _ => Vec::new(),
    }
}

/// The installed settings of a language (`given` replaces the built-in list
/// when it names the language), and what is missing. A setting is installed
/// when it formats an empty file (gofmt has no `--version`).
fn settings_of(lang: &Lang, given: &[(String, Formatter)]) -> (Vec<Formatter>, Vec<String>) {
    let named: Vec<Formatter> = given
        .iter()
        .filter(|(l, _)| l == lang.name())
        .map(|(_, f)| f.clone())
        .collect();
    let candidates = if named.is_empty() {
        builtin_settings(lang)
    } else {
        named
    };
    let (installed, missing): (Vec<Formatter>, Vec<Formatter>) =
        candidates.into_iter().partition(|f| f.format("").is_ok());
    let missing = if installed.is_empty() && missing.is_empty() {
        vec![format!("no formatter known for {}", lang.name())]
    } else {
        missing
            .iter()
            .map(|f| format!("missing: {}", f.label))
            .collect()
    };
    (installed, missing)
}

/// Single-line statements of the language's samples, to insert into others.
fn statement_pool(samples: &[Sample]) -> Result<Vec<String>> {
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

/// What one formatter setting did to the texts it was given.
#[derive(Debug, Clone, Copy, Default)]
struct Formatted {
    /// Outputs that differ from their input.
    changed: usize,
    /// Inputs it failed on.
    failed: usize,
}

/// Every copy of one sample, labelled, and per formatter setting how many of
/// its reformatted texts changed and how many it failed on. A formatter that
/// fails on a text leaves that variant out (reported on standard error).
fn mutations(
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

/// The `n` functions of other corpus folders closest in size (ties: the first
/// found).
fn unrelated_to<'a>(
    sample: &Sample,
    samples: &'a [Sample],
    n: usize,
) -> impl Iterator<Item = &'a Sample> {
    let mut others: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.folder != sample.folder)
        .collect();
    others.sort_by_key(|s| s.tokens.abs_diff(sample.tokens));
    others.into_iter().take(n)
}

fn extension(lang: &Lang) -> &'static str {
    lang.spec.extensions[0]
}

fn largest_function(parsed: &ParsedFile) -> Option<&units::UnitData> {
    parsed
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Function)
        .max_by_key(|u| u.tokens)
}

/// A pair's two texts parsed as the files `original/a.EXT` and `copy/b.EXT`.
struct ParsedPair<'a> {
    pair: &'a Pair,
    original: ParsedFile,
    copy: ParsedFile,
    paths: [String; 2],
}

impl<'a> ParsedPair<'a> {
    fn new(cfg: &RuleConfig, pair: &'a Pair) -> Result<Self> {
        let ext = extension(pair.lang);
        let paths = [format!("original/a.{ext}"), format!("copy/b.{ext}")];
        let index = Index::new(cfg.clone())?;
        let parse = |path: &str, text: &str| -> Result<ParsedFile> {
            index
                .parse(path, text)?
                .with_context(|| format!("no grammar for {path}"))
        };
        Ok(Self {
            original: parse(&paths[0], &pair.original)?,
            copy: parse(&paths[1], &pair.copy)?,
            paths,
            pair,
        })
    }

    /// Whether the copy's largest function has the original's fingerprint:
    /// its exact hash for `reformatted`, its renamed hash for
    /// `renamed+reformatted` (the layout was all normalized away).
    fn same_fingerprint(&self) -> bool {
        let (Some(a), Some(b)) = (
            largest_function(&self.original),
            largest_function(&self.copy),
        ) else {
            return false;
        };
        match self.pair.kind {
            "reformatted" => a.exact == b.exact,
            "renamed+reformatted" => a.renamed == b.renamed,
            _ => false,
        }
    }

    /// Whether the copy rules deny the copy against the original alone.
    fn denied(&self, cfg: &RuleConfig) -> Result<bool> {
        let mut index = Index::new(cfg.clone())?;
        index.insert_parsed(self.paths[0].as_str().into(), self.original.clone());
        let path = &self.paths[1];
        Ok(
            copy_findings(&index, path, &self.pair.copy, &self.copy, &[])
                .iter()
                .any(|f| f.blocks),
        )
    }
}

/// Denied share per (language, kind), and over all languages per kind; for
/// `unrelated` the allowed share.
fn rates_of(pairs: &[Pair], verdicts: &[bool], per_language: bool) -> Vec<Rate> {
    let mut cells: BTreeMap<(String, usize), (usize, usize)> = BTreeMap::new();
    for (pair, &denied) in pairs.iter().zip(verdicts) {
        let kind = KINDS.iter().position(|k| *k == pair.kind).unwrap_or(0);
        let mut languages = vec!["all".to_string()];
        if per_language {
            languages.push(pair.lang.name().to_string());
        }
        for language in languages {
            let cell = cells.entry((language, kind)).or_default();
            cell.0 += 1;
            cell.1 += usize::from(denied);
        }
    }
    cells
        .into_iter()
        .map(|((language, kind), (n, denied))| {
            let share = denied as f64 / n as f64;
            Rate {
                language,
                kind: KINDS[kind].to_string(),
                pairs: n,
                denied,
                rate: if KINDS[kind] == "unrelated" {
                    1.0 - share
                } else {
                    share
                },
            }
        })
        .collect()
}

/// The reformatted kinds' rates per (language, setting), with what each
/// setting changed and failed on (`outcomes`, in report order).
fn setting_rates(
    pairs: &[Pair],
    verdicts: &[bool],
    same_fingerprints: &[bool],
    outcomes: &[(&str, String, Formatted)],
) -> Vec<SettingRate> {
    outcomes
        .iter()
        .map(|(language, setting, formatted)| {
            let mine: Vec<(&Pair, bool, bool)> = pairs
                .iter()
                .zip(verdicts)
                .zip(same_fingerprints)
                .filter(|((p, _), _)| {
                    p.lang.name() == *language && p.setting.as_ref() == Some(setting)
                })
                .map(|((p, v), same)| (p, *v, *same))
                .collect();
            let same_of = |kind: &str| {
                mine.iter()
                    .filter(|(p, _, same)| p.kind == kind && *same)
                    .count()
            };
            let (pairs, verdicts): (Vec<Pair>, Vec<bool>) =
                mine.iter().map(|(p, v, _)| ((*p).clone(), *v)).unzip();
            SettingRate {
                language: language.to_string(),
                setting: setting.clone(),
                same_fingerprint: vec![same_of("reformatted"), same_of("renamed+reformatted")],
                kinds: rates_of(&pairs, &verdicts, false),
                changed: formatted.changed,
                failed: formatted.failed,
            }
        })
        .collect()
}

fn sweep_row(cfg: &RuleConfig, pairs: &[Pair], verdicts: &[bool]) -> SweepRow {
    let (mut tp, mut fp, mut positives) = (0usize, 0usize, 0usize);
    for (pair, &denied) in pairs.iter().zip(verdicts) {
        if pair.kind == "unrelated" {
            fp += usize::from(denied);
        } else {
            positives += 1;
            tp += usize::from(denied);
        }
    }
    SweepRow {
        threshold: cfg.threshold,
        floor: cfg.floor,
        min_shingles: cfg.min_shingles,
        containment: cfg.containment,
        recall: tp as f64 / positives.max(1) as f64,
        precision: if tp + fp == 0 {
            1.0
        } else {
            tp as f64 / (tp + fp) as f64
        },
        kinds: rates_of(pairs, verdicts, false)
            .into_iter()
            .map(|r| (r.kind, r.rate))
            .collect(),
    }
}

/// Candidate recall of the near pairs per Jaccard bin of 0.05 from 0.50 (pairs
/// under the threshold are near by containment): the share whose function
/// units share an LSH band, against the theory, and the share that gets a
/// candidate from the copy's band or leave-one-out keys.
fn lsh_recall(cfg: &RuleConfig, pairs: &[Pair]) -> Result<Vec<LshBin>> {
    let fp = units::Fingerprinter::new(cfg);
    let (bands, rows) = (cfg.bands as i32, cfg.rows() as i32);
    // Per bin: pairs, pairs sharing a band, the theory's sum, pairs with a candidate.
    let mut bins: Vec<(usize, usize, f64, usize)> = vec![(0, 0, 0.0, 0); 10];
    let function = |pair: &Pair, text: &str| -> Result<Option<units::UnitData>> {
        let parsed = units::parse_file(pair.lang, text, &fp)?;
        Ok(largest_function(&parsed).cloned())
    };
    for pair in pairs.iter().filter(|p| p.kind.starts_with("near")) {
        let (Some(a), Some(b)) = (function(pair, &pair.original)?, function(pair, &pair.copy)?)
        else {
            continue;
        };
        let Some(s) = jaccard_at_least(&a.shingles, &b.shingles, LSH_FROM) else {
            continue;
        };
        let bin = (((s - LSH_FROM) / 0.05) as usize).min(bins.len() - 1);
        let cell = &mut bins[bin];
        cell.0 += 1;
        cell.1 += usize::from(a.bands.iter().zip(b.bands.iter()).any(|(x, y)| x == y));
        cell.2 += 1.0 - (1.0 - s.powi(rows)).powi(bands);
        // Band keys hash their band's index: equal keys are of the same band.
        let mut keys = b.bands.iter().chain(b.leave_one_out.iter());
        cell.3 += usize::from(keys.any(|k| a.bands.contains(k)));
    }
    Ok(bins
        .into_iter()
        .enumerate()
        .filter(|(_, (n, ..))| *n > 0)
        .map(|(i, (n, hits, expected, candidates))| LshBin {
            from: LSH_FROM + 0.05 * i as f64,
            to: (LSH_FROM + 0.05 * (i + 1) as f64).min(1.0),
            pairs: n,
            recall: hits as f64 / n as f64,
            theory: expected / n as f64,
            with_leave_one_out: candidates as f64 / n as f64,
        })
        .collect())
}

const LSH_FROM: f64 = 0.50;

fn markdown(c: &Calibration) -> String {
    let mut md = String::new();
    let pct = |x: f64| format!("{:.1}", 100.0 * x);
    md.push_str(&format!(
        "# Calibration\n\nCorpora: {}. Defaults: threshold {}, containment {}, floor {}, min shingles {}, k {}, {} bands x {} rows.\n\n",
        c.corpora.join(", "),
        c.config.threshold,
        c.config.containment,
        c.config.floor,
        c.config.min_shingles,
        c.config.k,
        c.config.bands,
        c.config.rows()
    ));
    md.push_str("Formatter settings:\n\n");
    for (lang, settings) in &c.formatters {
        for f in settings {
            md.push_str(&format!("- {lang}: {f}\n"));
        }
    }
    let languages: Vec<&str> = {
        let mut l: Vec<&str> = c.rates.iter().map(|r| r.language.as_str()).collect();
        l.dedup();
        l.sort_unstable();
        l.dedup();
        l
    };
    md.push_str("\n## Denied % per kind at the defaults (unrelated: allowed %), pairs in brackets\n\n| kind |");
    for l in &languages {
        md.push_str(&format!(" {l} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(languages.len()));
    md.push('\n');
    for kind in KINDS {
        md.push_str(&format!("| {kind} |"));
        for l in &languages {
            match c.rates.iter().find(|r| r.kind == *kind && r.language == *l) {
                Some(r) => md.push_str(&format!(" {} ({}) |", pct(r.rate), r.pairs)),
                None => md.push_str(" - |"),
            }
        }
        md.push('\n');
    }
    md.push_str("\n## Denied % of reformatted copies per formatter setting at the defaults\n\nPairs in brackets; `same fingerprint`: copies whose exact (renamed) fingerprint is the original's; `changed`: formatter outputs that differ from their input.\n\n| language | setting | reformatted | renamed+reformatted | same fingerprint | changed | failed |\n|---|---|---|---|---|---|---|\n");
    for s in &c.settings {
        let cell = |kind: &str| {
            s.kinds
                .iter()
                .find(|r| r.kind == kind)
                .map_or("-".to_string(), |r| {
                    format!("{} ({})", pct(r.rate), r.pairs)
                })
        };
        let same: Vec<String> = s.same_fingerprint.iter().map(usize::to_string).collect();
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            s.language,
            s.setting,
            cell("reformatted"),
            cell("renamed+reformatted"),
            same.join(" / "),
            s.changed,
            s.failed
        ));
    }
    md.push_str(
        "\n## Sweep (all languages)\n\n| threshold | floor | min shingles | containment | recall | precision |",
    );
    for kind in KINDS {
        md.push_str(&format!(" {kind} |"));
    }
    md.push_str("\n|---|---|---|---|---|---|");
    md.push_str(&"---|".repeat(KINDS.len()));
    md.push('\n');
    for row in &c.sweep {
        md.push_str(&format!(
            "| {:.2} | {} | {} | {:.2} | {} | {} |",
            row.threshold,
            row.floor,
            row.min_shingles,
            row.containment,
            pct(row.recall),
            pct(row.precision)
        ));
        for kind in KINDS {
            md.push_str(&format!(
                " {} |",
                row.kinds.get(*kind).map_or("-".to_string(), |r| pct(*r))
            ));
        }
        md.push('\n');
    }
    md.push_str("\n## LSH candidate recall of near pairs\n\n| Jaccard | pairs | recall % | theory % | with leave-one-out keys % |\n|---|---|---|---|---|\n");
    for bin in &c.lsh {
        md.push_str(&format!(
            "| {:.2}-{:.2} | {} | {} | {} | {} |\n",
            bin.from,
            bin.to,
            bin.pairs,
            pct(bin.recall),
            pct(bin.theory),
            pct(bin.with_leave_one_out)
        ));
    }
    md
}

/// Precision against recall, one line per floor over the thresholds (at the
/// default containment), as SVG and PNG.
fn plot(c: &Calibration, out: &Path) -> Result<()> {
    let svg = out.join("precision-recall.svg");
    let png = out.join("precision-recall.png");
    draw_plot(c, SVGBackend::new(&svg, (800, 600)).into_drawing_area())
        .with_context(|| format!("cannot draw {}", svg.display()))?;
    draw_plot(c, BitMapBackend::new(&png, (800, 600)).into_drawing_area()).with_context(|| {
        format!(
            "cannot draw {} (PNG text needs a font: install fontconfig and fonts-dejavu-core)",
            png.display()
        )
    })?;
    Ok(())
}

fn draw_plot<DB: DrawingBackend>(
    c: &Calibration,
    root: DrawingArea<DB, plotters::coord::Shift>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    root.fill(&WHITE).map_err(err)?;
    let low =
        |f: fn(&SweepRow) -> f64| c.sweep.iter().map(f).fold(1.0f64, f64::min).max(0.0) - 0.02;
    let mut chart = ChartBuilder::on(&root)
        .caption("Copy rules: precision against recall", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(low(|r| r.recall)..1.005, low(|r| r.precision)..1.005)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("recall (copies denied)")
        .y_desc("precision")
        .draw()
        .map_err(err)?;
    for (i, floor) in FLOORS.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = c
            .sweep
            .iter()
            .filter(|r| {
                r.floor == *floor
                    && r.containment == c.config.containment
                    && r.min_shingles == c.config.min_shingles
            })
            .map(|r| (r.recall, r.precision))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(format!("floor {floor}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
