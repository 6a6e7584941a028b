#!/usr/bin/env sh
# Seeds fuzz/corpus/<target>/ with the repository's fixtures (good and bad), so that each
# fuzzer starts from real files. Run from anywhere; safe to run again.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
fix="$root/fixtures"
out="$root/fuzz/corpus"

seed() { # seed TARGET FILE...
    target="$1"
    shift
    mkdir -p "$out/$target"
    for file in "$@"; do
        case "$file" in *.expected) continue ;; esac
        [ -f "$file" ] && cp "$file" "$out/$target/"
    done
    return 0
}

seed scrapi "$fix"/scrapi/* "$fix"/bad/scrapi-*
seed ces_csv "$fix"/ces/* "$fix"/bad/ces-*
seed scenario "$fix"/gecx/* "$fix"/bad/gecx-*
seed regtrace "$fix"/regtrace/*.yaml "$fix"/regtrace/golden-sets/* "$fix"/bad/regtrace-*
seed config "$fix"/config/*.yaml "$root"/examples/goldgate.yaml

for target in scrapi ces_csv scenario regtrace config; do
    echo "fuzz/corpus/$target: $(ls "$out/$target" | wc -l | tr -d ' ') files"
done
