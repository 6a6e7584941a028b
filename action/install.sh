#!/usr/bin/env bash
# The action's install step: finds the goldgate release that matches the action's own ref,
# downloads the archive for this runner, checks it against the release's sha256.sum and
# unpacks it into $INSTALL_ROOT/bin. When no release matches (a branch, a commit no release
# tag points at, `version: source`, a runner with no release binary), it installs nothing and
# says so: the action then builds this checkout with `cargo install --locked`, cached.
#
# Environment (action.yml sets it; tests/action.rs runs this script against a loopback server):
#   GOLDGATE_VERSION   the `version` input: empty (match the action's ref), vX.Y.Z, latest, source
#   ACTION_REF         github.action_ref: a tag, a branch or a commit SHA (may be empty: then
#   ACTION_REPOSITORY  github.action_repository        read from GITHUB_ACTION_PATH)
#   GITHUB_ACTION_PATH the action's checkout, .../_actions/OWNER/REPO/REF (or the workspace)
#   RUNNER_OS_NAME, RUNNER_ARCH_NAME   runner.os and runner.arch
#   INSTALL_ROOT       where the binary goes ($INSTALL_ROOT/bin)
#   GITHUB_SERVER_URL, GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_OUTPUT, GITHUB_TOKEN (optional:
#                      the tags API call that maps a SHA to its release)
# Outputs: `installed` (true/false) and, when true, `bin`; `version` (what was resolved).
set -euo pipefail

say() { echo "goldgate: $*"; }
output() { echo "$1=$2" >> "$GITHUB_OUTPUT"; }
not_installed() {
  say "$1; building the action's checkout with cargo install --locked"
  output installed false
  exit 0
}

exe=goldgate
if [[ "$RUNNER_OS_NAME" == Windows ]]; then exe=goldgate.exe; fi
case "$RUNNER_OS_NAME/$RUNNER_ARCH_NAME" in
  Linux/X64)   target=x86_64-unknown-linux-musl;  archive=tar.gz ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl; archive=tar.gz ;;
  macOS/ARM64) target=aarch64-apple-darwin;       archive=tar.gz ;;
  macOS/X64)   target=x86_64-apple-darwin;        archive=tar.gz ;;
  Windows/X64) target=x86_64-pc-windows-msvc;     archive=zip ;;
  *)           target=""; archive="" ;;
esac

# The action's repository and ref: github.action_repository/action_ref, which composite actions
# do not always fill in, else its checkout under _actions/OWNER/REPO/REF; neither when the
# workflow uses `./` (this very checkout).
action_path="${GITHUB_ACTION_PATH//\\//}"   # Windows runners use backslashes
repo="${ACTION_REPOSITORY:-}"
ref="${ACTION_REF:-}"
case "$action_path" in
  */_actions/*/*/*)
    if [[ -z "$ref" ]]; then ref="$(basename "$action_path")"; fi
    if [[ -z "$repo" ]]; then
      name="$(basename "$(dirname "$action_path")")"
      owner="$(basename "$(dirname "$(dirname "$action_path")")")"
      repo="$owner/$name"
    fi
    ;;
esac
repo="${repo:-$GITHUB_REPOSITORY}"

# Only https, but for a loopback server (the tests').
proto='=https'
case "$GITHUB_SERVER_URL" in http://127.0.0.1:*) proto='=http,https' ;; esac

# GET url into file; prints the HTTP status (000 when the network failed).
fetch() {
  curl --silent --show-error --location --retry 3 --retry-delay 2 --proto "$proto" \
    --output "$2" --write-out '%{http_code}' "$1" || true
}

# The release tag (vX.Y.Z...) that points at commit $1 in $repo, if any: GitHub's tags API
# gives each tag's commit, annotated tags dereferenced. The first 100 tags are read.
tag_of_commit() {
  local tags="$work/tags.json" status
  local headers=(--header 'Accept: application/vnd.github+json')
  if [[ -n "${GITHUB_TOKEN:-}" ]]; then headers+=(--header "Authorization: Bearer $GITHUB_TOKEN"); fi
  status="$(curl --silent --show-error --location --retry 3 --retry-delay 2 --proto "$proto" \
    "${headers[@]}" --output "$tags" --write-out '%{http_code}' \
    "$GITHUB_API_URL/repos/$repo/tags?per_page=100" || true)"
  if [[ "$status" != 200 ]]; then
    echo "goldgate: cannot list the tags of $repo (HTTP $status)" >&2
    return 0
  fi
  # One object per tag, `"name": "...", "commit": { "sha": "..." }` in that order: flatten the
  # JSON to one line, then read name and sha pairs. Tag names cannot hold a `"`.
  tr -d '\n\r' < "$tags" | grep -oE '"name": *"[^"]*"|"sha": *"[0-9a-f]{40}"' \
    | sed -E 's/^"(name|sha)": *"(.*)"$/\1 \2/' \
    | awk -v want="$1" '
        $1 == "name" { name = $2; next }
        $1 == "sha" && name != "" { if ($2 == want && name ~ /^v[0-9]/) { print name; exit } name = "" }' \
    || true
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

version="${GOLDGATE_VERSION:-}"
if [[ -z "$version" ]]; then
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]]; then
    version="$ref"
  elif [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    version="$(tag_of_commit "$ref")"
    if [[ -z "$version" ]]; then not_installed "no release tag of $repo points at $ref"; fi
    say "$ref is $version"
  elif [[ -n "$ref" ]]; then
    not_installed "the action's ref $ref is neither a release tag nor a commit SHA"
  else
    version=source   # `uses: ./`: test this very checkout
  fi
fi
output version "$version"

if [[ "$version" == source ]]; then not_installed "version: source"; fi
if [[ -z "$target" ]]; then not_installed "no release binary for $RUNNER_OS_NAME/$RUNNER_ARCH_NAME"; fi

asset="goldgate-$target.$archive"
if [[ "$version" == latest ]]; then
  base="$GITHUB_SERVER_URL/$repo/releases/latest/download"
else
  base="$GITHUB_SERVER_URL/$repo/releases/download/$version"
fi
sums_status="$(fetch "$base/sha256.sum" "$work/sha256.sum")"
asset_status="000"
if [[ "$sums_status" == 200 ]]; then
  asset_status="$(fetch "$base/$asset" "$work/$asset")"
fi
if [[ "$sums_status" == 404 || "$asset_status" == 404 ]]; then
  not_installed "no release $version with $asset in $repo"
elif [[ "$sums_status" != 200 || "$asset_status" != 200 ]]; then
  echo "::error title=goldgate::cannot download $asset ($version): HTTP $sums_status / $asset_status"
  exit 1
fi
expected="$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$work/sha256.sum")"
if [[ -z "$expected" ]]; then
  echo "::error title=goldgate::sha256.sum of $version does not list $asset"
  exit 1
fi
if command -v sha256sum >/dev/null; then
  actual="$(sha256sum "$work/$asset" | awk '{ print $1 }')"
else
  actual="$(shasum -a 256 "$work/$asset" | awk '{ print $1 }')"
fi
if [[ "$actual" != "$expected" ]]; then
  echo "::error title=goldgate::checksum mismatch for $asset: expected $expected, got $actual"
  exit 1
fi
bin_dir="$INSTALL_ROOT/bin"
mkdir -p "$bin_dir"
if [[ "$archive" == zip ]] && command -v unzip >/dev/null; then
  unzip -o -q "$work/$asset" -d "$bin_dir"
elif [[ "$archive" == zip ]]; then
  7z x -y -o"$bin_dir" "$work/$asset" >/dev/null
else
  tar -xzf "$work/$asset" -C "$bin_dir"
fi
say "installed $asset ($version), sha256 $actual"
output installed true
output bin "$bin_dir/$exe"
