//! docs/architecture.md held to the code: its floor table (`| floor | module | imports |`)
//! must name every top-level module of `src/lib.rs` and every arrow between them (a module
//! imports another when any of its files, unit tests included, names `crate::<other>`), each
//! module one floor above the highest it imports, so that no import runs up a floor or
//! within one; and the drawing's `floor N` lines must place the modules as the table does.
//!
//! The imports are read from the source text: comments and string literals are blanked, then
//! every `crate::a`, `crate::{a, b::c}` and `super::` path that climbs to the crate root is
//! taken. When a check fails it says which row or file to change, and prints the table the
//! code draws today.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rstest::rstest;

/// module -> the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

const DOC: &str = "docs/architecture.md";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// No module imports one on its own floor or above: every arrow runs down.
#[test]
fn no_import_runs_up_a_floor() {
    let code = Code::read();
    let doc = Doc::read();
    let drawn = floors(&code.graph);
    let mut problems = Vec::new();
    for (module, targets) in &code.graph {
        let Some(&floor) = doc.floor.get(module) else {
            continue; // reported by `the_doc_draws_every_module_and_arrow`
        };
        for target in targets {
            let Some(&up) = doc.floor.get(target) else {
                continue;
            };
            if up < floor {
                continue;
            }
            let dir = if up > floor { "up" } else { "within" };
            let at = code.first_use(module, target);
            problems.push(match &drawn {
                Err(_) => format!(
                    "{at}: `{module}` (floor {floor}) imports `{target}` (floor {up}), an import \
                     {dir} a floor that closes a loop. Take it out: move what `{module}` needs \
                     of `{target}` down to `{module}` or below, or move this code up to \
                     `{target}` or above."
                ),
                Ok(floors) => format!(
                    "{at}: `{module}` (floor {floor}) imports `{target}` (floor {up}), an import \
                     {dir} a floor as {DOC} draws them. The code has no loop, so the drawing is \
                     wrong: the code puts `{module}` on floor {} and `{target}` on floor {}; \
                     redraw from the table below.",
                    floors[module], floors[target]
                ),
            });
        }
    }
    report(&code, "an import runs up a floor", problems);
}

/// The floor table names every module and every arrow, no more, and places each module one
/// floor above the highest it imports; the drawing agrees with the table.
#[test]
fn the_doc_draws_every_module_and_arrow() {
    let code = Code::read();
    let doc = Doc::read();
    let loops = floors(&code.graph).is_err();
    let mut problems = Vec::new();
    for module in code.modules.difference(&doc.modules()) {
        problems.push(format!(
            "`{module}` is a module of src/lib.rs with no row in {DOC}'s floor table: add its \
             row (the table below has it)."
        ));
    }
    for module in doc.modules().difference(&code.modules) {
        problems.push(format!(
            "{DOC}'s floor table has a row for `{module}`, which src/lib.rs does not declare: \
             remove the row."
        ));
    }
    for (module, targets) in &code.graph {
        let drawn = doc.imports.get(module).cloned().unwrap_or_default();
        if !doc.floor.contains_key(module) {
            continue;
        }
        for target in targets.difference(&drawn) {
            let at = code.first_use(module, target);
            problems.push(if loops {
                format!(
                    "{at}: `{module}` imports `{target}`, which its row in {DOC} does not list, \
                     and the import closes a loop: take it out (see \
                     `architecture::no_import_runs_up_a_floor`)."
                )
            } else {
                format!(
                    "{at}: `{module}` imports `{target}`, which its row in {DOC} does not \
                     list: add `{}` to its imports.",
                    shown(target)
                )
            });
        }
        for target in drawn.difference(targets) {
            problems.push(format!(
                "{DOC} says `{module}` imports `{target}`, but no file of `{module}` names \
                 `crate::{target}`: remove `{}` from its row.",
                shown(target)
            ));
        }
    }
    for (module, imports) in &doc.imports {
        let Some(&floor) = doc.floor.get(module) else {
            continue;
        };
        let highest = imports
            .iter()
            .filter_map(|t| doc.floor.get(t).map(|&f| (f, t)))
            .max();
        let (want, why) = match highest {
            Some((f, t)) => (f + 1, format!("its highest import, `{t}`, is on floor {f}")),
            None => (1, "it imports no module".to_owned()),
        };
        if floor > want {
            problems.push(format!(
                "{DOC} puts `{module}` on floor {floor}, but {why}: put it on floor {want}."
            ));
        }
    }
    for (module, floor) in &doc.floor {
        match doc.drawn.get(module) {
            None => problems.push(format!(
                "{DOC}'s drawing has no `floor {floor}` line naming `{module}`: add it there."
            )),
            Some(drawn) if drawn != floor => problems.push(format!(
                "{DOC}'s drawing puts `{module}` on floor {drawn}, its table on floor {floor}: \
                 move it to the drawing's `floor {floor}` line."
            )),
            Some(_) => {}
        }
    }
    for module in doc.drawn.keys().filter(|m| !doc.floor.contains_key(*m)) {
        problems.push(format!(
            "{DOC}'s drawing names `{module}`, which the floor table has no row for: remove it \
             from the drawing."
        ));
    }
    report(&code, &format!("{DOC} does not match the code"), problems);
}

/// Fails with every problem, then the table the code draws today (when it has no loop).
fn report(code: &Code, headline: &str, problems: Vec<String>) {
    if problems.is_empty() {
        return;
    }
    let mut msg = String::new();
    for p in &problems {
        let _ = writeln!(msg, "- {p}");
    }
    match floors(&code.graph) {
        Ok(floors) => {
            let _ = writeln!(
                msg,
                "\nThe floor table the code draws today (each module one floor above the \
                 highest it imports):\n\n{}",
                table(&code.graph, &floors)
            );
        }
        Err(cycle) => {
            let _ = writeln!(
                msg,
                "\nThe modules import each other in a loop, so no floors can be drawn until \
                 one of these imports goes: {}",
                cycle.join(" -> ")
            );
        }
    }
    panic!("{headline}:\n{msg}");
}

/// Each module's floor: 1 for a module that imports none, else one above its highest
/// import. `Err` with a loop of modules when there is one.
fn floors(graph: &Graph) -> Result<BTreeMap<String, usize>, Vec<String>> {
    fn visit(
        m: &str,
        graph: &Graph,
        done: &mut BTreeMap<String, usize>,
        path: &mut Vec<String>,
    ) -> Result<usize, Vec<String>> {
        if let Some(&f) = done.get(m) {
            return Ok(f);
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_owned());
            return Err(cycle);
        }
        path.push(m.to_owned());
        let mut floor = 1;
        for t in graph.get(m).into_iter().flatten() {
            floor = floor.max(visit(t, graph, done, path)? + 1);
        }
        path.pop();
        done.insert(m.to_owned(), floor);
        Ok(floor)
    }
    let mut done = BTreeMap::new();
    for m in graph.keys() {
        visit(m, graph, &mut done, &mut Vec::new())?;
    }
    Ok(done)
}

/// The floor table as docs/architecture.md writes it: top floor first, imports highest first.
fn table(graph: &Graph, floors: &BTreeMap<String, usize>) -> String {
    let mut rows: Vec<(&String, &usize)> = floors.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut out = String::from("| floor | module | imports |\n|---|---|---|\n");
    for (m, f) in rows {
        let mut imports: Vec<&String> = graph.get(m).into_iter().flatten().collect();
        imports.sort_by(|a, b| floors[*b].cmp(&floors[*a]).then(a.cmp(b)));
        let imports = if imports.is_empty() {
            "—".to_owned()
        } else {
            imports
                .iter()
                .map(|t| format!("`{}`", shown(t)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(out, "| {f} | `{}` | {imports} |", shown(m));
    }
    out
}

/// A module as the doc writes it: `vault/` for a folder with a `mod.rs`, `names.rs` for a file.
fn shown(module: &str) -> String {
    if root().join("src").join(module).join("mod.rs").is_file() {
        format!("{module}/")
    } else {
        format!("{module}.rs")
    }
}

/// The code's side: the top-level modules and who imports whom, with where.
struct Code {
    modules: BTreeSet<String>,
    graph: Graph,
    /// (module, target) -> the first `file:line` that names it.
    at: BTreeMap<(String, String), String>,
}

impl Code {
    fn read() -> Code {
        let src = root().join("src");
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
        let modules = declared_modules(&lib);
        assert!(!modules.is_empty(), "src/lib.rs declares no module");
        let mut code = Code {
            graph: modules
                .iter()
                .map(|m| (m.clone(), BTreeSet::new()))
                .collect(),
            modules,
            at: BTreeMap::new(),
        };
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(&src).expect("under src/");
            let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
            let module = parts[0].trim_end_matches(".rs");
            if !code.modules.contains(module) {
                continue; // lib.rs, main.rs (the binary: `vaultdm::cli` only)
            }
            // How many `super::` climb from this file's module to the crate root.
            let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
            let text = std::fs::read_to_string(&file).expect("a source file");
            assert!(
                balanced(&text),
                "src/{}: its brackets do not pair up once comments and strings are skipped, so \
                 tests/architecture.rs misreads it: mend `tokens` there",
                parts.join("/")
            );
            for (target, line) in crate_paths(&text, depth) {
                if target == module || !code.modules.contains(&target) {
                    continue;
                }
                code.at
                    .entry((module.to_owned(), target.clone()))
                    .or_insert_with(|| format!("src/{}:{line}", parts.join("/")));
                code.graph.get_mut(module).expect("a module").insert(target);
            }
        }
        code
    }

    fn first_use(&self, module: &str, target: &str) -> &str {
        self.at
            .get(&(module.to_owned(), target.to_owned()))
            .map_or("src/", String::as_str)
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `mod a;` and `pub mod b;` of src/lib.rs.
fn declared_modules(lib: &str) -> BTreeSet<String> {
    let tokens = tokens(lib);
    tokens
        .windows(3)
        .filter_map(|w| match w {
            [(Tok::Ident(m), _), (Tok::Ident(name), _), (Tok::Punct(';'), _)] if m == "mod" => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Every top-level item a file names from the crate root, with its line: `crate::a`,
/// `crate::{a, b::c}` (each name of the group), and `super::…` chains that climb `depth`
/// levels or more (a file `src/a/b.rs` is at depth 2, counting inline `mod x { }` blocks).
/// `$crate` (a macro's) is left out.
fn crate_paths(text: &str, depth: usize) -> Vec<(String, usize)> {
    let toks = tokens(text);
    let mut out = Vec::new();
    // Brace depths at which an inline `mod x {` was opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => {
                braces += 1;
                i += 1;
                continue;
            }
            Tok::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                i += 1;
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                if let (Some((Tok::Ident(_), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push(braces);
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let after_dollar = i > 0 && toks[i - 1].0 == Tok::Punct('$');
        let at_root = match &toks[i].0 {
            Tok::Ident(k) if k == "crate" && !after_dollar => {
                (toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep)).then_some(i + 2)
            }
            Tok::Ident(k) if k == "super" && (i == 0 || toks[i - 1].0 != Tok::PathSep) => {
                let mut j = i;
                let mut climbs = 0;
                while matches!(&toks.get(j).map(|t| &t.0), Some(Tok::Ident(s)) if s == "super")
                    && toks.get(j + 1).map(|t| &t.0) == Some(&Tok::PathSep)
                {
                    climbs += 1;
                    j += 2;
                }
                (climbs >= depth + inline.len()).then_some(j)
            }
            _ => None,
        };
        let Some(j) = at_root else {
            i += 1;
            continue;
        };
        let line = toks[i].1;
        match toks.get(j).map(|t| &t.0) {
            Some(Tok::Ident(name)) => out.push((name.clone(), line)),
            Some(Tok::Punct('{')) => {
                // A group: the first name of each item at the group's own level.
                let mut level = 0usize;
                let mut expect_name = true;
                for (t, l) in &toks[j..] {
                    match t {
                        Tok::Punct('{') => level += 1,
                        Tok::Punct('}') => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        Tok::Punct(',') if level == 1 => expect_name = true,
                        Tok::Ident(name) if level == 1 && expect_name => {
                            out.push((name.clone(), *l));
                            expect_name = false;
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        i = j;
    }
    out
}

/// Whether every `(`, `[` and `{` the tokens hold is closed in order: a check that the
/// tokenizer skipped comments, strings and character literals where the compiler does.
fn balanced(text: &str) -> bool {
    let mut open = Vec::new();
    for (t, _) in tokens(text) {
        match t {
            Tok::Punct(c @ ('(' | '[' | '{')) => open.push(c),
            Tok::Punct(c @ (')' | ']' | '}')) => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The source's identifiers and punctuation with their lines; comments, strings and
/// character literals are skipped, numbers come out as identifiers (harmless here).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let s: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips to just past `end` from `from`, counting lines; `escapes` honours `\`.
    let skip = |from: usize, end: &[char], escapes: bool, line: &mut usize| -> usize {
        let mut k = from;
        while k < s.len() {
            if s[k..].starts_with(end) {
                return k + end.len();
            }
            if s[k] == '\n' {
                *line += 1;
            }
            k += if escapes && s[k] == '\\' { 2 } else { 1 };
        }
        s.len()
    };
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut level = 0;
            while i < s.len() {
                if s[i..].starts_with(&['/', '*']) {
                    level += 1;
                    i += 2;
                } else if s[i..].starts_with(&['*', '/']) {
                    level -= 1;
                    i += 2;
                    if level == 0 {
                        break;
                    }
                } else {
                    line += usize::from(s[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip(i + 1, &['"'], true, &mut line);
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a) left out.
            if next == Some('\\') {
                i = skip(i + 1, &['\''], true, &mut line);
            } else if s.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            // Raw and byte strings: r"..", r#".."#, b"..", br#".."#, c"..".
            // (`r#type` is a raw identifier: no quote after the hashes.)
            let hashes = s[i..].iter().take_while(|&&h| h == '#').count();
            let raw = matches!(word.as_str(), "r" | "br" | "cr");
            if raw && s.get(i + hashes) == Some(&'"') {
                let mut end = vec!['"'];
                end.extend(std::iter::repeat_n('#', hashes));
                i = skip(i + hashes + 1, &end, false, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && s.get(i) == Some(&'"') {
                i = skip(i + 1, &['"'], true, &mut line);
            } else {
                out.push((Tok::Ident(word), line));
            }
        } else if c == ':' && next == Some(':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The doc's side: the floor table and the drawing's `floor N` lines.
struct Doc {
    floor: BTreeMap<String, usize>,
    imports: Graph,
    /// module -> the floor whose drawing line names it.
    drawn: BTreeMap<String, usize>,
}

impl Doc {
    fn read() -> Doc {
        let text = std::fs::read_to_string(root().join(DOC)).expect(DOC);
        Doc::parse(&text)
    }

    fn parse(text: &str) -> Doc {
        let mut doc = Doc {
            floor: BTreeMap::new(),
            imports: Graph::new(),
            drawn: BTreeMap::new(),
        };
        let mut lines = text.lines();
        lines
            .by_ref()
            .find(|l| cells(l) == ["floor", "module", "imports"])
            .unwrap_or_else(|| panic!("{DOC} has no table headed `| floor | module | imports |`"));
        for row in lines.by_ref().skip(1).take_while(|l| l.starts_with('|')) {
            let [floor, module, imports] = cells(row)[..] else {
                panic!("{DOC}: a floor table row without three cells: {row}");
            };
            let floor: usize = floor
                .parse()
                .unwrap_or_else(|_| panic!("{DOC}: `{floor}` is no floor number: {row}"));
            let module = module_name(module);
            let imports = imports
                .split(',')
                .map(module_name)
                .filter(|m| !m.is_empty() && m != "—")
                .collect();
            doc.floor.insert(module.clone(), floor);
            doc.imports.insert(module, imports);
        }
        // The drawing: `floor N   a/  b.rs   a caption`, inside a code block.
        let mut in_code = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            let mut words = line.split_whitespace();
            if !in_code {
                continue;
            }
            if words.next() != Some("floor") {
                continue;
            }
            let Some(Ok(floor)) = words.next().map(str::parse::<usize>) else {
                continue;
            };
            for word in words.take_while(|w| w.ends_with('/') || w.ends_with(".rs")) {
                doc.drawn.insert(module_name(word), floor);
            }
        }
        doc
    }

    fn modules(&self) -> BTreeSet<String> {
        self.floor.keys().cloned().collect()
    }
}

/// A table row's cells, trimmed.
fn cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    match row.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        Some(inner) => inner.split('|').map(str::trim).collect(),
        None => Vec::new(),
    }
}

/// `` `vault/` ``, `names.rs` or `canon` -> the module's name.
fn module_name(cell: &str) -> String {
    let m = cell.trim().trim_matches('`');
    let m = m.strip_suffix('/').or_else(|| m.strip_suffix(".rs"));
    m.unwrap_or(cell.trim().trim_matches('`')).to_owned()
}

#[rstest]
#[case::plain("use crate::vault::Note;", 2, &["vault"])]
#[case::group("use crate::{canon::Campaign, names, vault::{self, Note}};", 2, &["canon", "names", "vault"])]
#[case::inline_path("let x = crate::dice::roll(&y);", 3, &["dice"])]
#[case::comments("// crate::play\n/// [`crate::serve`]\n/* crate::cli /* nested */ crate::watch */", 1, &[])]
#[case::strings(r##"let a = "crate::play"; let b = r#"crate::"serve"#; let c = '"'; crate::llm::x();"##, 2, &["llm"])]
#[case::lifetimes("fn f<'a>(x: &'a str) -> crate::tokens::Count { todo!() }", 2, &["tokens"])]
#[case::comment_at_end("crate::vault::x(); // crate::play", 1, &["vault"])]
#[case::macro_crate("$crate::vault::x", 1, &[])]
#[case::super_in_module("use super::note::Note; use super::*;", 2, &[])]
#[case::super_super_in_module("use super::super::note::Note;", 3, &[])]
#[case::visibility("pub(crate) fn f() {} pub(super) mod tests {}", 2, &[])]
#[case::raw_ident("let r#type = crate::canon::Kind::Npc;", 2, &["canon"])]
#[case::super_to_root("use super::canon::Campaign;", 1, &["canon"])]
#[case::super_in_inline_mod("mod tests { use super::*; use super::super::canon; }", 1, &["canon"])]
#[case::after_inline_mod("mod a { } use super::names;", 1, &["names"])]
fn reads_crate_paths(#[case] src: &str, #[case] depth: usize, #[case] want: &[&str]) {
    let got: Vec<String> = crate_paths(src, depth)
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(got, want, "{src}");
}

#[rstest]
#[case::braces_in_strings(r#"fn f() { let a = "{"; let b = '}'; let c = r"(["; }"#, true)]
#[case::brace_in_comment("fn f() { /* } */ }", true)]
#[case::unclosed("fn f() { (", false)]
#[case::crossed("([)]", false)]
fn checks_brackets(#[case] src: &str, #[case] want: bool) {
    assert_eq!(balanced(src), want, "{src}");
}

#[test]
fn lines_are_counted_through_comments_and_strings() {
    let src = "/* a\nb */ \"x\ny\"\n// z\nuse crate::vault;";
    assert_eq!(crate_paths(src, 1), [("vault".to_owned(), 5)]);
}

#[test]
fn reads_the_table_and_the_drawing() {
    let doc = Doc::parse(
        "```\nfloor 2   canon/  check.rs   typed campaign\nfloor 1   names.rs\n```\n\n\
         | floor | module | imports |\n|---|---|---|\n| 2 | `canon/` | `names` |\n\
         | 1 | `names.rs` | — |\n\nafter\n",
    );
    assert_eq!(doc.floor["canon"], 2);
    assert_eq!(doc.imports["canon"], BTreeSet::from(["names".to_owned()]));
    assert!(doc.imports["names"].is_empty());
    assert_eq!(doc.drawn["check"], 2);
    assert_eq!(doc.drawn["names"], 1);
}

#[test]
fn a_loop_has_no_floors() {
    let graph: Graph = [("a", "b"), ("b", "a")]
        .into_iter()
        .map(|(m, t)| (m.to_owned(), BTreeSet::from([t.to_owned()])))
        .collect();
    assert_eq!(
        floors(&graph),
        Err(vec!["a".into(), "b".into(), "a".into()])
    );
}
