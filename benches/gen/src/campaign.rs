//! A long campaign for the recall benchmarks (issue 25): a copy of a vault (the bundled
//! campaign) with `sessions` session logs holding `exchanges` exchanges in all, plus one
//! session log of about `huge_mb` MB, all in `.vaultdm/sessions/`. Deterministic; written
//! into a folder outside the repository at bench time, never committed.

use std::io::Write;
use std::path::Path;

/// Words past the bundled campaign's first 25 nouns ([`crate::MINING_WORDS`]).
const MORE_WORDS: &[&str] = &[
    "adit", "claim", "assay", "wagon", "pass", "ridge", "creek", "saloon", "sheriff", "deputy",
    "doctor", "letter", "wire", "vein", "smelter", "candle", "hymn", "cellar", "ledge", "lantern",
    "ticket", "depot", "bridge", "trestle",
];

/// The words a long campaign's exchanges are made of.
fn words() -> &'static [&'static str] {
    static WORDS: std::sync::OnceLock<Vec<&str>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| crate::joined(&crate::MINING_WORDS[..25], &[MORE_WORDS]))
}

const NAMES: &[&str] = &[
    "Odessa", "Hesper", "Brannock", "Silas", "Mae", "Tamsin", "Fitch", "Pell", "Corwin", "Ada",
];

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }

    fn sentence(&mut self) -> String {
        let n = 6 + (self.next() % 8) as usize;
        let mut s = String::from(self.pick(NAMES));
        for _ in 0..n {
            s.push(' ');
            s.push_str(self.pick(words()));
        }
        s.push('.');
        s
    }

    fn text(&mut self, chars: usize) -> String {
        let mut s = String::new();
        while s.len() < chars {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&self.sentence());
        }
        s
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), target)?;
        }
    }
    Ok(())
}

fn record(
    out: &mut impl Write,
    day: usize,
    minute: usize,
    role: &str,
    text: &str,
) -> std::io::Result<()> {
    let time = format!(
        "2026-{:02}-{:02}T{:02}:{:02}:00+00:00",
        1 + (day / 28) % 12,
        1 + day % 28,
        (minute / 60) % 24,
        minute % 60
    );
    let line = serde_json::json!({"time": time, "role": role, "text": text});
    writeln!(out, "{line}")
}

/// Writes the campaign into `out` (a copy of `template`, then the session logs).
pub fn campaign(
    out: &Path,
    template: &Path,
    sessions: usize,
    exchanges: usize,
    huge_mb: usize,
) -> std::io::Result<()> {
    copy_dir(template, out)?;
    let dir = out.join(".vaultdm/sessions");
    std::fs::create_dir_all(&dir)?;
    let mut rng = Rng(0x5eed_cafe);
    let mut left = exchanges;
    for s in 0..sessions {
        let n = left / (sessions - s);
        left -= n;
        let f = std::fs::File::create(dir.join(format!("session-{:03}.jsonl", s + 1)))?;
        let mut w = std::io::BufWriter::new(f);
        for i in 0..n {
            let player = format!("{} {}?", rng.sentence(), rng.pick(words()));
            let len = 300 + (rng.next() % 600) as usize;
            let dm = rng.text(len);
            record(&mut w, s, i * 2, "player", &player)?;
            record(&mut w, s, i * 2 + 1, "dm", &dm)?;
        }
        w.flush()?;
    }
    if huge_mb > 0 {
        let f = std::fs::File::create(dir.join("imported-saga.jsonl"))?;
        let mut w = std::io::BufWriter::new(f);
        let mut written = 0usize;
        let mut i = 0;
        // Replies of ~30,000 characters (what history keeps of one at most: 32,000).
        let block = rng.text(30_000);
        while written < huge_mb << 20 {
            let player = rng.sentence();
            let dm = format!("{} {block}", rng.sentence());
            record(&mut w, sessions + 1, i * 2, "player", &player)?;
            record(&mut w, sessions + 1, i * 2 + 1, "dm", &dm)?;
            written += player.len() + dm.len() + 140;
            i += 1;
        }
        w.flush()?;
    }
    Ok(())
}
