//! The number crunching behind [`super::dense::DenseIndex`]: dot products written so the
//! compiler vectorises them (independent accumulators over `chunks_exact` blocks), an `i8`
//! quantisation with a proven error bound, and a scan over many rows that uses AVX2 when the CPU
//! has it (checked at run time: the extension is built for baseline x86-64).

/// Lanes summed independently; a multiple of every SIMD width we care about (4, 8, 16 floats).
const F32_LANES: usize = 16;
/// Bytes per block of the `i8` dot product (one AVX2 register).
const I8_LANES: usize = 32;

/// `a · b` for two slices of the same length.
#[inline(always)]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; F32_LANES];
    let (ca, cb) = (a.chunks_exact(F32_LANES), b.chunks_exact(F32_LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..F32_LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// `a · b` over `i8` codes, exact in `i32` (|a_i b_i| <= 127², so 2^31 / 127² > 133k dims).
#[inline(always)]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; I8_LANES];
    let (ca, cb) = (a.chunks_exact(I8_LANES), b.chunks_exact(I8_LANES));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..I8_LANES {
            // The i16 product (|x*y| <= 16129 fits) lets the compiler use a multiply-add of pairs.
            acc[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// A vector stored as `i8` codes: `v_i ≈ scale * codes_i`, with `|v_i - scale * codes_i| <=
/// scale / 2`. `l1` is `Σ|codes_i|`, which bounds the error of a dot product (see [`error_bound`]).
pub struct Quantised {
    pub codes: Vec<i8>,
    pub scale: f32,
    pub l1: f32,
}

/// Quantises `v` symmetrically: the largest magnitude maps to ±127.
pub fn quantise(v: &[f32]) -> Quantised {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return Quantised {
            codes: vec![0; v.len()],
            scale: 0.0,
            l1: 0.0,
        };
    }
    let scale = max / 127.0;
    let inv = 127.0 / max;
    let codes: Vec<i8> = v
        .iter()
        .map(|x| (x * inv).round().clamp(-127.0, 127.0) as i8)
        .collect();
    let l1 = codes.iter().map(|&c| f32::from(c).abs()).sum();
    Quantised { codes, scale, l1 }
}

/// An upper bound on `|r·q - r.scale * q.scale * dot_i8(r.codes, q.codes)|` for vectors of
/// `dim` elements. With `r_i = s_r (c_i + e_i)`, `q_i = s_q (d_i + f_i)` and `|e_i|, |f_i| <= 1/2`:
/// `r·q - s_r s_q Σ c_i d_i = s_r s_q Σ (c_i f_i + e_i d_i + e_i f_i)`, whose magnitude is at most
/// `s_r s_q (Σ|c_i| / 2 + Σ|d_i| / 2 + dim / 4)`. A small absolute margin covers `f32` rounding
/// in the exact dot product the bound is compared with.
#[inline(always)]
pub fn error_bound(r_scale: f32, r_l1: f32, q_scale: f32, q_l1: f32, dim: usize) -> f32 {
    r_scale * q_scale * (0.5 * (r_l1 + q_l1) + 0.25 * dim as f32) + 1e-4
}

#[inline(always)]
fn scan_portable(codes: &[i8], q: &[i8], out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(q.len()).map(|row| dot_i8(row, q)));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(codes: &[i8], q: &[i8], out: &mut Vec<i32>) {
    scan_portable(codes, q, out)
}

/// `dot_i8(row, q)` for every row of `codes` (row-major, rows of `q.len()`), appended to `out`.
pub fn scan_i8(codes: &[i8], q: &[i8], out: &mut Vec<i32>) {
    if q.is_empty() {
        return;
    }
    out.reserve(codes.len() / q.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just checked to support AVX2, the only feature scan_avx2 enables;
        // the function itself is safe code compiled with that feature on.
        unsafe { scan_avx2(codes, q, out) };
        return;
    }
    scan_portable(codes, q, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / 16_777_216.0 - 0.5
            })
            .collect()
    }

    #[test]
    fn dot_products_match_the_plain_loop_at_every_length() {
        for n in [0, 1, 7, 16, 31, 32, 33, 100, 384] {
            let a = pseudo_random(n, 1);
            let b = pseudo_random(n, 2);
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot_f32(&a, &b) - plain).abs() < 1e-4, "f32 at {n}");
            let qa: Vec<i8> = a.iter().map(|x| (x * 250.0) as i8).collect();
            let qb: Vec<i8> = b.iter().map(|x| (x * 250.0) as i8).collect();
            let exact: i32 = qa.iter().zip(&qb).map(|(&x, &y)| x as i32 * y as i32).sum();
            assert_eq!(dot_i8(&qa, &qb), exact, "i8 at {n}");
            let mut out = Vec::new();
            scan_i8(&[qa.clone(), qa.clone()].concat(), &qb, &mut out);
            if n > 0 {
                assert_eq!(out, [exact, exact]);
            }
        }
    }

    #[test]
    fn the_quantisation_error_stays_within_its_bound() {
        for seed in 0..200 {
            let dim = 1 + (seed as usize * 7) % 400;
            let r = pseudo_random(dim, seed);
            let q = pseudo_random(dim, seed + 1000);
            let (qr, qq) = (quantise(&r), quantise(&q));
            let approx = qr.scale * qq.scale * dot_i8(&qr.codes, &qq.codes) as f32;
            let bound = error_bound(qr.scale, qr.l1, qq.scale, qq.l1, dim);
            assert!((dot_f32(&r, &q) - approx).abs() <= bound, "seed {seed}");
        }
        let zero = quantise(&[0.0, 0.0]);
        assert_eq!((zero.codes, zero.scale, zero.l1), (vec![0, 0], 0.0, 0.0));
        assert_eq!(quantise(&[-2.0, 1.0]).codes, [-127, 64]);
    }
}
