//! Canon that keeps up with the story: changes typed by the GM (`/set`, `/move`, `/day`,
//! `/event`, `/resolve`) or proposed by the DM and accepted by the GM become edits of the
//! GM's own notes.
//!
//! The flow is one way, like reading: a [`Change`] (data) is resolved and checked against
//! canon and planned as byte-level edits of the notes that hold it ([`plan`], using
//! [`crate::vault::edit`], which changes only the bytes of the value), then written all or
//! nothing, atomically, with a conflict check against edits the GM made meanwhile
//! ([`apply`]), and logged with the session so it can be reviewed and reverted ([`log`]).
//! The caller reloads exactly the notes written, so the next context shows the change.
//! Why a step does not happen is typed, one enum per step, in [`error`]; each message is
//! what the GM is told.

pub mod apply;
pub(crate) mod change;
pub(crate) mod command;
pub(crate) mod error;
pub(crate) mod guide;
pub(crate) mod log;
pub mod plan;
pub(crate) mod resolve;

pub use apply::Applied;
pub use change::{Change, Field};
pub use error::{
    CommandError, ConflictReason, IoReason, OpError, PlanError, ReadError, ResolveError,
    WriteError, WriteFailed,
};
pub use log::{ChangeLog, From};
pub use plan::{Plan, Planned, Rejected};

use crate::canon::model::Campaign;
use crate::mentions::Matcher;
use std::path::Path;

/// What writing a set of changes did.
#[derive(Debug, Clone)]
pub struct Written {
    /// The plan: what was made, and what was rejected with why.
    pub plan: Plan,
    /// What was written and its number in the session's change log (`None` when nothing
    /// was valid).
    pub applied: Option<(u64, Applied)>,
}

/// Plans and writes `changes` on the vault at `root`: the valid ones all or nothing, the
/// invalid ones rejected with their reasons; records the set in `log`.
pub fn write(
    campaign: &Campaign,
    matcher: &Matcher,
    root: &Path,
    log: &mut ChangeLog,
    changes: &[Change],
    from: From,
) -> Result<Written, WriteFailed> {
    let plan = plan::plan(campaign, matcher, root, changes);
    if plan.is_empty() {
        return Ok(Written {
            plan,
            applied: None,
        });
    }
    let applied = apply::apply(root, &plan)?;
    let set = log.applied(from, applied.clone())?;
    Ok(Written {
        plan,
        applied: Some((set, applied)),
    })
}
