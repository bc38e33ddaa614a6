//! Rendering: the selected canon goes through minijinja templates (built-in defaults, or
//! a vault's overrides) so a GM can change wording or play in another language.

use crate::vault::boundary;
use minijinja::{Environment, Value};
use std::path::{Path, PathBuf};

/// Largest template file read.
pub(crate) const MAX_TEMPLATE_BYTES: u64 = 1024 * 1024;

/// A template that could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// A template file could not be read.
    #[error("{path}: could not read template: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A template has a syntax error or failed to render.
    #[error("{name}{}: template error: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Template {
        /// Template file (path for overrides).
        name: String,
        /// Line in the template.
        line: Option<usize>,
        /// What went wrong.
        message: String,
    },
}

fn from_mj(e: minijinja::Error, origin: &dyn Fn(&str) -> String) -> TemplateError {
    let name = e.name().map(origin).unwrap_or_else(|| "template".into());
    TemplateError::Template {
        name,
        line: e.line(),
        message: e
            .detail()
            .map(str::to_string)
            .unwrap_or_else(|| e.kind().to_string()),
    }
}

/// The loaded templates.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    overrides: Option<PathBuf>,
    fingerprint: u64,
}

impl Templates {
    /// Built-in templates, each replaced by a template of the same name found in
    /// `override_dir`. A broken override is an error; the default is not silently used.
    pub fn load(override_dir: Option<&Path>) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
        let mut sources: Vec<(&'static str, String)> = vec![
            ("full.j2", include_str!("templates/full.j2").to_string()),
            ("light.j2", include_str!("templates/light.j2").to_string()),
            ("card.j2", include_str!("templates/card.j2").to_string()),
            ("also.j2", include_str!("templates/also.j2").to_string()),
            (
                "secrets.j2",
                include_str!("templates/secrets.j2").to_string(),
            ),
            ("system.j2", include_str!("templates/system.j2").to_string()),
        ];
        if let Some(dir) = override_dir {
            for (name, src) in sources.iter_mut() {
                // A template is read only from inside its folder (no link leads it elsewhere)
                // and only up to a size no real template reaches.
                match boundary::read_text_inside(dir, Path::new(name), MAX_TEMPLATE_BYTES) {
                    Ok(t) => *src = t,
                    Err(e) if e.is_not_found() => {}
                    Err(e) => {
                        return Err(TemplateError::Read {
                            path: dir.join(*name),
                            source: std::io::Error::other(e.to_string()),
                        })
                    }
                }
            }
        }
        let origin = |n: &str| match override_dir {
            Some(d) if d.join(n).is_file() => d.join(n).display().to_string(),
            _ => format!("built-in {n}"),
        };
        let fingerprint = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            sources.hash(&mut h);
            h.finish()
        };
        for (name, src) in sources {
            env.add_template_owned(name, src)
                .map_err(|e| from_mj(e, &origin))?;
        }
        Ok(Templates {
            env,
            overrides: override_dir.map(Path::to_path_buf),
            fingerprint,
        })
    }

    /// A hash of every template's text: equal fingerprints render alike (so a reload can
    /// tell whether the templates really changed).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Renders a template with a context value and tidies blank lines.
    pub fn render(&self, name: &str, ctx: Value) -> Result<String, TemplateError> {
        let origin = |n: &str| match &self.overrides {
            Some(d) if d.join(n).is_file() => d.join(n).display().to_string(),
            _ => format!("built-in {n}"),
        };
        let t = self
            .env
            .get_template(name)
            .map_err(|e| from_mj(e, &origin))?;
        let out = t.render(ctx).map_err(|e| from_mj(e, &origin))?;
        Ok(tidy(&out))
    }
}

/// Trims trailing spaces, drops blank lines between list items and collapses runs of
/// blank lines, so templates can be written for readability.
pub(crate) fn tidy(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if l.is_empty() {
            let prev = out.last().copied().unwrap_or("");
            let next = lines[i + 1..]
                .iter()
                .find(|l| !l.is_empty())
                .copied()
                .unwrap_or("");
            if prev.is_empty()
                || next.is_empty()
                || (prev.starts_with("- ") && next.starts_with("- "))
            {
                continue;
            }
        }
        if l.starts_with('#') && out.last().is_some_and(|p| !p.is_empty()) {
            out.push("");
        }
        out.push(l);
    }
    if out.iter().all(|l| l.is_empty()) {
        return String::new();
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}
