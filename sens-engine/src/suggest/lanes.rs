//! Loops over `f32`s written so that the compiler vectorizes them: eight
//! running sums or maxima instead of one chain of dependent steps, rounding
//! without a call into the C library, a map with no scalar tail; outputs made
//! without zeroing them first; and `wide!`, which compiles a loop for
//! AVX-512 too. The forward pass, the 8-bit products and the cosine share them.

use std::mem::MaybeUninit;

/// The sum of `f(v)` over `values`.
#[inline(always)]
pub(super) fn sum(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut sums = [0.0f32; 8];
    let chunks = values.chunks_exact(8);
    let rest: f32 = chunks.remainder().iter().map(|&v| f(v)).sum();
    for chunk in chunks {
        sums.iter_mut().zip(chunk).for_each(|(s, &v)| *s += f(v));
    }
    sums.iter().sum::<f32>() + rest
}

/// The sum of `a[i] * b[i]`.
#[inline(always)]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let rest: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a8.zip(b8) {
        for (s, (x, y)) in sums.iter_mut().zip(x.iter().zip(y)) {
            *s += x * y;
        }
    }
    sums.iter().sum::<f32>() + rest
}

/// The largest `f(v)` over `values` (`f32::NEG_INFINITY` when empty).
#[inline(always)]
pub(super) fn max(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| m.max(f(v)));
    for chunk in chunks {
        for (m, &v) in lanes.iter_mut().zip(chunk) {
            let v = f(v);
            *m = if v > *m { v } else { *m };
        }
    }
    lanes.iter().fold(rest, |m, &v| m.max(v))
}

/// `f` of every value, in place, sixteen at a time: the last few too, in a
/// padded copy, so that no value takes the scalar loop a compiler leaves
/// after a vectorized one (a softmax row of 265 keys spent more time in its
/// last 9 exponentials than in the 256 before them).
#[inline(always)]
pub(super) fn map16(values: &mut [f32], f: impl Fn(f32) -> f32) {
    let mut chunks = values.chunks_exact_mut(16);
    for chunk in &mut chunks {
        chunk.iter_mut().for_each(|v| *v = f(*v));
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut padded = [0.0f32; 16];
        padded[..tail.len()].copy_from_slice(tail);
        padded.iter_mut().for_each(|v| *v = f(*v));
        tail.copy_from_slice(&padded[..tail.len()]);
    }
}

/// The nearest whole number to `v` (`|v| < 2^22`), ties to even. Adding 1.5 x
/// 2^23 leaves no fraction bits, so the `f32` addition rounds them off and the
/// sum's low bits are the number: no call (`f32::round` is one into the C
/// library on x86-64's baseline: a long prompt in 8 bits took 59 ms with it,
/// 41 ms without) and no saturating conversion.
#[inline(always)]
pub(super) fn nearest(v: f32) -> i32 {
    const SHIFT: f32 = 12_582_912.0;
    (v + SHIFT).to_bits().wrapping_sub(SHIFT.to_bits()) as i32
}

/// A vector of `len` values set by `fill`, which is given them unset: a
/// product's output needs no zeros before the product writes it (a long
/// prompt's pass would clear about 40 MB).
///
/// # Safety
///
/// `fill` sets every value it is given.
pub(super) unsafe fn written(len: usize, fill: impl FnOnce(&mut [MaybeUninit<f32>])) -> Vec<f32> {
    let mut values = Vec::with_capacity(len);
    fill(&mut values.spare_capacity_mut()[..len]);
    // SAFETY: the caller vouches that `fill` set all `len` values.
    unsafe { values.set_len(len) };
    values
}

/// Defines a function and its twin compiled for AVX-512 where the CPU has it (16
/// lanes where the baseline has 4), for the element-wise loops of a forward
/// pass and the 8-bit products' rounding: their operations are the same in
/// every width, so the vectors are too.
/// What the loops call is inlined (`#[inline(always)]`) so that it is compiled
/// wide as well.
macro_rules! wide {
    (
        $(#[$doc:meta])*
        $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn wide($($arg: $ty),*) $(-> $ret)? $body
                if $crate::suggest::lanes::avx512() {
                    // SAFETY: the CPU has AVX-512F.
                    return unsafe { wide($($arg),*) };
                }
            }
            $body
        }
    };
}
pub(super) use wide;

/// Whether the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
pub(super) fn avx512() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| is_x86_feature_detected!("avx512f"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_maxima_and_rounding_are_the_plain_ones() {
        for n in [0, 1, 7, 8, 9, 100] {
            let v: Vec<f32> = (0..n).map(|i| ((i * 29 % 17) as f32 - 8.0) / 4.0).collect();
            let plain: f32 = v.iter().map(|x| x * x).sum();
            assert!((super::sum(&v, |x| x * x) - plain).abs() < 1e-4);
            assert!((super::dot(&v, &v) - plain).abs() < 1e-4);
            let largest = v.iter().fold(f32::NEG_INFINITY, |m, x| m.max(x.abs()));
            assert_eq!(super::max(&v, f32::abs), largest);
        }
        for (v, n) in [
            (2.5, 2),
            (3.5, 4),
            (-2.5, -2),
            (-0.4, 0),
            (126.6, 127),
            (-127.0, -127),
        ] {
            assert_eq!(super::nearest(v), n, "{v}");
        }
    }

    #[test]
    fn map16_maps_every_value_the_last_few_too() {
        for n in [0, 1, 15, 16, 17, 40] {
            let mut v: Vec<f32> = (0..n).map(|i| i as f32).collect();
            super::map16(&mut v, |x| 2.0 * x + 1.0);
            let expected: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 1.0).collect();
            assert_eq!(v, expected, "{n} values");
        }
    }
}
