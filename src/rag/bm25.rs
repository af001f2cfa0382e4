//! Okapi BM25 over an in-memory inverted index, with replace and delete by id.
//!
//! Score of document `d` for query `q`:
//!
//! ```text
//! sum over distinct terms t of q:  idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
//! idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//! ```
//!
//! - `k1` (default 1.2) sets how fast repeated occurrences of a term saturate: 0 counts a term
//!   once per document, large values make the score grow almost linearly with the count. Tool
//!   descriptions are short and rarely repeat words, so the usual 1.2 works.
//! - `b` (default 0.75) sets how much a long document is penalised relative to the average
//!   length: 0 ignores length, 1 normalises fully. Long tool docs otherwise win by mentioning
//!   everything.
//! - A query term counts once however often the query repeats it. Real requests paste logs,
//!   lists and earlier turns, where a word repeated ten times says little about which tool is
//!   wanted; on the BFCL v4 tool set counting repeats cost about 1 point of recall@5.
//! - The idf form is the one Lucene uses: always positive, so a term present in more than half
//!   the documents still counts a little instead of subtracting.
//!
//! Ties (equal scores, common when two tools share a description) are broken by insertion order:
//! the document added first wins. Replacing a document keeps its original position, so
//! re-indexing an unchanged catalog yields the same order.

use super::tokenize::tokenize_into;
use super::RagError;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a: index terms are short strings we produced ourselves, so the default SipHash's
/// protection against chosen collisions buys nothing here and costs a third of indexing time.
#[derive(Default)]
struct TermHasher(u64);

impl Hasher for TermHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type Vocab = HashMap<String, u32, BuildHasherDefault<TermHasher>>;

pub const DEFAULT_K1: f64 = 1.2;
pub const DEFAULT_B: f64 = 0.75;

struct Doc {
    id: String,
    seq: u64,
    len: u32,
    /// (term, frequency), one entry per distinct term.
    terms: Vec<(u32, u32)>,
}

pub struct Bm25Index {
    k1: f64,
    b: f64,
    vocab: Vocab,
    /// term -> (doc slot, term frequency). Unordered: scoring accumulates into a dense array.
    postings: Vec<Vec<(u32, u32)>>,
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    by_id: HashMap<String, u32>,
    total_len: u64,
    next_seq: u64,
}

impl Default for Bm25Index {
    fn default() -> Self {
        Self::with_params(DEFAULT_K1, DEFAULT_B)
    }
}

impl Bm25Index {
    /// An empty index; `k1` must be finite and >= 0, `b` within [0, 1].
    pub fn new(k1: f64, b: f64) -> Result<Self, RagError> {
        if !k1.is_finite() || k1 < 0.0 {
            return Err(RagError::BadK1(k1));
        }
        if !(0.0..=1.0).contains(&b) {
            return Err(RagError::BadB(b));
        }
        Ok(Self::with_params(k1, b))
    }

    fn with_params(k1: f64, b: f64) -> Self {
        Bm25Index {
            k1,
            b,
            vocab: Vocab::default(),
            postings: Vec::new(),
            docs: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
            total_len: 0,
            next_seq: 0,
        }
    }

    pub fn k1(&self) -> f64 {
        self.k1
    }

    pub fn b(&self) -> f64 {
        self.b
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The ids in insertion order.
    pub fn ids(&self) -> Vec<&str> {
        let mut docs: Vec<&Doc> = self.docs.iter().flatten().collect();
        docs.sort_unstable_by_key(|d| d.seq);
        docs.into_iter().map(|d| d.id.as_str()).collect()
    }

    /// Adds `id` with `text`, or replaces its text (keeping its place in the tie order).
    pub fn upsert(&mut self, id: &str, text: &str) {
        let seq = match self.remove_slot(id) {
            Some(seq) => seq,
            None => {
                self.next_seq += 1;
                self.next_seq
            }
        };
        let mut tokens = Vec::new();
        tokenize_into(text, &mut tokens);
        let mut ids: Vec<u32> = Vec::with_capacity(tokens.len());
        for tok in tokens.iter() {
            let term = match self.vocab.get(tok.as_str()) {
                Some(&t) => t,
                None => {
                    let t = self.postings.len() as u32;
                    self.vocab.insert(tok.clone(), t);
                    self.postings.push(Vec::new());
                    t
                }
            };
            ids.push(term);
        }
        ids.sort_unstable();
        let mut terms: Vec<(u32, u32)> = Vec::with_capacity(ids.len());
        for term in ids {
            match terms.last_mut() {
                Some((t, n)) if *t == term => *n += 1,
                _ => terms.push((term, 1)),
            }
        }
        terms.shrink_to_fit();
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        for &(term, tf) in &terms {
            self.postings[term as usize].push((slot, tf));
        }
        let len = tokens.len() as u32;
        self.total_len += u64::from(len);
        self.docs[slot as usize] = Some(Doc {
            id: id.to_string(),
            seq,
            len,
            terms,
        });
        self.by_id.insert(id.to_string(), slot);
    }

    /// Removes `id`; false when it was not there.
    pub fn remove(&mut self, id: &str) -> bool {
        self.remove_slot(id).is_some()
    }

    /// Removes every document.
    pub fn clear(&mut self) {
        *self = Self::with_params(self.k1, self.b);
    }

    fn remove_slot(&mut self, id: &str) -> Option<u64> {
        let slot = self.by_id.remove(id)?;
        let doc = self.docs[slot as usize].take()?;
        for (term, _) in doc.terms {
            let list = &mut self.postings[term as usize];
            if let Some(pos) = list.iter().position(|&(s, _)| s == slot) {
                list.swap_remove(pos);
            }
        }
        self.total_len -= u64::from(doc.len);
        self.free.push(slot);
        Some(doc.seq)
    }

    /// The `top_k` best documents for `query`, best first, as (id, score). Only documents
    /// sharing at least one term with the query are returned, so the list may be shorter.
    pub fn search(&self, query: &str, top_k: usize) -> Vec<(&str, f64)> {
        if top_k == 0 || self.by_id.is_empty() {
            return Vec::new();
        }
        let mut tokens = Vec::new();
        tokenize_into(query, &mut tokens);
        // Each distinct query term counts once (see the module docs).
        let mut query_terms: Vec<u32> = tokens
            .iter()
            .filter_map(|tok| self.vocab.get(tok.as_str()).copied())
            .collect();
        query_terms.sort_unstable();
        query_terms.dedup();
        if query_terms.is_empty() {
            return Vec::new();
        }
        let n = self.by_id.len() as f64;
        let avg = (self.total_len as f64 / n).max(1.0);
        let (k1, b) = (self.k1, self.b);
        let mut scores = vec![0f64; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for &term in &query_terms {
            let list = &self.postings[term as usize];
            if list.is_empty() {
                continue;
            }
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(slot, tf) in list {
                let Some(doc) = &self.docs[slot as usize] else {
                    continue;
                };
                let tf = f64::from(tf);
                let norm = k1 * (1.0 - b + b * f64::from(doc.len) / avg);
                let s = &mut scores[slot as usize];
                if *s == 0.0 {
                    touched.push(slot);
                }
                *s += idf * tf * (k1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(f64, u64, u32)> = touched
            .into_iter()
            .filter_map(|slot| {
                self.docs[slot as usize]
                    .as_ref()
                    .map(|d| (scores[slot as usize], d.seq, slot))
            })
            .collect();
        let order = |a: &(f64, u64, u32), b: &(f64, u64, u32)| -> Ordering {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
        };
        if ranked.len() > top_k {
            ranked.select_nth_unstable_by(top_k - 1, order);
            ranked.truncate(top_k);
        }
        ranked.sort_unstable_by(order);
        ranked
            .into_iter()
            .filter_map(|(score, _, slot)| {
                self.docs[slot as usize]
                    .as_ref()
                    .map(|d| (d.id.as_str(), score))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(docs: &[(&str, &str)]) -> Bm25Index {
        let mut ix = Bm25Index::default();
        for (id, text) in docs {
            ix.upsert(id, text);
        }
        ix
    }

    fn ids<'a>(hits: &[(&'a str, f64)]) -> Vec<&'a str> {
        hits.iter().map(|h| h.0).collect()
    }

    #[test]
    fn ranks_the_matching_document_first() {
        let ix = index(&[
            ("weather", "get_current_weather: Get the current weather for a city location unit"),
            ("fx", "convert_currency: Convert an amount of money between currencies amount source target"),
            ("mail", "send_email: Send an email message to a recipient to subject body"),
        ]);
        assert_eq!(ids(&ix.search("convert between currencies", 3)), ["fx"]);
        assert_eq!(
            ids(&ix.search("what's the weather in Paris?", 3))[0],
            "weather"
        );
        assert_eq!(ids(&ix.search("email my boss", 3)), ["mail"]);
        assert!(ix.search("quantum chromodynamics", 3).is_empty());
        assert!(ix.search("", 3).is_empty());
        assert!(ix.search("weather", 0).is_empty());
    }

    #[test]
    fn scores_follow_the_formula() {
        // Two docs, one term: N=2, df=1, idf = ln(1 + 1.5/1.5) = ln 2; |d| = avgdl = 1.
        let ix = index(&[("a", "alpha"), ("b", "beta")]);
        let hits = ix.search("alpha", 5);
        assert_eq!(hits.len(), 1);
        let expected = 2f64.ln() * (1.2 + 1.0) / (1.0 + 1.2);
        assert!((hits[0].1 - expected).abs() < 1e-12, "{hits:?}");
        // Length normalisation: the shorter document with the term scores higher.
        let ix = index(&[
            ("long", "alpha one two three four five"),
            ("short", "alpha six"),
            ("x", "seven"),
        ]);
        assert_eq!(ids(&ix.search("alpha", 5)), ["short", "long"]);
        let flat = {
            let mut ix = Bm25Index::new(1.2, 0.0).unwrap();
            ix.upsert("long", "alpha one two three four five");
            ix.upsert("short", "alpha six");
            ix
        };
        let hits = flat.search("alpha", 5);
        assert_eq!(hits[0].1, hits[1].1, "b=0 ignores length");
        assert_eq!(ids(&hits), ["long", "short"], "ties keep insertion order");
    }

    #[test]
    fn a_repeated_query_term_counts_once() {
        let ix = index(&[("a", "alpha"), ("b", "beta"), ("c", "gamma")]);
        let once = ix.search("alpha", 5);
        let many = ix.search("alpha alpha alpha alpha", 5);
        assert_eq!(once, many);
        // So a pasted list repeating one word does not bury the word asked about once.
        let hits = ix.search("alpha alpha alpha beta", 5);
        assert_eq!(hits[0].1, hits[1].1);
    }

    #[test]
    fn ties_break_by_insertion_order_even_after_replacement() {
        let mut ix = index(&[
            ("z", "same words here"),
            ("a", "same words here"),
            ("m", "same words here"),
        ]);
        assert_eq!(ids(&ix.search("words", 10)), ["z", "a", "m"]);
        ix.upsert("z", "same words here"); // replace keeps the place
        assert_eq!(ids(&ix.search("words", 10)), ["z", "a", "m"]);
        assert_eq!(ids(&ix.search("words", 2)), ["z", "a"]);
        assert_eq!(ix.ids(), ["z", "a", "m"]);
    }

    #[test]
    fn replace_and_delete_update_the_statistics() {
        let mut ix = index(&[("a", "red apple"), ("b", "green pear")]);
        ix.upsert("a", "yellow banana");
        assert!(ix.search("apple", 5).is_empty());
        assert_eq!(ids(&ix.search("banana", 5)), ["a"]);
        assert!(ix.remove("b"));
        assert!(!ix.remove("b"));
        assert!(ix.search("pear", 5).is_empty());
        assert_eq!(ix.len(), 1);
        ix.upsert("c", "green pear"); // reuses the freed slot
        assert_eq!(ids(&ix.search("pear", 5)), ["c"]);
        assert_eq!(ix.total_len, 4);
        ix.clear();
        assert!(ix.is_empty() && ix.search("pear", 5).is_empty());
    }

    #[test]
    fn chinese_query_matches_chinese_description() {
        let ix = index(&[
            ("weather", "get_weather: 查询城市的天气预报"),
            ("fx", "convert_currency: 货币汇率换算"),
            ("en", "get_weather_en: weather forecast for a city"),
        ]);
        assert_eq!(ids(&ix.search("我想知道上海的天气", 3))[0], "weather");
        assert_eq!(ids(&ix.search("人民币换算成美元", 3))[0], "fx");
    }

    #[test]
    fn parameters_are_validated() {
        assert_eq!(Bm25Index::new(-1.0, 0.5).err(), Some(RagError::BadK1(-1.0)));
        assert!(matches!(
            Bm25Index::new(f64::NAN, 0.5),
            Err(RagError::BadK1(_))
        ));
        assert_eq!(Bm25Index::new(1.2, 1.5).err(), Some(RagError::BadB(1.5)));
        assert!(Bm25Index::new(0.0, 1.0).is_ok());
    }
}
