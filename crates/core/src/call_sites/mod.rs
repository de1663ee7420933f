//! Where in the user's code each op was called from: the call stack's return addresses taken
//! at the op (no symbol lookup there), each distinct stack interned once per thread, and each
//! address resolved once, when a table, a flame graph or a phase asks for it.
//!
//! An op's call site is the innermost frame outside Burn's crates, the standard library and
//! burn-profiled: the user's function, with `file:line` where the binary has line tables. Only
//! ops that run on the thread that called them have one (Burn 0.21's `Profiled<B>`; not a
//! fused backend's blocks, which run on a fusion thread).
//!
//! ```
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::call_sites;
//!
//! #[inline(never)]
//! fn my_layer() -> u32 {
//!     call_sites::capture()
//! }
//!
//! call_sites::set_enabled(true);
//! let stack = my_layer();
//! call_sites::set_enabled(false);
//! let site = call_sites::call_site(stack).expect("a stack was taken");
//! assert!(site.function.ends_with("my_layer"), "{site:?}");
//! ```

mod capture;
mod frames;

pub use capture::{capture, enabled, set_enabled};
pub use frames::{CallSite, call_site, phase_of, user_frames};
