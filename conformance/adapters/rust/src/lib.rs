//! Clean-room implementation of the reasoning-replay records specification (SPEC.md), one module
//! per concept. The adapter protocol (PROTOCOL.md) is in [`protocol`].

pub mod base64;
pub mod cache_state;
pub mod capture;
pub mod dedupe;
pub mod defaults;
pub mod display;
pub mod envelope;
pub mod export;
pub mod history;
pub mod history_file;
pub mod json;
pub mod overrides;
pub mod planner;
pub mod protocol;
pub mod providers;
pub mod redaction;
pub mod replay;
pub mod scan;
pub mod sha256;
pub mod telemetry;
pub mod textforms;
pub mod textscan;
pub mod validate;
