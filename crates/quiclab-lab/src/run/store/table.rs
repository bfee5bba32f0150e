//! A table of nullable typed columns written as one Parquet file (the `parquet` crate's
//! column writer; no Arrow, which would add minutes of compile time for four types).
//! Every column is OPTIONAL so the schema is the same whatever a file's rows hold.

use parquet::basic::{LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::Type;
use std::sync::Arc;

/// One column's values, one per row (`None` = null).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Text(Vec<Option<String>>),
    Float(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
    /// Unsigned 64-bit (seeds), stored as INT64 with the unsigned logical type.
    UInt(Vec<Option<u64>>),
    Bool(Vec<Option<bool>>),
    /// Microseconds since the Unix epoch, UTC.
    Timestamp(Vec<Option<i64>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Int(v) | Values::Timestamp(v) => v.len(),
            Values::UInt(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    fn field(&self, name: &str) -> Result<Type, ParquetError> {
        let (physical, logical) = match self {
            Values::Text(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Values::Float(_) => (Physical::DOUBLE, None),
            Values::Int(_) => (Physical::INT64, None),
            Values::UInt(_) => (Physical::INT64, Some(LogicalType::integer(64, false))),
            Values::Bool(_) => (Physical::BOOLEAN, None),
            Values::Timestamp(_) => (
                Physical::INT64,
                Some(LogicalType::timestamp(true, TimeUnit::MICROS)),
            ),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()
    }
}

/// The present values and the definition levels (1 present, 0 null) of a column.
fn split<T: Clone, U>(v: &[Option<T>], f: impl Fn(T) -> U) -> (Vec<U>, Vec<i16>) {
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    let vals = v.iter().flatten().cloned().map(f).collect();
    (vals, defs)
}

fn write_values(col: &mut SerializedColumnWriter<'_>, v: &Values) -> Result<(), ParquetError> {
    match v {
        Values::Text(v) => {
            let (vals, defs) = split(v, |s| ByteArray::from(s.into_bytes()));
            col.typed::<ByteArrayType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::Float(v) => {
            let (vals, defs) = split(v, |x| x);
            col.typed::<DoubleType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::Int(v) | Values::Timestamp(v) => {
            let (vals, defs) = split(v, |x| x);
            col.typed::<Int64Type>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::UInt(v) => {
            // The unsigned logical type reads the INT64 bits back as u64.
            let (vals, defs) = split(v, |x| x as i64);
            col.typed::<Int64Type>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::Bool(v) => {
            let (vals, defs) = split(v, |x| x);
            col.typed::<BoolType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
    }
    Ok(())
}

/// Named columns of equal length, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Values)>,
}

impl Table {
    /// The Parquet file's bytes: one row group, dictionary-encoded, uncompressed.
    /// Errors if the columns differ in length.
    pub fn to_parquet(&self, created_by: &str) -> Result<Vec<u8>, ParquetError> {
        let rows = self.columns.first().map_or(0, |c| c.1.len());
        if let Some((name, _)) = self.columns.iter().find(|c| c.1.len() != rows) {
            return Err(ParquetError::General(format!(
                "column {name} has a different length from the first column's {rows}"
            )));
        }
        let fields = self
            .columns
            .iter()
            .map(|(name, v)| v.field(name).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Type::group_type_builder("quiclab_results")
            .with_fields(fields)
            .build()?;
        let props = WriterProperties::builder()
            .set_created_by(created_by.to_string())
            .build();
        let mut buf = Vec::new();
        let mut writer = SerializedFileWriter::new(&mut buf, Arc::new(schema), Arc::new(props))?;
        let mut group = writer.next_row_group()?;
        let mut values = self.columns.iter().map(|c| &c.1);
        while let Some(mut col) = group.next_column()? {
            let v = values
                .next()
                .ok_or_else(|| ParquetError::General("more columns than values".into()))?;
            write_values(&mut col, v)?;
            col.close()?;
        }
        group.close()?;
        writer.close()?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_of_unequal_length_are_an_error() {
        let t = Table {
            columns: vec![
                ("a".into(), Values::Int(vec![Some(1), None])),
                ("b".into(), Values::Text(vec![Some("x".into())])),
            ],
        };
        let e = t.to_parquet("test").unwrap_err().to_string();
        assert!(e.contains("column b"), "{e}");
    }

    #[test]
    fn writes_a_parquet_file() {
        let t = Table {
            columns: vec![
                ("seed".into(), Values::UInt(vec![Some(u64::MAX), None])),
                ("v".into(), Values::Float(vec![None, Some(0.5)])),
                ("ok".into(), Values::Bool(vec![Some(true), None])),
                ("at".into(), Values::Timestamp(vec![Some(1), Some(2)])),
            ],
        };
        let bytes = t.to_parquet("test").unwrap();
        assert_eq!(&bytes[..4], b"PAR1");
        assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
    }
}
