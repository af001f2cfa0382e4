//! Exact cosine similarity over embedding vectors, for the optional dense half of the hybrid
//! retriever. Tool catalogs hold thousands of entries, not millions, so there is no approximate
//! index: every search returns exactly the rows a plain scan over the `f32` vectors would.
//!
//! A plain `f32` scan of 10k 384-dim rows reads 15 MB per query, which on a small machine is
//! memory-bound at around a millisecond. So each row is also kept as `i8` codes (a quarter of the
//! size, see [`super::kernels`]) and a search runs in two passes:
//!
//! 1. an `i8` scan gives every row an approximate cosine with a proven error bound; the `top_k`-th
//!    best lower bound is a floor the true `top_k`-th score cannot be under;
//! 2. only rows whose upper bound reaches that floor are scored exactly in `f32`, and a bounded
//!    heap of `top_k` keeps the best of them.
//!
//! The result (ids, order and scores) is the exact ranking; ties go to the row added first.
//!
//! A request is often embedded as several vectors (the whole text and each of its sentences).
//! [`DenseIndex::search_many`] ranks them all in one `i8` pass: each row's codes are read once
//! and scored against every query while they are in cache, so pass 1, the one bound by memory,
//! costs about one scan whatever the number of queries. [`DenseIndex::search`] is its one-query
//! case.

use super::kernels::{dot_f32, error_bound, quantise, scan_i8, Quantised};
use super::RagError;
use std::cell::RefCell;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

/// Per-thread buffers of a search (one value per row), kept between searches so a query
/// allocates nothing in proportion to the index.
#[derive(Default)]
struct Scratch {
    approx: Vec<i32>,
    mid: Vec<f32>,
    err: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

#[derive(Default)]
pub struct DenseIndex {
    dim: Option<usize>,
    /// Row-major, each row scaled to unit length (a zero vector stays zero).
    rows: Vec<f32>,
    /// The same rows as `i8` codes, row-major, with each row's scale and code L1 norm.
    codes: Vec<i8>,
    scales: Vec<f32>,
    l1s: Vec<f32>,
    ids: Vec<String>,
    seqs: Vec<u64>,
    by_id: HashMap<String, usize>,
    next_seq: u64,
}

fn normalised(id: &str, v: &[f64], dim: Option<usize>) -> Result<Vec<f32>, RagError> {
    if v.is_empty() {
        return Err(RagError::EmptyVector { id: id.to_string() });
    }
    if let Some(d) = dim {
        if v.len() != d {
            return Err(RagError::Dimension {
                id: id.to_string(),
                expected: d,
                got: v.len(),
            });
        }
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(RagError::NonFinite { id: id.to_string() });
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    Ok(v.iter().map(|x| (x * scale) as f32).collect())
}

/// A scored row in a bounded heap: ordered so that the heap's top is the worst kept row
/// (lower score, then later insertion).
#[derive(Clone, Copy)]
struct Scored {
    score: f32,
    seq: u64,
    row: usize,
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        // "Greater" = better: higher score, then earlier insertion.
        self.score
            .total_cmp(&other.score)
            .then(other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

/// Keeps the `k` best items pushed into it.
struct TopK<T: Ord> {
    k: usize,
    heap: BinaryHeap<Reverse<T>>,
}

impl<T: Ord> TopK<T> {
    fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn push(&mut self, item: T) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(item));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if item > worst.0 {
                *worst = Reverse(item);
            }
        }
    }

    /// The worst kept item once `k` are kept.
    fn floor(&self) -> Option<&T> {
        (self.heap.len() == self.k)
            .then(|| self.heap.peek().map(|r| &r.0))
            .flatten()
    }

    /// Best first.
    fn into_sorted(self) -> Vec<T> {
        let mut v: Vec<T> = self.heap.into_iter().map(|r| r.0).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }
}

/// An `f32` with a total order, for the heap of lower bounds.
#[derive(Clone, Copy, PartialEq)]
struct Total(f32);

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl DenseIndex {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The vector length this index holds (fixed by the first vector added).
    pub fn dim(&self) -> Option<usize> {
        self.dim
    }

    /// Checks a vector without storing it (so a batch can be validated before any change).
    pub fn check(&self, id: &str, v: &[f64]) -> Result<(), RagError> {
        normalised(id, v, self.dim).map(|_| ())
    }

    /// Adds or replaces the vector of `id` (a replacement keeps its place in the tie order).
    pub fn upsert(&mut self, id: &str, v: &[f64]) -> Result<(), RagError> {
        let dim = if self.ids.is_empty() { None } else { self.dim };
        let row = normalised(id, v, dim)?;
        let q = quantise(&row);
        let d = row.len();
        if self.ids.is_empty() {
            self.dim = Some(d);
        }
        match self.by_id.get(id) {
            Some(&i) => {
                self.rows[i * d..(i + 1) * d].copy_from_slice(&row);
                self.codes[i * d..(i + 1) * d].copy_from_slice(&q.codes);
                self.scales[i] = q.scale;
                self.l1s[i] = q.l1;
            }
            None => {
                self.next_seq += 1;
                self.by_id.insert(id.to_string(), self.ids.len());
                self.ids.push(id.to_string());
                self.seqs.push(self.next_seq);
                self.rows.extend_from_slice(&row);
                self.codes.extend_from_slice(&q.codes);
                self.scales.push(q.scale);
                self.l1s.push(q.l1);
            }
        }
        Ok(())
    }

    /// Removes `id`; false when it was not there.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(i) = self.by_id.remove(id) else {
            return false;
        };
        let d = self.dim.unwrap_or(0);
        let last = self.ids.len() - 1;
        if i != last {
            self.rows.copy_within(last * d..(last + 1) * d, i * d);
            self.codes.copy_within(last * d..(last + 1) * d, i * d);
            self.ids.swap(i, last);
            self.seqs.swap(i, last);
            self.scales.swap(i, last);
            self.l1s.swap(i, last);
            self.by_id.insert(self.ids[i].clone(), i);
        }
        self.ids.pop();
        self.seqs.pop();
        self.scales.pop();
        self.l1s.pop();
        self.rows.truncate(last * d);
        self.codes.truncate(last * d);
        if self.ids.is_empty() {
            self.dim = None;
        }
        true
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn clear(&mut self) {
        *self = DenseIndex::default();
    }

    fn exact(&self, row: usize, q: &[f32], d: usize) -> Scored {
        Scored {
            score: dot_f32(&self.rows[row * d..(row + 1) * d], q),
            seq: self.seqs[row],
            row,
        }
    }

    /// The `top_k` rows most similar to `query` by cosine, best first, as (id, similarity).
    /// Ties go to the row added first. The one-query case of [`DenseIndex::search_many`].
    pub fn search(&self, query: &[f64], top_k: usize) -> Result<Vec<(&str, f64)>, RagError> {
        Ok(self.search_many(&[query], top_k)?.pop().unwrap_or_default())
    }

    /// For each of `queries`, what [`DenseIndex::search`] returns for it (the same rows, order
    /// and scores), found in one pass over the index: each row is scored against all the
    /// queries while it is in cache, so a request embedded as several vectors (the whole text
    /// and each of its sentences) reads the index once, not once per vector.
    ///
    /// Every query is checked before any work; a bad one is named by its place in `queries`
    /// (`"<query 2>"`; a single query is `"<query>"`). An empty index returns one empty
    /// ranking per query without looking at them, as `search` does.
    pub fn search_many<Q: AsRef<[f64]>>(
        &self,
        queries: &[Q],
        top_k: usize,
    ) -> Result<Vec<Vec<(&str, f64)>>, RagError> {
        let Some(d) = self.dim else {
            return Ok(vec![Vec::new(); queries.len()]);
        };
        let qs = queries
            .iter()
            .enumerate()
            .map(|(j, q)| {
                let label = if queries.len() == 1 {
                    "<query>".to_string()
                } else {
                    format!("<query {j}>")
                };
                normalised(&label, q.as_ref(), Some(d))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if top_k == 0 || qs.is_empty() {
            return Ok(vec![Vec::new(); qs.len()]);
        }
        let n = self.ids.len();
        let mut best: Vec<TopK<Scored>> = qs.iter().map(|_| TopK::new(top_k.min(n))).collect();
        if top_k >= n {
            for i in 0..n {
                for (b, q) in best.iter_mut().zip(&qs) {
                    b.push(self.exact(i, q, d));
                }
            }
        } else {
            let quantised: Vec<Quantised> = qs.iter().map(|q| quantise(q)).collect();
            let codes: Vec<i8> = quantised
                .iter()
                .flat_map(|q| q.codes.iter().copied())
                .collect();
            SCRATCH.with_borrow_mut(|scratch| {
                let Scratch { approx, mid, err } = scratch;
                // Every query's i8 dot products, query-major, in one pass over the codes.
                scan_i8(&self.codes, &codes, d, approx);
                mid.resize(n, 0.0);
                err.resize(n, 0.0);
                let per_query = approx.chunks_exact(n).zip(&quantised).zip(&qs);
                for (((approx, qq), q), best) in per_query.zip(best.iter_mut()) {
                    // Each row's approximate cosine and its error bound, in one loop the
                    // compiler vectorises.
                    let rows = approx.iter().zip(&self.scales).zip(&self.l1s);
                    for ((m, e), ((&a, &scale), &l1)) in
                        mid.iter_mut().zip(err.iter_mut()).zip(rows)
                    {
                        *m = scale * qq.scale * a as f32;
                        *e = error_bound(scale, l1, qq.scale, qq.l1, d);
                    }
                    // The top_k-th best lower bound; most rows fail the first comparison.
                    let mut lows = TopK::new(top_k);
                    let mut floor = f32::NEG_INFINITY;
                    for (m, e) in mid.iter().zip(err.iter()) {
                        if m - e > floor {
                            lows.push(Total(m - e));
                            floor = lows.floor().map_or(f32::NEG_INFINITY, |t| t.0);
                        }
                    }
                    for (i, (m, e)) in mid.iter().zip(err.iter()).enumerate() {
                        if m + e >= floor {
                            best.push(self.exact(i, q, d));
                        }
                    }
                }
            });
        }
        Ok(best
            .into_iter()
            .map(|b| {
                b.into_sorted()
                    .into_iter()
                    .map(|s| (self.ids[s.row].as_str(), f64::from(s.score)))
                    .collect()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_ranking_replace_and_remove() {
        let mut ix = DenseIndex::default();
        ix.upsert("x", &[1.0, 0.0]).unwrap();
        ix.upsert("y", &[0.0, 2.0]).unwrap();
        ix.upsert("xy", &[1.0, 1.0]).unwrap();
        let hits = ix.search(&[3.0, 0.1], 3).unwrap();
        assert_eq!(
            hits.iter().map(|h| h.0).collect::<Vec<_>>(),
            ["x", "xy", "y"]
        );
        assert!((hits[1].1 - (3.1 / (2f64.sqrt() * (9.01f64).sqrt()))).abs() < 1e-6);
        ix.upsert("x", &[0.0, 1.0]).unwrap();
        assert_eq!(
            ix.search(&[0.0, 1.0], 1).unwrap()[0].0,
            "x",
            "replacement keeps the earlier place on ties"
        );
        assert!(ix.remove("x"));
        assert!(!ix.remove("x"));
        assert_eq!(
            ix.search(&[0.0, 1.0], 5)
                .unwrap()
                .iter()
                .map(|h| h.0)
                .collect::<Vec<_>>(),
            ["y", "xy"]
        );
        assert_eq!(ix.len(), 2);
    }

    /// The two-pass search returns what a plain f32 scan and a full sort return, including ties
    /// (duplicated rows) and rows near the cut.
    #[test]
    fn two_pass_search_equals_a_full_scan() {
        let mut s = 7u32;
        let mut rnd = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            f64::from(s >> 8) / 16_777_216.0 - 0.5
        };
        let dim = 48;
        let mut ix = DenseIndex::default();
        let mut plain: Vec<(String, Vec<f32>)> = Vec::new();
        for i in 0..600 {
            // Every fifth row repeats an earlier one, so equal scores must tie-break by age.
            let v: Vec<f64> = if i % 5 == 4 {
                plain[i / 2].1.iter().map(|&x| f64::from(x)).collect()
            } else {
                (0..dim).map(|_| rnd()).collect()
            };
            let id = format!("r{i}");
            ix.upsert(&id, &v).unwrap();
            plain.push((id, ix.rows[i * dim..(i + 1) * dim].to_vec()));
        }
        for _ in 0..30 {
            let q: Vec<f64> = (0..dim).map(|_| rnd()).collect();
            let qn = normalised("q", &q, Some(dim)).unwrap();
            let mut want: Vec<(usize, f32)> = plain
                .iter()
                .enumerate()
                .map(|(i, (_, r))| (i, dot_f32(r, &qn)))
                .collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for k in [1, 3, 10, 50, 599, 600, 1000] {
                let got = ix.search(&q, k).unwrap();
                let expect: Vec<(&str, f64)> = want
                    .iter()
                    .take(k)
                    .map(|&(i, sc)| (plain[i].0.as_str(), f64::from(sc)))
                    .collect();
                assert_eq!(got, expect, "k={k}");
            }
        }
    }

    /// One pass over many queries returns, for each, exactly what its own search returns: the
    /// same rows, order and scores, ties (duplicated rows) going to the older row, on both the
    /// pruned path (top_k < rows) and the exhaustive one.
    #[test]
    fn one_pass_over_many_queries_equals_one_search_per_query() {
        let mut s = 11u32;
        let mut rnd = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            f64::from(s >> 8) / 16_777_216.0 - 0.5
        };
        for dim in [5, 48, 384] {
            let mut ix = DenseIndex::default();
            let mut kept: Vec<Vec<f64>> = Vec::new();
            for i in 0..300 {
                let v: Vec<f64> = if i % 7 == 6 {
                    kept[i / 3].clone()
                } else {
                    (0..dim).map(|_| rnd()).collect()
                };
                ix.upsert(&format!("r{i}"), &v).unwrap();
                kept.push(v);
            }
            for k in [1, 2, 3, 4, 5, 9] {
                // A query equal to a stored row ties with that row's duplicates.
                let queries: Vec<Vec<f64>> = (0..k)
                    .map(|j| {
                        if j == 1 {
                            kept[6 / 3].clone()
                        } else {
                            (0..dim).map(|_| rnd()).collect()
                        }
                    })
                    .collect();
                for top_k in [1, 10, 50, 299, 300, 400] {
                    let one_by_one: Vec<_> = queries
                        .iter()
                        .map(|q| ix.search(q, top_k).unwrap())
                        .collect();
                    let together = ix.search_many(&queries, top_k).unwrap();
                    assert_eq!(together, one_by_one, "dim {dim}, {k} queries, top {top_k}");
                }
            }
        }
    }

    #[test]
    fn many_queries_edge_cases() {
        let mut ix = DenseIndex::default();
        let none: [&[f64]; 0] = [];
        assert_eq!(
            ix.search_many(&none, 5).unwrap(),
            Vec::<Vec<(&str, f64)>>::new()
        );
        // An empty index has no dimension to check against: one empty ranking per query.
        assert_eq!(
            ix.search_many(&[vec![1.0], vec![f64::NAN, 2.0]], 5)
                .unwrap(),
            [vec![], vec![]]
        );
        ix.upsert("a", &[1.0, 0.0]).unwrap();
        ix.upsert("b", &[0.0, 1.0]).unwrap();
        assert_eq!(
            ix.search_many(&none, 5).unwrap(),
            Vec::<Vec<(&str, f64)>>::new()
        );
        assert_eq!(
            ix.search_many(&[[1.0, 0.0], [0.0, 3.0]], 0).unwrap(),
            [vec![], vec![]]
        );
        assert_eq!(
            ix.search_many(&[[1.0, 0.0], [0.0, 3.0]], 1).unwrap(),
            [vec![("a", 1.0)], vec![("b", 1.0)]]
        );
        // The one-query case is search itself, errors included.
        assert_eq!(
            ix.search_many(&[[1.0, 1.0]], 2).unwrap(),
            [ix.search(&[1.0, 1.0], 2).unwrap()]
        );
        assert_eq!(
            ix.search_many(&[vec![1.0, 0.0, 0.0]], 2).unwrap_err(),
            RagError::Dimension {
                id: "<query>".into(),
                expected: 2,
                got: 3
            }
        );
        assert_eq!(
            ix.search(&[1.0], 2).unwrap_err(),
            ix.search_many(&[[1.0]], 2).unwrap_err()
        );
        // Among several, the bad one is named by its place; nothing is returned.
        assert_eq!(
            ix.search_many(&[vec![1.0, 0.0], vec![1.0, 0.0, 0.0]], 2)
                .unwrap_err(),
            RagError::Dimension {
                id: "<query 1>".into(),
                expected: 2,
                got: 3
            }
        );
        assert_eq!(
            ix.search_many(&[vec![1.0, 0.0], vec![], vec![f64::INFINITY, 0.0]], 2)
                .unwrap_err(),
            RagError::EmptyVector {
                id: "<query 1>".into()
            }
        );
        assert_eq!(
            ix.search_many(&[vec![1.0, 0.0], vec![f64::INFINITY, 0.0]], 2)
                .unwrap_err()
                .to_string(),
            "the embedding for \"<query 1>\" contains NaN or infinity"
        );
    }

    #[test]
    fn bad_vectors_are_rejected() {
        let mut ix = DenseIndex::default();
        ix.upsert("a", &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(
            ix.upsert("b", &[1.0]).unwrap_err(),
            RagError::Dimension {
                id: "b".into(),
                expected: 3,
                got: 1
            }
        );
        assert_eq!(
            ix.upsert("b", &[1.0, f64::NAN, 0.0]).unwrap_err(),
            RagError::NonFinite { id: "b".into() }
        );
        assert_eq!(
            ix.upsert("b", &[]).unwrap_err(),
            RagError::EmptyVector { id: "b".into() }
        );
        assert!(ix.search(&[1.0, 2.0], 3).is_err());
        // A zero vector is allowed and is similar to nothing.
        ix.upsert("z", &[0.0, 0.0, 0.0]).unwrap();
        assert_eq!(ix.search(&[1.0, 0.0, 0.0], 5).unwrap()[1], ("z", 0.0));
        // Emptying the index frees the dimension for a different embedder.
        ix.clear();
        ix.upsert("c", &[1.0]).unwrap();
        assert_eq!(ix.dim(), Some(1));
    }
}
