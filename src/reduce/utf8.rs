//! UTF-8 across piece boundaries: a character cut by the end of one piece is carried to the
//! next and checked whole.

use super::*;

impl Reducer {
    /// Checks the UTF-8 of `piece`, carrying an unfinished character over to the next piece.
    pub(super) fn utf8(&mut self, mut piece: &[u8]) -> bool {
        if !self.utf8_carry.is_empty() {
            let width = match self.utf8_carry[0] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let take = (width - self.utf8_carry.len()).min(piece.len());
            self.utf8_carry.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.utf8_carry.len() < width {
                return true;
            }
            if std::str::from_utf8(&self.utf8_carry).is_err() {
                return false;
            }
            self.utf8_carry.clear();
        }
        match simdutf8::compat::from_utf8(piece) {
            Ok(_) => true,
            Err(e) if e.error_len().is_none() => {
                self.utf8_carry.extend_from_slice(&piece[e.valid_up_to()..]);
                true
            }
            Err(_) => false,
        }
    }
}
