//! Writes a long campaign for the recall benchmarks: the bundled campaign with generated
//! session logs. `cargo run --release --example gen_campaign -- OUT [SESSIONS EXCHANGES HUGE_MB]`
//! (default 300 sessions, 20,000 exchanges, one 300 MB session). Write it outside the
//! repository (e.g. `/tmp/campaign`); it is never committed.

use vaultdm_gen::campaign;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: gen_campaign OUT [SESSIONS EXCHANGES HUGE_MB]");
        std::process::exit(2);
    };
    let num = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template");
    if let Err(e) = campaign::campaign(
        std::path::Path::new(out),
        &template,
        num(1, 300),
        num(2, 20_000),
        num(3, 300),
    ) {
        eprintln!("{out}: {e}");
        std::process::exit(2);
    }
}
