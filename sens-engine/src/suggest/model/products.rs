//! The forward pass's products by the weights: in `f32` through matrixmultiply,
//! or in 8-bit integers (`quant`) for the prompt, split between the cores by rows
//! or by outputs.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::weights::Dense;
use crate::suggest::lanes;
use crate::suggest::quant;

/// Rows of a product below which one core does it all.
const MIN_ROWS_PER_THREAD: usize = 32;

/// The arithmetic of a forward pass's products by the weights.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Precision {
    /// `f32`: the symbols' vectors, which are kept and compared for a long time.
    Full,
    /// 8-bit integers where the weights have them: the prompt, embedded while
    /// the person waits (docs/suggestions.md, "Ranking with the contextual model").
    Int8,
}

impl Dense {
    /// `x W^T + b` for `n` rows of `x`.
    pub(super) fn apply(&self, x: &[f32], n: usize, precision: Precision) -> Vec<f32> {
        let outputs = self.bias.len();
        let inputs = self.weight.len() / outputs;
        let threads = rayon::current_num_threads();
        if let (Precision::Int8, Some(quantized)) = (precision, &self.quantized) {
            if spread(n) {
                // A long prompt's rows split between the cores, each rounding
                // its own and writing its part of the product in place.
                let rows = n.div_ceil(threads);
                let fill = |y: &mut [MaybeUninit<f32>]| {
                    y.par_chunks_mut(rows * outputs)
                        .zip(x.par_chunks(rows * inputs))
                        .for_each(|(y, x)| {
                            quant::product_into(
                                quantized,
                                &quant::rows(x, inputs),
                                0,
                                &self.bias,
                                y,
                            );
                        });
                };
                // SAFETY: the chunks cover `y`, and `product_into` sets every
                // value of its chunk.
                return unsafe { lanes::written(n * outputs, fill) };
            }
            // A short prompt's outputs split between the cores: each reads its
            // share of the weights once, and the rows are rounded once for all.
            let rows = quant::rows(x, inputs);
            let width = outputs
                .div_ceil(threads)
                .next_multiple_of(quant::TILE_OUTPUTS);
            return by_columns(n, outputs, width, |from, width| {
                quantized.product(&rows, from, width, &self.bias)
            });
        }
        if spread(n) || threads == 1 {
            // A long prompt's products are most of a suggestion's time: their
            // rows split between the cores, each part packing the weights once
            // (one part on one core).
            let rows = n.div_ceil(threads);
            let mut y: Vec<f32> = self.bias.repeat(n);
            y.par_chunks_mut(rows * outputs)
                .zip(x.par_chunks(rows * inputs))
                .for_each(|(y, x)| self.product_into(x, 0, y));
            y
        } else {
            // A short prompt's rows are too few to split, and its products
            // are bound by reading the weights: the outputs split instead, so
            // each core reads its share of them.
            by_columns(n, outputs, outputs.div_ceil(threads), |from, width| {
                let mut part = self.bias[from..from + width].repeat(n);
                self.product_into(x, from, &mut part);
                part
            })
        }
    }

    /// Adds `x W^T` to `y`, for the outputs from `from` on (as many as `y`'s
    /// rows are wide; `x` has as many rows as `y`).
    fn product_into(&self, x: &[f32], from: usize, y: &mut [f32]) {
        let outputs = self.bias.len();
        let inputs = self.weight.len() / outputs;
        let rows = x.len() / inputs;
        gemm(
            (rows, inputs, y.len() / rows),
            Operand(x, inputs, 1),
            Operand(&self.weight[from..], outputs, 1),
            y,
        );
    }
}

/// The `n x outputs` row-major product from `part(from, width)`, each the
/// `n x width` product for the outputs from `from` on, made on the cores: every
/// part `width` wide but the last.
fn by_columns(
    n: usize,
    outputs: usize,
    width: usize,
    part: impl Fn(usize, usize) -> Vec<f32> + Sync,
) -> Vec<f32> {
    let parts: Vec<Vec<f32>> = (0..outputs)
        .into_par_iter()
        .step_by(width)
        .map(|from| part(from, width.min(outputs - from)))
        .collect();
    let mut y = Vec::with_capacity(n * outputs);
    for row in 0..n {
        for part in &parts {
            let w = part.len() / n;
            y.extend_from_slice(&part[row * w..][..w]);
        }
    }
    y
}

/// A matrix view: data, row stride, column stride.
pub(super) struct Operand<'a>(pub(super) &'a [f32], pub(super) usize, pub(super) usize);

/// `c += a b` for an `m x k` `a`, a `k x n` `b` and a row-major `m x n` `c`.
fn gemm(dims: (usize, usize, usize), a: Operand, b: Operand, c: &mut [f32]) {
    // SAFETY: `c`'s values are all set.
    unsafe { sgemm(dims, a, b, c.as_mut_ptr(), c.len(), 1.0) }
}

/// The row-major `m x n` product `a b` of an `m x k` `a` and a `k x n` `b`.
pub(super) fn product(dims: (usize, usize, usize), a: Operand, b: Operand) -> Vec<f32> {
    let (m, _, n) = dims;
    let fill = |c: &mut [MaybeUninit<f32>]| {
        // SAFETY: with beta 0, matrixmultiply reads none of `c`'s values
        // (its documentation: "C does not need to be initialized").
        unsafe { sgemm(dims, a, b, c.as_mut_ptr().cast(), c.len(), 0.0) }
    };
    // SAFETY: the product sets each of the `m x n` values.
    unsafe { lanes::written(m * n, fill) }
}

/// `c = beta c + a b` into the `len` values at `c` (row-major, `n` wide).
///
/// # Safety
///
/// `c` points to `len` writable values, set unless `beta` is 0.
unsafe fn sgemm(
    (m, k, n): (usize, usize, usize),
    a: Operand,
    b: Operand,
    c: *mut f32,
    len: usize,
    beta: f32,
) {
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(m > 0 && k > 0 && n > 0);
    assert!(
        last(m, k, a.1, a.2) < a.0.len(),
        "left operand out of bounds"
    );
    assert!(
        last(k, n, b.1, b.2) < b.0.len(),
        "right operand out of bounds"
    );
    assert!(m * n <= len, "product out of bounds");
    // SAFETY: the asserts above keep every index the strides reach inside the
    // slices and `c`'s `len` values, and `c` does not alias `a` or `b` (the
    // caller holds it mutably).
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.0.as_ptr(),
            a.1 as isize,
            a.2 as isize,
            b.0.as_ptr(),
            b.1 as isize,
            b.2 as isize,
            beta,
            c,
            n as isize,
            1,
        );
    }
}

/// Whether work over `rows` rows is worth spreading over the cores (a short
/// one costs less than waking another thread).
pub(super) fn spread(rows: usize) -> bool {
    rows >= rayon::current_num_threads() * MIN_ROWS_PER_THREAD
}
