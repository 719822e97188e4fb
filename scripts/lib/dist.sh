# Sourced by scripts/dist and scripts/package: the toolchain and environment
# that build the `hookhost` users install, so that every package wraps the
# very same build (maturin's cargo run then finds it built).
#
# Two targets: x86_64-unknown-linux-musl, this machine's, built with
# Debian's musl-gcc; aarch64-unknown-linux-musl, cross-built with zig (the
# `ziglang` wheel from PyPI) through cargo-zigbuild (crates.io), both pinned.

# dist_tools DIR [zig]: the pinned build tools from PyPI (maturin, uv; and
# zig when asked) in one venv at DIR.
dist_tools() {
  local tools=$1 want="maturin==1.16.0 uv==0.13.9"
  [ "${2:-}" = zig ] && want="$want ziglang==0.15.1"
  if [ ! -x "$tools/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$tools"
  fi
  # pip does nothing (and fetches nothing) when every pin is installed.
  local missing=""
  for pin in $want; do
    "$tools/bin/python" -m pip show "${pin%%==*}" >/dev/null 2>&1 || missing="$missing $pin"
  done
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    "$tools/bin/python" -m pip install -q --disable-pip-version-check $want
  fi
}

# dist_env TARGET: installs what building for TARGET needs and exports the
# build's environment.
dist_env() {
  local target=$1
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target" >&2
  fi
  case "$target" in
    x86_64-unknown-linux-musl)
      # mimalloc's and ring's C sources are compiled against musl's headers.
      if ! command -v musl-gcc >/dev/null; then
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq musl-tools; } >&2
      fi
      export CC_x86_64_unknown_linux_musl="${CC_x86_64_unknown_linux_musl:-musl-gcc}"
      # With --target named, these flags reach the binary and not the build
      # scripts or proc macros.
      export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,-z,pack-relative-relocs"
      ;;
    aarch64-unknown-linux-musl)
      # zig links it static and not position-independent, so there are no
      # relative relocations to pack (and zig's linker lacks the flag).
      dist_tools "$PWD/target/package-tools" zig >&2
      export PATH="$PWD/target/package-tools/bin:$PATH"
      if [ "$(cargo zigbuild --version 2>/dev/null)" != "cargo-zigbuild 0.24.1" ]; then
        cargo install --quiet --locked cargo-zigbuild --version 0.24.1 >&2
      fi
      ;;
    *)
      echo "scripts/lib/dist.sh: no build for $target" >&2
      return 2
      ;;
  esac
}

# dist_build TARGET: the build itself, with the `ship` profile.
dist_build() {
  case "$1" in
    aarch64-*) cargo zigbuild --profile ship --target "$1" -p hookhost-cli ;;
    *) cargo build --profile ship --target "$1" -p hookhost-cli ;;
  esac
}
