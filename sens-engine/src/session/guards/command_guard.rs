//! `command-guard`: deny patterns for Bash, each a regex with the message the
//! agent gets. A pattern is matched against every simple command of the
//! script as the shell analysis splits it (so `cd x && git push --force` is
//! seen as `git push --force`), and against the whole script.

use regex::Regex;
use serde::Deserialize;

use super::super::shell::split_commands;
use super::{Guard, Kind, Seen};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub deny: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub pattern: String,
    pub message: String,
}

pub struct CommandGuard {
    rules: Vec<(Regex, String)>,
}

impl CommandGuard {
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let rules = settings
            .deny
            .iter()
            .map(|rule| {
                Regex::new(&rule.pattern)
                    .map(|re| (re, rule.message.clone()))
                    .map_err(|e| {
                        anyhow::anyhow!("field `deny`: `{}` is not a regex: {e}", rule.pattern)
                    })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { rules })
    }
}

impl Guard for CommandGuard {
    fn name(&self) -> &'static str {
        "command-guard"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if seen.event != "PreToolUse" || seen.tool() != Some("Bash") {
            return Ok(Vec::new());
        }
        let Some(script) = seen.tool_input().get("command").and_then(|c| c.as_str()) else {
            return Ok(Vec::new());
        };
        // A script the analysis cannot split is still matched as a whole.
        let mut texts = split_commands(script).unwrap_or_default();
        texts.push(script.to_string());
        Ok(self
            .rules
            .iter()
            .filter(|(re, _)| texts.iter().any(|t| re.is_match(t)))
            .map(|(re, message)| {
                (
                    Kind::Deny,
                    format!("Sens (command-guard, `{}`): {message}", re.as_str()),
                )
            })
            .collect())
    }
}
