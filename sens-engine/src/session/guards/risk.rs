//! `risk`: path globs mapped to risk levels R0..R3. The session's level only
//! rises (a ratchet): a file changed by a tool call that matches a higher
//! level raises it, written to the ledger as a mark naming the file. From R2
//! on, a Stop needs the evidence `stop-evidence` asks for (a test run after the
//! last edit of a completion candidate), blocking once per state.

use std::collections::BTreeMap;

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

use super::stop_evidence::Evidence;
use super::{Guard, Kind, Seen};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    R0,
    R1,
    R2,
    R3,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Glob (project-relative, `/`-separated) -> level.
    pub paths: BTreeMap<String, Level>,
}

pub struct RiskGuard {
    paths: Vec<(GlobMatcher, Level)>,
    level: Level,
    evidence: Evidence,
}

impl RiskGuard {
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let paths = settings
            .paths
            .iter()
            .map(|(glob, level)| {
                Glob::new(glob)
                    .map(|g| (g.compile_matcher(), *level))
                    .map_err(|e| anyhow::anyhow!("field `paths`: `{glob}` is not a glob: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            paths,
            level: Level::R0,
            evidence: Evidence::default(),
        })
    }

    fn level_of(&self, file: &str) -> Level {
        self.paths
            .iter()
            .filter(|(glob, _)| glob.is_match(file))
            .map(|(_, level)| *level)
            .max()
            .unwrap_or(Level::R0)
    }
}

impl Guard for RiskGuard {
    fn name(&self) -> &'static str {
        "risk"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        let mut decisions = Vec::new();
        if seen.is_after_tool() {
            for file in seen.touched {
                let level = self.level_of(file);
                if level > self.level {
                    decisions.push((
                        Kind::Mark,
                        format!("risk {:?} -> {level:?}, raised by {file}", self.level),
                    ));
                    self.level = level;
                }
            }
        }
        if self.level >= Level::R2 {
            decisions.extend(self.evidence.require(seen, self.name()));
        }
        Ok(decisions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_matching_glob_gives_the_level() {
        let settings = Settings {
            paths: BTreeMap::from([
                ("src/**".to_string(), Level::R1),
                ("src/pay*.py".to_string(), Level::R3),
            ]),
        };
        let guard = RiskGuard::new(&settings).unwrap();
        assert_eq!(guard.level_of("src/payments.py"), Level::R3);
        assert_eq!(guard.level_of("src/report.py"), Level::R1);
        assert_eq!(guard.level_of("README.md"), Level::R0);
        let bad = Settings {
            paths: BTreeMap::from([("src/[".to_string(), Level::R1)]),
        };
        assert!(RiskGuard::new(&bad).is_err());
    }
}
