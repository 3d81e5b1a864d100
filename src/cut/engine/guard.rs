//! Catching a bug in one line's processing: [`guarded`] runs it and catches a panic, which is
//! counted ([`caught_panics`], and per engine `LineEngine::panics`) and kept quiet: a panic hook
//! notes the first one's message instead of printing each, and the tee says so once, at the
//! end of a run (`tee::stats::say_panics`). A caught panic is a bug to fix: the tests and the
//! fuzz targets fail on any.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};

/// Panics caught by every engine of the process (see [`caught_panics`]).
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// The first caught panic's message and place, for the one line that says so on stderr.
static FIRST: OnceLock<String> = OnceLock::new();

thread_local! {
    /// True while a line (or a reduction) runs under [`guarded`]: a panic then is caught, and
    /// the panic hook notes it instead of printing it.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, catching a panic (a bug) in it. The panic hook installed by the first
/// [`LineEngine::new`] stays quiet for such a panic and keeps the first one's message
/// ([`first_caught_panic`]): the count is said once, at the end of a run
/// (`tee::stats::say_panics`), not one report per line. Every caught panic is counted
/// ([`caught_panics`]).
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    let outer = GUARDED.with(|g| g.replace(true));
    let done = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    if done.is_err() {
        CAUGHT.fetch_add(1, Ordering::Relaxed);
    }
    done
}

/// Panics caught (and so logged as records) by every engine of this process so far. A test
/// harness asserts it is 0: one caught panic is a bug to fix.
pub fn caught_panics() -> u64 {
    CAUGHT.load(Ordering::Relaxed)
}

/// The message and place of the first panic caught, if any.
pub fn first_caught_panic() -> Option<&'static str> {
    FIRST.get().map(String::as_str)
}

/// Installs, once per process, a panic hook that notes a panic [`guarded`] catches instead of
/// printing it, and hands any other panic to the hook that was there before.
pub(super) fn quiet_caught_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let _ = FIRST.set(info.to_string());
            } else {
                previous(info);
            }
        }));
    });
}
