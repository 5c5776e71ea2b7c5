//! `cargo fuzz run dispatch`: any bytes as a call, a response or arguments.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolkit_fuzz::dispatch(data);
});
