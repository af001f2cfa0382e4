//! Brute-force cosine similarity over embedding vectors, for the optional dense half of the
//! hybrid retriever. Tool catalogs hold thousands of entries, not millions: a linear scan over
//! normalised `f32` rows is a few hundred microseconds and needs no approximate index.

use super::RagError;
use std::cmp::Ordering;
use std::collections::HashMap;

#[derive(Default)]
pub struct DenseIndex {
    dim: Option<usize>,
    /// Row-major, each row scaled to unit length (a zero vector stays zero).
    rows: Vec<f32>,
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
        if self.ids.is_empty() {
            self.dim = Some(row.len());
        }
        match self.by_id.get(id) {
            Some(&i) => {
                let d = row.len();
                self.rows[i * d..(i + 1) * d].copy_from_slice(&row);
            }
            None => {
                self.next_seq += 1;
                self.by_id.insert(id.to_string(), self.ids.len());
                self.ids.push(id.to_string());
                self.seqs.push(self.next_seq);
                self.rows.extend_from_slice(&row);
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
            self.ids.swap(i, last);
            self.seqs.swap(i, last);
            self.by_id.insert(self.ids[i].clone(), i);
        }
        self.ids.pop();
        self.seqs.pop();
        self.rows.truncate(last * d);
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

    /// The `top_k` rows most similar to `query` by cosine, best first, as (id, similarity).
    /// Ties go to the row added first.
    pub fn search(&self, query: &[f64], top_k: usize) -> Result<Vec<(&str, f64)>, RagError> {
        let Some(d) = self.dim else {
            return Ok(Vec::new());
        };
        let q = normalised("<query>", query, Some(d))?;
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let mut ranked: Vec<(f32, u64, usize)> = self
            .rows
            .chunks_exact(d)
            .enumerate()
            .map(|(i, row)| {
                (
                    row.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>(),
                    self.seqs[i],
                    i,
                )
            })
            .collect();
        let order = |a: &(f32, u64, usize), b: &(f32, u64, usize)| -> Ordering {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
        };
        if ranked.len() > top_k {
            ranked.select_nth_unstable_by(top_k - 1, order);
            ranked.truncate(top_k);
        }
        ranked.sort_unstable_by(order);
        Ok(ranked
            .into_iter()
            .map(|(s, _, i)| (self.ids[i].as_str(), f64::from(s)))
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
