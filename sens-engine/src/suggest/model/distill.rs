//! Distilling the static model from the transformer, as model2vec does: every
//! word piece of the vocabulary through the forward pass alone, between the
//! sequence's bounds swapped (`[SEP] piece [CLS]`, which model2vec found to work
//! better), its mean-pooled output kept at the model's dimensions, centred
//! (what PCA does before it rotates: the pieces share one large common
//! direction, which put every two texts' cosine near 0.93), then weighted by the
//! piece's rank (SIF with Zipf's law: the vocabulary's order stands for
//! frequency, so the commonest pieces weigh least). No data is needed and
//! nothing is downloaded: the transformer installed is the teacher.

use super::products::Precision;
use super::static_vectors::StaticVectors;
use super::weights::Weights;

/// Bumped when the distillation changes: names the table's file.
pub(super) const VERSION: u32 = 2;
/// Sequences per forward pass: enough rows to pack each weight matrix once for
/// many pieces.
const BATCH: usize = 512;
/// SIF's `a`: a piece of probability `p` weighs `a / (a + p)` (model2vec's).
const SIF: f64 = 1e-4;

impl Weights {
    /// The static table of a vocabulary of `pieces`, `bounds` the sequence's
    /// first and last tokens.
    pub(super) fn distill(&self, pieces: usize, [first, last]: [u32; 2]) -> StaticVectors {
        let mut rows = Vec::with_capacity(pieces * self.hidden);
        let ids: Vec<u32> = (0..pieces as u32).collect();
        for batch in ids.chunks(BATCH) {
            let sequences: Vec<Vec<u32>> = batch.iter().map(|&id| vec![last, id, first]).collect();
            for v in self.forward(&sequences, Precision::Full) {
                rows.extend(v);
            }
        }
        let d = self.hidden;
        let mut mean = vec![0.0f64; d];
        for row in rows.chunks_exact(d) {
            mean.iter_mut()
                .zip(row)
                .for_each(|(m, &x)| *m += f64::from(x));
        }
        let mean: Vec<f32> = mean.iter().map(|m| (m / pieces as f64) as f32).collect();
        // Zipf: the piece of rank r (from 1) has probability 1 / ((r + 1) H).
        let harmonic: f64 = (2..pieces + 2).map(|r| 1.0 / r as f64).sum();
        for (rank, row) in rows.chunks_exact_mut(self.hidden).enumerate() {
            let p = 1.0 / ((rank + 2) as f64 * harmonic);
            let weight = (SIF / (SIF + p)) as f32;
            row.iter_mut()
                .zip(&mean)
                .for_each(|(x, m)| *x = (*x - m) * weight);
        }
        StaticVectors {
            dims: self.hidden,
            rows,
        }
    }
}
