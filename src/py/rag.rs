//! The retrieval indexes for Python (`agentmaker.rag` builds HybridRetriever on them).
//!
//! Both classes are safe to share between threads: reads take a shared lock, writes an
//! exclusive one, and the work itself (tokenizing, scoring) runs with the GIL released.

use crate::rag::{tokenize, Bm25Index, DenseIndex, RagError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

fn value_error(e: RagError) -> PyErr {
    e.into()
}

// A panic cannot happen while a guard is held (no input-derived unwraps inside), but a poisoned
// lock must never turn into a panic across FFI either: the data is still consistent, so use it.
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

fn same_length(ids: usize, other: usize, what: &str) -> PyResult<()> {
    if ids != other {
        return Err(PyValueError::new_err(format!(
            "got {ids} ids but {other} {what}; pass one per id"
        )));
    }
    Ok(())
}

trait RemoveById {
    fn remove_id(&mut self, id: &str) -> bool;
}

impl RemoveById for Bm25Index {
    fn remove_id(&mut self, id: &str) -> bool {
        self.remove(id)
    }
}

impl RemoveById for DenseIndex {
    fn remove_id(&mut self, id: &str) -> bool {
        self.remove(id)
    }
}

fn delete_ids<T: RemoveById + Send + Sync>(
    py: Python<'_>,
    lock: &RwLock<T>,
    ids: &[String],
) -> usize {
    py.detach(|| {
        let mut ix = write(lock);
        ids.iter().filter(|id| ix.remove_id(id)).count()
    })
}

/// A BM25 keyword index: ``add(ids, texts)``, ``delete(ids)``, ``search(query, top_k)``.
#[pyclass(module = "agentmaker._native", name = "Bm25Index", frozen)]
pub struct PyBm25Index {
    inner: RwLock<Bm25Index>,
}

#[pymethods]
impl PyBm25Index {
    /// ``k1`` (>= 0) is term-frequency saturation, ``b`` (0..1) length normalisation.
    #[new]
    #[pyo3(signature = (k1 = 1.2, b = 0.75))] // literals: the text signature shows them (= bm25::DEFAULT_K1/DEFAULT_B)
    fn new(k1: f64, b: f64) -> PyResult<Self> {
        Ok(PyBm25Index {
            inner: RwLock::new(Bm25Index::new(k1, b).map_err(value_error)?),
        })
    }

    #[getter]
    fn k1(&self) -> f64 {
        read(&self.inner).k1()
    }

    #[getter]
    fn b(&self) -> f64 {
        read(&self.inner).b()
    }

    /// Adds documents, replacing the text of ids already present.
    fn add(&self, py: Python<'_>, ids: Vec<String>, texts: Vec<String>) -> PyResult<()> {
        same_length(ids.len(), texts.len(), "texts")?;
        py.detach(|| {
            let mut ix = write(&self.inner);
            for (id, text) in ids.iter().zip(&texts) {
                ix.upsert(id, text);
            }
        });
        Ok(())
    }

    /// Removes the given ids; returns how many were present.
    fn delete(&self, py: Python<'_>, ids: Vec<String>) -> usize {
        delete_ids(py, &self.inner, &ids)
    }

    fn clear(&self) {
        write(&self.inner).clear();
    }

    /// The best ``top_k`` (id, score) pairs, best first; ties go to the earlier-added id.
    #[pyo3(signature = (query, top_k = 8))]
    fn search(&self, py: Python<'_>, query: &str, top_k: usize) -> Vec<(String, f64)> {
        py.detach(|| {
            let ix = read(&self.inner);
            ix.search(query, top_k)
                .into_iter()
                .map(|(id, s)| (id.to_string(), s))
                .collect()
        })
    }

    /// The ids in insertion order.
    fn ids(&self) -> Vec<String> {
        read(&self.inner)
            .ids()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The index terms of ``text`` (to see why something matches or not).
    #[staticmethod]
    fn tokenize(text: &str) -> Vec<String> {
        tokenize::tokenize(text)
    }

    fn __len__(&self) -> usize {
        read(&self.inner).len()
    }

    fn __contains__(&self, id: &str) -> bool {
        read(&self.inner).contains(id)
    }
}

/// Cosine similarity over embedding vectors of one fixed dimension.
#[pyclass(module = "agentmaker._native", name = "DenseIndex", frozen)]
pub struct PyDenseIndex {
    inner: RwLock<DenseIndex>,
}

#[pymethods]
impl PyDenseIndex {
    #[new]
    fn new() -> Self {
        PyDenseIndex {
            inner: RwLock::new(DenseIndex::default()),
        }
    }

    /// The vector length of this index (None while empty).
    #[getter]
    fn dim(&self) -> Option<usize> {
        read(&self.inner).dim()
    }

    /// Adds or replaces vectors. The whole batch is checked first: on an error nothing changes.
    fn add(&self, py: Python<'_>, ids: Vec<String>, vectors: Vec<Vec<f64>>) -> PyResult<()> {
        same_length(ids.len(), vectors.len(), "vectors")?;
        py.detach(|| {
            let mut ix = write(&self.inner);
            {
                // Check against the index, or (empty index) against the batch's first vector,
                // which will fix the dimension.
                let mut probe = DenseIndex::default();
                let checker: &DenseIndex = if ix.is_empty() {
                    if let (Some(id), Some(v)) = (ids.first(), vectors.first()) {
                        probe.upsert(id, v)?;
                    }
                    &probe
                } else {
                    &ix
                };
                for (id, v) in ids.iter().zip(&vectors) {
                    checker.check(id, v)?;
                }
            }
            for (id, v) in ids.iter().zip(&vectors) {
                ix.upsert(id, v)?;
            }
            Ok(())
        })
        .map_err(value_error)
    }

    /// Removes the given ids; returns how many were present.
    fn delete(&self, py: Python<'_>, ids: Vec<String>) -> usize {
        delete_ids(py, &self.inner, &ids)
    }

    fn clear(&self) {
        write(&self.inner).clear();
    }

    /// The ``top_k`` most similar (id, cosine) pairs, best first.
    #[pyo3(signature = (vector, top_k = 8))]
    fn search(
        &self,
        py: Python<'_>,
        vector: Vec<f64>,
        top_k: usize,
    ) -> PyResult<Vec<(String, f64)>> {
        py.detach(|| {
            let ix = read(&self.inner);
            ix.search(&vector, top_k).map(|hits| {
                hits.into_iter()
                    .map(|(id, s)| (id.to_string(), s))
                    .collect()
            })
        })
        .map_err(value_error)
    }

    /// For each vector, what ``search(vector, top_k)`` returns, found in one pass over the
    /// index (cheaper than one search per vector: the index is read once). All vectors are
    /// checked first; a bad one is named by its place (``"<query 2>"``).
    #[pyo3(signature = (vectors, top_k = 8))]
    fn search_many(
        &self,
        py: Python<'_>,
        vectors: Vec<Vec<f64>>,
        top_k: usize,
    ) -> PyResult<Vec<Vec<(String, f64)>>> {
        py.detach(|| {
            let ix = read(&self.inner);
            ix.search_many(&vectors, top_k).map(|rankings| {
                rankings
                    .into_iter()
                    .map(|hits| {
                        hits.into_iter()
                            .map(|(id, s)| (id.to_string(), s))
                            .collect()
                    })
                    .collect()
            })
        })
        .map_err(value_error)
    }

    fn __len__(&self) -> usize {
        read(&self.inner).len()
    }

    fn __contains__(&self, id: &str) -> bool {
        read(&self.inner).contains(id)
    }
}
