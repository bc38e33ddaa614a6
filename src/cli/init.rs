//! `vaultdm init DIR [--name NAME]`: a new campaign from the built-in template.

use super::Outcome;
use anyhow::Context as _;
use std::io::Write;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/template_files.rs"));

/// Arguments of `init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to create (must not exist or be empty).
    pub dir: PathBuf,
    /// Campaign name (default: the folder name, title-cased).
    #[arg(long)]
    pub name: Option<String>,
}

/// Writes the template into `dir`, refusing to touch a non-empty folder.
pub fn create(dir: &Path, name: Option<&str>) -> anyhow::Result<usize> {
    if dir.exists() {
        let mut rd = std::fs::read_dir(dir)
            .with_context(|| format!("{}: cannot read folder", dir.display()))?;
        if rd.next().is_some() {
            anyhow::bail!(
                "{}: folder is not empty; refusing to overwrite anything in it",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "Campaign".into());
    let name = name
        .map(str::to_string)
        .unwrap_or_else(|| crate::canon::build::title_case(&folder));
    for (rel, bytes) in TEMPLATE_FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create folder", parent.display()))?;
        }
        let data: Vec<u8> = if *rel == crate::config::CONFIG_FILE {
            set_name(&String::from_utf8_lossy(bytes), &name).into_bytes()
        } else {
            bytes.to_vec()
        };
        std::fs::write(&path, data).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(TEMPLATE_FILES.len())
}

fn set_name(toml_text: &str, name: &str) -> String {
    let quoted = toml::Value::String(name.to_string()).to_string();
    let mut done = false;
    let mut out: Vec<String> = toml_text
        .lines()
        .map(|l| {
            if !done && l.trim_start().starts_with("name") && l.contains('=') {
                done = true;
                format!("name = {quoted}")
            } else {
                l.to_string()
            }
        })
        .collect();
    if !done {
        out.insert(0, format!("name = {quoted}"));
    }
    out.join("\n") + "\n"
}

/// Runs `init`.
pub fn execute(args: Args) -> anyhow::Result<Outcome> {
    let n = create(&args.dir, args.name.as_deref())?;
    let mut out = super::stdout();
    writeln!(out, "created {} with {n} files", args.dir.display())?;
    writeln!(
        out,
        "next: vaultdm check --vault {0} && vaultdm context --vault {0}",
        args.dir.display()
    )?;
    out.flush()?;
    Ok(Outcome::Ok)
}
