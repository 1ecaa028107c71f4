//! End-to-end tests of the `pregen` pipeline: real processes, real loopback
//! gRPC, real kills. One binary with modules.

mod accidents;
mod archive;
mod bands;
mod calibrate;
mod common;
mod conventions;
mod external;
mod faults;
mod hostile;
mod load;
mod logs;
mod metrics;
mod pack;
mod pictures;
mod refusals;
mod release;
mod scale;
mod sdks;
mod solve;
mod store;
mod strangers;
mod tls;
mod web;
