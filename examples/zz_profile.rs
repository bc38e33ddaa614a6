//! Temporary profiling driver (removed after profiling).
use std::time::Instant;
use vaultdm::canon::Loaded;
use vaultdm::context::{Engine, Matcher, ModeChoice, Options, Templates};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let loaded = Loaded::load(std::path::Path::new(&a[1])).unwrap();
    let c = loaded.built.campaign.clone();
    let n: usize = a[3].parse().unwrap();
    let engine = Engine::new(c.clone(), Templates::load(None).unwrap());
    vaultdm::tokens::count("warm");
    let msg = format!("I slip {}'s letter to the Copper Crown and ask about {}.", c.npcs[1333].name, c.locations[400].name);
    let o = match a[2].as_str() {
        "light" => Options { message: Some(msg), mode: ModeChoice::Light, ..Options::default() },
        "plain" => Options { message: Some("I order a drink.".into()), mode: ModeChoice::Light, ..Options::default() },
        "full" => Options { mode: ModeChoice::Full, ..Options::default() },
        "budget" => Options { mode: ModeChoice::Full, budget: Some(1500), ..Options::default() },
        _ => Options::default(),
    };
    let t = Instant::now();
    for _ in 0..n {
        if a[2] == "matcher" { std::hint::black_box(Matcher::new(&c)); } else { std::hint::black_box(engine.build(&o).unwrap()); }
    }
    eprintln!("{} x{n}: {:?} each", a[2], t.elapsed() / n as u32);
}
