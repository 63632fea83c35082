//! One pair judged by the engine: the original indexed alone and the copy rules
//! asked about a new file holding the copy.

use anyhow::{Context, Result};

use sens_engine::config::RuleConfig;
use sens_engine::index::Index;
use sens_engine::rules::copy_findings;
use sens_engine::units::{self, ParsedFile, UnitKind};

use super::extension;
use super::mutation::Pair;

pub(super) fn largest_function(parsed: &ParsedFile) -> Option<&units::UnitData> {
    parsed
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Function)
        .max_by_key(|u| u.tokens)
}

/// A pair's two texts parsed as the files `original/a.EXT` and `copy/b.EXT`.
pub(super) struct ParsedPair<'a> {
    pair: &'a Pair,
    original: ParsedFile,
    copy: ParsedFile,
    paths: [String; 2],
}

impl<'a> ParsedPair<'a> {
    pub(super) fn new(cfg: &RuleConfig, pair: &'a Pair) -> Result<Self> {
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
    pub(super) fn same_fingerprint(&self) -> bool {
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
    pub(super) fn denied(&self, cfg: &RuleConfig) -> Result<bool> {
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
