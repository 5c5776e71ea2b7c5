//! `cargo fuzz run emission`: any bytes as a turn of results, emitted for
//! every provider.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolkit_fuzz::emission(data);
});
