//! The current frame and the focus board, read as the focus commands (`focus`, `align`,
//! `decide`) need them: the roster's warnings shown once, targets checked against the frame.

use super::context::Context;
use super::error::CliError;
use git_mas::attention::board::Board;
use git_mas::attention::focus_store;
use git_mas::attention::frame::{self, Frame};

/// The current frame (when one was published) and the board now.
pub fn frame_and_board(ctx: &Context) -> Result<(Option<Frame>, Board), CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let frame = frame::current_frame(store)?;
    let board = focus_store::load_board(
        store,
        &roster,
        focus_store::now_secs(),
        frame.as_ref(),
        &git_mas::devrun::ledger::Ledger::new(store),
    )?;
    ctx.warn_all(&roster.warnings);
    Ok((frame, board))
}
