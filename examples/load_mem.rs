//! Peak memory of a cold load: `cargo run --release --example load_mem -- VAULT_DIR`.
//!
//! Loads the vault to typed canon once (as `vaultdm` does at start-up) and prints the
//! notes read, their bytes on disk and the process's peak resident set (`VmHWM` from
//! `/proc/self/status`, Linux only) before and after the load, as a multiple of the
//! vault's size. Generate the vault first with the `gen_vault` example.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn md_bytes(root: &std::path::Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for e in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_type().is_file() {
            if let Ok(m) = e.metadata() {
                if e.path().extension().is_some_and(|x| x == "md") {
                    files += 1;
                    bytes += m.len();
                }
            }
        }
    }
    (files, bytes)
}

fn mb(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() -> ExitCode {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: load_mem VAULT_DIR   (make one with: cargo run --release --example gen_vault -- DIR)");
        return ExitCode::from(2);
    };
    let (files, bytes) = md_bytes(&root);
    let before = status_bytes("VmHWM:").unwrap_or(0);
    let t = Instant::now();
    let loaded = match vaultdm::canon::Loaded::load(&root) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let took = t.elapsed();
    let peak = status_bytes("VmHWM:").unwrap_or(0);
    let rss = status_bytes("VmRSS:").unwrap_or(0);
    let anon = status_bytes("RssAnon:").unwrap_or(0);
    let file = status_bytes("RssFile:").unwrap_or(0);
    let c = &loaded.built.campaign;
    println!("vault:            {}", root.display());
    println!(
        "notes:            {files} ({} loaded)",
        loaded.vault.notes.len()
    );
    println!(
        "canon:            {} PCs, {} NPCs, {} locations, {} threads, {} events, {} lore",
        c.pcs.len(),
        c.npcs.len(),
        c.locations.len(),
        c.threads.len(),
        c.events.len(),
        c.lore.len()
    );
    println!("note bytes:       {bytes} ({:.1} MiB)", mb(bytes));
    println!("load time:        {took:.2?}");
    println!("VmHWM before:     {:.1} MiB", mb(before));
    println!("VmHWM after:      {:.1} MiB", mb(peak));
    println!(
        "VmRSS after:      {:.1} MiB (canon still held: {:.1} MiB anonymous, {:.1} MiB file-backed)",
        mb(rss),
        mb(anon),
        mb(file)
    );
    println!(
        "peak / size:      {:.2}x",
        peak as f64 / bytes.max(1) as f64
    );
    println!(
        "(peak - baseline) / size: {:.2}x",
        peak.saturating_sub(before) as f64 / bytes.max(1) as f64
    );
    let (mut blocks, mut text_len, mut links, mut fm) = (0, 0, 0, 0);
    let mut link_bytes = 0;
    for n in &loaded.vault.notes {
        blocks += n.body.blocks.len();
        for b in &n.body.blocks {
            text_len += b.text.len();
        }
        links += n.links.len();
        for l in &n.links {
            link_bytes += l.target.note.len();
        }
        fm += n.frontmatter.iter().count();
    }
    println!(
        "held by notes:    {blocks} blocks ({:.1} MiB of text), {links} links ({:.1} MiB of targets), {fm} frontmatter keys",
        mb(text_len as u64),
        mb(link_bytes as u64)
    );
    drop(loaded);
    ExitCode::SUCCESS
}
