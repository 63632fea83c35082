//! Seeding a Rust task's build folder from a cargo target folder that already built this
//! repository (`SENS_BENCH_SEED_TARGET`, e.g. `target` after the tests). The tasks pin an
//! older commit whose lock file shares most dependency versions with today's, and cargo
//! reuses every unit whose inputs hash the same: from a clean clone's tests' build 363 of
//! the pinned commit's 425 units (its first build and tests 75 s against 614-669 s from
//! nothing on two cores; docs/caches.md, "The Rust tasks' build, seeded", and
//! docs/experiments/ci.md, "CI under 20 minutes").

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Names the target folder to seed from; unset or empty: no seeding.
pub const SEED_VAR: &str = "SENS_BENCH_SEED_TARGET";
/// The profile the tasks' commands build (`cargo test`).
const PROFILE: &str = "debug";
/// What cargo needs to find a unit fresh: its fingerprint, its build script's
/// output and the compiled unit. The rest (incremental state, the uplifted
/// binaries) belongs to the seed's own packages.
const SEEDED: [(&str, Transfer); 3] = [
    (".fingerprint", Transfer::Copied),
    ("build", Transfer::Copied),
    ("deps", Transfer::Linked),
];

#[derive(Clone, Copy)]
enum Transfer {
    /// Cargo and build scripts rewrite these files in place.
    Copied,
    /// A unit cargo rebuilds is a new file, so a hard link is safe (and free).
    Linked,
}

/// The folder [`SEED_VAR`] names, if any.
pub fn seed_from_env() -> Option<PathBuf> {
    std::env::var_os(SEED_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Seeds the build folder `into` (a `CARGO_TARGET_DIR`) with `from`'s dev build,
/// unless it has one already; returns whether it did. Modification times are
/// kept, since cargo compares them with the sources'. The copy is made beside
/// and renamed into place, so an interrupted one is never taken for a build.
pub fn seed_build(from: &Path, into: &Path) -> Result<bool> {
    let (source, target) = (from.join(PROFILE), into.join(PROFILE));
    if target.exists() {
        return Ok(false);
    }
    if !source.is_dir() {
        bail!(
            "{SEED_VAR}={}: no {PROFILE}/ build folder there",
            from.display()
        );
    }
    let partial = into.join(format!("{PROFILE}.seeding"));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot remove {}", partial.display()))?;
    }
    for (name, how) in SEEDED {
        let from = source.join(name);
        if from.is_dir() {
            copy_tree(&from, &partial.join(name), how)?;
        }
    }
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    std::fs::rename(&partial, &target).with_context(|| {
        format!(
            "cannot rename {} to {}",
            partial.display(),
            target.display()
        )
    })?;
    Ok(true)
}

fn copy_tree(from: &Path, to: &Path, how: Transfer) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    let entries =
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", from.display()))?;
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry
            .file_type()
            .with_context(|| format!("{} has no file type", path.display()))?;
        if kind.is_dir() {
            copy_tree(&path, &target, how)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(&path)
                .with_context(|| format!("cannot read the link {}", path.display()))?;
            std::os::unix::fs::symlink(&link, &target)
                .with_context(|| format!("cannot create the link {}", target.display()))?;
        } else {
            copy_file(&path, &target, how)?;
        }
    }
    Ok(())
}

/// A hard link when asked and possible (another file system refuses it), else a
/// copy with the source's modification time.
fn copy_file(from: &Path, to: &Path, how: Transfer) -> Result<()> {
    if matches!(how, Transfer::Linked) && std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    let context = || format!("cannot copy {} to {}", from.display(), to.display());
    std::fs::copy(from, to).with_context(context)?;
    let modified = std::fs::metadata(from)
        .and_then(|m| m.modified())
        .with_context(context)?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(modified))
        .with_context(context)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::time::{Duration, SystemTime};

    fn write(root: &Path, relative: &str, text: &str) -> PathBuf {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_new_build_folder_gets_the_units_linked_and_the_fingerprints_copied_with_their_times() {
        let seed = tempfile::tempdir().unwrap();
        let unit = write(seed.path(), "debug/deps/libfoo-1a2b.rlib", "unit");
        let print = write(seed.path(), "debug/.fingerprint/foo-1a2b/lib-foo", "hash");
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        std::fs::File::options()
            .write(true)
            .open(&print)
            .unwrap()
            .set_modified(old)
            .unwrap();
        write(seed.path(), "debug/build/foo-9f/out/foo.o", "object");
        write(
            seed.path(),
            "debug/incremental/sens_bench-1/s-1/query",
            "own",
        );
        write(seed.path(), "debug/sens-bench", "binary");
        let lease = tempfile::tempdir().unwrap();
        // An earlier seeding that was interrupted is started over.
        write(lease.path(), "debug.seeding/deps/half", "");

        assert!(seed_build(seed.path(), lease.path()).unwrap());
        let got = lease.path().join("debug");
        let meta = |p: &Path| std::fs::metadata(p).unwrap();
        assert_eq!(
            meta(&got.join("deps/libfoo-1a2b.rlib")).ino(),
            meta(&unit).ino()
        );
        let copied = got.join(".fingerprint/foo-1a2b/lib-foo");
        assert_ne!(meta(&copied).ino(), meta(&print).ino());
        assert_eq!(meta(&copied).modified().unwrap(), old);
        assert_eq!(
            std::fs::read_to_string(got.join("build/foo-9f/out/foo.o")).unwrap(),
            "object"
        );
        assert!(!got.join("deps/half").exists());
        assert!(!got.join("incremental").exists() && !got.join("sens-bench").exists());
        assert!(!lease.path().join("debug.seeding").exists());

        // A folder that has a build keeps it.
        write(seed.path(), "debug/deps/libbar-3c4d.rlib", "later");
        assert!(!seed_build(seed.path(), lease.path()).unwrap());
        assert!(!got.join("deps/libbar-3c4d.rlib").exists());
    }

    #[test]
    fn a_seed_without_a_dev_build_is_refused_by_name() {
        let seed = tempfile::tempdir().unwrap();
        let lease = tempfile::tempdir().unwrap();
        let err = seed_build(seed.path(), lease.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains(SEED_VAR) && err.contains("debug/"), "{err}");
        assert!(!lease.path().join("debug").exists());
    }
}
