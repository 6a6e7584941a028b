//! granit-parser's events of one text, in order. A long text is parsed on a thread of its own,
//! a few batches of events ahead of the tree being built from them: the two take about as
//! long, and a golden of a thousand conversations would otherwise leave the other cores idle.

use granit_parser::{Event, Options, Parser, ScanError, Span, StrInput};

use super::super::ParseError;

/// Below this many bytes a text is parsed on the builder's own thread: starting another costs
/// more than it saves.
const PARSED_AHEAD_FROM: usize = 64 * 1024;
/// Events handed over at once.
const BATCH: usize = 512;
/// Batches the parser may be ahead of the builder.
const BATCHES_AHEAD: usize = 4;

/// One event of the parser, or the error that ends the text.
pub(super) type Item<'t> = Result<(Event<'t>, Span), ScanError>;

/// Hands each event of `text` to `take` in order, until `take` returns `Ok(true)` (the
/// builder needs no more) or an error, or the parser's error has been handed over.
pub(super) fn each<'t>(
    text: &'t str,
    options: Options,
    mut take: impl FnMut(Item<'t>) -> Result<bool, ParseError>,
) -> Result<(), ParseError> {
    let parser = Parser::with_options(StrInput::new(text), options);
    if text.len() < PARSED_AHEAD_FROM {
        for item in parser {
            if take(item)? {
                break;
            }
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<Item<'t>>>(BATCHES_AHEAD);
        scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            for item in parser {
                let failed = item.is_err();
                batch.push(item);
                if batch.len() == BATCH || failed {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    // Sending fails once the builder has stopped: nothing more is read.
                    if batches.send(full).is_err() || failed {
                        return;
                    }
                }
            }
            let _ = batches.send(batch);
        });
        // Returning drops the receiver, which ends the parser's thread at its next batch.
        for batch in received {
            for item in batch {
                if take(item)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}
