//! The `vaultdm` binary: parse arguments and hand over to the library's CLI.

fn main() -> std::process::ExitCode {
    vaultdm::cli::run()
}
