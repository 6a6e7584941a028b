//! A Regtrace golden set through its loader, and the same document as a `regtrace.config.yaml`
//! (without reading the sets it lists: the target touches no file).
#![no_main]

use goldgate::diagnostic::Diagnostics;
use goldgate::formats::{load_golden, regtrace};
use goldgate::model::Format;
use goldgate_fuzz::{check_diagnostics, check_loaded, fake_path, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let set = load_golden(&fake_path("set.yaml"), &text, Format::RegtraceSet);
    check_loaded(&set);
    if let Ok(root) = goldgate::yaml::parse(&text) {
        let path = fake_path("regtrace.config.yaml");
        let mut diags = Diagnostics::new(&path);
        regtrace::load_config(&root, &mut diags);
        check_diagnostics(&path, &diags.items);
    }
});
