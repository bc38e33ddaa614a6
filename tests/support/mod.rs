//! Helpers shared by the integration tests: fixture paths, scratch copies of fixture
//! vaults, and short ways to load canon and build contexts; a scripted fake LLM server
//! (`fake_llm`), a running `vaultdm serve` (`served`) and a WebDriver client (`webdriver`).
//! A plain module of `tests/integration.rs` (`crate::support`) and of `tests/soak.rs`.

#![allow(dead_code)] // the soak binary uses a small part

pub(crate) mod fake_llm;
pub(crate) mod served;
pub(crate) mod webdriver;

use std::path::{Path, PathBuf};

use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Injected, ModeChoice, Options};
use vaultdm::vault::Diagnostic;

/// The folder of a committed fixture vault.
pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A scratch copy of a fixture vault (at `<tmp>/<name>`, so the folder keeps its name).
pub(crate) struct Scratch {
    _dir: tempfile::TempDir,
    /// The copied vault.
    pub root: PathBuf,
}

impl Scratch {
    /// Copies `tests/fixtures/<name>` into a fresh temporary folder.
    pub(crate) fn of(name: &str) -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join(name);
        copy_dir(&fixture(name), &root);
        Scratch { _dir: dir, root }
    }

    /// An empty vault folder named `name`.
    pub(crate) fn empty(name: &str) -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join(name);
        std::fs::create_dir_all(&root).expect("mkdir");
        Scratch { _dir: dir, root }
    }

    /// Writes (or overwrites) a file in the vault, creating folders.
    pub(crate) fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        self
    }

    /// Replaces `find` (which must occur) with `replace` in a vault file.
    pub(crate) fn edit(&self, rel: &str, find: &str, replace: &str) -> &Self {
        let p = self.root.join(rel);
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(text.contains(find), "{rel} does not contain {find:?}");
        std::fs::write(&p, text.replacen(find, replace, 1)).expect("write");
        self
    }

    /// Deletes a file from the vault.
    pub(crate) fn remove(&self, rel: &str) -> &Self {
        std::fs::remove_file(self.root.join(rel)).expect("remove");
        self
    }

    /// Loads the vault.
    pub(crate) fn load(&self) -> Loaded {
        load(&self.root)
    }
}

/// Recursively copies a folder (files and folders only).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// A temporary copy of the bundled `vault-template/`.
pub(crate) fn template_copy() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template"),
        t.path(),
    );
    t
}

/// Loads a vault to typed canon.
pub(crate) fn load(root: &Path) -> Loaded {
    Loaded::load(root).expect("vault loads")
}

/// Loads a fixture vault.
pub(crate) fn load_fixture(name: &str) -> Loaded {
    load(&fixture(name))
}

/// `(path, line, code)` of every diagnostic, for readable assertions.
pub(crate) fn triples(diags: &[Diagnostic]) -> Vec<(String, usize, &'static str)> {
    diags
        .iter()
        .map(|d| (d.path.clone(), d.line, d.code.as_str()))
        .collect()
}

/// The engine for a loaded vault, with its configured template overrides.
pub(crate) fn engine(loaded: &Loaded) -> Engine {
    Engine::for_vault(&loaded.vault.root, loaded).expect("templates load")
}

/// Options with the vault's defaults.
pub(crate) fn options(loaded: &Loaded) -> Options {
    Options::for_vault(&loaded.config.context)
}

/// Builds a context for a message (None: the full session context).
pub(crate) fn context(loaded: &Loaded, message: Option<&str>) -> Injected {
    let opts = Options {
        message: message.map(str::to_string),
        ..options(loaded)
    };
    engine(loaded).build(&opts).expect("context builds")
}

/// Builds a context with a budget and mode.
pub(crate) fn context_with(
    loaded: &Loaded,
    message: Option<&str>,
    mode: ModeChoice,
    budget: Option<usize>,
) -> Injected {
    let opts = Options {
        message: message.map(str::to_string),
        mode,
        budget,
        ..options(loaded)
    };
    engine(loaded).build(&opts).expect("context builds")
}

/// Every file under `root` (hidden ones too), by `/`-separated relative path, with its bytes.
pub(crate) fn all_files(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for e in walkdir::WalkDir::new(root).into_iter().flatten() {
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            out.insert(rel, std::fs::read(e.path()).unwrap_or_default());
        }
    }
    out
}
