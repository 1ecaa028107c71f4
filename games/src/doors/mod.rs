//! `doors`: rooms, coloured doors and buttons (seed 001, Rescue Elite).

pub mod planar;
