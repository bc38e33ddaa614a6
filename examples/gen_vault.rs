//! Writes the synthetic benchmark vault: `cargo run --release --example gen_vault -- OUT_DIR [N] [SEED]`.
//!
//! N is the number of notes (default 10,000, ~3 KB each). OUT_DIR must be empty or a
//! vault this tool generated before (it is then replaced). The generator itself lives in
//! `benches/gen/src/lib.rs` (the `vaultdm-gen` crate), shared with the criterion benches.

use vaultdm_gen as gen;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!(
            "usage: gen_vault OUT_DIR [N (default {})] [SEED]",
            gen::DEFAULT_NOTES
        );
        return ExitCode::from(2);
    };
    let n = match args.next().map(|a| a.parse::<usize>()) {
        None => gen::DEFAULT_NOTES,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("N must be a number of notes: {e}");
            return ExitCode::from(2);
        }
    };
    let seed = match args.next().map(|a| a.parse::<u64>()) {
        None => gen::DEFAULT_SEED,
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            eprintln!("SEED must be a number: {e}");
            return ExitCode::from(2);
        }
    };
    if let Ok(mut entries) = std::fs::read_dir(&out) {
        if entries.next().is_some() {
            if !out.join(gen::MARKER).is_file() {
                eprintln!(
                    "{}: folder is not empty and was not made by gen_vault; refusing to write into it",
                    out.display()
                );
                return ExitCode::from(2);
            }
            if let Err(e) = std::fs::remove_dir_all(&out) {
                eprintln!(
                    "{}: could not clear the old generated vault: {e}",
                    out.display()
                );
                return ExitCode::from(2);
            }
        }
    }
    let t = Instant::now();
    match gen::generate(&out, n, seed) {
        Ok(s) => {
            println!(
                "{}: {} notes, {:.1} MB of notes ({} total bytes) in {:.2?}",
                out.display(),
                s.notes,
                s.note_bytes as f64 / 1e6,
                s.total_bytes,
                t.elapsed()
            );
            println!(
                "  {} PCs, {} NPCs, {} locations, {} lore notes, {} threads, {} days / {} events",
                s.pcs, s.npcs, s.locations, s.lore, s.threads, s.days, s.events
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: could not write the vault: {e}", out.display());
            ExitCode::from(2)
        }
    }
}
