//! Little-endian reading and writing over byte slices.
//!
//! STANDARD.md: *General Conventions* (little-endian integers).
//!
//! [`Reader`] never panics: every read past the end returns `None` and leaves
//! the reader where it was. [`Writer`] is only used on buffers whose size the
//! caller has already checked, but it reports running out of room the same way.

/// A cursor that reads little-endian values from a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// How many bytes have been read so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// How many bytes are left to read.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// Reads the next `n` bytes as a slice.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.position.checked_add(n)?;
        let slice = self.bytes.get(self.position..end)?;
        self.position = end;
        Some(slice)
    }

    /// Reads the next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let slice = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Some(out)
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|b| b[0])
    }

    /// Reads a little-endian `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// Reads a little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// Reads a little-endian `i32` (two's complement).
    pub fn i32(&mut self) -> Option<i32> {
        self.array().map(i32::from_le_bytes)
    }

    /// Reads a little-endian `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
}

/// A cursor that writes little-endian values into a byte slice.
#[derive(Debug)]
pub struct Writer<'a> {
    bytes: &'a mut [u8],
    position: usize,
}

impl<'a> Writer<'a> {
    /// Starts writing at the beginning of `bytes`.
    pub fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// How many bytes have been written so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Writes `data`, or returns `None` (writing nothing) when it does not fit.
    pub fn bytes(&mut self, data: &[u8]) -> Option<()> {
        let end = self.position.checked_add(data.len())?;
        self.bytes
            .get_mut(self.position..end)?
            .copy_from_slice(data);
        self.position = end;
        Some(())
    }

    /// Writes one byte.
    pub fn u8(&mut self, value: u8) -> Option<()> {
        self.bytes(&[value])
    }

    /// Writes a little-endian `u16`.
    pub fn u16(&mut self, value: u16) -> Option<()> {
        self.bytes(&value.to_le_bytes())
    }

    /// Writes a little-endian `u32`.
    pub fn u32(&mut self, value: u32) -> Option<()> {
        self.bytes(&value.to_le_bytes())
    }

    /// Writes a little-endian `i32` (two's complement).
    pub fn i32(&mut self, value: i32) -> Option<()> {
        self.bytes(&value.to_le_bytes())
    }

    /// Writes a little-endian `u64`.
    pub fn u64(&mut self, value: u64) -> Option<()> {
        self.bytes(&value.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_stops_at_the_end() {
        let data = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09];
        let mut r = Reader::new(&data);
        assert_eq!(r.u8(), Some(0x01));
        assert_eq!(r.u16(), Some(0x0302));
        assert_eq!(r.u32(), Some(0x0706_0504));
        assert_eq!(r.u64(), None, "a short read must fail");
        assert_eq!(r.position(), 7, "a failed read must not move the cursor");
        assert_eq!(r.remaining(), 2);
        assert_eq!(r.bytes(2), Some(&data[7..]));
        assert_eq!(r.u8(), None);
    }

    #[test]
    fn writes_little_endian_and_refuses_overflow() {
        let mut buf = [0u8; 7];
        let mut w = Writer::new(&mut buf);
        w.u16(0x0201).unwrap();
        w.i32(-2).unwrap();
        assert_eq!(w.u16(7), None);
        assert_eq!(w.position(), 6);
        w.u8(9).unwrap();
        assert_eq!(buf, [0x01, 0x02, 0xfe, 0xff, 0xff, 0xff, 9]);
    }
}
