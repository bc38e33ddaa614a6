//! Which changed paths a reload never needs to see.
//!
//! Editors and sync tools write a lot besides the note itself: vim writes `4913` to test the
//! folder, renames the old file to `note.md~` and keeps `.note.md.swp`; emacs writes
//! `.#note.md` locks and `#note.md#` autosaves; JetBrains writes `___jb_tmp___` files;
//! Obsidian keeps its settings in `.obsidian/` and deleted notes in `.trash/`. None of that
//! is canon, and waking the reloader for it would only cost time.
//!
//! The rule itself lives in [`crate::vault::scope`], shared with the walk and the poller so
//! they cannot disagree on what is a note; this module names it for the watcher.

pub use crate::vault::scope::{is_noise, is_skipped_folder, is_temp_name};
