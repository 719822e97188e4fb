# Sourced by scripts/dist and scripts/package: the toolchain and environment
# that build the `hookhost` users install, so that every package wraps the
# very same build (maturin's cargo run then finds it built).
#
# dist_env TARGET: installs what building for TARGET needs (the rustup
# target, musl-gcc from Debian's musl-tools) and exports the build's
# environment.
dist_env() {
  local target=$1
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target" >&2
  fi
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
}
