//! `vaultdm init DIR [--name NAME]`: a new campaign from the built-in template.
//! `vaultdm init --adopt [DIR]`: an existing vault as it is — what vaultdm reads it as, and
//! a commented `vaultdm.toml` recording that (no note is moved or edited).

use super::Outcome;
use anyhow::Context as _;
use std::io::Write;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/template_files.rs"));

/// Arguments of `init`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Folder to create (must not exist or be empty); with --adopt, the vault to adopt
    /// (default: --vault, else the current folder).
    pub dir: Option<PathBuf>,
    /// Campaign name (default: the folder name, title-cased).
    #[arg(long)]
    pub name: Option<String>,
    /// Adopt an existing vault: print what vaultdm reads it as and write a commented
    /// vaultdm.toml recording that. No note is moved or edited.
    #[arg(long)]
    pub adopt: bool,
}

/// Writes the template into `dir`, refusing to touch a non-empty folder.
pub(super) fn create(dir: &Path, name: Option<&str>) -> anyhow::Result<usize> {
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
pub(super) fn execute(args: Args, vault: Option<PathBuf>) -> anyhow::Result<Outcome> {
    if args.adopt {
        let dir = match args.dir.or(vault) {
            Some(d) => d,
            None => std::env::current_dir()?,
        };
        return adopt(&dir, args.name.as_deref());
    }
    let Some(dir) = args.dir else {
        anyhow::bail!(
            "name the folder to create (vaultdm init DIR), or adopt a vault you have with vaultdm init --adopt [DIR]"
        );
    };
    let n = create(&dir, args.name.as_deref())?;
    let mut out = super::stdout();
    writeln!(out, "created {} with {n} files", dir.display())?;
    writeln!(
        out,
        "next: vaultdm check --vault {0} && vaultdm context --vault {0}",
        dir.display()
    )?;
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `init --adopt`: reads the vault, prints the mapping, writes `vaultdm.toml` unless there
/// is one already. Never touches a note.
fn adopt(dir: &Path, name: Option<&str>) -> anyhow::Result<Outcome> {
    let dir = super::find_vault(Some(dir.to_path_buf()))?;
    let loaded = crate::canon::Loaded::load(&dir)?;
    super::refuse_empty_vault(&dir, &loaded)?;
    let mut mapping = crate::canon::adopt::Mapping::of(&loaded);
    if let Some(n) = name {
        mapping.name = n.to_string();
    }
    let mut out = super::stdout();
    writeln!(
        out,
        "vaultdm reads {} ({} notes) as:\n",
        dir.display(),
        loaded.vault.notes.len()
    )?;
    write!(out, "{}", mapping.summary())?;
    let path = dir.join(crate::config::CONFIG_FILE);
    if std::fs::symlink_metadata(&path).is_ok() {
        writeln!(
            out,
            "\n{} exists already: nothing was written (compare it with the mapping above).",
            path.display()
        )?;
    } else {
        let text = mapping.to_toml(&chrono::Local::now().format("%Y-%m-%d").to_string());
        // Create it new, never through a link: a file or link appearing meanwhile is kept.
        let mut f = crate::vault::boundary::open_inside(
            &path,
            std::fs::OpenOptions::new().write(true).create_new(true),
        )?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("{}: cannot write", path.display()))?;
        writeln!(
            out,
            "\nwrote {} (commented; no note was moved or edited)",
            path.display()
        )?;
    }
    writeln!(
        out,
        "next: vaultdm check --vault {0} && vaultdm context --vault {0}",
        dir.display()
    )?;
    out.flush()?;
    Ok(Outcome::Ok)
}
