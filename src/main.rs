//! The `vaultdm` binary: parse arguments and hand over to the library's CLI.

/// jemalloc, not the system allocator: loading a vault makes hundreds of thousands of small
/// allocations on both cores, and glibc's per-thread heaps grow a page at a time (an
/// `mprotect` each) and fault every page in. jemalloc took `check` on 10,000 notes from
/// 1.84x to 1.60x the parse floor, with no more peak memory once all threads share one arena
/// (`.cargo/config.toml`; docs/benchmarks.md).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    vaultdm::run()
}
