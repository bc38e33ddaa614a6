//! vaultdm: read a GM's Obsidian-style campaign vault and inject exactly the canon each
//! message to an LLM Dungeon Master needs.
//!
//! Data flows one way: files -> notes ([`vault`]) -> typed campaign ([`canon`]) ->
//! selected and rendered context ([`context`]) -> prompt ([`llm`]) -> transcript ([`session`]).
//! [`watch`] reloads canon when notes change; [`write`](mod@write) is the one way back to
//! the files. [`play`] is one turn at the table, where all of it meets; [`serve`] and [`cli`]
//! only adapt it to HTTP and the terminal. docs/architecture.md draws every module's floor and
//! imports, and a test holds it to the code: no module imports one on its own floor or above.

// The crate's documentation is for whoever works on it, and links the private items it
// explains; `.ci/run` builds it with `--document-private-items`, where such links resolve
// (a broken link is still an error).
#![allow(rustdoc::private_intra_doc_links)]

/// `eprintln!` for the whole library, shadowing std's: a closed or full stderr
/// (`2>/dev/full`, a pipe whose reader left) is ignored instead of panicking — there is
/// nowhere left to report it, and the work (a session, a write) must finish either way.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

pub mod canon;
pub(crate) mod check;
mod cli;
pub mod config;
pub mod context;
pub(crate) mod dice;
pub mod llm;
pub mod memory;
pub(crate) mod mentions;
pub mod names;
pub mod play;
pub(crate) mod secrets;
pub(crate) mod serve;
pub mod session;
pub mod tokens;
pub mod vault;
pub mod watch;
pub mod write;

pub use cli::run;
