//! The framing of the suggestions' vector files (the static model's table, the
//! symbol vectors' cache): a magic, the vectors' dimensions, the body's length
//! and its CRC-32, then the body. A file is whole only when all of them agree,
//! and is written beside its place then renamed over it, so a reader sees a
//! whole file, the old or the new.

use std::path::Path;

use anyhow::{Context, Result};

/// Magic (8), dimensions (4), body length (8), CRC-32 (4).
const HEADER: usize = 8 + 4 + 8 + 4;

/// The dimensions and body of `bytes` when it is a whole file of `magic`.
pub(super) fn unframe<'b>(magic: &[u8; 8], bytes: &'b [u8]) -> Option<(usize, &'b [u8])> {
    let (header, body) = bytes.split_at_checked(HEADER)?;
    let (found, rest) = header.split_at(8);
    let (dims, rest) = rest.split_at(4);
    let (length, crc) = rest.split_at(8);
    let whole = found == magic
        && u64::from_le_bytes(length.try_into().ok()?) == body.len() as u64
        && u32::from_le_bytes(crc.try_into().ok()?) == crc32fast::hash(body);
    whole.then_some((u32::from_le_bytes(dims.try_into().ok()?) as usize, body))
}

/// Writes `body` framed with `magic` and `dims` to `path`.
pub(super) fn write(path: &Path, magic: &[u8; 8], dims: usize, body: &[u8]) -> Result<()> {
    let dims = u32::try_from(dims).context("too many dimensions")?;
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend(magic);
    out.extend(dims.to_le_bytes());
    out.extend((body.len() as u64).to_le_bytes());
    out.extend(crc32fast::hash(body).to_le_bytes());
    out.extend(body);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, &out)
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
