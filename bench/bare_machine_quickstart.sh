#!/usr/bin/env bash
# Times the README's quick start on a bare machine: a fresh Debian 12 (bookworm) root made with
# debootstrap (minbase plus git, python3 and ca-certificates; no compiler, no cmake, no pip cache),
# entered with chroot, on a fresh clone of this repository's HEAD.
#
#   sudo bench/bare_machine_quickstart.sh [ROOT_DIR]    (default /tmp/hlogym-bare; wiped first)
#
# The host's extra CA certificates (/usr/local/share/ca-certificates) and /etc/pip.conf are copied
# in, so that a network behind a TLS-inspecting proxy works as it does on the host. Prints the
# quick start's output and its wall time; needs root (debootstrap, chroot, mounts).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT_DIR="${1:-/tmp/hlogym-bare}"
[[ $(id -u) -eq 0 ]] || { echo "bare_machine_quickstart.sh: needs root" >&2; exit 1; }
command -v debootstrap >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap

unmount() { for m in dev/pts dev proc; do umount "$ROOT_DIR/$m" 2>/dev/null || true; done; }
unmount
rm -rf "$ROOT_DIR"
trap unmount EXIT
debootstrap --variant=minbase --include=git,python3,ca-certificates bookworm "$ROOT_DIR" \
  http://deb.debian.org/debian >"$ROOT_DIR.debootstrap.log" 2>&1 ||
  { echo "debootstrap failed; see $ROOT_DIR.debootstrap.log" >&2; exit 1; }
mount -t proc proc "$ROOT_DIR/proc"
mount --bind /dev "$ROOT_DIR/dev"
mount --bind /dev/pts "$ROOT_DIR/dev/pts"
cp /etc/resolv.conf "$ROOT_DIR/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT_DIR/usr/local/share/ca-certificates/"
  chroot "$ROOT_DIR" update-ca-certificates >/dev/null 2>&1
fi
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$ROOT_DIR/etc/pip.conf"
git clone -q "$REPO" "$ROOT_DIR/root/hlogym"
echo "bare machine: $(chroot "$ROOT_DIR" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(git -C "$REPO" log --oneline -1)"
ca=/etc/ssl/certs/ca-certificates.crt
start=$(date +%s)
chroot "$ROOT_DIR" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb SSL_CERT_FILE=$ca PIP_CERT=$ca REQUESTS_CA_BUNDLE=$ca \
  bash -c 'cd /root/hlogym && scripts/quickstart.sh'
elapsed=$(($(date +%s) - start))
printf 'bare machine: the quick start took %d min %02d s\n' $((elapsed / 60)) $((elapsed % 60))
