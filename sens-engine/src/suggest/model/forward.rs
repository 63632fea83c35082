//! The encoder's forward pass: embeddings, then each layer's self-attention
//! (with MPNet's relative-position biases) and feed-forward, each followed by its
//! norm, and the output mean-pooled into a unit vector.

use rayon::prelude::*;

use super::products::{Operand, Precision, product, spread};
use super::weights::{HEADS, Norm, RELATIVE_BUCKETS, RELATIVE_MAX_DISTANCE, Weights};
use crate::suggest::lanes::{self, wide};

/// Activations per GELU task.
const GELU_CHUNK: usize = 1 << 14;

impl Weights {
    /// The encoder's forward pass over each sequence, mean-pooled and
    /// normalized. The sequences' rows are stacked for every product by weights;
    /// attention and pooling stay within each sequence, so each vector is its
    /// own.
    pub(super) fn forward(&self, sequences: &[Vec<u32>], precision: Precision) -> Vec<Vec<f32>> {
        let d = self.hidden;
        let first = self.family.first_position();
        let max_positions = self.positions.len() / d - first;
        let lengths: Vec<usize> = sequences
            .iter()
            .map(|ids| ids.len().min(max_positions))
            .collect();
        let n: usize = lengths.iter().sum();
        let mut x = vec![0.0f32; n * d];
        let rows = sequences
            .iter()
            .zip(&lengths)
            .flat_map(|(ids, &len)| ids[..len].iter().enumerate());
        for (row, (i, &id)) in x.chunks_exact_mut(d).zip(rows) {
            let word = &self.words[id as usize * d..][..d];
            let pos = &self.positions[(first + i) * d..][..d];
            for (j, r) in row.iter_mut().enumerate() {
                *r = word[j] + pos[j] + self.token_type[j];
            }
        }
        let eps = self.family.layer_norm_eps();
        layer_norm(&mut x, &self.norm, d, eps);
        // Each sequence's heads' position biases depend on its length alone:
        // made once for every layer, in the order of `attention`'s tasks.
        let biases: Vec<Vec<f32>> = lengths
            .iter()
            .flat_map(|&len| (0..HEADS).map(move |h| head_bias(&self.relative, h, len)))
            .collect();
        for layer in &self.layers {
            let qkv = layer.qkv.apply(&x, n, precision);
            let context = attention(&qkv, &lengths, d, &biases);
            let mut h = layer.attention_out.apply(&context, n, precision);
            h.iter_mut().zip(&x).for_each(|(h, x)| *h += x);
            layer_norm(&mut h, &layer.attention_norm, d, eps);
            let mut inner = layer.intermediate.apply(&h, n, precision);
            if spread(n) {
                inner.par_chunks_mut(GELU_CHUNK).for_each(gelu_all);
            } else {
                gelu_all(&mut inner);
            }
            let mut out = layer.output.apply(&inner, n, precision);
            out.iter_mut().zip(&h).for_each(|(o, h)| *o += h);
            layer_norm(&mut out, &layer.output_norm, d, eps);
            x = out;
        }
        let mut start = 0;
        lengths
            .iter()
            .map(|&len| {
                let rows = &x[start * d..(start + len) * d];
                start += len;
                mean_pooled(rows, d)
            })
            .collect()
    }
}

/// The bucket of a key `distance` positions after the query (negative: before).
fn relative_bucket(distance: isize) -> usize {
    let half = RELATIVE_BUCKETS / 2;
    let exact = half / 2;
    let side = if distance > 0 { half } else { 0 };
    let n = distance.unsigned_abs();
    if n < exact {
        return side + n;
    }
    let ratio = (n as f32 / exact as f32).ln() / (RELATIVE_MAX_DISTANCE / exact as f32).ln();
    side + (exact + (ratio * (half - exact) as f32) as usize).min(half - 1)
}

/// The unit-length mean of `rows` (each `d` wide).
fn mean_pooled(rows: &[f32], d: usize) -> Vec<f32> {
    let mut mean = vec![0.0f32; d];
    for row in rows.chunks_exact(d) {
        mean.iter_mut().zip(row).for_each(|(m, r)| *m += r);
    }
    let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt();
    if norm > 0.0 {
        mean.iter_mut().for_each(|m| *m /= norm);
    }
    mean
}

/// Multi-head self-attention within each sequence (`lengths` of rows stacked
/// in `qkv`, each row its query, key and value side by side; no padding):
/// every sequence's every head is a task of its own, spread over the cores
/// when there are enough rows. `biases`: each task's [`head_bias`], sequence by
/// sequence and head by head.
fn attention(qkv: &[f32], lengths: &[usize], d: usize, biases: &[Vec<f32>]) -> Vec<f32> {
    let hd = d / HEADS;
    let mut jobs = Vec::new();
    let mut start = 0;
    for &len in lengths {
        jobs.extend((0..HEADS).map(|h| (start, len, h * hd)));
        start += len;
    }
    let run = |(&(start, n, at), bias): (&(usize, usize, usize), &Vec<f32>)| {
        let rows = start * 3 * d + at;
        let [q, k, v] = [0, d, 2 * d].map(|from| &qkv[rows + from..]);
        head_attention((q, k, v), n, d, bias)
    };
    let heads: Vec<Vec<f32>> = if spread(start) {
        jobs.par_iter().zip(biases).map(run).collect()
    } else {
        jobs.iter().zip(biases).map(run).collect()
    };
    let mut context = vec![0.0f32; start * d];
    for (&(start, _, at), head) in jobs.iter().zip(&heads) {
        for (i, row) in head.chunks_exact(hd).enumerate() {
            context[(start + i) * d + at..][..hd].copy_from_slice(row);
        }
    }
    context
}

/// A head's bias for each distance from `1 - n` to `n - 1` (at `distance + n -
/// 1`); empty without a relative table.
fn head_bias(relative: &[f32], head: usize, n: usize) -> Vec<f32> {
    if relative.is_empty() {
        return Vec::new();
    }
    let reach = n as isize - 1;
    (-reach..=reach)
        .map(|distance| relative[relative_bucket(distance) * HEADS + head])
        .collect()
}

/// One head's attention over `n` positions: `q`, `k` and `v` start at the head's
/// first column of the sequence's first row in the stacked projections (rows
/// `3 d` wide); `bias` is [`head_bias`]'s. Returns the head's `n x d / HEADS`
/// output.
fn head_attention(
    (q, k, v): (&[f32], &[f32], &[f32]),
    n: usize,
    d: usize,
    bias: &[f32],
) -> Vec<f32> {
    let hd = d / HEADS;
    let stride = 3 * d;
    let scale = 1.0 / (hd as f32).sqrt();
    // Q_h K_h^T: K's head as the `hd x n` right operand.
    let mut scores = product((n, hd, n), Operand(q, stride, 1), Operand(k, 1, stride));
    attention_weights(&mut scores, n, scale, bias);
    product((n, n, hd), Operand(&scores, n, 1), Operand(v, stride, 1))
}

wide! {
    /// GELU of every value, in place.
    fn gelu_all(values: &mut [f32]) {
        values.iter_mut().for_each(|y| *y = gelu(*y));
    }
}

wide! {
    /// Each `n`-wide row of `scores` scaled, plus the head's position biases
    /// (`head_bias`; none when empty), made its softmax.
    fn attention_weights(scores: &mut [f32], n: usize, scale: f32, bias: &[f32]) {
        for (i, row) in scores.chunks_exact_mut(n).enumerate() {
            row.iter_mut().for_each(|s| *s *= scale);
            if !bias.is_empty() {
                // Key j is j - i positions after query i: bias[j - i + n - 1].
                let from = &bias[n - 1 - i..][..n];
                row.iter_mut().zip(from).for_each(|(s, b)| *s += b);
            }
            softmax(row);
        }
    }
}

/// `row` made its softmax in place, every loop one the compiler vectorizes (a
/// prompt's attention takes 4.6 million exponentials).
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = lanes::max(row, |s| s);
    lanes::map16(row, |s| exp(s - max));
    let inverse = 1.0 / lanes::sum(row, |s| s);
    row.iter_mut().for_each(|s| *s *= inverse);
}

/// `e^x` within 4 units in the last place, for `x` up to 88 (below -87 it
/// is 0's neighbour, the smallest normal `f32`): `2^k e^r` with `k` the nearest
/// whole number to `x / ln 2` and `e^r` a polynomial on `|r| <= ln 2 / 2`
/// (Cephes' `expf` coefficients). Written without branches or calls, so that
/// loops over it vectorize; `f32::exp` is a call into the C library.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.336_55, 88.0);
    let k = lanes::nearest(x * std::f32::consts::LOG2_E);
    let kf = k as f32;
    // ln 2 in two parts, the first exact in a few bits, so r keeps its digits.
    let r = x - kf * 0.693_359_4 + kf * 2.121_944_4e-4;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_2e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(((k + 127) as u32) << 23)
}

wide! {
    /// Each `d`-wide row of `x` normalized to mean 0 and variance 1, then
    /// scaled and shifted by `norm`.
    fn layer_norm(x: &mut [f32], norm: &Norm, d: usize, eps: f32) {
        for row in x.chunks_exact_mut(d) {
            let mean = lanes::sum(row, |v| v) / d as f32;
            let var = lanes::sum(row, |v| (v - mean) * (v - mean)) / d as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&norm.weight).zip(&norm.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

/// BERT's exact GELU, erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7;
/// std has no erf).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let z = x / std::f32::consts::SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    let erf = (1.0 - poly * exp(-a * a)).copysign(z);
    0.5 * x * (1.0 + erf)
}

#[cfg(test)]
mod tests {
    use super::{exp, softmax};

    #[test]
    fn exp_is_the_exponential_to_a_few_units_in_the_last_place() {
        for i in -87_000..=88_000 {
            let x = i as f32 / 1000.0;
            let exact = f64::from(x).exp();
            let got = f64::from(exp(x));
            assert!(
                ((got - exact) / exact).abs() < 4.0 * f64::from(f32::EPSILON),
                "exp({x}) = {got}, not {exact}"
            );
        }
        // Far below: the smallest normal, which a softmax sums as nothing.
        assert!(exp(-1000.0) <= f32::MIN_POSITIVE && exp(-1000.0) > 0.0);
    }

    #[test]
    fn softmax_is_the_normalized_exponentials() {
        for n in [1, 7, 8, 9, 254] {
            let scores: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 23) as f32 - 11.0) / 3.0)
                .collect();
            let mut row = scores.clone();
            softmax(&mut row);
            let max = scores.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s));
            let total: f64 = scores.iter().map(|&s| f64::from(s - max).exp()).sum();
            for (&got, &s) in row.iter().zip(&scores) {
                let exact = f64::from(s - max).exp() / total;
                assert!(
                    (f64::from(got) - exact).abs() < 1e-6,
                    "{n} scores: {got} vs {exact}"
                );
            }
        }
    }
}
