//! Recall without a model: BM25 over every exchange of a campaign, with the entities each
//! passage names as extra terms, so "the saloon owner" finds the exchanges about Odessa
//! Flint even when no word is shared. Small and exact: a campaign's few thousand exchanges
//! index in milliseconds, and the index is rebuilt from the session logs whenever it is
//! needed (it is derived data; the logs are the truth).

use super::words::terms;
use rustc_hash::FxHashMap;

/// One indexed passage.
#[derive(Debug, Clone)]
struct Doc {
    len: usize,
    /// (term id, count) pairs.
    tf: Vec<(u32, u32)>,
}

/// A BM25 index over passages numbered from 0 in the order added.
#[derive(Debug, Clone, Default)]
pub struct Index {
    ids: FxHashMap<String, u32>,
    /// Passages holding each term.
    df: Vec<u32>,
    docs: Vec<Doc>,
    total_len: usize,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Index {
    /// An empty index.
    pub fn new() -> Index {
        Index::default()
    }

    /// Number of passages.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Adds a passage: its text and extra terms (entity tags such as `@npc:odessa-flint`).
    pub fn add(&mut self, text: &str, extra: &[String]) {
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        let mut len = 0;
        for t in terms(text).into_iter().chain(extra.iter().cloned()) {
            let next = self.ids.len() as u32;
            let id = *self.ids.entry(t).or_insert(next);
            if id as usize == self.df.len() {
                self.df.push(0);
            }
            *counts.entry(id).or_default() += 1;
            len += 1;
        }
        for id in counts.keys() {
            self.df[*id as usize] += 1;
        }
        let mut tf: Vec<(u32, u32)> = counts.into_iter().collect();
        tf.sort_unstable();
        self.total_len += len;
        self.docs.push(Doc { len, tf });
    }

    /// The passages best matching `query` terms (weighted), best first, with their
    /// scores; only passages for which `allowed` holds; at most `k`.
    pub fn search(
        &self,
        query: &[(String, f64)],
        k: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if self.docs.is_empty() {
            return Vec::new();
        }
        let n = self.docs.len() as f64;
        let avg = (self.total_len as f64 / n).max(1.0);
        let mut q: Vec<(u32, f64)> = Vec::new();
        for (t, w) in query {
            if let Some(id) = self.ids.get(t) {
                let df = f64::from(self.df[*id as usize]);
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                match q.iter_mut().find(|(i, _)| i == id) {
                    Some((_, x)) => *x += idf * w,
                    None => q.push((*id, idf * w)),
                }
            }
        }
        if q.is_empty() {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter(|(i, _)| allowed(*i))
            .filter_map(|(i, d)| {
                let mut s = 0.0;
                for (id, w) in &q {
                    if let Ok(p) = d.tf.binary_search_by_key(id, |(t, _)| *t) {
                        let f = f64::from(d.tf[p].1);
                        s += w * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * d.len as f64 / avg));
                    }
                }
                (s > 0.0).then_some((i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(k);
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_passage_sharing_rare_words_ranks_first() {
        let mut ix = Index::new();
        ix.add("The stove crackles and the miners drink.", &[]);
        ix.add(
            "Hesper hides the carbon copies inside the upright piano.",
            &["@npc:hesper".into()],
        );
        ix.add("The miners drink and the stove crackles again.", &[]);
        let q: Vec<(String, f64)> = terms("where did we stash the copies?")
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        let hits = ix.search(&q, 2, |_| true);
        assert_eq!(hits[0].0, 1);
        let by_tag = ix.search(&[("@npc:hesper".into(), 1.0)], 5, |_| true);
        assert_eq!(by_tag.len(), 1);
        assert!(ix.search(&q, 5, |i| i != 1).is_empty());
    }
}
