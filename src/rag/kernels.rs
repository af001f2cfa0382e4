//! The number crunching behind [`super::dense::DenseIndex`]: dot products written so the
//! compiler vectorises them (independent accumulators over `chunks_exact` blocks), an `i8`
//! quantisation with a proven error bound, and a scan over many rows that uses AVX2 when the CPU
//! has it (checked at run time: the extension is built for baseline x86-64).

/// Lanes summed independently; a multiple of every SIMD width we care about (4, 8, 16 floats).
const F32_LANES: usize = 16;
/// Bytes per block of the `i8` dot product (one AVX2 register).
const I8_LANES: usize = 32;
/// How far ahead of the row being scored the AVX2 scan prefetches (about ten 384-byte rows).
const PREFETCH: usize = 4096;

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

/// Queries the AVX2 scan scores together against each row: one accumulator each, beside the
/// row's block and its magnitude, all in registers. More queries are taken in further groups
/// over the same row, which is still in L1 then.
const QUERY_GROUP: usize = 4;

fn scan_portable(codes: &[i8], queries: &[i8], d: usize, out: &mut [i32]) {
    let n = codes.len() / d;
    for (i, row) in codes.chunks_exact(d).enumerate() {
        for (j, q) in queries.chunks_exact(d).enumerate() {
            out[j * n + i] = dot_i8(row, q);
        }
    }
}

/// `Σ row_i q_i` over the part of the rows past the last whole 32-byte block (plain code).
#[inline(always)]
fn tail_dot(row: &[i8], q: &[i8]) -> i32 {
    row.iter()
        .zip(q)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// The AVX2 scan, written with intrinsics (an iterator chain would be compiled into generic
/// helpers without the AVX2 feature, which is what happened before: SSE2 code at run time).
/// Each row is read once from memory and scored against every query while it is in cache.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2(codes: &[i8], queries: &[i8], d: usize, out: &mut [i32]) {
    let n = codes.len() / d;
    // Each group's queries as slices, made once (slicing them per row cost a sixth of the scan);
    // the places past a short last group repeat its first query and are not scored.
    let groups: Vec<([&[i8]; QUERY_GROUP], usize)> = queries
        .chunks(QUERY_GROUP * d)
        .map(|group| {
            let count = group.len() / d;
            let slices = std::array::from_fn(|m| &group[(m % count) * d..][..d]);
            (slices, count)
        })
        .collect();
    for (i, row) in codes.chunks_exact(d).enumerate() {
        for (g, (group, count)) in groups.iter().enumerate() {
            let at = g * QUERY_GROUP * n + i;
            match count {
                4 => store(row_dots_avx2::<4>(row, group), out, at, n),
                3 => store(row_dots_avx2::<3>(row, group), out, at, n),
                2 => store(row_dots_avx2::<2>(row, group), out, at, n),
                _ => store(row_dots_avx2::<1>(row, group), out, at, n),
            }
        }
    }
}

/// Writes one row's dot products with consecutive queries into the query-major `out`.
#[inline(always)]
fn store<const G: usize>(dots: [i32; G], out: &mut [i32], at: usize, n: usize) {
    for (m, dot) in dots.into_iter().enumerate() {
        out[at + m * n] = dot;
    }
}

/// `row · q` for each of the first `G` queries of `group` (each `row.len()` codes).
///
/// Per 32-byte block: `maddubs(|r|, sign(q, r))` multiplies bytes as unsigned × signed and adds
/// neighbouring pairs into `i16` (at most 2 × 127² = 32258: no saturation, since codes never
/// hold -128), then `madd` with ones widens pairs of those into `i32` lanes. The row's block and
/// its magnitude are loaded once for all `G` queries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn row_dots_avx2<const G: usize>(row: &[i8], group: &[&[i8]; QUERY_GROUP]) -> [i32; G] {
    use std::arch::x86_64::*;
    let d = row.len();
    let queries = &group[..G];
    assert!(
        queries.iter().all(|q| q.len() == d),
        "a query's length differs from the row's"
    );
    let split = d - d % I8_LANES;
    let ones = _mm256_set1_epi16(1);
    let mut acc = [_mm256_setzero_si256(); G];
    for at in (0..split).step_by(I8_LANES) {
        // Ask now for the bytes a few rows ahead (a hint: it never faults, even past the end).
        _mm_prefetch::<_MM_HINT_T0>(row.as_ptr().wrapping_add(at + PREFETCH).cast());
        // SAFETY: at + 32 <= split <= d = row.len(); unaligned load.
        let r = unsafe { _mm256_loadu_si256(row.as_ptr().add(at).cast()) };
        let magnitude = _mm256_abs_epi8(r);
        for (a, q) in acc.iter_mut().zip(queries) {
            // SAFETY: at + 32 <= split <= d = q.len(); unaligned load.
            let v = unsafe { _mm256_loadu_si256(q.as_ptr().add(at).cast()) };
            let pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(v, r));
            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(pairs, ones));
        }
    }
    let mut dots = [0; G];
    for ((dot, a), q) in dots.iter_mut().zip(acc).zip(queries) {
        *dot = sum_lanes(a) + tail_dot(&row[split..], &q[split..]);
    }
    dots
}

/// The sum of the eight `i32` lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_lanes(acc: std::arch::x86_64::__m256i) -> i32 {
    use std::arch::x86_64::*;
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let quad = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
    _mm_cvtsi128_si32(_mm_add_epi32(
        quad,
        _mm_shuffle_epi32::<0b10_11_00_01>(quad),
    ))
}

/// `dot_i8(row, q)` for every row of `codes` and every query of `queries` (both row-major, `dim`
/// codes each), in one pass over `codes`: each row is scored against all the queries while it
/// is in cache, so `k` queries cost one read of the matrix, not `k`. `out` is resized to one
/// value per (query, row), query-major: query `j`'s dot products are `out[j * n..(j + 1) * n]`
/// for `n` rows. Codes must lie in -127..=127, as [`quantise`] makes them. Uses AVX2 when the
/// CPU has it (checked at run time: the extension is built for baseline x86-64). Wider kernels
/// (AVX-512, VNNI) were measured on one query and gained nothing there: a scan of 10k rows
/// streams 3.8 MB from L3 and is bound by that, not by arithmetic.
pub fn scan_i8(codes: &[i8], queries: &[i8], dim: usize, out: &mut Vec<i32>) {
    out.clear();
    if dim == 0 || queries.len() < dim {
        return;
    }
    // Whole vectors only: a partial one at the end is no query.
    let queries = &queries[..queries.len() / dim * dim];
    out.resize(codes.len() / dim * (queries.len() / dim), 0);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU was just checked to support AVX2, the only feature enabled.
            unsafe { scan_avx2(codes, queries, dim, out) };
            return;
        }
    }
    scan_portable(codes, queries, dim, out)
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
        for n in [0, 1, 7, 16, 31, 32, 33, 64, 100, 128, 191, 384, 400] {
            let a = pseudo_random(n, 1);
            let b = pseudo_random(n, 2);
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot_f32(&a, &b) - plain).abs() < 1e-4, "f32 at {n}");
            let qa: Vec<i8> = a.iter().map(|x| (x * 250.0) as i8).collect();
            let qb: Vec<i8> = b.iter().map(|x| (x * 250.0) as i8).collect();
            let exact: i32 = qa.iter().zip(&qb).map(|(&x, &y)| x as i32 * y as i32).sum();
            assert_eq!(dot_i8(&qa, &qb), exact, "i8 at {n}");
            let rows = [qa.clone(), qa.clone()].concat();
            let mut out = vec![9];
            scan_i8(&rows, &qb, n, &mut out);
            if n > 0 {
                assert_eq!(out, [exact, exact]);
            } else {
                assert!(out.is_empty());
            }
            #[cfg(target_arch = "x86_64")]
            if n > 0 && std::arch::is_x86_feature_detected!("avx2") {
                // Every kernel this CPU can run, not only the one scan_i8 picks.
                let mut plain = vec![0; 2];
                scan_portable(&rows, &qb, n, &mut plain);
                let mut avx2 = vec![0; 2];
                unsafe { scan_avx2(&rows, &qb, n, &mut avx2) };
                assert_eq!(
                    (plain.as_slice(), avx2.as_slice()),
                    (&[exact, exact][..], &[exact, exact][..])
                );
            }
        }
    }

    /// Several queries in one pass: every (query, row) dot product lands at its query-major
    /// place, for query counts that fill the AVX2 groups of four exactly, partly, or not at all.
    #[test]
    fn one_pass_over_many_queries_equals_one_scan_per_query() {
        let codes = |len: usize, seed: u32| -> Vec<i8> {
            pseudo_random(len, seed)
                .iter()
                .map(|x| (x * 254.0).round() as i8)
                .collect()
        };
        for dim in [1, 7, 32, 33, 100, 384] {
            let rows = codes(dim * 23, dim as u32);
            for k in [1, 2, 3, 4, 5, 8, 9] {
                let queries = codes(dim * k, 1000 + k as u32);
                let want: Vec<i32> = queries
                    .chunks_exact(dim)
                    .flat_map(|q| rows.chunks_exact(dim).map(|r| dot_i8(r, q)))
                    .collect();
                let mut out = Vec::new();
                scan_i8(&rows, &queries, dim, &mut out);
                assert_eq!(out, want, "dim {dim}, {k} queries");
                // A partial vector at the end of the queries is no query.
                if dim > 1 {
                    let ragged = [&queries[..], &queries[..dim - 1]].concat();
                    scan_i8(&rows, &ragged, dim, &mut out);
                    assert_eq!(out, want, "dim {dim}, {k} queries and a partial one");
                }
                let mut plain = vec![0; want.len()];
                scan_portable(&rows, &queries, dim, &mut plain);
                assert_eq!(plain, want, "portable, dim {dim}, {k} queries");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut avx2 = vec![0; want.len()];
                    unsafe { scan_avx2(&rows, &queries, dim, &mut avx2) };
                    assert_eq!(avx2, want, "avx2, dim {dim}, {k} queries");
                }
            }
        }
        let mut out = vec![1];
        scan_i8(&codes(64, 1), &codes(31, 2), 32, &mut out);
        assert!(out.is_empty(), "less than one whole query scores nothing");
    }

    /// The extreme codes, where the pairwise `i16` sums of the AVX2 kernel come closest to
    /// saturating.
    #[test]
    fn the_scan_is_exact_at_the_extreme_codes() {
        for n in [32, 64, 96, 97] {
            let row: Vec<i8> = (0..n)
                .map(|i| if i % 3 == 0 { -127 } else { 127 })
                .collect();
            for q in [vec![127i8; n], vec![-127i8; n], row.clone()] {
                let mut out = Vec::new();
                scan_i8(&row, &q, n, &mut out);
                assert_eq!(out, [dot_i8(&row, &q)], "n={n}");
                assert_eq!(dot_i8(&row, &q), tail_dot(&row, &q));
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
