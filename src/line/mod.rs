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

/// Where `part` lies in `whole` (its start and end), when it is a slice of it: a line handed
/// over by the splitter is one of its chunk, unless it was gathered across chunks.
pub fn offsets(whole: &[u8], part: &[u8]) -> Option<(usize, usize)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some((start, end))
}

/// Where `line` is in `chunk` when it is one of its lines: between two of its newlines, or its
/// start and a newline (a line gathered across chunks, or a part of one, is not).
pub fn whole_line_in(chunk: &[u8], line: &[u8]) -> Option<(usize, usize)> {
    let (start, end) = offsets(chunk, line)?;
    let starts = start == 0 || chunk[start - 1] == b'\n';
    (starts && chunk.get(end) == Some(&b'\n')).then_some((start, end))
}

/// Whether `line` is only JSON whitespace (a blank line, logged as none).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}
