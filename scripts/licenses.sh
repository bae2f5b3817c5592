#!/usr/bin/env bash
# Third-party notices and the license check, from the lock files, by maintained tools:
#   - cargo-about over Cargo.lock (the server's crates; the accepted licenses and the
#     template are about.toml and about.hbs at the root);
#   - license-checker-rseidelsohn over the VS Code extension's installed production
#     dependencies (what esbuild bundles into the extension), with the same list.
# Writes THIRD-PARTY-NOTICES.md at the root (every package ships it).
#
#   bash scripts/licenses.sh           regenerate THIRD-PARTY-NOTICES.md
#   bash scripts/licenses.sh --check   fail when a dependency's license is not accepted,
#                                      or when the committed file is out of date (CI)
#
# Installs what it needs on first use: cargo-about (crates.io, about 3 minutes of
# compiling), license-checker-rseidelsohn (npm, under .tmp/licenses/), and the
# extension's node_modules (npm ci) when missing.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
CARGO_ABOUT_VERSION=0.9.3
CHECKER_VERSION=4.4.2
TOOLS=$REPO/.tmp/licenses
OUT=THIRD-PARTY-NOTICES.md
# The npm side's accepted licenses: about.toml's list, plus two permissive licenses
# only npm packages here use (argparse's PSF-2.0, minimatch's BlueOak-1.0.0).
NPM_ALLOWED="MIT;Apache-2.0;BSD-2-Clause;BSD-3-Clause;ISC;0BSD;Zlib;CC0-1.0;PSF-2.0;BlueOak-1.0.0"

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: bash scripts/licenses.sh [--check]" >&2; exit 2 ;;
esac

log() { printf 'licenses: %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  log "installing nodejs and npm (apt)"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get -o DPkg::Lock::Timeout=600 update -q >&2
  as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends nodejs npm >&2
fi
if [ "$(cargo about --version 2>/dev/null)" != "cargo-about $CARGO_ABOUT_VERSION" ]; then
  log "installing cargo-about $CARGO_ABOUT_VERSION (crates.io)"
  cargo install --locked --quiet cargo-about --version "$CARGO_ABOUT_VERSION" --features cli
fi
checker=$TOOLS/node_modules/.bin/license-checker-rseidelsohn
if [ ! -x "$checker" ]; then
  log "installing license-checker-rseidelsohn $CHECKER_VERSION (npm)"
  mkdir -p "$TOOLS"
  (cd "$TOOLS" && npm install --no-audit --no-fund --silent \
    "license-checker-rseidelsohn@$CHECKER_VERSION" >&2)
fi
if [ ! -d editors/vscode/node_modules ]; then
  log "installing the extension's dependencies (npm ci)"
  (cd editors/vscode && npm ci --ignore-scripts --no-audit --no-fund --silent >&2)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The crates: cargo-about fails on a license not in about.toml's `accepted`.
if ! cargo about generate --fail -m server/Cargo.toml about.hbs -o "$work/rust.md" 2>"$work/about.log"; then
  cat "$work/about.log" >&2
  log "a crate's license is not accepted (about.toml), or cargo-about failed"
  exit 1
fi
# The extension's bundled packages: the checker fails on a license not allowed.
if ! "$checker" --start editors/vscode --production --json \
  --excludePackages "copilot-ls" --onlyAllow "$NPM_ALLOWED" >"$work/npm.json" 2>"$work/npm.log"; then
  cat "$work/npm.log" >&2
  log "an npm package's license is not accepted (NPM_ALLOWED in this script)"
  exit 1
fi
python3 - "$work/rust.md" "$work/npm.json" "$work/$OUT" <<'PY'
import json, pathlib, sys
rust, npm, out = sys.argv[1], sys.argv[2], sys.argv[3]
text = pathlib.Path(rust).read_text().rstrip() + "\n\n## The VS Code extension's bundled packages\n\n"
packages = json.loads(pathlib.Path(npm).read_text())
for name in sorted(packages):
    info = packages[name]
    text += f"### {name} ({info.get('licenses', 'unknown')})\n\n"
    path = info.get("licenseFile")
    body = pathlib.Path(path).read_text(errors="replace").strip() if path else ""
    if path and pathlib.Path(path).name.lower().startswith(("license", "licence", "copying")):
        text += "```text\n" + body + "\n```\n\n"
    else:
        text += "(no license file in the package; its package.json names the license above)\n\n"
pathlib.Path(out).write_text(text)
PY

if $check; then
  if ! cmp -s "$work/$OUT" "$OUT"; then
    diff -u "$OUT" "$work/$OUT" | head -40 >&2 || true
    log "$OUT is out of date: run bash scripts/licenses.sh and commit it"
    exit 1
  fi
  log "every license is accepted and $OUT is up to date"
else
  cp "$work/$OUT" "$OUT"
  log "wrote $OUT"
fi
