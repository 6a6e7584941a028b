//! gecx `*.scenario.yaml` through its loader, as `goldgate lint` loads it.
#![no_main]

use goldgate::formats::load_golden;
use goldgate::model::Format;
use goldgate_fuzz::{check_loaded, fake_path, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let loaded = load_golden(
        &fake_path("x.scenario.yaml"),
        &text(data),
        Format::GecxScenario,
    );
    check_loaded(&loaded);
});
