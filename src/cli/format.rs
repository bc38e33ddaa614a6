//! `--format`: the one output-format choice of the commands that print for a person or for
//! a program (`check`, `context`, `prompt`, `ask`, `watch`). The values and their parsing
//! (and so every error clap prints for a bad value) are the same everywhere; what each
//! value prints differs by command, so each command describes them for its own `--help`
//! through [`Format::described`].

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::ValueEnum;

/// Output format.
#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub(crate) enum Format {
    /// Text for a person.
    Text,
    /// JSON for a program.
    Json,
}

impl Format {
    /// The `--format` parser of a command whose `text` and `json` print what these say (one
    /// line each, shown under `--help`).
    pub(crate) const fn described(text: &'static str, json: &'static str) -> Described {
        Described { text, json }
    }
}

/// Parses `--format` as [`Format`] does, with the command's own description of each value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Described {
    text: &'static str,
    json: &'static str,
}

impl TypedValueParser for Described {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        EnumValueParser::<Format>::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Format::value_variants().iter().filter_map(
            move |f| {
                let help = match f {
                    Format::Text => self.text,
                    Format::Json => self.json,
                };
                f.to_possible_value().map(|v| v.help(help))
            },
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cmd {
        #[arg(long, default_value = "text", value_parser = Format::described("for a person", "for a program"))]
        format: Format,
    }

    #[test]
    fn each_command_describes_the_shared_values() {
        let shown: Vec<(String, String)> = Format::described("a", "b")
            .possible_values()
            .into_iter()
            .flatten()
            .map(|v| {
                let help = v.get_help().map(ToString::to_string).unwrap_or_default();
                (v.get_name().to_string(), help)
            })
            .collect();
        assert_eq!(
            shown,
            [("text".into(), "a".into()), ("json".into(), "b".into())]
        );
    }

    #[test]
    fn it_parses_as_the_enum_does() {
        let parse = |a: &[&str]| Cmd::try_parse_from([&["cmd"], a].concat()).map(|c| c.format);
        assert_eq!(parse(&[]).ok(), Some(Format::Text));
        assert_eq!(parse(&["--format", "json"]).ok(), Some(Format::Json));
        let e = parse(&["--format", "xml"]).err().map(|e| e.kind());
        assert_eq!(e, Some(clap::error::ErrorKind::InvalidValue));
    }
}
