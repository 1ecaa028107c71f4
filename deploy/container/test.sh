#!/usr/bin/env bash
# deploy/Dockerfile built and run without a daemon or a registry: podman
# builds the image, a coordinator and two workers run from it on loopback,
# and their pack is compared with a native `pregen run` of the same job by
# deploy/slurm/test/same_pack.py (the levels, tiers, rejects, campaigns and
# release files) and by the bytes of `pregen archive` of each. The image's
# `pregen web` must write the games' WebAssembly module.
#
# The two images the Dockerfile starts from are made here, since no public
# registry is needed (nor, on a closed network, reachable):
#   debian:bookworm-slim      debootstrap --variant=minbase bookworm, then
#                             podman import
#   rust:1.95-slim-bookworm   that base with gcc and this machine's Rust
#                             toolchain (rustup's, with the wasm target), laid
#                             out as the official image lays it out
# The image build reads crates from this machine's cargo cache (a volume).
#
# Needs root; installs podman, runc and debootstrap with apt when missing.
# Runs podman with runc and cgroupfs (no systemd, no daemon). Every wait is
# bounded. Prints each step's wall time.
#
#   deploy/container/test.sh PREGEN_BINARY [WORK_DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 PREGEN_BINARY [WORK_DIR]" >&2; exit 2; }
PREGEN=$(realpath "$1")
work=$(realpath -m "${2:-$(mktemp -d /tmp/pregen-container.XXXXXX)}")
mkdir -p "$work"

missing=""
command -v podman >/dev/null || missing="$missing podman"
command -v runc >/dev/null || missing="$missing runc"
command -v debootstrap >/dev/null || missing="$missing debootstrap"
if [ -n "$missing" ]; then
    apt-get update -qq && apt-get install -y -qq $missing
fi
podman() { command podman --runtime runc --cgroup-manager=cgroupfs "$@"; }
# Limits a container may take: podman's defaults (a million open files,
# 32768 processes) are above what an unprivileged sandbox lets runc set.
files=$(ulimit -Hn)
run_flags=(--network host --ulimit "nofile=$files:$files" --ulimit nproc=4096:4096)

step_started=$(date +%s)
step() {
    local now
    now=$(date +%s)
    echo "[$((now - step_started)) s] $*"
    step_started=$now
}

# The base: Debian bookworm, minimal, made once per work folder.
if ! podman image exists docker.io/library/debian:bookworm-slim; then
    if [ ! -x "$work/rootfs/bin/sh" ]; then
        rm -rf "$work/rootfs"
        debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log"
    fi
    tar -C "$work/rootfs" -c . | podman import - docker.io/library/debian:bookworm-slim >"$work/import.log" 2>&1
fi
step "base image docker.io/library/debian:bookworm-slim"

# The Rust image: the base with gcc and this machine's toolchain, where the
# official image has them (RUSTUP_HOME=/usr/local/rustup,
# CARGO_HOME=/usr/local/cargo).
if ! podman image exists docker.io/library/rust:1.95-slim-bookworm; then
    toolchain=$(rustc --print sysroot)
    context=$work/rust-image
    rm -rf "$context"
    mkdir -p "$context/rustup/toolchains/1.95.0-x86_64-unknown-linux-gnu" "$context/cargo/bin"
    # The compiler, cargo and the standard libraries; not the docs.
    cp -a "$toolchain/bin" "$toolchain/lib" "$toolchain/libexec" "$toolchain/etc" \
        "$context/rustup/toolchains/1.95.0-x86_64-unknown-linux-gnu/"
    cp "$(command -v rustup)" "$context/cargo/bin/rustup"
    for proxy in cargo rustc rustdoc; do ln -s rustup "$context/cargo/bin/$proxy"; done
    printf 'version = "12"\ndefault_toolchain = "1.95.0-x86_64-unknown-linux-gnu"\nprofile = "minimal"\n' \
        >"$context/rustup/settings.toml"
    cat >"$context/Containerfile" <<'EOF'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY rustup /usr/local/rustup
COPY cargo /usr/local/cargo
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:$PATH
EOF
    podman build --quiet --pull=never --network host -t docker.io/library/rust:1.95-slim-bookworm "$context" >/dev/null
    rm -rf "$context"
fi
step "Rust image docker.io/library/rust:1.95-slim-bookworm"

# deploy/Dockerfile itself, unchanged.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
mkdir -p "$cargo_home/registry"
podman build --pull=never --network host \
    --volume "$cargo_home/registry:/usr/local/cargo/registry" \
    -f "$repo/deploy/Dockerfile" -t localhost/pregen:test "$repo" >"$work/build.log" 2>&1 \
    || { tail -30 "$work/build.log"; exit 1; }
size=$(podman image inspect localhost/pregen:test --format '{{.Size}}')
step "deploy/Dockerfile built: localhost/pregen:test, $((size / 1024 / 1024)) MB"

# The job: 3,000 tilt levels in ten tiers, with campaigns.
mkdir -p "$work/run"
cat >"$work/run/job.toml" <<'EOF'
pack = "container"
game = "tilt"
count = 3000
seeds_per_lease = 64
[params]
width = 6
height = 6
pairs = 2
[campaigns]
length = 10
EOF
rm -rf "$work/run/native" "$work/run/image"
"$PREGEN" run --no-progress --out "$work/run/native" "$work/run/job.toml" 2>"$work/native.log"
step "native pregen run"

# The image runs as uid 10001: the pack's folder is made writable for it.
mkdir -p "$work/run/image"
chown 10001:10001 "$work/run/image"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=container-test-token
names=(pregen-coordinator pregen-worker-1 pregen-worker-2)
cleanup() {
    for name in "${names[@]}"; do podman rm -f "$name" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
cleanup
podman run -d --name pregen-coordinator "${run_flags[@]}" -e PREGEN_TOKEN=$token \
    -v "$work/run:/run/pregen:z" localhost/pregen:test \
    serve /run/pregen/job.toml --out /run/pregen/image --listen "127.0.0.1:$port" >/dev/null
for i in 1 2; do
    podman run -d --name "pregen-worker-$i" "${run_flags[@]}" -e PREGEN_TOKEN=$token \
        localhost/pregen:test worker --coordinator "http://127.0.0.1:$port" --threads 1 \
        --name "container-$i" >/dev/null
done
# The coordinator exits when the pack is written; 10 minutes at most.
status=$(timeout 600 podman wait pregen-coordinator) || {
    echo "the coordinator did not finish in 10 minutes" >&2
    podman logs --tail 30 pregen-coordinator >&2
    exit 1
}
podman logs pregen-coordinator >"$work/coordinator.log" 2>&1
[ "$status" = 0 ] || { echo "the coordinator exited $status" >&2; tail -30 "$work/coordinator.log" >&2; exit 1; }
for i in 1 2; do timeout 60 podman wait "pregen-worker-$i" >/dev/null || true; done
step "coordinator and two workers from the image"

python3 "$repo/deploy/slurm/test/same_pack.py" "$work/run/native/container" "$work/run/image/container"
# Both workers took part.
python3 - "$work/run/image/container/levels" <<'EOF'
import collections, sys
import pyarrow.dataset as ds
workers = collections.Counter(
    w.split("#")[0] for w in ds.dataset(sys.argv[1], format="parquet").to_table(columns=["worker"]).column("worker").to_pylist())
assert set(workers) == {"container-1", "container-2"}, workers
print("levels by worker:", dict(sorted(workers.items())))
EOF
"$PREGEN" archive "$work/run/native/container" -o "$work/native.tar.zst" 2>/dev/null
"$PREGEN" archive "$work/run/image/container" -o "$work/image.tar.zst" 2>/dev/null
cmp "$work/native.tar.zst" "$work/image.tar.zst"
echo "same archive bytes: $(sha256sum <"$work/native.tar.zst" | cut -c1-16)"
"$PREGEN" release verify "$work/image.tar.zst" | tail -1
step "packs compared"

# The image's binary carries the games in the browser.
mkdir -p "$work/run/web"
chown 10001:10001 "$work/run/web"
podman run --rm "${run_flags[@]}" -v "$work/run:/run/pregen:z" localhost/pregen:test web /run/pregen/web 2>&1 | head -1
cmp "$work/run/web/play.html" "$repo/web/page/play.html"
test -s "$work/run/web/pregen_web.wasm"
step "pregen web from the image"
echo "container test passed"
