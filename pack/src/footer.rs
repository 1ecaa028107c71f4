//! Float statistics every Parquet reader uses.
//!
//! The parquet crate declares the column order of float columns as
//! `IEEE_754_TOTAL_ORDER` (parquet-format 2.11), which readers that predate it
//! (pyarrow and polars among them) take for an unknown order: they drop the
//! columns' min and max and cannot prune on `difficulty`, the column the tier
//! files are sorted by. [`type_defined_float_orders`] rewrites those entries
//! of a file's footer to `TYPE_DEFINED_ORDER`, which every reader knows and
//! which means the same for the values a pack holds (finite, never NaN).
//!
//! The footer is Thrift's compact protocol. Each `ColumnOrder` is a union of
//! empty structs: field 1 (`TYPE_DEFINED_ORDER`) or field 2
//! (`IEEE_754_TOTAL_ORDER`), encoded as `1C 00 00` or `2C 00 00`; the patch
//! changes one byte per float column and the footer's length not at all.

/// Compact protocol types.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// `FileMetaData.column_orders`.
const COLUMN_ORDERS: i16 = 7;
/// A `ColumnOrder` of `IEEE_754_TOTAL_ORDER`, and the same of `TYPE_DEFINED_ORDER`.
const TOTAL_ORDER: [u8; 3] = [0x2C, 0x00, 0x00];
const TYPE_DEFINED: [u8; 3] = [0x1C, 0x00, 0x00];

/// Rewrites the float columns' `IEEE_754_TOTAL_ORDER` to `TYPE_DEFINED_ORDER`
/// in a serialized `FileMetaData`; returns how many were rewritten, or `None`
/// (nothing changed) when the bytes are not the footer this module expects.
pub fn type_defined_float_orders(metadata: &mut [u8]) -> Option<usize> {
    let mut r = Reader {
        bytes: metadata,
        at: 0,
    };
    let mut positions = Vec::new();
    let mut field = 0i16;
    loop {
        let (id, kind) = r.field_header(&mut field)?;
        if kind == 0 {
            break;
        }
        if id == COLUMN_ORDERS && kind == LIST {
            let (count, element) = r.list_header()?;
            if element != STRUCT {
                return None;
            }
            for _ in 0..count {
                let at = r.at;
                if r.bytes.get(at..at + 3)? == TOTAL_ORDER {
                    positions.push(at);
                }
                r.skip(STRUCT, 0)?;
            }
        } else {
            r.skip(kind, 0)?;
        }
    }
    // Only a whole footer, read to its last byte, is changed.
    if r.at != r.bytes.len() {
        return None;
    }
    for &at in &positions {
        metadata[at..at + 3].copy_from_slice(&TYPE_DEFINED);
    }
    Some(positions.len())
}

/// A cursor over compact-protocol bytes; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn advance(&mut self, n: usize) -> Option<()> {
        let end = self.at.checked_add(n)?;
        (end <= self.bytes.len()).then(|| self.at = end)
    }

    /// A field's id and type (type 0: the struct's end).
    fn field_header(&mut self, last: &mut i16) -> Option<(i16, u8)> {
        let b = self.byte()?;
        let kind = b & 0x0F;
        if kind == 0 {
            return Some((0, 0));
        }
        let delta = b >> 4;
        *last = if delta == 0 {
            let v = self.varint()?;
            i16::try_from((v >> 1) as i64 ^ -((v & 1) as i64)).ok()?
        } else {
            last.checked_add(i16::from(delta))?
        };
        Some((*last, kind))
    }

    /// A list's (or set's) length and element type.
    fn list_header(&mut self) -> Option<(usize, u8)> {
        let b = self.byte()?;
        let count = match b >> 4 {
            15 => usize::try_from(self.varint()?).ok()?,
            n => usize::from(n),
        };
        Some((count, b & 0x0F))
    }

    /// Skips one value of `kind`; `depth` bounds nesting against hostile input.
    fn skip(&mut self, kind: u8, depth: u32) -> Option<()> {
        if depth > 64 {
            return None;
        }
        match kind {
            // In a struct a bool is its field header; in a list, one byte.
            BOOL_TRUE | BOOL_FALSE => Some(()),
            BYTE => self.advance(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.advance(8),
            BINARY => {
                let n = usize::try_from(self.varint()?).ok()?;
                self.advance(n)
            }
            LIST | SET => {
                let (count, element) = self.list_header()?;
                for _ in 0..count {
                    if matches!(element, BOOL_TRUE | BOOL_FALSE) {
                        self.advance(1)?;
                    } else {
                        self.skip(element, depth + 1)?;
                    }
                }
                Some(())
            }
            MAP => {
                let count = usize::try_from(self.varint()?).ok()?;
                if count == 0 {
                    return Some(());
                }
                let types = self.byte()?;
                for _ in 0..count {
                    self.skip(types >> 4, depth + 1)?;
                    self.skip(types & 0x0F, depth + 1)?;
                }
                Some(())
            }
            STRUCT => {
                let mut field = 0i16;
                loop {
                    let (_, kind) = self.field_header(&mut field)?;
                    if kind == 0 {
                        return Some(());
                    }
                    self.skip(kind, depth + 1)?;
                }
            }
            _ => None,
        }
    }
}

/// The length of a Parquet file's `FileMetaData` from its last 8 bytes
/// (length, `PAR1`), if `tail` ends a Parquet file.
pub fn metadata_len(tail: &[u8]) -> Option<usize> {
    let end = tail.len().checked_sub(8)?;
    if &tail[end + 4..] != b"PAR1" {
        return None;
    }
    let len = u32::from_le_bytes(tail[end..end + 4].try_into().ok()?);
    usize::try_from(len).ok().filter(|&n| n <= end)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, RecordBatch, UInt64Array};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::ColumnOrder;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    fn file() -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("seed", DataType::UInt64, false),
            Field::new("difficulty", DataType::Float64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(UInt64Array::from(vec![3, 1, 2])),
                Arc::new(Float64Array::from(vec![2.5, 0.5, 1.5])),
            ],
        )
        .expect("batch");
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, schema, None).expect("writer");
        writer.write(&batch).expect("write");
        writer.close().expect("close");
        out
    }

    #[test]
    fn float_columns_get_the_type_defined_order_and_keep_their_statistics() {
        let mut bytes = file();
        let len = metadata_len(&bytes).expect("a parquet file");
        let end = bytes.len() - 8;
        assert_eq!(
            type_defined_float_orders(&mut bytes[end - len..end]),
            Some(1)
        );
        let mut file = tempfile::tempfile().expect("tempfile");
        std::io::Write::write_all(&mut file, &bytes).expect("write");
        let reader = SerializedFileReader::new(file).expect("still a parquet file");
        let orders = reader
            .metadata()
            .file_metadata()
            .column_orders()
            .expect("orders");
        assert!(
            orders
                .iter()
                .all(|o| matches!(o, ColumnOrder::TYPE_DEFINED_ORDER(_))),
            "{orders:?}"
        );
        let stats = reader
            .metadata()
            .row_group(0)
            .column(1)
            .statistics()
            .expect("stats");
        assert_eq!(stats.min_bytes_opt(), Some(&0.5f64.to_le_bytes()[..]));
        assert_eq!(stats.max_bytes_opt(), Some(&2.5f64.to_le_bytes()[..]));
    }

    #[test]
    fn bytes_that_are_not_a_footer_are_left_alone() {
        let bytes = file();
        let len = metadata_len(&bytes).expect("a parquet file");
        let end = bytes.len() - 8;
        for cut in [0, 1, 7, len / 2, len - 1] {
            let mut footer = bytes[end - len..end - len + cut].to_vec();
            let before = footer.clone();
            assert_eq!(type_defined_float_orders(&mut footer), None, "cut at {cut}");
            assert_eq!(footer, before);
        }
        assert_eq!(metadata_len(b"not parquet at all"), None);
        let mut junk = vec![0xFFu8; 64];
        assert_eq!(type_defined_float_orders(&mut junk), None);
    }
}
