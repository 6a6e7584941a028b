#!/usr/bin/env bash
# The ref `goldgate run --changed-since` compares with, written to $GITHUB_OUTPUT as `ref`
# (empty: the whole suite). INPUT_CHANGED_SINCE is `auto` (the pull request's base branch on
# pull_request events, else nothing), `none` or empty (nothing), or a ref.
#
# actions/checkout clones one commit by default: neither the base branch nor the history back
# to where the pull request left it is there, and git cannot find the merge base. The base is
# fetched, then the clone deepened 50 commits at a time, a few times; past that, the step fails
# and says to set `fetch-depth: 0`.
set -uo pipefail

ref=""
case "${INPUT_CHANGED_SINCE:-}" in
  auto)
    if [[ "${EVENT_NAME:-}" == pull_request* && -n "${BASE_REF:-}" ]]; then
      ref="origin/$BASE_REF"
    fi
    ;;
  none | "") ;;
  *) ref="$INPUT_CHANGED_SINCE" ;;
esac

found() {
  git merge-base "$ref" HEAD >/dev/null 2>&1
}

if [[ -n "$ref" ]] && ! found; then
  # A branch of the remote: fetch it (a tag or a commit has to be in the clone already).
  if [[ "$ref" == origin/* ]]; then
    branch="${ref#origin/}"
    git fetch --no-tags --quiet origin "+refs/heads/$branch:refs/remotes/origin/$branch" || true
  fi
  for _ in 1 2 3 4 5 6; do
    found && break
    [[ "$(git rev-parse --is-shallow-repository 2>/dev/null)" == true ]] || break
    git fetch --no-tags --quiet --deepen=50 origin "$(git rev-parse HEAD)" || break
  done
  if ! git rev-parse --verify --quiet "$ref^{commit}" >/dev/null; then
    echo "::error title=goldgate::changed-since: \`$ref\` names no commit in this clone (a branch of the remote is origin/NAME). Fetch it in an earlier step, or set changed-since: none to run the whole suite."
    exit 2
  elif ! found; then
    echo "::error title=goldgate::changed-since: cannot find where this branch left $ref in this clone. Set fetch-depth: 0 on actions/checkout, or changed-since: none to run the whole suite."
    exit 2
  fi
fi
echo "ref=$ref" >> "$GITHUB_OUTPUT"
