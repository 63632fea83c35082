//! The on-disk index cache (docs/contract.md, "The index"; the caller names its folder):
//! what parsing a file gave ([`ParsedFile`]), one cache file per source file, keyed by
//! the hash of its content, this engine build ([`ENGINE_BUILD`]) and the `RuleConfig`'s
//! digest. Identical files share an entry, so one cache serves every copy of a project
//! (the bench's runs of one task).
//!
//! An entry is checked whole before it is used: its length, a CRC-32 of its
//! body, and the build, rules and content hash written in it. Anything else
//! (truncated, corrupt, another build's or another rule set's entry) is a miss:
//! the file is parsed again and the entry rewritten, never trusted. Entries are
//! written to a temporary file in the cache folder and renamed over the old one,
//! so a reader (or a second process indexing the same project) sees a whole
//! entry or none.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::RuleConfig;
use crate::lang::Lang;
use crate::units::ParsedFile;

/// This build of the engine (its version and a hash of its sources and lock
/// file, from `build.rs`): an entry from any other build is not used.
pub const ENGINE_BUILD: &str = env!("SENS_ENGINE_BUILD");

/// Where entries start: the file format's name and version.
const MAGIC: &[u8; 8] = b"SENSIDX1";
/// Magic, body length (u64) and the body's CRC-32 (u32), little-endian.
const HEADER: usize = 8 + 8 + 4;

/// What one entry holds: the key it was written under, then the parse.
#[derive(Serialize, Deserialize)]
struct Entry<'a> {
    engine: Cow<'a, str>,
    rules: Cow<'a, str>,
    language: Cow<'a, str>,
    content: [u8; 32],
    parsed: Cow<'a, ParsedFile>,
}

/// How the lookups of one cache went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Entries used.
    pub hits: usize,
    /// Files with no entry.
    pub misses: usize,
    /// Entries found unusable (truncated, corrupt, another build or rule set)
    /// and rewritten.
    pub rejected: usize,
    /// Entries that could not be written (the index is built anyway).
    pub unwritten: usize,
}

/// An open cache folder for one rule set.
#[derive(Debug)]
pub struct IndexCache {
    dir: PathBuf,
    rules: String,
    hits: AtomicUsize,
    misses: AtomicUsize,
    rejected: AtomicUsize,
    unwritten: AtomicUsize,
}

/// What a lookup found.
#[derive(Debug)]
enum Found {
    Hit(ParsedFile),
    Missing,
    Rejected,
}

impl IndexCache {
    /// Opens (creating) the cache folder `dir` for the rule set `cfg`.
    pub fn open(dir: &Path, cfg: &RuleConfig) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the index cache {}", dir.display()))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            rules: cfg.digest(),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
            unwritten: AtomicUsize::new(0),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            unwritten: self.unwritten.load(Ordering::Relaxed),
        }
    }

    /// The parse of `text` (a file in `lang`): from the cache when a whole entry
    /// of this build and rule set holds it, else from `parse`, then stored. An
    /// entry that cannot be written costs only the next run's time.
    pub fn parsed(
        &self,
        lang: &Lang,
        text: &str,
        parse: impl FnOnce() -> Result<ParsedFile>,
    ) -> Result<ParsedFile> {
        let content: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        let path = self.entry_path(lang, &content);
        let counter = match self.load(&path, lang, &content) {
            Found::Hit(parsed) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(parsed);
            }
            Found::Missing => &self.misses,
            Found::Rejected => &self.rejected,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let parsed = parse()?;
        if self.store(&path, lang, &content, &parsed).is_err() {
            self.unwritten.fetch_add(1, Ordering::Relaxed);
        }
        Ok(parsed)
    }

    /// The entry's file: named by everything it is keyed by.
    fn entry_path(&self, lang: &Lang, content: &[u8; 32]) -> PathBuf {
        let mut key = Sha256::new();
        for part in [ENGINE_BUILD, &self.rules, lang.name()] {
            key.update(part.as_bytes());
            key.update([0]);
        }
        key.update(content);
        let name = hex::encode(&key.finalize()[..16]);
        self.dir.join(&name[..2]).join(&name[2..])
    }

    fn load(&self, path: &Path, lang: &Lang, content: &[u8; 32]) -> Found {
        match std::fs::read(path) {
            Ok(bytes) => match decode(&bytes, &self.rules, lang, content) {
                Some(parsed) => Found::Hit(parsed),
                None => Found::Rejected,
            },
            Err(_) => Found::Missing,
        }
    }

    fn store(
        &self,
        path: &Path,
        lang: &Lang,
        content: &[u8; 32],
        parsed: &ParsedFile,
    ) -> Result<()> {
        let bytes = encode(&Entry {
            engine: Cow::Borrowed(ENGINE_BUILD),
            rules: Cow::Borrowed(&self.rules),
            language: Cow::Borrowed(lang.name()),
            content: *content,
            parsed: Cow::Borrowed(parsed),
        })?;
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut file, &bytes)?;
        file.persist(path)?;
        Ok(())
    }
}

fn encode(entry: &Entry) -> Result<Vec<u8>> {
    let body = postcard::to_stdvec(entry).context("cannot encode an index cache entry")?;
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

/// The parse an entry holds, when the entry is whole and written under this key.
fn decode(bytes: &[u8], rules: &str, lang: &Lang, content: &[u8; 32]) -> Option<ParsedFile> {
    let (header, body) = bytes.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(8);
    let (length, crc) = rest.split_at(8);
    let length = u64::from_le_bytes(length.try_into().ok()?);
    let crc = u32::from_le_bytes(crc.try_into().ok()?);
    if magic != MAGIC || length != body.len() as u64 || crc32fast::hash(body) != crc {
        return None;
    }
    let entry: Entry = postcard::from_bytes(body).ok()?;
    if entry.engine != ENGINE_BUILD
        || entry.rules != rules
        || entry.language != lang.name()
        || entry.content != *content
    {
        return None;
    }
    let mut parsed = entry.parsed.into_owned();
    parsed.language = lang.name();
    Some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang;

    const SOURCE: &str = "fn total(items: &[u32]) -> u32 {\n    let mut sum = 0;\n    for item in items {\n        sum += item;\n    }\n    sum\n}\n";

    fn rust() -> &'static Lang {
        lang::for_path("a.rs").expect("rust")
    }

    fn parse(text: &str) -> Result<ParsedFile> {
        let cfg = RuleConfig::default();
        let index = crate::index::Index::new(cfg)?;
        Ok(index.parse("a.rs", text)?.expect("a grammar for .rs"))
    }

    /// A cache and the path of `SOURCE`'s entry in it, written once.
    fn written() -> (tempfile::TempDir, IndexCache, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = IndexCache::open(dir.path(), &RuleConfig::default()).expect("open");
        cache
            .parsed(rust(), SOURCE, || parse(SOURCE))
            .expect("parsed");
        let content: [u8; 32] = Sha256::digest(SOURCE.as_bytes()).into();
        let path = cache.entry_path(rust(), &content);
        assert!(path.is_file());
        (dir, cache, path)
    }

    /// Looks `SOURCE` up again with a parse that counts its calls.
    fn reparses(cache: &IndexCache) -> usize {
        let mut calls = 0;
        let parsed = cache
            .parsed(rust(), SOURCE, || {
                calls += 1;
                parse(SOURCE)
            })
            .expect("parsed");
        assert_eq!(parsed, parse(SOURCE).expect("parse"));
        calls
    }

    #[test]
    fn a_stored_parse_comes_back_equal_without_parsing() {
        let (_dir, cache, _) = written();
        assert_eq!(reparses(&cache), 0);
        assert_eq!(
            cache.stats(),
            CacheStats {
                hits: 1,
                misses: 1,
                rejected: 0,
                unwritten: 0
            }
        );
    }

    /// Each kind of bad entry is rejected, parsed again and rewritten whole.
    fn rejected_then_rewritten(spoil: impl FnOnce(&Path, Vec<u8>)) {
        let (_dir, cache, path) = written();
        let good = std::fs::read(&path).expect("entry");
        spoil(&path, good.clone());
        assert_eq!(reparses(&cache), 1, "a bad entry is never trusted");
        assert_eq!(cache.stats().rejected, 1);
        assert_eq!(std::fs::read(&path).expect("entry"), good, "rewritten");
        assert_eq!(reparses(&cache), 0);
    }

    #[test]
    fn a_truncated_entry_is_rejected() {
        rejected_then_rewritten(|path, bytes| {
            std::fs::write(path, &bytes[..bytes.len() / 2]).expect("write");
        });
        rejected_then_rewritten(|path, bytes| {
            std::fs::write(path, &bytes[..HEADER - 1]).expect("write");
        });
        rejected_then_rewritten(|path, _| std::fs::write(path, b"").expect("write"));
    }

    #[test]
    fn a_corrupt_entry_is_rejected() {
        rejected_then_rewritten(|path, mut bytes| {
            let last = bytes.len() - 1;
            bytes[last] ^= 0x40;
            std::fs::write(path, bytes).expect("write");
        });
        rejected_then_rewritten(|path, _| std::fs::write(path, [7u8; 64]).expect("write"));
    }

    /// An entry written under another key, at this key's path.
    fn foreign(engine: &str, rules: &str) -> Vec<u8> {
        let parsed = parse(SOURCE).expect("parse");
        encode(&Entry {
            engine: Cow::Borrowed(engine),
            rules: Cow::Borrowed(rules),
            language: Cow::Borrowed("rust"),
            content: Sha256::digest(SOURCE.as_bytes()).into(),
            parsed: Cow::Owned(parsed),
        })
        .expect("encode")
    }

    #[test]
    fn another_builds_entry_is_rejected() {
        rejected_then_rewritten(|path, _| {
            std::fs::write(
                path,
                foreign("0.0.0-other", &RuleConfig::default().digest()),
            )
            .expect("write");
        });
    }

    #[test]
    fn another_rule_sets_entry_is_rejected() {
        rejected_then_rewritten(|path, _| {
            std::fs::write(path, foreign(ENGINE_BUILD, "0123456789abcdef")).expect("write");
        });
    }

    #[test]
    fn another_rule_set_has_entries_of_its_own() {
        let (dir, _cache, path) = written();
        let cfg = RuleConfig {
            threshold: 0.9,
            ..RuleConfig::default()
        };
        let other = IndexCache::open(dir.path(), &cfg).expect("open");
        let content: [u8; 32] = Sha256::digest(SOURCE.as_bytes()).into();
        assert_ne!(other.entry_path(rust(), &content), path);
    }
}
