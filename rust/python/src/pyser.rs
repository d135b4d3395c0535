//! A serde `Serializer` whose output is Python objects: the core's documents (a whole context,
//! a message) become dicts and lists directly, without a `serde_json::Value` in between.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// Serializes into objects of the interpreter `py` holds.
#[derive(Clone, Copy)]
pub struct PySer<'py>(pub Python<'py>);

/// A Python exception, carried through serde.
#[derive(Debug)]
pub struct SerError(pub PyErr);

impl fmt::Display for SerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SerError {}

impl ser::Error for SerError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerError(crate::errors::to_py(ctxfold_core::Error::bad_argument(
            msg.to_string(),
        )))
    }
}

impl From<PyErr> for SerError {
    fn from(e: PyErr) -> Self {
        SerError(e)
    }
}

/// `value` as a Python object.
pub fn to_object<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(PySer(py)).map_err(|e| e.0)
}

type Out<'py> = Result<Bound<'py, PyAny>, SerError>;

impl<'py> ser::Serializer for PySer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    type SerializeSeq = ListOut<'py>;
    type SerializeTuple = ListOut<'py>;
    type SerializeTupleStruct = ListOut<'py>;
    type SerializeTupleVariant = Impossible<Self::Ok, SerError>;
    type SerializeMap = DictOut<'py>;
    type SerializeStruct = DictOut<'py>;
    type SerializeStructVariant = Impossible<Self::Ok, SerError>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        Ok(PyBool::new(self.0, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        Ok(pyo3::types::PyInt::new(self.0, v).into_any())
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        Ok(pyo3::types::PyInt::new(self.0, v).into_any())
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        Ok(PyFloat::new(self.0, v).into_any())
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(PyString::new(self.0, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        Ok(pyo3::types::PyBytes::new(self.0, v).into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        Ok(self.0.None().into_bound(self.0))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Out<'py> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Out<'py> {
        Err(ser::Error::custom(format!(
            "{name}::{variant} has no JSON form"
        )))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListOut<'py>, SerError> {
        Ok(ListOut {
            py: self.0,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<ListOut<'py>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<ListOut<'py>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        Err(ser::Error::custom(format!(
            "{name}::{variant} has no JSON form"
        )))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<DictOut<'py>, SerError> {
        Ok(DictOut {
            dict: PyDict::new(self.0),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<DictOut<'py>, SerError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        Err(ser::Error::custom(format!(
            "{name}::{variant} has no JSON form"
        )))
    }
}

pub struct ListOut<'py> {
    py: Python<'py>,
    items: Vec<Bound<'py, PyAny>>,
}

impl<'py> ListOut<'py> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.items.push(value.serialize(PySer(self.py))?);
        Ok(())
    }
    fn finish(self) -> Out<'py> {
        Ok(PyList::new(self.py, self.items)?.into_any())
    }
}

/// serde has three sequence traits with the same meaning here.
macro_rules! list_out {
    ($($trait_:ident :: $method:ident),*) => {$(
        impl<'py> ser::$trait_ for ListOut<'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = SerError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
                self.push(value)
            }
            fn end(self) -> Out<'py> {
                self.finish()
            }
        }
    )*};
}

list_out!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

pub struct DictOut<'py> {
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
}

impl<'py> ser::SerializeMap for DictOut<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        self.key = Some(key.serialize(PySer(self.dict.py()))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| <SerError as ser::Error>::custom("a map value without its key"))?;
        let value = value.serialize(PySer(self.dict.py()))?;
        self.dict.set_item(key, value)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        Ok(self.dict.into_any())
    }
}

impl<'py> ser::SerializeStruct for DictOut<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        let value = value.serialize(PySer(self.dict.py()))?;
        self.dict.set_item(key, value)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        Ok(self.dict.into_any())
    }
}
