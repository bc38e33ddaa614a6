#[test]
fn dump() {
    let p = std::env::var("V").unwrap();
    let l = vaultdm::canon::Loaded::load(std::path::Path::new(&p)).unwrap();
    println!("{}", serde_json::to_string_pretty(&l.built.campaign).unwrap());
    for d in l.diagnostics() { println!("{d}"); }
    for n in &l.vault.notes { println!("{} links={:?} fields={:?} tags={:?}", n.path, n.links.iter().map(|l| (&l.target, l.line, l.embed)).collect::<Vec<_>>(), n.body.fields, n.tags); }
}
