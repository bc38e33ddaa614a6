//! The integration tests, all in one binary (as ripgrep and mdBook do): each test binary
//! links the whole crate and its dependencies, and one per file filled a CI machine's disk
//! and relinked everything for each. One module per area, named as its file; the helpers
//! are `support`. Run one area with `cargo test --test integration serve::`, one test with
//! its full name (`cargo test --test integration faults::a_name`).
//!
//! A new `tests/<area>.rs` must be listed here: Cargo.toml turns off `autotests`, so a file
//! in tests/ that no binary names is never built.

mod support;

mod adopt;
mod architecture;
mod budget;
mod canon;
mod chat;
mod cli;
mod cli_ask;
mod context;
mod context_snapshots;
mod e2e_local_llm;
mod e2e_open_webui;
mod edit;
mod faults;
mod leak;
mod live;
mod llm_stream;
mod memory;
mod names;
mod play;
mod real_vaults;
mod serve;
mod serve_browser;
mod serve_openai_py;
mod session_store;
mod vault;
mod watch;
mod write;
mod write_place;
mod write_proposals;
mod write_style;
