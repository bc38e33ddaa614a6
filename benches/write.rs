//! Write-back on the generated 10,000-note vault (issue 10: validating and applying a change
//! set of 5 changes in at most 5 ms, visible in the next context without a full reload).
//!
//! `five_changes` plans and writes 5 changes (two PCs' HP and gold, an NPC moved, the clock,
//! a timeline event) through `write::write`: resolve the names, read the notes, edit the
//! values, write each note atomically (temp file, fsync, rename, fsync the folder).
//! `five_changes_then_reload` adds `Live::apply` on exactly the notes written, after which the
//! canon (and so the next context) shows them.
//! Run with `cargo bench --bench write -- --warm-up-time 1 --measurement-time 5`.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use vaultdm_gen as gen;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::{Duration, Instant};
use vaultdm::watch::Live;
use vaultdm::write::{self, Change, ChangeLog, From};

fn changes(live: &Live, n: u64) -> Vec<Change> {
    let c = live.campaign();
    let (a, b) = (&c.pcs[0].name, &c.pcs[1].name);
    let npc = &c.npcs[(n % 50) as usize].name;
    let place = &c.locations[(n % 40) as usize].name;
    vec![
        Change::Set {
            entity: a.clone(),
            field: "hp".into(),
            value: (1 + n % 40).into(),
        },
        Change::Set {
            entity: b.clone(),
            field: "gold".into(),
            value: (n % 500).into(),
        },
        Change::Move {
            entity: npc.clone(),
            to: place.clone(),
        },
        Change::Time {
            advance: None,
            day: Some(200 + (n % 7) as i64),
            time: Some("dusk".into()),
        },
        Change::Event {
            text: format!("Bench event {n}."),
            day: None,
        },
    ]
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("vault");
    gen::generate(&root, 10_000, 42).expect("generate the bench vault");
    let mut live = Live::load(&root).expect("load");
    let mut log = ChangeLog::empty(&root, "bench");
    let mut g = c.benchmark_group("write");
    g.sample_size(30);
    let mut n = 0u64;
    g.bench_function("five_changes", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let cs = changes(&live, n);
                let t = Instant::now();
                let w = write::write(
                    live.campaign(),
                    live.engine().matcher(),
                    &root,
                    &mut log,
                    &cs,
                    From::Gm,
                )
                .expect("written");
                total += t.elapsed();
                assert!(w.plan.rejected.is_empty(), "{:?}", w.plan.rejected);
                let paths = w.applied.expect("applied").1.paths(&root);
                live.apply(&paths);
            }
            total
        });
    });
    g.bench_function("plan_only", |b| {
        b.iter(|| {
            n += 1;
            let cs = changes(&live, n);
            let p = write::plan::plan(live.campaign(), live.engine().matcher(), &root, &cs);
            assert!(p.rejected.is_empty());
            p
        });
    });
    g.bench_function("five_changes_then_reload", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let cs = changes(&live, n);
                let t = Instant::now();
                let w = write::write(
                    live.campaign(),
                    live.engine().matcher(),
                    &root,
                    &mut log,
                    &cs,
                    From::Gm,
                )
                .expect("written");
                let paths = w.applied.expect("applied").1.paths(&root);
                let r = live.apply(&paths);
                total += t.elapsed();
                assert!(!r.changes.is_empty(), "{r}");
                assert_eq!(live.campaign().pcs[0].hp_current, Some(1 + (n % 40) as i64));
            }
            total
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
