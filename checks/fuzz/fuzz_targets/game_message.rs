#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pregen_fuzzing::game_message(data));
