//! `goldgate.yaml` through `Config::load`, which reads a path: each input is written to one
//! file in a directory of this process's own, beside a prompt and a tools file for the LLM
//! agent kinds to find.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use goldgate::config::Config;
use goldgate_fuzz::check_diagnostics;
use libfuzzer_sys::fuzz_target;

fn config_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("goldgate-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the config");
        std::fs::write(dir.join("prompt.md"), "You are a support agent.\n").expect("prompt.md");
        std::fs::write(dir.join("tools.json"), r#"[{"name": "lookup_order"}]"#)
            .expect("tools.json");
        dir.join("goldgate.yaml")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = config_path();
    std::fs::write(path, data).expect("the config is written");
    if let Err(err) = Config::load(path) {
        assert!(!err.diagnostics.is_empty(), "an error without diagnostics");
        check_diagnostics(path, &err.diagnostics);
    }
});
