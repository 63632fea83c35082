//! The static model: one vector per word piece, distilled from the transformer
//! ([`super::distill`]), a text's vector the unit-length mean of its pieces'
//! (the model2vec method). A whole project's symbols take milliseconds, a prompt
//! microseconds, where the transformer's forward pass takes seconds and tens of
//! milliseconds (docs/suggestions.md, "The static model").
//!
//! Kept beside the transformer's weights (`static-<key>.vec`, the key a hash
//! of the weights' header and length and of the distillation's version), made
//! once: magic, `u32` dimensions, `u64` body length, CRC-32 of the body, then
//! each piece's row of `f32`s, little-endian. A file that is not whole is an
//! error, never trusted.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};

use crate::suggest::{framed, lanes};

const MAGIC: &[u8; 8] = b"SENSSTV1";

pub(super) struct StaticVectors {
    pub(super) dims: usize,
    /// Each word piece's row, by id.
    pub(super) rows: Vec<f32>,
}

impl StaticVectors {
    /// The file of the weights whose key is `key`, in their folder.
    pub(super) fn path(dir: &Path, key: u64) -> PathBuf {
        dir.join(format!("static-{key:016x}.vec"))
    }

    /// The unit-length mean of the pieces' rows (zeros for none).
    pub(super) fn embed(&self, ids: &[u32]) -> Vec<f32> {
        let d = self.dims;
        let mut mean = vec![0.0f32; d];
        for &id in ids {
            let row = &self.rows[id as usize * d..][..d];
            mean.iter_mut().zip(row).for_each(|(m, r)| *m += r);
        }
        let norm = lanes::dot(&mean, &mean).sqrt();
        if norm > 0.0 {
            mean.iter_mut().for_each(|m| *m /= norm);
        }
        mean
    }

    /// The table in `path`, for a vocabulary of `pieces`.
    pub(super) fn read(path: &Path, pieces: usize) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let whole = || -> Option<Self> {
            let (dims, body) = framed::unframe(MAGIC, &bytes)?;
            let ok = dims > 0 && body.len() == 4 * dims * pieces;
            ok.then(|| Self {
                dims,
                rows: body
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            })
        };
        whole().with_context(|| {
            format!(
                "{} is not a whole table of {pieces} word pieces: delete it to distill again",
                path.display()
            )
        })
    }

    /// Writes the table to `path` (beside it, then renamed over it).
    pub(super) fn write(&self, path: &Path) -> Result<()> {
        ensure!(self.dims > 0, "an empty table");
        let body: Vec<u8> = self.rows.iter().flat_map(|x| x.to_le_bytes()).collect();
        framed::write(path, MAGIC, self.dims, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> StaticVectors {
        StaticVectors {
            dims: 2,
            rows: vec![1.0, 0.0, 0.0, 2.0, 3.0, 4.0],
        }
    }

    #[test]
    fn a_text_is_the_unit_length_mean_of_its_pieces() {
        let t = table();
        assert_eq!(t.embed(&[0, 1]), [1.0 / 5f32.sqrt(), 2.0 / 5f32.sqrt()]);
        assert_eq!(t.embed(&[2]), [0.6, 0.8]);
        assert_eq!(t.embed(&[]), [0.0, 0.0]);
    }

    #[test]
    fn a_table_reads_back_whole_and_a_damaged_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = StaticVectors::path(dir.path(), 7);
        table().write(&path).unwrap();
        assert_eq!(StaticVectors::read(&path, 3).unwrap().rows, table().rows);
        // Another vocabulary's table is not this one's.
        let err = format!("{:#}", StaticVectors::read(&path, 4).err().unwrap());
        assert!(err.contains("not a whole table of 4 word pieces"), "{err}");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let err = format!("{:#}", StaticVectors::read(&path, 3).err().unwrap());
        assert!(err.contains("delete it to distill again"), "{err}");
    }
}
