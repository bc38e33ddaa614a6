//! Single-thread cost of each parsing layer over a vault (for profiling, not a test):
//! `cargo run --release --example parse_cost -- DIR`.
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: parse_cost DIR");
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(&dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let rel = p
                    .strip_prefix(&dir)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    let only = std::env::var("ONLY").ok();
    let time = |label: &str, f: &dyn Fn() -> usize| {
        if only.as_deref().is_some_and(|o| !label.starts_with(o)) {
            return;
        }
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..5 {
            let t = Instant::now();
            n = f();
            best = best.min(t.elapsed().as_secs_f64() * 1000.0);
        }
        println!("{label:<28} {best:>8.1} ms  ({n})");
    };
    use pulldown_cmark::{Options, Parser};
    time("pulldown (floor options)", &|| {
        let mut o = Options::empty();
        o.insert(Options::ENABLE_WIKILINKS);
        o.insert(Options::ENABLE_YAML_STYLE_METADATA_BLOCKS);
        o.insert(Options::ENABLE_TABLES);
        files
            .iter()
            .map(|(_, b)| Parser::new_ext(&String::from_utf8_lossy(b), o).count())
            .sum()
    });
    time("pulldown (our options, offsets)", &|| {
        let mut o = Options::empty();
        o.insert(Options::ENABLE_WIKILINKS);
        o.insert(Options::ENABLE_TABLES);
        o.insert(Options::ENABLE_STRIKETHROUGH);
        o.insert(Options::ENABLE_TASKLISTS);
        files
            .iter()
            .map(|(_, b)| {
                Parser::new_ext(&String::from_utf8_lossy(b), o)
                    .into_offset_iter()
                    .count()
            })
            .sum()
    });
    time("Note::parse", &|| {
        files
            .iter()
            .map(|(r, b)| vaultdm::vault::Note::parse(r, b).body.blocks.len())
            .sum()
    });
    time("Note::parse, kept (drop later)", &|| {
        let v: Vec<_> = files
            .iter()
            .map(|(r, b)| vaultdm::vault::Note::parse(r, b))
            .collect();
        let n = v.len();
        std::mem::forget(v);
        n
    });
}
