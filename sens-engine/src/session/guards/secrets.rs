//! `secrets`: before a Read (or a Bash `cat`, `head`, `tail`, `less`, `more`)
//! brings a file into the context, the file is scanned. A private key or a
//! token of a well-known format denies the call (the reason names the kind and
//! the line, never the secret); a high-entropy value assigned to a name such as
//! `password` or `api_key` is a lower-confidence hit and only warns (a note).
//!
//! No crate was taken for the patterns: the Rust crates found that carry a
//! secret pattern set are either whole applications (a gitleaks port as a CLI,
//! a code-context engine with a scanner inside) or young single-author crates
//! without a kept list, and none exposes its patterns as a small library. The
//! formats below are the documented prefixes of each issuer (the same ones
//! gitleaks' default rules start from); `extra` adds a condition's own.

use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use super::super::protect::normalize;
use super::super::shell::split_commands;
use super::{Guard, Kind, Seen};

/// The largest part of a file that is scanned.
const SCAN_BYTES: u64 = 1 << 20;
/// Bits per character from which an assigned value looks random.
const ENTROPY_BITS: f64 = 3.5;

/// Well-known formats: (kind, regex).
const FORMATS: &[(&str, &str)] = &[
    (
        "private key",
        r"-----BEGIN ((RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY( BLOCK)?-----",
    ),
    ("AWS access key id", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("GitHub token", r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b"),
    ("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{60,}"),
    ("Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("Stripe live key", r"\b[rs]k_live_[A-Za-z0-9]{24,}"),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
];

/// A value assigned to a secret-sounding name.
const ASSIGNMENT: &str = r#"(?i)[\w.-]*(secret|token|passwd|password|api_?key|private_?key)[\w.-]*["']?\s*[:=]\s*["']?([^\s"',;]{16,})"#;

/// Commands that print a file into the context.
const PRINTERS: [&str; 5] = ["cat", "head", "tail", "less", "more"];

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// More formats that deny: `{kind = "...", pattern = "..."}`.
    #[serde(default)]
    pub extra: Vec<Format>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Format {
    pub kind: String,
    pub pattern: String,
}

pub struct SecretsGuard {
    formats: Vec<(String, Regex)>,
    assignment: Regex,
}

impl SecretsGuard {
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let builtin = FORMATS.iter().map(|(k, p)| (k.to_string(), p.to_string()));
        let extra = settings
            .extra
            .iter()
            .map(|f| (f.kind.clone(), f.pattern.clone()));
        let formats = builtin
            .chain(extra)
            .map(|(kind, pattern)| {
                Regex::new(&pattern)
                    .map(|re| (kind, re))
                    .map_err(|e| anyhow::anyhow!("field `extra`: `{pattern}` is not a regex: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            formats,
            assignment: Regex::new(ASSIGNMENT).expect("a valid regex"),
        })
    }

    /// The hits in `text`: (denies, kind, 1-based line).
    fn scan(&self, text: &str) -> Vec<(bool, String, usize)> {
        let mut hits = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if let Some((kind, _)) = self.formats.iter().find(|(_, re)| re.is_match(line)) {
                hits.push((true, kind.clone(), n + 1));
            } else if let Some(value) = self.assignment.captures(line).and_then(|c| c.get(2))
                && looks_random(value.as_str())
            {
                hits.push((false, "high-entropy secret assignment".into(), n + 1));
            }
        }
        hits
    }
}

impl Guard for SecretsGuard {
    fn name(&self) -> &'static str {
        "secrets"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if seen.event != "PreToolUse" {
            return Ok(Vec::new());
        }
        let cwd = seen
            .input
            .get("cwd")
            .and_then(Value::as_str)
            .map_or_else(|| seen.root.to_path_buf(), PathBuf::from);
        let mut decisions = Vec::new();
        for file in files_read(seen, &cwd) {
            let Some(text) = read_start(&file)? else {
                continue;
            };
            for (denies, kind, line) in self.scan(&text) {
                let (decision, what) = if denies {
                    (Kind::Deny, "denied: do not read it")
                } else {
                    (Kind::Note, "warning: treat its values as secrets")
                };
                decisions.push((
                    decision,
                    format!(
                        "Sens (secrets): {} line {line} holds a {kind}; {what}, and never copy \
                         a secret into code, output or a command.",
                        file.display()
                    ),
                ));
            }
        }
        Ok(decisions)
    }
}

/// The files a Read or a printing Bash command would bring into the context.
fn files_read(seen: &Seen<'_>, cwd: &Path) -> Vec<PathBuf> {
    let input = seen.tool_input();
    match seen.tool() {
        Some("Read") => input
            .get("file_path")
            .and_then(Value::as_str)
            .map(|p| vec![normalize(cwd, Path::new(p))])
            .unwrap_or_default(),
        Some("Bash") => {
            let script = input.get("command").and_then(Value::as_str).unwrap_or("");
            split_commands(script)
                .unwrap_or_default()
                .iter()
                .filter_map(|command| shlex::split(command))
                .filter(|words| {
                    words
                        .first()
                        .is_some_and(|w| PRINTERS.contains(&w.as_str()))
                })
                .flat_map(|words| {
                    words
                        .into_iter()
                        .skip(1)
                        .filter(|w| !w.starts_with('-'))
                        .map(|w| normalize(cwd, Path::new(&w)))
                        .collect::<Vec<_>>()
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The first [`SCAN_BYTES`] of a file, as text (invalid UTF-8 replaced);
/// `None` when it is not a readable file (the tool reports that itself).
fn read_start(path: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(SCAN_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Letters and digits mixed at a high entropy: a generated value, not a word,
/// a path or a number.
fn looks_random(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| c.is_ascii_alphabetic())
        && entropy(value) >= ENTROPY_BITS
}

/// Shannon entropy of `text`, in bits per character.
fn entropy(text: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in text.chars() {
        *counts.entry(c).or_insert(0u32) += 1;
    }
    let n = text.chars().count() as f64;
    counts
        .values()
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_tokens_deny_random_assignments_warn_and_config_passes() {
        let guard = SecretsGuard::new(&Settings::default()).unwrap();
        let key = "x = 1\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n";
        assert_eq!(guard.scan(key), [(true, "private key".to_string(), 2)]);
        let token = format!("GITHUB_TOKEN=ghp_{}\n", "a1B2".repeat(9));
        assert_eq!(guard.scan(&token)[0].1, "GitHub token");
        let assigned = "db_password = \"q8Zr2LmX9vTk4Wn7Ps\"\n";
        assert!(matches!(guard.scan(assigned).as_slice(), [(false, _, 1)]));
        let config =
            "[server]\nport = 8080\npassword_file = \"/etc/app/passwords.txt\"\ntimeout = 30\n";
        assert!(guard.scan(config).is_empty(), "{:?}", guard.scan(config));
    }

    #[test]
    fn entropy_tells_random_from_repeated() {
        assert!(entropy("aaaaaaaaaaaaaaaa") < 1.0);
        assert!(entropy("q8Zr2LmX9vTk4Wn7Ps") > ENTROPY_BITS);
    }
}
