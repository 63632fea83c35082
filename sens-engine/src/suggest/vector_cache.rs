//! The symbols' vectors, kept by a hash of the text each is made from: in the
//! process (never stale: a changed symbol is another text, another key) and in
//! an engine's on-disk cache folder, one file per model (`model-<identity>.vec`),
//! which every command that suggests reads and writes (docs/caches.md, "The
//! symbol vectors"). A project whose files did not change embeds nothing again;
//! a changed file costs only its changed symbols.
//!
//! The file: magic, `u32` dimensions, `u64` body length, CRC-32 of the body,
//! then the body, records of a `u64` text hash and the vector's `f32`s, all
//! little-endian. A short, corrupt or foreign file is never trusted: it is said
//! on stderr, counted, and rewritten whole after the next pass.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::framed;

const MAGIC: &[u8; 8] = b"SENSMLV2";

/// What a process did with its symbol vectors: made them, or read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VectorCounts {
    /// Symbols embedded by this process.
    pub embedded: usize,
    /// Vectors read from on-disk cache files.
    pub read: usize,
    /// Cache files found corrupt (then rebuilt).
    pub rejected: usize,
}

pub struct VectorCache {
    dims: usize,
    /// Names the on-disk file: the model and the engine build.
    identity: u64,
    vectors: Mutex<FxHashMap<u64, Arc<[f32]>>>,
    /// Per folder read, how many vectors its file holds (0: none or corrupt),
    /// so a pass that made nothing new rewrites nothing.
    on_disk: Mutex<FxHashMap<PathBuf, usize>>,
    /// A background pass is at work.
    busy: AtomicBool,
    embedded: AtomicUsize,
    read: AtomicUsize,
    rejected: AtomicUsize,
}

impl VectorCache {
    pub fn new(dims: usize, identity: u64) -> Self {
        Self {
            dims,
            identity,
            vectors: Mutex::default(),
            on_disk: Mutex::default(),
            busy: AtomicBool::new(false),
            embedded: AtomicUsize::new(0),
            read: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
        }
    }

    pub fn get(&self, key: u64) -> Option<Arc<[f32]>> {
        self.lock().get(&key).cloned()
    }

    /// The keys of `keys` that have no vector yet.
    pub fn missing<T>(&self, keys: impl IntoIterator<Item = (u64, T)>) -> Vec<(u64, T)> {
        let vectors = self.lock();
        keys.into_iter()
            .filter(|(k, _)| !vectors.contains_key(k))
            .collect()
    }

    /// Keeps vectors this process embedded.
    pub fn insert_made(&self, made: impl IntoIterator<Item = (u64, Vec<f32>)>) {
        let mut vectors = self.lock();
        for (key, v) in made {
            vectors.insert(key, v.into());
            self.embedded.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn counts(&self) -> VectorCounts {
        VectorCounts {
            embedded: self.embedded.load(Ordering::Relaxed),
            read: self.read.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
        }
    }

    /// Claims the background pass; `false` when one is at work.
    pub fn start_pass(&self) -> bool {
        !self.busy.swap(true, Ordering::AcqRel)
    }

    pub fn end_pass(&self) {
        self.busy.store(false, Ordering::Release);
    }

    pub fn file(&self, dir: &Path) -> PathBuf {
        dir.join(format!("model-{:016x}.vec", self.identity))
    }

    /// Takes the vectors the folder's file holds, once per folder. A missing file
    /// holds none; a corrupt one is said on stderr and holds none.
    pub fn read_dir(&self, dir: &Path) {
        {
            let mut on_disk = self.on_disk.lock().unwrap_or_else(|e| e.into_inner());
            if on_disk.contains_key(dir) {
                return;
            }
            on_disk.insert(dir.to_path_buf(), 0);
        }
        let file = self.file(dir);
        let Ok(bytes) = std::fs::read(&file) else {
            return;
        };
        let Some(records) = self.decode(&bytes) else {
            self.rejected.fetch_add(1, Ordering::Relaxed);
            eprintln!(
                "sens: {} is corrupt: its symbol vectors are made again",
                file.display()
            );
            return;
        };
        let held = self.take(records);
        self.on_disk
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), held);
    }

    /// Writes every vector held to the folder's file when it holds more than the
    /// file does (beside it, then renamed over it: a reader sees a whole file,
    /// the old or the new). Another process writing at once may win the rename:
    /// the loser's new vectors cost a later run their time, nothing else.
    pub fn write_dir(&self, dir: &Path) -> Result<()> {
        let (body, held) = {
            let vectors = self.lock();
            let on_disk = self.on_disk.lock().unwrap_or_else(|e| e.into_inner());
            if on_disk.get(dir).is_some_and(|&n| n >= vectors.len()) {
                return Ok(());
            }
            (self.encode(&vectors), vectors.len())
        };
        framed::write(&self.file(dir), MAGIC, self.dims, &body)?;
        self.on_disk
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), held);
        Ok(())
    }

    /// [`VectorCache::write_dir`] for every folder read: a pass started by any
    /// command (a prompt, a query tool) keeps what it made in the engine's cache.
    pub fn write_read_dirs(&self) -> Result<()> {
        let dirs: Vec<PathBuf> = {
            let on_disk = self.on_disk.lock().unwrap_or_else(|e| e.into_inner());
            on_disk.keys().cloned().collect()
        };
        dirs.iter().try_for_each(|dir| self.write_dir(dir))
    }

    fn record(&self) -> usize {
        8 + 4 * self.dims
    }

    fn encode(&self, vectors: &FxHashMap<u64, Arc<[f32]>>) -> Vec<u8> {
        let mut body = Vec::with_capacity(vectors.len() * self.record());
        for (key, v) in vectors {
            body.extend(key.to_le_bytes());
            v.iter().for_each(|x| body.extend(x.to_le_bytes()));
        }
        body
    }

    /// The records of a whole file of this model's dimensions.
    fn decode<'b>(&self, bytes: &'b [u8]) -> Option<std::slice::ChunksExact<'b, u8>> {
        let (dims, body) = framed::unframe(MAGIC, bytes)?;
        let whole = dims == self.dims && body.len() % self.record() == 0;
        whole.then(|| body.chunks_exact(self.record()))
    }

    /// Keeps the records' vectors (a vector already held stays); returns how
    /// many records there were.
    fn take(&self, records: std::slice::ChunksExact<'_, u8>) -> usize {
        let n = records.len();
        let mut vectors = self.lock();
        vectors.reserve(n);
        for r in records {
            let (key, values) = r.split_at(8);
            let key = u64::from_le_bytes(key.try_into().expect("8 bytes"));
            vectors.entry(key).or_insert_with(|| {
                values
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect()
            });
        }
        self.read.fetch_add(n, Ordering::Relaxed);
        n
    }

    fn lock(&self) -> MutexGuard<'_, FxHashMap<u64, Arc<[f32]>>> {
        self.vectors.lock().unwrap_or_else(|e| e.into_inner())
    }
}
