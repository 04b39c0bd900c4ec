#!/bin/sh
# Install the Debian 12 packages that building and testing flowsketch need.
# Idempotent and quiet when everything is present: dpkg is asked first, and
# apt-get runs only for what is missing.
set -eu

# libclang-rt-14-dev: libFuzzer and the ASan/UBSan runtimes of clang 14
# (Debian's default clang), for `make fuzz`.  libncurses-dev: the CLI's
# full-screen top; gnuplot-nox: `flowsketch plot`.  redis-server, postgresql-15
# and postgresql-15-hll: the engines `flowsketch export` writes for, which
# tests/integration/fleet.sh starts privately (no system service is used).
# libmicrohttpd-dev: flowsketchd --metrics; prometheus,
# python3-prometheus-client and curl: tests/integration/metrics.sh scrapes
# it with them (its own prometheus, in a temporary directory).
# libyaml-dev, libgnutls28-dev and libcrypt-dev: --metrics-web-config (its
# YAML, TLS, bcrypt); apache2-utils: htpasswd -B makes the test's bcrypt
# hash with an implementation other than the daemon's (metrics_auth.sh).
# nftables: tests/integration/vlan_stack.sh counts what the receiving
# stack delivers.
# systemd (systemd-analyze), strace and libcap2-bin (capsh): the unit's
# sandbox is judged by tests/integration/systemd_unit.sh.  gdb: the order
# of the daemon's stop (tests/integration/stop_queries.sh).
PKGS="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
libjson-c-dev libcmocka-dev iproute2 iputils-ping jq util-linux procps
libclang-rt-14-dev redis-server postgresql-15 postgresql-15-hll
qemu-system-x86 busybox-static linux-image-6.12-amd64
linux-headers-6.12-amd64 zstd xz-utils cpio kmod dwarves dkms openssl python3
libmicrohttpd-dev prometheus python3-prometheus-client curl
libncurses-dev gnuplot-nox libyaml-dev libgnutls28-dev libcrypt-dev
apache2-utils nftables systemd strace libcap2-bin gdb"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing packages:$missing (run as root to install)" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# bpffs is not mounted at boot on every host; the daemon mounts it too, but
# the tests pin maps of their own before any daemon runs.
if ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
	mount -t bpf bpf /sys/fs/bpf
fi
