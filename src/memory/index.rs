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
pub(crate) struct Index {
    ids: FxHashMap<String, u32>,
    /// Passages holding each term.
    df: Vec<u32>,
    docs: Vec<Doc>,
    total_len: usize,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Index {
    #[cfg(test)]
    /// An empty index.
    pub(crate) fn new() -> Index {
        Index::default()
    }

    /// Number of passages.
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// Adds a passage: its text and extra terms (entity tags such as `@npc:odessa-flint`).
    pub(crate) fn add(&mut self, text: &str, extra: &[String]) {
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

    /// Passages holding `term`.
    pub(crate) fn df(&self, term: &str) -> u32 {
        self.ids.get(term).map_or(0, |id| self.df[*id as usize])
    }

    /// Passages holding `term` among those for which `allowed` holds.
    pub(crate) fn df_where(&self, term: &str, allowed: impl Fn(usize) -> bool) -> u32 {
        let Some(id) = self.ids.get(term) else {
            return 0;
        };
        self.docs
            .iter()
            .enumerate()
            .filter(|(i, d)| d.tf.binary_search_by_key(id, |(t, _)| *t).is_ok() && allowed(*i))
            .count() as u32
    }

    /// Terms in all passages together (the sum of their lengths).
    pub(crate) fn total_len(&self) -> usize {
        self.total_len
    }

    /// The passages best matching `query` terms (weighted), best first, with their
    /// scores; only passages for which `allowed` holds; at most `k`.
    pub(crate) fn search(
        &self,
        query: &[(String, f64)],
        k: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if self.docs.is_empty() {
            return Vec::new();
        }
        let stats = Stats {
            docs: self.docs.len(),
            total_len: self.total_len,
        };
        let q = weigh(query, stats, &|t| self.df(t));
        self.score(&q, stats, k, allowed)
    }

    /// BM25 with the query already weighed ([`weigh`]) over a collection this index is one
    /// part of (`stats`: the whole collection's): best first, at most `k`.
    pub(crate) fn score(
        &self,
        query: &[(String, f64)],
        stats: Stats,
        k: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        let q: Vec<(u32, f64)> = query
            .iter()
            .filter_map(|(t, w)| self.ids.get(t).map(|id| (*id, *w)))
            .collect();
        if q.is_empty() {
            return Vec::new();
        }
        let avg = stats.avg();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter(|(i, _)| allowed(*i))
            .filter_map(|(i, d)| {
                let mut s = 0.0;
                for (id, w) in &q {
                    if let Ok(p) = d.tf.binary_search_by_key(id, |(t, _)| *t) {
                        s += w * bm25(d.tf[p].1, d.len, avg);
                    }
                }
                (s > 0.0).then_some((i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(k);
        scored
    }

    /// The indexed terms, by id.
    pub(crate) fn terms(&self) -> Vec<&str> {
        let mut out = vec![""; self.ids.len()];
        for (t, id) in &self.ids {
            out[*id as usize] = t;
        }
        out
    }

    /// Each passage's length and (term id, count) pairs, in the order added.
    pub(crate) fn docs(&self) -> impl Iterator<Item = (usize, &[(u32, u32)])> {
        self.docs.iter().map(|d| (d.len, d.tf.as_slice()))
    }
}

/// The size of a collection of passages, for BM25's document frequencies and lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Passages.
    pub docs: usize,
    /// Their lengths, summed.
    pub total_len: usize,
}

impl Stats {
    /// The average passage length (at least 1).
    pub fn avg(self) -> f64 {
        (self.total_len as f64 / self.docs.max(1) as f64).max(1.0)
    }
}

/// A query's terms weighed by their inverse document frequency over a collection (`df`: in
/// how many of its passages a term is); a term given twice counts once with both weights,
/// and a term no passage holds is left out.
pub(crate) fn weigh(
    query: &[(String, f64)],
    stats: Stats,
    df: &dyn Fn(&str) -> u32,
) -> Vec<(String, f64)> {
    let n = stats.docs as f64;
    let mut q: Vec<(String, f64)> = Vec::new();
    for (t, w) in query {
        let df = f64::from(df(t));
        if df == 0.0 {
            continue;
        }
        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
        match q.iter_mut().find(|(x, _)| x == t) {
            Some((_, x)) => *x += idf * w,
            None => q.push((t.clone(), idf * w)),
        }
    }
    q
}

/// One term's BM25 contribution, `f` times in a passage of `len` terms.
pub(crate) fn bm25(f: u32, len: usize, avg: f64) -> f64 {
    let f = f64::from(f);
    f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len as f64 / avg))
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
