//! Products by a weight matrix in 8-bit integers, for the prompt's forward pass: a prompt
//! is embedded while the person waits, and its products by the weights are most of a
//! suggestion's time (docs/suggestions.md, "Ranking with the contextual model").
//!
//! Each output's weights are rounded to `i8` on a scale of their own (the
//! largest magnitude to 127); at every product each row of activations is
//! rounded to 256 steps from its least value to its largest (and 0), a `u8`
//! (what `vpdpbusd` multiplies) and the row's zero point: a GELU's outputs are
//! nearly all above -0.17, and a range centred on 0 would leave half its steps
//! unused (the vectors' cosine to full precision: 0.9991 against 0.9980 in
//! the numpy trial on the case prompts).
//! The sums are exact integers, so every machine with AVX-512 VNNI gives a
//! prompt the same vector. Without it (or with `SENS_SUGGEST_FULL_PRECISION`
//! set) the weights are not rounded and the prompt's products stay in `f32`,
//! as the symbols' are: the portable integer loop, which gives the same bits,
//! is fifty times slower than the kernel and slower than `f32`, so it only
//! checks the kernel.

use std::mem::MaybeUninit;

use super::lanes::{self, wide};

/// Outputs per block of the packed layout (one 512-bit register of `i32` sums).
const LANES: usize = 16;
/// Inputs per `vpdpbusd` step (four bytes make one `i32` lane).
const STEP: usize = 4;
/// Blocks a kernel call fills (16 sums in registers with 4 rows).
const BLOCKS: usize = 4;
/// Outputs a kernel call fills.
pub(super) const TILE_OUTPUTS: usize = LANES * BLOCKS;
/// Rows a kernel call reads.
const TILE_ROWS: usize = 4;

/// A weight matrix rounded to 8 bits, laid out for the kernel: block by block of
/// 16 outputs, step by step of 4 inputs, the 16 x 4 bytes.
pub(super) struct Quantized {
    inputs: usize,
    packed: Vec<i8>,
    /// Each output's scale: its weights are `packed * scale`.
    scale: Vec<f32>,
    /// Each output's sum of rounded weights: a row's zero point times it is
    /// what the zero point adds to the row's sums.
    sums: Vec<i32>,
}

/// Rows of activations rounded to 8 bits, each on its own scale: a value is
/// `(byte - zero) * scale`.
pub(super) struct Rows {
    bytes: Vec<u8>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

impl Quantized {
    /// The `outputs x inputs` row-major matrix `weight` (as stored), or `None`
    /// when the CPU has no kernel for it or its shape does not fit the
    /// kernel's tiles (then the product stays in `f32`).
    pub(super) fn new(weight: &[f32], inputs: usize) -> Option<Self> {
        let full = std::env::var_os("SENS_SUGGEST_FULL_PRECISION").is_some_and(|v| !v.is_empty());
        if full || !kernel() {
            return None;
        }
        Self::packed(weight, inputs)
    }

    /// [`Quantized::new`] whatever the CPU.
    fn packed(weight: &[f32], inputs: usize) -> Option<Self> {
        let outputs = weight.len() / inputs;
        if !inputs.is_multiple_of(STEP) || !outputs.is_multiple_of(TILE_OUTPUTS) || outputs == 0 {
            return None;
        }
        let steps = inputs / STEP;
        let mut packed = vec![0i8; inputs * outputs];
        let mut scale = Vec::with_capacity(outputs);
        let mut sums = Vec::with_capacity(outputs);
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            let s = scale_of(row);
            let (block, lane) = (o / LANES, o % LANES);
            let mut sum = 0i32;
            for (i, &w) in row.iter().enumerate() {
                let q = lanes::nearest(w / s) as i8;
                sum += i32::from(q);
                packed[((block * steps + i / STEP) * LANES + lane) * STEP + i % STEP] = q;
            }
            scale.push(s);
            sums.push(sum);
        }
        Some(Quantized {
            inputs,
            packed,
            scale,
            sums,
        })
    }

    /// `x W^T + bias` for the outputs `from..from + width` (multiples of
    /// [`TILE_OUTPUTS`]) of every row of `x`: `rows x width`, row-major.
    pub(super) fn product(&self, x: &Rows, from: usize, width: usize, bias: &[f32]) -> Vec<f32> {
        // SAFETY: `product_into` sets every value of its output.
        unsafe {
            lanes::written(x.scale.len() * width, |y| {
                product_into(self, x, from, bias, y);
            })
        }
    }
}

wide! {
    /// [`Quantized::product`] of `w` into `y`, as many outputs wide as it has
    /// room for beside `x`'s rows: sets every value of `y`. Its last step (each
    /// sum less the zero point's share, scaled, plus the bias) is element-wise.
    pub(super) fn product_into(w: &Quantized, x: &Rows, from: usize, bias: &[f32], y: &mut [MaybeUninit<f32>]) {
        let n = x.scale.len();
        let width = y.len() / n;
        let steps = w.inputs / STEP;
        let mut sums = vec![0i32; TILE_ROWS * TILE_OUTPUTS];
        for tile in (from..from + width).step_by(TILE_OUTPUTS) {
            let weights = &w.packed[tile / LANES * steps * LANES * STEP..];
            for row in (0..n).step_by(TILE_ROWS) {
                let rows = TILE_ROWS.min(n - row);
                let bytes = &x.bytes[row * w.inputs..(row + rows) * w.inputs];
                tile_sums(bytes, w.inputs, weights, &mut sums[..rows * TILE_OUTPUTS]);
                for (r, sums) in sums.chunks_exact(TILE_OUTPUTS).take(rows).enumerate() {
                    let out = &mut y[(row + r) * width + tile - from..][..TILE_OUTPUTS];
                    let o = tile..tile + TILE_OUTPUTS;
                    let (zero, row_scale) = (x.zero[row + r], x.scale[row + r]);
                    for ((((y, &sum), &weights), &scale), &bias) in out
                        .iter_mut()
                        .zip(sums)
                        .zip(&w.sums[o.clone()])
                        .zip(&w.scale[o.clone()])
                        .zip(&bias[o])
                    {
                        y.write((sum - zero * weights) as f32 * (row_scale * scale) + bias);
                    }
                }
            }
        }
    }
}

wide! {
    /// Each row of `x` (`inputs` wide) rounded to 256 steps from its least value
    /// to its largest (0 included, so that 0 is a whole step).
    pub(super) fn rows(x: &[f32], inputs: usize) -> Rows {
        let n = x.len() / inputs;
        let mut rows = Rows {
            bytes: vec![0; x.len()],
            scale: Vec::with_capacity(n),
            zero: Vec::with_capacity(n),
        };
        for (row, bytes) in x.chunks_exact(inputs).zip(rows.bytes.chunks_exact_mut(inputs)) {
            let least = -lanes::max(row, |v| -v).max(0.0);
            let largest = lanes::max(row, |v| v).max(0.0);
            let s = if largest > least {
                (largest - least) / 255.0
            } else {
                1.0
            };
            let inverse = 1.0 / s;
            let zero = lanes::nearest(-least * inverse);
            for (b, &v) in bytes.iter_mut().zip(row) {
                *b = (lanes::nearest(v * inverse) + zero).clamp(0, 255) as u8;
            }
            rows.scale.push(s);
            rows.zero.push(zero);
        }
        rows
    }
}

/// The step of 8 bits for `values`: their largest magnitude is 127 steps (1
/// when all are 0).
fn scale_of(values: &[f32]) -> f32 {
    let largest = lanes::max(values, f32::abs);
    if largest > 0.0 { largest / 127.0 } else { 1.0 }
}

/// Whether the CPU has the 8-bit kernel.
fn kernel() -> bool {
    #[cfg(target_arch = "x86_64")]
    return vnni::available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The integer sums of up to [`TILE_ROWS`] rows of `x` by the [`TILE_OUTPUTS`]
/// outputs whose packed weights `w` starts with, into `sums` (row by row).
fn tile_sums(x: &[u8], inputs: usize, w: &[i8], sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if vnni::available() {
        // SAFETY: the CPU has the features the kernel is compiled for, and the
        // slices hold every byte it reads and writes (checked inside).
        unsafe { vnni::tile_sums(x, inputs, w, sums) };
        return;
    }
    portable_tile_sums(x, inputs, w, sums);
}

/// [`tile_sums`] without SIMD: the same integers (a machine without the
/// kernel never rounds its weights, so this only checks the kernel).
fn portable_tile_sums(x: &[u8], inputs: usize, w: &[i8], sums: &mut [i32]) {
    let block = inputs * LANES;
    for (row, sums) in x
        .chunks_exact(inputs)
        .zip(sums.chunks_exact_mut(TILE_OUTPUTS))
    {
        for (o, sum) in sums.iter_mut().enumerate() {
            let lanes = &w[o / LANES * block..][..block];
            let lane = o % LANES;
            *sum = row
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let q = lanes[(i / STEP * LANES + lane) * STEP + i % STEP];
                    i32::from(x) * i32::from(q)
                })
                .sum();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    use super::{BLOCKS, LANES, STEP, TILE_OUTPUTS, TILE_ROWS};

    pub(super) fn available() -> bool {
        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        *AVAILABLE.get_or_init(|| super::lanes::avx512() && is_x86_feature_detected!("avx512vnni"))
    }

    /// [`super::tile_sums`] with `vpdpbusd`: per step of 4 inputs, each row's 4
    /// bytes broadcast against the 4 blocks' 64 bytes.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and AVX-512 VNNI.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn tile_sums(x: &[u8], inputs: usize, w: &[i8], sums: &mut [i32]) {
        let rows = x.len() / inputs;
        let block = inputs * LANES;
        assert!((1..=TILE_ROWS).contains(&rows) && sums.len() == rows * TILE_OUTPUTS);
        assert!(x.len() == rows * inputs && w.len() >= BLOCKS * block);
        // SAFETY: the asserts above are `tile`'s conditions, with `R` = `rows`.
        unsafe {
            match rows {
                1 => tile::<1>(x, inputs, w, sums),
                2 => tile::<2>(x, inputs, w, sums),
                3 => tile::<3>(x, inputs, w, sums),
                _ => tile::<4>(x, inputs, w, sums),
            }
        }
    }

    /// [`tile_sums`] for `R` rows.
    ///
    /// # Safety
    /// `x` holds `R` rows of `inputs` bytes, `w` at least [`BLOCKS`] blocks of
    /// `inputs * 16` bytes, `sums` `R * 64` sums, and the CPU has AVX-512F and
    /// AVX-512 VNNI.
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn tile<const R: usize>(x: &[u8], inputs: usize, w: &[i8], sums: &mut [i32]) {
        let block = inputs * LANES;
        let mut acc = [[_mm512_setzero_si512(); BLOCKS]; R];
        for step in 0..inputs / STEP {
            // The function's conditions bound every read: block b's step s is
            // 64 bytes at b * block + s * 64 < BLOCKS * block, row r's step at
            // r * inputs + s * 4 < R * inputs.
            let weights: [__m512i; BLOCKS] = std::array::from_fn(|b| {
                // SAFETY: block b's step lies inside `w` (above).
                unsafe {
                    _mm512_loadu_si512(w.as_ptr().add(b * block + step * LANES * STEP).cast())
                }
            });
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: row r's step lies inside `x` (above).
                let bytes = unsafe {
                    x.as_ptr()
                        .add(r * inputs + step * STEP)
                        .cast::<i32>()
                        .read_unaligned()
                };
                let x = _mm512_set1_epi32(bytes);
                for (acc, &w) in acc.iter_mut().zip(&weights) {
                    *acc = _mm512_dpbusd_epi32(*acc, x, w);
                }
            }
        }
        for (acc, sums) in acc.iter().zip(sums.chunks_exact_mut(TILE_OUTPUTS)) {
            for (acc, sums) in acc.iter().zip(sums.chunks_exact_mut(LANES)) {
                // SAFETY: `sums` holds 16 `i32`s here.
                unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast(), *acc) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducible matrix of values in -1..1 (a small LCG: no test needs
    /// more than spread).
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn the_kernel_and_the_portable_loop_give_the_same_sums() {
        let inputs = 96;
        let w = Quantized::packed(&values(inputs * 128, 1), inputs).unwrap();
        for rows_n in 1..=TILE_ROWS {
            let x = rows(&values(rows_n * inputs, 2 + rows_n as u64), inputs);
            for tile in [0, 1] {
                let packed = &w.packed[tile * BLOCKS * inputs * LANES..];
                let mut fast = vec![0; rows_n * TILE_OUTPUTS];
                let mut slow = vec![1; rows_n * TILE_OUTPUTS];
                tile_sums(&x.bytes, inputs, packed, &mut fast);
                portable_tile_sums(&x.bytes, inputs, packed, &mut slow);
                assert_eq!(fast, slow, "{rows_n} rows, tile {tile}");
            }
        }
    }

    #[test]
    fn the_product_is_the_product_of_the_rounded_values() {
        let (inputs, outputs, n) = (384, 128, 7);
        let weight = values(inputs * outputs, 3);
        let x = values(n * inputs, 4);
        let bias = values(outputs, 5);
        let w = Quantized::packed(&weight, inputs).unwrap();
        let q = rows(&x, inputs);
        let mut y = vec![0.0f32; n * outputs];
        for from in [0, 64] {
            let part = w.product(&q, from, 64, &bias);
            for (row, part) in part.chunks_exact(64).enumerate() {
                y[row * outputs + from..][..64].copy_from_slice(part);
            }
        }
        // Each weight rounded to a whole number of its output's step (127 to
        // the largest magnitude), each activation to one of its row's 256.
        let weights = |v: &[f32]| -> Vec<f64> {
            let step = f64::from(v.iter().fold(0.0f32, |m, v| m.max(v.abs()))) / 127.0;
            v.iter()
                .map(|&v| (f64::from(v) / step).round() * step)
                .collect()
        };
        let activations = |v: &[f32]| -> Vec<f64> {
            let least = f64::from(v.iter().fold(0.0f32, |m, &v| m.min(v)));
            let largest = f64::from(v.iter().fold(0.0f32, |m, &v| m.max(v)));
            let step = (largest - least) / 255.0;
            let zero = (-least / step).round();
            v.iter()
                .map(|&v| (((f64::from(v) / step).round() + zero).clamp(0.0, 255.0) - zero) * step)
                .collect()
        };
        let (xs, ws): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (
            x.chunks_exact(inputs).map(activations).collect(),
            weight.chunks_exact(inputs).map(weights).collect(),
        );
        for (r, x) in xs.iter().enumerate() {
            for (o, w) in ws.iter().enumerate() {
                let exact = x.iter().zip(w).map(|(x, w)| x * w).sum::<f64>() + f64::from(bias[o]);
                let got = f64::from(y[r * outputs + o]);
                assert!(
                    (got - exact).abs() < 1e-4,
                    "row {r} output {o}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn a_shape_the_tiles_do_not_fit_stays_in_f32() {
        assert!(Quantized::packed(&values(6 * 64, 6), 6).is_none());
        assert!(Quantized::packed(&values(8 * 48, 7), 8).is_none());
    }
}
