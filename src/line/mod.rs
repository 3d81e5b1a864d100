//! Reading a line: where strings end (`strings`, SIMD), strict validation and the flat index of
//! a line's values (`scan`, `index`), which strings are payloads (`payload`), which fields give
//! way first (`fields`) and how a cut is marked (`marker`).
//!
//! This phase knows nothing of files, the tee or the cut: it may use only `error` and `early`.

pub mod agents;
pub mod fields;
pub mod index;
pub mod marker;
pub mod payload;
pub mod scan;
pub mod strings;
