//! Serde for a shared slice (`Arc<[T]>`) without serde's `rc` feature (which
//! would rebuild every crate using serde): written as a sequence, read into a new
//! allocation. For `#[serde(with = "crate::shared_slice")]`.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub fn serialize<T: Serialize, S: Serializer>(
    value: &Arc<[T]>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    value.as_ref().serialize(serializer)
}

pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Arc<[T]>, D::Error> {
    Vec::<T>::deserialize(deserializer).map(Arc::from)
}
