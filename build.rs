//! Embeds `vault-template/` in the binary for `vaultdm init`.
use std::io::Write;
use std::path::Path;

fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name != ".gitkeep" {
            continue;
        }
        if p.is_dir() {
            walk(&p, root, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((
                rel,
                p.canonicalize().unwrap_or(p.clone()).display().to_string(),
            ));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("vault-template");
    println!("cargo:rerun-if-changed=vault-template");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    for (_, abs) in &files {
        println!("cargo:rerun-if-changed={abs}");
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("template_files.rs");
    let mut f = std::fs::File::create(out).expect("create template_files.rs");
    writeln!(
        f,
        "/// Files of the built-in campaign template: (vault-relative path, contents)."
    )
    .ok();
    writeln!(f, "pub(crate) static TEMPLATE_FILES: &[(&str, &[u8])] = &[").ok();
    for (rel, abs) in files {
        writeln!(f, "    ({rel:?}, include_bytes!({abs:?})),").ok();
    }
    writeln!(f, "];").ok();
}
