//! Loops over `f32`s written so that the compiler vectorizes them: eight
//! running sums or maxima instead of one chain of dependent steps, rounding
//! without a call into the C library. The forward pass, the 8-bit products
//! and the cosine share them.

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
}
