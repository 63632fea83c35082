//! What the integration tests share: the binary, the fixtures, files, processes.
//! Each test binary compiles this module whole and uses a part of it, so the
//! parts another binary uses are not dead code.
#![allow(dead_code)]

pub mod binary;
pub mod files;
pub mod processes;
