//! Retrieval for Tool-RAG: pick the few tools that matter for a request out of a large catalog.
//!
//! - [`bm25::Bm25Index`]: lexical ranking (Okapi BM25) with the tokenizer in [`tokenize`]
//!   (identifier splitting, Unicode lowercase, CJK character n-grams).
//! - [`dense::DenseIndex`]: exact cosine similarity over caller-supplied embeddings (an `i8`
//!   pre-scan with an error bound picks the rows worth scoring in `f32`, see `kernels`).
//!
//! Fusing the two rankings and mapping hits to tools happens in the Python front
//! (`agentmaker.rag`), where the embedder and the tool registry live.

pub mod bm25;
pub mod dense;
mod kernels;
pub mod tokenize;

pub use bm25::Bm25Index;
pub use dense::DenseIndex;

use thiserror::Error;

/// Bad parameters or vectors handed to an index (programmer mistakes: raised, never shown to a model).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RagError {
    #[error("k1 must be a finite number >= 0, got {0}")]
    BadK1(f64),
    #[error("b must be a number between 0 and 1, got {0}")]
    BadB(f64),
    #[error("the embedding for {id:?} has {got} dimensions, but this index holds {expected}-dimensional vectors")]
    Dimension {
        id: String,
        expected: usize,
        got: usize,
    },
    #[error("the embedding for {id:?} contains NaN or infinity")]
    NonFinite { id: String },
    #[error("the embedding for {id:?} is empty")]
    EmptyVector { id: String },
}
