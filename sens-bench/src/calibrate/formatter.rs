//! The formatter catalogue: a formatter at one setting run on standard input,
//! `--formatter`, the built-in settings per language, and which are installed.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use sens_engine::lang::Lang;

use super::extension;

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

    pub(super) fn describe(&self) -> String {
        format!("{} {}", self.program, self.args.join(" "))
    }

    pub(super) fn format(&self, text: &str) -> Result<String> {
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
pub(super) fn settings_of(
    lang: &Lang,
    given: &[(String, Formatter)],
) -> (Vec<Formatter>, Vec<String>) {
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

/// What one formatter setting did to the texts it was given.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Formatted {
    /// Outputs that differ from their input.
    pub(super) changed: usize,
    /// Inputs it failed on.
    pub(super) failed: usize,
}
