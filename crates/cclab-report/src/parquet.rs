//! Parquet files of a results document: `flows.parquet`, `runs.parquet` and
//! `series.parquet`, the tables of [`crate::columns`] (one row group each, Snappy
//! compressed, every column nullable: INT64, DOUBLE or UTF-8 text). polars, pandas, pyarrow,
//! DuckDB and Spark read them as they are.

use crate::columns::{self, Table, Values};
use cclab_results::ResultsDoc;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// The file name of a table in a results directory.
pub fn file_name(table: &str) -> String {
    format!("{table}.parquet")
}

/// The Parquet schema of a table.
fn schema(t: &Table) -> Result<Type, String> {
    let fields = t
        .columns
        .iter()
        .map(|c| {
            let (physical, logical) = match c.values {
                Values::Int(_) => (Physical::INT64, None),
                Values::Float(_) => (Physical::DOUBLE, None),
                Values::Text(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(&c.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Type::group_type_builder("cclab")
        .with_fields(fields)
        .build()
        .map_err(|e| e.to_string())
}

/// The non-null values of a column and its definition levels (1 present, 0 null).
fn split<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let levels = v.iter().map(|x| i16::from(x.is_some())).collect();
    (v.iter().flatten().cloned().collect(), levels)
}

/// A Parquet file written one row group at a time: tables with the same columns (the parts
/// of a document written as its runs come, [`crate::columns::table_in`]).
pub struct TableWriter<W: std::io::Write + Send> {
    w: SerializedFileWriter<W>,
    names: Vec<String>,
}

fn err(e: parquet::errors::ParquetError) -> String {
    e.to_string()
}

impl<W: std::io::Write + Send> TableWriter<W> {
    /// A file whose columns are `like`'s.
    pub fn new(out: W, like: &Table) -> Result<Self, String> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("cclab {}", cclab_results::VERSION))
            .build();
        let w = SerializedFileWriter::new(out, Arc::new(schema(like)?), Arc::new(props))
            .map_err(err)?;
        let names = like.columns.iter().map(|c| c.name.clone()).collect();
        Ok(TableWriter { w, names })
    }

    /// `t`'s rows as one row group; its columns must be the file's.
    pub fn write(&mut self, t: &Table) -> Result<(), String> {
        if !t.columns.iter().map(|c| &c.name).eq(self.names.iter()) {
            return Err("a part of the table has other columns than the file".into());
        }
        let mut rg = self.w.next_row_group().map_err(err)?;
        for c in &t.columns {
            let mut col = rg
                .next_column()
                .map_err(err)?
                .ok_or("the Parquet writer has fewer columns than the table")?;
            match &c.values {
                Values::Int(v) => {
                    let (vals, levels) = split(v);
                    col.typed::<Int64Type>()
                        .write_batch(&vals, Some(&levels), None)
                        .map_err(err)?;
                }
                Values::Float(v) => {
                    let (vals, levels) = split(v);
                    col.typed::<DoubleType>()
                        .write_batch(&vals, Some(&levels), None)
                        .map_err(err)?;
                }
                Values::Text(v) => {
                    let (vals, levels) = split(v);
                    let vals: Vec<ByteArray> = vals
                        .into_iter()
                        .map(|s| ByteArray::from(s.into_bytes()))
                        .collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&vals, Some(&levels), None)
                        .map_err(err)?;
                }
            }
            col.close().map_err(err)?;
        }
        rg.close().map_err(err)?;
        Ok(())
    }

    /// Write the file's footer.
    pub fn close(self) -> Result<(), String> {
        self.w.close().map(|_| ()).map_err(err)
    }
}

/// A table as the bytes of a Parquet file (one row group).
pub fn encode(t: &Table) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut w = TableWriter::new(&mut out, t)?;
    w.write(t)?;
    w.close()?;
    Ok(out)
}

/// Every table of a document as (file name, Parquet bytes), in [`columns::TABLES`] order.
pub fn files(doc: &ResultsDoc) -> Result<Vec<(String, Vec<u8>)>, String> {
    columns::TABLES
        .iter()
        .map(|name| {
            let t = columns::table(doc, name).expect("a known table");
            Ok((file_name(name), encode(&t)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::Column;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    #[test]
    fn a_table_reads_back_with_its_names_types_and_nulls() {
        let t = Table {
            columns: vec![
                Column {
                    name: "run".into(),
                    values: Values::Int(vec![Some(1), Some(2)]),
                },
                Column {
                    name: "flows.cc".into(),
                    values: Values::Text(vec![Some("bbr".into()), None]),
                },
                Column {
                    name: "fct_s".into(),
                    values: Values::Float(vec![None, Some(1.5)]),
                },
            ],
        };
        let bytes = encode(&t).unwrap();
        let r = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        assert_eq!(r.metadata().file_metadata().num_rows(), 2);
        let rows: Vec<Vec<(String, Field)>> = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| {
                row.unwrap()
                    .get_column_iter()
                    .map(|(n, f)| (n.clone(), f.clone()))
                    .collect()
            })
            .collect();
        assert_eq!(
            rows[0],
            vec![
                ("run".to_string(), Field::Long(1)),
                ("flows.cc".to_string(), Field::Str("bbr".into())),
                ("fct_s".to_string(), Field::Null),
            ]
        );
        assert_eq!(rows[1][1].1, Field::Null);
        assert_eq!(rows[1][2].1, Field::Double(1.5));
    }
}
